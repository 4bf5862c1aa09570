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
  hash) without recursion, so a value of any depth — even one an older version accepted
  past today's limits — reads back. A value that does not parse raises :class:`CorruptValue`.
  A blob whose row is gone reads as a visible placeholder: its image part becomes the text
  part ``[image missing: sha256:<hash>]`` (any other string ``[missing: sha256:<hash>]``),
  so one lost image never makes its entry, or the session holding it, unreadable.
* ``encode`` checks the limits of :mod:`chatkeep.limits` first: nothing past them is stored.
* Blob bytes are the decoded base64 payload when re-encoding gives back the exact URL,
  otherwise the URL text itself, so ``decode(encode(v)) == v`` always holds byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable
from itertools import repeat
from json import loads
from operator import contains
from typing import Any

from ..constants import GET_ALL_KEYS, SESSIONS_INDEX_KEY
from ..dataurl import head_length
from ..digest import digest_text, hex_of
from ..errors import CorruptValue, InvalidValue
from ..limits import check_value

BLOB_MIN_CHARS = 256
TEXT_BLOB_MIN_CHARS = 4096
MARK = "\x00b:"
#: Where a JSON text may hold a string that starts as a data URL (a superset: keys included).
_DATA_URL_START = re.compile(r'"data:', re.IGNORECASE)


class Blob:
    """One stored string by its hash: ``prefix`` is ``"data:image/png;base64,"`` (say) when
    ``data`` is the decoded payload, None when ``data`` is the string's UTF-8 text. Never
    changed once made."""

    __slots__ = ("hash", "prefix", "data")

    def __init__(self, hash: str, prefix: str | None, data: bytes) -> None:
        self.hash = hash
        self.prefix = prefix
        self.data = data

    def _fields(self) -> tuple[str, str | None, bytes]:
        return (self.hash, self.prefix, self.data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Blob) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "Blob(hash={!r}, prefix={!r}, data={!r})".format(*self._fields())

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
        if raw is not None and _canonical(raw, payload):
            return Blob(digest, url[:head], raw)
    return Blob(digest, None, url.encode("utf-8"))


def _canonical(raw: bytes, payload: str) -> bool:
    """Whether ``payload`` is exactly what base64 encoding ``raw`` gives (so the URL comes
    back byte for byte). It decoded with ``validate=True``: only the alphabet and end padding,
    so what can still differ is its length and the unused bits of the last quantum — only
    that quantum is encoded again, not the whole image."""
    if len(payload) != 4 * ((len(raw) + 2) // 3):
        return False
    if not raw:
        return True
    tail = raw[-(len(raw) % 3 or 3) :]
    return base64.b64encode(tail).decode("ascii") == payload[-4:]


def text_blobs_for(key: str) -> bool:
    """Long texts go to blobs for targeted reads (bodies, originals, the last request), never
    for the keys ``get_all()`` reads or the sessions index, so those stay a single-row read."""
    return key not in GET_ALL_KEYS and key != SESSIONS_INDEX_KEY


#: The stored JSON form (made once: ``json.dumps`` with options builds an encoder per call).
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


#: The same form for a value whose limits were checked (:func:`encode`): a value that nests at
#: most ``MAX_DEPTH`` levels holds no cycle, so the encoder does not track the containers it is
#: in (a quarter of the time of encoding an entry).
_CHECKED_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False
)


def dumps(value: Any, *, checked: bool = False) -> str:
    """The stored JSON form of ``value`` (``checked``: its limits were checked)."""
    try:
        return (_CHECKED_ENCODER if checked else _ENCODER).encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidValue(f"value is not JSON-compatible: {exc}") from None


def encode(
    value: Any, text_blobs: bool = False, *, checked: bool = False
) -> tuple[str, dict[str, Blob]]:
    """The stored text of ``value`` and its blobs. The limits of §12 are checked first
    (``checked=True``: the caller has just checked them), so the walk below is bounded."""
    if not checked:
        check_value(value)
    blobs: dict[str, Blob] = {}
    text_min = TEXT_BLOB_MIN_CHARS if text_blobs else None
    if isinstance(value, dict | list):
        # most values have nothing to move to a blob: no image data URL, no string starting
        # with NUL and (for long texts) too short to hold one; their JSON is then the stored text
        text = dumps(value, checked=True)
        if (
            (text_min is None or len(text) < text_min)
            and "\\u0000" not in text
            and _DATA_URL_START.search(text) is None
        ):
            return text, blobs

    def leaf(v: Any) -> Any:
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

    def fresh(v: Any) -> Any:
        return {} if isinstance(v, dict) else [] if isinstance(v, list | tuple) else None

    # an iterative copy (no recursion): containers are created, then filled from a stack
    root = fresh(value)
    if root is None:
        return dumps(leaf(value)), blobs
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        src, dst = stack.pop()
        if isinstance(src, dict):
            for k, item in src.items():
                if not isinstance(k, str):
                    raise InvalidValue(f"object keys must be strings, got {k!r}")
                child = fresh(item)
                dst[k] = leaf(item) if child is None else child
                if child is not None:
                    stack.append((item, child))
        else:
            for item in src:
                child = fresh(item)
                dst.append(leaf(item) if child is None else child)
                if child is not None:
                    stack.append((item, child))
    return dumps(root, checked=True), blobs


