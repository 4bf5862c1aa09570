"""Wire shapes of the loopback provider server: scripted replies and the three APIs' bodies.

A :class:`Text` may carry ``reasoning`` ("thinking"), sent the way each API sends it: Anthropic
``thinking`` blocks (``thinking_delta``, a ``signature_delta``; ``redacted=True`` adds a
``redacted_thinking`` block), Responses reasoning-summary events (a ``reasoning`` output item),
and for chat either a ``<think>…</think>`` section at the start of the content
(``reasoning_as="think"``) or ``reasoning_content`` (DeepSeek) / ``reasoning`` (OpenRouter)
delta fields. Reasoning chunks count as text chunks for :class:`Drop` and :class:`Close`.

Scripted reply types (:class:`Text`, :class:`HttpError`, :class:`StyledError`, :class:`Drop`,
:class:`StreamFailure`, :class:`Close`, :class:`Page`) and the renderers that turn a :class:`Text` into each API's real
response: a full JSON object (``FULL[style]``) or a sequence of SSE events (``STREAM[style]``,
yielding ``(is_text_chunk, bytes)`` so the server can count, delay or cut text chunks), and
``failure_event(style, body)`` for an error reported inside a 200 stream. Styles are ``chat``,
``responses`` and ``messages`` (Anthropic).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# --------------------------------------------------------------------------- replies


#: Every way the test server sends reasoning: (API style of the card, the form) — chat's
#: ``<think>``, ``reasoning_content`` and ``reasoning`` fields, Responses' reasoning summary,
#: Anthropic's thinking blocks.
REASONING_FORMS = [
    ("chat", "think"),
    ("chat", "reasoning_content"),
    ("chat", "reasoning"),
    ("responses", "summary"),
    ("anthropic", "thinking"),
]
REASONING_IDS = [f"{style}-{form}" for style, form in REASONING_FORMS]


@dataclass(frozen=True)
class Text:
    """A successful reply. ``chunks`` default: the text split after each space."""

    text: str = "Hello from the loopback server."
    chunks: Sequence[str] | None = None
    delay: float = 0.0
    prompt_tokens: int | None = None  # None: estimated from the request body
    completion_tokens: int | None = None  # None: one per chunk
    #: Of ``prompt_tokens``: read from the provider's prompt cache / written to it (Anthropic,
    #: and OpenAI's ``cache_write_tokens`` from GPT-5.6 on).
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    response_id: str | None = None
    stop_reason: str | None = None  # None: the style's normal end ("stop", "end_turn")
    #: Server quirks met in the wild: chat chunks without ``choices[].index``; answering with
    #: a stream although ``stream: false`` was asked (``True``) or with one JSON object
    #: although a stream was asked (``False``); ``None`` follows the request.
    omit_index: bool = False
    force_stream: bool | None = None
    #: The model's reasoning, sent before the text (split after each space unless
    #: ``reasoning_chunks``); ``reasoning_as`` picks the chat form: ``think``,
    #: ``reasoning_content`` or ``reasoning``.
    reasoning: str = ""
    reasoning_chunks: Sequence[str] | None = None
    reasoning_as: str = "think"
    redacted: bool = False

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        return _words(self.text)

    def thoughts(self) -> list[str]:
        if self.reasoning_chunks is not None:
            return list(self.reasoning_chunks)
        return _words(self.reasoning)


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]] if text else []


@dataclass(frozen=True)
class HttpError:
    """An HTTP error response; ``body`` is JSON-encoded unless it is ``str``/``bytes``."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StyledError:
    """An error whose body takes the Anthropic shape on ``/messages``, else the OpenAI shape."""

    kind: str  # rate_limit | server | auth | not_found


@dataclass(frozen=True)
class Drop:
    """Close the connection: before any response (``None``) or after ``after_chunks`` chunks."""

    after_chunks: int | None = None
    text: Text = Text("this reply will be cut off before it ends")


