"""Thumbnails for parked unseen images (SPEC §5.4).

Contract of :func:`downscale_data_url`:

- the longer edge of the result is at most ``max_edge`` pixels (aspect ratio kept);
- transparency is flattened onto an opaque white background; the result is JPEG, quality 82;
- an image whose longer edge is already ``<= max_edge`` comes back **unchanged** (the very same
  string) when its decoded bytes are at most 64 KiB or it is already a JPEG, so a thumbnail is
  never re-encoded and a second pass over the same history changes nothing;
- an image that cannot be decoded raises :class:`UndecodableImage` (a chatkeep error); the
  caller turns the entry into label placeholders instead.

Pillow is imported inside the function so that ``import chatkeep`` stays free of imaging code.
"""

from __future__ import annotations

import io

from ..dataurl import decode as decode_data_url
from ..dataurl import encode as encode_data_url
from ..errors import UndecodableImage

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


def downscale_data_url(url: str, max_edge: int = THUMBNAIL_MAX_EDGE) -> str:
    """A JPEG thumbnail data URL of ``url`` whose longer edge is ``<= max_edge`` (see module doc)."""
    _mime, raw = decode_data_url(url)
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
    return encode_data_url(out.getvalue(), "image/jpeg")


def _flatten_on_white(img):  # type: ignore[no-untyped-def]
    """An RGB copy of the (first frame of the) image with any transparency over opaque white."""
    from PIL import Image  # lazy: imaging only when writing a thumbnail

    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    if img.mode != "RGB":
        return img.convert("RGB")
    return img.copy()
