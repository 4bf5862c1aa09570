"""Anthropic Messages: ``POST {base}/messages`` (SPEC §6.3).

- ``system`` is a separate list with one text block;
- content is always a list of blocks: text → ``text`` blocks (empty text dropped, the API
  rejects it), data-URL images → ``image`` blocks with a base64 source;
- the first message must be ``user``: leading assistant entries (left over after the live
  window trimmed their question) are dropped;
- consecutive messages of the same role are merged into one (attachments followed by the
  question become one user message);
- prompt-cache marks (``cache_control: ephemeral``) are planned (SPEC §6.5,
  :mod:`chatkeep.rules.cache`): with a :class:`~chatkeep.rules.cache.CachePlan` at most four —
  system, the last block before what the previous request rewrote, the last block before what
  this request's rules rewrite next turn, the last block; without a plan, system and the last
  block;
- ``max_tokens`` is required by the API (default 4096).
"""

from __future__ import annotations

from typing import Any

from ...dataurl import parse as parse_data_url
from ...entries import Entry
from ..cache import CachePlan, Cut, cache_mark, place_breakpoints
from ..cache_read import block_tokens
from ..cache_rules import CacheRule
from .base import WireRequest, canonical_parts, join_base_url

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "PATH",
    "anthropic_messages",
    "build_anthropic",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
PATH = "messages"


def _image_block(url: str) -> dict[str, Any]:
    parsed = parse_data_url(url)
    if parsed:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": parsed[0], "data": parsed[1]},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _blocks(entry: Entry, i: int) -> list[tuple[Cut, dict[str, Any]]]:
    """The entry's blocks, each with its cut ``(entry index, part index)``."""
    content = canonical_parts(entry)
    if isinstance(content, str):
        return [((i, 0), {"type": "text", "text": content})] if content else []
    blocks: list[tuple[Cut, dict[str, Any]]] = []
    for k, part in enumerate(content):
        if part["type"] == "text":
            if part["text"]:
                blocks.append(((i, k), {"type": "text", "text": part["text"]}))
        else:
            blocks.append(((i, k), _image_block(part["image_url"]["url"])))
    return blocks


def _messages_with_cuts(history: list[Entry]) -> tuple[list[dict[str, Any]], list[Cut]]:
    messages: list[dict[str, Any]] = []
    cuts: list[Cut] = []
    for i, entry in enumerate(history):
        role = entry["role"]
        pairs = _blocks(entry, i)
        if not pairs or (not messages and role != "user"):
            continue
        blocks = [b for _, b in pairs]
        cuts.extend(c for c, _ in pairs)
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    return messages, cuts


def _mark(messages: list[dict[str, Any]], positions: tuple[int, ...], ttl: str | None) -> None:
    """Put ``cache_control`` on the flat block indexes ``positions`` (copies of the blocks)."""
    wanted = set(positions)
    k = 0
    for message in messages:
        content = message["content"]
        for j, block in enumerate(content):
            if k in wanted:
                content[j] = {**block, "cache_control": cache_mark(ttl)}
            k += 1


def _marked(
    history: list[Entry],
    plan: CachePlan | None,
    system: str,
    rule: CacheRule | None = None,
    ttl: str | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    messages, cuts = _messages_with_cuts(history)
    tokens: list[int] = []
    if rule is not None:
        tokens = [block_tokens(b, "anthropic") for m in messages for b in m["content"]]
    marks = place_breakpoints(
        cuts,
        plan or CachePlan(),
        has_system=bool(system),
        tokens=tokens,
        system_tokens=block_tokens(system, "anthropic") if system else 0,
        rule=rule,
        ttl=ttl,
    )
    _mark(messages, marks.blocks, ttl)
    return messages, marks.system


def anthropic_messages(history: list[Entry], plan: CachePlan | None = None) -> list[dict[str, Any]]:
    """Messages in Anthropic shape (user first, roles alternating, planned cache marks)."""
    return _marked(history, plan, "")[0]


def build_anthropic(
    history: list[Entry],
    *,
    user_entry: Entry,
    system_prompt: str,
    model: str,
    base_url: str,
    temperature: float | None = None,
    max_tokens: int | None = None,
    stream: bool = True,
    cache_plan: CachePlan | None = None,
    cache_rule: CacheRule | None = None,
    cache_ttl: str | None = None,
) -> WireRequest:
    """The request for a prepared history plus the new user entry; ``cache_plan`` (from
    :func:`~chatkeep.rules.cache.plan_cache` over the stored history) places the cache marks,
    within the model's ``cache_rule`` (:mod:`~chatkeep.rules.cache_rules`), each asking for
    the lifetime ``cache_ttl`` (``None``: the default five minutes)."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS,
    }
    messages, system_marked = _marked(
        [*history, user_entry], cache_plan, system_prompt, cache_rule, cache_ttl
    )
    if system_prompt:
        block: dict[str, Any] = {"type": "text", "text": system_prompt}
        if system_marked or not messages:
            block["cache_control"] = cache_mark(cache_ttl)
        body["system"] = [block]
    if not messages:
        # An empty new turn after nothing sendable: the API needs one non-empty user message.
        messages = [
            {
                "role": "user",
                "content": [{"type": "text", "text": "…", "cache_control": cache_mark(cache_ttl)}],
            }
        ]
    body["messages"] = messages
    body["stream"] = stream
    if temperature is not None:
        body["temperature"] = temperature
    return WireRequest("anthropic", join_base_url(base_url or DEFAULT_BASE_URL, PATH), body)
