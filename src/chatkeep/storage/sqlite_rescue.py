"""An SQLite store with damaged pages: the check, the read-only salvage report, the rescue
into a new file and the rescue in place (the methods of the same names of
:class:`~.sqlite.SQLiteSchema` for the check, of :class:`~.sqlite.SQLiteBackend` for the
others; the reading itself is :mod:`.salvage`)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from typing import Any

from .salvage import Lost, damaged_tables, rescue_file, salvage

# The backend's own connection reads the damaged file (opened read-only where the store is):
# every statement here only reads it.


def _files(path: str) -> list[str]:
    return [p for p in (path, path + "-wal", path + "-shm") if os.path.exists(p)]


def _conn(backend: Any) -> sqlite3.Connection:
    return backend._conn  # type: ignore[no-any-return]


def page_damage(backend: Any) -> list[tuple[str, str]]:
    """``PRAGMA quick_check`` of each table; nothing for ``:memory:``."""
    if backend.path == ":memory:":
        return []
    with backend.lock:
        try:
            return damaged_tables(_conn(backend))
        except sqlite3.OperationalError as exc:  # locked, unreadable file: not damage
            raise backend.translate(exc) or exc from exc
        except sqlite3.DatabaseError as exc:  # the file's schema itself does not read
            return [("sqlite_master", str(exc))]


def salvage_report(backend: Any) -> tuple[dict[str, int], list[Lost]]:
    """What a rescue would keep (rows per table) and lose, read without writing anything."""
    with backend.lock:
        return salvage(_conn(backend))


def rescue_into(backend: Any, target: str) -> tuple[dict[str, int], list[Lost]]:
    """Write every readable row of the store into the new store file ``target``."""
    with backend.lock:
        return rescue_file(_conn(backend), target, type(backend))


def rescue(backend: Any) -> tuple[str, list[Lost]]:
    """Replace the store's damaged content with every row that still reads: the damaged file
    (and its journal) is first copied to ``<store>.damaged-<time>`` (kept, never deleted), the
    readable rows are written to a new file beside it, which SQLite's backup then copies over
    the store's pages (so every connection sees the new content). Writers of other processes
    wait while the copy is made (the store's write lock is held). Returns the kept copy's path
    and what could not be read."""
    path = backend.path
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    kept, target = f"{path}.damaged-{stamp}", f"{path}.rescue-{stamp}"
    conn = _conn(backend)
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
        conn.execute("ROLLBACK")  # nothing was written: the lock only kept writers out
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
