"""The ``jsonl`` (OpenAI messages) and ``sharegpt`` exports: one conversation per session.

- ``jsonl``: one line per session, ``{"messages": [{"role", "content"}], "metadata": {"id",
  "title", "createdAt"}}``; content is a string, or OpenAI parts (``text``, ``image_url`` with
  the data URL) for entries with images. Attachment entries are user messages with their text.
- ``sharegpt``: a JSON array of ``{"id", "title", "conversations": [{"from": "human"|"gpt",
  "value"}]}``; ShareGPT has no images, so each image is written as the marker ``<image>``.

Both import back with ``--from jsonl`` / ``--from sharegpt`` (text and images for ``jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..entries import image_part_url, is_image_part


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


def write_jsonl(sessions: Iterable[dict[str, Any]]) -> Iterator[str]:
    for s in sessions:
        msgs = [
            {"role": e.get("role"), "content": _parts(e.get("content"))}
            for e in s.get("history") or []
        ]
        yield json.dumps({"messages": msgs, "metadata": _meta(s)}, ensure_ascii=False)


def write_sharegpt(sessions: Iterable[dict[str, Any]]) -> Iterator[str]:
    yield "["
    for k, s in enumerate(sessions):
        turns = [
            {
                "from": "human" if e.get("role") == "user" else "gpt",
                "value": _flat(e.get("content")),
            }
            for e in s.get("history") or []
        ]
        doc = {
            "id": s.get("id"),
            "title": s.get("name"),
            "createdAt": s.get("createdAt"),
            "conversations": turns,
        }
        yield ("," if k else "") + json.dumps(doc, ensure_ascii=False)
    yield "]"
