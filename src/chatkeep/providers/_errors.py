"""Building chatkeep errors from what a provider said (shared by the adapters).

Each adapter has exactly one translation function that pulls ``status``, ``body`` and a message
out of its SDK's exception and calls :func:`status_error`, :func:`network_error` or
:func:`stream_error` here, so every style maps errors to the §12 tree the same way:

* overflow (:func:`~chatkeep.rules.overflow.is_context_overflow`) → ``ContextOverflow``;
* 401/403 → API key hint; 404 → model / base URL hint; 429 → rate-limit hint;
* connection failures and timeouts → base URL / server running hint, ``status=None``;
* anything else → ``ProviderError`` with the provider's own message.

``status``, ``code`` (the provider's error code, else its error type) and ``body`` are kept.
Errors that are safe to retry (§7.3: network errors and 429) carry ``transient = True``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ContextOverflow, ProviderError
from ..rules.overflow import is_context_overflow
from .cards import Card

__all__ = [
    "error_code",
    "error_message",
    "mode_error",
    "network_error",
    "status_error",
    "stream_error",
]

_MAX_MESSAGE = 500


def _error_object(body: Any) -> Mapping[str, Any] | None:
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return inner
        response = body.get("response")  # a Responses ``response.failed`` event
        if isinstance(response, Mapping) and isinstance(response.get("error"), Mapping):
            return response["error"]
        return body
    return None


def error_code(body: Any) -> str | None:
    """The provider's machine-readable error code (or error type) from an error body."""
    err = _error_object(body)
    if err is None:
        return None
    details = err.get("details")
    if isinstance(details, Mapping) and isinstance(details.get("error_code"), str):
        return details["error_code"]
    code = err.get("code")
    if isinstance(code, str) and code and not code.isdigit():
        return code
    kind = err.get("type")
    if isinstance(kind, str) and kind and kind != "error":
        return kind
    return None


def error_message(body: Any, fallback: str = "") -> str:
    """The provider's human-readable message from an error body."""
    err = _error_object(body)
    if err is not None:
        for key in ("message", "error", "detail"):
            if isinstance(err.get(key), str) and err[key]:
                return err[key][:_MAX_MESSAGE]
    if isinstance(body, str) and body.strip():
        return body.strip()[:_MAX_MESSAGE]
    return (fallback or "no error message")[:_MAX_MESSAGE]


def _label(card: Card) -> str:
    return f"provider {card.name!r} ({card.style}, model {card.model})"


def _make(
    cls: type[ProviderError],
    message: str,
    *,
    status: int | None,
    hint: str | None,
    code: str | None,
    body: Any,
    transient: bool = False,
) -> ProviderError:
    err = cls(message, status=status, hint=hint, code=code, body=body)
    err.transient = transient  # type: ignore[attr-defined]
    return err


def _overflow_or(err: ProviderError, card: Card, raw_message: str) -> ProviderError:
    # Judge on what the provider said only (not on our label, which holds user-chosen names).
    probe = ProviderError(raw_message, status=err.status, code=err.code, body=err.body)
    if not is_context_overflow(probe):
        return err
    return _make(
        ContextOverflow,
        f"{_label(card)}: the request does not fit the model's context window: {raw_message}",
        status=err.status,
        hint=None,
        code=err.code,
        body=err.body,
    )


def status_error(card: Card, status: int, body: Any, fallback_message: str = "") -> ProviderError:
    """The error for an HTTP error response (``status`` ≥ 400)."""
    message = error_message(body, fallback_message)
    code = error_code(body)
    transient = False
    if status in (401, 403):
        hint = (
            "check the API key: set the variable named by the card's apiKeyEnv "
            "(or OPENAI_API_KEY for the environment fallback) to a valid key"
        )
    elif status == 404:
        hint = (
            f"check the model name {card.model!r} and the base URL {card.base_url} "
            "(it should be the API root, e.g. https://api.openai.com/v1)"
        )
    elif status == 429:
        hint = "the provider is rate limiting: wait a moment and retry, or switch model/provider"
        transient = True
    elif status >= 500:
        hint = "the provider failed on its side; try again later"
    else:
        hint = "the provider rejected the request; see its message"
    err = _make(
        ProviderError,
        f"{_label(card)} returned HTTP {status}: {message}",
        status=status,
        hint=hint,
        code=code,
        body=body,
        transient=transient,
    )
    return _overflow_or(err, card, message)


def stream_error(card: Card, body: Any, fallback_message: str = "") -> ProviderError:
    """The error for a failure reported inside a 200 stream (an SSE ``error`` event)."""
    message = error_message(body, fallback_message)
    err = _make(
        ProviderError,
        f"{_label(card)} failed mid-stream: {message}",
        status=None,
        hint="the provider reported an error while answering; try again",
        code=error_code(body),
        body=body,
    )
    return _overflow_or(err, card, message)


def mode_error(card: Card, body: Any, what: str) -> ProviderError:
    """The error for an answer in the other mode that carries an error (``what`` says how the
    server answered, e.g. "one JSON object instead of a stream")."""
    message = error_message(body, "no error message")
    err = _make(
        ProviderError,
        f"{_label(card)} answered with {what}: {message}",
        status=None,
        hint="the server ignored the card's stream setting; if this repeats, "
        "set the card's stream option to match the server (provider add … --no-stream)",
        code=error_code(body),
        body=body,
    )
    return _overflow_or(err, card, message)


def network_error(card: Card, detail: str, *, timeout: bool = False) -> ProviderError:
    """The error for a connection failure, dropped stream or timeout (retryable)."""
    what = "timed out talking to" if timeout else "could not reach"
    return _make(
        ProviderError,
        f"{what} {_label(card)} at {card.base_url}: {detail or 'connection error'}",
        status=None,
        hint=f"check the base URL {card.base_url} and that the server is running",
        code="timeout" if timeout else "connection_error",
        body=None,
        transient=True,
    )
