"""Interoperability: the formats users already have (SPEC §14).

- :func:`import_file` reads chatkeep exports (whole profile, one session, Markdown), browsa
  dumps, and ChatGPT, Claude, Open WebUI, LibreChat, ``llm`` (``logs.db``), ShareGPT,
  OpenAI-messages JSON Lines (and the ``[{"messages": [...]}]`` arrays of fine-tuning sets)
  and SillyTavern chat files; foreign conversations become saved sessions.
- :func:`export_text` / :func:`export_file` write a profile or one session as ``json``, ``md``,
  ``jsonl``, ``sharegpt`` or ``html``.

One module per foreign format reads it into :class:`~chatkeep.interop.model.Conversation`
objects; ``imports.save_conversations`` is the one writer of those into the store.
"""

from __future__ import annotations

from .exports import FORMATS, export_file, export_lines, export_text, find_session
from .imports import SOURCES, detect, import_file

#: The names the facade exports them under.
EXPORT_FORMATS = FORMATS
IMPORT_SOURCES = SOURCES

__all__ = [
    "EXPORT_FORMATS",
    "IMPORT_SOURCES",
    "FORMATS",
    "SOURCES",
    "detect",
    "export_file",
    "export_lines",
    "export_text",
    "find_session",
    "import_file",
]
