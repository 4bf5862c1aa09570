"""What an adapter's ``stream()`` yields.

Every stream yields zero or more :class:`TextDelta` (non-empty text, in order) and then exactly
one :class:`Done`, whose ``text`` is the concatenation of all deltas. ``usage`` is the
provider's token usage normalised (SPEC §6.4) to ``{"input", "cachedRead", "cacheWrite",
"output"}`` — integers, all four present, 0 where the provider reports none; ``input`` counts
every prompt token, cached, written or not — when the provider reported it, else ``None``. A stream stopped through its ``cancel`` event ends with ``Done(interrupted=True)``
holding the partial text received so far (usage is then usually ``None``); nothing is raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Done", "Event", "TextDelta"]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply, as it arrived."""

    text: str


@dataclass(frozen=True)
class Done:
    """The end of a reply: full (or partial, when ``interrupted``) text and what the API reported."""

    text: str
    usage: dict[str, int] | None = None
    response_id: str | None = None
    interrupted: bool = False
    finish_reason: str | None = None


Event = TextDelta | Done


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_dict(
    prompt: Any, completion: Any, cached_read: Any = 0, cache_write: Any = 0
) -> dict[str, int] | None:
    """Normalised usage (``input`` = every prompt token), or ``None`` without a prompt count."""
    if not isinstance(prompt, int) or isinstance(prompt, bool):
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
