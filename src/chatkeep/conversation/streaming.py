"""One streamed reply as the engine sees it (SPEC §7.2, §7.3): what reached the caller so far.

* :func:`stream_reply` runs :func:`~chatkeep.providers.stream_with_retries` for one request and
  hands each piece to its listener — ``on_delta(text)`` for the answer, ``on_reasoning(text)``
  for the model's reasoning ("thinking", its own event: never mixed into the answer) — while
  :class:`Produced` keeps both, so a stream that fails part-way still has them. Retries are
  announced through ``notify``. It returns the stream's ``Done``.
* :class:`CutOff` is a provider error raised after part of a reply arrived (answer or
  reasoning); it carries what arrived, which the engine keeps as an interrupted reply.
* :class:`Outcome` is a finished stream with the request that produced it and the rescue stubs
  to write (SPEC §7.4).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ProviderError
from ..providers import Card, Done, ReasoningDelta, TextDelta, stream_with_retries
from .planner import RequestPlan

__all__ = ["Callback", "CutOff", "Outcome", "Produced", "stream_reply"]

Callback = Callable[[str], object] | None


@dataclass
class Outcome:
    done: Done
    plan: RequestPlan
    changed: list[dict[str, Any]]


class Produced:
    """The answer and reasoning pieces that reached the caller during the current stream."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.thoughts: list[str] = []

    @property
    def value(self) -> bool:
        """Whether any piece arrived (the stream is then not restarted)."""
        return bool(self.pieces or self.thoughts)

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    @property
    def reasoning(self) -> str:
        return "".join(self.thoughts).strip()


class CutOff(Exception):
    """A provider error after part of the reply streamed (carries what arrived)."""

    def __init__(self, error: ProviderError, produced: Produced, plan: RequestPlan) -> None:
        super().__init__(str(error))
        self.error, self.plan = error, plan
        self.text, self.reasoning = produced.text, produced.reasoning


def stream_reply(
    card: Card,
    plan: RequestPlan,
    cancel: threading.Event,
    listeners: tuple[Callback, Callback],
    produced: Produced,
    *,
    retries: int,
    delay: float,
    sleep: Callable[[float], object],
    notify: Callable[[str], None],
) -> Done:
    """Stream ``plan``'s request to its ``Done`` (see the module docstring)."""
    on_delta, on_reasoning = listeners

    def on_retry(attempt: int, error: BaseException) -> None:
        reason = getattr(error, "message", None) or str(error)  # hint comes with the error
        notify(f"the provider did not answer ({reason}); retrying ({attempt}/{retries})")

    for event in stream_with_retries(
        card,
        plan.request.body,
        cancel=cancel,
        retries=retries,
        delay=delay,
        sleep=sleep,
        on_retry=on_retry,
    ):
        if isinstance(event, TextDelta):
            produced.pieces.append(event.text)
            if on_delta is not None:
                on_delta(event.text)
        elif isinstance(event, ReasoningDelta):
            produced.thoughts.append(event.text)
            if on_reasoning is not None:
                on_reasoning(event.text)
        else:
            return event
    return Done("", interrupted=cancel.is_set())  # pragma: no cover - adapters end with Done
