"""LibreChat's conversation export (a conversation's ⋯ → Export → JSON).

``{conversationId, title, createdAt?, messages: [...]}`` with a flat list of messages
(``{messageId, parentMessageId, text, sender, isCreatedByUser, createdAt, model?}``), or with
``recursive`` on, ``messagesTree``/``messages`` of nested messages carrying ``children``. The
branch that is shown is kept: for a flat list, the last message walked back through
``parentMessageId``; for a tree, the last child at every level. A JSON array of such objects
is read as several conversations.

A message's text is its ``text``, else the ``text`` parts of its ``content`` (agents' replies);
``think`` parts become the entry's ``reasoning`` and ``tool_call`` parts its ``toolCalls``
(``name``, ``args``, ``id``) and ``toolResult`` (their ``output``) (SPEC §14). Each entry
carries its message's ``createdAt``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .model import (
    Conversation,
    Extras,
    Skipped,
    as_dict,
    as_list,
    text_entry,
    timed,
    to_ms,
    walk_up,
)
from .source import Input, read_conversations


def _nested(roots: list[Any]) -> list[dict[str, Any]]:
    path = []
    level = roots
    while level:
        node = level[-1]
        if not isinstance(node, dict):
            break
        path.append(node)
        children = node.get("children")
        level = children if isinstance(children, list) else []
    return path


def _flat(msgs: list[Any]) -> list[dict[str, Any]]:
    rows = [m for m in msgs if isinstance(m, dict)]
    if not rows:
        return []
    by_id = {m.get("messageId"): m for m in rows if m.get("messageId")}
    return walk_up(
        rows[-1],
        lambda node: by_id.get(node.get("parentMessageId")),
        lambda node: node.get("messageId"),
    )


def _branch(item: dict[str, Any]) -> list[dict[str, Any]]:
    msgs = as_list(item.get("messagesTree")) or as_list(item.get("messages"))
    if any(isinstance(m, dict) and isinstance(m.get("children"), list) for m in msgs):
        return _nested(msgs)
    return _flat(msgs)


def _text(msg: dict[str, Any], extras: Extras) -> str:
    texts: list[str] = []
    for part in as_list(msg.get("content")):
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "think" and isinstance(part.get("think"), str):
            extras.think(part["think"])
        elif kind == "tool_call" and isinstance(part.get("tool_call"), dict):
            call = part["tool_call"]
            args = call.get("args")
            name, call_id = str(call.get("name") or ""), str(call.get("id") or "")
            extras.call(name, args if isinstance(args, str) else json.dumps(args), call_id)
            if isinstance(call.get("output"), str):
                extras.result(call["output"], name, call_id)
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(as_dict(part.get("text")).get("value"), str):
            texts.append(part["text"]["value"])
    if isinstance(msg.get("text"), str) and msg["text"]:
        return msg["text"]
    return "\n".join(texts)


def conversation(item: Any) -> Conversation | None:
    if not looks_like(item):
        return None
    entries = []
    for msg in _branch(item):
        user = msg.get("isCreatedByUser")
        if user is None:
            user = str(msg.get("sender", "")).lower() in ("user", "human")
        extras = Extras()
        text = _text(msg, extras)
        if not text.strip() and not extras:
            continue
        extra: dict[str, Any] = {}
        model = msg.get("model")
        if not user and isinstance(model, str) and model:
            extra["provider"] = {"name": str(msg.get("endpoint") or "librechat"), "model": model}
        entry = timed(
            text_entry("user" if user else "assistant", text, **extra), to_ms(msg.get("createdAt"))
        )
        entries.append(extras.put_on(entry))
    first = _branch(item)[:1]
    when = item.get("createdAt") or (first[0].get("createdAt") if first else None)
    return Conversation(
        source="librechat",
        source_id=str(item["conversationId"]),
        title=str(item.get("title") or ""),
        created_ms=to_ms(when),
        entries=entries,
    )


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    return read_conversations(inp, conversation, "LibreChat")


def looks_like(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and bool(item.get("conversationId"))
        and isinstance(item.get("messagesTree", item.get("messages")), list)
    )
