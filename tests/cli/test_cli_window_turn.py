"""The live window never archives the turn in progress: a 1 MB paste and its answer stay
visible (SPEC §3.3), and the window catches up on the next turn."""

from __future__ import annotations

import json
from pathlib import Path

import chatkeep
from clirun import run
from support.provider_server import Text

PASTE = ("A line of a very long pasted log, kept whole. " * 22 + "\n") * 1000  # ~1 MB


def test_a_one_megabyte_paste_and_its_answer_stay_live(tmp_path: Path, provider_server) -> None:
    """`chat -` with a 1 MB paste: `history` starts with the user's question, not the reply;
    the next turn lets the window archive the paste."""
    db = tmp_path / "s.db"
    run(db, "provider", "add", "loop", "--style", "chat", "--base-url",
        provider_server.url("/v1"), "--model", "m")  # fmt: skip
    env = {"OPENAI_API_KEY": "k"}
    provider_server.queue(Text("I read the whole log."), Text("Second answer."))
    run(db, "chat", "-", stdin=PASTE, env=env)
    shown = json.loads(run(db, "history", "--json").stdout)
    assert [e["role"] for e in shown] == ["user", "assistant"]
    assert len(json.dumps(shown[0]["content"])) > 1_000_000
    assert "(the archive is empty)" in run(db, "history", "--archived").stdout

    run(db, "chat", "and now?", env=env)
    with chatkeep.open(str(db)) as store:
        live = store.history.read()
        archived = store.history.archived()
    assert [e["content"] for e in live] == ["I read the whole log.", "and now?", "Second answer."]
    assert [e["content"] for e in archived] == [PASTE.rstrip("\n")]


def test_the_window_keeps_the_newest_user_entry_and_after(store: chatkeep.Store) -> None:
    """With maxHistoryEntries 2, a user entry followed by three replies stays live whole until
    the next user entry; entries before it are archived as usual."""
    store.local.set("maxHistoryEntries", 2)
    store.history.append({"role": "user", "content": "old question"})
    store.history.append({"role": "assistant", "content": "old answer"})
    store.history.append({"role": "user", "content": "new question"})
    for i in range(3):
        store.history.append({"role": "assistant", "content": f"part {i}"})
    assert [e["content"] for e in store.history.read()] == [
        "new question", "part 0", "part 1", "part 2",
    ]  # fmt: skip
    assert [e["content"] for e in store.history.archived()] == ["old question", "old answer"]
    store.history.append({"role": "user", "content": "next"})
    assert [e["content"] for e in store.history.read()] == ["part 2", "next"]
    kept = [e["content"] for e in store.history.archived() + store.history.read()]
    assert kept == ["old question", "old answer", "new question", "part 0", "part 1", "part 2",
                    "next"]  # fmt: skip
