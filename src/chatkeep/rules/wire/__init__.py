"""Wire builders: stored history → one plain, printable request (SPEC §6).

``build_request(style, history, *, user_entry, ...)`` runs the send-time pipeline
(:data:`~chatkeep.rules.wire.base.HISTORY_STEPS`: age stale attachments → prepare for the model
→ sendable image types)
and then the builder of the API style (``chat``, ``responses``, ``anthropic``). It never touches
storage and never mutates ``history`` or ``user_entry``; building twice from equal inputs gives
byte-identical :func:`serialize` output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...entries import Entry
from ...errors import ProviderConfigError
from ..cache import plan_cache
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
    "run_steps",
    "serialize",
]

BUILDERS: dict[str, Callable[..., WireRequest]] = {
    "chat": build_chat,
    "responses": build_responses,
    "anthropic": build_anthropic,
}
STYLES = tuple(BUILDERS)


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
) -> WireRequest:
    """The request for ``history`` + the new ``user_entry`` in the wire format of ``style``,
    after the history ``steps`` (default :data:`HISTORY_STEPS`: age stale attachments, prepare
    for the model, sendable image types; the new turn always goes through :data:`TURN_STEPS`;
    ``steps=()`` resends the stored history verbatim, the naive
    baseline of request accounting).

    ``anthropic`` requests built with the standard steps get planned cache marks
    (:func:`~chatkeep.rules.cache.plan_cache` over the stored history: the plan knows what those
    steps rewrite next); other steps get one mark at the end. ``prompt_cache_key``
    (``chat``/``responses`` only; computed by the caller, see
    :func:`chatkeep.rules.cache.prompt_cache_key`) is sent as the body's ``prompt_cache_key``."""
    builder = BUILDERS.get(style)
    if builder is None:
        raise ProviderConfigError(
            f"unknown API style {style!r}", hint=f"use one of: {', '.join(STYLES)}"
        )
    kwargs: dict[str, Any] = {
        "user_entry": run_steps([user_entry], TURN_STEPS)[0],
        "system_prompt": system_prompt,
        "model": model,
        "base_url": base_url,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "stream": stream,
    }
    if prompt_cache_key and style in ("chat", "responses"):
        kwargs["prompt_cache_key"] = prompt_cache_key
    if style == "anthropic" and tuple(steps) == HISTORY_STEPS:
        kwargs["cache_plan"] = plan_cache(history, user_entry)
    if previous_response_id:
        if style != "responses":
            raise ProviderConfigError(
                "previous_response_id is only meaningful for the 'responses' style",
                hint="only OpenAI Responses cards can keep the transcript on the server",
            )
        # The server holds the transcript: only the unanswered trailing run is read, unaged.
        kwargs["previous_response_id"] = previous_response_id
        return builder(run_steps(history, TURN_STEPS), **kwargs)
    return builder(run_steps(history, steps), **kwargs)
