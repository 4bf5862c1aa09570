"""The sessions index's legacy migration (SPEC §4.2), in the caller's transaction.

A legacy index has rows that embed their ``history``, or ids that cannot be keys: missing,
repeated, not strings, holding a NUL, or too long for ``session_<id>`` to fit the 200-character
key limit. :func:`migrate_index` moves every embedded history to its ``session_<id>`` body and
gives every unusable id a fresh one (a repeated id's row gets a copy of the body, so deleting
one row keeps the other's); nothing is lost and the new ids are returned as
``[{"from", "to", "name"}]``. It runs inside the caller's transaction: an import runs it inside
its own, so the import and its migration are one transaction on every backend.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..constants import SESSION_BODY_PREFIX, SESSIONS_INDEX_KEY
from ..digest import digest_json, hex_of
from ..limits import id_problem
from .body_rows import digest_of, digest_piece
from .sql import Tx

__all__ = ["body_key", "migrate_index", "needs_migration", "text_digest"]


def text_digest(history: Any) -> str:
    """Lower-cased text of the entries joined with ``\\n``, capped at 100,000 characters; NUL
    characters are left out (a PostgreSQL text value cannot hold one; names drop them too)."""
    if not isinstance(history, list):
        return ""
    return digest_of(digest_piece(e) for e in history)  # as an import's batch makes it


def body_key(session_id: str) -> str:
    return SESSION_BODY_PREFIX + session_id


def legacy_id(row: dict[str, Any]) -> str:
    """A stable id for a legacy row that has none (so a re-run writes the same key)."""
    return hex_of(digest_json(row))[:32]


def usable_id(value: Any) -> bool:
    """Whether ``value`` can be a session id (the id rule of :func:`chatkeep.limits.check_id`:
    a non-empty NUL-free Unicode string whose body key fits the key limit)."""
    return id_problem(value) is None


def needs_migration(raw: Any) -> bool:
    """Whether a stored index has legacy rows (embedded history) or ids that are not unique
    usable keys."""
    if not isinstance(raw, list):
        return False
    seen: set[str] = set()
    for r in raw:
        if not isinstance(r, dict):
            continue
        sid: Any = r.get("id")
        if "history" in r or not usable_id(sid) or sid in seen:
            return True
        seen.add(sid)
    return False


def migrate_index(tx: Tx) -> list[dict[str, Any]]:
    """Migrate the stored index inside ``tx`` (see the module docstring)."""
    legacy = tx.sessions.index_light()
    if not needs_migration(legacy):
        return []
    renamed: list[dict[str, Any]] = []
    seen: set[str] = set()
    light: list[Any] = []
    for r in legacy:
        if not isinstance(r, dict):
            continue
        row = dict(r)
        old: Any = row.get("id")
        sid: str
        if usable_id(old) and old not in seen:
            sid = old
        else:
            sid = legacy_id(r) if old is None else uuid.uuid4().hex
            while sid in seen:
                sid = uuid.uuid4().hex
            renamed.append({"from": old, "to": sid, "name": row.get("name", "")})
        seen.add(sid)
        row["id"] = sid
        if "history" in row:
            hist = row.pop("history")
            if not isinstance(hist, list):
                hist = []
            tx.kv.put(body_key(sid), hist)
            row["textDigest"] = text_digest(hist)
        elif sid != old and usable_id(old):
            # a repeated id: the copy gets its own body, so deleting one keeps the other
            body = tx.kv.get([body_key(old)]).get(body_key(old))
            if isinstance(body, list):
                tx.kv.put(body_key(sid), body)
                row["textDigest"] = text_digest(body)
        row.setdefault("name", "")
        row.setdefault("createdAt", 0)
        row["pinned"] = bool(row.get("pinned", False))
        row.setdefault("textDigest", "")
        light.append(row)
    tx.kv.put(SESSIONS_INDEX_KEY, light)
    return renamed