@dataclass(frozen=True)
class StreamFailure:
    """HTTP 200, ``after_chunks`` text chunks, then the style's in-stream error event."""

    body: Mapping[str, Any]
    after_chunks: int = 0
    text: Text = Text("partial text before the failure")


@dataclass(frozen=True)
class Close:
    """HTTP 200, ``after_chunks`` text chunks, then the body ends cleanly (the chunked
    terminator) without the style's end marker: no ``finish_reason``/``[DONE]``, no
    ``response.completed``, no ``message_stop`` — a proxy or server that gave up mid-reply."""

    after_chunks: int = 3
    text: Text = Text("this reply ends without its end marker after a few words")


@dataclass(frozen=True)
class Page:
    """A web page (``text/html``) where an API answer was expected: what a card pointed at a
    web server, a router's login page or a proxy's error page gets."""

    status: int = 200
    html: str = (
        "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title>"
        "<style>body { width: 35em; margin: 0 auto; }</style></head>\n<body>\n"
        "<h1>Welcome to nginx!</h1>\n<p>If you see this page, the nginx web server is "
        "successfully installed and working. Further configuration is required.</p>\n"
        + "<p>filler paragraph to make the page long.</p>\n" * 200
        + "</body></html>\n"
    )


Reply = Text | HttpError | StyledError | Drop | StreamFailure | Close | Page


