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

__all__ = ["BREAKPOINT", "breakpoint_cuts", "with_breakpoint"]

BREAKPOINT = {"mode": "explicit"}


def breakpoint_cuts(
    history: list[Entry], plan: CachePlan | None, rule: CacheRule | None, style: str
) -> set[Cut]:
    """The cuts of the parts that carry a breakpoint (module docstring)."""
    if plan is None or rule is None or rule.marks != "prompt_cache_breakpoint":
        return set()
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
            unmarkable.append(reply or text == "")
            tokens.append(block_tokens(part, style))
    marks = place_breakpoints(cuts, plan, empty=unmarkable, tokens=tokens, rule=rule)
    return {cuts[p] for p in marks.blocks}


def with_breakpoint(content: Any, k: int, text_type: str = "text") -> Any:
    """``content`` with a breakpoint on part ``k`` (a string becomes one text part)."""
    if isinstance(content, str):
        return [{"type": text_type, "text": content, "prompt_cache_breakpoint": dict(BREAKPOINT)}]
    out = list(content)
    out[k] = {**out[k], "prompt_cache_breakpoint": dict(BREAKPOINT)}
    return out
