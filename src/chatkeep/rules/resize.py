"""Images resized to what the provider uses, inside the request only (SPEC §5.5, §6.4).

The store keeps every pasted image whole; a request carries each image at the size the
provider works with, so a 9 MB phone photo does not travel as 12 MB of base64 only to be
shrunk on arrival.

:func:`fit_size` ``(width, height, style) -> (width, height)``:

- ``anthropic``: the long edge at most 1,568 px and the area at most 784 × 1,568 px (Anthropic
  scales anything larger down before the model sees it; the same rule as the token estimate,
  :func:`chatkeep.rules.tokens.anthropic_image_tokens`);
- ``chat`` / ``responses`` (every other style): fit within 2,048 × 2,048, then the short side at
  most 768 px (OpenAI high detail).

Aspect ratio is kept; sizes are rounded down, never below 1 px.

:func:`resize_for_request` ``(url, style) -> str``:

- an image already within :func:`fit_size` comes back **unchanged** (the same string, never
  decoded), and so does a data URL whose header cannot be read (the steps before decide what to
  do with undecodable images);
- a larger image is decoded (a JPEG at a reduced scale first, ``draft``), its EXIF orientation
  applied, its first frame resized with Lanczos, and re-encoded:

  * with transparency: PNG (a WebP stays WebP, quality 85, which keeps alpha);
  * without: a JPEG stays JPEG and a WebP stays WebP (quality 85); anything else (PNG, GIF, a
    type converted to PNG) becomes the smaller of PNG and JPEG quality 85 — a screenshot
    usually stays a sharp PNG, a photo saved as PNG becomes a JPEG;

  the result replaces the original only when it is smaller;
- deterministic: the same stored image gives the same bytes every time, so a request prefix
  that carries it stays byte-identical from turn to turn;
- remembered: the last :data:`MEMO_SIZE` results are kept per process, keyed by the SHA-256 of
  the stored bytes and the style (a preview builds the same request up to three times, the panel
  on every draft; ``bench/image_resize.py`` shows what it saves) — the results themselves are
  small, so the memo holds a few MB at most;
- memory is bounded: an image over :data:`~chatkeep.constants.DEFAULT_MAX_IMAGE_PIXELS` is
  only decoded when it is a JPEG (at a reduced scale); anything else that large raises
  :class:`~chatkeep.errors.UndecodableImage` and goes to the model as its label.

Pure: no I/O. Pillow is imported lazily, only when an image needs resizing.
"""

from __future__ import annotations

import hashlib
import io
import math
import threading
from collections import OrderedDict
from typing import Any

from ..constants import DEFAULT_MAX_IMAGE_PIXELS
from ..dataurl import decode as decode_data_url
from ..dataurl import encode as encode_data_url
from ..errors import UndecodableImage

__all__ = [
    "ANTHROPIC_LONG_EDGE",
    "ANTHROPIC_MAX_PIXELS",
    "OPENAI_BOX",
    "OPENAI_SHORT_SIDE",
    "MEMO_SIZE",
    "RESIZE_QUALITY",
    "fit_size",
    "resize_for_request",
]

ANTHROPIC_LONG_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 784 * 1568
OPENAI_BOX = 2048
OPENAI_SHORT_SIDE = 768
RESIZE_QUALITY = 85
MEMO_SIZE = 16

_memo: OrderedDict[tuple[str, str], str] = OrderedDict()
_memo_lock = threading.Lock()

#: EXIF orientation → the Pillow transpose that shows the image upright.
_ORIENTATION = {2: 0, 3: 3, 4: 1, 5: 5, 6: 4, 7: 6, 8: 2}


def fit_size(width: int, height: int, style: str) -> tuple[int, int]:
    """The size the provider of API ``style`` uses for a ``width`` × ``height`` image."""
    w, h = float(width), float(height)
    if style == "anthropic":
        scale = min(1.0, ANTHROPIC_LONG_EDGE / max(w, h), math.sqrt(ANTHROPIC_MAX_PIXELS / (w * h)))
    else:
        # fit the 2,048 box, then bring the short side down to 768
        scale = min(1.0, OPENAI_BOX / max(w, h), OPENAI_SHORT_SIDE / min(w, h))
    if scale >= 1.0:
        return width, height
    # the epsilon keeps 2450 × (768 / 2450) at 768, not 767
    return max(1, math.floor(w * scale + 1e-6)), max(1, math.floor(h * scale + 1e-6))


