"""Predicted prompt-cache read of a request (SPEC §6.4, §6.5). Pure.

:func:`predicted_cache_read(request, previous)` estimates how many prompt tokens of ``request``
the provider will serve from its cache, given the ``previous`` request of the conversation (what
that one left in the cache), by the providers' published rules:

- ``chat`` / ``responses`` (OpenAI automatic prefix caching): the tokens of the longest run of
  leading blocks identical in both requests, when at least 1,024, rounded down to a multiple of
  128;
- ``anthropic`` (explicit breakpoints): the longest shared prefix that ends at a block the
  previous request marked (a cache entry was written there) and that a mark of this request
  reaches within the 20-block look-back; at least 1,024 tokens.

Blocks are the system prompt / instructions and every content block of every message (a string
content is one block), compared without their ``cache_control`` marks; tokens follow
:mod:`chatkeep.rules.tokens`. Returns ``{"tokens", "ofTokens", "ratio"}`` (``ofTokens`` the
request's estimate, ``ratio`` their quotient, 0.0 without a previous request).
"""

from __future__ import annotations

import json
from typing import Any

from .cache import LOOK_BACK_BLOCKS
from .tokens import image_tokens, text_tokens

__all__ = ["MIN_CACHE_TOKENS", "block_tokens", "predicted_cache_read"]

MIN_CACHE_TOKENS = 1024
_STEP = 128


def _style(request: Any) -> str:
    style = getattr(request, "style", None)
    if isinstance(style, str):
        return style
    body = _body(request)
    if isinstance(body.get("system"), list):
        return "anthropic"
    return "responses" if "input" in body else "chat"


def _body(request: Any) -> dict[str, Any]:
    body = getattr(request, "body", request)
    return body if isinstance(body, dict) else {}


def block_tokens(block: Any, style: str) -> int:
    """The token estimate of one wire block (a string content is one block)."""
    if isinstance(block, str):
        return text_tokens(block)
    if not isinstance(block, dict):
        return 0
    kind = block.get("type")
    if kind == "image_url":
        img = block.get("image_url")
        return image_tokens(str(img.get("url", "") if isinstance(img, dict) else img), style)
    if kind == "input_image":
        return image_tokens(str(block.get("image_url", "")), style)
    if kind == "image":
        source = block.get("source") or {}
        url = f"data:{source.get('media_type', '')};base64," + str(source.get("data", ""))
        return image_tokens(url, style)
    return text_tokens(str(block.get("text", "")))


def _blocks(body: dict[str, Any], style: str) -> list[tuple[str, int, bool]]:
    """``(key, tokens, marked)`` per block, in order."""
    out: list[tuple[str, int, bool]] = []

    def add(role: str, block: Any) -> None:
        marked = isinstance(block, dict) and "cache_control" in block
        bare = (
            {k: v for k, v in block.items() if k != "cache_control"}
            if isinstance(block, dict)
            else block
        )
        key = json.dumps([role, bare], sort_keys=True, ensure_ascii=False)
        out.append((key, block_tokens(block, style), marked))

    for name in ("system", "instructions"):
        value = body.get(name)
        if isinstance(value, str) and value:
            add("system", value)
        elif isinstance(value, list):
            for block in value:
                add("system", block)
    items = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(items, str):
        add("user", items)
        items = []
    for message in items or ():
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        content = message.get("content")
        if isinstance(content, str):
            add(role, content)
        elif isinstance(content, list):
            for block in content:
                add(role, block)
    return out


def predicted_cache_read(request: Any, previous: Any | None) -> dict[str, Any]:
    """Tokens of ``request`` a provider cache should serve after ``previous`` (docstring)."""
    style = _style(request)
    now = _blocks(_body(request), style)
    total = sum(t for _, t, _ in now)
    if previous is None or not _body(previous):
        return {"tokens": 0, "ofTokens": total, "ratio": 0.0}
    before = _blocks(_body(previous), style)
    shared = 0
    while shared < min(len(now), len(before)) and now[shared][0] == before[shared][0]:
        shared += 1
    cum: list[int] = []
    running = 0
    for _, t, _ in now:
        running += t
        cum.append(running)
    read = 0
    if style == "anthropic":
        marks = [k for k, (_, _, m) in enumerate(now) if m]
        written = [k for k, (_, _, m) in enumerate(before) if m and k < shared]
        for q in written:
            if any(q <= m <= q + LOOK_BACK_BLOCKS for m in marks) and cum[q] >= MIN_CACHE_TOKENS:
                read = max(read, cum[q])
    elif shared:
        common = cum[shared - 1]
        read = (common // _STEP) * _STEP if common >= MIN_CACHE_TOKENS else 0
    return {"tokens": read, "ofTokens": total, "ratio": read / total if total else 0.0}
