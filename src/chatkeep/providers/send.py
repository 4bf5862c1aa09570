"""One entry point over the three adapters, with the transient-retry policy for streams.

* ``stream(card, body, *, cancel=None)`` — the adapter of ``card.style`` (``chat``,
  ``responses``, ``anthropic``); yields ``TextDelta``/``ReasoningDelta``… then one ``Done``.
* ``stream_with_retries(card, body, *, cancel=None, retries=2, delay=1.0, sleep=time.sleep,
  on_retry=None)`` — the same stream, re-sent on a transient error (network failure, HTTP 429;
  never overflow) **only while no text or reasoning has been yielded yet**: a reply that already reached the
  user is never restarted behind their back, so a connection dropped mid-reply raises the
  (transient-flagged) ``ProviderError`` to the caller. Delay ``delay × attempt``. A ``cancel``
  set during a retry wait ends the stream with ``Done("", interrupted=True)``.
* ``complete(card, body, ...)`` — consume a retried stream and return its ``Done``
  (``on_delta(text)`` sees each piece of the answer; reasoning is in ``Done.reasoning``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..errors import ProviderConfigError, ProviderError
from .cards import STYLES, Card
from .events import Done, Event, ReasoningDelta, TextDelta
from .retry import DEFAULT_DELAY, DEFAULT_RETRIES, is_transient

__all__ = ["adapter_for", "complete", "stream", "stream_with_retries"]


def adapter_for(style: str) -> Callable[..., Iterator[Event]]:
    """The ``stream`` function of the adapter for ``style``."""
    if style == "chat":
        from .chat import stream as chat_stream

        return chat_stream
    if style == "responses":
        from .responses import stream as responses_stream

        return responses_stream
    if style == "anthropic":
        from .messages import stream as messages_stream

        return messages_stream
    raise ProviderConfigError(f"unknown provider style {style!r} (known: {', '.join(STYLES)})")


def stream(
    card: Card, body: Mapping[str, Any], *, cancel: threading.Event | None = None
) -> Iterator[Event]:
    """Stream the reply to ``body`` from ``card`` (no retries)."""
    return adapter_for(card.style)(card, body, cancel=cancel)


def stream_with_retries(
    card: Card,
    body: Mapping[str, Any],
    *,
    cancel: threading.Event | None = None,
    retries: int = DEFAULT_RETRIES,
    delay: float = DEFAULT_DELAY,
    sleep: Callable[[float], object] = time.sleep,
    on_retry: Callable[[int, BaseException], object] | None = None,
) -> Iterator[Event]:
    """Stream with transient retries while nothing has been yielded (see module docstring)."""
    adapter = adapter_for(card.style)
    attempt = 0
    while True:
        produced = False
        try:
            for event in adapter(card, body, cancel=cancel):
                if isinstance(event, TextDelta | ReasoningDelta):
                    produced = True
                yield event
            return
        except ProviderError as exc:
            if produced or attempt >= retries or not is_transient(exc):
                raise
            attempt += 1
            if on_retry is not None:
                on_retry(attempt, exc)
            sleep(delay * attempt)
            if cancel is not None and cancel.is_set():
                yield Done("", interrupted=True)
                return


def complete(
    card: Card,
    body: Mapping[str, Any],
    *,
    cancel: threading.Event | None = None,
    on_delta: Callable[[str], object] | None = None,
    retries: int = DEFAULT_RETRIES,
    delay: float = DEFAULT_DELAY,
    sleep: Callable[[float], object] = time.sleep,
) -> Done:
    """Run :func:`stream_with_retries` to the end and return the final ``Done``."""
    for event in stream_with_retries(
        card, body, cancel=cancel, retries=retries, delay=delay, sleep=sleep
    ):
        if isinstance(event, Done):
            return event
        if isinstance(event, TextDelta) and on_delta is not None:
            on_delta(event.text)
    raise ProviderError(f"provider {card.name!r} ended without a reply")  # pragma: no cover
