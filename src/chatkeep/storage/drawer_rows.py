"""The drawer's rows: names, ids and the light row shape (SPEC §4.1, §4.4)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from ..constants import AUTO_NAME_MAX, SESSION_NAME_MAX
from ..entries import is_attachment
from ..errors import InvalidValue
from ..limits import check_id as _check_id
from ..limits import check_text
from .history import Entries
from .sql import now_ms

Row = dict[str, Any]
RowList = list[Row]


def auto_name(history: Entries, today: _dt.date | None = None) -> str:
    for e in history:
        if (
            isinstance(e, dict)
            and e.get("role") == "user"
            and isinstance(e.get("content"), str)
            and not is_attachment(e)
        ):
            text = e["content"].strip()
            if text:
                return text[:AUTO_NAME_MAX] + ("…" if len(text) > AUTO_NAME_MAX else "")
    return (today or _dt.date.today()).isoformat()


def check_id(session_id: Any) -> str:
    """A session id given to ``store.sessions``: the one id rule of :mod:`chatkeep.limits`."""
    return _check_id(session_id, hint="list ids with `chatkeep sessions list`")


def light(row: Row) -> Row:
    return {
        "id": row.get("id"),
        "name": row.get("name", ""),
        "createdAt": row.get("createdAt", 0),
        "pinned": bool(row.get("pinned", False)),
    }


def clean_index(value: Any) -> RowList:
    if not isinstance(value, list):
        return []
    return [r for r in value if isinstance(r, dict) and isinstance(r.get("id"), str) and r["id"]]


def check_name(name: Any, limit: int = SESSION_NAME_MAX) -> str:
    """A session name given by the user (its first ``limit`` characters)."""
    if isinstance(name, str):
        check_text(name, "the session name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidValue(
            "a session name must be a non-empty string", hint="pass a name with some text"
        )
    return name[:limit]


def with_evicted(row: Row, evicted: int) -> Row:
    """``row`` with ``evicted``: how many sessions the write moved out of the drawer (only
    when some did)."""
    return {**row, "evicted": evicted} if evicted else row


def evicted_light(row: Row) -> Row:
    return {**light(row), "evictedAt": row.get("evictedAt", 0)}


def valid(row: Any) -> bool:
    return isinstance(row, dict) and isinstance(row.get("id"), str) and bool(row["id"])


def ms_or_now(v: Any) -> int:
    if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1e15:
        return int(v)
    return now_ms()
