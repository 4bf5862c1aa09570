"""Pydantic AI messages as the lean JSON objects :mod:`.pydantic_ai` stores (extra
``chatkeep[pydantic-ai]``): each message without its null fields and a response's usage
without the counts at their defaults, kept so only when it reads back as the same message."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse


def message_objects(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """Pydantic AI's JSON of each message, parsed, as lean as reads back the same message (its
    full JSON dumped again is the same bytes): without its null fields, and a response's usage
    without the counts left at their defaults (the usage itself is kept); else, for one
    message, its usage whole, else its full JSON. Less to store, and less to parse on every
    read: a usage is validated field by field by a Python validator of Pydantic AI's.

    Checked together: when the lean forms of all of them read back the same, one dump, one
    parse and one check serve the lot; else each is checked on its own. What a lean form drops
    is its message's *shape*: a shape that has read back once reads back again, since what the
    form leaves out is then the same fields of the same classes, so a message of a shape
    already checked in this process is not checked again. A message holding only Pydantic AI's
    own objects (:func:`_typed_shape`) is dumped lean by Pydantic itself; any other (a tool's
    arguments or return value, metadata: values of any type) has its nulls found in its full
    JSON (:func:`_strip`), since a null left out of an object of the caller's would not read
    back and its shape must say so."""
    batch = list(messages)
    if not batch:
        return []
    typed = _typed_lean(batch)
    if typed is not None and all(shape in _READ_BACK for shape in typed[1]):
        _remember(typed[1])
        return typed[0]
    full = ModelMessagesTypeAdapter.dump_json(batch)
    if typed is not None and _reads_back(typed[0], full):
        _remember(typed[1])
        return typed[0]
    whole: list[dict[str, Any]] = json.loads(full)
    kept, shapes = _lean(batch, whole)
    if all(shape in _READ_BACK for shape in shapes) or _reads_back(kept, full):
        _remember(shapes)
        return kept
    if len(batch) > 1:  # one of them needs more: each on its own
        return [message_objects([m])[0] for m in batch]
    if isinstance(batch[0], ModelResponse):  # the usage whole, then the full JSON
        kept[0]["usage"] = whole[0]["usage"]
        if _reads_back(kept, full):
            return kept
    return whole


def _typed_lean(
    messages: list[ModelMessage],
) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]] | None:
    """The lean forms of ``messages`` as Pydantic dumps them (``exclude_none``) and each one's
    shape, or ``None`` when one of them holds more than Pydantic AI's own objects."""
    kept = ModelMessagesTypeAdapter.dump_python(messages, mode="json", exclude_none=True)
    shapes: list[tuple[Any, ...]] = []
    for message in kept:
        usage = message.get("usage")
        if isinstance(usage, dict):
            message["usage"] = _counted(usage)
        shape = _typed_shape(message)
        if shape is None:
            return None
        shapes.append(shape)
    return kept, shapes


def _typed_shape(message: dict[str, Any]) -> tuple[Any, ...] | None:
    """The shape of a lean message that holds only Pydantic AI's own objects, each known by
    its place and its ``kind``/``part_kind``: the keys present in the message, in each part,
    in each item of a user prompt's content and in the usage (the fields left out are then
    those its class has beyond them). ``None`` when an object is found anywhere else (a
    tool's arguments, metadata: the caller's values, whose left-out nulls a shape of keys
    cannot see)."""
    shape: list[Any] = ["typed"]
    for key, value in message.items():
        if key == "parts" and isinstance(value, list):
            for part in value:
                if not isinstance(part, dict):
                    return None
                prompt = part.get("part_kind") == "user-prompt"  # its content: typed items
                got = _object_shape(part, "part_kind", content=prompt)
                if got is None:
                    return None
                shape.append(got)
        elif key == "usage" and isinstance(value, dict):
            details = value.get("details", {})
            if not isinstance(details, dict) or not _plain(details.values()):
                return None
            if not _plain(v for k, v in value.items() if k != "details"):
                return None
            shape.append(("usage", *value))
        elif isinstance(value, dict | list):
            return None
        shape.append(key)
    shape.append(message.get("kind"))
    return tuple(shape)


