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

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .constants import (
    BROWSA_PAGE_CONTEXT_PREFIX,
    DEFAULTS,
    DRAWER_PAGE,
    GET_ALL_KEYS,
    ORIGINAL_PREFIX,
    PAGE_CONTEXT_PREFIX,
    PANEL_OPTION_DEFAULTS,
)
from .errors import (
    AttachError,
    BadRequest,
    ChatkeepError,
    ContextOverflow,
    CorruptValue,
    InvalidEntry,
    InvalidValue,
    MissingFile,
    NotAFile,
    NotFound,
    ProfileNotEmpty,
    ProviderConfigError,
    ProviderError,
    SemanticUnavailable,
    StoreError,
    UndecodableImage,
    UnknownProvider,
    UnknownSetting,
)

# Everything else is resolved on first use (PEP 562) so that `import chatkeep` and
# `chatkeep --help` do not pay for the storage layer and the request rules.
_LAZY: dict[str, str] = {
    "AttachResult": ".attach",
    "CardRegistry": ".providers",
    "Chat": ".conversation",
    "DEFAULT_UNSEEN_BUDGET": ".rules.images",
    "HISTORY_STEPS": ".rules.wire",
    "Reply": ".conversation",
    "RequestPlan": ".conversation",
    "SETTING_DEFAULTS": ".rules.settings",
    "SETTING_RULES": ".rules.settings",
    "Store": ".store",
    "Turn": ".conversation",
    "WireRequest": ".rules.wire",
    "age_stale_attachments": ".rules.context",
    "attach_file": ".attach",
    "attach_image": ".attach",
    "attach_source": ".attach",
    "attach_url": ".attach",
    "attach_video": ".attach",
    "bound_unseen_images": ".rules.images",
    "build_agent_turn": ".rules.context",
    "build_page_context_text": ".rules.context",
    "build_request": ".rules.wire",
    "cap_turn_images": ".rules.images",
    "check_id": ".limits",
    "check_value": ".limits",
    "check_settings": ".rules.settings",
    "compact_entry_image_parts": ".rules.labels",
    "data_url_mime": ".dataurl",
    "decode_data_url": ".dataurl",
    "digest_json": ".digest",
    "encode_data_url": ".dataurl",
    "digest_text": ".digest",
    "downscale_data_url": ".rules.thumbnails",
    "EXPORT_FORMATS": ".interop",
    "IMPORT_SOURCES": ".interop",
    "export_file": ".interop",
    "export_lines": ".interop",
    "export_text": ".interop",
    "find_session": ".interop",
    "entry_text": ".entries",
    "entry_view": ".rules.views",
    "estimate_tokens": ".rules.accounting",
    "extract_file": ".attach",
    "image_info": ".rules.views",
    "image_part_url": ".entries",
    "image_parts_bytes": ".rules.images",
    "import_file": ".interop",
    "interleave_image_parts": ".rules.images",
    "is_attachment": ".entries",
    "is_context_overflow": ".rules.overflow",
    "is_image_part": ".entries",
    "open": ".store",
    "parse_figure_labels": ".rules.labels",
    "parse_json": ".limits",
    "parse_setting": ".rules.settings",
    "plan_request": ".conversation",
    "prepare_history_for_model": ".rules.images",
    "preview_request": ".conversation",
    "redact_text": ".rules.redact",
    "redact_url": ".rules.redact",
    "request_stats": ".rules.accounting",
    "save_unsaved_reply": ".conversation.unsaved",
    "serialize": ".rules.wire",
    "split_snippet": ".storage.search_text",
    "stamp_images_seen": ".rules.images",
    "stub_oversized_attachments": ".rules.context",
    "summarize_attachment": ".conversation",
    "summarize_in_background": ".conversation",
    "trimmed_original_chars": ".rules.context",
    "turn_cost": ".rules.usage",
    "undo_attach": ".attach",
    "usage_report": ".conversation.usage_report",
    "usage_totals": ".rules.usage",
    "validate_card": ".providers",
    "validate_entry": ".entries",
}

