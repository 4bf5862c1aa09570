"""Open WebUI's chat export (Settings → Chats → Export, or a chat's ⋯ → Download → JSON).

A JSON array of ``{id, title, created_at, chat: {title, timestamp, history: {currentId,
messages: {id: {id, parentId, childrenIds, role, content, timestamp, files?, images?,
output?}}}, messages: [...]}}`` (one chat may also be the whole document). The active branch —
from ``history.currentId`` back to the root through ``parentId`` — is kept; regenerated answers
and edited questions on other branches are left out. Image files (``files: [{type: "image",
url}]`` or ``images: [url]``) given as data URLs become image parts; other URLs are named in
the text. Without a ``history`` tree the flat ``chat.messages`` list is taken in order.

An answer's reasoning and tool calls are kept apart from its text (SPEC §14). Open WebUI writes
them into ``content`` as ``<details type="reasoning">`` blocks (the thinking, quoted with
``>``) and ``<details type="tool_calls" name=… arguments=… result=…>`` blocks (HTML-escaped
attributes; older releases put the result in the block's body); newer releases also keep them in
``output[]`` (``reasoning`` items, ``function_call`` / ``function_call_output`` items and
``message`` items holding the answer). ``output[]`` is read when it holds them, else the
``<details>`` blocks; the blocks never stay in the text, and an answer held only in
``output[]`` is kept. Each entry carries its message's ``timestamp`` as ``createdAt``.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

from .. import dataurl
from .model import (
    Conversation,
    Extras,
    Skipped,
    as_dict,
    as_list,
    clean_role,
    node_at,
    parts_entry,
    timed,
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


_OPEN = re.compile(r"<details\b([^>]*)>", re.I)
_CLOSE = "</details>"
_ATTR = re.compile(r'([\w-]+)\s*=\s*"([^"]*)"')
_SUMMARY = re.compile(r"\A\s*<summary>.*?</summary>", re.S | re.I)


def _unquote(body: str) -> str:
    """The text of a reasoning block: HTML entities decoded, the ``> `` quoting removed."""
    lines = html.unescape(body).strip("\n").split("\n")
    return "\n".join(line[2:] if line.startswith("> ") else line.lstrip(">") for line in lines)


def _block(attrs: dict[str, str], body: str, extras: Extras) -> bool:
    """Read one ``<details>`` block into ``extras``; ``False`` for a kind not read here."""
    body = _SUMMARY.sub("", body, count=1).strip()
    kind = attrs.get("type", "")
    if kind == "reasoning":
        extras.think(_unquote(body))
    elif kind == "tool_calls":
        name, call_id = attrs.get("name", ""), attrs.get("id", "")
        if name or "arguments" in attrs:
            extras.call(name, attrs.get("arguments", ""), call_id)
        result = attrs["result"] if "result" in attrs else html.unescape(body)
        if result:
            extras.result(result, name, call_id)
    else:
        return False
    return True


def _from_details(content: str, extras: Extras) -> str:
    """``content`` without its reasoning and tool-call ``<details>`` blocks, read into
    ``extras`` (other blocks stay: they are the answer's own HTML). One pass over the text."""
    kept: list[str] = []
    at = 0
    while (found := _OPEN.search(content, at)) is not None:
        end = content.find(_CLOSE, found.end())
        if end < 0:
            break
        attrs = {k.lower(): html.unescape(v) for k, v in _ATTR.findall(found.group(1))}
        stop = end + len(_CLOSE)
        if _block(attrs, content[found.end() : end], extras):
            kept.append(content[at : found.start()])
            at = len(content) - len(content[stop:].lstrip())
        else:
            kept.append(content[at:stop])
            at = stop
    kept.append(content[at:])
    return "".join(kept).strip()


def _texts(items: Any) -> str:
    return "\n".join(
        p["text"] for p in as_list(items) if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _from_output(output: list[Any], extras: Extras) -> str | None:
    """The answer held in ``output[]`` (``None`` when it holds none of the items read here);
    reasoning and tool calls to ``extras``."""
    answer: list[str] = []
    names: dict[str, str] = {}
    found = False
    for item in output:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            found = True
            extras.think(_texts(item.get("content")) or _texts(item.get("summary")))
        elif kind == "function_call":
            found = True
            call_id = str(item.get("call_id") or item.get("id") or "")
            name = str(item.get("name") or "")
            names[call_id] = name
            args = item.get("arguments")
            extras.call(name, args if isinstance(args, str) else json.dumps(args), call_id)
        elif kind == "function_call_output":
            found = True
            call_id = str(item.get("call_id") or "")
            out = item.get("output")
            text = out if isinstance(out, str) else _texts(out)
            extras.result(text, names.get(call_id, ""), call_id)
        elif kind == "message":
            found = True
            text = _texts(item.get("content"))
            if text:
                answer.append(text)
    return "\n\n".join(answer) if found else None


def _answer(msg: dict[str, Any], extras: Extras) -> str:
    content = msg.get("content")
    text = content if isinstance(content, str) else ""
    if msg.get("role") != "assistant":
        return text
    from_output = _from_output(as_list(msg.get("output")), Extras())
    if from_output is None:
        return _from_details(text, extras)
    _from_output(as_list(msg.get("output")), extras)
    stripped = _from_details(text, Extras())
    return from_output or stripped


def conversation(item: Any) -> Conversation | None:
    if not looks_like(item):
        return None
    chat = as_dict(item.get("chat")) or item
    entries = []
    for msg in _branch(chat):
        role = clean_role(msg.get("role"))
        if role is None:
            continue
        extras = Extras()
        text = _answer(msg, extras)
        urls, notes = _images(msg)
        if not text.strip() and not urls and not notes and not extras:
            continue
        extra: dict[str, Any] = {}
        model = msg.get("model")
        if role == "assistant" and isinstance(model, str) and model:
            extra["provider"] = {"name": "openwebui", "model": model}
        entry = parts_entry(role, [text, *notes], urls, **extra)
        entries.append(extras.put_on(timed(entry, to_ms(msg.get("timestamp")))))
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
