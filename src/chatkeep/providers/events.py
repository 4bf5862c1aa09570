"""What an adapter's ``stream()`` yields.

Every stream yields zero or more :class:`TextDelta` (non-empty text, in order) and
:class:`ReasoningDelta` (the model's reasoning, "thinking", as it arrives: never part of the
answer, see :mod:`chatkeep.providers.reasoning`) and then exactly one :class:`Done`, whose
``text`` is the concatenation of all text deltas and ``reasoning`` that of all reasoning deltas
(trimmed; ``""`` when the reply had none). ``usage`` is the
provider's token usage normalised (SPEC §6.4) to ``{"input", "cachedRead", "cacheWrite",
"output"}`` — integers, all four present, 0 where the provider reports none; ``input`` counts
every prompt token, cached, written or not — when the provider reported it, else ``None``. A stream stopped through its ``cancel`` event ends with ``Done(interrupted=True)``
holding the partial text (and reasoning) received so far (usage is then usually ``None``);
nothing is raised.

A stream whose body ends cleanly **without the provider's end marker** (chat: no
``finish_reason``; responses: no ``response.completed``/``response.incomplete``; anthropic: no
``message_stop``) after some text or reasoning arrived is not a complete reply (SPEC §7.2): it
ends with ``Done(interrupted=True, cut_short=True)`` holding them. Before anything arrived, the
same end is a transient ``ProviderError`` (retried like a dropped connection).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..limits import MAX_INT, is_count
from ._errors import network_error

__all__ = ["Done", "Event", "ReasoningDelta", "TextDelta", "ended_early"]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply, as it arrived."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning, as it arrived (shown apart, stored apart, never sent)."""

    text: str


@dataclass(frozen=True)
class Done:
    """The end of a reply: full (or partial, when ``interrupted``) text and what the API reported."""

    text: str
    usage: dict[str, int] | None = None
    response_id: str | None = None
    interrupted: bool = False
    finish_reason: str | None = None
    #: The stream ended without the provider's end marker (``interrupted`` is then true too).
    cut_short: bool = False
    #: The reasoning that came with the reply (``""`` when none).
    reasoning: str = ""


Event = TextDelta | ReasoningDelta | Done


def _int(value: Any) -> int:
    """A reported count, or 0 when the provider gave none usable (not an integer from 1 to
    2**63 − 1: such a count cannot be stored, SPEC §12)."""
    return value if is_count(value) else 0


def usage_dict(
    prompt: Any, completion: Any, cached_read: Any = 0, cache_write: Any = 0
) -> dict[str, int] | None:
    """Normalised usage (``input`` = every prompt token), or ``None`` without a prompt count
    that can be stored (an integer within 64 bits): the reply is then kept without usage."""
    if not isinstance(prompt, int) or isinstance(prompt, bool) or prompt > MAX_INT:
        return None
    return {
        "input": _int(prompt),
        "cachedRead": _int(cached_read),
        "cacheWrite": _int(cache_write),
        "output": _int(completion),
    }


def dig(obj: Any, *path: str) -> Any:
    """``obj.a.b`` (or ``obj["a"]["b"]``) following ``path``; ``None`` where anything is missing."""
    for name in path:
        if obj is None:
            return None
        obj = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return obj


def ended_early(
    card: Any,
    parts: list[str],
    marker: str,
    *,
    usage: dict[str, int] | None = None,
    response_id: str | None = None,
    reasoning: str = "",
) -> Done:
    """The end of a stream that closed without its end marker ``marker`` (SPEC §7.2): the text
    (and reasoning) so far as an interrupted, cut-short reply; with nothing at all, a transient
    error."""
    if not parts and not reasoning:
        raise network_error(card, f"the stream ended before any reply and without {marker}")
    return Done(
        "".join(parts),
        usage=usage,
        response_id=response_id,
        interrupted=True,
        cut_short=True,
        reasoning=reasoning,
    )