def _object_shape(value: dict[str, Any], tag: str, content: bool = False) -> tuple[Any, ...] | None:
    """The keys of one of Pydantic AI's objects (known by its ``tag`` field) whose values are
    plain (lists of plain values included); with ``content`` (a user prompt's), its
    ``content`` may be a list of plain values and tagged items (images, documents: Pydantic AI's
    own classes). Anywhere else a list holding an object is the caller's value: ``None``."""
    kind = value.get(tag)
    if not isinstance(kind, str):
        return None
    shape: list[Any] = [kind]
    for key, item in value.items():
        if content and key == "content" and isinstance(item, list):
            for x in item:
                if isinstance(x, dict):
                    got = _object_shape(x, "kind")
                    if got is None:
                        return None
                    shape.append(got)
                elif isinstance(x, list):
                    return None
                else:
                    shape.append(None)
        elif isinstance(item, dict) or (isinstance(item, list) and not _plain(item)):
            return None
        shape.append(key)
    return tuple(shape)


def _plain(values: Any) -> bool:
    """Whether none of ``values`` is an object or a list (nothing in them left out)."""
    return not any(isinstance(v, dict | list) for v in values)


#: Shapes of lean forms that have read back as their message (:func:`message_objects`), the
#: newest last; at most :data:`_SHAPES_KEPT` of them.
_READ_BACK: dict[tuple[Any, ...], None] = {}
_SHAPES_KEPT = 1024
_SHAPES_LOCK = threading.Lock()


def _remember(shapes: list[tuple[Any, ...]]) -> None:
    with _SHAPES_LOCK:
        for shape in shapes:
            _READ_BACK.pop(shape, None)
            _READ_BACK[shape] = None
        while len(_READ_BACK) > _SHAPES_KEPT:
            del _READ_BACK[next(iter(_READ_BACK))]


def _lean(
    messages: list[ModelMessage], parsed: list[Any]
) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]]:
    """The parsed dump of ``messages`` without its nulls (a new value: ``parsed`` is left as it
    is) and each response's usage without the counts at their defaults; with each message's
    shape: the paths of the nulls left out, and the usage counts left out."""
    kept: list[dict[str, Any]] = []
    shapes: list[tuple[Any, ...]] = []
    for message, dumped in zip(messages, parsed, strict=True):
        nulls: list[tuple[Any, ...]] = []
        short = _strip(dumped, (), nulls)
        usage = short.get("usage") if isinstance(message, ModelResponse) else None
        dropped: tuple[str, ...] = ()
        if isinstance(usage, dict):
            short["usage"] = _counted(usage)
            dropped = tuple(k for k in usage if k not in short["usage"])
        kept.append(short)
        shapes.append((tuple(nulls), dropped))
    return kept, shapes


def _reads_back(kept: list[dict[str, Any]], full: bytes) -> bool:
    """Whether ``kept`` reads back as the messages whose full JSON is ``full``."""
    back = ModelMessagesTypeAdapter.validate_json(message_json(kept))
    return ModelMessagesTypeAdapter.dump_json(back) == full


_NONE = object()


def _strip(value: Any, path: tuple[Any, ...], nulls: list[tuple[Any, ...]]) -> Any:
    """A parsed JSON value without the ``null`` members of its objects (as Pydantic's
    ``exclude_none`` dumps it; list items stay); the path of each member left out is added to
    ``nulls``: the keys and list positions leading to it, and the ``kind`` or ``part_kind`` of
    every object on the way (which class of Pydantic AI's it is)."""
    if isinstance(value, list):
        return [_strip(v, (*path, i), nulls) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    tag = value.get("part_kind", value.get("kind"))
    if isinstance(tag, str):
        path = (*path, tag)
    out: dict[str, Any] = {}
    for k, v in value.items():
        if v is None:
            nulls.append((*path, k))
        elif isinstance(v, dict | list):
            out[k] = _strip(v, (*path, k), nulls)
        else:
            out[k] = v
    return out


def _counted(usage: dict[str, Any]) -> dict[str, Any]:
    """A dumped usage without the counts left at their defaults."""
    defaults = _usage_defaults()
    return {k: v for k, v in usage.items() if defaults.get(k, _NONE) != v}


@functools.cache
def _usage_defaults() -> dict[str, Any]:
    """A response's usage as Pydantic AI dumps it when every count is at its default."""
    dumped = json.loads(ModelMessagesTypeAdapter.dump_json([ModelResponse(parts=[])]))
    return dict(dumped[0]["usage"])


def message_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