def _header(raw: bytes) -> tuple[str, tuple[int, int]] | None:
    from PIL import Image, UnidentifiedImageError  # lazy: only images need Pillow

    try:
        with Image.open(io.BytesIO(raw)) as img:  # parses the header only
            return (img.format or "").upper(), img.size
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError):
        return None
    except Image.DecompressionBombError:
        return None


def resize_for_request(url: str, style: str) -> str:
    """``url`` resized to :func:`fit_size` for ``style`` (see the module docstring)."""
    try:
        mime, raw = decode_data_url(url)
    except UndecodableImage:
        return url
    head = _header(raw)
    if head is None:
        return url
    fmt, (width, height) = head
    target = fit_size(width, height, style)
    if target == (width, height):
        return url
    if width * height > DEFAULT_MAX_IMAGE_PIXELS and fmt != "JPEG":
        raise UndecodableImage(f"the {width}×{height} image is too large to resize for the request")
    key = (hashlib.sha256(raw).hexdigest(), style)
    with _memo_lock:
        resized = _memo.get(key)
        if resized is not None:
            _memo.move_to_end(key)
    if resized is None:
        data, out_mime = _resized(raw, fmt, target, mime)
        resized = encode_data_url(data, out_mime)
        with _memo_lock:
            _memo[key] = resized
            while len(_memo) > MEMO_SIZE:
                _memo.popitem(last=False)
    return resized if len(resized) < len(url) else url


def _resized(raw: bytes, fmt: str, target: tuple[int, int], mime: str) -> tuple[bytes, str]:
    from PIL import Image, UnidentifiedImageError  # lazy: only images need Pillow

    try:
        with Image.open(io.BytesIO(raw)) as img:
            if fmt == "JPEG":
                img.draft("RGB", target)  # let the decoder skip most of a big photo
            orientation = img.getexif().get(0x0112)
            img.seek(0)
            img.load()
            frame = _normalised(img)
            if frame.size != target:
                frame = frame.resize(target, Image.Resampling.LANCZOS, reducing_gap=3.0)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise UndecodableImage(f"cannot decode {mime or 'the image'}: {exc}") from None
    except Image.DecompressionBombError as exc:
        raise UndecodableImage(f"image too large to resize: {exc}") from None
    method = _ORIENTATION.get(orientation) if isinstance(orientation, int) else None
    if method is not None:
        frame = frame.transpose(Image.Transpose(method))
    return _encode(frame, fmt)


def _normalised(img: Any) -> Any:
    """The first frame in a mode every encoder takes: RGBA/LA with alpha, else RGB or L."""
    has_alpha = img.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (
        img.mode == "P" and "transparency" in img.info
    )
    if has_alpha:
        return img.convert("LA" if img.mode in ("LA", "La") else "RGBA")
    if img.mode in ("L", "RGB"):
        return img
    if img.mode == "1":
        return img.convert("L")
    return img.convert("RGB")


def _save(frame: Any, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG":
        frame.save(buf, format="JPEG", quality=RESIZE_QUALITY, optimize=True)
    elif fmt == "WEBP":
        frame.save(buf, format="WEBP", quality=RESIZE_QUALITY, method=4)
    else:
        frame.save(buf, format="PNG")
    return buf.getvalue()


def _encode(frame: Any, fmt: str) -> tuple[bytes, str]:
    if fmt == "WEBP":
        return _save(frame, "WEBP"), "image/webp"
    if frame.mode in ("RGBA", "LA"):
        return _save(frame, "PNG"), "image/png"
    if fmt == "JPEG":
        return _save(frame, "JPEG"), "image/jpeg"
    png, jpeg = _save(frame, "PNG"), _save(frame, "JPEG")
    return (jpeg, "image/jpeg") if len(jpeg) < len(png) else (png, "image/png")
