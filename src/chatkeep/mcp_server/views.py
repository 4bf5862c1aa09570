"""What the MCP tools show of stored entries, and the budget every result is held to.

Pure views over entries read through the public API; nothing here writes. The limits below are
the ones each tool's description states (an agent's context is spent as carefully as a
request's):

* :data:`CALL_CHARS` — characters of text in one tool result (its JSON), whatever the tool;
  a page stops before the entry that would pass it and says where the next page starts.
* :data:`ENTRY_CHARS` — characters of one entry's text in a page (``read_session``,
  ``recent``); a longer entry is cut and says how to read the rest (``get_attachment`` with
  ``offset``).
* :data:`IMAGES_PER_CALL` / :data:`IMAGE_BYTES` / :data:`IMAGE_EDGE` — image content blocks of
  one result, and the size each is brought within (a resized copy for the result; the stored
  image is never touched).

Images are shown as their labels (``[label]``, the placeholder a model sees for an image it
has already seen, SPEC §5.3) with their size, unless a tool is asked for image blocks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import chatkeep

__all__ = [
    "CALL_CHARS",
    "ENTRY_CHARS",
    "IMAGES_PER_CALL",
    "IMAGE_BYTES",
    "IMAGE_EDGE",
    "Budget",
    "ImageBlock",
    "Result",
    "dumps",
    "entry_images",
    "entry_row",
    "image_block",
]

CALL_CHARS = 24_000
ENTRY_CHARS = 4_000
IMAGES_PER_CALL = 4
IMAGE_BYTES = 1_000_000
IMAGE_EDGE = 1568


def dumps(value: Any) -> str:
    """The JSON text of a result (compact, Unicode kept as it is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass
class ImageBlock:
    """One image for a result: its bytes, type, and the caption shown before it."""

    mime: str
    data: bytes
    caption: str


@dataclass
class Result:
    """A tool's answer: the JSON payload, and the images that follow it as content blocks."""

    payload: dict[str, Any]
    images: list[ImageBlock] = field(default_factory=list)


class Budget:
    """The characters and images one call may still spend."""

    def __init__(self, chars: int = CALL_CHARS, images: int = IMAGES_PER_CALL) -> None:
        self.chars = chars
        self.images = images

    def fits(self, item: Any) -> bool:
        """Whether ``item``'s JSON still fits; if so it is charged."""
        size = len(dumps(item)) + 1
        if size > self.chars:
            return False
        self.chars -= size
        return True


def _image_parts(entry: dict[str, Any]) -> list[str]:
    content = entry.get("content")
    if not isinstance(content, list):
        return []
    return [chatkeep.image_part_url(p) for p in content if chatkeep.is_image_part(p)]


def entry_images(entry: dict[str, Any]) -> list[str]:
    """The URLs of an entry's image parts, in order (``data:`` or ``http(s):``)."""
    return _image_parts(entry) if isinstance(entry, dict) else []


def _labels(entry: dict[str, Any]) -> list[str]:
    """Each image's placeholder text (``[label]``), in order."""
    compact = chatkeep.compact_entry_image_parts(entry)
    content = compact.get("content") if isinstance(compact, dict) else None
    if compact is entry or not isinstance(content, list):
        return []
    originals = entry["content"]
    return [
        str(new.get("text", ""))
        for old, new in zip(originals, content, strict=False)
        if chatkeep.is_image_part(old)
    ]


def _image_meta(k: int, url: str, label: str, seen: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"image": k, "label": label, "seen": seen}
    if url.startswith("data:"):
        info = chatkeep.image_info(url)
        meta.update({key: info[key] for key in ("mime", "width", "height", "bytes")})
    else:
        meta["url"] = url
    return meta


def entry_row(index: int, entry: dict[str, Any], *, max_chars: int = ENTRY_CHARS) -> dict[str, Any]:
    """The view of one entry in a page: its text with images as their labels, cut at
    ``max_chars`` (saying so), its images' sizes, an attachment's title and id."""
    shown = chatkeep.compact_entry_image_parts(entry)
    text = chatkeep.entry_text(shown)
    row: dict[str, Any] = {"index": index, "role": entry.get("role")}
    if isinstance(entry.get("createdAt"), int | float):
        row["createdAt"] = entry["createdAt"]
    if chatkeep.is_attachment(entry):
        meta = chatkeep.entry_view(index, {"role": "user", "content": text}).get("attachment", {})
        row["attachment"] = {
            "title": meta.get("title", ""),
            "url": meta.get("url", ""),
            "attachId": entry.get("attachId"),
            "summarized": bool(entry.get("summarized")),
        }
    if len(text) > max_chars:
        row["text"] = text[:max_chars]
        row["cut"] = {"shownChars": max_chars, "totalChars": len(text)}
    else:
        row["text"] = text
    urls = entry_images(entry)
    if urls:
        seen = bool(entry.get("imagesSeen"))
        labels = _labels(entry)
        row["images"] = [
            _image_meta(k, url, labels[k - 1] if k <= len(labels) else f"[image {k}]", seen)
            for k, url in enumerate(urls, start=1)
        ]
    for key in ("interrupted", "reasoning", "toolCalls", "toolResult"):
        if entry.get(key):
            row.setdefault("has", []).append(key)
    return row


def image_block(url: str, caption: str) -> tuple[ImageBlock | None, str]:
    """One stored image as a content block within :data:`IMAGE_BYTES` and
    :data:`IMAGE_EDGE` (a resized JPEG copy when the stored one is larger), or ``None`` and
    the reason it cannot be given (not stored inline, undecodable, still too large)."""
    if not url.startswith("data:"):
        return None, "the image is not stored in chatkeep, only its address: " + url[:200]
    try:
        mime, raw = chatkeep.decode_data_url(url)
        info = chatkeep.image_info(url)
        large = max(info.get("width") or 0, info.get("height") or 0) > IMAGE_EDGE
        if len(raw) > IMAGE_BYTES or large:
            mime, raw = chatkeep.decode_data_url(chatkeep.downscale_data_url(url, IMAGE_EDGE))
    except chatkeep.ChatkeepError as exc:
        return None, f"the stored image cannot be decoded: {exc.message}"
    if len(raw) > IMAGE_BYTES:
        return None, f"the image is still {len(raw)} bytes after resizing (limit {IMAGE_BYTES})"
    return ImageBlock(mime=mime, data=raw, caption=caption), ""
