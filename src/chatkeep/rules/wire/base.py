"""Shared pieces of the wire builders: the request object, URL joining, serialization, steps.

A builder is pure: stored history in, :class:`WireRequest` out. ``body`` is exactly the JSON
body the API accepts; :func:`serialize` gives its canonical bytes (insertion order, compact, no
ASCII escaping), which is what request accounting and prefix comparisons use.

Every style runs the same history steps first (:data:`HISTORY_STEPS`): age stale attachments,
prepare the history for the model, then make every image a type the APIs accept. A step is a pure ``history -> history`` function that
returns its input when it changes nothing; adding a step is adding one function to the tuple.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...entries import Entry, image_part_url, is_image_part, is_text_part
from ...errors import InvalidValue
from ..context import age_stale_attachments
from ..images import prepare_history_for_model
from ..labels import compact_entry_image_parts
from ..sendable import sendable_history

__all__ = [
    "HISTORY_STEPS",
    "TURN_STEPS",
    "HistoryStep",
    "WireRequest",
    "api_root",
    "canonical_parts",
    "join_base_url",
    "no_answer",
    "run_steps",
    "serialize",
]

HistoryStep = Callable[[list[Entry]], list[Entry]]

#: The send-time pipeline every builder runs before shaping messages (SPEC §6.1); the last step
#: converts stored image types the APIs do not take (BMP, AVIF, …) to PNG, in the request only.
HISTORY_STEPS: tuple[HistoryStep, ...] = (
    age_stale_attachments,
    prepare_history_for_model,
    sendable_history,
)
#: The steps the new turn (and a server-side transcript's unanswered run) goes through.
TURN_STEPS: tuple[HistoryStep, ...] = (prepare_history_for_model, sendable_history)

_VERSION_SUFFIX_RE = re.compile(r"/v\d+$")


@dataclass(frozen=True)
class WireRequest:
    """One request, ready to send: API style, full URL and the JSON body. ``held_back`` counts
    the images the per-request cap sent as labels (SPEC §5.5); it is not part of the body."""

    style: str
    url: str
    body: dict[str, Any]
    held_back: int = 0


def serialize(body: dict[str, Any]) -> bytes:
    """Canonical bytes of a request body (deterministic for equal inputs)."""
    if not isinstance(body, dict):
        raise InvalidValue(f"a request body is a JSON object, got {type(body).__name__}")
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise InvalidValue(f"the request body is not serializable JSON: {exc}") from None


def api_root(base_url: str) -> str:
    """``base_url`` without trailing ``/``, with ``/v1`` appended unless it ends in ``/v<digits>``."""
    root = (base_url or "").strip().rstrip("/")
    if _VERSION_SUFFIX_RE.search(root):
        return root
    return root + "/v1"


def join_base_url(base_url: str, path: str) -> str:
    """``api_root(base_url)`` + ``/`` + ``path``."""
    return api_root(base_url) + "/" + path.lstrip("/")


def run_steps(history: list[Entry], steps: Sequence[HistoryStep] = HISTORY_STEPS) -> list[Entry]:
    for step in steps:
        history = step(history)
    return history


def canonical_parts(entry: Entry) -> str | list[dict[str, Any]]:
    """The entry's content in canonical chat shape: string, or text/image_url parts.

    ``input_text`` parts become ``text``; ``"image_url": str`` becomes ``{"url": str}``; extra
    keys on parts are dropped. Assistant entries cannot carry images in any API, so their image
    parts become labels.
    """
    if entry.get("role") == "assistant":
        entry = compact_entry_image_parts(entry)
    content = entry.get("content")
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if is_text_part(part):
            parts.append({"type": "text", "text": part.get("text", "")})
        elif is_image_part(part):
            parts.append({"type": "image_url", "image_url": {"url": image_part_url(part)}})
    return parts


def no_answer(entry: Entry) -> bool:
    """An assistant entry with no answer text and no image (a reply that held only reasoning):
    it has nothing to send, and the APIs refuse an empty assistant message."""
    if entry.get("role") != "assistant":
        return False
    content = entry.get("content")
    if isinstance(content, str):
        return not content
    return not any(is_image_part(p) or (is_text_part(p) and p.get("text")) for p in content or [])
