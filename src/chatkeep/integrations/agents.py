"""The OpenAI Agents SDK on a chatkeep store (extra ``chatkeep[agents]``).

``ChatkeepSession(store, session_id)`` implements the SDK's ``Session`` protocol
(``get_items``, ``add_items``, ``pop_item``, ``clear_session``; async): the conversation is the
saved chatkeep session ``session_id`` — created on the first ``add_items``, listed and searchable
in the drawer like any other, an existing chatkeep session continued when its id is given.
Items are kept exactly as the SDK gives them (under ``agentsItem`` on each entry) and come back
equal; image data URLs are stored once however many turns or sessions repeat them. Entries a
chatkeep face added to the same session come back as plain SDK messages.

``call_model_input_filter`` (``RunConfig(call_model_input_filter=…)``) applies chatkeep's
request rules to every model call: images the model has already answered go as short labels,
cold long attachments as stubs; the session itself keeps every pixel.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from typing import TYPE_CHECKING, Any

import chatkeep

from ._common import Entry, SavedConversation, apply_request_rules, image_part, kept_as_text

if TYPE_CHECKING:
    from agents.run_config import CallModelData, ModelInputData

ITEM_KEY = "agentsItem"
_TEXT_TYPES = ("input_text", "output_text", "text")
_ROLES = {"user": "user", "assistant": "assistant", "system": "user", "developer": "user"}


def _parts(content: Any) -> str | list[dict[str, Any]]:
    """A message item's content as chatkeep content (text parts, data-URL image parts)."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for p in content if isinstance(content, list) else []:
        if not isinstance(p, dict):
            continue
        if p.get("type") in _TEXT_TYPES and isinstance(p.get("text"), str):
            parts.append({"type": "text", "text": p["text"]})
        elif p.get("type") == "input_image":
            parts.append(image_part(p.get("image_url") or p.get("file_id")))
        elif p.get("type") == "refusal":
            parts.append({"type": "text", "text": f"[refusal] {p.get('refusal', '')}"})
        else:
            parts.append({"type": "text", "text": f"[{p.get('type', 'part')}]"})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _message_entry(item: dict[str, Any]) -> Entry | None:
    """The chatkeep view of a message item (``None`` for items that are not messages)."""
    role = item.get("role")
    if role not in _ROLES or item.get("type", "message") != "message":
        return None
    content = _parts(item.get("content"))
    if role in ("system", "developer") and isinstance(content, str):
        content = f"[{role}] {content}"
    return {"role": _ROLES[role], "content": content}


def _summary(item: dict[str, Any]) -> Entry:
    """The drawer's view of a non-message item: a tool call, its output, reasoning, …"""
    kind = str(item.get("type", "item"))
    if kind == "function_call":
        return {
            "role": "assistant",
            "content": f"[tool call] {item.get('name')}({item.get('arguments', '')})",
        }
    if kind.endswith("_output"):
        out = item.get("output")
        text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False, default=str)
        return {"role": "user", "content": f"[tool result] {text}"}
    if kind == "reasoning":
        summary = [s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict)]
        return {"role": "assistant", "content": "[reasoning] " + " ".join(summary)}
    return {"role": "assistant", "content": f"[{kind}]"}


def item_to_entry(item: Any) -> Entry:
    """One SDK input item as a chatkeep entry that keeps the item verbatim."""
    if not isinstance(item, dict):
        raise chatkeep.InvalidValue(
            f"an Agents SDK item must be a dict, got {type(item).__name__}",
            hint="pass the items the SDK gives (TResponseInputItem dicts)",
        )
    view = _message_entry(item) or _summary(item)
    return {**view, ITEM_KEY: item}


