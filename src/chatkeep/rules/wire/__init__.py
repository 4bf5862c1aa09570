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
) -> WireRequest:
    """The request for ``history`` + the new ``user_entry`` in the wire format of ``style``,
    after the history ``steps`` (default :data:`HISTORY_STEPS`: age stale attachments, prepare
    for the model, sendable image types; the new turn always goes through :data:`TURN_STEPS`;
    ``steps=()`` resends the stored history verbatim, the naive
    baseline of request accounting)."""
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
