"""Resource caps of the attach operations (SPEC §12): the limits in force for one store.

The built-in defaults (50 MB sources, 50-megapixel images, 2,000 PDF pages) can be raised per
profile with the settings ``maxSourceBytes``, ``maxImagePixels`` and ``maxPdfPages``; every
refusal names the limit and the setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..constants import (
    DEFAULT_MAX_IMAGE_PIXELS,
    DEFAULT_MAX_PDF_PAGES,
    DEFAULT_MAX_SOURCE_BYTES,
    MAX_IMAGE_PIXELS_KEY,
    MAX_PDF_PAGES_KEY,
    MAX_SOURCE_BYTES_KEY,
)
from ..dataurl import decode as decode_data_url
from ..errors import AttachError, UndecodableImage
from ..limits import is_unicode
from .files import _read_limited

if TYPE_CHECKING:
    from ..storage.profile import Profile

PASTED_IMAGE_NAME = "pasted image"

__all__ = ["image_source", "require_text", "resource_limits"]


def require_text(value: Any, what: str) -> None:
    if not isinstance(value, str) or not is_unicode(value):
        raise AttachError(f"{what} must be text", hint="pass the address as a string")


def resource_limits(store: Profile) -> dict[str, int]:
    """The attachment limits of §12 for this store: a positive integer setting wins over the
    built-in default (``maxSourceBytes`` 50 MB, ``maxImagePixels`` 50 MP, ``maxPdfPages``)."""
    keys = {
        "max_bytes": (MAX_SOURCE_BYTES_KEY, DEFAULT_MAX_SOURCE_BYTES),
        "max_pixels": (MAX_IMAGE_PIXELS_KEY, DEFAULT_MAX_IMAGE_PIXELS),
        "max_pages": (MAX_PDF_PAGES_KEY, DEFAULT_MAX_PDF_PAGES),
    }
    stored = store.local.get([k for k, _d in keys.values()])
    out = {}
    for name, (key, default) in keys.items():
        v = stored.get(key)
        ok = isinstance(v, int) and not isinstance(v, bool) and v > 0
        out[name] = v if ok else default
    return out


def image_source(
    data_or_path: bytes | bytearray | memoryview | str | Path, name: str | None, max_bytes: int
) -> tuple[bytes, str, str]:
    """``(bytes, name, url)`` of a pasted image (bytes or data URL) or an image file."""
    if isinstance(data_or_path, bytes | bytearray | memoryview):
        data = bytes(data_or_path)
        label = name or PASTED_IMAGE_NAME
        url = ""
    elif isinstance(data_or_path, str) and data_or_path[:5].lower() == "data:":
        try:
            data = decode_data_url(data_or_path)[1]
        except UndecodableImage:
            raise AttachError(
                f"{name or PASTED_IMAGE_NAME} is not valid base64",
                hint="paste the image again or save it and attach the file",
            ) from None
        label = name or PASTED_IMAGE_NAME
        url = ""
    else:
        require_text(
            str(data_or_path) if isinstance(data_or_path, Path) else data_or_path, "the image path"
        )

        path = Path(data_or_path).expanduser()
        data = _read_limited(path, max_bytes)
        label = name or path.name
        url = path.resolve().as_uri()
    if len(data) > max_bytes:
        raise AttachError(
            f"{label} is {len(data):,} bytes, over the {max_bytes:,}-byte limit",
            hint="attach a smaller image",
        )
    return data, label, url
