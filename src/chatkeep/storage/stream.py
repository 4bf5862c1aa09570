"""Streaming export and import of a whole profile, in the chatkeep export format.

:func:`export_to` writes the same document as :func:`~.transfer.export_profile` (same keys,
values and order; ``json.load`` of the file equals ``export_profile(...)``), one value per line::

    {"format":"chatkeep-export","version":1,
    "local":{
    "key":value,
    …},
    "history":[
    entry,
    …],
    "archive":[
    entry,
    …]}

Values are written one at a time (archive rows read a page at a time), so memory holds one value
— one entry, one session body — not the profile. :func:`import_from` reads that layout line by
line in one transaction (validated as it goes; any error rolls the whole import back, nothing
changed); a file in any other layout (an export written by ``json.dump``, a browsa dump) is
handed to :func:`~.transfer.import_profile` whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from ..constants import HISTORY_KEY
from ..entries import has_image_parts, text_length, validate_entry
from ..errors import InvalidEntry, InvalidValue
from . import codec
from .areas import check_key
from .backup import HEAD, drop_cycles, lines_in
from .sql import now_ms
from .transfer import clear_for_import, import_profile

if TYPE_CHECKING:
    from .backend import Backend
    from .history import History
    from .sessions import Sessions

__all__ = ["HEAD", "export_lines", "export_to", "import_from", "lines_in"]


def _items(lines: Iterator[str], close: str) -> Iterator[str]:
    """The item lines of one section, up to its closing line (``}``/``]`` plus ``,`` or not)."""
    for line in lines:
        body = line.rstrip("\n")
        if body in (close, close + ","):
            return
        yield body[:-1] if body.endswith(",") else body
    raise InvalidValue("the export file ends inside a section", hint="the file is truncated")


def export_lines(
    backend: Backend, profile: str, history: History, counts: dict[str, int] | None = None
) -> Iterator[str]:
    """The lines of the export document, without their newlines, one value per line (one read
    transaction, held while the lines are consumed); ``counts`` gets what was written."""
    counts = counts if counts is not None else {}
    with backend.transaction(profile, write=False) as tx:
        yield from lines_in(tx, counts)


def export_to(backend: Backend, profile: str, history: History, fh: IO[str]) -> dict[str, int]:
    """Write the profile to ``fh`` (text, UTF-8); returns counts of what was written."""
    counts: dict[str, int] = {}
    for line in export_lines(backend, profile, history, counts):
        fh.write(line + "\n")
    return counts


def import_from(
    backend: Backend,
    profile: str,
    history: History,
    sessions: Sessions,
    fh: IO[str],
    *,
    replace: bool = False,
) -> dict[str, Any]:
    """Import the file ``fh``; same result and rules as :func:`~.transfer.import_profile`."""
    first = fh.readline()
    if first != HEAD:
        return import_profile(
            backend, profile, history, sessions, json.loads(first + fh.read()), replace=replace
        )
    lines = iter(fh)
    keys = 0
    with backend.transaction(profile) as tx:
        backup = clear_for_import(tx, backend, profile, replace)
        _expect(lines, '"local":{')
        for item in _items(lines, "}"):
            key, value = _pair(item)
            check_key(key)
            if key == HISTORY_KEY:
                continue
            tx.kv.put_encoded(key, *codec.encode(value, codec.text_blobs_for(key)))
            keys += 1
            drop_cycles()
        _expect(lines, '"history":[')
        count = chars = 0
        for pos, item in enumerate(_items(lines, "],")):
            entry = _entry(item, pos)
            text, blobs = codec.encode(entry, text_blobs=True)
            tx.history.insert(pos, text_length(entry), text, blobs, has_image_parts(entry), entry)
            count, chars = count + 1, chars + text_length(entry)
            drop_cycles()
        tx.history.set_state(count, chars)
        _expect(lines, '"archive":[')
        stamp = now_ms()
        for seq, item in enumerate(_items(lines, "]}")):
            text, blobs = codec.encode(_entry(item, seq), text_blobs=True)
            tx.history.archive_insert(seq, text, blobs, stamp)
            drop_cycles()
        tx.history.archive_recount()
        _expect_end(lines)
        renamed = sessions.migrate_in(tx)  # as import_profile: the index checked, bad ids renamed
    return {
        "source": "chatkeep",
        "keys": keys,
        "history": count,  # every imported entry was validated: all of them read back
        "archived": history.archived_count(),
        "sessions": len(sessions.list()),
        "renamedSessions": renamed,
        "backup": backup,
    }


def _expect_end(lines: Iterator[str]) -> None:
    for line in lines:
        if line.strip():
            raise InvalidValue(
                f"the export file goes on after its end: {line[:40]!r}",
                hint="the file was changed or two files were joined",
            )


def _expect(lines: Iterator[str], opening: str) -> None:
    line = next(lines, "").rstrip("\n")
    if line != opening:
        raise InvalidValue(f"the export file has {line[:40]!r} where {opening!r} belongs")


def _pair(item: str) -> tuple[str, Any]:
    try:
        key, end = json.JSONDecoder().raw_decode(item)
        if not isinstance(key, str) or item[end : end + 1] != ":":
            raise ValueError("not a key")
        return key, json.loads(item[end + 1 :])
    except (ValueError, RecursionError) as exc:
        raise InvalidValue(f"unreadable line in the export's local section: {exc}") from None


def _entry(item: str, index: int) -> Any:
    try:
        entry = json.loads(item)
    except (ValueError, RecursionError) as exc:
        raise InvalidValue(f"unreadable history entry {index} in the export: {exc}") from None
    try:
        validate_entry(entry, index)
    except InvalidEntry as exc:
        raise InvalidEntry(
            f"the import's history is not valid: {exc.message}", field=exc.field, hint=exc.hint
        ) from None
    return entry
