"""Prompts of the attachment auto-summary (SPEC §7.5), one family per kind of attachment.

* ``video`` — a timestamped transcript: every ``[mm:ss]`` / ``[h:mm:ss]`` marker is kept.
* ``paper`` — a PDF or paper-like text: headings, numbers and ``[Page N]`` markers are kept.
* ``generic`` — anything else: facts, names, numbers, dates and quotes are kept.

Every family also keeps ``[图N]`` image anchors, so the images of the entry land next to the text
they belong to after the summary is written back. :func:`attachment_kind` picks the family.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["KINDS", "SYSTEM", "attachment_kind", "chunk_prompt", "merge_prompt"]

KINDS = ("video", "paper", "generic")

SYSTEM = (
    "You condense long documents so that a chat assistant can keep them in its context. "
    "Write in the language of the document. Output only the condensed text: no preamble, "
    "no comments about the task."
)

_ANCHORS = (
    "Keep every image anchor such as [图1] exactly as written, next to the text it belongs to."
)

_RULES = {
    "video": (
        "The document is a timestamped video transcript. Condense what is said, in order. "
        "Keep every timestamp marker such as [01:23] or [1:02:03] exactly as written, each at the "
        "start of the line that condenses the speech from that moment; never invent, merge or "
        "renumber timestamps. Keep speaker names, numbers and memorable quotes."
    ),
    "paper": (
        "The document is a paper or report. Keep its heading structure (as Markdown headings), "
        "every number, measurement, table value and result, the names of methods and datasets, "
        "and every page marker such as [Page 3] exactly as written where its content starts."
    ),
    "generic": (
        "Keep every fact, name, number, date and direct quote; drop repetition, navigation text "
        "and boilerplate."
    ),
}

_PAGE_RE = re.compile(r"\[Page \d+\]")
_MODE_RE = re.compile(r"^Mode: (.*)$", re.M)


def attachment_kind(entry: dict[str, Any], text: str) -> str:
    """``video`` (has ``videoSrc``), ``paper`` (PDF mode or ``[Page N]`` markers), else ``generic``."""
    if isinstance(entry.get("videoSrc"), dict):
        return "video"
    mode = _MODE_RE.search(text)
    if (mode and "pdf" in mode.group(1).lower()) or _PAGE_RE.search(text):
        return "paper"
    return "generic"


def chunk_prompt(kind: str, chunk: str, index: int, total: int, title: str = "") -> str:
    """The prompt that condenses part ``index`` (1-based) of ``total``."""
    about = f' of "{title}"' if title else ""
    where = f"part {index} of {total}{about}" if total > 1 else f"the document{about}"
    return (
        f"{_RULES[kind]} {_ANCHORS}\n\n"
        f"Condense {where} to roughly a fifth of its length.\n\n"
        f"<document>\n{chunk}\n</document>"
    )


def merge_prompt(kind: str, parts: list[str], title: str = "") -> str:
    """The prompt that merges the condensed parts, in order, into one text."""
    about = f' of "{title}"' if title else ""
    joined = "\n\n".join(
        f'<part n="{k}">\n{text}\n</part>' for k, text in enumerate(parts, start=1)
    )
    return (
        f"{_RULES[kind]} {_ANCHORS}\n\n"
        f"Below are the condensed parts{about}, in order. Merge them into one coherent condensed "
        "text: remove overlap between parts, keep their order, keep every marker.\n\n"
        f"{joined}"
    )
