"""Adapter for the ``anthropic`` style: Anthropic ``POST {root}/messages``.

``stream(card, body, *, cancel=None)`` sends ``body`` (``model``, ``system``, ``messages``,
``max_tokens``, cache-control blocks as built by the ``anthropic`` wire builder) through the
official ``anthropic`` SDK, which gets the API root without ``/v1`` (it adds ``/v1/messages``).
Streaming events used: ``message_start`` (id, input usage), ``content_block_delta`` with
``text_delta`` (text), ``content_block_start`` / ``content_block_delta`` of ``thinking`` blocks
(``thinking_delta``: reasoning, a blank line between blocks; a ``redacted_thinking`` block is
noted as :data:`~chatkeep.providers.reasoning.REDACTED_NOTE`), ``message_delta`` (output usage, stop reason), ``message_stop``; an
``error`` event raises like an HTTP error. Usage is normalised (SPEC §6.4): ``input`` counts
every prompt token the API read (``input_tokens`` + ``cache_read_input_tokens`` +
``cache_creation_input_tokens``), ``cachedRead``/``cacheWrite`` the latter two. The card fills
``model``, ``temperature`` and ``max_tokens`` (the API requires it: 4096 when neither the body nor
the card sets one). Cancel and errors as in :mod:`chatkeep.providers.chat`; SDK errors become
chatkeep errors in :func:`translate` only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import ChatkeepError, ProviderConfigError
from ..limits import is_count
from . import _errors
from ._sdk import CONNECT_TIMEOUT, NO_KEY, cancelled, run_sdk_call
from .cards import Card, sdk_base_url
from .events import Done, Event, ReasoningDelta, TextDelta, dig, ended_early, usage_dict
from .reasoning import REDACTED_NOTE, ReasoningParts

__all__ = ["DEFAULT_MAX_TOKENS", "prepare_body", "stream", "translate"]

DEFAULT_MAX_TOKENS = 4096


def prepare_body(card: Card, body: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``body`` completed from the card (never mutates ``body``)."""
    out = dict(body)
    out.setdefault("model", card.model)
    if card.temperature is not None:
        out.setdefault("temperature", min(card.temperature, 1.0))  # the API caps it at 1
    out.setdefault("max_tokens", card.max_tokens or DEFAULT_MAX_TOKENS)
    out["stream"] = card.stream
    return out


def _client(card: Card) -> Any:
    import anthropic  # lazy: the SDK loads on the first call

    return anthropic.Anthropic(
        api_key=card.api_key or NO_KEY,
        base_url=sdk_base_url(card),
        max_retries=0,
        timeout=anthropic.Timeout(card.timeout, connect=CONNECT_TIMEOUT),
    )


def translate(exc: BaseException, card: Card) -> BaseException:
    """The chatkeep error for ``exc``; unrelated exceptions are returned unchanged."""
    if isinstance(exc, ChatkeepError):
        return exc
    import anthropic  # lazy, as above
    import httpx2  # the SDK's HTTP library (a dropped stream raises its errors)

    if isinstance(exc, anthropic.APIStatusError):
        if exc.status_code < 400:  # an ``error`` event inside a 200 stream
            return _errors.stream_error(card, exc.body, exc.message)
        return _errors.status_error(card, exc.status_code, exc.body, exc.message)
    if isinstance(exc, anthropic.APITimeoutError):
        return _errors.timeout_error(card, exc, connect_timeout=httpx2.ConnectTimeout)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return _errors.network_error(card, f"{exc}: {cause}" if cause else str(exc))
    if isinstance(exc, anthropic.APIError):
        return _errors.stream_error(card, exc.body, exc.message)
    if isinstance(exc, httpx2.TimeoutException):
        return _errors.timeout_error(card, exc, connect_timeout=httpx2.ConnectTimeout)
    if isinstance(exc, httpx2.TransportError | httpx2.StreamError):  # dropped mid-stream
        return _errors.network_error(card, str(exc) or type(exc).__name__)
    if isinstance(exc, anthropic.AnthropicError):
        return ProviderConfigError(f"provider {card.name!r}: {exc}")
    return exc


