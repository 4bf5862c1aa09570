"""chatkeep — keep every pixel, send only what the model needs.

Public API (see SPEC): ``chatkeep.open()`` returns a :class:`Store`; the pure request-side rules
are importable from here as well. Heavy libraries (HTTP, PDF, imaging, web, SDKs) are imported
lazily by the functions that need them so ``import chatkeep`` stays fast.
"""

from __future__ import annotations

from ._version import __version__
from .constants import (
    BROWSA_PAGE_CONTEXT_PREFIX,
    DEFAULTS,
    GET_ALL_KEYS,
    PAGE_CONTEXT_PREFIX,
)
from .errors import (
    AttachError,
    ChatkeepError,
    ContextOverflow,
    InvalidEntry,
    InvalidValue,
    ProviderConfigError,
    ProviderError,
    StoreError,
)
from .rules.entries import is_attachment, validate_entry
from .store import Store, open

__all__ = [
    "BROWSA_PAGE_CONTEXT_PREFIX",
    "DEFAULTS",
    "GET_ALL_KEYS",
    "PAGE_CONTEXT_PREFIX",
    "AttachError",
    "ChatkeepError",
    "ContextOverflow",
    "InvalidEntry",
    "InvalidValue",
    "ProviderConfigError",
    "ProviderError",
    "Store",
    "StoreError",
    "__version__",
    "is_attachment",
    "open",
    "validate_entry",
]
