"""Image files and pasted images → a screenshot-style :class:`Extracted`.

- The pixel count is read from the header first: an image over ``max_pixels`` (default
  50 megapixels, setting ``maxImagePixels``) raises :class:`~chatkeep.errors.AttachError`
  before anything is decoded, so no image costs more memory than that bound.
- The bytes are then validated by decoding them fully with Pillow; bytes that do not decode
  raise :class:`~chatkeep.errors.AttachError`, whatever the file extension says.
- Every format keeps its original bytes (SPEC §3.2: PNG, JPEG, WebP and GIF as they are sent;
  BMP, TIFF, ICO, AVIF, … under their own ``image/*`` type, converted to PNG only inside
  requests by :mod:`chatkeep.rules.sendable`); a format without a known ``image/*`` type is
  re-encoded losslessly as PNG.
- The result is ``Extracted(kind="image", text="Screenshot: <name> (<w>×<h>)",
  images=(data_url,))``.

Pillow is imported lazily inside the functions so ``import chatkeep`` stays fast.
"""

from __future__ import annotations

import io

from ..constants import DEFAULT_MAX_IMAGE_PIXELS, MAX_IMAGE_PIXELS_KEY
from ..errors import AttachError
from .sources import Extracted, data_url

__all__ = ["KEPT_FORMATS", "extract_image_bytes", "image_to_data_url", "pil_to_data_url"]

#: Pillow format name → MIME subtype of formats stored byte for byte.
KEPT_FORMATS = {"PNG": "png", "JPEG": "jpeg", "MPO": "jpeg", "WEBP": "webp", "GIF": "gif"}


def too_many_pixels(name: str, size: tuple[int, int], max_pixels: int) -> AttachError:
    w, h = size
    return AttachError(
        f"{name} is {w}×{h} = {w * h / 1e6:.1f} megapixels, over the "
        f"{max_pixels / 1e6:g}-megapixel limit",
        hint=(
            "scale the image down (e.g. to 8000×6000) and attach that copy; the limit is not a "
            "`chatkeep config` setting: raise it from Python with "
            f"chatkeep.open(STORE).local.set('{MAX_IMAGE_PIXELS_KEY}', N)"
        ),
    )


def _open_checked(data: bytes, name: str, max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS):
    """Open and fully decode ``data`` with Pillow; AttachError when it is not an image or
    when its header declares more than ``max_pixels`` pixels (checked before decoding)."""
    # Pillow is imported lazily: importing chatkeep must not load imaging libraries.
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as probe:
            w, h = probe.size
            if w * h > max_pixels:
                raise too_many_pixels(name, (w, h), max_pixels)
            probe.verify()
        img = Image.open(io.BytesIO(data))
        img.load()
    except Image.DecompressionBombError as exc:  # Pillow refused the header's size itself
        raise AttachError(
            f"{name} declares more pixels than the {max_pixels / 1e6:g}-megapixel limit ({exc})",
            hint=too_many_pixels(name, (0, 0), max_pixels).hint,
        ) from None
    except UnidentifiedImageError as exc:
        raise AttachError(
            f"{name} is not a readable image ({exc.__class__.__name__})",
            hint="attach a PNG, JPEG, WebP or GIF file",
        ) from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise AttachError(
            f"{name} is a damaged or truncated image: {exc}",
            hint="re-export or re-capture the image and attach it again",
        ) from None
    return img


def pil_to_data_url(img) -> str:
    """Re-encode a Pillow image losslessly as a PNG data URL (modes PNG cannot hold converted)."""
    if img.mode == "F":
        img = img.convert("L")
    elif img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        has_alpha = "A" in img.getbands() or "transparency" in img.info
        img = img.convert("RGBA" if has_alpha else "RGB")
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return data_url(buf.getvalue(), "image/png")


def image_to_data_url(
    data: bytes, name: str = "image", max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
) -> tuple[str, str, tuple[int, int]]:
    """Validate ``data`` and return ``(data_url, fmt, (width, height))``.

    ``fmt`` is the stored subtype (``png``, ``jpeg``, ``bmp``, ``tiff``, …): the bytes are kept
    as they are under their own type; ``png`` when the format has no known ``image/*`` type
    (then they are re-encoded losslessly).
    """
    # Pillow is imported lazily: importing chatkeep must not load imaging libraries.
    from PIL import Image

    img = _open_checked(data, name, max_pixels)
    try:
        size = img.size
        kept = KEPT_FORMATS.get(img.format or "")
        if kept:
            return data_url(data, f"image/{kept}"), kept, size
        mime = Image.MIME.get(img.format or "", "")
        if mime.startswith("image/"):
            return data_url(data, mime), mime.split("/", 1)[1], size
        return pil_to_data_url(img), "png", size
    finally:
        img.close()


def extract_image_bytes(
    data: bytes,
    *,
    name: str = "pasted image",
    url: str = "",
    max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS,
) -> Extracted:
    """A screenshot-style result for one image (a file's bytes or a pasted image)."""
    if not data:
        raise AttachError(f"{name} is empty", hint="attach a non-empty image file")
    url_, fmt, (w, h) = image_to_data_url(data, name, max_pixels)
    return Extracted(
        kind="image",
        title=name,
        url=url,
        text=f"Screenshot: {name} ({w}×{h})",
        images=(url_,),
        fmt=fmt,
        video_src=None,
    )
