"""OpenAI's explicit cache breakpoints (GPT-5.6 and later) for the ``chat`` and ``responses``
builders (SPEC §6.5). Pure.

Those models write a cache entry at one implicit breakpoint OpenAI places near the latest
message, and at up to three ``prompt_cache_breakpoint: {"mode": "explicit"}`` marks on content
parts; a later request hits only at an entry written earlier (no 128-token steps any more), so
a prefix that the next turn keeps but whose end the next turn rewrites (an image turning into
its label, an attachment aging) is read again only when a breakpoint marked its end.

:func:`breakpoint_cuts(history, plan, rule, style)` is the set of cuts ``(entry, part)`` whose
part carries a breakpoint, planned by :func:`~chatkeep.rules.cache.place_breakpoints` over the
sent entries. The Responses API takes the mark on input parts only, so there it never lands
on an earlier reply (it moves back to the question before). :func:`with_breakpoint` puts it on
one part (a string content becomes one text part).
"""

from __future__ import annotations

from typing import Any

from ...entries import Entry
from ..cache import CachePlan, Cut, place_breakpoints
from ..cache_read import block_tokens
from ..cache_rules import CacheRule
from .base import canonical_parts, no_answer

__all__ = ["BREAKPOINT", "breakpoint_cuts", "control_cuts", "with_breakpoint"]

BREAKPOINT = {"mode": "explicit"}


def _planned(
    history: list[Entry],
    plan: CachePlan,
    rule: CacheRule,
    style: str,
    *,
    images: bool,
    system: str = "",
) -> tuple[set[Cut], bool]:
    """The cuts of the marked parts and whether the system prompt is marked; ``images``: an
    image part may carry the mark."""
    cuts: list[Cut] = []
    unmarkable: list[bool] = []
    tokens: list[int] = []
    for i, entry in enumerate(history):
        if no_answer(entry):
            continue
        content = canonical_parts(entry)
        parts: list[Any] = [content] if isinstance(content, str) else content
        for k, part in enumerate(parts):
            cuts.append((i, k))
            text = part if isinstance(part, str) else part.get("text")
            reply = style == "responses" and entry.get("role") == "assistant"
            unmarkable.append(reply or text == "" or (text is None and not images))
            tokens.append(block_tokens(part, style))
    marks = place_breakpoints(
        cuts,
        plan,
        empty=unmarkable,
        tokens=tokens,
        rule=rule,
        has_system=bool(system),
        system_tokens=block_tokens(system, style) if system else 0,
    )
    return {cuts[p] for p in marks.blocks}, marks.system


def breakpoint_cuts(
    history: list[Entry], plan: CachePlan | None, rule: CacheRule | None, style: str
) -> set[Cut]:
    """The cuts of the parts that carry a breakpoint (module docstring)."""
    if plan is None or rule is None or rule.marks != "prompt_cache_breakpoint":
        return set()
    return _planned(history, plan, rule, style, images=True)[0]


def control_cuts(
    history: list[Entry], plan: CachePlan | None, rule: CacheRule | None, system: str
) -> tuple[set[Cut], bool]:
    """Anthropic's planned ``cache_control`` marks for a ``chat`` request (Claude through
    OpenRouter, which passes them on): the cuts of the marked text parts (OpenRouter takes the
    mark on text parts) and whether the system prompt carries one."""
    if plan is None or rule is None or rule.marks != "cache_control":
        return set(), False
    return _planned(history, plan, rule, "chat", images=False, system=system)


def with_breakpoint(
    content: Any,
    k: int,
    text_type: str = "text",
    mark: tuple[str, dict[str, Any]] = ("prompt_cache_breakpoint", BREAKPOINT),
) -> Any:
    """``content`` with a mark on part ``k`` (a string becomes one text part): an OpenAI
    breakpoint, or ``mark`` = ``(field, value)``."""
    field, value = mark
    if isinstance(content, str):
        return [{"type": text_type, "text": content, field: dict(value)}]
    out = list(content)
    out[k] = {**out[k], field: dict(value)}
    return out
