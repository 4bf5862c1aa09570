"""ShareGPT JSON, OpenAI-messages JSON Lines and the ``[{"messages": [...]}]`` arrays of
fine-tuning sets: the plain dataset formats.

- ShareGPT: a JSON array of ``{id?, title?, system?, images?, conversations: [{from, value}]}``
  (one object alone is read too). ``from`` is ``human``/``gpt`` (or ``user``/``assistant``),
  ``system``, ``function_call`` (``{"name", "arguments"}``, or a list of them) and
  ``observation`` (a tool's output), as LLaMA-Factory and others write them.
- JSON Lines: one conversation per line, ``{"messages": [{role, content}], "metadata"?:
  {title, id, createdAt}}``; a line that is a bare list of messages, and ShareGPT objects one
  per line, are read too. The same ``{"messages": [...]}`` objects in a JSON array (the
  fine-tuning sets of LLaMA-Factory and others) are read by the same reader.
- Message content is a string or parts: ``text``/``input_text``/``output_text`` with ``text``
  or ``value`` (a non-string value is kept as its JSON text), ``image_url``/``input_image``
  (``image_url`` or ``value``; data URLs are kept as images, other references named in the
  text), ``reasoning``/``thinking`` parts, ``tool_call`` and ``tool_result`` parts; any other
  part is named in the text, never dropped without a word. OpenAI's ``tool_calls`` and
  ``tool`` messages, and a message's ``reasoning``/``reasoning_content`` and ``createdAt``,
  are kept too.

What becomes what (the entry convention of SPEC §3.2/§14):

- tool calls and the tool results that answer them go on the assistant entry of that turn:
  the assistant messages of one tool loop (call → result → … → answer) become one entry whose
  ``content`` is the answer text (text written before a call is joined to it), ``toolCalls``
  and ``toolResult`` in order, ``reasoning`` the reasoning of the loop's messages joined;
- a leading ``<think>…</think>`` block of an assistant's text is its ``reasoning``;
- a system message (and a conversation's ``system`` field) is kept as an attachment entry
  titled "System prompt" at its place: the store's entries are only user and assistant turns,
  and an attachment is the kind of entry that carries instructions to the model, is shown
  folded as a chip, and goes through every export and back;
- images named by path (``images`` beside ShareGPT or messages, ``image_url`` values that are
  paths or links) are named in the text as ``[image not in the export: …]``.

Such lines carry no id of their own unless ``metadata.id`` (written by chatkeep's own ``jsonl``
export) or ShareGPT's ``id`` is there, so a conversation's identity is otherwise the digest of
its content and its place among equal ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .. import dataurl
from ..digest import digest_json, hex_of
from ..rules.context import build_page_context_text
from .model import (
    Conversation,
    Skipped,
    as_dict,
    clean_role,
    parts_entry,
    title_of,
    to_ms,
)
from .source import UNREADABLE, Input, read_conversations, unreadable

SYSTEM_TITLE = "System prompt"
TOOL_ROLES = ("tool", "function", "ipython", "observation")
SYSTEM_ROLES = ("system", "developer")
_THINK = re.compile(r"\A\s*<think>(.*?)</think>\s*", re.S)
_THINK_WRITTEN = re.compile(r"\A<think>\n(.*?)\n</think>\n\n", re.S)  # as the export writes it
#: The one line (or element) chatkeep writes for an export of an empty profile.
EMPTY_MARK = {"format": "chatkeep-export", "sessions": 0}


def as_text(value: Any) -> str:
    """A text field as text: strings as they are, ``None`` as ``""``, anything else (a
    template's variables, a tool's structured output) as its JSON text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def split_think(text: str) -> tuple[str, str | None]:
    """``(answer, reasoning)``: a leading ``<think>…</think>`` block split off."""
    m = _THINK_WRITTEN.match(text)
    if m:
        return text[m.end() :], m.group(1)
    m = _THINK.match(text)
    if not m:
        return text, None
    return text[m.end() :], m.group(1).strip("\n")


