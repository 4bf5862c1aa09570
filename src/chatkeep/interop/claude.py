"""Claude.ai's data export: ``conversations.json`` (or the zip holding it).

A file holds a list of conversations, or one conversation object ``{uuid, name, created_at,
chat_messages: [...]}``; a message is ``{uuid, sender: "human"|"assistant", text, content:
[blocks], created_at, attachments: [{file_name, file_type, extracted_content}], files:
[{file_name}], parent_message_uuid?}``. When messages carry ``parent_message_uuid`` the branch
ending at ``current_leaf_message_uuid`` (when the file has it, as the conversation API does)
or else at the last message is kept (walked back to the root); otherwise the list is taken in
order.

The ``content`` blocks are read in order (SPEC §14): ``text`` blocks are the message's text; a
``voice_note`` block gives its ``transcript`` as text; ``thinking`` blocks become the entry's
``reasoning``; ``tool_use`` blocks ``toolCalls`` records (``name``, ``arguments`` the JSON of
``input``, ``id``) and ``tool_result`` blocks ``toolResult`` records (the text of their
``content``, ``name``, ``id`` the ``tool_use_id``). A message without text blocks falls back to
its ``text``. Each entry carries its message's ``created_at`` as ``createdAt``.

Each attachment with extracted text becomes an attachment entry (§3.2: chatkeep's prefix, built
by ``build_page_context_text`` with the file name as title) placed before the message that
carried it; files the export holds no content for are named in a ``[file not in the export: …]``
line of the message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..digest import digest_json, hex_of
from ..rules.context import build_page_context_text
from .chatgpt import json_members
from .model import (
    Conversation,
    Extras,
    Skipped,
    as_list,
    clean_role,
    text_entry,
    timed,
    to_ms,
    walk_up,
)
from .source import Input, read_conversations


def _branch(messages: list[Any], leaf: Any = None) -> list[dict[str, Any]]:
    """The messages shown: the branch ending at ``leaf`` (``current_leaf_message_uuid``,
    written by the conversation API that browser exporters save) or at the last message."""
    msgs = [m for m in messages if isinstance(m, dict)]
    if not any(m.get("parent_message_uuid") for m in msgs):
        return msgs
    by_id = {m.get("uuid"): m for m in msgs if isinstance(m.get("uuid"), str)}
    end = by_id.get(leaf) if isinstance(leaf, str) else None
    return walk_up(
        end or (msgs[-1] if msgs else None),
        lambda node: by_id.get(node.get("parent_message_uuid")),
        lambda node: node.get("uuid"),
    )


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in as_list(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict):
            texts.append(json.dumps(part, ensure_ascii=False))
    return "\n".join(texts)


def _blocks(msg: dict[str, Any], extras: Extras) -> str:
    """The text of a message's content blocks; reasoning and tool blocks go to ``extras``."""
    texts: list[str] = []
    for block in as_list(msg.get("content")):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "voice_note":
            for key in ("transcript", "text"):
                if isinstance(block.get(key), str):
                    texts.append(block[key])
                    break
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            extras.think(block["thinking"])
        elif kind == "tool_use":
            args = block.get("input")
            arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            extras.call(str(block.get("name") or ""), arguments, str(block.get("id") or ""))
        elif kind == "tool_result":
            name = str(block.get("name") or "")
            extras.result(
                _result_text(block.get("content")), name, str(block.get("tool_use_id") or "")
            )
    if any(t.strip() for t in texts):
        return "\n\n".join(texts)
    return msg["text"] if isinstance(msg.get("text"), str) else ""


def conversation(item: Any) -> Conversation | None:
    if not isinstance(item, dict) or not isinstance(item.get("chat_messages"), list):
        return None
    entries: list[dict[str, Any]] = []
    for msg in _branch(item["chat_messages"], item.get("current_leaf_message_uuid")):
        role = clean_role(msg.get("sender"))
        if role is None:
            continue
        when = to_ms(msg.get("created_at"))
        notes = []
        kept = set()
        for att in msg.get("attachments") or []:
            if not isinstance(att, dict):
                continue
            body = att.get("extracted_content")
            name = str(att.get("file_name") or "attachment")
            if isinstance(body, str) and body.strip():
                fmt = str(att.get("file_type") or "") or None
                text = build_page_context_text({"title": name}, body, "full", fmt)
                key = [item.get("uuid"), msg.get("uuid"), name, len(entries)]
                attached = text_entry("user", text, attachId=hex_of(digest_json(key))[:32])
                entries.append(timed(attached, when))
                kept.add(name)
            else:
                notes.append(f"[file not in the export: {name}]")
        for f in msg.get("files") or []:
            if isinstance(f, dict) and f.get("file_name") and f["file_name"] not in kept:
                notes.append(f"[file not in the export: {f['file_name']}]")
        extras = Extras()
        text = "\n".join([_blocks(msg, extras), *notes]).strip("\n")
        if text.strip() or extras:
            entries.append(extras.put_on(timed(text_entry(role, text), when)))
    return Conversation(
        source="claude",
        source_id=str(item["uuid"]) if item.get("uuid") else None,
        title=str(item.get("name") or ""),
        created_ms=to_ms(item.get("created_at")),
        entries=entries,
    )


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    members: list[str | None] = list(json_members(inp)) if inp.is_zip or inp.is_dir else [None]
    return read_conversations(inp, conversation, "Claude", members)


def looks_like(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("chat_messages"), list)
