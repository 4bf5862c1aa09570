"""SillyTavern chat files (``.jsonl``): one chat per file, one JSON object per line.

The first line is the chat's header, ``{user_name, character_name, create_date,
chat_metadata: {integrity, …}}`` (its signature: one of ``user_name``, ``character_name``,
``chat_metadata``); every further line is a message ``{name, is_user, is_system, send_date,
mes, extra: {reasoning, api, model, image, file, …}, swipes, swipe_id, swipe_info}``.

- ``mes`` is the text shown — the chosen swipe. The other swipes (answers the user swiped
  away) are left out, as regenerated answers are in every format that keeps a tree.
- ``is_user`` decides the role; ``is_system`` messages (narration, hidden notes) are kept at
  their place with the role they have (the "hidden from the prompt" mark is not kept).
- ``extra.reasoning`` is the entry's ``reasoning``; ``extra.api``/``extra.model`` its
  ``provider``; ``send_date`` its ``createdAt`` — ISO-8601, epoch milliseconds, or
  SillyTavern's own ``2023-4-21 @20h 02m 47s 124ms`` and ``June 6, 2023 12:43am`` (read as UTC).
- An inline image (``extra.image``, ``extra.media``) is kept when it is a data URL, else named
  in the text; an attached file with its text (``extra.file.text``) becomes an attachment entry
  before the message, one without text is named in the text.
- The session is named after the file (``Seraphina - 2025-09-26@15h04m33s``), or the
  character when the file name is only a number; its id comes from ``chat_metadata.integrity``
  when the chat has one.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterator
from typing import Any

from .. import dataurl
from ..digest import digest_json, hex_of
from ..rules.context import build_page_context_text
from .model import Conversation, Skipped, as_dict, parts_entry, to_ms
from .source import Input

HEADER_KEYS = ("user_name", "character_name", "chat_metadata")
_HUMANIZED = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*(\d{1,3})ms)?"
)


def looks_like(first_line: Any) -> bool:
    """The header line of a SillyTavern chat."""
    return (
        isinstance(first_line, dict)
        and any(k in first_line for k in HEADER_KEYS)
        and "messages" not in first_line
        and "conversations" not in first_line
    )


def when(value: Any) -> int | None:
    """A SillyTavern time in epoch ms (every way it has written them), or ``None``."""
    found = to_ms(value)
    if found is not None or not isinstance(value, str):
        return found
    m = _HUMANIZED.match(value)
    try:
        if m:
            y, mo, d, h, mi, s, ms = (int(g or 0) for g in m.groups())
            moment = _dt.datetime(y, mo, d, h, mi, s, ms * 1000, tzinfo=_dt.UTC)
        else:
            text = " ".join(value.split())
            moment = _dt.datetime.strptime(text, "%B %d, %Y %I:%M%p").replace(tzinfo=_dt.UTC)
    except ValueError:
        return None
    return int(moment.timestamp() * 1000)


def _is_message(doc: Any) -> bool:
    return isinstance(doc, dict) and "mes" in doc


def _title(path: str, header: dict[str, Any]) -> str:
    stem = os.path.basename(path)
    if stem.lower().endswith(".jsonl"):
        stem = stem[: -len(".jsonl")]
    name = header.get("character_name")
    name = name if isinstance(name, str) and name != "unused" else ""
    if stem.isdigit() or not stem:
        return name or stem
    return stem


def _entries(msg: dict[str, Any], key: Any, at: int) -> list[dict[str, Any]]:
    extra = as_dict(msg.get("extra"))
    role = "user" if msg.get("is_user") is True else "assistant"
    text = msg.get("mes")
    texts = [text if isinstance(text, str) else ("" if text is None else str(text))]
    images: list[str] = []
    out: list[dict[str, Any]] = []
    refs: list[Any] = [extra.get("image")]
    refs += [m.get("url") for m in extra.get("media") or [] if isinstance(m, dict)]
    for ref in refs:
        if isinstance(ref, str) and ref:
            if dataurl.is_image_data_url(ref):
                images.append(ref)
            else:
                texts.append(f"[image not in the export: {ref}]")
    files = [extra.get("file"), *(extra.get("files") or [])]
    for k, f in enumerate(f for f in files if isinstance(f, dict)):
        name = str(f.get("name") or f.get("url") or "file")
        body = f.get("text")
        if isinstance(body, str) and body.strip():
            att = build_page_context_text({"title": name}, body, "full")
            aid = hex_of(digest_json([key, at, k, name]))[:32]
            out.append({"role": "user", "content": att, "attachId": aid})
        else:
            texts.append(f"[file not in the export: {name}]")
    fields: dict[str, Any] = {}
    sent = when(msg.get("send_date"))
    if sent is not None and 0 <= sent < 2**53:
        fields["createdAt"] = sent
    if role == "assistant":
        if isinstance(extra.get("reasoning"), str) and extra["reasoning"]:
            fields["reasoning"] = extra["reasoning"]
        api, model = extra.get("api"), extra.get("model")
        if isinstance(api, str) and isinstance(model, str) and model:
            fields["provider"] = {"name": api, "model": model}
    if any(t.strip() for t in texts) or images or fields.get("reasoning"):
        out.append(parts_entry(role, texts, images, **fields))
    return out


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    header: dict[str, Any] = {}
    msgs: list[dict[str, Any]] = []
    for no, doc in inp.lines():
        if not msgs and not header and looks_like(doc):
            header = doc
        elif _is_message(doc):
            msgs.append(doc)
        else:
            yield Skipped("the chat", f"line {no} is not a SillyTavern message (no `mes`)")
            return
    meta = as_dict(header.get("chat_metadata"))
    integrity = meta.get("integrity")
    source_id = integrity if isinstance(integrity, str) and integrity else None
    entries: list[dict[str, Any]] = []
    for at, msg in enumerate(msgs):
        entries.extend(_entries(msg, source_id or digest_json(msgs[:1]), at))
    created = when(header.get("create_date"))
    if created is None:
        created = next((e["createdAt"] for e in entries if "createdAt" in e), None)
    title = _title(inp.path, header)
    if not entries:
        yield Skipped("the chat", "it holds no message", title)
        return
    yield Conversation(
        source="sillytavern",
        source_id=source_id,
        title=title,
        created_ms=created,
        entries=entries,
    )