def blob_hashes(text: str) -> set[str]:
    """Hashes referenced by a stored text, without decoding the whole value."""
    if MARK_JSON not in text:
        return set()
    return set(MARK_RE.findall(text))


MARK_JSON = "\\u0000b:"
#: A blob marker in a stored text (group 1: the hash). It may over-match inside escaped
#: strings; decode only resolves real markers, so a superset is fine.
MARK_RE = re.compile(r'"\\u0000b:([0-9a-f]{64})"')


def loads_stored(text: str) -> Any:
    """A stored text parsed as it is stored: blob strings (``"\\u0000b:<hash>"``) and escaped
    NUL-prefixed strings are left as they are, so :func:`dumps` gives the same stored form
    back. Raises :class:`CorruptValue` on text that does not parse."""
    return _loads(text)


def _loads(text: str) -> Any:
    try:
        return loads(text)
    except RecursionError:
        raise CorruptValue("the stored value nests too deep to parse") from None
    except (TypeError, ValueError) as exc:
        raise CorruptValue(str(exc)) from None


def missing_text(h: str, image: bool) -> str:
    """The visible placeholder of a blob whose row is gone: ``[image missing: sha256:<h>]``
    for an image part, ``[missing: sha256:<h>]`` anywhere else."""
    return f"[{'image missing' if image else 'missing'}: sha256:{h}]"


def _resolve(value: Any, urls: dict[str, str], missing: set[str] | None = None) -> Any:
    """Put blob strings back and unescape NUL-prefixed strings, in place and without
    recursion (``value`` was just parsed, so nobody else holds it): any depth decodes.

    A blob that is not in ``urls`` (its row is gone) does not make the value unreadable: its
    image part becomes a text part ``[image missing: sha256:<h>]``, any other string
    ``[missing: sha256:<h>]``, so the rest of the entry (and its session) still reads. Its
    hash is added to ``missing`` when given."""
    gone: set[str] = set()

    def fix(v: str) -> str:
        if v.startswith(MARK):
            h = v[len(MARK) :]
            if h not in urls:
                gone.add(h)
                return _Gone(h)
            return urls[h]
        return v[1:]

    if isinstance(value, str):
        value = fix(value) if value.startswith("\x00") else value
    else:
        stack = [value]
        while stack:
            node = stack.pop()
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for k, item in items:
                if isinstance(item, str):
                    if item.startswith("\x00"):
                        node[k] = fix(item)
                elif isinstance(item, dict | list):
                    stack.append(item)
    if not gone:
        return value
    if missing is not None:
        missing.update(gone)
    return _placeholders(value)


class _Gone(str):
    """What :func:`_resolve` puts in place of a missing blob (its hash) until
    :func:`_placeholders` replaces it: a type of its own, so no stored string is taken for it."""

    __slots__ = ()


def _gone_hash(v: Any) -> str | None:
    return str(v) if isinstance(v, _Gone) else None


def _placeholders(value: Any) -> Any:
    """Replace each missing-blob string left by :func:`_resolve`: an image part holding one
    becomes a text part, other strings a text placeholder (in place, without recursion)."""
    h = _gone_hash(value)
    if h is not None:
        return missing_text(h, False)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict) and node.get("type") == "image_url":
            ref = node.get("image_url")
            h = _gone_hash(ref.get("url") if isinstance(ref, dict) else ref)
            if h is not None:
                node.clear()
                node.update({"type": "text", "text": missing_text(h, True)})
                continue
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, item in items:
            h = _gone_hash(item)
            if h is not None:
                node[k] = missing_text(h, False)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value


def decode(
    text: str,
    fetch: Callable[[Iterable[str]], dict[str, str]],
    missing: set[str] | None = None,
) -> Any:
    """The value of a stored text; a missing blob reads as a placeholder (see
    :func:`_resolve`) and its hash is added to ``missing`` when given."""
    value = _loads(text)
    if MARK_JSON[:6] not in text:  # no NUL-prefixed string anywhere: nothing to resolve
        return value
    needed = blob_hashes(text)
    urls = fetch(needed) if needed else {}
    return _resolve(value, urls, missing)


def decode_many(
    texts: list[str], fetch: Callable[[Iterable[str]], dict[str, str]]
) -> list[Any | CorruptValue]:
    """Decode many stored texts at once (one JSON parse for all, one blob query); a text that
    does not parse yields a :class:`CorruptValue` in its place instead of failing the rest."""
    if not texts:
        return []
    joined = "[" + ",".join(texts) + "]"
    try:
        values = loads(joined)
    except (TypeError, ValueError, RecursionError):
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
    return list(decode(joined, fetch))


def needs_resolve(text: str) -> bool:
    """Whether a stored text holds NUL-prefixed strings (blob markers or escapes) that
    :func:`decode` must resolve; without them the text is plain JSON."""
    return MARK_JSON[:6] in text


def any_needs_resolve(texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` :func:`needs_resolve` (one pass in C: no Python call per text)."""
    return any(map(contains, texts, repeat(MARK_JSON[:6])))
