"""Shared plumbing of the SDK adapters: body preparation, client options, cancel checks.

Imports no SDK at module level; callers import theirs inside the call.

A web page (``text/html``, or a body that starts like one) where an API answer was expected is
reported as "the base URL seems not to be an LLM API", with a short excerpt of the page.
Servers that answer in the other mode are handled here, once for every style: a server that
streams although ``stream: false`` was asked (the SDK hands back the raw SSE text) has its
events parsed and read as a stream; a server that answers a streamed call with one JSON object
has that object read as a whole answer — or, when it is an error object, reported as the
provider's error, never as a connection failure. Parsed JSON is read through :class:`Obj`
(attribute access, ``None`` for what is missing), the way the adapters read SDK objects.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from . import _errors
from .events import Done

__all__ = [
    "CONNECT_TIMEOUT",
    "NO_KEY",
    "EventList",
    "Obj",
    "cancelled",
    "parse_sse",
    "run_sdk_call",
    "split_kwargs",
]

#: Seconds to wait for a connection (each read waits the card's ``timeout``).
CONNECT_TIMEOUT = 10.0

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


class Obj:
    """A parsed JSON object read like an SDK model: attributes, ``None`` when missing."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        for key, value in data.items():
            setattr(self, str(key), wrap(value))

    def __getattr__(self, name: str) -> Any:  # only for attributes that are not set
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    def get(self, name: str, default: Any = None) -> Any:
        return self.__dict__.get(name, default)


def wrap(value: Any) -> Any:
    """JSON value → the same with every object as an :class:`Obj`."""
    if isinstance(value, Mapping):
        return Obj(value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


class EventList(list[Any]):
    """Parsed events that can stand in for an SDK stream (``with events: for e in events``)."""

    def __enter__(self) -> EventList:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The JSON ``data:`` payloads of a server-sent-events text (``[DONE]`` and junk skipped)."""
    events: list[dict[str, Any]] = []
    for chunk in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].lstrip() for line in chunk.split("\n") if line.startswith("data:")
        )
        if not data or data.strip() == "[DONE]":
            continue
        try:
            value = json.loads(data)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _json_instead_of_stream(result: Any) -> Any | None:
    """The JSON body of a streamed call that the server answered without a stream, else None."""
    response = getattr(result, "response", None)
    headers = getattr(response, "headers", None)
    kind = headers.get("content-type", "") if headers is not None else ""
    if response is None or "json" not in str(kind).lower() or "event-stream" in str(kind).lower():
        return None
    raw = response.read()
    try:
        return json.loads(raw)
    except ValueError:
        return {"error": {"message": raw.decode("utf-8", "replace")[:500] or "empty body"}}


def _page_instead_of_stream(result: Any) -> str | None:
    """The web page a streamed call got instead of events (``text/html``), else None."""
    response = getattr(result, "response", None)
    headers = getattr(response, "headers", None)
    kind = headers.get("content-type", "") if headers is not None else ""
    if response is None or "html" not in str(kind).lower():
        return None
    return str(response.read()[:65536].decode("utf-8", "replace"))


def _is_error(body: Any) -> bool:
    return isinstance(body, Mapping) and ("error" in body and body.get("error") is not None)


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
    if cancelled(cancel):
        yield Done("", interrupted=True)
        return
    sdk = client(card)
    try:
        call = create(sdk)
        result = call(**split_kwargs(call, payload))
        if card.stream:
            page = _page_instead_of_stream(result)
            if page is not None:
                raise _errors.not_an_api(card, 200, page)
            whole = _json_instead_of_stream(result)
            if whole is None:
                yield from streamed(result)
            elif _is_error(whole) or (isinstance(whole, Mapping) and whole.get("type") == "error"):
                raise _errors.mode_error(card, whole, "one JSON error object instead of a stream")
            else:  # a whole answer where a stream was asked: read it as one
                yield from single(wrap(whole))
        elif _errors.looks_like_html(result):  # a web page, not an API answer
            raise _errors.not_an_api(card, 200, result)
        elif isinstance(result, str):  # a stream where a whole answer was asked
            events = parse_sse(result)
            failed = next((e for e in events if _is_error(e) or e.get("type") == "error"), None)
            if failed is not None:
                raise _errors.mode_error(card, failed, "an event stream instead of one JSON object")
            if not events:
                raise _errors.mode_error(
                    card,
                    {"error": {"message": result.strip()[:200] or "an empty body"}},
                    "a body that is neither JSON nor an event stream",
                )
            yield from streamed(EventList(wrap(e) for e in events))
        else:
            yield from single(result)
    except Exception as exc:
        raise translate(exc, card) from exc
    finally:
        sdk.close()
