"""LangChain on a chatkeep store (extra ``chatkeep[langchain]``).

``ChatkeepChatMessageHistory(store, session_id)`` is a LangChain ``BaseChatMessageHistory``
kept as the saved chatkeep session ``session_id`` (created on the first message, listed and
searchable in the drawer). Each message is kept verbatim (``message_to_dict`` under
``langchainMessage``) and comes back equal; image data URLs are stored once. Entries a chatkeep
face added to the same session come back as ``HumanMessage`` / ``AIMessage``.

``request_rules`` is chatkeep's request rules as a ``Runnable`` to compose before any chat
model (``request_rules | model``, ``prompt | request_rules | model``): images the model has
already answered go as labels, cold long attachments as stubs, while the history keeps every
pixel. Images are recognised in LangChain's content-block shapes (``image_url``, the standard
``image`` block with ``base64``/``url``, Anthropic's ``source``); blocks the rules leave alone
keep their own shape.
``apply_request_rules_to_messages`` is the same as a plain function.

This module subclasses LangChain's base class, so it imports ``langchain_core`` when it is
imported — it is the only chatkeep module that does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.runnables import RunnableLambda

import chatkeep

from ._common import Entry, SavedConversation, apply_request_rules, image_part, kept_as_text

MESSAGE_KEY = "langchainMessage"
_ROLES = {"human": "user", "ai": "assistant", "AIMessageChunk": "assistant"}


def block_image_url(block: Any) -> str | None:
    """The image a LangChain content block holds, as a URL (a data URL for inline bytes), in
    every shape LangChain passes: OpenAI's ``image_url`` (a dict or a string), the standard
    ``image`` block (``base64``/``data`` + ``mime_type``, or ``url``, with or without
    ``source_type``) and Anthropic's ``source``; ``None`` for anything else."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "image_url":
        url = block.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        return url if isinstance(url, str) else None
    if kind != "image":
        return None
    source = block.get("source")
    if isinstance(source, dict):  # Anthropic: {"type": "base64", "media_type", "data"} / url
        if source.get("type") == "base64" and isinstance(source.get("data"), str):
            return f"data:{source.get('media_type') or 'image/png'};base64,{source['data']}"
        url = source.get("url")
        return url if isinstance(url, str) else None
    data = block.get("base64") or (block.get("data") if block.get("source_type") != "url" else None)
    if isinstance(data, str) and data:
        return f"data:{block.get('mime_type') or 'image/png'};base64,{data}"
    url = block.get("url")
    if isinstance(url, str):
        return url
    file_id = block.get("file_id") or block.get("id")
    return f"file:{file_id}" if isinstance(file_id, str) else None


def _parts(content: Any) -> list[tuple[dict[str, Any], Any]]:
    """LangChain content blocks as (chatkeep part, the block it came from)."""
    out: list[tuple[dict[str, Any], Any]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            out.append(({"type": "text", "text": block}, block))
            continue
        url = block_image_url(block)
        if url is not None:
            out.append((image_part(url), block))
        elif isinstance(block, dict) and block.get("type") == "text":
            out.append(({"type": "text", "text": str(block.get("text", ""))}, block))
        elif isinstance(block, dict):
            out.append(({"type": "text", "text": f"[{block.get('type', 'block')}]"}, block))
    return out


def _content(content: Any) -> str | list[dict[str, Any]]:
    """LangChain content (a string or content blocks) as chatkeep content."""
    if isinstance(content, str):
        return content
    parts = [p for p, _block in _parts(content)]
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _view(message: BaseMessage) -> Entry:
    role = _ROLES.get(message.type)
    content = _content(message.content)
    if role is None:
        role = "user" if message.type in ("system", "tool", "function") else "assistant"
        if isinstance(content, str):
            content = f"[{message.type}] {content}"
    return {"role": role, "content": content}


def message_to_entry(message: BaseMessage) -> Entry:
    if not isinstance(message, BaseMessage):
        raise chatkeep.InvalidValue(
            f"a LangChain message must be a BaseMessage, got {type(message).__name__}",
            hint="pass HumanMessage / AIMessage / SystemMessage / ToolMessage objects",
        )
    return {**_view(message), MESSAGE_KEY: message_to_dict(message)}


def _lc_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    blocks: list[Any] = []
    for p in content if isinstance(content, list) else []:
        if chatkeep.is_image_part(p):
            blocks.append({"type": "image_url", "image_url": {"url": chatkeep.image_part_url(p)}})
        elif isinstance(p, dict):
            blocks.append({"type": "text", "text": str(p.get("text", ""))})
    return blocks


def entry_to_message(entry: Entry) -> BaseMessage:
    kept = entry.get(MESSAGE_KEY)
    if isinstance(kept, str):  # kept as its JSON text: it holds what is no chatkeep value
        kept = json.loads(kept)
    if isinstance(kept, dict):
        return messages_from_dict([kept])[0]
    content = _lc_content(entry.get("content"))
    if entry.get("role") == "assistant":
        return AIMessage(content=content)
    return HumanMessage(content=content)


class ChatkeepChatMessageHistory(BaseChatMessageHistory):
    """LangChain chat history kept as the saved chatkeep session ``session_id``."""

    def __init__(self, store: Any, session_id: str) -> None:
        self._saved = SavedConversation(store, session_id)
        self.session_id = self._saved.session_id

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [entry_to_message(e) for e in self._saved.entries()]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._saved.extend([message_to_entry(m) for m in messages], kept_as_text(MESSAGE_KEY))

    def clear(self) -> None:
        self._saved.clear()


def _ruled_blocks(original: Any, content: Any) -> Any:
    """The message content after the rules: each block the rules left as it was is the
    original block itself (its shape kept); changed ones are text blocks or image_url blocks."""
    if isinstance(content, str) or not isinstance(original, list):
        return _lc_content(content)
    pairs = _parts(original)
    if not isinstance(content, list) or len(content) != len(pairs):
        return _lc_content(content)
    return [
        block if part == new else _lc_content([new])[0]
        for (part, block), new in zip(pairs, content, strict=True)
    ]


def apply_request_rules_to_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """chatkeep's request rules over LangChain messages (changed ones are copies; system and
    tool messages pass through)."""
    msgs = list(messages)
    views: list[Entry | None] = [None] * len(msgs)
    for k, m in enumerate(msgs):
        if m.type in ("human", "ai", "AIMessageChunk"):
            blocks = [p for p, _b in _parts(m.content)]
            has_image = any(chatkeep.is_image_part(p) for p in blocks)
            views[k] = {**_view(m), "content": blocks} if has_image else _view(m)
    changed = apply_request_rules(views)
    out = []
    for m, content in zip(msgs, changed, strict=True):
        if content is None:
            out.append(m)
        else:
            out.append(m.model_copy(update={"content": _ruled_blocks(m.content, content)}))
    return out


def _rules(value: Any) -> Any:
    """Accept a message list or a prompt value (what a prompt template gives)."""
    if hasattr(value, "to_messages"):
        value = value.to_messages()
    return apply_request_rules_to_messages(value)


request_rules: RunnableLambda[Any, list[BaseMessage]] = RunnableLambda(
    _rules, name="chatkeep_request_rules"
)
