"""Session save and load as copies of stored rows (SPEC §4.4): no pixel decoded or hashed.

A live history row and a session body hold entries in the same stored form
(:mod:`.codec`: canonical JSON, every image data URL and long text replaced by its blob
marker), so a body is the live rows' texts joined into one array, and the live rows are the
body's items written back one by one. :class:`StoredBody` is such a list of entries parsed *as
stored* (markers left in): writing it copies the text and adds references to blobs that are
already stored — nothing is resolved, re-encoded or hashed again. Only the long texts are read
back from their blobs (never an image), for what needs the words: the drawer's search digest,
the automatic name, the live window's text length.

Every function returns ``None`` when a row does not parse or is not an entry (a damaged row):
the caller then takes the decoding path, which skips such rows as it always did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..constants import TEXT_DIGEST_CAP
from ..entries import has_image_parts, is_text_part
from ..errors import CorruptValue
from . import codec
from .drawer_rows import auto_name
from .legacy_index import text_digest
from .search_text import stored_text
from .sql import Tx

__all__ = [
    "StoredBody",
    "archived_since",
    "body_len",
    "body_name",
    "put_body",
    "stored_body",
    "stored_from",
    "stored_live",
    "stored_values",
    "write_body",
    "write_live",
]

_ROLES = ("user", "assistant")


@dataclass
class StoredBody:
    """Entries as stored, their stored text, the blobs they reference and their long texts."""

    values: list[Any]
    text: str
    hashes: set[str]
    texts: dict[str, str] = field(default_factory=dict)
    #: the live rows ``(pos, chars, text)`` it was read from (:func:`stored_live`)
    source: list[tuple[int, int, str]] = field(default_factory=list)

    def resolve(self, s: str) -> str:
        """A NUL-prefixed stored string as the user wrote it (a long text, or an escape)."""
        if s.startswith(codec.MARK):
            return self.texts.get(s[len(codec.MARK) :], "")
        return s[1:]

    def digest(self) -> str:
        """The drawer search digest (``legacy_index.text_digest`` of the decoded entries)."""
        text = "\n".join(stored_text(v, self.resolve) for v in self.values).lower()
        return text.replace("\x00", "")[:TEXT_DIGEST_CAP]

    def name(self) -> str:
        """The automatic session name (``drawer_rows.auto_name`` of the decoded entries)."""
        firsts = []
        for v in self.values:
            content = v.get("content")
            if v.get("role") == "user" and isinstance(content, str):
                resolved = self.resolve(content) if content.startswith("\x00") else content
                firsts.append({**v, "content": resolved})
        return auto_name(firsts)

    def rows(self) -> list[tuple[str, set[str], int, bool]]:
        """Per entry: its stored text, its blobs, its text length and its unseen flag."""
        out = []
        for v in self.values:
            text = codec.dumps(v)
            out.append((text, codec.blob_hashes(text), self._chars(v), _unseen(v)))
        return out

    def _chars(self, v: dict[str, Any]) -> int:
        content = v.get("content")
        if isinstance(content, str):
            return len(self.resolve(content) if content.startswith("\x00") else content)
        if not isinstance(content, list):
            return 0
        return sum(
            len(self.resolve(t) if t.startswith("\x00") else t)
            for p in content
            if is_text_part(p) and isinstance(t := p.get("text"), str)
        )


def _unseen(v: dict[str, Any]) -> bool:
    return has_image_parts(v) and v.get("imagesSeen") is not True


def _parsed(texts: Iterable[str]) -> list[Any] | None:
    values = []
    for text in texts:
        try:
            value = codec.loads_stored(text)
        except CorruptValue:
            return None
        if not isinstance(value, dict) or value.get("role") not in _ROLES or "content" not in value:
            return None
        values.append(value)
    return values


def stored_from(tx: Tx, values: list[Any]) -> StoredBody:
    """A :class:`StoredBody` of entries parsed as stored; its long texts fetched (one query
    per few hundred, text blobs only: image bytes are never read)."""
    text = codec.dumps(values)
    hashes = codec.blob_hashes(text)
    texts: dict[str, str] = {}
    wanted = sorted(hashes)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        for h, data in tx.rows(
            "SELECT hash, data FROM ck_blobs WHERE profile=? AND prefix IS NULL"
            f" AND hash IN ({tx.marks(len(chunk))})",
            chunk,
        ):
            texts[h] = bytes(data).decode("utf-8", "replace")
    return StoredBody(values, text, hashes, texts)


def stored_live(tx: Tx) -> StoredBody | None:
    """The live history as stored (one read of its rows), or ``None`` (a damaged row)."""
    rows = tx.history.live_rows()
    values = _parsed(text for _p, _c, text in rows)
    if values is None:
        return None
    body = stored_from(tx, values)
    body.source = rows
    return body


def stored_values(tx: Tx, key: str) -> list[Any] | None:
    """A stored body's entries parsed as stored, or ``None`` (missing, damaged)."""
    raw = tx.kv.raw([key]).get(key)
    if raw is None:
        return None
    try:
        body = codec.loads_stored(raw)
    except CorruptValue:
        return None
    if not isinstance(body, list):
        return None
    return _parsed(codec.dumps(v) for v in body)


def stored_body(tx: Tx, key: str) -> StoredBody | None:
    """A saved session's body as stored, or ``None`` (missing, damaged)."""
    values = stored_values(tx, key)
    return None if values is None else stored_from(tx, values)


def write_body(tx: Tx, key: str, body: StoredBody) -> None:
    """Store ``body`` under ``key`` as it is: its text, and references to its blobs."""
    tx.kv.put_encoded(key, body.text, {}, refs=body.hashes)


def put_body(tx: Tx, key: str, body: StoredBody | list[Any]) -> str:
    """Store a session body — entries as stored (copied), or decoded entries (encoded) —
    and return its search digest."""
    if isinstance(body, StoredBody):
        write_body(tx, key, body)
        return body.digest()
    tx.kv.put(key, body)
    return text_digest(body)


def body_name(body: StoredBody | list[Any]) -> str:
    """The automatic name of a session body, in either form."""
    return body.name() if isinstance(body, StoredBody) else auto_name(body)


def body_len(body: StoredBody | list[Any]) -> int:
    return len(body.values) if isinstance(body, StoredBody) else len(body)


def write_live(history: Any, tx: Tx, body: StoredBody, current: StoredBody) -> int:
    """Make ``body`` the live history in ``tx`` (``current``: the live history as just read
    in it): the rows that already hold the same text stay, the others are copied in with
    references to their blobs. Bounded by the live window like every history write; returns
    the live length."""
    rows = current.source
    new = body.rows()
    keep = 0
    while keep < len(rows) and keep < len(new) and rows[keep][2] == new[keep][0]:
        keep += 1
    if rows[keep:]:
        tx.history.delete([p for p, _c, _t in rows[keep:]])
    pos = tx.history.next_pos()
    for text, hashes, chars, unseen in new[keep:]:
        tx.history.insert(pos, chars, text, {}, unseen)
        tx.blobs.add_refs(f"h:{pos}", hashes)
        pos += 1
    return int(history._after_write(tx, len(new), sum(c for _t, _h, c, _u in new)))


def archived_since(tx: Tx, start: int, keep: Callable[[Any], bool]) -> list[Any] | None:
    """Archive rows from ``start`` on parsed as stored, those ``keep`` accepts."""
    out = []
    for _seq, text in tx.history.archive_page(start - 1, 2**62):
        try:
            value = codec.loads_stored(text)
        except CorruptValue:
            continue  # it stays in the archive, where `doctor` reports it
        if keep(value):
            out.append(value)
    return out
