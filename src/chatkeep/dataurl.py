"""The one parser and encoder of ``data:`` image URLs (SPEC §3.2).

Stored images are ``data:image/<subtype>;base64,<payload>`` for any ``image/*`` subtype. Every
module that needs to recognise, split, decode or build such a URL uses this module, so there
is exactly one definition of what an image data URL is.

- :func:`parse` splits a URL into ``(mime, payload)`` without decoding (cheap, no copies of
  the bytes); parameters between the type and ``;base64`` (``;charset=…``, ``;name=…``) are
  accepted and dropped.
- :func:`decode` returns ``(mime, raw bytes)`` or raises :class:`chatkeep.errors.UndecodableImage`.
- :func:`encode` builds the canonical form from bytes.
"""

from __future__ import annotations

import base64
import binascii
import re

from .errors import InvalidValue, UndecodableImage

__all__ = [
    "data_url_mime",
    "decode_data_url",
    "encode_data_url",
    "decode",
    "encode",
    "head_length",
    "is_image_data_url",
    "mime_of",
    "parse",
]

#: The head of a base64 image data URL: ``data:image/<subtype>[;param…];base64,``.
HEAD_RE = re.compile(r"^data:(image/[A-Za-z0-9.+-]+)(?:;[^,;]*)*?;base64,", re.I)
#: A whole image data URL as the entry validator accepts it (base64 alphabet and whitespace).
IMAGE_URL_RE = re.compile(r"^data:image/[A-Za-z0-9.+-]+(?:;[^,;]*)*?;base64,[A-Za-z0-9+/=\s]*$")


def parse(url: object) -> tuple[str, str] | None:
    """``(mime, base64 payload)`` of an image data URL, mime lower-cased; ``None`` otherwise."""
    if not isinstance(url, str):
        return None
    m = HEAD_RE.match(url)
    if m is None:
        return None
    return m.group(1).lower(), url[m.end() :]


def head_length(url: str) -> int:
    """Length of the ``data:…;base64,`` head, or 0 when ``url`` is not an image data URL."""
    m = HEAD_RE.match(url)
    return m.end() if m else 0


def is_image_data_url(url: object) -> bool:
    """Whether ``url`` is a base64 image data URL that the entry validator accepts."""
    return isinstance(url, str) and IMAGE_URL_RE.match(url) is not None


def mime_of(url: object) -> str:
    """The lower-cased mime type of an image data URL, ``""`` otherwise."""
    parsed = parse(url)
    return parsed[0] if parsed else ""


def decode(url: object) -> tuple[str, bytes]:
    """``(mime, bytes)`` of an image data URL; :class:`UndecodableImage` when it is not one,
    its payload is not base64, or it is empty."""
    parsed = parse(url)
    if parsed is None:
        raise UndecodableImage("not a base64 data:image URL")
    mime, payload = parsed
    try:
        raw = base64.b64decode("".join(payload.split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise UndecodableImage(f"bad base64 payload: {exc}") from None
    if not raw:
        raise UndecodableImage("empty image payload")
    return mime, raw


def encode(raw: bytes, mime: str) -> str:
    """``data:<mime>;base64,<payload>`` of ``raw``."""
    if not isinstance(raw, bytes | bytearray | memoryview) or not isinstance(mime, str):
        raise InvalidValue(
            "encode_data_url takes image bytes and a mime type such as 'image/png'",
            hint="read the file as bytes first",
        )
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


# The names under which the facade exports these (``chatkeep.decode_data_url`` …).
decode_data_url = decode
encode_data_url = encode
data_url_mime = mime_of
