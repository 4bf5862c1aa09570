"""The one content hash of chatkeep: ``"sha256:" + hex`` (documented contract).

- :func:`digest_text` hashes a string's UTF-8 bytes (lone surrogates passed through, so any
  Python string has a digest).
- :func:`digest_json` hashes the *canonical JSON* of a value: keys sorted, no whitespace,
  non-ASCII kept, NaN refused — equal values have equal digests whatever their key order.
- :func:`hex_of` strips the ``sha256:`` tag where a bare hex name is needed (blob keys, URLs).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .errors import InvalidValue

__all__ = ["PREFIX", "canonical_json", "digest_bytes", "digest_json", "digest_text", "hex_of"]

PREFIX = "sha256:"


#: The canonical form's encoder, made once (``json.dumps`` with options makes one per call).
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, UTF-8 kept: the bytes every JSON digest is taken of.
    A value that is not JSON raises :class:`~chatkeep.errors.InvalidValue`."""
    try:
        return _CANONICAL.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidValue(f"cannot digest a value that is not JSON: {exc}") from None


def digest_bytes(data: bytes) -> str:
    return PREFIX + hashlib.sha256(data).hexdigest()


def digest_text(text: str) -> str:
    if not isinstance(text, str):
        raise InvalidValue(f"digest_text takes a string, got {type(text).__name__}")
    return digest_bytes(text.encode("utf-8", "surrogatepass"))


def digest_json(value: Any) -> str:
    return digest_text(canonical_json(value))


def hex_of(digest: str) -> str:
    """The bare hex part of a tagged digest (an untagged hex string is returned as it is)."""
    return digest[len(PREFIX) :] if digest.startswith(PREFIX) else digest
