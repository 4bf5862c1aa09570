"""OpenAI Responses: ``POST {base}/responses`` (SPEC §6.3).

- system prompt → ``instructions``;
- user text parts → ``input_text``, images → ``input_image`` with the data URL as a string
  (``detail: "auto"``); string content stays a string;
- assistant entries are sent as plain string content (their text parts joined), the form the
  API and the SDK's ``EasyInputMessageParam`` both accept for earlier replies; one without
  answer text (a reply that held only reasoning) is left out, and no entry's ``reasoning``,
  ``createdAt`` or other fields are sent;
- with ``previous_response_id`` the server holds the transcript, so ``input`` is only the agent
  turn (:func:`chatkeep.rules.context.build_agent_turn`): trailing attachments + the new text,
  fresh pasted images first.
"""

from __future__ import annotations

from typing import Any

from ...entries import Entry, entry_text, image_part_url, is_image_part
from ..cache import CachePlan, Cut
from ..cache_rules import CacheRule
from ..context import build_agent_turn
from .base import WireRequest, canonical_parts, join_base_url, no_answer
from .breakpoints import breakpoint_cuts, with_breakpoint

__all__ = ["DEFAULT_BASE_URL", "PATH", "build_responses", "responses_input"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PATH = "responses"


def _input_content(entry: Entry) -> str | list[dict[str, Any]]:
    content = canonical_parts(entry)
    if entry.get("role") == "assistant":
        if isinstance(content, str):
            return content
        return "\n".join(p["text"] for p in content if p["type"] == "text")
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "text":
            out.append({"type": "input_text", "text": part["text"]})
        else:
            out.append(
                {"type": "input_image", "image_url": part["image_url"]["url"], "detail": "auto"}
            )
    return out


def responses_input(history: list[Entry], marks: set[Cut] | None = None) -> list[dict[str, Any]]:
    """The input items; ``marks`` are the parts that carry an OpenAI cache breakpoint."""
    out = []
    for i, e in enumerate(history):
        if no_answer(e):
            continue
        content = _input_content(e)
        for cut in sorted(c for c in marks or () if c[0] == i):
            content = with_breakpoint(content, cut[1], "input_text")
        out.append({"role": e["role"], "content": content})
    return out


def _agent_turn_input(history: list[Entry], user_entry: Entry) -> list[dict[str, Any]]:
    content = user_entry.get("content")
    pasted = (
        [image_part_url(p) for p in content if is_image_part(p)]
        if isinstance(content, list)
        else []
    )
    turn = build_agent_turn(history, entry_text(user_entry), pasted)
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": turn["text"]}]
    parts.extend(
        {"type": "input_image", "image_url": url, "detail": "auto"} for url in turn["images"]
    )
    return [{"role": "user", "content": parts}]


def build_responses(
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
    previous_response_id: str | None = None,
    prompt_cache_retention: str | None = None,
    cache_plan: CachePlan | None = None,
    cache_rule: CacheRule | None = None,
) -> WireRequest:
    """The request for a prepared history plus the new user entry; under a ``cache_rule``
    with explicit breakpoints (GPT-5.6 and later) ``cache_plan`` places them
    (:mod:`.breakpoints`)."""
    body: dict[str, Any] = {"model": model}
    if system_prompt:
        body["instructions"] = system_prompt
    if previous_response_id:
        body["input"] = _agent_turn_input(history, user_entry)
        body["previous_response_id"] = previous_response_id
    else:
        whole = [*history, user_entry]
        cuts = breakpoint_cuts(whole, cache_plan, cache_rule, "responses")
        body["input"] = responses_input(whole, cuts)
    body["stream"] = stream
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    if prompt_cache_key:
        body["prompt_cache_key"] = prompt_cache_key
    if prompt_cache_retention:
        body["prompt_cache_retention"] = prompt_cache_retention
    return WireRequest("responses", join_base_url(base_url or DEFAULT_BASE_URL, PATH), body)
