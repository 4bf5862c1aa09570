"""The OpenAI SDK side shared by the ``chat`` and ``responses`` adapters.

``client(card)`` builds an ``openai.OpenAI`` for the card (base URL per :func:`sdk_base_url`,
``max_retries=0`` because chatkeep retries itself, connect/read timeouts); ``translate(exc,
card)`` is the one place where OpenAI SDK and transport exceptions become chatkeep errors.
"""

from __future__ import annotations

from typing import Any

from ..errors import ChatkeepError, ProviderConfigError
from . import _errors
from ._sdk import CONNECT_TIMEOUT, NO_KEY
from .cards import Card, sdk_base_url

__all__ = ["client", "translate"]


def client(card: Card) -> Any:
    import openai  # lazy: the SDK loads on the first call

    return openai.OpenAI(
        api_key=card.api_key or NO_KEY,
        base_url=sdk_base_url(card),
        max_retries=0,
        timeout=openai.Timeout(card.timeout, connect=CONNECT_TIMEOUT),
    )


def translate(exc: BaseException, card: Card) -> BaseException:
    """The chatkeep error for ``exc``; unrelated exceptions are returned unchanged."""
    if isinstance(exc, ChatkeepError):
        return exc
    import httpx2  # lazy, with the SDK: its HTTP library (a dropped stream raises its errors)
    import openai

    if isinstance(exc, openai.APIStatusError):
        return _errors.status_error(card, exc.status_code, exc.body, exc.message)
    if isinstance(exc, openai.APITimeoutError):
        return _errors.timeout_error(card, exc, connect_timeout=httpx2.ConnectTimeout)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return _errors.network_error(card, f"{exc}: {cause}" if cause else str(exc))
    if isinstance(exc, openai.APIError):  # an error event inside a 200 stream
        return _errors.stream_error(card, exc.body, exc.message)
    if isinstance(exc, httpx2.TimeoutException):
        return _errors.timeout_error(card, exc, connect_timeout=httpx2.ConnectTimeout)
    if isinstance(exc, httpx2.TransportError | httpx2.StreamError):  # dropped mid-stream
        return _errors.network_error(card, str(exc) or type(exc).__name__)
    if isinstance(exc, openai.OpenAIError):
        return ProviderConfigError(f"provider {card.name!r}: {exc}")
    return exc
