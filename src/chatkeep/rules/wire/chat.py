"""OpenAI-compatible Chat Completions: ``POST {base}/chat/completions`` (SPEC §6.3).

Messages carry only ``role`` and ``content``; content keeps the stored parts (canonical shape).
Claude through OpenRouter gets Anthropic's planned ``cache_control`` marks on text parts.
Nothing else of an entry is sent (``reasoning``, ``createdAt``, ``usage``, tool records …), and an
assistant entry without answer text (a reply that held only reasoning) is left out.
The system prompt is the first message. Nothing in the body varies between turns except what
the conversation adds at its end, so consecutive requests share a long byte prefix.
"""

from __future__ import annotations

from typing import Any

from ...entries import Entry
from ..cache import CachePlan, Cut, cache_mark
from ..cache_rules import CacheRule
from .base import WireRequest, canonical_parts, join_base_url, no_answer
from .breakpoints import BREAKPOINT, breakpoint_cuts, control_cuts, with_breakpoint

__all__ = ["DEFAULT_BASE_URL", "PATH", "build_chat"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PATH = "chat/completions"
_BREAKPOINT = ("prompt_cache_breakpoint", BREAKPOINT)


def chat_messages(
    history: list[Entry],
    marks: set[Cut] | None = None,
    mark: tuple[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The messages; ``marks`` are the parts that carry an OpenAI cache breakpoint (or
    ``mark``, ``(field, value)``)."""
    out = []
    for i, e in enumerate(history):
        if no_answer(e):
            continue
        content = canonical_parts(e)
        for cut in sorted(c for c in marks or () if c[0] == i):
            content = with_breakpoint(content, cut[1], mark=mark or _BREAKPOINT)
        out.append({"role": e["role"], "content": content})
    return out


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
    prompt_cache_retention: str | None = None,
    cache_plan: CachePlan | None = None,
    cache_rule: CacheRule | None = None,
    cache_ttl: str | None = None,
) -> WireRequest:
    """The request for a prepared history plus the new user entry; under a ``cache_rule``
    with explicit breakpoints (GPT-5.6 and later) ``cache_plan`` places them
    (:mod:`.breakpoints`); under one that marks with ``cache_control`` (Claude through
    OpenRouter) it places those, on text parts, each asking for ``cache_ttl``."""
    messages: list[dict[str, Any]] = []
    whole = [*history, user_entry]
    controls, system_marked = control_cuts(whole, cache_plan, cache_rule, system_prompt)
    if system_prompt and system_marked:
        part = {"type": "text", "text": system_prompt, "cache_control": cache_mark(cache_ttl)}
        messages.append({"role": "system", "content": [part]})
    elif system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    if controls:
        messages.extend(chat_messages(whole, controls, ("cache_control", cache_mark(cache_ttl))))
    else:
        cuts = breakpoint_cuts(whole, cache_plan, cache_rule, "chat")
        messages.extend(chat_messages(whole, cuts))
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
    if prompt_cache_retention:
        body["prompt_cache_retention"] = prompt_cache_retention
    body["messages"] = messages
    return WireRequest("chat", join_base_url(base_url or DEFAULT_BASE_URL, PATH), body)