def stream(
    card: Card, body: Mapping[str, Any], *, cancel: threading.Event | None = None
) -> Iterator[Event]:
    """Yield the reply to ``body`` from ``card`` as ``TextDelta``s and a final ``Done``."""
    yield from run_sdk_call(
        card,
        prepare_body(card, body),
        cancel,
        client=_client,
        create=lambda sdk: sdk.messages.create,
        single=lambda result: _single(result, cancel),
        streamed=lambda result: _streamed(result, card, cancel),
        translate=translate,
    )


def _read_usage(usage: Any, into: dict[str, Any], *, later: bool = False) -> None:
    """Copy the usage fields ``usage`` reports into ``into`` (later events refine earlier ones;
    a ``later`` event's zero input figures mean "not repeated here", not "none")."""
    for key in (
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    ):
        value = dig(usage, key)
        if isinstance(value, int) and not isinstance(value, bool):
            if later and not value and key != "output_tokens" and key in into:
                continue
            into[key] = value


def _count(value: Any) -> int:
    """A reported count within 64 bits, else 0 (a missing or unusable figure)."""
    return value if is_count(value) else 0


def anthropic_usage(fields: Mapping[str, Any]) -> dict[str, int] | None:
    """Normalised usage: ``input`` = input + cache read + cache creation tokens."""
    base = fields.get("input_tokens")
    if not is_count(base):
        return None
    read = _count(fields.get("cache_read_input_tokens"))
    write = _count(fields.get("cache_creation_input_tokens"))
    return usage_dict(base + read + write, fields.get("output_tokens"), read, write)


def _block_reasoning(block: Any, reasoning: ReasoningParts) -> ReasoningDelta | None:
    """Start a thinking block's reasoning (``None`` for any other block)."""
    kind = getattr(block, "type", "")
    if kind == "thinking":
        reasoning.block()
        return reasoning.add(getattr(block, "thinking", None))
    if kind == "redacted_thinking":
        reasoning.block()
        return reasoning.add(REDACTED_NOTE)
    return None


def _single(message: Any, cancel: threading.Event | None) -> Iterator[Event]:
    blocks = message.content or ()
    text = "".join(block.text for block in blocks if getattr(block, "type", "") == "text")
    reasoning = ReasoningParts()
    for block in blocks:
        _block_reasoning(block, reasoning)
    if reasoning.text:
        yield ReasoningDelta(reasoning.text)
    if text:
        yield TextDelta(text)
    fields: dict[str, Any] = {}
    _read_usage(message.usage, fields)
    yield Done(
        text,
        usage=anthropic_usage(fields),
        response_id=message.id,
        interrupted=cancelled(cancel),
        finish_reason=message.stop_reason,
        reasoning=reasoning.text,
    )


def _streamed(events: Any, card: Card, cancel: threading.Event | None) -> Iterator[Event]:
    parts: list[str] = []
    reasoning = ReasoningParts()
    message_id = None
    fields: dict[str, Any] = {}
    stop_reason = None
    with events:  # closes the HTTP response, also on cancel and errors
        for event in events:
            if cancelled(cancel):
                break
            kind = getattr(event, "type", "")
            if kind == "message_start":
                message_id = event.message.id
                _read_usage(event.message.usage, fields)
            elif kind == "content_block_start":
                piece = _block_reasoning(event.content_block, reasoning)
                if piece is not None:
                    yield piece
            elif kind == "content_block_delta":
                delta_kind = getattr(event.delta, "type", "")
                text = getattr(event.delta, "text", None)
                if delta_kind == "text_delta" and text:
                    parts.append(text)
                    yield TextDelta(text)
                elif delta_kind == "thinking_delta":
                    piece = reasoning.add(getattr(event.delta, "thinking", None))
                    if piece is not None:
                        yield piece
            elif kind == "message_delta":
                stop_reason = event.delta.stop_reason or stop_reason
                _read_usage(event.usage, fields, later=True)  # newer APIs repeat input usage here
            elif kind == "message_stop":
                yield Done(
                    "".join(parts),
                    usage=anthropic_usage(fields),
                    response_id=message_id,
                    finish_reason=stop_reason,
                    reasoning=reasoning.text,
                )
                return
            if cancelled(cancel):
                break
    if not cancelled(cancel):  # no end marker: the server stopped mid-reply (SPEC §7.2)
        yield ended_early(
            card,
            parts,
            "message_stop",
            usage=anthropic_usage(fields),
            response_id=message_id,
            reasoning=reasoning.text,
        )
        return
    yield Done("".join(parts), response_id=message_id, interrupted=True, reasoning=reasoning.text)
