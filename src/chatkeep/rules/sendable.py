"""Image types in requests (SPEC §3.2, §5.3): any ``image/*`` is stored, four types are sent.

The store keeps every pasted or imported image byte for byte, whatever its type (BMP, TIFF,
AVIF, HEIC, SVG, icons, …). Model APIs accept PNG, JPEG, WebP and GIF
(:data:`SENT_IMAGE_TYPES`), so the request pipeline converts the others here, inside the
request only:

- :func:`to_sendable_url` — a data URL of a sent type comes back as the same string; any other
  type is decoded with Pillow and re-encoded as PNG (deterministic for equal input, so the
  request prefix stays byte-identical between turns); bytes Pillow cannot decode raise
  :class:`~chatkeep.errors.UndecodableImage`.
- :func:`sendable_history` — the pipeline step (``history -> history``): in each entry, an image
  of another type becomes PNG, and one that cannot be decoded becomes its label placeholder
  (``[<figure label k>]`` or ``[image k]``, §5.3). Entries without such images are the same
  objects, and the input list itself comes back when nothing changed.

Pure: no I/O, inputs never mutated. Pillow is imported lazily, and only when an entry holds an
image of another type.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any

from ..dataurl import decode as decode_data_url
from ..dataurl import encode as encode_data_url
from ..dataurl import mime_of
from ..entries import Entry, has_image_parts, image_part_url, is_image_part
from ..errors import UndecodableImage
from .labels import map_image_parts

__all__ = ["SENT_IMAGE_TYPES", "sendable_history", "to_sendable_url"]

#: Image types every supported API accepts as they are.
SENT_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


def to_sendable_url(url: str) -> str:
    """``url`` itself for PNG/JPEG/WebP/GIF; otherwise a PNG data URL of the decoded image."""
    if mime_of(url) in SENT_IMAGE_TYPES:
        return url
    return _to_png(url)


@lru_cache(maxsize=16)
def _to_png(url: str) -> str:
    # the same stored image is converted once per process, not once per turn
    _mime, raw = decode_data_url(url)
    from PIL import Image, UnidentifiedImageError  # lazy: only other image types need Pillow

    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.load()
            frame: Image.Image = img
            if frame.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
                has_alpha = "A" in frame.getbands() or "transparency" in frame.info
                frame = frame.convert("RGBA" if has_alpha else "RGB")
            buf = io.BytesIO()
            frame.save(buf, format="PNG", optimize=False)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise UndecodableImage(f"cannot decode {mime_of(url) or 'the image'}: {exc}") from None
    except Image.DecompressionBombError as exc:
        raise UndecodableImage(f"image too large to convert: {exc}") from None
    return encode_data_url(buf.getvalue(), "image/png")


def _needs_work(entry: Any) -> bool:
    return has_image_parts(entry) and any(
        is_image_part(p) and mime_of(image_part_url(p)) not in SENT_IMAGE_TYPES
        for p in entry["content"]
    )


def _sendable(_k: int, url: str) -> str | None:
    if mime_of(url) in SENT_IMAGE_TYPES:
        return url
    try:
        return to_sendable_url(url)
    except UndecodableImage:
        return None


def sendable_history(history: list[Entry]) -> list[Entry]:
    """Images of other types as PNG, undecodable ones as labels; the input when unchanged."""
    out: list[Entry] | None = None
    for i, entry in enumerate(history):
        if not _needs_work(entry):
            if out is not None:
                out.append(entry)
            continue
        if out is None:
            out = list(history[:i])
        out.append(map_image_parts(entry, _sendable))
    return history if out is None else out