class Turns:
    """Builds chatkeep entries from a conversation's messages, one event at a time."""

    def __init__(self, key: Any) -> None:
        self.entries: list[dict[str, Any]] = []
        self._key = key  # for the attachment ids of system prompts
        self._open = False  # an assistant entry whose tool loop is still going on

    # -- the events -------------------------------------------------------------------------
    def system(self, text: str) -> None:
        if not text.strip():
            return
        body = build_page_context_text({"title": SYSTEM_TITLE}, text, "full")
        aid = hex_of(digest_json([self._key, "system", len(self.entries), text]))[:32]
        self.entries.append({"role": "user", "content": body, "attachId": aid})
        self._open = False

    def user(self, texts: list[str], images: list[str], extra: dict[str, Any]) -> None:
        if not any(t.strip() for t in texts) and not images:
            return
        self.entries.append(parts_entry("user", texts, images, **extra))
        self._open = False

    def assistant(
        self,
        texts: list[str],
        images: list[str],
        extra: dict[str, Any],
        *,
        reasoning: str | None = None,
        calls: list[dict[str, str]] | None = None,
    ) -> None:
        """An assistant message: a new entry, or — inside a tool loop — more of the open one."""
        texts = list(texts)
        thoughts = [reasoning] if reasoning else []
        if texts:
            answer, thought = split_think(texts[0])
            if thought is not None:
                texts[0] = answer
                thoughts.append(thought)
        has_text = any(t.strip() for t in texts) or bool(images)
        if not has_text and not thoughts and not calls:
            return
        last = self._last_assistant() if self._open else None
        if last is not None and not images and not isinstance(last["content"], list):
            text = "\n".join(t for t in texts if t)
            if text:
                last["content"] = f"{last['content']}\n\n{text}" if last["content"] else text
            if thoughts:
                joined = "\n\n".join(thoughts)
                old = last.get("reasoning")
                last["reasoning"] = f"{old}\n\n{joined}" if old else joined
            if calls:
                last.setdefault("toolCalls", []).extend(calls)
            for k in ("createdAt",):
                if k in extra and k not in last:
                    last[k] = extra[k]
        else:
            entry = parts_entry("assistant", texts, images, **extra)
            if thoughts:
                entry["reasoning"] = "\n\n".join(thoughts)
            if calls:
                entry["toolCalls"] = list(calls)
            self.entries.append(entry)
        # the loop goes on after a call, and after a merged message that wrote no answer
        self._open = bool(calls) or (last is not None and not has_text)

    def tool_result(self, result: dict[str, str]) -> None:
        last = self._last_assistant()  # a result answers the assistant turn just before it
        if last is None:
            last = {"role": "assistant", "content": ""}
            self.entries.append(last)
        last.setdefault("toolResult", []).append(result)
        self._open = True

    def note_images(self, paths: list[str]) -> None:
        """Images the conversation names by path (``images`` beside the messages): named in
        the user entry whose ``<image>`` markers they fill, in order (else the first)."""
        users = [e for e in self.entries if e["role"] == "user" and "attachId" not in e]
        if not paths or not users:
            return
        slots: list[dict[str, Any]] = []
        for e in users:
            text = e["content"] if isinstance(e["content"], str) else ""
            slots.extend([e] * text.count("<image>"))
        for k, path in enumerate(paths):
            e = slots[k] if k < len(slots) else users[0]
            note = f"[image not in the export: {path}]"
            parts = e["content"]
            if isinstance(parts, str):
                e["content"] = f"{parts}\n{note}" if parts else note
            elif parts and parts[0].get("type") == "text":
                parts[0]["text"] = f"{parts[0]['text']}\n{note}" if parts[0]["text"] else note
            else:
                parts.insert(0, {"type": "text", "text": note})

    def _last_assistant(self) -> dict[str, Any] | None:
        if self.entries and self.entries[-1]["role"] == "assistant":
            return self.entries[-1]
        return None


