"""Two choices the cache planner could make differently, measured on :mod:`bench.cache_bill`.

Neither is built; this module replays chatkeep's own requests (:func:`bench.cache_bill.replay`,
the same bodies, times and billing rules) and prices what each alternative would have sent.

1. **The first turn with no pace record.** A conversation in a profile with no earlier
   questions asks for Anthropic's 5-minute lifetime on its first turn (nothing tells it the
   pace). :func:`first_turn` prices the same requests with the first request's marks asking
   for the hour instead: every later request is the same (the pace counts question times, not
   marks), so the difference is that one choice. The price table alone says when the hour
   pays (:func:`break_even`): with writes ``w_s`` (short) and ``w_l`` (long), a first write at
   the short lifetime costs ``w_s + p·w_l`` in expectation — ``p`` the chance the second
   question comes after the short entry ran out, when the whole prefix is written again at the
   long lifetime — against ``w_l``, so the hour pays when ``p > (w_l − w_s) / w_l``.
2. **Deferring a rewrite.** A label (SPEC §5.2) or an aging stub (§6.2) rewrites the blocks
   after it. :func:`deferrals` delays each rewrite, alone, until the next break of the
   requests (another rewrite, or a pause longer than the marks' lifetime) — an oracle that
   knows when that comes — and prices the result: the blocks keep their earlier form until
   then (read at the read price), and the deferred rewrite happens with the next one; the
   deferred requests' marks are placed three ways and the cheapest counts.

Run: ``python -m bench.bill_choices [--workload NAME ...]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from bench import billing as B
from bench.cache_bill import JUDGED, PROVIDERS, WORKLOADS, _floor, _price_one, replay
from chatkeep.rules.cache_rules import CacheRule, find_rule

Requests = list[list[B.Block]]


def break_even(rule: CacheRule) -> float | None:
    """The chance of a pause longer than the short lifetime above which a first write at the
    long lifetime costs less (``None``: the rule has one lifetime)."""
    if len(rule.writes) < 2:
        return None
    short, long = sorted(rule.writes, key=rule.seconds)[:2]
    return (rule.write(long) - rule.write(short)) / rule.write(long)


def with_first_ttl(requests: Requests, seconds: float) -> Requests:
    """The requests with the first one's marks asking for ``seconds``."""
    if not requests:
        return requests
    first = [
        B.Block(b.key, b.tokens, b.marked, seconds if b.marked else b.ttl) for b in requests[0]
    ]
    return [first, *requests[1:]]


def _ratio(provider: str, model: str, requests: Requests, times: list[float]) -> dict[str, float]:
    ck = _price_one(provider, model, requests, times)
    floor = _floor(provider, model, requests, times)
    return {
        "billed": ck["billed"],
        "ck/floor": ck["billed"] / floor["billed"],
        "read": ck["read"] / ck["tokens"] if ck["tokens"] else 0.0,
    }


def first_turn(workload: str, seed: int = 7) -> dict[str, Any]:
    """ck/floor under Anthropic's rules with the first request as built and asking the hour."""
    r = replay(workload, "anthropic", seed)
    reqs, times, model = r["requests"]["chatkeep"], r["times"], r["model"]
    built = max((b.ttl for b in reqs[0] if b.marked), default=300.0) if reqs else 300.0
    return {
        "model": model,
        "first": "1h" if built > 300.0 else "5m",
        "built": _ratio("anthropic", model, reqs, times),
        "hour": _ratio("anthropic", model, with_first_ttl(reqs, 3600.0), times),
    }


# -- deferring a rewrite -------------------------------------------------------------------------
def _extends(a: Sequence[B.Block], b: Sequence[B.Block]) -> bool:
    return len(b) >= len(a) and all(x.key == y.key for x, y in zip(a, b, strict=False))


def _old_end(a: Sequence[B.Block], b: Sequence[B.Block]) -> int | None:
    """Index in ``b`` just past the blocks standing for ``a``'s (``a``'s last block found)."""
    last = a[-1].key
    return next((e + 1 for e in range(len(b) - 1, -1, -1) if b[e].key == last), None)


#: where a deferred request's marks go, besides its own after the old blocks (the cheapest is
#: kept): "own" — the end of request ``n-1`` and the request's own marks before the first
#: rewritten block; "end" — the end of request ``n-1`` only; "previous" — request ``n-1``'s marks
MARKINGS = ("own", "end", "previous")


