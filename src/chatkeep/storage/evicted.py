"""The evicted list (SPEC §4.4): sessions the ``maxSessions`` cap moved out of the drawer.

An evicted session is never destroyed. Its body stays under ``session_<id>``; its index row
leaves ``ck_sessions`` (and its search digest is dropped, so the drawer's listing, paging and
search never see it) and becomes one small key ``evicted_<id>`` = the row's fields (``id``,
``name``, ``createdAt``, ``pinned`` and any other field it had) plus ``evictedAt`` (epoch ms).
An eviction writes one key per session, so its cost does not grow with the list, and the list
is exported, imported and wiped with the profile like every other key. ``restore`` turns the key
back into an index row (:mod:`.sessions`).

Everything here runs inside the caller's write transaction.
"""

from __future__ import annotations

from typing import Any

from .sql import Tx, now_ms

__all__ = ["EVICTED_PREFIX", "evict_in", "evicted_ids", "evicted_key", "evicted_rows", "find"]

#: ``evicted_<id>`` has the length of ``session_<id>``: every usable session id fits both.
EVICTED_PREFIX = "evicted_"


def evicted_key(session_id: str) -> str:
    return EVICTED_PREFIX + session_id


def evicted_ids(tx: Tx) -> list[str]:
    """Ids of the evicted sessions (no value read)."""
    return [k[len(EVICTED_PREFIX) :] for k in tx.kv.keys(EVICTED_PREFIX)]


def _row_of(key: str, value: Any) -> dict[str, Any] | None:
    sid = key[len(EVICTED_PREFIX) :]
    if not isinstance(value, dict) or value.get("id") != sid:
        return None
    return value


def evicted_rows(tx: Tx) -> list[dict[str, Any]]:
    """Every evicted row, the most recently evicted first (then the newest ``createdAt``)."""
    rows = [r for k, v in tx.kv.get(tx.kv.keys(EVICTED_PREFIX)).items() if (r := _row_of(k, v))]
    return sorted(rows, key=lambda r: (_num(r.get("evictedAt")), _num(r.get("createdAt"))))[::-1]


def find(tx: Tx, session_id: str) -> dict[str, Any] | None:
    """The evicted row of ``session_id``, or ``None`` when it is not evicted."""
    key = evicted_key(session_id)
    return _row_of(key, tx.kv.get([key]).get(key))


def evict_in(tx: Tx, ids: list[str]) -> int:
    """Move the index rows of ``ids`` to the evicted list (bodies kept); returns how many moved."""
    stamp = now_ms()
    moved: list[str] = []
    for sid in ids:
        found = tx.sessions.index_find(sid)
        if found is None:
            continue
        item = {k: v for k, v in found[1].items() if k != "textDigest"}
        tx.kv.put(evicted_key(sid), {**item, "evictedAt": stamp})
        moved.append(sid)
    if moved:
        tx.sessions.index_delete_ids(moved)
        tx.sessions.digest_delete(moved)
    return len(moved)


def _num(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0
