"""Claude.ai's data export: ``conversations.json`` (or the zip holding it).

Each conversation is ``{uuid, name, created_at, chat_messages: [...]}``; a message is
``{uuid, sender: "human"|"assistant", text, content: [{type: "text", text}], created_at,
attachments: [{file_name, file_type, extracted_content}], files: [{file_name}],
parent_message_uuid?}``. When messages carry ``parent_message_uuid`` the branch ending at the
last message is kept (walked back to the root); otherwise the list is taken in order.

Each attachment with extracted text becomes an attachment entry (§3.2: chatkeep's prefix, built
by ``build_page_context_text`` with the file name as title) placed before the message that
carried it; files the export holds no content for are named in a ``[file not in the export: …]``
line of the message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..digest import digest_json, hex_of
from ..rules.context import build_page_context_text
from .model import Conversation, Skipped, clean_role, text_entry, to_ms, walk_up
from .source import Input, read_conversations


def _branch(messages: list[Any]) -> list[dict[str, Any]]:
    msgs = [m for m in messages if isinstance(m, dict)]
    if not any(m.get("parent_message_uuid") for m in msgs):
        return msgs
    by_id = {m.get("uuid"): m for m in msgs if m.get("uuid")}
    return walk_up(
        msgs[-1] if msgs else None,
        lambda node: by_id.get(node.get("parent_message_uuid")),
        lambda node: node.get("uuid"),
    )


def _text(msg: dict[str, Any]) -> str:
    content = msg.get("content")
    if isinstance(content, list):
        texts = [
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        if texts:
            return "\n\n".join(texts)
    return msg["text"] if isinstance(msg.get("text"), str) else ""


def conversation(item: Any) -> Conversation | None:
    if not isinstance(item, dict) or not isinstance(item.get("chat_messages"), list):
        return None
    entries: list[dict[str, Any]] = []
    for msg in _branch(item["chat_messages"]):
        role = clean_role(msg.get("sender"))
        if role is None:
            continue
        notes = []
        for att in msg.get("attachments") or []:
            if not isinstance(att, dict):
                continue
            body = att.get("extracted_content")
            name = str(att.get("file_name") or "attachment")
            if isinstance(body, str) and body.strip():
                fmt = str(att.get("file_type") or "") or None
                text = build_page_context_text({"title": name}, body, "full", fmt)
                key = [item.get("uuid"), msg.get("uuid"), name, len(entries)]
                entries.append(text_entry("user", text, attachId=hex_of(digest_json(key))[:32]))
            else:
                notes.append(f"[file not in the export: {name}]")
        for f in msg.get("files") or []:
            if isinstance(f, dict) and f.get("file_name"):
                notes.append(f"[file not in the export: {f['file_name']}]")
        text = "\n".join([_text(msg), *notes]).strip("\n")
        if text.strip():
            entries.append(text_entry(role, text))
    return Conversation(
        source="claude",
        source_id=str(item["uuid"]) if item.get("uuid") else None,
        title=str(item.get("name") or ""),
        created_ms=to_ms(item.get("created_at")),
        entries=entries,
    )


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    from .chatgpt import json_members

    members: list[str | None] = list(json_members(inp)) if inp.is_zip or inp.is_dir else [None]
    return read_conversations(inp, conversation, "Claude", members)


def looks_like(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("chat_messages"), list)