def defer(
    requests: Requests, n: int, until: int, marking: str = "own", limit: int = 4
) -> Requests | None:
    """Requests ``n .. until-1`` with request ``n-1``'s blocks in place of their rewritten
    form (``None`` when the rewrite leaves nothing after it: nothing to defer), marked as
    ``marking`` says (:data:`MARKINGS`), ``limit`` marks in all."""
    a = requests[n - 1]
    end = _old_end(a, requests[n])
    if end is None:
        return None
    first = next(k for k, (x, y) in enumerate(zip(a, requests[n], strict=False)) if x.key != y.key)
    out = [list(r) for r in requests]
    for j in range(n, until):
        bj = requests[j]
        tail = list(bj[end:])
        ttl = next((b.ttl for b in bj if b.marked), 300.0)
        room = limit - sum(b.marked for b in tail)
        if marking == "previous":
            keep = set(sorted((k for k, b in enumerate(a) if b.marked), reverse=True)[:room])
        else:
            own = range(min(first, len(a) - 1) - 1, -1, -1) if marking == "own" else ()
            keep = {len(a) - 1, *[k for k in own if bj[k].marked][: room - 1]}
        out[j] = [B.Block(b.key, b.tokens, k in keep, ttl) for k, b in enumerate(a)] + tail
    return out


def deferrals(workload: str, provider: str, seed: int = 7) -> dict[str, Any]:
    """Each rewrite of chatkeep's requests deferred alone to the next break, priced with the
    cheapest of the :data:`MARKINGS`."""
    r = replay(workload, provider, seed)
    reqs, times, model = r["requests"]["chatkeep"], r["times"], r["model"]
    base = _price_one(provider, model, reqs, times)["billed"]
    style, url, _, _ = PROVIDERS[provider]
    life = float(find_rule(style, url, model).seconds())
    rewrites = [n for n in range(1, len(reqs)) if not _extends(reqs[n - 1], reqs[n])]
    rows = []
    for n in rewrites:
        marked = [b.ttl for b in reqs[n] if b.marked]
        lifetime = max(marked) if marked and provider == "anthropic" else life
        if provider == "openai" and find_rule(style, url, model).retention:
            lifetime = 86_400.0
        until = next(
            (
                m
                for m in range(n + 1, len(reqs))
                if m in rewrites or times[m] - times[m - 1] > lifetime
            ),
            len(reqs),
        )
        alts = [defer(reqs, n, until, marking) for marking in MARKINGS]
        costs = [_price_one(provider, model, alt, times)["billed"] for alt in alts if alt]
        cost = min(costs) if costs else None
        rows.append({"at": n, "until": until, "change": None if cost is None else cost / base - 1})
    return {"rewrites": rows, "billed": base}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.bill_choices")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workload", action="append", choices=list(WORKLOADS))
    args = parser.parse_args(argv)
    names = tuple(args.workload or WORKLOADS)
    style, url, model, _ = PROVIDERS["anthropic"]
    p = break_even(find_rule(style, url, model))
    print(f"\n1. The first turn's lifetime under Anthropic's rules (break-even chance p = {p:.3f})")
    print(f"{'workload':<12} {'first':>5} {'ck/floor':>9} {'read':>5} {'1h first':>9} {'read':>5}")
    out: dict[str, Any] = {"breakEven": p, "first": {}, "defer": {}}
    for name in names:
        f = out["first"][name] = first_turn(name, args.seed)
        b, h = f["built"], f["hour"]
        print(
            f"{name:<12} {f['first']:>5} {b['ck/floor']:>9.3f} {b['read']:>5.0%} "
            f"{h['ck/floor']:>9.3f} {h['read']:>5.0%}"
        )
    print("\n2. Each rewrite deferred alone to the next break: the bill's change")
    for name in names:
        for provider in JUDGED:
            d = out["defer"][f"{name}/{provider}"] = deferrals(name, provider, args.seed)
            moved = [x["change"] for x in d["rewrites"] if x["change"] is not None]
            cheaper = sum(c < 0 for c in moved)
            span = f"{min(moved):+.2%} … {max(moved):+.2%}" if moved else "—"
            print(
                f"{name:<12} {provider:<10} rewrites {len(d['rewrites']):>3}, with blocks after "
                f"them {len(moved):>3}, cheaper later {cheaper}: {span}"
            )
    return out


if __name__ == "__main__":
    main()
