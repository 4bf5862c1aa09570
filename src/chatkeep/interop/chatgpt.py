"""ChatGPT's data export: ``conversations.json``, split ``conversations-NNN.json``, or the zip.

Each conversation is ``{id|conversation_id, title, create_time, current_node, mapping}`` where
``mapping`` is a tree of ``{id, parent, children, message}`` nodes. Only the branch that ends
at ``current_node`` is kept (walked back to the root): answers and questions that were edited
away are left out. Nodes without a message, system and tool turns, turns addressed to a tool
(``recipient`` other than ``all``), hidden nodes (``metadata.is_visually_hidden_from_
conversation``) and context nodes (``user_editable_context``, ``model_editable_context``),
reasoning (``thoughts``, ``reasoning_recap``) and tool output are skipped — except images a tool
generated (DALL·E's ``multimodal_text`` tool messages), kept as an assistant entry.

``multimodal_text`` parts are strings and ``image_asset_pointer`` objects; a pointer
``file-service://file-XYZ`` or ``sediment://file_XYZ`` names a file of the zip (or the unpacked
directory) whose name starts with ``file-XYZ`` / ``file_XYZ``; it becomes an image part. A
pointer whose file is not in the export becomes the text ``[image not in the export: …]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from .model import (
    Conversation,
    Skipped,
    as_dict,
    clean_role,
    image_url_of,
    node_at,
    parts_entry,
    to_ms,
    walk_up,
)
from .source import Input, read_conversations

SKIPPED_TYPES = {
    "user_editable_context",
    "model_editable_context",
    "thoughts",
    "reasoning_recap",
    "execution_output",
    "tether_browsing_display",
    "tether_quote",
    "system_error",
}
_SPLIT = re.compile(r"(^|/)conversations(-\d+)?\.json$")


def json_members(inp: Input) -> list[str]:
    """The conversation documents of an archive or directory, in order."""
    return sorted(n for n in inp.names() if _SPLIT.search(n))


class _Images:
    """Image files of the export, looked up by the file id an asset pointer names."""

    def __init__(self, inp: Input) -> None:
        self._inp = inp
        self._by_base: dict[str, str] = {}
        if inp.is_zip or inp.is_dir:
            for name in inp.names():
                if not name.lower().endswith(".json"):
                    self._by_base.setdefault(os.path.basename(name), name)
        self._bases = sorted(self._by_base)

    def url(self, pointer: str) -> str | None:
        file_id = pointer.split("://", 1)[-1].strip("/")
        if not file_id:
            return None
        import bisect

        k = bisect.bisect_left(self._bases, file_id)
        if k < len(self._bases) and self._bases[k].startswith(file_id):
            name = self._by_base[self._bases[k]]
            return image_url_of(self._inp.read_bytes(name), name)
        return None


def _active_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """Nodes from the root to ``current`` (the last node when ``current`` is missing)."""
    if not isinstance(current, str) or current not in mapping:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            return []
        current = leaves[-1]
    return walk_up(mapping[current], lambda node: node_at(mapping, node.get("parent")))


def _hidden(msg: dict[str, Any]) -> bool:
    meta = as_dict(msg.get("metadata"))
    if meta.get("is_visually_hidden_from_conversation") or meta.get("is_user_system_message"):
        return True
    recipient = msg.get("recipient")
    return isinstance(recipient, str) and recipient not in ("all", "")


def _message_entry(msg: dict[str, Any], images: _Images) -> dict[str, Any] | None:
    author = as_dict(msg.get("author"))
    role = clean_role(author.get("role"))
    content = as_dict(msg.get("content"))
    ctype = content.get("content_type", "text")
    images_only = False
    if author.get("role") == "tool" and ctype == "multimodal_text":
        role, images_only = "assistant", True  # a generated image (DALL·E): keep its pixels
    if role is None or _hidden(msg) or ctype in SKIPPED_TYPES:
        return None
    texts: list[str] = []
    urls: list[str] = []
    parts = content.get("parts")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str):
                if not images_only:
                    texts.append(part)
            elif isinstance(part, dict) and part.get("content_type") == "image_asset_pointer":
                pointer = str(part.get("asset_pointer") or "")
                url = images.url(pointer)
                if url:
                    urls.append(url)
                else:
                    texts.append(f"[image not in the export: {pointer}]")
            elif isinstance(part, dict) and isinstance(part.get("text"), str) and not images_only:
                texts.append(part["text"])
    elif ctype == "code" and isinstance(content.get("text"), str):
        texts.append(f"```{content.get('language') or ''}\n{content['text']}\n```")
    elif isinstance(content.get("text"), str):
        texts.append(content["text"])
    if not any(t.strip() for t in texts) and not urls:
        return None
    extra: dict[str, Any] = {}
    slug = (msg.get("metadata") or {}).get("model_slug") if role == "assistant" else None
    if isinstance(slug, str) and slug:
        extra["provider"] = {"name": "chatgpt", "model": slug}
    return parts_entry(role, texts, urls, **extra)


def conversation(item: Any, images: _Images) -> Conversation | None:
    if not isinstance(item, dict) or not isinstance(item.get("mapping"), dict):
        return None
    entries = []
    for node in _active_path(item["mapping"], item.get("current_node")):
        msg = node.get("message")
        if isinstance(msg, dict):
            entry = _message_entry(msg, images)
            if entry is not None:
                entries.append(entry)
    cid = item.get("conversation_id") or item.get("id")
    return Conversation(
        source="chatgpt",
        source_id=str(cid) if cid else None,
        title=str(item.get("title") or ""),
        created_ms=to_ms(item.get("create_time")),
        entries=entries,
    )


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    images = _Images(inp)
    members: list[str | None] = list(json_members(inp)) if inp.is_zip or inp.is_dir else [None]
    return read_conversations(inp, lambda item: conversation(item, images), "ChatGPT", members)


def looks_like(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("mapping"), dict)
