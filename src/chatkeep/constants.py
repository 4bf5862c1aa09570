"""Fixed names and defaults of the storage model (SPEC §2, §3.2)."""

from __future__ import annotations

from typing import Any

PAGE_CONTEXT_PREFIX = "[Page context attached by chatkeep]"
#: The seed system's prefix; entries imported from browsa dumps carry it and are attachments too.
BROWSA_PAGE_CONTEXT_PREFIX = "[Page context attached by browsa]"
ATTACHMENT_PREFIXES = (PAGE_CONTEXT_PREFIX, BROWSA_PAGE_CONTEXT_PREFIX)

DEFAULTS: dict[str, Any] = {
    "providers": {},
    "activeProvider": "",
    "activeModel": "",
    "history": [],
    "contextMode": "auto",
    "maxTextChars": 0,
    "autoSummarizeAttachments": True,
    "summarizeThresholdChars": 0,
    "systemPrompt": "You are a helpful assistant.",
    "replyLanguage": "",
    "maxHistoryEntries": 60,
    "maxHistoryChars": 300000,
    "maxSessions": 0,
}

#: Panel options that every ``get_all()`` consumer sees, with their defaults.
PANEL_OPTION_DEFAULTS: dict[str, Any] = {
    "fontSize": 14,
    "sendShortcut": "Enter",
    "thoughtAutoCollapse": True,
}

GET_ALL_KEYS: tuple[str, ...] = tuple(k for k in DEFAULTS if k != "history") + (
    "fontSize",
    "sendShortcut",
    "thoughtAutoCollapse",
)

HISTORY_KEY = "history"
SESSIONS_INDEX_KEY = "savedSessions"
SESSION_BODY_PREFIX = "session_"
ACTIVE_SESSION_KEY = "activeSessionId"
ATTACH_SNAPSHOTS_KEY = "attachSnapshots"
#: Full attachment entries kept before a summary or an overflow stub rewrote their text.
ORIGINAL_PREFIX = "attachOriginal_"

DEFAULT_MAX_TEXT_CHARS = 1_000_000
#: Resource limits of attachments (SPEC §12); each can be raised with the setting named beside
#: it (``store.local.set(name, n)``), which is read only by the attach operations.
DEFAULT_MAX_SOURCE_BYTES = 50 * 1024 * 1024  # maxSourceBytes
DEFAULT_MAX_IMAGE_PIXELS = 50_000_000  # maxImagePixels
#: Unseen image bytes the live history may keep (SPEC §5.4); also ``chatkeep.DEFAULT_UNSEEN_BUDGET``.
DEFAULT_UNSEEN_BUDGET = 8 * 1024 * 1024
DEFAULT_MAX_PDF_PAGES = 2_000  # maxPdfPages
MAX_SOURCE_BYTES_KEY = "maxSourceBytes"
MAX_IMAGE_PIXELS_KEY = "maxImagePixels"
MAX_PDF_PAGES_KEY = "maxPdfPages"
DEFAULT_SUMMARIZE_THRESHOLD = 100_000
TEXT_DIGEST_CAP = 100_000
SESSION_NAME_MAX = 80
#: An imported conversation's title is kept whole (SPEC §14); this bounds only a hostile file's
#: (no real export's title comes near it). The drawer may shorten a name for display.
IMPORTED_NAME_MAX = 1000
AUTO_NAME_MAX = 48
#: Rows per page of the drawer (``store.sessions.list(q, limit=DRAWER_PAGE, offset=…)``).
DRAWER_PAGE = 50
