"""ChatGPT's data export: ``conversations.json``, split ``conversations-NNN.json``, or the zip.

A file holds a list of conversations, or one conversation object. Each conversation is
``{id|conversation_id, title, create_time, current_node, mapping}`` where ``mapping`` is a tree
of ``{id, parent, children, message}`` nodes. Only the branch that ends at ``current_node`` is
kept (walked back to the root): answers and questions that were edited away are left out. When
``current_node`` is missing from ``mapping`` the branch ends at the newest leaf (the leaf whose
message is the latest). An entry without ``mapping`` is skipped and reported.

Nodes without a message, system turns, hidden nodes (``metadata.is_visually_hidden_from_
conversation``, ``is_user_system_message``) and context nodes (``user_editable_context``,
``model_editable_context``) are left out. The rest of a reply is kept on the assistant entry of
its turn (SPEC §14): reasoning (``thoughts``, ``reasoning_recap``) as ``reasoning``; a message
addressed to a tool (``recipient`` other than ``all``) as a ``toolCalls`` record (``name`` the
recipient, ``arguments`` its text, ``id`` the message id); a ``tool`` message (code output,
browsing results, plugin answers) as a ``toolResult`` record (``name`` the tool, ``id`` the call
it answers). Images a tool generated (DALL·E's ``multimodal_text`` tool messages) are kept as an
assistant entry. Every entry carries its message's ``create_time`` as ``createdAt``.

``multimodal_text`` parts are strings and ``image_asset_pointer`` objects; a pointer
``file-service://file-XYZ`` or ``sediment://file_XYZ`` names a file of the zip (or the unpacked
directory) whose name starts with ``file-XYZ`` / ``file_XYZ``; it becomes an image part. A
pointer whose file is not in the export becomes the text ``[image not in the export: …]``.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from .model import (
    Conversation,
    Extras,
    Skipped,
    as_dict,
    as_list,
    clean_role,
    image_url_of,
    node_at,
    parts_entry,
    timed,
    title_of,
    to_ms,
    walk_up,
)
from .source import Input, read_conversations

CONTEXT_TYPES = {"user_editable_context", "model_editable_context"}
REASONING_TYPES = {"thoughts", "reasoning_recap"}
_SPLIT = re.compile(r"(^|/)conversations(-\d+)?\.json$")


def json_members(inp: Input) -> list[str]:
    """The conversation documents of an archive or directory, in order."""
    return sorted(n for n in inp.names() if _SPLIT.search(n))


class _Images:
    """Image files of the export, looked up by the file id an asset pointer names."""

    def __init__(self, inp: Input) -> None:
        self._inp = inp
        self._by_base: dict[str, str] = {}
        if inp.is_zip or inp.is_dir:
            for name in inp.names():
                if not name.lower().endswith(".json"):
                    self._by_base.setdefault(os.path.basename(name), name)
        self._bases = sorted(self._by_base)

    def url(self, pointer: str) -> str | None:
        file_id = pointer.split("://", 1)[-1].strip("/")
        if not file_id:
            return None
        k = bisect.bisect_left(self._bases, file_id)
        if k < len(self._bases) and self._bases[k].startswith(file_id):
            name = self._by_base[self._bases[k]]
            return image_url_of(self._inp.read_bytes(name), name)
        return None


def _when(node: Any) -> float:
    msg = as_dict(as_dict(node).get("message"))
    for key in ("create_time", "update_time"):
        value = msg.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return float("-inf")


def _active_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """Nodes from the root to ``current`` (the newest leaf when ``current`` is not in
    ``mapping``: the last of the leaves whose message is the latest)."""
    if not isinstance(current, str) or not isinstance(mapping.get(current), dict):
        leaves = [n for n in mapping.values() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            return []
        newest = max(_when(n) for n in leaves)
        node = [n for n in leaves if _when(n) == newest][-1]
    else:
        node = mapping[current]
    return walk_up(node, lambda n: node_at(mapping, n.get("parent")))


def _hidden(msg: dict[str, Any]) -> bool:
    meta = as_dict(msg.get("metadata"))
    return bool(
        meta.get("is_visually_hidden_from_conversation") or meta.get("is_user_system_message")
    )


def _to_tool(msg: dict[str, Any]) -> str | None:
    """The tool a message is addressed to (``None``: to the user)."""
    recipient = msg.get("recipient")
    return recipient if isinstance(recipient, str) and recipient not in ("all", "") else None


def _thoughts(content: dict[str, Any]) -> str:
    if content.get("content_type") == "reasoning_recap":
        recap = content.get("content")
        return recap if isinstance(recap, str) else ""
    out = []
    for thought in as_list(content.get("thoughts")):
        if isinstance(thought, dict):
            pieces = [thought.get("summary"), thought.get("content")]
            out.append("\n".join(p.strip() for p in pieces if isinstance(p, str) and p.strip()))
    return "\n\n".join(t for t in out if t)


def _plain(content: dict[str, Any]) -> str:
    """The text of a tool call or tool output, whatever its content type."""
    if content.get("content_type") in REASONING_TYPES:
        return _thoughts(content)
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(
            p if isinstance(p, str) else str(as_dict(p).get("text") or "") for p in parts
        ).strip("\n")
    for key in ("text", "result", "summary"):
        if isinstance(content.get(key), str):
            return str(content[key])
    rest = {k: v for k, v in content.items() if k != "content_type"}
    return json.dumps(rest, ensure_ascii=False) if rest else ""


def _message_entry(
    msg: dict[str, Any],
    images: _Images,
    role: str,
    content: dict[str, Any],
    when: int | None,
    images_only: bool = False,
) -> dict[str, Any] | None:
    """The entry of a visible user or assistant message (``None`` when it holds nothing):
    ``content`` is its content object, ``when`` its time; ``images_only``: a tool's message,
    of which only the images are kept."""
    texts: list[str] = []
    urls: list[str] = []
    parts = content.get("parts")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str):
                if not images_only:
                    texts.append(part)
            elif isinstance(part, dict) and part.get("content_type") == "image_asset_pointer":
                pointer = str(part.get("asset_pointer") or "")
                url = images.url(pointer)
                if url:
                    urls.append(url)
                else:
                    texts.append(f"[image not in the export: {pointer}]")
            elif isinstance(part, dict) and isinstance(part.get("text"), str) and not images_only:
                texts.append(part["text"])
    elif content.get("content_type", "text") == "code" and isinstance(content.get("text"), str):
        texts.append(f"```{content.get('language') or ''}\n{content['text']}\n```")
    elif isinstance(content.get("text"), str):
        texts.append(content["text"])
    if not urls and not any(t.strip() for t in texts):
        return None
    if role == "assistant":
        slug = as_dict(msg.get("metadata")).get("model_slug")
        if isinstance(slug, str) and slug:
            entry = parts_entry(role, texts, urls, provider={"name": "chatgpt", "model": slug})
            return timed(entry, when)
    return timed(parts_entry(role, texts, urls), when)


def _entries(path: list[dict[str, Any]], images: _Images) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    extras = Extras()
    turn_start = 0
    calls: dict[str, str] = {"": ""}  # tool name → id of its latest call ("": of any tool)
    for node in path:
        msg = node.get("message")
        if not isinstance(msg, dict) or _hidden(msg):
            continue
        author = as_dict(msg.get("author"))
        content = as_dict(msg.get("content"))
        ctype = content.get("content_type", "text")
        their_role = author.get("role")
        if their_role == "system" or ctype in CONTEXT_TYPES:
            continue
        when = to_ms(msg.get("create_time"))
        if their_role == "tool":
            if ctype == "multimodal_text":  # a generated image (DALL·E): keep its pixels
                entry = _message_entry(msg, images, "assistant", content, when, images_only=True)
                if entry is not None:
                    entries.append(extras.put_on(entry))
                continue
            name = str(author.get("name") or "")
            extras.result(_plain(content), name, calls.get(name, calls[""]), when)
            continue
        role = clean_role(their_role)
        if role is None:
            continue
        tool = _to_tool(msg) if role == "assistant" else None
        if tool is not None:
            if ctype in REASONING_TYPES:
                extras.think(_thoughts(content), when)
                arguments = ""
            else:
                arguments = _plain(content)
            call_id = str(msg.get("id") or "")
            calls[tool] = calls[""] = call_id
            extras.call(tool, arguments, call_id, when)
            continue
        if ctype in REASONING_TYPES:
            if role == "assistant":
                extras.think(_thoughts(content), when)
            continue
        entry = _message_entry(msg, images, role, content, when)
        if entry is None:
            continue
        if role == "user":
            extras.close_turn(entries, turn_start)
            entries.append(entry)
            turn_start = len(entries)
        else:
            entries.append(extras.put_on(entry))
    extras.close_turn(entries, turn_start)
    return entries


def conversation(item: Any, images: _Images) -> Conversation | Skipped | None:
    if not isinstance(item, dict):
        return None
    if not isinstance(item.get("mapping"), dict):
        if looks_like(item):
            return Skipped("", "it holds no messages (it has no `mapping`)", title_of(item))
        return None
    cid = item.get("conversation_id") or item.get("id")
    return Conversation(
        source="chatgpt",
        source_id=str(cid) if cid else None,
        title=str(item.get("title") or ""),
        created_ms=to_ms(item.get("create_time")),
        entries=_entries(_active_path(item["mapping"], item.get("current_node")), images),
    )


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    images = _Images(inp)
    members: list[str | None] = list(json_members(inp)) if inp.is_zip or inp.is_dir else [None]
    return read_conversations(inp, lambda item: conversation(item, images), "ChatGPT", members)


def looks_like(item: Any) -> bool:
    """A ChatGPT conversation: its message tree, or (an entry whose tree is missing) the
    conversation id and creation time ChatGPT writes on every conversation."""
    if not isinstance(item, dict):
        return False
    if isinstance(item.get("mapping"), dict):
        return True
    return "conversation_id" in item and "create_time" in item and "title" in item
