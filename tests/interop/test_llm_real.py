"""``llm``'s ``logs.db`` as the real ``llm`` writes it: the installed release (run here, with the
``llm-echo`` model) and the databases older releases wrote (committed, see
``tests/fixtures/interop/real/SOURCES.md``), each imported through the CLI and
compared with the test's own sqlite3 reading of the file (:func:`llm_logs.expected`)."""

from __future__ import annotations

import base64
import datetime
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import FIXTURES, saved
from llm_logs import SYSTEM_MARK, expected, make_logs, pictures

from clirun import run

REAL = FIXTURES / "real" / "llm"
#: The committed databases and what each release could log.
OLD = {
    "0.4": {"system"},
    "0.12": {"system"},
    "0.19": {"system", "image", "image note"},
    "0.27.1": {"system", "image", "image note", "tool", "fragment"},
    "0.32.1": {"system", "image", "image note", "tool", "fragment"},
}


def _llm() -> str:
    beside = Path(sys.executable).with_name("llm")
    exe = str(beside) if beside.exists() else shutil.which("llm")
    assert exe, "the llm console script is not installed (pip install -e '.[dev]')"
    return exe


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A logs.db written now by the installed llm and llm-echo."""
    return make_logs(_llm(), tmp_path_factory.mktemp("llm-user"), pictures())


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 0.27.1 database with one of its conversations continued by the installed llm: the
    thread llm makes holds the whole conversation, its responses stay in the old table."""
    folder = tmp_path_factory.mktemp("llm-upgraded")
    shutil.copy(REAL / "llm-0.27.1-logs.db", folder / "logs.db")
    with sqlite3.connect(folder / "logs.db") as conn:
        (cid,) = conn.execute(
            "SELECT id FROM conversations WHERE name LIKE 'First question%'"
        ).fetchone()
    subprocess.run(
        [_llm(), "-c", "--cid", cid, "Third question, after the upgrade"],
        env={"LLM_USER_PATH": str(folder), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        timeout=120,
    )
    return folder / "logs.db"


@pytest.fixture(scope="module")
def upgraded_early(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 0.4 database after the installed llm has run on it once: llm renamed its ``log``
    table ``logs`` (and keeps it, never to read it again) and logged a thread beside it."""
    folder = tmp_path_factory.mktemp("llm-upgraded-early")
    shutil.copy(REAL / "llm-0.4-logs.db", folder / "logs.db")
    subprocess.run(
        [_llm(), "-m", "echo", "A question after the upgrade"],
        env={"LLM_USER_PATH": str(folder), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        timeout=120,
    )
    with sqlite3.connect(folder / "logs.db") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"logs", "threads"} <= tables and "log" not in tables
    return folder / "logs.db"


def _import(db: Path, path: Path, *args: str) -> dict[str, Any]:
    return json.loads(run(db, "import", str(path), "--json", *args).stdout)


def _seen(session: dict[str, Any]) -> list[dict[str, Any]]:
    """A saved session's entries in the shape :func:`llm_logs.expected` gives."""
    out = []
    for e in session["history"]:
        content = e["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out.append(
            {
                "role": e["role"],
                "text": "\n".join(p["text"] for p in parts if p["type"] == "text"),
                "images": [
                    p["image_url"]["url"].split(",", 1)[1]
                    for p in parts
                    if p["type"] == "image_url"
                ],
                "tools": [c["name"] for c in e.get("toolCalls", [])],
                "results": [r["content"] for r in e.get("toolResult", [])],
                "reasoning": e.get("reasoning", ""),
            }
        )
    return out


def _features(convs: list[dict[str, Any]]) -> set[str]:
    """What the expected conversations hold, so a comparison is never of empty things."""
    found = set()
    for c in convs:
        for e in c["entries"]:
            found |= {"system"} if e["text"].startswith(SYSTEM_MARK) else set()
            found |= {"image"} if e["images"] else set()
            found |= {"image note"} if "[attachment not in the export:" in e["text"] else set()
            found |= {"tool"} if e["tools"] and e["results"] else set()
            found |= {"reasoning"} if e["reasoning"] else set()
            found |= {"fragment"} if "the tide comes in twice a day" in e["text"] else set()
    return found


def _check(db: Path, logs: Path, features: set[str]) -> None:
    want = expected(logs)
    assert want and features <= _features(want), _features(want)
    report = _import(db, logs)
    assert report["source"] == "llm" and report["skipped"] == []
    assert report["conversations"] == report["added"] == len(want)
    got = saved(db)
    assert len(got) == len(want)
    key = lambda c: (c["name"], json.dumps(c["entries"]))  # noqa: E731
    mine = sorted(({"name": s["name"], "entries": _seen(s)} for s in got), key=key)
    theirs = sorted(({"name": c["name"], "entries": c["entries"]} for c in want), key=key)
    for m, t in zip(mine, theirs, strict=True):
        assert m["name"] == t["name"]
        assert [e["role"] for e in m["entries"]] == [e["role"] for e in t["entries"]]
        assert m["entries"] == t["entries"]
    for s in got:  # llm dates every call: every message and session has its time
        assert isinstance(s["createdAt"], int)
        assert all(isinstance(e.get("createdAt"), int) for e in s["history"])
        times = [e["createdAt"] for e in s["history"]]
        assert times == sorted(times)
    again = _import(db, logs)
    assert (again["added"], again["already"]) == (0, len(want))


def test_live_llm_database(db: Path, live: Path) -> None:
    """The installed llm's message store: threads, a system prompt, a continued conversation,
    images from a path and from standard input, fragments, a tool call answered by its result,
    reasoning — every message compared with the sqlite3 reading."""
    _check(db, live, {"system", "image", "tool", "reasoning", "fragment"})


@pytest.mark.parametrize("release", sorted(OLD))
def test_older_llm_databases(db: Path, release: str) -> None:
    """Each older release's logs.db (responses era and the first message-store release)."""
    _check(db, REAL / f"llm-{release}-logs.db", OLD[release])


def test_conversation_continued_after_upgrade(db: Path, upgraded: Path) -> None:
    """An old conversation continued by the new llm is one session (the thread, whole, with the
    old conversation's name and first time), not two; its old messages keep their times."""
    _check(db, upgraded, {"system", "image", "tool", "fragment"})
    (s,) = [s for s in saved(db) if s["name"].startswith("First question")]
    texts = [e["text"] for e in _seen(s)]
    assert texts[1] == "First question: why is the sky blue?"
    assert texts[-2] == "Third question, after the upgrade"
    with sqlite3.connect(upgraded) as conn:
        first = conn.execute(
            "SELECT MIN(datetime_utc) FROM responses WHERE conversation_id = (SELECT id FROM"
            " conversations WHERE name LIKE 'First question%')"
        ).fetchone()[0]
    when = datetime.datetime.fromisoformat(first).astimezone(datetime.UTC)
    assert s["createdAt"] == s["history"][1]["createdAt"] == int(when.timestamp() * 1000)
    assert s["history"][1]["createdAt"] < s["history"][-1]["createdAt"]


def test_early_log_table_after_upgrade(db: Path, upgraded_early: Path) -> None:
    """llm 0.4's chats, in the ``logs`` table later releases keep, import beside the thread
    the new llm logged: four sessions."""
    _check(db, upgraded_early, {"system"})
    assert len(saved(db)) == 4


def _empty_llm_db(path: Path) -> Any:
    """An llm logs.db with every table of the installed release and nothing logged."""
    import sqlite_utils
    from llm.migrations import migrate

    db = sqlite_utils.Database(path)
    migrate(db)
    return db


def test_database_with_no_conversation_is_refused(db: Path, tmp_path: Path) -> None:
    """A logs.db where llm logged nothing, or only an empty thread: exit 3 with the reason."""
    path = tmp_path / "logs.db"
    _empty_llm_db(path).close()
    proc = run(db, "import", str(path), ok=False)
    assert proc.returncode == 3 and "it holds none" in proc.stderr, proc.stderr
    from llm.logs import LogStore

    with _empty_llm_db(path) as logs:
        empty = LogStore(logs).create_thread(name="Nothing said yet")
    proc = run(db, "import", str(path), ok=False)
    assert proc.returncode == 3, proc.stderr
    assert f"thread {empty}: it holds no message" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert saved(db) == []


def test_empty_thread_is_reported_and_the_rest_imports(db: Path, tmp_path: Path) -> None:
    """An empty thread beside a real one is skipped with its reason; the real one imports."""
    from llm.logs import LogStore
    from llm.parts import Message, TextPart

    path = tmp_path / "logs.db"
    with _empty_llm_db(path) as logs:
        store = LogStore(logs)
        empty = store.create_thread(name="Nothing said yet")
        tid = store.create_thread(name="Said something")
        store.append(
            tid,
            [
                Message(role="user", parts=[TextPart(text="Is anyone there?")]),
                Message(role="assistant", parts=[TextPart(text="Yes.")]),
            ],
        )
    report = _import(db, path)
    assert report["added"] == 1
    assert report["skipped"] == [
        {"where": f"thread {empty}", "reason": "it holds no message", "title": "Nothing said yet"}
    ]
    (s,) = saved(db)
    assert s["name"] == "Said something"
    assert [(e["role"], e["content"]) for e in s["history"]] == [
        ("user", "Is anyone there?"),
        ("assistant", "Yes."),
    ]


def test_sqlite_file_that_is_not_an_llm_database(db: Path, tmp_path: Path) -> None:
    """Another program's SQLite file is refused with a clear error; nothing is imported."""
    path = tmp_path / "notes.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('remember the milk')")
    for args in ((), ("--from", "llm")):
        proc = run(db, "import", str(path), *args, ok=False)
        assert proc.returncode == 3, proc.stderr
        assert "not an llm logs.db" in proc.stderr and "hint:" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert saved(db) == []


def test_images_are_the_bytes_llm_was_sent(db: Path, live: Path) -> None:
    """The live database's two pictures are kept byte for byte (one read from its path)."""
    _import(db, live)
    (s,) = [s for s in saved(db) if s["name"] == "Describe this picture"]
    kept = [base64.b64decode(i) for e in _seen(s) for i in e["images"]]
    assert kept == list(pictures())


@pytest.mark.parametrize("fmt", ["json", "md", "jsonl", "sharegpt"])
def test_imported_llm_sessions_round_trip(db: Path, tmp_path: Path, live: Path, fmt: str) -> None:
    """What the live database imported goes out as json, md, jsonl and sharegpt and back in
    with the same messages in the same order (sharegpt holds no images: docs/import-export.md)."""
    _import(db, live)
    out = tmp_path / f"export.{fmt}"
    run(db, "export", "--format", fmt, "-o", str(out))
    other = tmp_path / "other.db"
    run(other, "import", str(out))
    before = {s["name"]: _seen(s) for s in saved(db)}
    after = {s["name"]: _seen(s) for s in saved(other) if s["name"] != "Live conversation"}
    assert set(after) == set(before) and len(before) == 6
    for name, entries in before.items():
        back = after[name]
        if fmt == "json":
            assert back == entries
            continue
        if fmt == "sharegpt":  # an image is the text <image> there
            for e, b in zip(entries, back, strict=True):
                assert b["text"].split("\n<image>") == [e["text"], *[""] * len(e["images"])]
                assert b["role"] == e["role"]
            continue
        assert [(e["role"], e["text"]) for e in back] == [(e["role"], e["text"]) for e in entries]
        assert [e["images"] for e in back] == [e["images"] for e in entries]


def test_broken_chains_import_what_is_there(db: Path, tmp_path: Path, live: Path) -> None:
    """A thread whose last message was deleted is skipped with the reason; one whose first
    message was deleted imports the rest after a note saying what is missing."""
    path = tmp_path / "logs.db"
    shutil.copy(live, path)
    with sqlite3.connect(path) as conn:
        tips = dict(conn.execute("SELECT name, tip_message_hash FROM threads").fetchall())
        ids = dict(conn.execute("SELECT name, id FROM threads").fetchall())
        conn.execute("DELETE FROM messages WHERE hash = ?", (tips["Hello there"],))
        (root,) = conn.execute(
            "WITH RECURSIVE up(h, p) AS (SELECT hash, parent_hash FROM messages WHERE hash = ?"
            " UNION ALL SELECT m.hash, m.parent_hash FROM messages m JOIN up ON m.hash = up.p)"
            " SELECT h FROM up WHERE p IS NULL",
            (tips["Think before you answer"],),
        ).fetchone()
        conn.execute("DELETE FROM messages WHERE hash = ?", (root,))
    report = _import(db, path)
    assert report["added"] == 5
    assert report["skipped"] == [
        {
            "where": f"thread {ids['Hello there']}",
            "reason": f"its last message {tips['Hello there']} is not in the database",
            "title": "Hello there",
        }
    ]
    (s,) = [s for s in saved(db) if s["name"] == "Think before you answer"]
    first, answer = s["history"]
    assert first == {
        "role": "user",
        "content": f"[earlier messages not in the database: {root} is missing]",
    }
    assert answer["role"] == "assistant" and answer["reasoning"]


def test_a_fork_is_a_session_of_its_own(db: Path, tmp_path: Path, live: Path) -> None:
    """A thread forked from another (llm's ``LogStore.fork``) shares its first messages and
    then goes its own way: two sessions, each with its own branch."""
    import sqlite_utils
    from llm.logs import LogStore
    from llm.parts import Message, TextPart

    path = tmp_path / "logs.db"
    shutil.copy(live, path)
    with sqlite_utils.Database(path) as logs:
        row = next(
            logs.query("SELECT id, tip_message_hash FROM threads WHERE name = 'Hello there'")
        )
        tid, tip = row["id"], row["tip_message_hash"]
        store = LogStore(logs)
        fork = store.fork(tip, name="Hello there, again", forked_from=tid)
        store.append(fork, [Message(role="user", parts=[TextPart(text="And once more?")])])
    _import(db, path)
    sessions = {s["name"]: _seen(s) for s in saved(db)}
    first, forked = sessions["Hello there"], sessions["Hello there, again"]
    assert forked[:2] == first and len(first) == 2
    assert (forked[2]["role"], forked[2]["text"]) == ("user", "And once more?")
