"""Context-overflow detection (SPEC §7.4).

``is_context_overflow(error) -> bool`` answers one question: did the provider refuse the request
because it does not fit the model's context window?  It accepts

* an exception — a chatkeep :class:`~chatkeep.errors.ProviderError` (``status``, ``code``,
  ``body``), an SDK error object (``status_code``, ``code``, ``body``, ``message``), or any other
  exception (its text is used);
* a decoded error body (``dict``) in any provider's shape: ``{"error": {...}}`` (OpenAI, Azure,
  Anthropic, Gemini, llama.cpp), a flat ``{"object": "error", "message": ...}`` (vLLM), or a
  streaming failure event (``{"type": "response.failed", "response": {"error": {...}}}``);
* a string (a raw body or message).

Order of evidence:

1. structured signals — an error ``code``/``type`` equal to ``context_length_exceeded`` (OpenAI,
   Azure) or ``exceed_context_size_error`` (llama.cpp server), or HTTP status 413 (request too
   large: proxies, and Anthropic, whose 413 body carries the type ``request_too_large`` — that
   type counts as the 413 even when the status is not at hand);
2. only then a case-insensitive search of the message text for exactly the phrases listed in the
   spec (:data:`OVERFLOW_PATTERNS`), including the Chinese wordings.

The function is pure, never raises, and never mutates its input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..errors import ContextOverflow

__all__ = ["OVERFLOW_CODES", "OVERFLOW_PATTERNS", "is_context_overflow"]

#: Error codes / types that mean "the prompt does not fit", whatever the message says.
OVERFLOW_CODES: frozenset[str] = frozenset(
    {"context_length_exceeded", "exceed_context_size_error", "request_too_large"}
)

#: HTTP status that always means the request was too large.
_OVERFLOW_STATUS = 413

#: The message phrases of SPEC §7.4, matched case-insensitively anywhere in the text.
OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"context[_ ]?(length|window|limit)",
    r"maximum context",
    r"context length",
    r"prompt is too long",
    r"grown too long",
    r"too many (input )?tokens",
    r"request too large",
    r"length.{0,12}exceed",
    r"exceeds the available context size",
    r"exceeds the maximum number of tokens",
    r"input tokens exceed",
    r"输入.{0,8}过长",
    r"长度.{0,8}(超|限制)",
    r"上下文.{0,12}(超|限|过长|太长)",
)

_OVERFLOW_RE = re.compile(
    "|".join(f"(?:{p})" for p in OVERFLOW_PATTERNS), re.IGNORECASE | re.DOTALL
)

# Keys of an error body whose string values are codes, and whose values are human messages.
_CODE_KEYS = ("code", "type", "error_code")
_MESSAGE_KEYS = ("message", "msg", "detail", "error_msg", "error")
_MAX_DEPTH = 6


def is_context_overflow(error: Any) -> bool:
    """True when ``error`` says the request did not fit the model's context window."""
    try:
        statuses, codes, texts = _evidence(error)
    except Exception:  # pragma: no cover - defensive: odd objects must never crash a turn
        return False
    if _OVERFLOW_STATUS in statuses:
        return True
    if any(c.strip().lower() in OVERFLOW_CODES for c in codes):
        return True
    return any(_OVERFLOW_RE.search(t) for t in texts if t)


# --------------------------------------------------------------------------- evidence gathering


def _evidence(error: Any) -> tuple[set[int], list[str], list[str]]:
    statuses: set[int] = set()
    codes: list[str] = []
    texts: list[str] = []

    if isinstance(error, BaseException):
        if isinstance(error, ContextOverflow):
            # Already classified (by this very function, at the adapter).
            return {_OVERFLOW_STATUS}, [], []
        for attr in ("status", "status_code"):
            status = getattr(error, attr, None)
            if isinstance(status, int) and not isinstance(status, bool):
                statuses.add(status)
        for attr in ("code", "type", "error_code"):
            value = getattr(error, attr, None)
            if isinstance(value, str):
                codes.append(value)
        body = getattr(error, "body", None)
        if body is not None:
            _scan(body, statuses, codes, texts, 0)
        message = getattr(error, "message", None)
        if isinstance(message, str):
            texts.append(message)
        else:
            texts.append(str(error))
        return statuses, codes, texts

    _scan(error, statuses, codes, texts, 0)
    return statuses, codes, texts


def _scan(value: Any, statuses: set[int], codes: list[str], texts: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH or value is None:
        return
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        decoded = _maybe_json(value)
        if decoded is not None:
            _scan(decoded, statuses, codes, texts, depth + 1)
        else:
            texts.append(value)
            # A raw string may carry a structured code verbatim ("... 'code': 'context_length_exceeded'").
            codes.extend(_bare_codes(value))
        return
    if isinstance(value, dict):
        for key in _CODE_KEYS:
            code = value.get(key)
            if isinstance(code, str):
                codes.append(code)
            elif key == "code" and isinstance(code, int) and not isinstance(code, bool):
                statuses.add(code)  # Gemini / llama.cpp / vLLM put the HTTP status in "code"
        for key in _MESSAGE_KEYS:
            msg = value.get(key)
            if isinstance(msg, str):
                texts.append(msg)
        for child in _children(value):
            _scan(child, statuses, codes, texts, depth + 1)
        return
    if isinstance(value, list | tuple):
        for item in value[:20]:
            _scan(item, statuses, codes, texts, depth + 1)
        return
    texts.append(str(value))


def _children(body: dict[str, Any]) -> Iterator[Any]:
    for key in ("error", "errors", "response", "details", "detail"):
        child = body.get(key)
        if isinstance(child, dict | list):
            yield child


def _maybe_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _bare_codes(text: str) -> Iterator[str]:
    lowered = text.lower()
    for code in OVERFLOW_CODES:
        if code in lowered:
            yield code
