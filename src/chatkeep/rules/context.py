"""Attachment text for the model: page-context header, aging, overflow stubs, agent turn.

Contracts (SPEC §3.2, §6.2, §6.3, §7.4):

- :func:`build_page_context_text` — the attachment header + redacted body.
- :func:`age_stale_attachments` — send-time only: a *cold* attachment (not the newest, at least
  ``min_user_turns_after`` ``user`` entries after it, text ``>= min_chars``) becomes a short
  string stub that is a pure function of the entry's own text, so it is byte-identical on every
  later turn. The same list object comes back when nothing aged; assistant entries never age.
- :func:`stub_oversized_attachments` — overflow rescue: every attachment ``>= min_chars``
  (newest included) becomes the rescue stub; returns ``(history, changed)``.
- :func:`build_agent_turn` — the trailing run of unanswered attachments plus the new user text,
  for providers that keep the transcript server-side.

Inputs are never mutated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..constants import ATTACHMENT_PREFIXES, PAGE_CONTEXT_PREFIX
from ..entries import (
    Entry,
    entry_text,
    first_text,
    image_part_url,
    is_attachment,
    is_image_part,
    require_entry_list,
    require_list,
    text_length,
)
from ..errors import InvalidValue
from ..limits import check_text
from .redact import redact_text, redact_url

__all__ = [
    "AGED_STUB_HEADER",
    "OVERSIZED_STUB_NOTE",
    "age_stale_attachments",
    "aged_stub",
    "build_agent_turn",
    "build_page_context_text",
    "oversized_stub",
    "stale_attachments",
    "stub_oversized_attachments",
    "trimmed_original_chars",
]

AGED_STUB_HEADER = (
    "[Attached page context trimmed to keep replies fast — sent in full in an earlier turn]"
)
OVERSIZED_STUB_NOTE = (
    "[chatkeep: this attachment was too large for the model's context window and was omitted "
    "so the conversation could continue]"
)
_SIZE_LINE = "Original size: ~{n} chars. If you need exact details from this page, ask the user to re-attach it."
_TITLE_RE = re.compile(r"^Title: (.*)$", re.M)
_URL_RE = re.compile(r"^URL: (.*)$", re.M)


def _one_line(value: Any) -> str:
    return re.sub(r"[\r\n]+", " ", str(value or "")).strip()


def build_page_context_text(
    meta: dict[str, Any],
    text: str,
    mode: str,
    fmt: str | None = None,
    fallback: bool = False,
    change_note: str | None = None,
) -> str:
    """The attachment text: prefix, ``URL:``/``Title:``/``Mode:`` header, ``---``, redacted body.

    ``URL:`` and ``Title:`` lines are left out when ``meta`` has no value for them.
    """
    if not isinstance(meta, dict):
        raise InvalidValue(f"meta must be an object, got {type(meta).__name__}")
    for what, v in (("text", text), ("mode", mode)):
        check_text(v, what)
    lines = [PAGE_CONTEXT_PREFIX]
    url = _one_line(meta.get("url"))
    if url:
        lines.append(f"URL: {redact_url(url)}")
    title = _one_line(meta.get("title"))
    if title:
        lines.append(f"Title: {title}")
    mode_line = f"Mode: {mode}"
    if fmt:
        mode_line += f" | {fmt}"
    if fallback:
        mode_line += " (fallback to full)"
    if change_note:
        mode_line += change_note
    lines.append(mode_line)
    lines.append("---")
    return "\n".join(lines) + "\n\n" + redact_text(text or "")


def _header_lines(text: str) -> list[str]:
    lines = []
    m = _TITLE_RE.search(text)
    if m:
        lines.append(f"Title: {m.group(1)}")
    m = _URL_RE.search(text)
    if m:
        lines.append(f"URL: {m.group(1)}")
    return lines


def aged_stub(entry: Entry) -> str:
    """The send-time stub of a cold attachment (a pure function of the entry's own text)."""
    text = entry_text(entry)
    lines = [AGED_STUB_HEADER, *_header_lines(text), _SIZE_LINE.format(n=text_length(entry))]
    return "\n".join(lines)


def oversized_stub(entry: Entry) -> str:
    """The overflow-rescue stub of an attachment; it keeps the entry's own prefix."""
    text = entry_text(entry)
    prefix = next(
        (p for p in ATTACHMENT_PREFIXES if first_text(entry).startswith(p)), PAGE_CONTEXT_PREFIX
    )
    lines = [
        prefix,
        OVERSIZED_STUB_NOTE,
        *_header_lines(text),
        _SIZE_LINE.format(n=text_length(entry)),
    ]
    return "\n".join(lines)


_SIZE_RE = re.compile(r"^Original size: ~(\d+) chars\.", re.M)


def trimmed_original_chars(entry: Entry) -> int | None:
    """The original size an overflow-rescue stub (:func:`oversized_stub`) records for the
    attachment it replaced; ``None`` when ``entry`` is not such a stub."""
    text = entry_text(entry)
    if OVERSIZED_STUB_NOTE not in text:
        return None
    found = _SIZE_RE.search(text)
    return int(found.group(1)) if found else None


def stale_attachments(
    history: Sequence[Entry], *, min_user_turns_after: int = 3, min_chars: int = 8000
) -> list[int]:
    """The indexes :func:`age_stale_attachments` turns into stubs — the aging rule alone, no
    stub built (the cache planner asks it about the next turns)."""
    attachments = [i for i, e in enumerate(history) if is_attachment(e)]
    if len(attachments) < 2:
        return []
    users_after = [0] * (len(history) + 1)
    for i in range(len(history) - 1, -1, -1):
        e = history[i]
        is_user = isinstance(e, dict) and e.get("role") == "user"
        users_after[i] = users_after[i + 1] + (1 if is_user else 0)
    return [
        i
        for i in attachments[:-1]  # the newest attachment never ages
        if users_after[i + 1] >= min_user_turns_after and text_length(history[i]) >= min_chars
    ]


def age_stale_attachments(
    history: list[Entry],
    *,
    min_user_turns_after: int = 3,
    min_chars: int = 8000,
) -> list[Entry]:
    """Cold attachments become :func:`aged_stub` strings; the same list when nothing aged."""
    require_entry_list(history)
    stale = stale_attachments(
        history, min_user_turns_after=min_user_turns_after, min_chars=min_chars
    )
    if not stale:
        return history
    out = list(history)
    for i in stale:
        out[i] = {**history[i], "content": aged_stub(history[i])}
    return out


def stub_oversized_attachments(
    history: list[Entry], min_chars: int = 8000
) -> tuple[list[Entry], list[dict[str, Any]]]:
    """Every attachment ``>= min_chars`` becomes :func:`oversized_stub` (images dropped).

    Returns ``(history, changed)`` where ``changed`` lists ``{index, attachId, content}`` and
    ``history`` is the input list itself when nothing changed.
    """
    require_entry_list(history)
    out: list[Entry] | None = None
    changed: list[dict[str, Any]] = []
    for i, entry in enumerate(history):
        if not is_attachment(entry) or text_length(entry) < min_chars:
            continue
        stub = oversized_stub(entry)
        if out is None:
            out = list(history)
        out[i] = {**entry, "content": stub}
        changed.append({"index": i, "attachId": entry.get("attachId"), "content": stub})
    return (history if out is None else out), changed


def build_agent_turn(
    history: list[Entry], user_text: str, images: Sequence[str | dict[str, Any]] = ()
) -> dict[str, Any]:
    """``{"text", "images"}`` for a server-side-transcript provider.

    The trailing page-context run (attachment entries at the end of the history, after the last
    reply, oldest first) is sent with the new user text; images are the fresh pasted ones first,
    then the run's images in order.
    """
    require_entry_list(history)
    check_text(user_text, "the user text")
    require_list(images, "images", (str, dict))
    run: list[Entry] = []
    for entry in reversed(history):
        if not is_attachment(entry):
            break
        run.append(entry)
    run.reverse()
    texts = [entry_text(e) for e in run]
    if user_text:
        texts.append(user_text)
    urls = [im if isinstance(im, str) else image_part_url(im) for im in images]
    for entry in run:
        content = entry.get("content")
        if isinstance(content, list):
            urls.extend(image_part_url(p) for p in content if is_image_part(p))
    return {"text": "\n\n".join(texts), "images": urls}
