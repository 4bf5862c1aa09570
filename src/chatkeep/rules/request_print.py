"""What the next preview needs of the request sent last (SPEC §6.4). Pure: no I/O.

The prefix figures compare a request with the previous one of the conversation: the longest
common prefix of their serialized bytes (:func:`chatkeep.rules.accounting.request_stats`) and
the blocks a provider cache should serve (:func:`chatkeep.rules.cache_read.predicted_cache_read`).
Keeping the whole previous body for that means storing every image of it again (hashed into
blobs) and reading, decoding and serializing it again on the next turn. A :class:`RequestPrint`
keeps only what the two figures read:

* ``segments`` — the serialized body cut into literal text and *long strings* (at least
  :data:`LONG_CHARS` bytes: images, attachment texts), each long string kept as its length, its
  first :data:`HEAD_CHARS` characters and a BLAKE2b digest. Joined they are the body, so the
  common prefix with a new body is exact — except when a long string differs from the previous
  one only after its first :data:`HEAD_CHARS` characters, where the prefix counts up to them;
* ``blocks`` — per wire block, a digest of its key, its token estimate and whether it carried a
  cache mark (what :func:`~chatkeep.rules.cache_read.predicted_cache_read` compares).

A print is a small JSON value (``to_json`` / :func:`print_from_json`), made from the bytes that
are sent, never from the stored history.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HEAD_CHARS",
    "LONG_CHARS",
    "RequestPrint",
    "block_digest",
    "common_prefix_length",
    "print_from_json",
    "request_print",
    "shared_prefix",
]

LONG_CHARS = 1024
HEAD_CHARS = 200  # under the storage codec's 256-character blob threshold: a head stays text
_VERSION = 2


def _digest(data: bytes | memoryview) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def block_digest(key: str) -> str:
    """The digest a print keeps of one wire block's comparison key."""
    return _digest(key.encode())


def common_prefix_length(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings (C-speed slice compares)."""
    n = min(len(a), len(b))
    step = 1 << 16
    lo = 0
    while lo < n and a[lo : lo + step] == b[lo : lo + step]:
        lo += step
    lo = min(lo, n)
    hi = min(lo + step, n)
    # Invariant: a[:lo] == b[:lo]; the first difference (if any) is before hi.
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class RequestPrint:
    """The figures-only copy of one sent request (see the module docstring)."""

    style: str
    size: int
    segments: list[Any] = field(default_factory=list)
    blocks: list[tuple[str, int, bool]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "print": _VERSION,
            "style": self.style,
            "bytes": self.size,
            "segments": self.segments,
            "blocks": [list(b) for b in self.blocks],
        }


def print_from_json(value: Any) -> RequestPrint | None:
    """The print stored by :meth:`RequestPrint.to_json`, or ``None`` for anything else."""
    if not isinstance(value, dict) or value.get("print") != _VERSION:
        return None
    segments, blocks = value.get("segments"), value.get("blocks")
    if not isinstance(segments, list) or not isinstance(blocks, list):
        return None
    ok = all(
        isinstance(s, str)
        or (isinstance(s, list) and len(s) == 3 and isinstance(s[0], int) and s[0] >= 0)
        for s in segments
    )
    if not ok or not all(isinstance(b, list) and len(b) == 3 for b in blocks):
        return None
    size = value.get("bytes")
    return RequestPrint(
        style=str(value.get("style", "")),
        size=size if isinstance(size, int) else 0,
        segments=segments,
        blocks=[(str(k), int(t), bool(m)) for k, t, m in blocks],
    )


def _long_strings(node: Any, out: list[str]) -> None:
    """The long strings of a body, in the order :func:`json.dumps` writes them."""
    if isinstance(node, str):
        if len(node) >= LONG_CHARS:
            out.append(node)
    elif isinstance(node, dict):
        for key, value in node.items():
            _long_strings(key, out)
            _long_strings(value, out)
    elif isinstance(node, list):
        for value in node:
            _long_strings(value, out)


def request_print(request: Any, raw: bytes, blocks: list[tuple[str, int, bool]]) -> RequestPrint:
    """The print of ``request`` (a :class:`~chatkeep.rules.wire.WireRequest`) whose serialized
    bytes are ``raw`` and whose wire blocks are ``blocks``
    (:func:`~chatkeep.rules.cache_read.request_blocks`)."""
    body = getattr(request, "body", {})
    longs: list[str] = []
    _long_strings(body, longs)
    segments: list[Any] = []
    pos = 0
    for text in longs:
        escaped = json.dumps(text, ensure_ascii=False)[1:-1]
        data = escaped.encode()
        at = raw.find(data, pos)
        if at < 0:
            continue
        if at > pos:
            segments.append(raw[pos:at].decode())
        segments.append([len(data), escaped[:HEAD_CHARS], _digest(data)])
        pos = at + len(data)
    if pos < len(raw):
        segments.append(raw[pos:].decode())
    kept = [(block_digest(k), t, m) for k, t, m in blocks]
    return RequestPrint(str(getattr(request, "style", "")), len(raw), segments, kept)


def shared_prefix(raw: bytes, previous: RequestPrint) -> int:
    """Length of the common byte prefix of ``raw`` and the request ``previous`` was made of."""
    view = memoryview(raw)
    off = 0
    for seg in previous.segments:
        if isinstance(seg, str):
            lit = seg.encode()
            n = common_prefix_length(bytes(view[off : off + len(lit)]), lit)
            off += n
            if n < len(lit):
                return off
            continue
        length, head, digest = seg
        piece = view[off : off + length]
        if len(piece) == length and _digest(piece) == digest:
            off += length
            continue
        start = head.encode()
        return off + common_prefix_length(bytes(piece[: len(start)]), start)
    return off
