"""The key/value rows of one profile (``ck_kv``): ``tx.kv`` of :class:`~.sql.Tx`.

A key's value is stored as JSON text (:mod:`.codec`); two kinds of key keep their value in rows
of their own behind a mark in ``ck_kv``: ``savedSessions`` (:mod:`.index_rows`) and the
``session_<id>`` bodies (:mod:`.body_rows`). Reading or writing them here goes to
``tx.sessions``; every write keeps blob references and the search index (``tx.search``) in step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..constants import SESSION_BODY_PREFIX, SESSIONS_INDEX_KEY
from ..errors import CorruptValue
from ..limits import check_value
from . import codec
from .body_rows import BODY_MARK, encode_rows, is_body_key, rows_of_stored
from .codec import Blob
from .index_rows import ROWS_MARK
from .search_index import NOT_GIVEN
from .tx_part import TxPart


class KvRows(TxPart):
    """Key/value rows of one profile (``tx.kv``)."""

    def raw(self, keys: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in self.tx.chunks(keys):
            for k, v in self.tx.rows(
                f"SELECT key, value FROM ck_kv WHERE profile=? AND key IN ({self.tx.marks(len(chunk))})",
                chunk,
            ):
                out[k] = v
        for k, v in out.items():
            if v == BODY_MARK and is_body_key(k):
                out[k] = self.tx.sessions.items_joined(k[len(SESSION_BODY_PREFIX) :])
        if out.get(SESSIONS_INDEX_KEY) == ROWS_MARK:
            out[SESSIONS_INDEX_KEY] = self.tx.sessions.index_joined()
        return out

    def get(self, keys: Sequence[str], corrupt: list[str] | None = None) -> dict[str, Any]:
        """Decoded values of ``keys`` that exist; unreadable ones are left out (and listed)."""
        out: dict[str, Any] = {}
        for k, text in self.raw(keys).items():
            try:
                out[k] = self.tx.blobs.decode(text)
            except CorruptValue:
                if corrupt is not None:
                    corrupt.append(k)
        if isinstance(out.get(SESSIONS_INDEX_KEY), list):
            digests = self.tx.sessions.digest_all()
            for row in out[SESSIONS_INDEX_KEY]:
                if isinstance(row, dict) and row.get("id") in digests:
                    row["textDigest"] = digests[row["id"]]
        return out

    def put_encoded(
        self, key: str, text: str, blobs: dict[str, Blob], refs: Iterable[str] = ()
    ) -> None:
        if key == SESSIONS_INDEX_KEY:  # refs: blobs the text references, stored already
            try:
                value = codec.decode(text, lambda hs: {h: blobs[h].url() for h in hs if h in blobs})
            except CorruptValue:
                value = None
            self.tx.sessions.put_index(value)
            return
        if is_body_key(key):
            rows = rows_of_stored(text)
            if rows is not None:
                self.tx.sessions.body_replace(key, rows, blobs, refs)
                return
        self.write_row(key, text, blobs, refs)

    def write_row(
        self,
        key: str,
        text: str,
        blobs: dict[str, Blob],
        refs: Iterable[str] = (),
        value: Any = NOT_GIVEN,
    ) -> None:
        """One ``ck_kv`` row written as given (the sessions index and session bodies are not
        routed to their tables here: :meth:`put` does that), with its blobs' references and its
        message-search rows."""
        self.tx.bump("kv")
        self.tx.blobs.put(blobs)
        self.tx.run(
            "INSERT INTO ck_kv (profile, key, value) VALUES (?,?,?)"
            " ON CONFLICT (profile, key) DO UPDATE SET value = excluded.value",
            (key, text),
        )
        owner = "k:" + key
        old = self.tx.blobs.drop_refs([owner])
        held = set(blobs).union(refs)
        self.tx.blobs.add_refs(owner, held)
        self.tx.blobs.gc(old - held)
        self.tx.search.key_written(key, text, blobs, value)

    def put(self, key: str, value: Any, *, checked: bool = False) -> None:
        """Write ``value`` under ``key``; ``checked``: the caller has checked its limits (a
        validated session body), so they are not walked again."""
        if key == SESSIONS_INDEX_KEY:
            self.tx.sessions.put_index(value)
            return
        if is_body_key(key) and isinstance(value, list):
            if not checked:
                check_value(value)  # the limits of the whole value, as for any other key
            rows, blobs = encode_rows(value, key, checked=True)
            self.tx.sessions.body_replace(key, rows, blobs, value=value)
            return
        text, blobs = codec.encode(value, codec.text_blobs_for(key), checked=checked)
        self.write_row(key, text, blobs, value=value)

    def delete(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        self.tx.bump("kv")
        for chunk in self.tx.chunks(keys):
            self.tx.run(
                f"DELETE FROM ck_kv WHERE profile=? AND key IN ({self.tx.marks(len(chunk))})", chunk
            )
        self.tx.blobs.gc(self.tx.blobs.drop_refs(["k:" + k for k in keys]))
        self.tx.search.keys_deleted(keys)
        self.tx.sessions.items_delete(
            [k[len(SESSION_BODY_PREFIX) :] for k in keys if is_body_key(k)]
        )
        if SESSIONS_INDEX_KEY in keys:
            self.tx.sessions.index_drop_rows()
            self.tx.sessions.digest_delete(self.tx.sessions.digest_ids())

    def keys(self, prefix: str = "") -> list[str]:
        rows = self.tx.rows("SELECT key FROM ck_kv WHERE profile=? ORDER BY key")
        return [r[0] for r in rows if r[0].startswith(prefix)]
