"""The ``jsonl`` (OpenAI messages) and ``sharegpt`` exports: one conversation per session.

- ``jsonl``: one line per session, ``{"messages": [...], "metadata": {"id", "title",
  "createdAt"}}``. A message's content is a string, or OpenAI parts (``text``, ``image_url``
  with the data URL) for entries with images; attachment entries are user messages with their
  text. An assistant entry with tool calls is written as OpenAI writes a tool loop: the
  assistant message with ``tool_calls`` (``{id, type: "function", function: {name,
  arguments}}``), one ``tool`` message per result (``tool_call_id``, ``name`` when known), then
  the assistant message with the answer text (left out when there is none). Its reasoning is
  the first message's ``reasoning`` field and its time each message's ``createdAt`` (epoch ms).
- ``sharegpt``: a JSON array of ``{"id", "title", "createdAt", "conversations": [{"from",
  "value"}]}``: ``human``/``gpt`` turns, tool calls as ``function_call`` turns (``{"name",
  "arguments", "id"?}``; arguments as a JSON value when they are JSON written the way
  ``json.dumps`` writes it, else as the string) and results as ``observation`` turns, the way
  LLaMA-Factory reads them; reasoning as a leading ``<think>…</think>`` block of the ``gpt``
  value; a turn's time as its ``createdAt``. ShareGPT has no images: each is the marker
  ``<image>``.

An export of a profile that holds nothing is one line (``jsonl``) or one element
(``sharegpt``) with no messages and ``"metadata": {"format": "chatkeep-export", "sessions":
0}``: it imports back as nothing, without an error. Both import back with ``--from jsonl`` /
``--from sharegpt`` (what each cannot hold is listed in docs/import-export.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..entries import image_part_url, is_image_part
from .simple import EMPTY_MARK


def _parts(content: Any) -> Any:
    if isinstance(content, str):
        return content
    out = []
    for part in content if isinstance(content, list) else []:
        if is_image_part(part):
            out.append({"type": "image_url", "image_url": {"url": image_part_url(part)}})
        elif isinstance(part, dict):
            out.append({"type": "text", "text": str(part.get("text", ""))})
    return out


def _flat(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else []:
        if is_image_part(part):
            texts.append("<image>")
        elif isinstance(part, dict):
            texts.append(str(part.get("text", "")))
    return "\n".join(texts)


def _meta(s: dict[str, Any]) -> dict[str, Any]:
    return {"id": s.get("id"), "title": s.get("name"), "createdAt": s.get("createdAt")}


def _empty(content: Any) -> bool:
    return content == "" or content == []


def _openai_messages(e: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The OpenAI messages of one entry (one, or a tool loop)."""
    when = {"createdAt": e["createdAt"]} if "createdAt" in e else {}
    calls, results = e.get("toolCalls") or [], e.get("toolResult") or []
    content = _parts(e.get("content"))
    if e.get("role") != "assistant" or not (calls or results):
        msg: dict[str, Any] = {"role": e.get("role"), "content": content}
        if isinstance(e.get("reasoning"), str):
            msg["reasoning"] = e["reasoning"]
        yield {**msg, **when}
        return
    first: dict[str, Any] = {"role": "assistant", "content": ""}
    if isinstance(e.get("reasoning"), str):
        first["reasoning"] = e["reasoning"]
    if calls:
        first["tool_calls"] = [
            {
                **({"id": c["id"]} if "id" in c else {}),
                "type": "function",
                "function": {"name": c.get("name"), "arguments": c.get("arguments")},
            }
            for c in calls
        ]
    yield {**first, **when}
    for r in results:
        msg = {"role": "tool", "content": r.get("content")}
        if "id" in r:
            msg["tool_call_id"] = r["id"]
        if "name" in r:
            msg["name"] = r["name"]
        yield msg
    if not _empty(content):
        yield {"role": "assistant", "content": content, **when}


def write_jsonl(sessions: Iterable[dict[str, Any]]) -> Iterator[str]:
    wrote = False
    for s in sessions:
        msgs = [m for e in s.get("history") or [] for m in _openai_messages(e)]
        yield json.dumps({"messages": msgs, "metadata": _meta(s)}, ensure_ascii=False)
        wrote = True
    if not wrote:
        yield json.dumps({"messages": [], "metadata": EMPTY_MARK})


def _arguments(text: Any) -> Any:
    """Tool-call arguments as a JSON value when that writes back to the same text."""
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    same = json.dumps(value, ensure_ascii=False) == text
    return value if same and isinstance(value, dict | list) else text


def _sharegpt_turns(e: dict[str, Any]) -> Iterator[dict[str, Any]]:
    when = {"createdAt": e["createdAt"]} if "createdAt" in e else {}
    if e.get("role") == "user":
        yield {"from": "human", "value": _flat(e.get("content")), **when}
        return
    for c in e.get("toolCalls") or []:
        call = {"name": c.get("name"), "arguments": _arguments(c.get("arguments"))}
        if "id" in c:
            call["id"] = c["id"]
        yield {"from": "function_call", "value": json.dumps(call, ensure_ascii=False), **when}
    for r in e.get("toolResult") or []:
        yield {"from": "observation", "value": r.get("content")}
    text = _flat(e.get("content"))
    if isinstance(e.get("reasoning"), str):
        text = f"<think>\n{e['reasoning']}\n</think>\n\n{text}"
    if text or not (e.get("toolCalls") or e.get("toolResult")):
        yield {"from": "gpt", "value": text, **when}


def write_sharegpt(sessions: Iterable[dict[str, Any]]) -> Iterator[str]:
    yield "["
    k = -1
    for k, s in enumerate(sessions):
        turns = [t for e in s.get("history") or [] for t in _sharegpt_turns(e)]
        doc = {
            "id": s.get("id"),
            "title": s.get("name"),
            "createdAt": s.get("createdAt"),
            "conversations": turns,
        }
        yield ("," if k else "") + json.dumps(doc, ensure_ascii=False)
    if k < 0:
        yield json.dumps({"conversations": [], "metadata": EMPTY_MARK})
    yield "]"
