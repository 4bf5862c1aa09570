"""Open WebUI's chat export (Settings → Chats → Export, or a chat's ⋯ → Download → JSON).

A JSON array of ``{id, title, created_at, chat: {title, timestamp, history: {currentId,
messages: {id: {id, parentId, childrenIds, role, content, timestamp, files?, images?}}},
messages: [...]}}`` (one chat may also be the whole document). The active branch — from
``history.currentId`` back to the root through ``parentId`` — is kept; regenerated answers and
edited questions on other branches are left out. Image files (``files: [{type: "image", url}]``
or ``images: [url]``) given as data URLs become image parts; other URLs are named in the text.
Without a ``history`` tree the flat ``chat.messages`` list is taken in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import dataurl
from .model import (
    Conversation,
    Skipped,
    as_dict,
    clean_role,
    node_at,
    parts_entry,
    to_ms,
    walk_up,
)
from .source import Input, read_conversations


def _branch(chat: dict[str, Any]) -> list[dict[str, Any]]:
    history = chat.get("history")
    if isinstance(history, dict) and isinstance(history.get("messages"), dict):
        msgs = history["messages"]
        node_id = history.get("currentId")
        if node_id not in msgs and msgs:
            node_id = list(msgs)[-1]
        return walk_up(node_at(msgs, node_id), lambda node: node_at(msgs, node.get("parentId")))
    flat = chat.get("messages")
    return [m for m in flat if isinstance(m, dict)] if isinstance(flat, list) else []


def _images(msg: dict[str, Any]) -> tuple[list[str], list[str]]:
    urls: list[str] = []
    notes: list[str] = []
    candidates: list[Any] = []
    for f in msg.get("files") or []:
        if isinstance(f, dict) and (f.get("type") == "image" or "image" in str(f.get("type"))):
            candidates.append(f.get("url"))
    candidates.extend(msg.get("images") or [])
    for url in candidates:
        if dataurl.is_image_data_url(url):
            urls.append(url)
        elif isinstance(url, str) and url:
            notes.append(f"[image not in the export: {url}]")
    return urls, notes


def conversation(item: Any) -> Conversation | None:
    if not looks_like(item):
        return None
    chat = as_dict(item.get("chat")) or item
    entries = []
    for msg in _branch(chat):
        role = clean_role(msg.get("role"))
        if role is None:
            continue
        content = msg.get("content")
        text = content if isinstance(content, str) else ""
        urls, notes = _images(msg)
        if not text.strip() and not urls and not notes:
            continue
        extra: dict[str, Any] = {}
        model = msg.get("model")
        if role == "assistant" and isinstance(model, str) and model:
            extra["provider"] = {"name": "openwebui", "model": model}
        entries.append(parts_entry(role, [text, *notes], urls, **extra))
    cid = item.get("id") or chat.get("id")
    return Conversation(
        source="openwebui",
        source_id=str(cid) if cid else None,
        title=str(item.get("title") or chat.get("title") or ""),
        created_ms=to_ms(item.get("created_at") or chat.get("timestamp")),
        entries=entries,
    )


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    return read_conversations(inp, conversation, "Open WebUI")


def looks_like(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    chat = as_dict(item.get("chat")) or item
    history = chat.get("history")
    return isinstance(history, dict) and isinstance(history.get("messages"), dict)
