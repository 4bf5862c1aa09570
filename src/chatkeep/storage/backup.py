"""The backup export a replacing import writes before it wipes a profile (SPEC §14).

``chatkeep import FILE --replace`` (and ``import_data``/``import_from`` with ``replace=True``)
first writes the profile it replaces to ``chatkeep-backup-<profile>-<UTC time>.json``, in the
chatkeep export format (it imports back with ``chatkeep import``), mode 0600:

- beside the store file for a SQLite store;
- in the user data directory (``platformdirs.user_data_dir("chatkeep")``, so
  ``$XDG_DATA_HOME/chatkeep`` on Linux) for PostgreSQL and in-memory stores.

It is written from the import's own write transaction, so it holds exactly what is replaced,
and flushed to disk before anything is wiped; when it cannot be written the import raises
:class:`~chatkeep.errors.StoreError` and the transaction rolls back (nothing changed).
"""

from __future__ import annotations

import gc
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ..entries import ROLES
from ..errors import CorruptValue, StoreError
from . import codec
from .backend import Backend
from .sql import Tx

__all__ = ["EXPORT_FORMAT", "EXPORT_VERSION", "HEAD", "backup_dir", "lines_in", "write_backup"]

EXPORT_FORMAT = "chatkeep-export"
EXPORT_VERSION = 1
#: The first line of an export in the one-value-per-line layout (see :mod:`.stream`).
HEAD = f'{{"format":"{EXPORT_FORMAT}","version":{EXPORT_VERSION},\n'
ARCHIVE_PAGE = 200


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lines_in(tx: Any, counts: dict[str, int]) -> Iterator[str]:
    """The lines of the export document as ``tx`` sees the profile (a read transaction, or the
    write transaction of an import that backs the profile up before replacing it)."""
    counts.update(keys=0, history=0, archived=0)
    yield HEAD.rstrip("\n")
    yield '"local":{'
    yield from _commas(_local_lines(tx, counts))
    yield "},"
    yield '"history":['
    # stored texts hold blob markers only; each row's images are loaded as it is written
    yield from _commas(
        _row_lines((t for _p, _c, t in tx.history.live_rows()), tx, counts, "history")
    )
    yield "],"
    yield '"archive":['
    yield from _commas(_row_lines(_archive_texts(tx), tx, counts, "archived"))
    yield "]}"


def _commas(lines: Iterator[str]) -> Iterator[str]:
    """Each line with the comma that separates it from the next (none after the last)."""
    prev = next(lines, None)
    for line in lines:
        yield prev + ","  # type: ignore[operator]
        prev = line
    if prev is not None:
        yield prev


def _local_lines(tx: Any, counts: dict[str, int]) -> Iterator[str]:
    for key in sorted(tx.kv.keys()):
        got = tx.kv.get([key])
        if key not in got:
            continue  # unreadable: left out, as export_profile does
        counts["keys"] += 1
        line = _dumps(key) + ":" + _dumps(got.pop(key))
        drop_cycles()
        yield line


def _archive_texts(tx: Any) -> Iterator[str]:
    after = -1
    while page := tx.history.archive_page(after, ARCHIVE_PAGE):
        after = page[-1][0]
        yield from (t for _s, t in page)


def _row_lines(texts: Iterable[str], tx: Any, counts: dict[str, int], what: str) -> Iterator[str]:
    """Each readable entry of ``texts`` as one line."""
    for text in texts:
        try:
            value = codec.decode(text, tx.blobs.fetch_urls)
        except CorruptValue:
            continue  # unreadable rows are left out, as the reads skip them
        if not (isinstance(value, dict) and value.get("role") in ROLES and "content" in value):
            continue
        line = _dumps(value)
        del value
        drop_cycles()
        counts[what] += 1
        yield line


def drop_cycles() -> None:
    """Collect the youngest generation now: the codec's recursive walkers are closures that
    reference themselves, so each call leaves a small cycle holding that row's image strings,
    which the collector would otherwise keep for hundreds of rows (hundreds of MB)."""
    gc.collect(0)


def backup_dir(backend: Backend) -> str:
    """Where the backups of ``backend``'s profiles go."""
    path = getattr(backend, "path", None)
    if isinstance(path, str) and path and path != ":memory:":
        return os.path.dirname(os.path.abspath(path))
    import platformdirs  # lazy: only a replacing import on a server or in memory needs it

    return platformdirs.user_data_dir("chatkeep")


def _create(folder: str, profile: str) -> tuple[str, int]:
    """A new file of its own (never an existing one), mode 0600: its path and descriptor."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = f"chatkeep-backup-{re.sub(r'[^A-Za-z0-9._-]+', '_', profile)[:60]}-{stamp}"
    for n in range(1000):
        path = os.path.join(folder, base + (f"-{n}" if n else "") + ".json")
        try:
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
    raise FileExistsError(f"{base}.json and 999 numbered ones already exist")


def _failed(profile: str, folder: str, exc: OSError) -> StoreError:
    return StoreError(
        f"cannot write the backup of profile {profile!r} to {folder}: "
        f"{exc.strerror or exc}; nothing was replaced",
        hint="free some space or make that directory writable, then import again",
    )


def write_backup(tx: Tx, backend: Backend, profile: str) -> str:
    """Write the profile as ``tx`` sees it to a new backup export; its path."""
    folder = backup_dir(backend)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path, fd = _create(folder, profile)
    except OSError as exc:
        raise _failed(profile, folder, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for line in lines_in(tx, {}):
                fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        try:
            os.unlink(path)  # a partial backup is no backup
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _failed(profile, folder, exc) from None
        raise
    return path
