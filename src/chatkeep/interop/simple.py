"""ShareGPT JSON and OpenAI-messages JSON Lines: the two plain dataset formats.

- ShareGPT: a JSON array of ``{id?, title?, conversations: [{from: "human"|"gpt"|"system",
  value}]}`` (one object alone is read too). ``system`` turns are skipped.
- JSON Lines: one conversation per line, ``{"messages": [{role, content}], "metadata"?:
  {title, id, createdAt}}`` — ``content`` a string or OpenAI parts (``text``/``input_text``,
  ``image_url`` with a data URL); a line that is a bare list of messages is read too. System
  and tool messages are skipped. Such lines carry no id of their own unless ``metadata.id``
  (written by chatkeep's own ``jsonl`` export) is there, so a conversation's identity is the
  digest of its content. ShareGPT objects one per line are read too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import dataurl
from .model import Conversation, Skipped, as_dict, clean_role, parts_entry, title_of, to_ms
from .source import UNREADABLE, Input, read_conversations, unreadable


def sharegpt_conversation(item: Any) -> Conversation | None:
    if not sharegpt_looks_like(item):
        return None
    entries = []
    for turn in item["conversations"]:
        if not isinstance(turn, dict):
            continue
        role = clean_role(turn.get("from") or turn.get("role"))
        value = turn.get("value", turn.get("content"))
        if role and isinstance(value, str) and value.strip():
            entries.append({"role": role, "content": value})
    sid = item.get("id")
    return Conversation(
        source="sharegpt",
        source_id=str(sid) if sid else None,
        title=str(item.get("title") or ""),
        created_ms=to_ms(item.get("createdAt")),
        entries=entries,
    )


def read_sharegpt(inp: Input) -> Iterator[Conversation | Skipped]:
    return read_conversations(inp, sharegpt_conversation, "ShareGPT")


def sharegpt_looks_like(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("conversations"), list)


def _message(msg: Any) -> dict[str, Any] | None:
    if not isinstance(msg, dict):
        return None
    role = clean_role(msg.get("role"))
    content = msg.get("content")
    if role is None:
        return None
    if isinstance(content, str):
        return {"role": role, "content": content} if content.strip() else None
    texts: list[str] = []
    urls: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") in ("text", "input_text", "output_text"):
            texts.append(str(part.get("text") or ""))
        elif part.get("type") in ("image_url", "input_image"):
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            if isinstance(url, str) and dataurl.is_image_data_url(url):
                urls.append(url)
            elif isinstance(url, str) and url:
                texts.append(f"[image not in the export: {url}]")
    if not any(t.strip() for t in texts) and not urls:
        return None
    return parts_entry(role, texts, urls)


def jsonl_conversation(doc: Any) -> Conversation | None:
    if sharegpt_looks_like(doc):  # ShareGPT written one conversation per line
        return sharegpt_conversation(doc)
    meta: dict[str, Any] = {}
    if isinstance(doc, dict):
        meta = as_dict(doc.get("metadata"))
        msgs = doc.get("messages")
    else:
        msgs = doc
    if not isinstance(msgs, list):
        return None
    entries = [e for e in (_message(m) for m in msgs) if e is not None]
    sid = meta.get("id")
    return Conversation(
        source="jsonl",
        source_id=str(sid) if sid else None,
        title=str(meta.get("title") or ""),
        created_ms=to_ms(meta.get("createdAt")),
        entries=entries,
    )


def read_jsonl(inp: Input) -> Iterator[Conversation | Skipped]:
    for no, doc in inp.lines():
        try:
            conv = jsonl_conversation(doc)
        except UNREADABLE as exc:
            yield Skipped(f"line {no}", unreadable(exc), title_of(doc))
            continue
        if conv is None:
            yield Skipped(f"line {no}", 'it is not an OpenAI messages object ({"messages": [...]})')
        elif not conv.entries:
            yield Skipped(f"line {no}", "it holds no message", conv.title)
        else:
            yield conv


def jsonl_looks_like(doc: Any) -> bool:
    msgs = doc.get("messages") if isinstance(doc, dict) else doc
    return (
        isinstance(msgs, list)
        and bool(msgs)
        and all(isinstance(m, dict) and "role" in m for m in msgs)
    )
