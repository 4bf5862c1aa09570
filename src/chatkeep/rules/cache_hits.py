"""The cache-hit share of a turn, and the one-line notice when it falls (SPEC §6.4).

Under prompt caching the bill depends on how much of each request the provider reads from its
cache. A turn's *hit share* is ``cachedRead / input`` of its normalised usage. When a turn's
share falls well below the turns before it, the user is told once, with the reason when
chatkeep knows it:

* the model changed (a provider's cache is kept per model);
* the conversation paused longer than the provider keeps its cache: the lifetime the model's
  caching rules give the conversation's marks (:mod:`.cache_rules`, :func:`.cache.choose_ttl`;
  5 minutes by default, an hour when the pace asked for it);
* chatkeep's own rules rewrote earlier messages for this request (:func:`.cache.plan_cache`
  knows it: images sent as their labels after being seen, an attachment aged into its stub),
  so the cache served only what comes before the rewrite.

Otherwise the notice names the usual causes without guessing: the byte prefix of two requests
is no such signal, as a moved cache mark changes it too.

Pure: the faces show the notice; nothing here reads or writes the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..entries import Entry
from .cache import choose_ttl, plan_cache
from .cache_rules import CacheRule
from .context import age_stale_attachments

#: Below this many input tokens providers do not cache at all (the smallest minimum in use).
MIN_CACHED_INPUT = 1024
#: How long a provider keeps a prefix without use (Anthropic's and OpenAI's default, 5 min).
CACHE_LIFE_MS = 5 * 60 * 1000
#: The turns before whose shares make the baseline, the baseline that counts as "hitting",
#: and how far a turn must fall below it to be told.
BASELINE_TURNS = 3
HITTING = 0.5
FALL = 0.4


def hit_share(usage: Any) -> float | None:
    """``cachedRead / input`` of a normalised usage, ``None`` without one (or without input)."""
    if not isinstance(usage, dict):
        return None
    inp, cached = usage.get("input"), usage.get("cachedRead")
    if not isinstance(inp, int) or not isinstance(cached, int) or inp <= 0:
        return None
    return min(1.0, max(0.0, cached / inp))


def rewrite_of(history: list[Entry], user_entry: Entry) -> str | None:
    """What chatkeep's rules rewrote since the previous request, or ``None``: the request for
    ``history`` + ``user_entry`` changes blocks the previous request sent unchanged."""
    plan = plan_cache(history, user_entry)
    ends = [i for i, e in enumerate(history) if e.get("role") == "assistant"]
    if plan.read is None or not ends or plan.read >= (ends[-1], 0):
        return None
    j = plan.read[0]
    before = history[: ends[-1] - 1] if ends[-1] > 0 else []
    aged = age_stale_attachments(history)
    if j < len(before) and aged[j] is not history[j]:
        return "an attachment aged into its short stub"
    return "images already seen were sent as their labels"


def recent_hits(
    history: list[Entry],
    user_entry: Entry | None = None,
    rule: CacheRule | None = None,
    earlier: Sequence[int] = (),
) -> dict[str, Any] | None:
    """What the turns before say: ``{share, model, at, lifeMs, rewrite}`` — the mean share of
    the last :data:`BASELINE_TURNS` replies large enough to be cached, the model of the last
    one, its time, how long the provider keeps the conversation's cache (under ``rule``, the
    pace counting the profile's ``earlier`` question times) and
    what chatkeep's rules rewrite for ``user_entry``'s request (:func:`rewrite_of`) — or
    ``None`` when no earlier reply tells."""
    shares: list[float] = []
    last: dict[str, Any] | None = None
    for entry in reversed(history):
        if not isinstance(entry, dict) or entry.get("role") != "assistant":
            continue
        usage = entry.get("usage")
        share = hit_share(usage)
        if share is None or not isinstance(usage, dict) or usage["input"] < MIN_CACHED_INPUT:
            continue
        if last is None:
            last = entry
        shares.append(share)
        if len(shares) == BASELINE_TURNS:
            break
    if last is None:
        return None
    provider = last.get("provider")
    at = last.get("createdAt")
    # the lifetime the previous request asked for: its pace (``earlier``: the profile's record)
    life = rule.seconds(choose_ttl(history, rule, None, earlier)) * 1000 if rule else CACHE_LIFE_MS
    return {
        "share": sum(shares) / len(shares),
        "model": provider.get("model") if isinstance(provider, dict) else None,
        "at": at if isinstance(at, int) else None,
        "lifeMs": life,
        "rewrite": rewrite_of(history, user_entry) if user_entry is not None else None,
    }


def hit_drop_notice(
    before: dict[str, Any] | None,
    usage: Any,
    *,
    model: str,
    now_ms: int,
) -> str | None:
    """The notice for a turn whose hit share fell sharply below ``before`` (from
    :func:`recent_hits`), with its reason when known; ``None`` when nothing fell."""
    share = hit_share(usage)
    if before is None or share is None or usage["input"] < MIN_CACHED_INPUT:
        return None
    if before["share"] < HITTING or share > before["share"] - FALL:
        return None
    if before["model"] and before["model"] != model:
        why = f"the model changed ({before['model']} → {model}), and caches are kept per model"
    elif before["at"] is not None and now_ms - before["at"] > before.get("lifeMs", CACHE_LIFE_MS):
        minutes = (now_ms - before["at"]) // 60_000
        life = before.get("lifeMs", CACHE_LIFE_MS) // 60_000
        why = (
            f"the conversation paused for {minutes} minutes, longer than the provider keeps "
            f"its cache (about {life} minutes)"
        )
    elif before.get("rewrite"):
        why = (
            f"chatkeep rewrote earlier messages for this request ({before['rewrite']}), so the "
            "cache served only what comes before; the next turns read the new form from cache"
        )
    else:
        why = (
            "earlier messages may have been rewritten (an aged attachment, an image label), "
            "or the provider let its cache go early"
        )
    return (
        f"cache hits fell to {share:.0%} of the input this turn, from {before['share']:.0%} "
        f"over the turns before: {why}"
    )
