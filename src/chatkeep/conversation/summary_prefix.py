"""The requests of an attachment summary (SPEC §7.5), and when they reuse the conversation's
cached prefix (SPEC §6.5).

The attachment being condensed was just stored, after the conversation the provider last saw.
That conversation's request prefix is in the provider's cache while it lives, so a summary call
can be *the conversation's own request* — the same card, system prompt, history steps, marks
and ``prompt_cache_key``, over the entries before the attachment — with the summary task as its
new turn: the provider reads the conversation from its cache, the call keeps that entry alive
for the user's next question, and the model condenses the attachment knowing what the
conversation is about. Otherwise a call is a bare request (the summary system prompt and the
task alone).

:func:`summary_requests(store, card, history, index, calls)` returns the builder of the calls'
request bodies. It reuses the prefix when all of these hold:

* the conversation has been answered before the attachment, by this card's model (caches are
  kept per model), within the lifetime the model's caching rules give that answer's request
  (:func:`~chatkeep.rules.cache.choose_ttl`; 24 hours where ``prompt_cache_retention`` is sent),
  and its request is at least the row's minimum cacheable prefix;
* it is cheap enough: every call reads the conversation at the row's read price, so ``calls``
  of them may cost at most what one miss of the conversation would (a write instead of a read:
  ``calls × read ≤ write − read``; e.g. 11 calls under Claude's 5-minute rule, 9 under
  GPT-5.5's, 1 under a row whose reads cost half). That bounds what the context costs; what it
  buys is the conversation in the summary's view and, where the cache lives minutes, the entry
  kept alive for the next question (under a 24-hour retention the prefix lives anyway, so
  there the reads are the price of the context alone).

A call that carries the conversation and overflows the model's context window is made again
bare. Either way the request is *one-off* (``plan_request(..., one_off=True)``): no later request
repeats the task, so its marks end with the conversation and the task itself is never written
into the cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..entries import Entry
from ..providers import Card
from ..rules.accounting import request_stats
from ..rules.cache import PACE_KEY, choose_ttl
from ..rules.wire import build_request
from .planner import plan_request
from .prompts import SYSTEM
from .turn import system_prompt

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["CONTEXT_NOTE", "RETENTION_MS", "summary_requests"]

#: How long ``prompt_cache_retention: "24h"`` keeps a prefix.
RETENTION_MS = 24 * 3600 * 1000
#: Put before the task when the conversation comes first: the summary is a separate task.
CONTEXT_NOTE = (
    "The conversation above is context only: do not answer or continue it. Separate task: "
    "condense the document below for the assistant's context; write in the language of the "
    "document, whatever language the conversation uses."
)

Builder = Callable[[str], dict[str, Any]]


def _still_cached(prefix: list[Entry], card: Card, now_ms: int, pace: Any) -> bool:
    """The conversation's last request (answered by this card's model) is still cached."""
    last = next((e for e in reversed(prefix) if e.get("role") == "assistant"), None)
    if last is None:
        return False
    provider = last.get("provider")
    at = last.get("createdAt")
    if not isinstance(provider, dict) or not isinstance(at, int):
        return False
    if provider.get("name") != card.name or provider.get("model") != card.model:
        return False
    rule = card.cache_rule
    if rule.retention and card.prompt_cache_key:
        life = RETENTION_MS
    else:
        earlier = [t for t in pace if isinstance(t, int)] if isinstance(pace, list) else []
        life = rule.seconds(choose_ttl(prefix, rule, None, earlier)) * 1000
    return 0 <= now_ms - at <= life


def _cheap_enough(card: Card, calls: int) -> bool:
    """``calls`` reads of the conversation cost at most one miss of it (at the default
    lifetime's write price; module docstring)."""
    rule = card.cache_rule
    return rule.read > 0 and calls * rule.read <= rule.write() - rule.read


def summary_requests(
    store: Profile,
    card: Card,
    history: list[Entry],
    index: int,
    calls: int,
    *,
    now_ms: int | None = None,
) -> list[Builder]:
    """The builders of a summary call's request body, in the order to try them: the one that
    carries the conversation before ``history[index]`` when it is reused (module docstring),
    then the bare one — a call whose conversation does not fit the model's context window
    (``ContextOverflow``) is made again bare."""
    prefix = history[:index] if 0 <= index <= len(history) else []
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    settings = store.get_all()
    system = system_prompt(settings)

    def reusing(task: str) -> dict[str, Any]:
        entry: Entry = {"role": "user", "content": f"{CONTEXT_NOTE} {SYSTEM}\n\n{task}"}
        plan = plan_request(store, card, system, prefix, entry, chain=False, one_off=True)
        return plan.request.body

    def bare(task: str) -> dict[str, Any]:
        return build_request(
            card.style,
            [],
            user_entry={"role": "user", "content": task},
            system_prompt=SYSTEM,
            model=card.model,
            base_url=card.base_url,
            temperature=card.temperature,
            max_tokens=card.max_tokens,
            stream=card.stream,
            cache_rule=card.cache_rule,
            one_off=True,
        ).body

    if not prefix or not _cheap_enough(card, calls):
        return [bare]
    if not _still_cached(prefix, card, now, store.local.get(PACE_KEY)):
        return [bare]
    probe = plan_request(store, card, system, prefix, {"role": "user", "content": "."}, chain=False)
    if request_stats(probe.request)["estTokens"] < card.cache_rule.min_tokens:
        return [bare]
    return [reusing, bare]