def estimate_prompt_tokens(body: Any) -> int:
    """What the fake model "reads": characters of every string in the prompt fields / 4."""
    if not isinstance(body, Mapping):
        return 0
    total = 0

    def walk(value: Any) -> None:
        nonlocal total
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, Mapping):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for key in ("messages", "input", "system", "instructions"):
        walk(body.get(key))
    return max(1, total // 4)


def sse(data: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _usage(body: Mapping[str, Any], text: Text, pieces: list[str]) -> tuple[int, int]:
    prompt = text.prompt_tokens if text.prompt_tokens is not None else estimate_prompt_tokens(body)
    completion = text.completion_tokens if text.completion_tokens is not None else len(pieces)
    return prompt, completion


# --------------------------------------------------------------------------- chat completions


def _chat_full(body: Mapping[str, Any], reply: Text) -> dict[str, Any]:
    prompt, completion = _usage(body, reply, reply.pieces())
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
    if reply.reasoning and reply.reasoning_as == "think":
        message["content"] = f"<think>\n{reply.reasoning}\n</think>\n\n{reply.text}"
    elif reply.reasoning:
        message[reply.reasoning_as] = reply.reasoning
    return {
        "id": reply.response_id or "chatcmpl-" + uuid.uuid4().hex[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": reply.stop_reason or "stop",
            }
        ],
        "usage": _chat_usage(reply, prompt, completion),
        "system_fingerprint": "fp_loopback",
    }


def _chat_usage(reply: Text, prompt: int, completion: int) -> dict[str, Any]:
    """OpenAI's real usage object (cached tokens under ``prompt_tokens_details``)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {
            "cached_tokens": reply.cached_tokens,
            "cache_write_tokens": reply.cache_write_tokens,
            "audio_tokens": 0,
        },
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _chat_stream(body: Mapping[str, Any], reply: Text) -> Iterator[tuple[bool, bytes]]:
    rid = reply.response_id or "chatcmpl-" + uuid.uuid4().hex[:24]
    created = int(time.time())
    pieces = reply.pieces()

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": body.get("model", ""),
            "system_fingerprint": "fp_loopback",
            "choices": [
                {"delta": delta, "logprobs": None, "finish_reason": finish}
                if reply.omit_index
                else {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            ],
        }

    yield False, sse(chunk({"role": "assistant", "content": "", "refusal": None}))
    thoughts = reply.thoughts()
    if thoughts and reply.reasoning_as == "think":
        yield False, sse(chunk({"content": "<think>"}))
        for piece in thoughts:
            yield True, sse(chunk({"content": piece}))
        yield False, sse(chunk({"content": "</think>\n\n"}))
    else:
        for piece in thoughts:  # DeepSeek: content null; OpenRouter: content ""
            empty = None if reply.reasoning_as == "reasoning_content" else ""
            yield True, sse(chunk({"content": empty, reply.reasoning_as: piece}))
    for piece in pieces:
        yield True, sse(chunk({"content": piece}))
    yield False, sse(chunk({}, reply.stop_reason or "stop"))
    options = body.get("stream_options") or {}
    if isinstance(options, Mapping) and options.get("include_usage"):
        prompt, completion = _usage(body, reply, pieces)
        final = chunk({})
        final["choices"] = []
        final["usage"] = _chat_usage(reply, prompt, completion)
        yield False, sse(final)
    yield False, sse("[DONE]")


# --------------------------------------------------------------------------- responses


def _reasoning_item(rid: str, reasoning: str) -> dict[str, Any]:
    return {
        "id": "rs_" + rid[5:],
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": reasoning}],
    }


def _response_object(
    body: Mapping[str, Any],
    rid: str,
    status: str,
    text: str | None,
    usage: Any,
    reasoning: str = "",
) -> dict[str, Any]:
    output = []
    if reasoning and text is not None:
        output.append(_reasoning_item(rid, reasoning))
    if text is not None:
        output += [
            {
                "id": "msg_" + rid[5:],
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ]
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "model": body.get("model", ""),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "store": True,
        "temperature": body.get("temperature", 1.0),
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    }


def _responses_usage(
    prompt: int, completion: int, cached: int = 0, written: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def _responses_full(body: Mapping[str, Any], reply: Text) -> dict[str, Any]:
    rid = reply.response_id or "resp_" + uuid.uuid4().hex
    prompt, completion = _usage(body, reply, reply.pieces())
    return _response_object(
        body,
        rid,
        "completed",
        reply.text,
        _responses_usage(prompt, completion, reply.cached_tokens, reply.cache_write_tokens),
        reply.reasoning,
    )


def _responses_stream(body: Mapping[str, Any], reply: Text) -> Iterator[tuple[bool, bytes]]:
    rid = reply.response_id or "resp_" + uuid.uuid4().hex
    item_id = "msg_" + rid[5:]
    seq = iter(range(1_000_000))
    pieces = reply.pieces()

    def ev(kind: str, **fields: Any) -> bytes:
        return sse({"type": kind, "sequence_number": next(seq), **fields}, kind)

    yield (
        False,
        ev("response.created", response=_response_object(body, rid, "in_progress", None, None)),
    )
    yield (
        False,
        ev("response.in_progress", response=_response_object(body, rid, "in_progress", None, None)),
    )
    index = 0
    thoughts = reply.thoughts()
    if thoughts:
        rs = _reasoning_item(rid, reply.reasoning)
        yield (
            False,
            ev("response.output_item.added", output_index=0, item={**rs, "summary": []}),
        )
        at = {"item_id": rs["id"], "output_index": 0, "summary_index": 0}
        empty = {"type": "summary_text", "text": ""}
        yield False, ev("response.reasoning_summary_part.added", **at, part=empty)
        for piece in thoughts:
            yield True, ev("response.reasoning_summary_text.delta", **at, delta=piece)
        yield False, ev("response.reasoning_summary_text.done", **at, text=reply.reasoning)
        yield (
            False,
            ev("response.reasoning_summary_part.done", **at, part=rs["summary"][0]),
        )
        yield False, ev("response.output_item.done", output_index=0, item=rs)
        index = 1
    item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
    yield (
        False,
        ev("response.output_item.added", output_index=index, item={**item, "content": []}),
    )
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    yield False, ev("response.content_part.added", **where, part=part)
    for piece in pieces:
        yield True, ev("response.output_text.delta", **where, delta=piece, logprobs=[])
    yield False, ev("response.output_text.done", **where, text=reply.text, logprobs=[])
    yield False, ev("response.content_part.done", **where, part={**part, "text": reply.text})
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
    }
    yield False, ev("response.output_item.done", output_index=index, item=done_item)
    prompt, completion = _usage(body, reply, pieces)
    final = _response_object(
        body,
        rid,
        "completed",
        reply.text,
        _responses_usage(prompt, completion, reply.cached_tokens, reply.cache_write_tokens),
        reply.reasoning,
    )
    yield False, ev("response.completed", response=final)


# --------------------------------------------------------------------------- anthropic messages


def _anthropic_usage(reply: Text, prompt: int, completion: int) -> dict[str, Any]:
    """Anthropic's usage: ``input_tokens`` excludes the cache read and written tokens."""
    return {
        "input_tokens": max(0, prompt - reply.cached_tokens - reply.cache_write_tokens),
        "cache_creation_input_tokens": reply.cache_write_tokens,
        "cache_read_input_tokens": reply.cached_tokens,
        "output_tokens": completion,
        "service_tier": "standard",
    }


def _messages_full(body: Mapping[str, Any], reply: Text) -> dict[str, Any]:
    prompt, completion = _usage(body, reply, reply.pieces())
    return {
        "id": reply.response_id or "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": [*_thinking_blocks(reply), {"type": "text", "text": reply.text}],
        "stop_reason": reply.stop_reason or "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(reply, prompt, completion),
    }


SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
REDACTED_DATA = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def _thinking_blocks(reply: Text) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": SIGNATURE})
    if reply.redacted:
        blocks.append({"type": "redacted_thinking", "data": REDACTED_DATA})
    return blocks


def _messages_stream(body: Mapping[str, Any], reply: Text) -> Iterator[tuple[bool, bytes]]:
    pieces = reply.pieces()
    prompt, completion = _usage(body, reply, pieces)
    message = {
        "id": reply.response_id or "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _anthropic_usage(reply, prompt, 1),
    }
    yield False, sse({"type": "message_start", "message": message}, "message_start")
    index = 0
    thoughts = reply.thoughts()
    if thoughts:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        yield (
            False,
            sse(
                {"type": "content_block_start", "index": 0, "content_block": start},
                "content_block_start",
            ),
        )
        for piece in thoughts:
            delta = {"type": "thinking_delta", "thinking": piece}
            yield (
                True,
                sse(
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                    "content_block_delta",
                ),
            )
        signed = {"type": "signature_delta", "signature": SIGNATURE}
        yield (
            False,
            sse(
                {"type": "content_block_delta", "index": 0, "delta": signed}, "content_block_delta"
            ),
        )
        yield False, sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        index += 1
    if reply.redacted:
        hidden = {"type": "redacted_thinking", "data": REDACTED_DATA}
        yield (
            False,
            sse(
                {"type": "content_block_start", "index": index, "content_block": hidden},
                "content_block_start",
            ),
        )
        yield False, sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    block = {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "text", "text": ""},
    }
    yield False, sse(block, "content_block_start")
    yield False, sse({"type": "ping"}, "ping")
    for piece in pieces:
        delta = {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": piece},
        }
        yield True, sse(delta, "content_block_delta")
    yield False, sse({"type": "content_block_stop", "index": index}, "content_block_stop")
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": reply.stop_reason or "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": completion},
    }
    yield False, sse(end, "message_delta")
    yield False, sse({"type": "message_stop"}, "message_stop")


def failure_event(style: str, body: Mapping[str, Any]) -> bytes:
    """The style's own way to report an error inside a 200 stream."""
    if style == "chat":
        return sse(dict(body))  # {"error": {...}} as a data line
    if style == "responses":
        error = body.get("error", body)
        response = {
            "id": "resp_" + uuid.uuid4().hex,
            "object": "response",
            "status": "failed",
            "error": {"code": error.get("code"), "message": error.get("message")},
            "output": [],
            "usage": None,
        }
        return sse(
            {"type": "response.failed", "sequence_number": 99, "response": response},
            "response.failed",
        )
    return sse(dict(body), "error")


FULL = {"chat": _chat_full, "responses": _responses_full, "messages": _messages_full}
STREAM = {"chat": _chat_stream, "responses": _responses_stream, "messages": _messages_stream}
