"""OpenAI-compatible Chat Completions: ``POST {base}/chat/completions`` (SPEC §6.3).

Messages carry only ``role`` and ``content``; content keeps the stored parts (canonical shape).
Nothing else of an entry is sent (``reasoning``, ``createdAt``, ``usage``, tool records …), and an
assistant entry without answer text (a reply that held only reasoning) is left out.
The system prompt is the first message. Nothing in the body varies between turns except what
the conversation adds at its end, so consecutive requests share a long byte prefix.
"""

from __future__ import annotations

from typing import Any

from ...entries import Entry
from .base import WireRequest, canonical_parts, join_base_url, no_answer

__all__ = ["DEFAULT_BASE_URL", "PATH", "build_chat"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PATH = "chat/completions"


def chat_messages(history: list[Entry]) -> list[dict[str, Any]]:
    return [{"role": e["role"], "content": canonical_parts(e)} for e in history if not no_answer(e)]


def build_chat(
    history: list[Entry],
    *,
    user_entry: Entry,
    system_prompt: str,
    model: str,
    base_url: str,
    temperature: float | None = None,
    max_tokens: int | None = None,
    stream: bool = True,
    prompt_cache_key: str | None = None,
) -> WireRequest:
    """The request for a prepared history plus the new user entry."""
    messages: list[dict[str, Any]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    messages.extend(chat_messages([*history, user_entry]))
    # Fixed fields first, the growing conversation last: consecutive requests then share the
    # longest byte prefix (request accounting, §6.4).
    body: dict[str, Any] = {"model": model, "stream": stream}
    if stream:  # the last chunk then reports token usage (sent as built: the preview shows it)
        body["stream_options"] = {"include_usage": True}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if prompt_cache_key:
        body["prompt_cache_key"] = prompt_cache_key
    body["messages"] = messages
    return WireRequest("chat", join_base_url(base_url or DEFAULT_BASE_URL, PATH), body)
