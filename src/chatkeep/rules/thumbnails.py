"""Thumbnails for parked unseen images (SPEC §5.4).

Contract of :func:`downscale_data_url`:

- the longer edge of the result is at most ``max_edge`` pixels (aspect ratio kept);
- transparency is flattened onto an opaque white background; the result is JPEG, quality 82;
- an image whose longer edge is already ``<= max_edge`` comes back **unchanged** (the very same
  string) when its decoded bytes are at most 64 KiB or it is already a JPEG, so a thumbnail is
  never re-encoded and a second pass over the same history changes nothing;
- an image that cannot be decoded raises :class:`UndecodableImage` (a ``ValueError``); the
  caller turns the entry into label placeholders instead.

Pillow is imported inside the function so that ``import chatkeep`` stays free of imaging code.
"""

from __future__ import annotations

import base64
import binascii
import io
import re

__all__ = [
    "SMALL_IMAGE_BYTES",
    "THUMBNAIL_MAX_EDGE",
    "THUMBNAIL_QUALITY",
    "UndecodableImage",
    "downscale_data_url",
]

THUMBNAIL_MAX_EDGE = 480
THUMBNAIL_QUALITY = 82
#: An image already within ``max_edge`` and at most this many decoded bytes is left alone.
SMALL_IMAGE_BYTES = 64 * 1024

_DATA_URL_RE = re.compile(r"^data:(image/[A-Za-z0-9.+-]+);base64,(.*)$", re.S)


class UndecodableImage(ValueError):
    """The data URL does not hold an image Pillow can decode."""


def _decode(url: str) -> tuple[str, bytes]:
    m = _DATA_URL_RE.match(url) if isinstance(url, str) else None
    if not m:
        raise UndecodableImage("not a base64 data:image URL")
    try:
        raw = base64.b64decode("".join(m.group(2).split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise UndecodableImage(f"bad base64 payload: {exc}") from None
    if not raw:
        raise UndecodableImage("empty image payload")
    return m.group(1).lower(), raw


def downscale_data_url(url: str, max_edge: int = THUMBNAIL_MAX_EDGE) -> str:
    """A JPEG thumbnail data URL of ``url`` whose longer edge is ``<= max_edge`` (see module doc)."""
    _mime, raw = _decode(url)
    # Imaging is heavy and only needed here: imported lazily.
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as img:
            fmt = (img.format or "").upper()
            width, height = img.size
            if max(width, height) <= max_edge and (len(raw) <= SMALL_IMAGE_BYTES or fmt == "JPEG"):
                img.load()  # make sure it really decodes before declaring it fine
                return url
            if fmt == "JPEG":
                # Let the JPEG decoder skip most of the work for big photos.
                img.draft("RGB", (max_edge, max_edge))
            img.load()
            frame = _flatten_on_white(img)
    except (
        UnidentifiedImageError,
        OSError,
        ValueError,
        SyntaxError,
        Image.DecompressionBombError,
    ) as exc:
        raise UndecodableImage(f"cannot decode image: {exc}") from None

    if max(frame.size) > max_edge:
        scale = max_edge / max(frame.size)
        size = (max(1, round(frame.width * scale)), max(1, round(frame.height * scale)))
        size = (min(size[0], max_edge), min(size[1], max_edge))
        frame = frame.resize(size, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    frame.save(out, format="JPEG", quality=THUMBNAIL_QUALITY, optimize=True)
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def _flatten_on_white(img):  # type: ignore[no-untyped-def]
    """An RGB copy of the (first frame of the) image with any transparency over opaque white."""
    from PIL import Image

    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    if img.mode != "RGB":
        return img.convert("RGB")
    return img.copy()
