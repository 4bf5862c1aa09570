"""Stored form of JSON values: canonical JSON text with image data URLs moved to blobs.

Contract:

* ``encode(value, text_blobs=False)`` returns the JSON text to store and the blobs it
  references. Every string that is an image data URL of at least :data:`BLOB_MIN_CHARS`
  characters — and, with ``text_blobs``, every string of at least :data:`TEXT_BLOB_MIN_CHARS`
  characters (attachment bodies) — is replaced by a marker ``"\\u0000b:<sha256 of it>"``; the
  string itself goes to the blob table once, whoever references it (live history, archive,
  session snapshots, the last request). Strings that happen to start with ``\\u0000`` are
  escaped with one more ``\\u0000``, so every value round-trips.
* ``decode(text, fetch)`` parses the text and puts the URLs back (``fetch`` loads blobs by
  hash). A value that does not parse raises :class:`CorruptValue`.
* Blob bytes are the decoded base64 payload when re-encoding gives back the exact URL,
  otherwise the URL text itself, so ``decode(encode(v)) == v`` always holds byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..constants import GET_ALL_KEYS, SESSIONS_INDEX_KEY
from ..dataurl import head_length
from ..digest import digest_text, hex_of
from ..errors import CorruptValue, InvalidValue

BLOB_MIN_CHARS = 256
TEXT_BLOB_MIN_CHARS = 4096
MARK = "\x00b:"


@dataclass(frozen=True)
class Blob:
    hash: str
    prefix: str | None  # "data:image/png;base64," when data is the decoded payload
    data: bytes

    def url(self) -> str:
        """The stored string (a data URL, or a long text)."""
        if self.prefix is None:
            return self.data.decode("utf-8")
        return self.prefix + base64.b64encode(self.data).decode("ascii")


def blob_for(url: str) -> Blob:
    digest = hex_of(digest_text(url))
    head = head_length(url)
    if head:
        payload = url[head:]
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raw = None
        if raw is not None and base64.b64encode(raw).decode("ascii") == payload:
            return Blob(digest, url[:head], raw)
    return Blob(digest, None, url.encode("utf-8"))


def text_blobs_for(key: str) -> bool:
    """Long texts go to blobs for targeted reads (bodies, originals, the last request), never
    for the keys ``get_all()`` reads or the sessions index, so those stay a single-row read."""
    return key not in GET_ALL_KEYS and key != SESSIONS_INDEX_KEY


def dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidValue(f"value is not JSON-compatible: {exc}") from None


def encode(value: Any, text_blobs: bool = False) -> tuple[str, dict[str, Blob]]:
    blobs: dict[str, Blob] = {}
    text_min = TEXT_BLOB_MIN_CHARS if text_blobs else None

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            if v.startswith("\x00"):
                return "\x00" + v
            if len(v) >= BLOB_MIN_CHARS and (
                head_length(v) or (text_min is not None and len(v) >= text_min)
            ):
                blob = blob_for(v)
                blobs.setdefault(blob.hash, blob)
                return MARK + blob.hash
            return v
        if isinstance(v, dict):
            out = {}
            for k, item in v.items():
                if not isinstance(k, str):
                    raise InvalidValue(f"object keys must be strings, got {k!r}")
                out[k] = walk(item)
            return out
        if isinstance(v, list | tuple):
            return [walk(item) for item in v]
        return v

    return dumps(walk(value)), blobs


def blob_hashes(text: str) -> set[str]:
    """Hashes referenced by a stored text, without decoding the whole value."""
    if MARK_JSON not in text:
        return set()
    return set(_MARK_RE.findall(text))


MARK_JSON = "\\u0000b:"
# May over-match inside escaped strings; decode only resolves real markers, so a superset is fine.
_MARK_RE = re.compile(r'"\\u0000b:([0-9a-f]{64})"')


def decode(text: str, fetch: Callable[[Iterable[str]], dict[str, str]]) -> Any:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise CorruptValue(str(exc)) from None
    if MARK_JSON[:6] not in text:  # no NUL-prefixed string anywhere: nothing to resolve
        return value
    needed = blob_hashes(text)
    urls = fetch(needed) if needed else {}

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            if v.startswith("\x00"):
                if v.startswith(MARK):
                    h = v[len(MARK) :]
                    if h not in urls:
                        raise CorruptValue(f"missing blob {h}")
                    return urls[h]
                return v[1:]
            return v
        if isinstance(v, dict):
            return {k: walk(item) for k, item in v.items()}
        if isinstance(v, list):
            return [walk(item) for item in v]
        return v

    return walk(value)


def decode_many(
    texts: list[str], fetch: Callable[[Iterable[str]], dict[str, str]]
) -> list[Any | CorruptValue]:
    """Decode many stored texts at once (one JSON parse for all, one blob query); a text that
    does not parse yields a :class:`CorruptValue` in its place instead of failing the rest."""
    if not texts:
        return []
    joined = "[" + ",".join(texts) + "]"
    try:
        values = json.loads(joined)
    except (TypeError, ValueError):
        values = None
    if not isinstance(values, list) or len(values) != len(texts):
        out: list[Any | CorruptValue] = []
        for text in texts:
            try:
                out.append(decode(text, fetch))
            except CorruptValue as exc:
                out.append(exc)
        return out
    if MARK_JSON[:6] not in joined:
        return values
    try:
        return list(decode(joined, fetch))
    except CorruptValue:  # a missing blob: resolve row by row to isolate it
        out = []
        for text in texts:
            try:
                out.append(decode(text, fetch))
            except CorruptValue as exc:
                out.append(exc)
        return out


def needs_resolve(text: str) -> bool:
    """Whether a stored text holds NUL-prefixed strings (blob markers or escapes) that
    :func:`decode` must resolve; without them the text is plain JSON."""
    return MARK_JSON[:6] in text
