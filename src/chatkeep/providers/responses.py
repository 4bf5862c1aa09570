"""Adapter for the ``responses`` style: OpenAI ``POST {root}/responses``.

``stream(card, body, *, cancel=None)`` sends ``body`` (``model``, ``input``, ``instructions``,
optionally ``previous_response_id``) through the official ``openai`` SDK. Streaming events used:
``response.created`` (id), ``response.output_text.delta`` (text),
``response.reasoning_summary_text.delta`` and ``response.reasoning_text.delta`` (reasoning, a
blank line between summary parts and items; ``reasoning`` output items of a whole answer),
``response.completed`` (usage, id); ``response.failed`` and ``error`` events raise like HTTP errors (an overflow reported
mid-stream is a ``ContextOverflow`` too). ``Done.response_id`` is the id to pass as
``previous_response_id`` next turn; usage is normalised from ``input_tokens``,
``input_tokens_details.cached_tokens`` and ``output_tokens``. The card fills ``model``, ``temperature`` and
``max_output_tokens`` when the body leaves them out. Cancel and errors as in
:mod:`chatkeep.providers.chat`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

from . import _errors, _openai
from ._sdk import cancelled, run_sdk_call
from .cards import Card
from .events import Done, Event, ReasoningDelta, TextDelta, dig, ended_early, usage_dict
from .reasoning import ReasoningParts

__all__ = ["prepare_body", "stream"]


def prepare_body(card: Card, body: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``body`` completed from the card (never mutates ``body``)."""
    out = dict(body)
    out.setdefault("model", card.model)
    if card.temperature is not None:
        out.setdefault("temperature", card.temperature)
    if card.max_tokens is not None:
        out.setdefault("max_output_tokens", card.max_tokens)
    out["stream"] = card.stream
    return out


def stream(
    card: Card, body: Mapping[str, Any], *, cancel: threading.Event | None = None
) -> Iterator[Event]:
    """Yield the reply to ``body`` from ``card`` as ``TextDelta``s and a final ``Done``."""
    yield from run_sdk_call(
        card,
        prepare_body(card, body),
        cancel,
        client=_openai.client,
        create=lambda sdk: sdk.responses.create,
        single=lambda result: _single(result, card, cancel),
        streamed=lambda result: _streamed(result, card, cancel),
        translate=_openai.translate,
    )


def _usage(response: Any) -> dict[str, int] | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    return usage_dict(
        dig(usage, "input_tokens"),
        dig(usage, "output_tokens"),
        dig(usage, "input_tokens_details", "cached_tokens"),
        dig(usage, "input_tokens_details", "cache_write_tokens"),  # GPT-5.6 and later
    )


def _single(response: Any, card: Card, cancel: threading.Event | None) -> Iterator[Event]:
    if getattr(response, "error", None):
        raise _errors.stream_error(card, _dump(response.error))
    text = response.output_text
    if text is None:  # a parsed JSON answer: no SDK property, join the output text parts
        text = "".join(
            part.text or ""
            for item in response.output or ()
            for part in (item.content or ())
            if part.type == "output_text"
        )
    reasoning = _output_reasoning(response)
    if reasoning:
        yield ReasoningDelta(reasoning)
    if text:
        yield TextDelta(text)
    yield Done(
        text,
        usage=_usage(response),
        response_id=response.id,
        interrupted=cancelled(cancel),
        finish_reason=response.status,
        reasoning=reasoning,
    )


def _output_reasoning(response: Any) -> str:
    """The reasoning items of a whole answer: their summaries, else their reasoning text."""
    reasoning = ReasoningParts()
    for item in response.output or ():
        if getattr(item, "type", "") != "reasoning":
            continue
        parts = list(getattr(item, "summary", None) or ()) or list(
            getattr(item, "content", None) or ()
        )
        for part in parts:
            reasoning.block()
            reasoning.add(getattr(part, "text", None))
    return reasoning.text


def _streamed(events: Any, card: Card, cancel: threading.Event | None) -> Iterator[Event]:
    parts: list[str] = []
    reasoning = ReasoningParts()
    response_id = None
    with events:  # closes the HTTP response, also on cancel and errors
        for event in events:
            if cancelled(cancel):
                break
            kind = getattr(event, "type", "")
            if kind == "response.output_text.delta":
                if event.delta:
                    parts.append(event.delta)
                    yield TextDelta(event.delta)
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                piece = reasoning.add(event.delta)
                if piece is not None:
                    yield piece
            elif kind == "response.reasoning_summary_part.added" or (
                kind == "response.output_item.added"
                and getattr(event.item, "type", "") == "reasoning"
            ):
                reasoning.block()
            elif kind in ("response.created", "response.in_progress"):
                response_id = event.response.id
            elif kind in ("response.completed", "response.incomplete"):
                response = event.response
                yield Done(
                    "".join(parts),
                    usage=_usage(response),
                    response_id=response.id or response_id,
                    finish_reason=response.status,
                    reasoning=reasoning.text,
                )
                return
            elif kind == "response.failed":
                raise _errors.stream_error(card, {"error": _dump(event.response.error)})
            elif kind == "error":
                raise _errors.stream_error(card, _dump(event))
            if cancelled(cancel):
                break
    if not cancelled(cancel):  # no end marker: the server stopped mid-reply (SPEC §7.2)
        yield ended_early(
            card,
            parts,
            "response.completed",
            response_id=response_id,
            reasoning=reasoning.text,
        )
        return
    yield Done("".join(parts), response_id=response_id, interrupted=True, reasoning=reasoning.text)


def _dump(obj: Any) -> Any:
    if obj is None or isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    return dump(mode="json", exclude_none=True) if callable(dump) else {"message": str(obj)}
