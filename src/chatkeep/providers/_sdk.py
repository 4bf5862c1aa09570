"""Shared plumbing of the SDK adapters: body preparation, client options, cancel checks.

Imports no SDK at module level; callers import theirs inside the call.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

__all__ = [
    "CONNECT_TIMEOUT",
    "NO_KEY",
    "READ_TIMEOUT",
    "cancelled",
    "run_sdk_call",
    "split_kwargs",
]

#: Seconds to wait for a connection, and for each read of a (possibly slow) stream.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 300.0

#: Sent as the API key when a card has none (local servers ignore it; the SDKs require one).
NO_KEY = "no-key"


def cancelled(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


@lru_cache(maxsize=16)
def _params_of(create: Callable[..., Any]) -> frozenset[str]:
    names = set(inspect.signature(create).parameters)
    return frozenset(names - {"extra_headers", "extra_query", "extra_body", "timeout", "self"})


def split_kwargs(create: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for an SDK ``create``: known fields as-is, the rest in ``extra_body``.

    The request body is sent byte-for-byte equivalent either way; this only keeps the SDK from
    rejecting fields it does not model (vendor extensions such as ``options`` or ``top_k``).
    """
    func = getattr(create, "__func__", create)
    known = _params_of(func)
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in body.items():
        (kwargs if key in known else extra)[key] = value
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def run_sdk_call(
    card: Any,
    payload: Mapping[str, Any],
    cancel: threading.Event | None,
    *,
    client: Callable[[Any], Any],
    create: Callable[[Any], Callable[..., Any]],
    single: Callable[[Any], Iterator[Any]],
    streamed: Callable[[Any], Iterator[Any]],
    translate: Callable[[BaseException, Any], BaseException],
) -> Iterator[Any]:
    """The one shape of every adapter's ``stream``: stop early when cancelled, make the SDK
    client, call ``create``, hand the result to ``single`` or ``streamed`` (per ``card.stream``),
    translate SDK errors in the adapter's one place, and always close the client."""
    from .events import Done

    if cancelled(cancel):
        yield Done("", interrupted=True)
        return
    sdk = client(card)
    try:
        call = create(sdk)
        result = call(**split_kwargs(call, payload))
        yield from (streamed(result) if card.stream else single(result))
    except Exception as exc:
        raise translate(exc, card) from exc
    finally:
        sdk.close()
