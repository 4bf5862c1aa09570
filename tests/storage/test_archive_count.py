"""The archive's length is kept beside it (migration 0013), not counted on every read: it stays
exact through every way rows enter or leave the archive, on both backends, and a write by code
that does not keep it (an older version) is noticed, counted afresh, or repaired by doctor."""

from __future__ import annotations

import io

import chatkeep
from factories import assistant, user


def _counted(spec) -> int:
    return int(
        spec.raw_rows("SELECT count(*) FROM ck_archive WHERE profile=?", (spec.profile,))[0][0]
    )


def _kept(spec) -> tuple[int | None, int | None]:
    r = spec.raw_rows(
        "SELECT archived, archived_next FROM ck_history_state WHERE profile=?", (spec.profile,)
    )
    return (r[0][0], r[0][1]) if r else (None, None)


def _fill(store: chatkeep.Store, turns: int) -> None:
    store.local.set("maxHistoryEntries", 6)
    for i in range(turns):
        store.history.append(user(f"question {i}"))
        store.history.append(assistant(f"answer {i}"))


def test_the_kept_count_follows_every_archive_write(spec) -> None:
    with spec.open() as s:
        _fill(s, 20)  # 40 entries through a 6-entry window: 34 archived, a few at a time
        assert s.history.archived_count() == _counted(spec) == 34
        assert _kept(spec) == (34, 34)  # kept, not counted: the archive ends at seq 33
        assert s.history.archive_append([user("late question"), assistant("late reply")]) == 36
        assert s.history.archived_count() == _counted(spec) == 36
        s.sessions.save("kept")
        s.sessions.new()  # the live history goes to the archive as a new session starts
        assert s.history.archived_count() == _counted(spec)
        assert _kept(spec)[0] == _counted(spec)
        total, start, page = s.history.archived_page(None, 5)
        assert (total, start, len(page)) == (_counted(spec), _counted(spec) - 5, 5)


def test_imports_count_the_archive_they_write(spec, tmp_path) -> None:
    with spec.open() as s:
        _fill(s, 10)
        doc = s.export_data()
        buf = io.StringIO()
        s.export_to(buf)
    other = (
        chatkeep.open(spec.url, profile=spec.profile + "_copy") if spec.kind == "postgres" else None
    )
    target = other or chatkeep.open(str(tmp_path / "copy.db"))
    with target:
        target.import_data(doc, replace=True)
        assert target.history.archived_count() == len(doc["archive"]) == 14
        target.history.append(user("one more"))  # the window moves one more entry out
        assert target.history.archived_count() == 15
        buf.seek(0)
        target.import_from(buf, replace=True)
        assert target.history.archived_count() == 14


def test_rows_written_by_code_that_keeps_no_count_are_counted(spec) -> None:
    """An older version appends to the archive without the count: the archive no longer ends
    where the count was taken, so it is counted; the next archiving write keeps it again."""
    with spec.open() as s:
        _fill(s, 10)
        assert s.history.archived_count() == 14
        spec.raw_rows(
            "INSERT INTO ck_archive (profile, seq, archived_at, value) VALUES (?, ?, 0, ?)",
            (spec.profile, 14, '{"role":"user","content":"from an older version"}'),
        )
        assert s.history.archived_count() == 15
        s.history.append(user("now"))
        assert s.history.archived_count() == 16 == _counted(spec)
        assert _kept(spec) == (16, 16)


def test_a_store_migrated_without_counts_counts_then_keeps(spec) -> None:
    """Right after migration 0013 no count is kept (NULL): reads count, the first archiving
    write takes the count."""
    with spec.open() as s:
        _fill(s, 10)
        spec.raw_rows(
            "UPDATE ck_history_state SET archived = NULL, archived_next = NULL WHERE profile=?",
            (spec.profile,),
        )
        assert s.history.archived_count() == 14
        s.history.append(user("now"))
        assert _kept(spec) == (15, 15)
        assert s.history.archived_count() == 15


def test_doctor_finds_and_repairs_a_count_that_is_off(spec) -> None:
    """A row taken out of the middle by code that keeps no count leaves the end where it was:
    the kept count is off by one; doctor reports it and repairs it."""
    with spec.open() as s:
        _fill(s, 10)
        spec.raw_rows("DELETE FROM ck_archive WHERE profile=? AND seq=?", (spec.profile, 5))
        assert s.history.archived_count() == 14  # what is kept, one more than the rows
        found = s.doctor()
        assert any(
            p["kind"] == "history-state" and "archive 14, rows 13" in p["detail"]
            for p in found["problems"]
        ), found["problems"]
        s.doctor(repair=True)
        assert s.history.archived_count() == 13 == _counted(spec)
        assert not s.doctor()["problems"]


def test_the_migration_counts_an_existing_archive(sqlite_spec) -> None:
    """A store made before migration 0013 (no kept count) gets its archive counted once, by
    the migration, so the first read after the upgrade counts nothing."""
    with sqlite_spec.open() as s:
        _fill(s, 10)
    for sql in (
        "ALTER TABLE ck_history_state DROP COLUMN archived",
        "ALTER TABLE ck_history_state DROP COLUMN archived_next",
        "DELETE FROM ck_migrations WHERE name = '0013_archive_count'",
    ):
        sqlite_spec.raw_rows(sql)
    with sqlite_spec.open() as s:
        assert _kept(sqlite_spec) == (14, 14)
        assert s.history.archived_count() == 14
