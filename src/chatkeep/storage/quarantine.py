"""Putting quarantined rows back (``chatkeep doctor --restore-quarantine``).

``doctor --repair`` moves a row it cannot read to a ``quarantine_<n>`` key: ``{"from": owner,
"reason", "quarantinedAt", "text"}`` where ``owner`` is ``k:<key>``, ``h:<pos>`` (a live
history row) or ``a:<seq>`` (an archive row) and ``text`` its stored text, blob markers
resolved to what they stand for. Older versions also quarantined whole session bodies that
only pointed at a missing image. :func:`restore` reads each record with today's code; one that
now reads (a missing image reads as its ``[image missing: sha256:…]`` placeholder) and is
within today's limits goes back where it came from, and its quarantine key is deleted:

* ``k:<key>``: when the key is absent, or holds an empty list (the empty body an earlier repair
  gave a session whose body it quarantined); a key that holds anything else is left alone and
  the record stays;
* ``h:<pos>`` / ``a:<seq>``: at that position when it is free, else after the last row.

Records that still cannot be read stay where they are, with the reason. Nothing is deleted
that is not written back in the same transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..entries import text_length
from ..errors import CorruptValue
from ..limits import ENTRY_MAX_DEPTH, MAX_DEPTH, problem
from . import codec
from .sql import now_ms

if TYPE_CHECKING:
    from .sql import Tx

__all__ = ["QUARANTINE_PREFIX", "restore"]

QUARANTINE_PREFIX = "quarantine_"


def _is_record(value: Any) -> bool:
    """Whether a quarantine key's value is a record :mod:`.doctor` wrote."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("from"), str)
        and isinstance(value.get("text"), str)
    )


def _value(text: str, tx: Tx, owner: str) -> tuple[Any, str | None]:
    """(value, None) when the quarantined text reads now, else (None, why)."""
    try:
        value = codec.decode(text, tx.blobs.fetch_urls)
    except CorruptValue as exc:
        return None, f"still unreadable: {exc.message}"
    why = problem(value, MAX_DEPTH if owner.startswith("k:") else ENTRY_MAX_DEPTH)
    if why is not None:
        return None, f"still over a limit: {why}"
    if owner[:2] in ("h:", "a:") and not (
        isinstance(value, dict) and value.get("role") in ("user", "assistant")
    ):
        return None, "still not a history entry"
    return value, None


def _put_back(tx: Tx, owner: str, value: Any) -> str | None:
    """Write ``value`` where ``owner`` was; None when done, else why not."""
    kind, _, where = owner.partition(":")
    if kind == "k":
        current = tx.kv.raw([where]).get(where)
        if current is not None and current.strip() != "[]":
            return f"{where} holds other data now: left in quarantine"
        tx.kv.put(where, value)
        return None
    if kind not in ("h", "a") or not where.lstrip("-").isdigit():
        return f"unknown origin {owner!r}"
    text, blobs = codec.encode(value, True, checked=True)
    if kind == "h":
        pos = int(where)
        if tx.rows("SELECT 1 FROM ck_history WHERE profile=? AND pos=?", (pos,)):
            pos = tx.history.next_pos()
        tx.history.insert(pos, text_length(value), text, blobs, value=value)
        return None
    seq = int(where)
    if tx.rows("SELECT 1 FROM ck_archive WHERE profile=? AND seq=?", (seq,)):
        seq = tx.history.archive_next_seq()
    tx.history.archive_insert(seq, text, blobs, now_ms())
    return None


def restore(tx: Tx) -> tuple[list[str], list[dict[str, Any]]]:
    """Put back every quarantined row that reads now (see the module docstring); returns the
    restored keys and, for the rest, ``{"key", "from", "detail"}``."""
    restored: list[str] = []
    kept: list[dict[str, Any]] = []
    unreadable: list[str] = []
    records = tx.kv.get(tx.kv.keys(QUARANTINE_PREFIX), unreadable)
    for key in unreadable:
        kept.append({"key": key, "from": None, "detail": "the record itself does not read"})
    for key, record in sorted(records.items()):
        if not _is_record(record):
            kept.append({"key": key, "from": None, "detail": "not a quarantine record"})
            continue
        owner = record["from"]
        value, why = _value(record["text"], tx, owner)
        if why is None:
            why = _put_back(tx, owner, value)
        if why is None:
            tx.kv.delete([key])
            restored.append(key)
        else:
            kept.append({"key": key, "from": owner, "detail": why})
    return restored, kept
