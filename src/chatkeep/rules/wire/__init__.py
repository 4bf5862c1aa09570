"""Wire builders: stored history → one plain, printable request (SPEC §6).

``build_request(style, history, *, user_entry, ...)`` runs the send-time pipeline
(:func:`request_entries`: the history through
:data:`~chatkeep.rules.wire.base.HISTORY_STEPS` — age stale attachments → prepare for the model
→ sendable image types —, the new turn through ``TURN_STEPS``, then the whole request through
the style's request steps, :func:`~chatkeep.rules.request_images.request_steps`: images resized
for the provider → at most 8 images and 3 MiB of them per request) and then the builder of the
API style (``chat``, ``responses``, ``anthropic``). It never touches storage and never mutates
``history`` or ``user_entry``; building twice from equal inputs gives byte-identical
:func:`serialize` output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ...entries import ROLES, Entry, validate_entry, without_unanswered
from ...errors import InvalidEntry, ProviderConfigError
from ...limits import ENTRY_MAX_DEPTH, check_text, problem
from ..cache import choose_ttl, plan_cache
from ..cache_rules import CacheRule, provider_of
from ..request_images import cap_request_images, count_image_parts, request_steps
from .anthropic import build_anthropic
from .base import (
    HISTORY_STEPS,
    TURN_STEPS,
    HistoryStep,
    WireRequest,
    api_root,
    join_base_url,
    run_steps,
    serialize,
)
from .chat import build_chat
from .responses import build_responses

__all__ = [
    "BUILDERS",
    "HISTORY_STEPS",
    "STYLES",
    "HistoryStep",
    "WireRequest",
    "api_root",
    "build_request",
    "join_base_url",
    "request_entries",
    "run_steps",
    "serialize",
]

BUILDERS: dict[str, Callable[..., WireRequest]] = {
    "chat": build_chat,
    "responses": build_responses,
    "anthropic": build_anthropic,
}
STYLES = tuple(BUILDERS)


def _check_inputs(
    style: Any,
    history: Any,
    user_entry: Any,
    system_prompt: Any,
    model: Any,
    base_url: Any,
    checked: bool,
) -> None:
    """Bad input gets a chatkeep error before any step runs (readers stay lenient about part
    shapes, so history entries need only be role/content objects within the limits);
    ``checked``: the entries were validated where they came in and are not walked again."""
    if not isinstance(style, str):
        raise ProviderConfigError(f"the API style must be a string, got {type(style).__name__}")
    for name, value in (("system_prompt", system_prompt), ("model", model), ("base_url", base_url)):
        check_text(value, name)
    if checked:
        return
    if not isinstance(history, list):
        raise InvalidEntry(
            f"history must be a list of entries, got {type(history).__name__}", field="history"
        )
    for i, e in enumerate(history):
        if not isinstance(e, dict) or e.get("role") not in ROLES or "content" not in e:
            raise InvalidEntry(
                f"history[{i}] must be an entry with role 'user' or 'assistant' and content",
                field=f"history[{i}]",
            )
        content = e["content"]
        if not isinstance(content, str | list) or (
            isinstance(content, list) and not all(isinstance(p, dict) for p in content)
        ):
            raise InvalidEntry(
                f"history[{i}].content must be a string or a list of part objects",
                field=f"history[{i}].content",
            )
        why = problem(e, ENTRY_MAX_DEPTH)
        if why is not None:
            raise InvalidEntry(f"history[{i}] cannot be used: {why}", field=f"history[{i}]")
    validate_entry(user_entry)


def request_entries(
    style: str,
    history: list[Entry],
    user_entry: Entry,
    steps: Sequence[HistoryStep] = HISTORY_STEPS,
    *,
    server_transcript: bool = False,
) -> tuple[list[Entry], int]:
    """``([*history as sent, new turn as sent], images held back)``: the whole pipeline.

    The history goes through ``steps`` (``TURN_STEPS`` when the server holds the transcript),
    the new turn through ``TURN_STEPS``, then both together through the style's request steps
    (resize, per-request cap); ``steps=()`` skips those too (the verbatim baseline). The count
    is the number of images the cap sent as labels. Questions marked ``unanswered`` (left
    behind by a failed send, SPEC §3.5) are left out on every path."""
    history = without_unanswered(history)
    sent = run_steps(history, TURN_STEPS if server_transcript else steps)
    whole = [*sent, run_steps([user_entry], TURN_STEPS)[0]]
    held = 0
    if not tuple(steps):
        return whole, held
    for step in request_steps(style):
        before = count_image_parts(whole) if step is cap_request_images else 0
        whole = step(whole)
        if step is cap_request_images:
            held += before - count_image_parts(whole)
    return whole, held


def build_request(
    style: str,
    history: list[Entry],
    *,
    user_entry: Entry,
    system_prompt: str,
    model: str,
    base_url: str,
    temperature: float | None = None,
    max_tokens: int | None = None,
    stream: bool = True,
    previous_response_id: str | None = None,
    steps: Sequence[HistoryStep] = HISTORY_STEPS,
    prompt_cache_key: str | None = None,
    cache_rule: CacheRule | None = None,
    pace: Sequence[int] = (),
    one_off: bool = False,
    checked: bool = False,
) -> WireRequest:
    """The request for ``history`` + the new ``user_entry`` in the wire format of ``style``,
    after the history ``steps`` (default :data:`HISTORY_STEPS`: age stale attachments, prepare
    for the model, sendable image types; the new turn always goes through :data:`TURN_STEPS`)
    and the style's request steps (images resized and capped per request, see
    :func:`request_entries`); ``steps=()`` resends the stored history verbatim (but for questions
    marked ``unanswered``, which no request sends), the naive baseline of request accounting. ``WireRequest.held_back`` counts the images the cap sent
    as labels.

    ``anthropic`` requests built with the standard steps get planned cache marks
    (:func:`~chatkeep.rules.cache.plan_cache` over the stored history: the plan knows what those
    steps rewrite next); other steps get one mark at the end. ``prompt_cache_key``
    (``chat``/``responses`` only; computed by the caller, see
    :func:`chatkeep.rules.cache.prompt_cache_key`) is sent as the body's ``prompt_cache_key``.

    ``cache_rule`` (:func:`~chatkeep.rules.cache_rules.find_rule` of the card's model) bounds
    the marks by the model's own limits: Anthropic marks ask for the lifetime the
    conversation's pace pays for (:func:`~chatkeep.rules.cache.choose_ttl`); GPT-5.6 and later
    get planned ``prompt_cache_breakpoint`` marks; where the rule allows it and the endpoint
    takes OpenAI's fields (``prompt_cache_key`` is sent), ``prompt_cache_retention: "24h"``
    keeps the conversation's cache through the pauses between turns at no extra price.
    ``chat`` requests to a model whose row marks with ``cache_control`` (Claude through
    OpenRouter, which passes the marks on) carry the same planned marks as Anthropic requests,
    on text parts. ``pace`` is the profile's earlier question times (epoch ms,
    :data:`~chatkeep.rules.cache.PACE_KEY`): with the conversation's own and ``user_entry``'s
    ``createdAt`` they choose the lifetime the marks ask for. ``one_off``: no later request
    repeats ``user_entry`` (a summary call after the conversation), so the planned marks end
    with the history and never write the new turn into the cache.
    ``checked=True`` (the engine, whose history was validated when stored and whose new entry
    was validated where it came in) skips walking the entries again."""
    _check_inputs(style, history, user_entry, system_prompt, model, base_url, checked)
    # a question a failed send left unanswered is never sent (SPEC §3.5); the cache plan and
    # the builders see the history without it, so their positions agree
    history = without_unanswered(history)
    builder = BUILDERS.get(style)
    if builder is None:
        raise ProviderConfigError(
            f"unknown API style {style!r}", hint=f"use one of: {', '.join(STYLES)}"
        )
    if previous_response_id and style != "responses":
        raise ProviderConfigError(
            "previous_response_id is only meaningful for the 'responses' style",
            hint="only OpenAI Responses cards can keep the transcript on the server",
        )
    whole, held = request_entries(
        style, history, user_entry, steps, server_transcript=bool(previous_response_id)
    )
    kwargs: dict[str, Any] = {
        "user_entry": whole[-1],
        "system_prompt": system_prompt,
        "model": model,
        "base_url": base_url,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "stream": stream,
    }
    if prompt_cache_key and style in ("chat", "responses"):
        kwargs["prompt_cache_key"] = prompt_cache_key
        if cache_rule is not None and cache_rule.retention:
            kwargs["prompt_cache_retention"] = "24h"
    planned = tuple(steps) == HISTORY_STEPS and not previous_response_id
    marks = cache_rule.marks if cache_rule is not None else ""
    passed_on = style == "chat" and provider_of(style, base_url, model) == "openrouter"
    if planned and (style == "anthropic" or (passed_on and marks == "cache_control")):
        kwargs["cache_plan"] = plan_cache(history, user_entry)
        kwargs["cache_ttl"] = choose_ttl(history, cache_rule, user_entry, pace)
    elif planned and cache_rule is not None and cache_rule.marks == "prompt_cache_breakpoint":
        kwargs["cache_plan"] = plan_cache(history, user_entry)
    if one_off and "cache_plan" in kwargs:
        end = (len(history), 0)
        keep = kwargs["cache_plan"].keep
        keep = end if keep is None else min(keep, end)
        kwargs["cache_plan"] = replace(kwargs["cache_plan"], keep=keep, end=end)
    if cache_rule is not None and "cache_plan" in kwargs:
        kwargs["cache_rule"] = cache_rule
    if previous_response_id:
        # The server holds the transcript: only the unanswered trailing run is read, unaged.
        kwargs["previous_response_id"] = previous_response_id
    request = builder(whole[:-1], **kwargs)
    return replace(request, held_back=held) if held else request
