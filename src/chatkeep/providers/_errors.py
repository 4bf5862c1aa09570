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

import html
import re
from collections.abc import Mapping
from typing import Any

from ..errors import ContextOverflow, ProviderError
from ..rules.overflow import is_context_overflow
from .cards import Card

__all__ = [
    "dropped_mid_reply",
    "looks_like_html",
    "not_an_api",
    "page_excerpt",
    "error_code",
    "error_message",
    "mode_error",
    "network_error",
    "status_error",
    "stream_error",
    "timeout_error",
]

_MAX_MESSAGE = 500
_MAX_EXCERPT = 160
_HTML_START = re.compile(r"\A\s*(?:<!doctype html|<html|<head|<body|<\?xml[^>]*>\s*<html)", re.I)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_SKIP = re.compile(r"<(script|style|head)[^>]*>.*?</\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")


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


def looks_like_html(text: Any) -> bool:
    """Whether ``text`` is a web page (what a non-LLM server answers), not an API body."""
    return isinstance(text, str) and bool(_HTML_START.match(text))


def page_excerpt(page: str) -> str:
    """A short, tag-stripped excerpt of a web page: its title and the start of its text."""
    title_match = _TITLE.search(page)
    title = " ".join(html.unescape(title_match.group(1)).split()) if title_match else ""
    text = " ".join(html.unescape(_TAG.sub(" ", _SKIP.sub(" ", page))).split())
    if title and text.startswith(title):
        text = text[len(title) :].lstrip()
    joined = f"{title} — {text}" if title and text else title or text
    if len(joined) > _MAX_EXCERPT:
        joined = joined[: _MAX_EXCERPT - 1].rstrip() + "…"
    return joined or "an empty page"


def not_an_api(card: Card, status: int, page: str) -> ProviderError:
    """The error for a web page where an API answer was expected: the base URL is most likely
    not an LLM API (a web server, a router, a proxy page); the page shows as a short excerpt."""
    hint = (
        f"the base URL {card.base_url} seems not to be an LLM API: give the API root, "
        "e.g. https://api.openai.com/v1, or http://localhost:11434/v1 for Ollama "
        f"(chatkeep provider add {card.name} --base-url URL …)"
    )
    if status >= 500:
        hint += "; if the URL is right, the server behind it is failing: try again later"
    return _make(
        ProviderError,
        f"{_label(card)} answered HTTP {status} with a web page, not an API response: "
        f"“{page_excerpt(page)}”",
        status=status,
        hint=hint,
        code="not_an_api",
        body=None,
    )


def status_error(card: Card, status: int, body: Any, fallback_message: str = "") -> ProviderError:
    """The error for an HTTP error response (``status`` ≥ 400)."""
    for page in (body, fallback_message):
        if looks_like_html(page):
            return not_an_api(card, status, page)
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


KEPT_PARTIAL = "the partial reply was kept, marked interrupted"


def dropped_mid_reply(err: ProviderError, card: Card) -> ProviderError:
    """``err`` for a stream that failed after part of the reply reached the user: a dropped
    connection or a timeout says so (not "could not reach … check the base URL", which is
    wrong once text arrived); every such error's hint says the partial answer was kept."""
    if err.code in ("connection_error", "timeout") and err.status is None:
        detail = err.message.partition(f" at {card.base_url}: ")[2] or err.message
        what = "stalled" if err.code == "timeout" else "dropped"
        return _make(
            type(err),
            f"the connection to {_label(card)} {what} in the middle of the reply ({detail})",
            status=None,
            hint=KEPT_PARTIAL,
            code=err.code,
            body=err.body,
        )
    err.hint = f"{err.hint}; {KEPT_PARTIAL}" if err.hint else KEPT_PARTIAL
    return err


def timeout_error(
    card: Card, exc: BaseException, *, connect_timeout: type[BaseException] | None = None
) -> ProviderError:
    """The error for a timeout: a connect timeout is retried like any connection failure; a
    read timeout (the server took the request and then stayed silent for the card's
    ``timeout``) is not — asking a stuck server again only multiplies the wait."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in chain:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    connecting = connect_timeout is not None and any(isinstance(e, connect_timeout) for e in chain)
    if connecting:
        return network_error(card, str(exc) or type(exc).__name__, timeout=True)
    return _make(
        ProviderError,
        f"{_label(card)} at {card.base_url} sent nothing for {card.timeout:g} s",
        status=None,
        hint="the server took the request but did not answer (overloaded, stuck or still "
        "loading the model); try again later, or give the card a longer timeout for a slow "
        f"local model (chatkeep provider add {card.name} … --timeout 300)",
        code="timeout",
        body=None,
        transient=False,
    )
