"""Saved sessions are never hidden or destroyed by the cap or by switching, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chatkeep
from clirun import run
from support.provider_server import Text, provider_server  # noqa: F401

ENV = {"LOOP_KEY": "sk-loop"}


def _jrun(db: Path, *args: str):
    return json.loads(run(db, *args, "--json", env=ENV).stdout)


@pytest.fixture
def db(tmp_path: Path, provider_server) -> Path:  # noqa: F811
    path = tmp_path / "keep.db"
    run(
        path,
        "provider",
        "add",
        "loop",
        "--style",
        "chat",
        "--base-url",
        provider_server.url("/v1"),
        "--model",
        "loop-model",
        "--api-key-env",
        "LOOP_KEY",
    )
    return path


def _chat(db: Path, server, text: str) -> None:
    server.queue(Text(f"answer to {text}"))
    run(db, "chat", text, env=ENV)


def _texts(entries: list[dict]) -> list[str]:
    """The text of each entry (stored strings, or the text parts of a printed entry)."""
    out = []
    for e in entries:
        content = e.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append(content)
    return out


def test_max_sessions_moves_the_first_session_to_the_evicted_list(
    db: Path,
    tmp_path: Path,
    provider_server,  # noqa: F811
) -> None:
    """With maxSessions 1 a second save moves the first session to `list --evicted`, says so, exports it, and restores it."""
    run(db, "config", "set", "maxSessions", "1")
    _chat(db, provider_server, "first topic")
    first = _jrun(db, "sessions", "save", "First")
    run(db, "sessions", "new")
    _chat(db, provider_server, "second topic")
    saved = run(db, "sessions", "save", "Second", env=ENV)
    assert (
        "1 session left the drawer (maxSessions=1); `chatkeep sessions list --evicted` shows it"
        in saved.stderr
    )
    assert [r["name"] for r in _jrun(db, "sessions", "list")] == ["Second"]
    evicted = _jrun(db, "sessions", "list", "--evicted")
    assert [(r["id"], r["name"]) for r in evicted] == [(first["id"], "First")]
    assert first["id"][:8] in run(db, "sessions", "list", "--evicted").stdout
    shown = _jrun(db, "sessions", "show", first["id"][:8])
    assert _texts(shown["history"]) == ["first topic", "answer to first topic"]
    out = tmp_path / "all.json"
    run(db, "export", "-o", str(out))
    doc = json.loads(out.read_text())
    assert _texts(doc["local"][f"session_{first['id']}"]) == [
        "first topic",
        "answer to first topic",
    ]
    other = tmp_path / "other.db"
    run(other, "import", str(out))
    assert [r["id"] for r in _jrun(other, "sessions", "list", "--evicted")] == [first["id"]]
    assert _jrun(db, "stats")["evictedSessions"] == 1
    restored = run(db, "sessions", "restore", first["id"][:8])
    assert restored.stdout.startswith(f"restored {first['id']}  First")
    assert {r["name"] for r in _jrun(db, "sessions", "list")} == {"First", "Second"}
    assert _jrun(db, "sessions", "list", "--evicted") == []


def test_an_evicted_session_is_named_and_deleted_by_its_id(db: Path, provider_server) -> None:  # noqa: F811
    """load of an evicted id points at restore; delete of it destroys it; restore of an unknown id fails."""
    run(db, "config", "set", "maxSessions", "1")
    _chat(db, provider_server, "old")
    old = _jrun(db, "sessions", "save")
    run(db, "sessions", "save", "--new")
    failed = run(db, "sessions", "load", old["id"][:8], ok=False)
    assert failed.returncode != 0 and "sessions restore" in failed.stderr
    run(db, "sessions", "delete", old["id"][:8])
    assert _jrun(db, "sessions", "list", "--evicted") == []
    missing = run(db, "sessions", "restore", old["id"][:8], ok=False)
    assert missing.returncode != 0 and "list --evicted" in missing.stderr


def test_load_writes_the_loaded_sessions_turns_back_into_it(db: Path, provider_server) -> None:  # noqa: F811
    """`sessions load B` after chatting in loaded A puts A's new turns in A, not in the archive."""
    _chat(db, provider_server, "a1")
    a = _jrun(db, "sessions", "save", "A")
    run(db, "sessions", "new")
    _chat(db, provider_server, "b1")
    b = _jrun(db, "sessions", "save", "B")
    run(db, "sessions", "load", a["id"][:8])
    _chat(db, provider_server, "a2")
    run(db, "sessions", "load", b["id"][:8])
    shown = _jrun(db, "sessions", "show", a["id"])
    assert _texts(shown["history"]) == ["a1", "answer to a1", "a2", "answer to a2"]
    assert _jrun(db, "history", "--archived") == []
    assert {r["name"] for r in _jrun(db, "sessions", "list")} == {"A", "B"}


def test_save_on_a_loaded_session_updates_it(db: Path, provider_server) -> None:  # noqa: F811
    """`sessions save` updates the loaded session (no copy); `--new` saves a copy; a deleted one is saved anew."""
    _chat(db, provider_server, "topic")
    a = _jrun(db, "sessions", "save", "Mine")
    _chat(db, provider_server, "more")
    done = run(db, "sessions", "save")
    assert done.stdout.startswith(f"updated {a['id']}  Mine")
    assert [r["id"] for r in _jrun(db, "sessions", "list")] == [a["id"]]
    body = _jrun(db, "sessions", "show", a["id"])["history"]
    assert _texts(body) == ["topic", "answer to topic", "more", "answer to more"]
    copy = _jrun(db, "sessions", "save", "--new", "Copy")
    assert copy["id"] != a["id"] and len(_jrun(db, "sessions", "list")) == 2
    run(db, "sessions", "delete", copy["id"])  # the loaded session goes away meanwhile
    row = _jrun(db, "sessions", "save")
    assert row["id"] not in (a["id"], copy["id"]) and row["name"] == "topic"
    assert len(_texts(_jrun(db, "sessions", "show", row["id"])["history"])) == 4


def test_an_evicted_session_exports_by_its_id_prefix(tmp_path: Path) -> None:
    """`export --session PREFIX` of an evicted session writes it, as `show` shows it."""
    db = tmp_path / "ev.db"
    run(db, "config", "set", "maxSessions", "1")
    with chatkeep.open(str(db)) as store:
        store.history.append({"role": "user", "content": "the first session's words"})
        first = store.sessions.save("First")
        store.sessions.new()
        store.history.append({"role": "user", "content": "second"})
        store.sessions.save("Second")
        assert [r["id"] for r in store.sessions.evicted()] == [first["id"]]
    out = run(db, "export", "--session", first["id"][:6], "--format", "md").stdout
    assert "the first session's words" in out
