"""Token estimates by the providers' published rules (SPEC §6.4). Pure: no I/O.

- Text: ``ceil(chars / 4)`` (:func:`text_tokens`; 0 for empty text).
- Images, by pixel size read from the image header (:func:`image_size`; PNG, JPEG, GIF, WebP
  and anything else Pillow can open lazily — only the header is parsed, never the pixels):

  * **OpenAI** (``chat``/``responses``, high detail): fit in 2048×2048, then scale down so the
    short side is at most 768 px; ``85 + 170 × tiles`` with 512-px tiles
    (:func:`openai_image_tokens`). A 1024×1024 image is 765 tokens, a 320×200 one 255.
  * **Anthropic**: scale down so the long edge is at most 1568 px and the area at most
    784 × 1568 px (about 1,640 tokens, the largest size Anthropic sends unresized); ``ceil(w × h / 750)`` (:func:`anthropic_image_tokens`). A 1000×1000 image
    is 1,334 tokens, a 320×200 one 86.

- An image whose size cannot be read (not a data URL, damaged header) is counted as 1024×1024
  (:data:`UNKNOWN_SIZE`): such images go to the model as their label anyway.

:func:`image_tokens(url, style)` dispatches on the API style (``anthropic`` → Anthropic's rule,
every other style → OpenAI's). Results are cached per URL, so estimating the same history on
every turn parses each header once.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from functools import lru_cache

from ..dataurl import parse as parse_data_url

__all__ = [
    "UNKNOWN_SIZE",
    "anthropic_image_tokens",
    "image_size",
    "image_tokens",
    "openai_image_tokens",
    "text_tokens",
]

#: What an image whose header cannot be read is counted as.
UNKNOWN_SIZE = (1024, 1024)
_HEADER_CHARS = 64 * 1024  # base64 characters decoded first: enough for every common header
_ANTHROPIC_LONG_EDGE = 1568
_ANTHROPIC_MAX_PIXELS = 784 * 1568  # the largest size Anthropic lists as sent unresized


def text_tokens(text: str | int) -> int:
    """Tokens of a text (or of a character count): ``ceil(chars / 4)``."""
    n = text if isinstance(text, int) else len(text)
    return -(-n // 4) if n > 0 else 0


def _size_of(data: bytes) -> tuple[int, int] | None:
    # lazy: Pillow is only needed when a request carries images
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:  # parses the header only
            w, h = img.size
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError):
        return None
    return (w, h) if w > 0 and h > 0 else None


@lru_cache(maxsize=1024)
def image_size(url: str) -> tuple[int, int] | None:
    """``(width, height)`` of a data-URL image from its header, or ``None`` when unreadable."""
    parsed = parse_data_url(url) if isinstance(url, str) else None
    if not parsed:
        return None
    data = parsed[1]
    head = data[: _HEADER_CHARS - _HEADER_CHARS % 4]
    for chunk in (head, data) if len(head) < len(data) else (data,):
        try:
            raw = base64.b64decode(chunk, validate=False)
        except (binascii.Error, ValueError):
            return None
        size = _size_of(raw)
        if size is not None:
            return size
    return None


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI high-detail image tokens for a ``width`` × ``height`` image."""
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(round(w, 6) / 512) * math.ceil(round(h, 6) / 512)
    return 85 + 170 * max(1, tiles)


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic image tokens for a ``width`` × ``height`` image."""
    w, h = float(width), float(height)
    scale = min(1.0, _ANTHROPIC_LONG_EDGE / max(w, h), math.sqrt(_ANTHROPIC_MAX_PIXELS / (w * h)))
    w, h = math.floor(w * scale) or 1, math.floor(h * scale) or 1
    return math.ceil(w * h / 750)


def image_tokens(url: str, style: str = "chat") -> int:
    """Estimated tokens of one image (a data URL) under the rules of the API ``style``."""
    size = image_size(url) or UNKNOWN_SIZE
    if style == "anthropic":
        return anthropic_image_tokens(*size)
    return openai_image_tokens(*size)
