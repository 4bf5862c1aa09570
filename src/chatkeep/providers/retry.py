"""Transient retries (SPEC §7.3).

``with_retries(call, *, retries=2, delay=1.0, sleep=time.sleep)`` calls ``call()`` and returns
its result. When it raises a *transient* error — a network failure (connection refused, dropped
connection, timeout) or HTTP 429 — it sleeps ``delay × attempt`` seconds and calls again, at most
``retries`` more times; then the last error propagates. Everything else, and above all
``ContextOverflow`` (whatever its status), propagates at once: overflow is not transient.

``sleep`` is injectable so tests keep real HTTP but skip the wall-clock wait; ``on_retry(attempt,
error)`` lets a UI say "retrying…". Streaming retries live in :mod:`chatkeep.providers.send`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from ..errors import ContextOverflow, ProviderError

__all__ = ["DEFAULT_DELAY", "DEFAULT_RETRIES", "is_transient", "with_retries"]

T = TypeVar("T")

DEFAULT_RETRIES = 2
DEFAULT_DELAY = 1.0


def is_transient(error: BaseException) -> bool:
    """True for errors worth retrying: network failures and HTTP 429, never overflow."""
    if isinstance(error, ContextOverflow):
        return False
    if isinstance(error, ProviderError):
        return error.status == 429 or bool(getattr(error, "transient", False))
    return isinstance(error, ConnectionError | TimeoutError)


def with_retries(
    call: Callable[[], T],
    *,
    retries: int = DEFAULT_RETRIES,
    delay: float = DEFAULT_DELAY,
    sleep: Callable[[float], object] = time.sleep,
    on_retry: Callable[[int, BaseException], object] | None = None,
) -> T:
    """``call()``, retried up to ``retries`` times on transient errors (delay × attempt)."""
    attempt = 0
    while True:
        try:
            return call()
        except Exception as exc:
            if attempt >= retries or not is_transient(exc):
                raise
            attempt += 1
            if on_retry is not None:
                on_retry(attempt, exc)
            sleep(delay * attempt)