# -- tool calls ----------------------------------------------------------------------------
def tool_call(value: Any) -> dict[str, str] | None:
    """One call from ``{"name", "arguments", "id"?}`` (OpenAI's ``{"function": {…}}`` too):
    arguments that are not a string are kept as their JSON text."""
    if not isinstance(value, dict):
        return None
    fn: dict[str, Any] = as_dict(value.get("function")) or value
    name = fn.get("name")
    if not isinstance(name, str):
        return None
    args = fn.get("arguments", fn.get("parameters", fn.get("input", "")))
    call = {"name": name, "arguments": as_text(args)}
    if isinstance(value.get("id"), str):
        call["id"] = value["id"]
    return call


def tool_calls_of(value: Any) -> list[dict[str, str]]:
    """The calls a ``function_call`` turn or ``tool_call`` part holds: a JSON text (or value)
    of one call or a list of calls. One that does not read as a call is kept as a call named
    ``unknown`` with the text as its arguments, never dropped."""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [{"name": "unknown", "arguments": value}]
    items = parsed if isinstance(parsed, list) else [parsed]
    calls = [tool_call(v) for v in items]
    if not items or any(c is None for c in calls):
        return [{"name": "unknown", "arguments": as_text(value)}]
    return [c for c in calls if c is not None]


# -- ShareGPT ------------------------------------------------------------------------------
def sharegpt_conversation(item: Any) -> Conversation | None:
    if not sharegpt_looks_like(item):
        return None
    turns = Turns(item.get("id"))
    if isinstance(item.get("system"), str):
        turns.system(item["system"])
    for turn in item["conversations"]:
        if not isinstance(turn, dict):
            continue
        kind = turn.get("from", turn.get("role"))
        value = turn.get("value", turn.get("content"))
        extra = {}
        when = to_ms(turn.get("createdAt"))
        if when is not None:
            extra["createdAt"] = when
        kind = kind.lower() if isinstance(kind, str) else kind
        if kind in SYSTEM_ROLES:
            turns.system(as_text(value))
        elif kind in ("function_call", "tool_call", "function_calls"):
            turns.assistant([], [], extra, calls=tool_calls_of(value))
        elif kind in TOOL_ROLES:
            turns.tool_result({"content": as_text(value)})
        else:
            role = clean_role(kind)
            if role == "user":
                turns.user([as_text(value)], [], extra)
            elif role == "assistant":
                turns.assistant([as_text(value)], [], extra)
    turns.note_images([p for p in item.get("images") or [] if isinstance(p, str)])
    sid = item.get("id")
    return Conversation(
        source="sharegpt",
        source_id=str(sid) if sid else None,
        title=str(item.get("title") or ""),
        created_ms=to_ms(item.get("createdAt")),
        entries=turns.entries,
    )


def read_sharegpt(inp: Input) -> Iterator[Conversation | Skipped]:
    return read_conversations(inp, sharegpt_conversation, "ShareGPT")


def sharegpt_looks_like(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("conversations"), list)


# -- OpenAI messages -----------------------------------------------------------------------
def _image_ref(part: dict[str, Any]) -> str | None:
    url = part.get("image_url", part.get("value", part.get("image")))
    if isinstance(url, dict):
        url = url.get("url")
    src = part.get("source")
    if isinstance(src, dict) and isinstance(src.get("data"), str):  # Anthropic's base64 block
        url = f"data:{src.get('media_type') or 'image/png'};base64,{src['data']}"
    return url if isinstance(url, str) and url else None


