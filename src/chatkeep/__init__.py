"""chatkeep — keep every pixel, send only what the model needs.

Public API (names fixed by the specification):

* ``chatkeep.open(url=None, *, profile="default") -> Store`` — storage areas, live history
  with archive, saved sessions, image lifecycle, export/import.
* Pure request-side rules (no I/O, inputs never mutated, "no change" returns the input):
  labels and seen images, context aging, overflow stubs, the agent turn, page-context text,
  wire builders and request accounting.
* One exception tree rooted at :class:`ChatkeepError`.

Heavy libraries (HTTP, PDF, imaging, web, provider SDKs) are imported lazily by the functions
that need them, so ``import chatkeep`` stays fast.
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
    NotFound,
    ProviderConfigError,
    ProviderError,
    StoreError,
)

TYPE_CHECKING = False  # `typing` costs start-up time; only type checkers need these imports

# Everything else is resolved on first use (PEP 562) so that `import chatkeep` and
# `chatkeep --help` do not pay for the storage layer and the request rules.
_LAZY: dict[str, str] = {
    "SETTING_DEFAULTS": ".rules.settings",
    "SETTING_RULES": ".rules.settings",
    "Store": ".store",
    "WireRequest": ".rules.wire",
    "age_stale_attachments": ".rules.context",
    "attach_source": ".attach.store_ops",
    "attach_video": ".attach.store_ops",
    "bound_unseen_images": ".rules.images",
    "build_agent_turn": ".rules.context",
    "build_page_context_text": ".rules.context",
    "build_request": ".rules.wire",
    "check_settings": ".rules.settings",
    "cap_turn_images": ".rules.images",
    "compact_entry_image_parts": ".rules.labels",
    "downscale_data_url": ".rules.thumbnails",
    "image_parts_bytes": ".rules.images",
    "interleave_image_parts": ".rules.images",
    "is_attachment": ".entries",
    "is_context_overflow": ".rules.overflow",
    "open": ".store",
    "parse_figure_labels": ".rules.labels",
    "parse_setting": ".rules.settings",
    "prepare_history_for_model": ".rules.images",
    "redact_text": ".rules.redact",
    "redact_url": ".rules.redact",
    "request_stats": ".rules.accounting",
    "serialize": ".rules.wire",
    "stamp_images_seen": ".rules.images",
    "stub_oversized_attachments": ".rules.context",
    "summarize_attachment": ".conversation.summary",
    "undo_attach": ".attach.store_ops",
    "validate_entry": ".entries",
}

if TYPE_CHECKING:
    from typing import Any

    from .attach.store_ops import attach_source, attach_video, undo_attach
    from .conversation.summary import summarize_attachment
    from .entries import is_attachment, validate_entry
    from .rules.accounting import request_stats
    from .rules.context import (
        age_stale_attachments,
        build_agent_turn,
        build_page_context_text,
        stub_oversized_attachments,
    )
    from .rules.images import (
        bound_unseen_images,
        cap_turn_images,
        image_parts_bytes,
        interleave_image_parts,
        prepare_history_for_model,
        stamp_images_seen,
    )
    from .rules.labels import compact_entry_image_parts, parse_figure_labels
    from .rules.overflow import is_context_overflow
    from .rules.redact import redact_text, redact_url
    from .rules.settings import SETTING_DEFAULTS, SETTING_RULES, check_settings, parse_setting
    from .rules.thumbnails import downscale_data_url
    from .rules.wire import WireRequest, build_request, serialize
    from .store import Store, open


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chatkeep' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AttachError",
    "BROWSA_PAGE_CONTEXT_PREFIX",
    "ChatkeepError",
    "ContextOverflow",
    "DEFAULTS",
    "GET_ALL_KEYS",
    "InvalidEntry",
    "InvalidValue",
    "NotFound",
    "PAGE_CONTEXT_PREFIX",
    "ProviderConfigError",
    "ProviderError",
    "SETTING_DEFAULTS",
    "SETTING_RULES",
    "Store",
    "StoreError",
    "WireRequest",
    "__version__",
    "age_stale_attachments",
    "attach_source",
    "attach_video",
    "bound_unseen_images",
    "build_agent_turn",
    "build_page_context_text",
    "build_request",
    "cap_turn_images",
    "check_settings",
    "compact_entry_image_parts",
    "downscale_data_url",
    "image_parts_bytes",
    "interleave_image_parts",
    "is_attachment",
    "is_context_overflow",
    "open",
    "parse_figure_labels",
    "parse_setting",
    "prepare_history_for_model",
    "redact_text",
    "redact_url",
    "request_stats",
    "serialize",
    "stamp_images_seen",
    "stub_oversized_attachments",
    "summarize_attachment",
    "undo_attach",
    "validate_entry",
]
