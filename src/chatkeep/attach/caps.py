"""Resource caps of the attach operations (SPEC §12): the limits in force for one store.

The built-in defaults (50 MB sources, 50-megapixel images, 2,000 PDF pages) can be raised per
profile with the settings ``maxSourceBytes``, ``maxImagePixels`` and ``maxPdfPages``; every
refusal names the limit and the setting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import (
    DEFAULT_MAX_IMAGE_PIXELS,
    DEFAULT_MAX_PDF_PAGES,
    DEFAULT_MAX_SOURCE_BYTES,
    MAX_IMAGE_PIXELS_KEY,
    MAX_PDF_PAGES_KEY,
    MAX_SOURCE_BYTES_KEY,
)
from ..errors import AttachError
from ..limits import is_unicode

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["require_text", "resource_limits"]


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
