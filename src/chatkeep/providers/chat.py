"""Adapter for the ``chat`` style: OpenAI-compatible ``POST {root}/chat/completions``.

``stream(card, body, *, cancel=None)`` sends ``body`` (the API's JSON body, as built by the
``chat`` wire builder) through the official ``openai`` SDK and yields
:class:`~chatkeep.providers.events.TextDelta` events then one ``Done``. The card fills what the
body leaves out: ``model``, ``temperature``, ``max_tokens``; ``stream`` follows the card, and a
streamed call asks for ``stream_options.include_usage`` so the final chunk reports token usage.
A non-streaming card yields the whole reply as one delta. Reasoning — a ``<think>…</think>``
section at the start of the reply, or the ``reasoning_content`` / ``reasoning`` fields that
DeepSeek-, vLLM- and OpenRouter-style servers send — comes as ``ReasoningDelta``s and
``Done.reasoning``, never in the text (:mod:`chatkeep.providers.reasoning`). A stream that ends without any
``finish_reason`` is cut short (:func:`~chatkeep.providers.events.ended_early`; the SDK does not
say whether ``[DONE]`` came, and a ``finish_reason`` means the text is whole). Setting ``cancel`` stops reading at the
next chunk and ends with ``Done(interrupted=True)`` carrying the partial text. SDK errors become
chatkeep errors in :func:`chatkeep.providers._openai.translate` only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

from . import _openai
from ._sdk import cancelled, run_sdk_call
from .cards import Card
from .events import Done, Event, ReasoningDelta, TextDelta, dig, ended_early, usage_dict
from .reasoning import ReasoningParts, ThinkSplitter, split_think

__all__ = ["prepare_body", "stream"]


def prepare_body(card: Card, body: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``body`` completed from the card (never mutates ``body``)."""
    out = dict(body)
    out.setdefault("model", card.model)
    if card.temperature is not None:
        out.setdefault("temperature", card.temperature)
    if card.max_tokens is not None and "max_completion_tokens" not in out:
        out.setdefault("max_tokens", card.max_tokens)
    out["stream"] = card.stream
    if card.stream:
        options = dict(out.get("stream_options") or {})
        options.setdefault("include_usage", True)
        out["stream_options"] = options
    else:
        out.pop("stream_options", None)
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
        create=lambda sdk: sdk.chat.completions.create,
        single=lambda result: _single(result, cancel),
        streamed=lambda result: _streamed(result, card, cancel),
        translate=_openai.translate,
    )


def chat_usage(usage: Any) -> dict[str, int] | None:
    """Chat Completions usage, normalised: ``prompt_tokens`` counts every prompt token, cached
    or not; ``prompt_tokens_details.cached_tokens`` is the cache read (DeepSeek's
    ``prompt_cache_hit_tokens`` too) and ``prompt_tokens_details.cache_write_tokens`` the cache
    write (GPT-5.6 and later), both inside ``prompt_tokens``."""
    if usage is None:
        return None
    cached = dig(usage, "prompt_tokens_details", "cached_tokens")
    if not cached:
        cached = dig(usage, "prompt_cache_hit_tokens")
    written = dig(usage, "prompt_tokens_details", "cache_write_tokens")
    return usage_dict(dig(usage, "prompt_tokens"), dig(usage, "completion_tokens"), cached, written)


def _reasoning_field(obj: Any) -> str | None:
    """The reasoning a server put beside the content (``reasoning_content`` or ``reasoning``)."""
    for name in ("reasoning_content", "reasoning"):
        value = dig(obj, name)
        if isinstance(value, str) and value:
            return value
    return None


def _single(completion: Any, cancel: threading.Event | None) -> Iterator[Event]:
    choice = completion.choices[0] if completion.choices else None
    message = choice.message if choice is not None else None
    reasoning = ReasoningParts()
    reasoning.add(_reasoning_field(message))
    reasoning.block()
    text = split_think((message.content or "") if message is not None else "", reasoning)
    if reasoning.text:
        yield ReasoningDelta(reasoning.text)
    if text:
        yield TextDelta(text)
    yield Done(
        text,
        usage=chat_usage(completion.usage),
        response_id=completion.id,
        interrupted=cancelled(cancel),
        finish_reason=choice.finish_reason if choice is not None else None,
        reasoning=reasoning.text,
    )


def _streamed(chunks: Any, card: Card, cancel: threading.Event | None) -> Iterator[Event]:
    parts: list[str] = []
    reasoning = ReasoningParts()
    splitter = ThinkSplitter(reasoning)
    usage = None
    response_id = None
    finish_reason = None
    with chunks:  # closes the HTTP response, also on cancel and errors
        for chunk in chunks:
            if cancelled(cancel):  # text that arrived after the stop is not kept
                break
            response_id = response_id or chunk.id
            if getattr(chunk, "usage", None) is not None:
                usage = chat_usage(chunk.usage)
            for choice in getattr(chunk, "choices", None) or ():
                if getattr(choice, "index", None) not in (0, None):  # a missing index is 0
                    continue
                if choice.finish_reason:
                    finish_reason = choice.finish_reason
                event = reasoning.add(_reasoning_field(choice.delta))
                if event is not None:
                    yield event
                text = choice.delta.content if choice.delta is not None else None
                if text:
                    yield from _keep(splitter.feed(text), parts)
            if cancelled(cancel):
                break
    yield from _keep(splitter.finish(), parts)
    if cancelled(cancel):
        yield Done(
            "".join(parts), response_id=response_id, interrupted=True, reasoning=reasoning.text
        )
        return
    if finish_reason is None:  # no end marker: the server stopped mid-reply (SPEC §7.2)
        yield ended_early(
            card,
            parts,
            "finish_reason",
            usage=usage,
            response_id=response_id,
            reasoning=reasoning.text,
        )
        return
    yield Done(
        "".join(parts),
        usage=usage,
        response_id=response_id,
        finish_reason=finish_reason,
        reasoning=reasoning.text,
    )


def _keep(events: list[TextDelta | ReasoningDelta], parts: list[str]) -> Iterator[Event]:
    """Yield ``events``, keeping the answer's text in ``parts``."""
    for event in events:
        if isinstance(event, TextDelta):
            parts.append(event.text)
        yield event
