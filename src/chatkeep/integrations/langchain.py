"""LangChain on a chatkeep store (extra ``chatkeep[langchain]``).

``ChatkeepChatMessageHistory(store, session_id)`` is a LangChain ``BaseChatMessageHistory``
kept as the saved chatkeep session ``session_id`` (created on the first message, listed and
searchable in the drawer). Each message is kept verbatim (``message_to_dict`` under
``langchainMessage``) and comes back equal; image data URLs are stored once. Entries a chatkeep
face added to the same session come back as ``HumanMessage`` / ``AIMessage``.

``request_rules`` is chatkeep's request rules as a runnable for a chain
(``history_messages | request_rules | model``): images the model has already answered go as
labels, cold long attachments as stubs, while the history keeps every pixel.
``apply_request_rules_to_messages`` is the same as a plain function.

This module subclasses LangChain's base class, so it imports ``langchain_core`` when it is
imported — it is the only chatkeep module that does.
"""

from __future__ import annotations

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

from ._common import Entry, SavedConversation, apply_request_rules, image_part

MESSAGE_KEY = "langchainMessage"
_ROLES = {"human": "user", "ai": "assistant", "AIMessageChunk": "assistant"}


def _content(content: Any) -> str | list[dict[str, Any]]:
    """LangChain content (a string or content blocks) as chatkeep content."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif not isinstance(block, dict):
            continue
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image_url":
            url = block.get("image_url")
            parts.append(image_part(url.get("url") if isinstance(url, dict) else url))
        elif block.get("type") == "image" and block.get("base64"):
            mime = block.get("mime_type") or "image/png"
            parts.append(image_part(f"data:{mime};base64,{block['base64']}"))
        else:
            parts.append({"type": "text", "text": f"[{block.get('type', 'block')}]"})
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
        self._saved.extend([message_to_entry(m) for m in messages])

    def clear(self) -> None:
        self._saved.clear()


def apply_request_rules_to_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """chatkeep's request rules over LangChain messages (changed ones are copies; system and
    tool messages pass through)."""
    msgs = list(messages)
    views: list[Entry | None] = [
        _view(m) if m.type in ("human", "ai", "AIMessageChunk") else None for m in msgs
    ]
    changed = apply_request_rules(views)
    out = []
    for m, content in zip(msgs, changed, strict=True):
        out.append(m if content is None else m.model_copy(update={"content": _lc_content(content)}))
    return out


def _rules(value: Any) -> Any:
    """Accept a message list or a prompt value (what a prompt template gives)."""
    if hasattr(value, "to_messages"):
        value = value.to_messages()
    return apply_request_rules_to_messages(value)


request_rules: RunnableLambda[Any, list[BaseMessage]] = RunnableLambda(
    _rules, name="chatkeep_request_rules"
)
