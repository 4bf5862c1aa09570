"""What an adapter's ``stream()`` yields.

Every stream yields zero or more :class:`TextDelta` (non-empty text, in order) and then exactly
one :class:`Done`, whose ``text`` is the concatenation of all deltas. ``usage`` is
``{"prompt_tokens": int, "completion_tokens": int}`` when the provider reported it, else
``None``. A stream stopped through its ``cancel`` event ends with ``Done(interrupted=True)``
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


def usage_dict(prompt: Any, completion: Any) -> dict[str, int] | None:
    """Normalized usage, or ``None`` when the provider reported no prompt token count."""
    if not isinstance(prompt, int) or isinstance(prompt, bool):
        return None
    done = completion if isinstance(completion, int) and not isinstance(completion, bool) else 0
    return {"prompt_tokens": prompt, "completion_tokens": done}
