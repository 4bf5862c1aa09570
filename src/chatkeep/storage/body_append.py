"""Appending entries to a saved session's body without reading back or re-encoding what it
already holds (``store.sessions.extend``).

A body is stored as the JSON list of its entries with every image (and long text) replaced by
a reference to its blob. Appending parses that stored list as it is stored — references left
as references — adds the new entries encoded the same way, and writes the list back: the
images already in the body are not turned back into data URLs, hashed or checked again, and
only the new entries' blobs are written and referenced. The session's digest grows by the new
entries' text (up to its cap) instead of being computed again from the whole body.
"""

from __future__ import annotations

from typing import Any

from ..constants import TEXT_DIGEST_CAP
from ..entries import entry_text
from ..errors import CorruptValue
from . import codec
from .codec import Blob
from .legacy_index import body_key
from .sql import Tx


def extend_body(tx: Tx, session_id: str, entries: list[dict[str, Any]]) -> bool | None:
    """Append ``entries`` (already validated) to the body of ``session_id`` inside ``tx``.
    ``None`` when there is no such body; ``False`` when the stored body or digest cannot be
    extended in place (unreadable, or a store whose digests are not keyed by id): the caller
    then rewrites the body whole."""
    key = body_key(session_id)
    text = tx.kv_raw([key]).get(key)
    if text is None:
        return None
    try:
        body = codec.loads_stored(text)
    except CorruptValue:
        return False
    if not isinstance(body, list):
        return None
    old = _digest(tx, session_id)
    if old is None:
        return False
    blobs: dict[str, Blob] = {}
    added: list[Any] = []
    for entry in entries:
        stored, entry_blobs = codec.encode(entry, codec.text_blobs_for(key))
        added.append(codec.loads_stored(stored))
        blobs.update(entry_blobs)
    tx.bump("kv")
    tx.put_blobs(blobs)
    tx._b.execute(  # the profile is not the first placeholder here
        "UPDATE ck_kv SET value=? WHERE profile=? AND key=?",
        (codec.dumps([*body, *added]), tx.profile, key),
    )
    tx.add_refs("k:" + key, blobs)
    tx.search_body_extended(session_id, len(body), added, blobs)
    if len(old) < TEXT_DIGEST_CAP:
        more = "\n".join(entry_text(e) for e in entries).lower().replace("\x00", "")
        tx.digest_put(session_id, (old + ("\n" if body else "") + more)[:TEXT_DIGEST_CAP])
    return True


def _digest(tx: Tx, session_id: str) -> str | None:
    if not tx._b.digest_keyed:
        return None
    rows = tx.rows(
        f"SELECT digest FROM {tx._b.digest_table} WHERE profile=? AND id=?", (session_id,)
    )
    return rows[0][0] if rows else None