def entry_to_item(entry: Entry) -> dict[str, Any]:
    """The SDK item an entry holds, or a plain message for entries chatkeep wrote."""
    item = entry.get(ITEM_KEY)
    if isinstance(item, str):  # kept as its JSON text: it holds what is no chatkeep value
        item = json.loads(item)
    if isinstance(item, dict):
        return item
    content = entry.get("content")
    role = "assistant" if entry.get("role") == "assistant" else "user"
    if isinstance(content, str):
        return {"role": role, "content": content}
    text_type = "output_text" if role == "assistant" else "input_text"
    parts: list[dict[str, Any]] = []
    for p in content if isinstance(content, list) else []:
        if chatkeep.is_image_part(p):
            parts.append(
                {"type": "input_image", "image_url": chatkeep.image_part_url(p), "detail": "auto"}
            )
        elif isinstance(p, dict):
            parts.append({"type": text_type, "text": str(p.get("text", ""))})
    if role == "assistant":
        return {"role": "assistant", "content": [p for p in parts if p["type"] == "output_text"]}
    return {"role": role, "content": parts}


class ChatkeepSession:
    """An Agents SDK ``Session`` kept as the saved chatkeep session ``session_id``.

    ``session_settings`` (a ``SessionSettings`` or a dict of its fields, as the SDK's own
    sessions take it): its ``limit`` is what ``get_items()`` returns when no limit is given.
    One session may be used from several threads, each with its own event loop; the writes of
    one loop are made in the order they were called."""

    session_settings: Any = None

    def __init__(self, store: Any, session_id: str, session_settings: Any | None = None) -> None:
        self._saved = SavedConversation(store, session_id)
        self.session_id = self._saved.session_id
        self.session_settings = _settings(session_settings)
        self._locks: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()
        self._guard = threading.Lock()

    def _lock(self) -> asyncio.Lock:
        """The running event loop's lock over this session's writes (an ``asyncio.Lock``
        serves one loop only; the store itself orders the writes of several)."""
        loop = asyncio.get_running_loop()
        with self._guard:
            lock = self._locks.get(loop)
            if lock is None:
                lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def get_items(self, limit: int | None = None) -> list[Any]:
        if limit is None:
            limit = getattr(self.session_settings, "limit", None)
        entries = await asyncio.to_thread(self._saved.entries)
        if limit is not None:
            entries = entries[-limit:] if limit > 0 else []
        return [entry_to_item(e) for e in entries]

    async def add_items(self, items: list[Any]) -> None:
        entries = [item_to_entry(i) for i in items]
        async with self._lock():
            await asyncio.to_thread(self._saved.extend, entries, kept_as_text(ITEM_KEY))

    async def pop_item(self) -> Any | None:
        async with self._lock():
            entry = await asyncio.to_thread(self._saved.pop)
        return entry_to_item(entry) if entry is not None else None

    async def clear_session(self) -> None:
        async with self._lock():
            await asyncio.to_thread(self._saved.clear)


def _settings(value: Any) -> Any:
    """``value`` as the SDK's ``SessionSettings`` (a dict checked and converted as the SDK's
    own sessions do; ``None``: the defaults); as given on an SDK without session settings."""
    try:  # imported when a session is made: importing this module needs no SDK
        from agents.memory.session_settings import SessionSettings, coerce_session_settings
    except ImportError:  # an SDK older than session settings
        return value
    return SessionSettings() if value is None else coerce_session_settings(value)


def apply_rules_to_items(items: list[Any]) -> list[Any]:
    """chatkeep's request rules over SDK input items; items the rules leave alone (and every
    non-message item) are returned as they are, the list itself when nothing changed."""
    views = [_message_entry(i) if isinstance(i, dict) else None for i in items]
    changed = apply_request_rules(views)
    if all(c is None for c in changed):
        return items
    out = list(items)
    for k, content in enumerate(changed):
        if content is not None:
            view = views[k]
            assert view is not None
            new = entry_to_item({"role": view["role"], "content": content})
            out[k] = {**items[k], "content": new["content"]}
    return out


def call_model_input_filter(data: CallModelData[Any]) -> ModelInputData:
    """``RunConfig(call_model_input_filter=call_model_input_filter)``: the SDK calls it before
    each model call; it returns the input with chatkeep's request rules applied."""
    from agents.run_config import ModelInputData  # lazy: the SDK is an optional extra

    model_data = data.model_data
    items = apply_rules_to_items(model_data.input)
    if items is model_data.input:
        return model_data
    return ModelInputData(input=items, instructions=model_data.instructions)
