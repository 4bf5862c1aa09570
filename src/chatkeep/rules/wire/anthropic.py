"""Anthropic Messages: ``POST {base}/messages`` (SPEC §6.3).

- ``system`` is a separate list with one text block marked ``cache_control: ephemeral``;
- content is always a list of blocks: text → ``text`` blocks (empty text dropped, the API
  rejects it), data-URL images → ``image`` blocks with a base64 source;
- the first message must be ``user``: leading assistant entries (left over after the live
  window trimmed their question) are dropped;
- consecutive messages of the same role are merged into one (attachments followed by the
  question become one user message);
- the last block of the last message carries ``cache_control: ephemeral`` so the whole
  conversation so far is a cache breakpoint;
- ``max_tokens`` is required by the API (default 4096).
"""

from __future__ import annotations

from typing import Any

from ...dataurl import parse as parse_data_url
from ...entries import Entry
from .base import WireRequest, canonical_parts, join_base_url

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "PATH",
    "anthropic_messages",
    "build_anthropic",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
PATH = "messages"
EPHEMERAL = {"type": "ephemeral"}


def _image_block(url: str) -> dict[str, Any]:
    parsed = parse_data_url(url)
    if parsed:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": parsed[0], "data": parsed[1]},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _blocks(entry: Entry) -> list[dict[str, Any]]:
    content = canonical_parts(entry)
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "text":
            if part["text"]:
                blocks.append({"type": "text", "text": part["text"]})
        else:
            blocks.append(_image_block(part["image_url"]["url"]))
    return blocks


def anthropic_messages(history: list[Entry]) -> list[dict[str, Any]]:
    """Messages in Anthropic shape (user first, roles alternating, cache mark on the last block)."""
    messages: list[dict[str, Any]] = []
    for entry in history:
        role = entry["role"]
        blocks = _blocks(entry)
        if not blocks or (not messages and role != "user"):
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    if messages:
        last = messages[-1]["content"]
        last[-1] = {**last[-1], "cache_control": dict(EPHEMERAL)}
    return messages


def build_anthropic(
    history: list[Entry],
    *,
    user_entry: Entry,
    system_prompt: str,
    model: str,
    base_url: str,
    temperature: float | None = None,
    max_tokens: int | None = None,
    stream: bool = True,
) -> WireRequest:
    """The request for a prepared history plus the new user entry."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS,
    }
    if system_prompt:
        body["system"] = [{"type": "text", "text": system_prompt, "cache_control": dict(EPHEMERAL)}]
    messages = anthropic_messages([*history, user_entry])
    if not messages:
        # An empty new turn after nothing sendable: the API needs one non-empty user message.
        messages = [
            {
                "role": "user",
                "content": [{"type": "text", "text": "…", "cache_control": dict(EPHEMERAL)}],
            }
        ]
    body["messages"] = messages
    body["stream"] = stream
    if temperature is not None:
        body["temperature"] = temperature
    return WireRequest("anthropic", join_base_url(base_url or DEFAULT_BASE_URL, PATH), body)
