"""Writing the live conversation back into the loaded session without shrinking it (SPEC §4.4).

The live history holds at most the window (SPEC §3.3): loading a session longer than the
window puts its oldest entries in the archive, and every later turn may push more out. Writing
only the live history back would cut the session down to the window. So whenever a session
becomes the loaded one (``save``, ``update``, ``load``), the key ``activeSessionHead`` records
``{"id", "head", "archiveFrom", "history", "live"}``: how many of the body's first entries are
not in the live history, the archive's next ``seq``, the history's write counter and the live
count and length at that moment.
The whole session is then the body's first ``head`` entries, the entries the window archived
since (archive rows from ``archiveFrom`` on, in order, but the earlier versions of edited
or regenerated turns, which carry ``replacedAt``), then the live history:
:func:`full_body`. While the history's write counter has not moved, the live history is what
was marked and the body needs no rewrite (:func:`unchanged`): switching back and forth between
sessions without a new turn writes no body.

The key is a targeted read (not in ``GET_ALL_KEYS``); a mark for another id than the one asked
about is ignored, so a stale mark never mixes two sessions.
"""

from __future__ import annotations

from typing import Any

from ..errors import CorruptValue
from .legacy_index import body_key
from .sql import Tx
from .stored_copy import StoredBody, archived_since, stored_from, stored_values

__all__ = ["HEAD_KEY", "full_body", "full_stored", "mark_in", "unchanged"]

HEAD_KEY = "activeSessionHead"
_ALL = 2**62


def mark_in(tx: Tx, session_id: str, head: int) -> None:
    """Record that the live history is session ``session_id`` minus its first ``head`` entries."""
    tx.kv.put(
        HEAD_KEY,
        {
            "id": session_id,
            "head": max(0, head),
            "archiveFrom": tx.history.archive_next_seq(),
            "history": tx.versions()[1],
            "live": list(tx.history.state()),
        },
    )


def _mark(tx: Tx, session_id: str) -> dict[str, Any] | None:
    mark = tx.kv.get([HEAD_KEY]).get(HEAD_KEY)
    return mark if isinstance(mark, dict) and mark.get("id") == session_id else None


def unchanged(tx: Tx, session_id: str) -> bool:
    """Whether the live history is still exactly what was marked for ``session_id`` (no
    history write since), so the session's body already holds it."""
    mark = _mark(tx, session_id)
    return (
        mark is not None
        and _count(mark.get("history")) == tx.versions()[1]
        and _count(mark.get("archiveFrom")) == tx.history.archive_next_seq()
        and mark.get("live") == list(tx.history.state())  # (count, chars): an imported mark too
    )


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def full_body(tx: Tx, session_id: str, live: list[Any]) -> list[Any]:
    """Session ``session_id`` as the live history continues it (see the module docstring);
    ``live`` itself when no mark for that session is recorded or its body is gone."""
    mark = _mark(tx, session_id)
    if mark is None:
        return live
    head, start = _count(mark.get("head")), _count(mark.get("archiveFrom"))
    if head is None or start is None:
        return live
    first: list[Any] = []
    if head:
        body = tx.kv.get([body_key(session_id)]).get(body_key(session_id))
        if not isinstance(body, list):
            return live
        first = body[:head]
    dropped: list[Any] = []
    for _seq, text in tx.history.archive_page(start - 1, _ALL):
        try:
            entry = tx.blobs.decode(text)
        except CorruptValue:
            continue  # it stays in the archive, where `doctor` reports it
        # an earlier version of an edited or regenerated turn (SPEC §3.5) is not part of the
        # conversation: it stays in the archive only
        if isinstance(entry, dict) and "replacedAt" not in entry:
            dropped.append(entry)
    return [*first, *dropped, *live]


def full_stored(tx: Tx, session_id: str, live: StoredBody) -> StoredBody | None:
    """:func:`full_body` as stored (:mod:`.stored_copy`: nothing decoded); ``None`` when a
    stored entry of the session does not read (the caller then decodes)."""
    mark = _mark(tx, session_id)
    if mark is None:
        return live
    head, start = _count(mark.get("head")), _count(mark.get("archiveFrom"))
    if head is None or start is None:
        return live
    first: list[Any] = []
    if head:
        body = stored_values(tx, body_key(session_id))
        if body is None:
            return None if tx.kv.raw([body_key(session_id)]) else live
        first = body[:head]
    dropped = archived_since(tx, start, lambda e: isinstance(e, dict) and "replacedAt" not in e)
    if dropped is None:
        return None
    if not first and not dropped:
        return live
    return stored_from(tx, [*first, *dropped, *live.values])
