"""A dropped ``ck_sessions`` table (issue: every command, `doctor --repair` included, failed
with "no such table"): `doctor` reports it, reading commands name the repair, and
`doctor --repair` re-creates the schema and recovers the sessions from their bodies."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import chatkeep
from clirun import run


def _fill(db: Path) -> None:
    with chatkeep.open(str(db)) as store:
        store.history.append({"role": "user", "content": "owls hunt at night"})
        store.sessions.save("Owl notes")
        store.history.append({"role": "user", "content": "moths fly at dusk"})
        store.sessions.save("Moth notes")


def test_dropped_sessions_table_is_reported_and_rebuilt(tmp_path: Path) -> None:
    """`doctor` reports the missing table (exit 4, no crash), `sessions list` fails with a
    hint naming `doctor --repair`, and the repair brings back every session, searchable."""
    db = tmp_path / "s.db"
    _fill(db)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_sessions")
    found = run(db, "doctor", ok=False)
    assert found.returncode == 4 and "missing-table" in found.stdout
    assert "ck_sessions" in found.stdout and "Traceback" not in found.stderr
    listing = run(db, "sessions", "list", ok=False)
    assert listing.returncode == 4 and "chatkeep doctor --repair" in listing.stderr
    repaired = run(db, "doctor", "--repair")
    assert "healthy" in repaired.stdout
    assert "healthy" in run(db, "doctor").stdout
    with chatkeep.open(str(db)) as store:
        ids = [r["id"] for r in store.sessions.list()]
        assert len(ids) == 2
        texts = sorted(e["content"] for i in ids for e in store.sessions.get(i)["history"])
        assert texts == sorted(["owls hunt at night", "owls hunt at night", "moths fly at dusk"])
        assert len(store.sessions.list("moths")) == 1
        store.sessions.save("After the repair")  # the rebuilt triggers keep names in step
        assert [r["name"] for r in store.sessions.list("after the")] == ["After the repair"]


def test_dropped_trigram_table_is_rebuilt(tmp_path: Path) -> None:
    """A dropped search index table (``ck_session_trgm``) is re-created by the repair and
    indexes every digest again: content search finds the sessions."""
    db = tmp_path / "s.db"
    _fill(db)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_session_trgm")
    assert "missing-table" in run(db, "doctor", ok=False).stdout
    run(db, "doctor", "--repair")
    assert "healthy" in run(db, "doctor").stdout
    assert "Moth notes" in run(db, "sessions", "list", "moths fly").stdout
