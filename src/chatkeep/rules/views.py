"""Display views of stored entries (SPEC §10 ``history``, §11): never base64, always sizes.

:func:`entry_view` is the stable JSON view of one entry that every face shows — text parts as
text, each image as ``{"type": "image", "mime", "width", "height", "bytes"}`` (the pixel size is
read from the image header; an undecodable image has no size), attachment entries with their
``attachment`` ``{title, url, chars}``, and the entry's flags and records kept (:data:`VIEW_FLAGS`:
among them ``createdAt`` and the model's ``reasoning``, for the faces to show). Pure: nothing is
written.
"""

from __future__ import annotations

import io
from typing import Any

from ..dataurl import decode as decode_data_url
from ..dataurl import mime_of
from ..entries import image_part_url, is_attachment, is_image_part, is_text_part
from ..errors import InvalidEntry, UndecodableImage

__all__ = ["VIEW_FLAGS", "attachment_meta", "entry_view", "image_info"]

#: Entry fields copied into a view as they are.
VIEW_FLAGS = (
    "attachId",
    "videoSrc",
    "imagesSeen",
    "summarized",
    "interrupted",
    "unanswered",
    "provider",
    "usage",
    "createdAt",
    "reasoning",
    "toolCalls",
    "toolResult",
)


def image_info(url: str) -> dict[str, Any]:
    """``{"type": "image", "mime", "width", "height", "bytes"}`` for a data URL (no pixels)."""
    mime = mime_of(url) or "unknown"
    try:
        raw = decode_data_url(url)[1]
    except UndecodableImage:
        raw = b""
    width = height = None
    try:
        from PIL import Image  # lazy: only `history` output needs image sizes

        with Image.open(io.BytesIO(raw)) as img:
            width, height = img.size
    except Exception:  # an undecodable image is shown without a size
        pass
    return {"type": "image", "mime": mime, "width": width, "height": height, "bytes": len(raw)}


def attachment_meta(text: str) -> dict[str, Any]:
    title = url = ""
    for line in text.split("\n")[:6]:
        if line.startswith("Title: ") and not title:
            title = line[7:]
        elif line.startswith("URL: ") and not url:
            url = line[5:]
    return {"title": title, "url": url, "chars": len(text)}


def entry_view(index: int, entry: dict[str, Any]) -> dict[str, Any]:
    """The JSON view of one entry: text parts as text, images as their sizes, flags kept."""
    if not isinstance(entry, dict):
        raise InvalidEntry(f"an entry is an object, got {type(entry).__name__}", field="entry")
    content = entry.get("content")
    parts: list[dict[str, Any]] = []
    if isinstance(content, str):
        parts.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for p in content:
            if is_text_part(p):
                parts.append({"type": "text", "text": p.get("text", "")})
            elif is_image_part(p):
                parts.append(image_info(image_part_url(p)))
    view: dict[str, Any] = {"index": index, "role": entry.get("role"), "content": parts}
    if is_attachment(entry):
        first = next((p["text"] for p in parts if p["type"] == "text"), "")
        view["attachment"] = attachment_meta(first)
    for key in VIEW_FLAGS:
        if key in entry:
            view[key] = entry[key]
    return view
