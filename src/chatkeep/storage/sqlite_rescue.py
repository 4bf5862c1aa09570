"""An SQLite store with damaged pages: the check, the read-only salvage report, the rescue
into a new file and the rescue in place (the methods of the same names of
:class:`~.sqlite.SQLiteBackend`; the reading itself is :mod:`.salvage`)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from .salvage import Lost, damaged_tables, open_damaged, rescue_file, salvage


def _files(path: str) -> list[str]:
    return [p for p in (path, path + "-wal", path + "-shm") if os.path.exists(p)]


def page_damage(backend: Any) -> list[tuple[str, str]]:
    """``PRAGMA quick_check`` of each table; nothing for ``:memory:``."""
    if backend.path == ":memory:":
        return []
    conn = open_damaged(backend.path)
    try:
        return damaged_tables(conn)
    except sqlite3.DatabaseError as exc:  # the file's schema itself does not read
        return [("sqlite_master", str(exc))]
    finally:
        conn.close()


def salvage_report(backend: Any) -> tuple[dict[str, int], list[Lost]]:
    """What a rescue would keep (rows per table) and lose, read without writing anything."""
    conn = open_damaged(backend.path)
    try:
        return salvage(conn)
    finally:
        conn.close()


def rescue_into(backend: Any, target: str) -> tuple[dict[str, int], list[Lost]]:
    """Write every readable row of the store into the new store file ``target``."""
    conn = open_damaged(backend.path)
    try:
        return rescue_file(conn, target, type(backend))
    finally:
        conn.close()


def rescue(backend: Any) -> tuple[str, list[Lost]]:
    """Replace the store's damaged content with every row that still reads: the damaged file
    (and its journal) is first copied to ``<store>.damaged-<time>`` (kept, never deleted), the
    readable rows are written to a new file beside it, which SQLite's backup then copies over
    the store's pages (so every connection sees the new content). Writers of other processes
    wait while the copy is made (the store's write lock is held). Returns the kept copy's path
    and what could not be read."""
    import shutil
    import time

    path = backend.path
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    kept, target = f"{path}.damaged-{stamp}", f"{path}.rescue-{stamp}"
    conn: sqlite3.Connection = backend._conn  # noqa: SLF001 - the backend's own helper
    with backend.lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for suffix in ("", "-wal"):
                if os.path.exists(path + suffix):
                    shutil.copyfile(path + suffix, kept + suffix)
                    os.chmod(kept + suffix, 0o600)
            _counts, lost = rescue_into(backend, target)
        except BaseException:
            conn.execute("ROLLBACK")
            for p in _files(target):
                os.unlink(p)
            raise
        conn.execute("COMMIT")
        try:
            made = sqlite3.connect(target)
            try:
                made.backup(conn)
            finally:
                made.close()
        finally:
            for p in _files(target):
                os.unlink(p)
    return kept, lost