def _message(turns: Turns, msg: Any) -> None:
    if not isinstance(msg, dict):
        return
    kind = msg.get("role")
    kind = kind.lower() if isinstance(kind, str) else kind
    content = msg.get("content")
    texts: list[str] = []
    urls: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, str]] = []
    results: list[dict[str, str]] = []
    if isinstance(content, str):
        texts.append(content)
    elif content is not None and not isinstance(content, list):
        texts.append(as_text(content))
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        ptype = part.get("type")
        if ptype in ("text", "input_text", "output_text") or (ptype is None and "text" in part):
            texts.append(as_text(part.get("text", part.get("value"))))
        elif ptype in ("image_url", "input_image", "image"):
            url = _image_ref(part)
            if url and dataurl.is_image_data_url(url):
                urls.append(url)
            else:
                texts.append(f"[image not in the export: {url or 'no address'}]")
        elif ptype in ("reasoning", "thinking"):
            thoughts.append(as_text(part.get("value", part.get("thinking", part.get("text")))))
        elif ptype in ("tool_call", "tool_use", "function_call"):
            call = tool_call(part)
            calls.extend([call] if call else tool_calls_of(part.get("value")))
        elif ptype in ("tool_result", "function_call_output"):
            res = {"content": as_text(part.get("result", part.get("content", part.get("value"))))}
            for src, dst in (("name", "name"), ("id", "id"), ("tool_use_id", "id")):
                if isinstance(part.get(src), str):
                    res[dst] = part[src]
            results.append(res)
        else:
            texts.append(f"[{as_text(ptype) or 'untyped'} part not kept]")
    for call in msg.get("tool_calls") or []:
        one = tool_call(call)
        if one:
            calls.append(one)
    if isinstance(msg.get("function_call"), dict):  # OpenAI's older single call
        one = tool_call(msg["function_call"])
        if one:
            calls.append(one)
    for key in ("reasoning", "reasoning_content"):
        if isinstance(msg.get(key), str) and msg[key]:
            thoughts.insert(0, msg[key])
    extra: dict[str, Any] = {}
    when = to_ms(msg.get("createdAt"))
    if when is not None:
        extra["createdAt"] = when
    if kind in SYSTEM_ROLES:
        turns.system("\n".join(texts))
        return
    if kind in TOOL_ROLES:
        res = {"content": "\n".join(texts)}
        if isinstance(msg.get("name"), str):
            res["name"] = msg["name"]
        if isinstance(msg.get("tool_call_id"), str):
            res["id"] = msg["tool_call_id"]
        turns.tool_result(res)
        return
    role = clean_role(kind)
    if role == "assistant":
        turns.assistant(
            texts, urls, extra, reasoning="\n\n".join(t for t in thoughts if t) or None, calls=calls
        )
    elif role == "user":
        for res in results:  # results sent back in a user message answer the last call
            turns.tool_result(res)
        turns.user(texts, urls, extra)
    for res in results if role != "user" else []:
        turns.tool_result(res)


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
    turns = Turns(meta.get("id"))
    if isinstance(doc, dict) and isinstance(doc.get("system"), str):
        turns.system(doc["system"])
    for m in msgs:
        _message(turns, m)
    if isinstance(doc, dict):
        turns.note_images([p for p in doc.get("images") or [] if isinstance(p, str)])
    sid = meta.get("id")
    return Conversation(
        source="jsonl",
        source_id=str(sid) if sid else None,
        title=str(meta.get("title") or ""),
        created_ms=to_ms(meta.get("createdAt")),
        entries=turns.entries,
    )


def is_empty_export(doc: Any) -> bool:
    """chatkeep's line (or element) for an export of a profile that holds nothing."""
    return (
        isinstance(doc, dict)
        and as_dict(doc.get("metadata")) == EMPTY_MARK
        and doc.get("messages", doc.get("conversations")) == []
    )


def read_jsonl(inp: Input) -> Iterator[Conversation | Skipped]:
    if messages_array(inp):
        yield from read_conversations(inp, jsonl_conversation, "OpenAI messages")
        return
    for no, doc in inp.lines():
        if is_empty_export(doc):
            continue
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


def messages_array(inp: Input) -> bool:
    """Whether the file is one JSON array of conversations (``[{"messages": [...]}]``), not
    JSON Lines (whose lines may be bare lists of messages)."""
    if inp.first_char() != "[":
        return False
    first = inp.first_item()
    return messages_looks_like(first) or sharegpt_looks_like(first)


def messages_looks_like(item: Any) -> bool:
    """A ``{"messages": [{role, …}, …]}`` conversation (the fine-tuning sets' element)."""
    return isinstance(item, dict) and jsonl_looks_like(item)


def jsonl_looks_like(doc: Any) -> bool:
    msgs = doc.get("messages") if isinstance(doc, dict) else doc
    return (
        isinstance(msgs, list)
        and bool(msgs)
        and all(isinstance(m, dict) and "role" in m for m in msgs)
    )