if TYPE_CHECKING:
    from .attach import (
        AttachResult,
        attach_file,
        attach_image,
        attach_source,
        attach_url,
        attach_video,
        extract_file,
        undo_attach,
    )
    from .conversation import (
        Chat,
        Reply,
        RequestPlan,
        Turn,
        plan_request,
        preview_request,
        summarize_attachment,
        summarize_in_background,
    )
    from .conversation.unsaved import save_unsaved_reply
    from .conversation.usage_report import usage_report
    from .dataurl import (
        data_url_mime,
        decode_data_url,
        encode_data_url,
    )
    from .digest import (
        digest_json,
        digest_text,
    )
    from .entries import (
        entry_text,
        image_part_url,
        is_attachment,
        is_image_part,
        validate_entry,
    )
    from .interop import (
        EXPORT_FORMATS,
        IMPORT_SOURCES,
        export_file,
        export_lines,
        export_text,
        find_session,
        import_file,
    )
    from .limits import check_id, check_value, parse_json
    from .providers import (
        CardRegistry,
        validate_card,
    )
    from .rules.accounting import (
        estimate_tokens,
        request_stats,
    )
    from .rules.context import (
        age_stale_attachments,
        build_agent_turn,
        build_page_context_text,
        stub_oversized_attachments,
        trimmed_original_chars,
    )
    from .rules.images import (
        DEFAULT_UNSEEN_BUDGET,
        bound_unseen_images,
        cap_turn_images,
        image_parts_bytes,
        interleave_image_parts,
        prepare_history_for_model,
        stamp_images_seen,
    )
    from .rules.labels import (
        compact_entry_image_parts,
        parse_figure_labels,
    )
    from .rules.overflow import (
        is_context_overflow,
    )
    from .rules.redact import (
        redact_text,
        redact_url,
    )
    from .rules.settings import (
        SETTING_DEFAULTS,
        SETTING_RULES,
        check_settings,
        parse_setting,
    )
    from .rules.thumbnails import (
        downscale_data_url,
    )
    from .rules.usage import (
        turn_cost,
        usage_totals,
    )
    from .rules.views import (
        entry_view,
        image_info,
    )
    from .rules.wire import (
        HISTORY_STEPS,
        WireRequest,
        build_request,
        serialize,
    )
    from .store import (
        Store,
        open,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chatkeep' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AttachError",
    "AttachResult",
    "BROWSA_PAGE_CONTEXT_PREFIX",
    "BadRequest",
    "CardRegistry",
    "Chat",
    "ChatkeepError",
    "ContextOverflow",
    "CorruptValue",
    "DEFAULTS",
    "DEFAULT_UNSEEN_BUDGET",
    "DRAWER_PAGE",
    "EXPORT_FORMATS",
    "GET_ALL_KEYS",
    "HISTORY_STEPS",
    "IMPORT_SOURCES",
    "InvalidEntry",
    "InvalidValue",
    "MissingFile",
    "NotAFile",
    "NotFound",
    "ORIGINAL_PREFIX",
    "PAGE_CONTEXT_PREFIX",
    "PANEL_OPTION_DEFAULTS",
    "ProfileNotEmpty",
    "ProviderConfigError",
    "ProviderError",
    "Reply",
    "RequestPlan",
    "SETTING_DEFAULTS",
    "SETTING_RULES",
    "SemanticUnavailable",
    "Store",
    "StoreError",
    "Turn",
    "UndecodableImage",
    "UnknownProvider",
    "UnknownSetting",
    "WireRequest",
    "__version__",
    "age_stale_attachments",
    "attach_file",
    "attach_image",
    "attach_source",
    "attach_url",
    "attach_video",
    "bound_unseen_images",
    "build_agent_turn",
    "build_page_context_text",
    "build_request",
    "cap_turn_images",
    "check_id",
    "check_settings",
    "check_value",
    "compact_entry_image_parts",
    "data_url_mime",
    "decode_data_url",
    "digest_json",
    "digest_text",
    "downscale_data_url",
    "encode_data_url",
    "entry_text",
    "entry_view",
    "estimate_tokens",
    "export_file",
    "export_lines",
    "export_text",
    "extract_file",
    "find_session",
    "image_info",
    "image_part_url",
    "image_parts_bytes",
    "import_file",
    "interleave_image_parts",
    "is_attachment",
    "is_context_overflow",
    "is_image_part",
    "open",
    "parse_figure_labels",
    "parse_json",
    "parse_setting",
    "plan_request",
    "prepare_history_for_model",
    "preview_request",
    "redact_text",
    "redact_url",
    "request_stats",
    "save_unsaved_reply",
    "serialize",
    "split_snippet",
    "stamp_images_seen",
    "stub_oversized_attachments",
    "summarize_attachment",
    "summarize_in_background",
    "trimmed_original_chars",
    "turn_cost",
    "undo_attach",
    "usage_report",
    "usage_totals",
    "validate_card",
    "validate_entry",
]
