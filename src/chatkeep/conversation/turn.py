"""Pieces of one turn that touch no network: the user entry, the system prompt, the reply
record, and the storage-side transforms applied when a reply lands.

Contract:

* :func:`build_user_entry` makes the user entry of one send: the text and **every** pasted
  image, whole (SPEC §5.5: the per-request image cap is applied when the request is built,
  :mod:`chatkeep.rules.request_images`, and never changes or annotates what is stored). The
  entry is validated; nothing is written.
* :func:`system_prompt` is ``systemPrompt`` plus, when ``replyLanguage`` is set, one line asking
  for replies in that language.
* :func:`apply_stubs` replaces, by ``attachId``, only the text of each rescued attachment with
  its overflow stub and keeps its image parts in order (pixels are never destroyed, §5).
* :class:`Reply` is what :meth:`chatkeep.conversation.Chat.send` returns.

All functions are pure and never mutate their inputs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..entries import Entry, image_part_url, is_image_part, validate_entry
from ..errors import InvalidValue
from ..rules.images import image_part, stamp_images_seen

__all__ = [
    "Reply",
    "apply_stubs",
    "build_user_entry",
    "entry_images",
    "find_entry",
    "now_ms",
    "stamp_up_to",
    "system_prompt",
]


def now_ms() -> int:
    """The time an entry is appended (``createdAt``, epoch milliseconds)."""
    return int(time.time() * 1000)


@dataclass
class Reply:
    """The outcome of one turn.

    ``landed`` says where the assistant entry went: ``"live"`` (the live history),
    ``"session"`` (the saved session the turn started in, ``session_id``), or ``"none"``
    (nothing stored: an empty or discarded reply, or a conversation that no longer exists).
    ``stats`` is :func:`chatkeep.rules.accounting.request_stats` of the request that produced
    the reply (the rescued one after an overflow); ``warnings`` are the notices of the turn.
    ``usage`` is the provider's normalised token usage (SPEC §6.4) and ``cost`` its estimated
    price from the card's ``prices`` (``None`` when either is missing). ``dropped_images``
    counts the images the per-request cap sent as labels (all of them stay stored whole).
    ``reasoning`` is the model's reasoning ("thinking") that came with the answer (``""`` when
    none); ``text`` is the answer alone.
    """

    text: str
    provider: str
    model: str
    usage: dict[str, int] | None = None
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    response_id: str | None = None
    finish_reason: str | None = None
    rescued: bool = False
    dropped_images: int = 0
    landed: str = "live"
    session_id: str | None = None
    cost: float | None = None
    reasoning: str = ""


def _image_url(image: Any) -> str:
    if isinstance(image, str):
        return image
    if isinstance(image, dict) and is_image_part(image):
        return image_part_url(image)
    raise InvalidValue(
        f"an image must be a data:image/...;base64 URL or an image_url part, got {type(image).__name__}",
        hint="read the file and pass it as a data: URL (chatkeep chat --image FILE does this)",
    )


def build_user_entry(text: str, images: Iterable[Any] = ()) -> Entry:
    """The user entry of one send, every image kept; raises on empty or invalid input."""
    if not isinstance(text, str):
        raise InvalidValue(f"the message text must be a string, got {type(text).__name__}")
    urls = [_image_url(im) for im in images]
    if not text.strip() and not urls:
        raise InvalidValue(
            "nothing to send: the message is empty", hint="type a message or paste an image"
        )
    content: str | list[dict[str, Any]]
    if urls:
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content = parts + [image_part(u) for u in urls]
    else:
        content = text
    entry: Entry = {"role": "user", "content": content}
    validate_entry(entry)
    return entry


def entry_images(entry: Entry) -> list[str]:
    """The data URLs of an entry's image parts, in order."""
    content = entry.get("content")
    if not isinstance(content, list):
        return []
    return [image_part_url(p) for p in content if is_image_part(p)]


def system_prompt(settings: dict[str, Any]) -> str:
    base = settings.get("systemPrompt")
    base = base.strip() if isinstance(base, str) else ""
    lang = settings.get("replyLanguage")
    lang = lang.strip() if isinstance(lang, str) else ""
    if not lang:
        return base
    line = f"Always reply in {lang}."
    return f"{base}\n\n{line}" if base else line


def find_entry(entries: Sequence[Entry], entry: Entry) -> int:
    """Index of the last entry equal to ``entry``, or ``-1``."""
    for i in range(len(entries) - 1, -1, -1):
        if entries[i] == entry:
            return i
    return -1


def apply_stubs(entries: list[Entry], changed: Sequence[dict[str, Any]]) -> list[Entry]:
    """Rescue stubs written by ``attachId``: the text becomes the stub, image parts stay."""
    stubs = {c["attachId"]: c["content"] for c in changed if c.get("attachId")}
    if not stubs:
        return entries
    out = list(entries)
    for i, entry in enumerate(out):
        stub = stubs.get(entry.get("attachId")) if isinstance(entry, dict) else None
        if stub is None:
            continue
        content = entry.get("content")
        images = [p for p in content if is_image_part(p)] if isinstance(content, list) else []
        new_content: str | list[dict[str, Any]] = (
            [{"type": "text", "text": stub}, *images] if images else stub
        )
        out[i] = {**entry, "content": new_content}
    return out


def stamp_up_to(entries: list[Entry], end: int) -> list[Entry]:
    """``imagesSeen: true`` on the image-bearing entries of ``entries[:end]``."""
    stamped = stamp_images_seen(entries[:end])
    if stamped is None:
        return entries
    return stamped + entries[end:]
