"""A store file with zeroed pages (issue: `doctor` and `export` refused the whole store with
"database disk image is malformed", so the user could not even export what was readable).

The damage is done to a real store file: whole pages of the sessions' entries (one row each)
and of the archived history overwritten with zeros, as a failing disk or a cut-off copy leaves them.
`doctor` names the damaged tables and each row that cannot be read; `export` writes every row
that still reads and lists exactly the ones it skipped; `doctor --repair` rebuilds the store
from the readable rows and keeps the damaged file."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import chatkeep
from clirun import run

SESSIONS = 24
ENTRIES = 5
LIVE = 420  # past the window: most of it goes to the archive


def _fill(db: Path) -> None:
    with chatkeep.open(str(db)) as store:
        for s in range(SESSIONS):
            store.sessions.new()
            for i in range(ENTRIES):
                store.history.append({"role": "user", "content": f"topic {s} note {i} " + "k" * 40})
            store.sessions.save(f"Topic {s}")
        store.sessions.new()
        for i in range(LIVE):
            store.history.append({"role": "user", "content": f"line {i} " + "w" * 300})


def _middle_leaf(db: Path, table: str) -> tuple[int, int]:
    """(page number, page size) of the middle leaf page of ``table``'s rows."""
    with sqlite3.connect(db) as con:
        pages = [
            r[0]
            for r in con.execute(
                "SELECT pageno FROM dbstat WHERE name=? AND pagetype='leaf' ORDER BY pageno",
                (table,),
            )
        ]
        size = con.execute("PRAGMA page_size").fetchone()[0]
    assert len(pages) >= 3, f"{table} has too few pages for this test"
    return int(pages[len(pages) // 2]), int(size)


def _zero(db: Path, tables: tuple[str, ...]) -> None:
    """Overwrite one page-sized range in the middle of each table's rows with zeros."""
    spots = [_middle_leaf(db, t) for t in tables]
    with open(db, "r+b") as fh:
        for page, size in spots:
            fh.seek((page - 1) * size)
            fh.write(b"\0" * size)


def _rows(db: Path) -> tuple[dict[str, dict[int, Any]], dict[int, str]]:
    """(session body key → {position: entry}, archive seq → the entry's content) read from an
    intact file with plain SQL."""
    with sqlite3.connect(db) as con:
        bodies: dict[str, dict[int, Any]] = {}
        for sid, pos, value in con.execute("SELECT sid, pos, value FROM ck_session_items"):
            bodies.setdefault(f"session_{sid}", {})[int(pos)] = json.loads(value)
        archive = {
            int(seq): json.loads(value)["content"]
            for seq, value in con.execute("SELECT seq, value FROM ck_archive")
        }
    return bodies, archive


def _skipped(stderr: str) -> tuple[set[tuple[str, int]], set[int]]:
    """The (body key, position) of the session entries and the archive positions the export
    says it skipped."""
    keys = {
        (f"session_{sid}", int(pos))
        for sid, pos in re.findall(r"\(ck_session_items:sid=([0-9a-f]+), pos=(\d+)\)", stderr)
    }
    seqs = {int(n) for n in re.findall(r"\(ck_archive:seq=(\d+)\)", stderr)}
    return keys, seqs


def _contents(doc: dict[str, Any]) -> list[str]:
    return [e["content"] for e in doc["archive"]]


def test_zeroed_pages_doctor_reports_export_saves_all_that_reads(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _fill(db)
    pristine = tmp_path / "pristine.db"
    shutil.copyfile(db, pristine)
    bodies, archive = _rows(pristine)
    _zero(db, ("ck_session_items", "ck_archive"))

    # doctor: the damaged tables and each row that cannot be read, nothing written
    before = db.read_bytes()
    found = run(db, "doctor", "--json", ok=False)
    assert found.returncode == 4 and "Traceback" not in found.stderr
    report = json.loads(found.stdout)
    damaged = {p["where"] for p in report["problems"] if p["kind"] == "damaged-pages"}
    assert {"ck_session_items", "ck_archive"} <= damaged
    lost = {p["where"] for p in report["problems"] if p["kind"] == "lost-row"}
    assert any(w.startswith("ck_session_items:sid=") for w in lost)
    assert any(w.startswith("ck_archive:seq=") for w in lost)
    assert any("chatkeep export" in n and "--repair" in n for n in report["notes"])
    assert db.read_bytes() == before

    # export: every row that reads, and exactly the skipped ones listed
    out = tmp_path / "out.json"
    saved = run(db, "export", "-o", str(out), ok=False)
    assert saved.returncode == 4 and "Traceback" not in saved.stderr
    assert "damaged pages" in saved.stderr
    doc = json.loads(out.read_text())
    skipped_keys, skipped_seqs = _skipped(saved.stderr)
    assert skipped_keys and skipped_seqs
    assert {f"ck_session_items:sid={k[len('session_') :]}, pos={p}" for k, p in skipped_keys} == {
        w for w in lost if w.startswith("ck_session_items:")
    }
    # every body is exported with each of its entries as stored, except the ones listed
    exported = {k for k in doc["local"] if k.startswith("session_")}
    assert exported == set(bodies)
    for key in exported:
        want = [e for p, e in sorted(bodies[key].items()) if (key, p) not in skipped_keys]
        assert doc["local"][key] == want
    # each archived entry either exported (in its order) or listed as skipped
    kept = [archive[s] for s in sorted(archive) if s not in skipped_seqs]
    assert _contents(doc) == kept
    assert len(skipped_seqs) < len(archive) // 2
    assert len(doc["history"]) > 0
    streamed = run(db, "export", ok=False)  # to stdout: the damage is found before any line
    assert streamed.returncode == 4 and json.loads(streamed.stdout) == doc

    # repair: the store rebuilt from what reads, the damaged file kept, nothing readable lost
    fixed = run(db, "doctor", "--repair", ok=False)
    assert fixed.returncode == 4  # lost rows are said, once
    assert "lost-row" in fixed.stdout and "damaged file is kept" in fixed.stdout
    assert list(tmp_path.glob("s.db.damaged-*"))
    assert "healthy" in run(db, "doctor").stdout
    again = tmp_path / "again.json"
    run(db, "export", "-o", str(again))
    after = json.loads(again.read_text())
    assert _contents(after) == kept
    assert after["history"] == doc["history"]
    for key in exported:
        assert after["local"][key] == doc["local"][key]
    with chatkeep.open(str(db)) as store:
        listed = {r["id"] for r in store.sessions.list()}
        assert {k[len("session_") :] for k in exported} <= listed
        hit = next(k for k in sorted(exported) if doc["local"][k])
        text = store.sessions.get(hit[len("session_") :])["history"][0]["content"]
        assert store.sessions.list(text.split(" k")[0])  # content search works again


def test_rows_no_index_names_are_reported_as_a_stretch(tmp_path: Path) -> None:
    """With the archive's own index zeroed too, the rows of the zeroed leaf cannot be named:
    the rescue still keeps every other row and reports the unreadable stretch between the two
    rows around it (through the library: ``damaged_pages`` and ``rescued``)."""
    db = tmp_path / "s.db"
    _fill(db)
    _bodies, archive = _rows(db)
    with sqlite3.connect(db) as con:
        index_pages = [
            int(r[0])
            for r in con.execute(
                "SELECT pageno FROM dbstat WHERE name='sqlite_autoindex_ck_archive_1'"
            )
        ]
        size = con.execute("PRAGMA page_size").fetchone()[0]
    _zero(db, ("ck_archive",))
    with open(db, "r+b") as fh:
        for page in index_pages:
            fh.seek((page - 1) * size)
            fh.write(b"\0" * size)
    with chatkeep.open(str(db)) as store:
        assert "ck_archive" in {t for t, _why in store.damaged_pages()}
        with store.rescued() as (copy, skipped):
            kept = [e["content"] for e in copy.export_data()["archive"]]
    stretches = [s for s in skipped if s["table"] == "ck_archive"]
    assert len(stretches) == 1 and "which and how many is not known" in stretches[0]["what"]
    # every row the walk reaches is kept, in order; what is gone is one leaf's worth
    assert kept == [c for c in (archive[s] for s in sorted(archive)) if c in set(kept)]
    assert 0 < len(archive) - len(kept) < 30


def _zero_pages_of(db: Path, names: tuple[str, ...]) -> None:
    with sqlite3.connect(db) as con:
        marks = ",".join("?" * len(names))
        pages = [
            int(r[0])
            for r in con.execute(f"SELECT pageno FROM dbstat WHERE name IN ({marks})", names)
        ]
        size = con.execute("PRAGMA page_size").fetchone()[0]
    with open(db, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(b"\0" * size)


def test_zeroed_schema_bookkeeping_opens_and_is_rebuilt(tmp_path: Path) -> None:
    """The table of applied migrations zeroed (with its index): the store still opens (it
    raised a raw sqlite3 error), `doctor` reports it, the repair makes it again and every
    conversation is still there."""
    db = tmp_path / "s.db"
    _fill(db)
    whole = tmp_path / "whole.json"
    run(db, "export", "-o", str(whole))
    _zero_pages_of(db, ("ck_migrations", "sqlite_autoindex_ck_migrations_1"))
    found = run(db, "doctor", "--json", ok=False)
    assert found.returncode == 4 and "Traceback" not in found.stderr
    report = json.loads(found.stdout)
    assert "ck_migrations" in {
        p["where"] for p in report["problems"] if p["kind"] == "damaged-pages"
    }
    assert not [p for p in report["problems"] if p["kind"] == "lost-row"]
    fixed = run(db, "doctor", "--repair")
    assert "healthy" in fixed.stdout
    again = tmp_path / "again.json"
    run(db, "export", "-o", str(again))
    assert json.loads(again.read_text()) == json.loads(whole.read_text())


def test_random_damage_never_crashes_and_repairs_to_healthy(tmp_path: Path) -> None:
    """Pages chosen at random (seeded; the file's schema pages spared) zeroed or filled with
    noise: every read of the damage, the export of a copy and the repair end without an error
    that is not chatkeep's, and the repaired store is healthy and exports."""
    import io
    import random

    src = tmp_path / "src.db"
    _fill(src)
    with sqlite3.connect(src) as con:
        spared = {r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name='sqlite_schema'")}
        count = con.execute("PRAGMA page_count").fetchone()[0]
        size = con.execute("PRAGMA page_size").fetchone()[0]
    for seed in range(8):
        rnd = random.Random(seed)
        db = tmp_path / f"s{seed}.db"
        shutil.copyfile(src, db)
        pages = rnd.sample([p for p in range(2, count + 1) if p not in spared], rnd.randint(1, 6))
        with open(db, "r+b") as fh:
            for page in pages:
                fh.seek((page - 1) * size)
                fh.write(b"\0" * size if rnd.random() < 0.7 else rnd.randbytes(size))
        with chatkeep.open(str(db)) as store:
            if store.damaged_pages():
                assert not store.doctor()["healthy"]
                with store.rescued() as (copy, _skipped):
                    copy.export_data()
            store.doctor(repair=True)
            assert store.doctor()["healthy"], (seed, pages)
            store.export_to(io.StringIO())
