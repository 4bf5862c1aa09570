"""Pydantic AI on a chatkeep store (extra ``chatkeep[pydantic-ai]``).

``ChatkeepMessageHistory(store, session_id)`` keeps a Pydantic AI conversation — its
``ModelMessage`` list — as the saved chatkeep session ``session_id`` (created on the first save,
listed and searchable in the drawer)::

    history = ChatkeepMessageHistory(store, "user-42")
    result = agent.run_sync(prompt, message_history=history.messages())
    history.add_messages(result.new_messages())

Each message is one entry: ``role``/``content`` for the drawer, plus the message itself in Pydantic
AI's own JSON form (``ModelMessagesTypeAdapter``): as a JSON object under ``pydanticAi``, or,
for a message with images, under ``pydanticAiMessage`` with each image's bytes
(``BinaryContent``) as the same data URL the drawer's image part holds, so the store keeps them
once, however many turns or sessions repeat them; long documents are kept once the same way.
(Entries written before ``pydanticAi`` keep the message's JSON text under ``pydanticAiMessage``;
they read the same.) Saving appends: what the session holds is never rewritten.

``request_rules`` is a history processor (``Agent(…, history_processors=[request_rules])``, or
``capabilities=[ProcessHistory(request_rules)]`` where Pydantic AI takes processors as a
capability) applying chatkeep's request rules before each model call: images the model has
answered in earlier turns go as short labels, cold long attachments as stubs. The run's own
question is left whole, so ``result.new_messages()`` — what is saved — keeps every pixel.

Pydantic AI is imported when this module is (its message classes are what it converts); no other
chatkeep module imports it.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field, Json, TypeAdapter, ValidationError
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from typing_extensions import TypedDict  # Pydantic reads a TypedDict from here before 3.12

import chatkeep

from .._common import Entry, SavedConversation, apply_request_rules, image_part
from .lean import message_json as _json
from .lean import message_objects as _message_objects

__all__ = [
    "MESSAGE_KEY",
    "OBJECT_KEY",
    "ChatkeepMessageHistory",
    "entry_to_message",
    "message_to_entry",
]

#: A message showing images, its image bytes as data URLs (or, written before
#: :data:`OBJECT_KEY`, any message as its JSON text).
MESSAGE_KEY = "pydanticAiMessage"
#: A message without images, as its JSON object: read back by Pydantic's parser straight from
#: the entry's stored text, with no JSON text inside it to unescape and parse again.
OBJECT_KEY = "pydanticAi"


def _binary_url(item: dict[str, Any]) -> None:
    """In a dumped ``BinaryContent`` image, its ``data`` (URL-safe base64, as Pydantic AI
    dumps bytes) as the data URL the drawer's image part holds (in place)."""
    mime, data = item.get("media_type"), item.get("data")
    if isinstance(mime, str) and mime.startswith("image/") and isinstance(data, str):
        raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        item["data"] = f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def _walk(value: Any, fn: Any) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if v.get("kind") == "binary":
                fn(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _unurl(item: dict[str, Any]) -> None:
    data = item.get("data")
    if isinstance(data, str) and data.startswith("data:") and ";base64," in data:
        raw = base64.b64decode(data.split(";base64,", 1)[1])
        item["data"] = base64.urlsafe_b64encode(raw).decode("ascii")


def _user_content(part: UserPromptPart) -> list[dict[str, Any]]:
    items = [part.content] if isinstance(part.content, str) else list(part.content)
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            out.append({"type": "text", "text": item})
        elif isinstance(item, BinaryContent) and item.media_type.startswith("image/"):
            out.append(image_part(_data_url(item)))
        elif isinstance(item, ImageUrl):
            out.append(image_part(item.url))
        else:
            kind = getattr(item, "kind", type(item).__name__)
            out.append({"type": "text", "text": f"[{kind}]"})
    return out


def _data_url(item: BinaryContent) -> str:
    return f"data:{item.media_type};base64,{base64.b64encode(item.data).decode('ascii')}"


def _flat(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _view(message: Any) -> Entry | None:
    """The drawer's view of a message (``None`` for a request without a user prompt: tool
    returns, a system prompt alone — kept, shown as a label)."""
    if isinstance(message, ModelResponse):
        texts = [p.content for p in message.parts if isinstance(p, TextPart)]
        calls = [getattr(p, "tool_name", "") for p in message.parts if p.part_kind == "tool-call"]
        text = "\n".join(texts + [f"[tool call] {c}" for c in calls if c])
        return {"role": "assistant", "content": text}
    if isinstance(message, ModelRequest):
        prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
        if prompts:
            return {
                "role": "user",
                "content": _flat([x for p in prompts for x in _user_content(p)]),
            }
    return None


def message_to_entry(message: ModelMessage) -> Entry:
    """One Pydantic AI message as a chatkeep entry keeping the message whole."""
    return messages_to_entries([message])[0]


def messages_to_entries(messages: Sequence[ModelMessage]) -> list[Entry]:
    """Pydantic AI messages as chatkeep entries keeping each message whole."""
    for message in messages:
        if not isinstance(message, ModelRequest | ModelResponse):
            raise chatkeep.InvalidValue(
                f"a Pydantic AI message must be a ModelRequest or ModelResponse, got {type(message).__name__}",
                hint="pass what result.new_messages() / result.all_messages() return",
            )
    out = []
    for message, kept in zip(messages, _message_objects(messages), strict=True):
        view = _view(message)
        if view is None:
            kinds = ", ".join(sorted({p.part_kind for p in message.parts}))
            view = {"role": "user", "content": f"[{kinds}]"}
        if not _shows_images(view):  # read back as it is stored (no image URL to turn back)
            out.append({**view, OBJECT_KEY: kept})
            continue
        _walk(kept, _binary_url)  # an image: its bytes as the data URL the view holds (stored once)
        out.append({**view, MESSAGE_KEY: kept})
    return out


def _shows_images(entry: Entry) -> bool:
    content = entry.get("content")
    return isinstance(content, list) and any(chatkeep.is_image_part(p) for p in content)


def entry_to_message(entry: Entry) -> ModelMessage:
    """The message an entry keeps, or a plain request/response for entries chatkeep wrote."""
    if isinstance(entry.get(OBJECT_KEY), dict):
        return ModelMessagesTypeAdapter.validate_json(b"[" + _json(entry[OBJECT_KEY]) + b"]")[0]
    if isinstance(entry.get(MESSAGE_KEY), dict | str):
        return ModelMessagesTypeAdapter.validate_json(b"[" + _restored(entry) + b"]")[0]
    content = entry.get("content")
    if entry.get("role") == "assistant":
        return ModelResponse(parts=[TextPart(content=str(chatkeep.entry_text(entry)))])
    return ModelRequest(parts=[UserPromptPart(content=_pai_content(content, {}))])


def _restored(entry: Entry) -> bytes:
    """The message an entry keeps, as Pydantic AI's JSON text (bytes: pydantic-core reads
    them faster than a str); an entry showing images has its data URLs turned back."""
    kept = entry[MESSAGE_KEY]
    if isinstance(kept, str):
        return kept.encode("utf-8")
    if _shows_images(entry):
        _walk(kept, _unurl)
    return _json(kept)


def _as_text(entry: Entry) -> Entry:
    """An entry keeping its message as Pydantic AI's JSON text (under :data:`MESSAGE_KEY`, its
    images' bytes as Pydantic AI dumps them): for a message holding what chatkeep does not
    store as a value, an integer beyond 64 bits say."""
    out = {k: v for k, v in entry.items() if k not in (OBJECT_KEY, MESSAGE_KEY)}
    if isinstance(entry.get(OBJECT_KEY), dict):
        out[MESSAGE_KEY] = _json(entry[OBJECT_KEY]).decode("utf-8")
    else:
        out[MESSAGE_KEY] = _restored(entry).decode("utf-8")
    return out


class _Kept(TypedDict, total=False):
    """What a read needs of a stored entry: the message it keeps (validated on the way, in
    Rust), or, when it shows images, its parsed form (its data URLs still to turn back)."""

    pydanticAi: ModelMessage
    pydanticAiMessage: Annotated[
        Json[ModelMessage] | dict[str, Any], Field(union_mode="left_to_right")
    ]


_KEPT = TypeAdapter(list[_Kept])
#: Entries validated per call: one call per entry costs more, and so does one for a whole long
#: session (its parsed JSON no longer fits the processor's caches).
_CHUNK = 32


class _NotKept(Exception):
    """An entry keeping no Pydantic AI message (one chatkeep itself added)."""


def _message(entry: _Kept) -> ModelMessage:
    """The message of an entry read by :data:`_KEPT`; one kept in its parsed form (it shows
    images) has its data URLs turned back and is validated on its own."""
    if "pydanticAi" in entry:
        return entry["pydanticAi"]
    kept = entry.get("pydanticAiMessage")
    if kept is None:
        raise _NotKept
    if not isinstance(kept, dict):
        return kept
    _walk(kept, _unurl)
    message: ModelMessage = ModelMessagesTypeAdapter.validate_json(b"[" + _json(kept) + b"]")[0]
    return message


def _pai_content(content: Any, originals: dict[str, Any]) -> Any:
    """chatkeep content as user-prompt content (images: the original object when known)."""
    if isinstance(content, str):
        return content
    out: list[Any] = []
    for p in content if isinstance(content, list) else []:
        if chatkeep.is_image_part(p):
            url = chatkeep.image_part_url(p)
            out.append(originals.get(url) or ImageUrl(url=url))
        elif isinstance(p, dict):
            out.append(str(p.get("text", "")))
    return out


class ChatkeepMessageHistory:
    """A Pydantic AI message history kept as the saved chatkeep session ``session_id``."""

    def __init__(self, store: Any, session_id: str) -> None:
        self._saved = SavedConversation(store, session_id)
        self.session_id = self._saved.session_id

    def messages(self) -> list[ModelMessage]:
        """The conversation, for ``agent.run(…, message_history=…)``."""
        texts = self._saved.entries_json()
        out: list[ModelMessage] = []
        try:  # the entries' texts as stored, validated by Pydantic's own parser, 32 at a time
            for i in range(0, len(texts), _CHUNK):
                kept = _KEPT.validate_json("[" + ",".join(texts[i : i + _CHUNK]) + "]")
                try:  # entries written since OBJECT_KEY: their messages as they are
                    out.extend([k["pydanticAi"] for k in kept])
                except KeyError:  # images, or messages kept as JSON text
                    out.extend(_message(k) for k in kept)
        except (ValidationError, _NotKept):  # an entry chatkeep wrote, or a text that does not read
            return [entry_to_message(e) for e in self._saved.entries()]
        return out

    def add_messages(self, messages: Sequence[ModelMessage]) -> None:
        """Append messages (``result.new_messages()``)."""
        self._saved.extend(messages_to_entries(messages), as_text=_as_text)

    def clear(self) -> None:
        self._saved.clear()

    async def aget_messages(self) -> list[ModelMessage]:
        return await asyncio.to_thread(self.messages)

    async def aadd_messages(self, messages: Sequence[ModelMessage]) -> None:
        await asyncio.to_thread(self.add_messages, list(messages))


def _originals(message: ModelRequest) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in message.parts:
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
            for item in part.content:
                if isinstance(item, BinaryContent) and item.media_type.startswith("image/"):
                    out[_data_url(item)] = item
                elif isinstance(item, ImageUrl):
                    out[item.url] = item
    return out


def request_rules(messages: list[ModelMessage]) -> list[ModelMessage]:
    """A ``history_processors`` entry: chatkeep's request rules over the messages (changed
    requests are copies; the list itself when nothing changed)."""
    # the run's own question (the last user prompt) is never labelled: the model has not
    # answered it yet, and a history processor's output is what the run's result keeps
    current = max(
        (k for k, m in enumerate(messages) if isinstance(m, ModelRequest) and _view(m)), default=0
    )
    views = [_view(m) for m in messages[:current]]
    changed = apply_request_rules(views)
    if all(c is None for c in changed):
        return messages
    out = list(messages)
    for k, content in enumerate(changed):
        message = messages[k]
        if content is None or not isinstance(message, ModelRequest):
            continue
        new: UserPromptPart | None = UserPromptPart(
            content=_pai_content(content, _originals(message))
        )
        parts: list[Any] = []
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                if new is not None:
                    parts.append(UserPromptPart(content=new.content, timestamp=part.timestamp))
                    new = None
                continue
            parts.append(part)
        out[k] = dataclasses.replace(message, parts=parts)
    return out
