"""The bill under each provider's caching rules, per model family (rules.cache_rules).

Six deterministic workloads are replayed the way the store holds them (pending attachments
appended, the user entry stamped ``createdAt``, the request built with the model's caching
rules and the profile's pace record, the reply appended, images stamped seen after the turn,
the question's time added to the pace record):

* ``figures`` — the figure-heavy conversation of :mod:`bench.request_economy` (a turn a minute);
* ``text+attach`` — 60 text turns, a 30,000–60,000-char page every ten turns;
* ``screenshots`` — 30 turns, a 1280×800 screenshot in every question;
* ``slow`` — 24 turns 6 to 14 minutes apart (a page attachment every eight), longer than a
  five-minute cache lives, by a user whose earlier questions (the profile's pace record, which
  the engine keeps) came at the same pace;
* ``slow-first`` — the same conversation in a profile with no earlier questions: the first
  turn cannot know the pace;
* ``min-4096`` — 30 short text turns with a 6,000-char page every ten, on models whose cache
  starts at 4,096 tokens (Claude Haiku 4.5, Gemini 3).

Each workload is priced under every provider's rules, each with requests built for that
model (chatkeep's marks follow the model's row):

* ``anthropic`` — Claude (Sonnet 5; Haiku 4.5 on ``min-4096``): explicit marks, 5-minute writes
  1.25×, 1-hour writes 2×, reads 0.1×, 20-block look-back;
* ``openai`` — GPT-5.5 on api.openai.com: automatic prefix caching in 128-token steps, free
  writes, reads 0.1×, ``prompt_cache_retention: "24h"`` keeps the prefix through pauses;
* ``gpt-5.6`` — explicit breakpoints beside the implicit one at the end, writes 1.25× (30 min);
* ``gemini`` — implicit caching from 4,096 tokens (Gemini 3), reads 0.1×;
* ``deepseek`` — the disk cache: a hit needs an earlier request's whole input as a prefix.

against **naive** resend (the stored history verbatim; one mark at the end for the explicit
rules), LangChain **trim_messages** (the last messages within chatkeep's own token estimate;
one mark at the end) and the **floor** of chatkeep's own requests (every distinct block paid
once, at the cheapest write whose lifetime spans its next use, then read).

Targets: under the Anthropic and OpenAI rules, chatkeep's bill within 1.10× of its floor on every
workload, and at least 90% of input tokens read from cache wherever the floor reads 90%.

Run: ``python -m bench.cache_bill [--seed N] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from bench import billing as B
from bench.cache_economy import (
    SYSTEM,
    Step,
    _anthropic_body,
    _naive_chat,
    _trim,
    screenshot_workload,
    text_attach_workload,
)
from bench.request_economy import _prose, conversation
from chatkeep.rules.accounting import request_stats
from chatkeep.rules.cache import PACE_TURNS, remember_question
from chatkeep.rules.cache_rules import find_rule
from chatkeep.rules.context import build_page_context_text
from chatkeep.rules.images import stamp_images_seen
from chatkeep.rules.wire import build_request

TARGET_FLOOR, TARGET_READ = 1.10, 0.90
STRATEGIES = ("naive", "trim", "chatkeep")
#: provider → (style, base URL, model, model on the 4,096-token workload)
PROVIDERS: dict[str, tuple[str, str, str, str]] = {
    "anthropic": ("anthropic", "https://api.anthropic.com", "claude-sonnet-5", "claude-haiku-4-5"),
    "openai": ("chat", "https://api.openai.com/v1", "gpt-5.5", "gpt-5.5"),
    "gpt-5.6": ("chat", "https://api.openai.com/v1", "gpt-5.6", "gpt-5.6"),
    "gemini": (
        "chat",
        "https://generativelanguage.googleapis.com/v1beta",
        "gemini-3-pro",
        "gemini-3-pro",
    ),
    "deepseek": ("chat", "https://api.deepseek.com", "deepseek-chat", "deepseek-chat"),
}
JUDGED = ("anthropic", "openai")


# -- the two workloads of this module (the others come from bench.cache_economy) ----------------
def _page(rnd: random.Random, k: int, chars: int) -> dict[str, Any]:
    meta = {"url": f"https://example.org/doc/{k}", "title": f"Document {k}"}
    text = build_page_context_text(meta, _prose(rnd, chars), "full")
    return {"role": "user", "content": text, "attachId": f"doc{k}"}


def slow_workload(seed: int = 41, turns: int = 24, known_pace: bool = True) -> Iterator[Step]:
    """Questions 6 to 14 minutes apart; a 20,000–40,000-char page every eight turns.

    ``known_pace``: the profile already holds the user's earlier questions, at the same pace
    (a conversation the day before): the record the engine keeps (``PACE_KEY``) and the first
    turn chooses its cache lifetime from. Without it the first turn knows no pace."""
    rnd = random.Random(seed)
    day = 86_400_000
    earlier = [-day + k * 10 * 60_000 for k in range(PACE_TURNS + 1)] if known_pace else []
    for turn in range(turns):
        attachments = (
            [_page(rnd, turn // 8 + 1, rnd.randint(20_000, 40_000))] if turn % 8 == 0 else []
        )
        yield {
            "attachments": attachments,
            "user": {"role": "user", "content": _prose(rnd, rnd.randint(60, 300))},
            "reply": {"role": "assistant", "content": _prose(rnd, rnd.randint(400, 1500))},
            "gap": rnd.uniform(6, 14) * 60,
            **({"pace": earlier} if turn == 0 else {}),
        }


def small_workload(seed: int = 51, turns: int = 30) -> Iterator[Step]:
    """Short turns a minute apart, a 6,000-char page every ten: the prefix crosses 4,096
    tokens only after a while."""
    rnd = random.Random(seed)
    for turn in range(turns):
        attachments = [_page(rnd, turn // 10 + 1, 6000)] if turn % 10 == 0 else []
        yield {
            "attachments": attachments,
            "user": {"role": "user", "content": _prose(rnd, rnd.randint(40, 200))},
            "reply": {"role": "assistant", "content": _prose(rnd, rnd.randint(200, 900))},
        }


WORKLOADS: dict[str, Callable[[int], Iterator[Step]]] = {
    "figures": lambda seed: conversation(seed),
    "text+attach": lambda seed: text_attach_workload(seed + 14),
    "screenshots": lambda seed: screenshot_workload(seed + 24),
    "slow": lambda seed: slow_workload(seed + 34),
    "slow-first": lambda seed: slow_workload(seed + 34, known_pace=False),
    "min-4096": lambda seed: small_workload(seed + 44),
}


# -- replay --------------------------------------------------------------------------------------
def _bodies(
    provider: str,
    model: str,
    history: list[dict[str, Any]],
    user: dict[str, Any],
    trim: bool,
    pace: list[int],
) -> dict[str, dict[str, Any]]:
    style, base, _, _ = PROVIDERS[provider]
    rule = find_rule(style, base, model)
    ours = build_request(
        style,
        history,
        user_entry=user,
        system_prompt=SYSTEM,
        model=model,
        base_url=base,
        prompt_cache_key="ck-bench" if "openai.com" in base else None,
        cache_rule=rule,
        pace=pace,
    ).body
    raw = [{"role": e["role"], "content": e["content"]} for e in [*history, user]]
    out = {"chatkeep": ours}
    out["naive"] = _anthropic_body(raw) if style == "anthropic" else _naive_chat(raw)
    if trim:
        kept = _trim(raw, int(request_stats(ours)["estTokens"]), style)
        out["trim"] = _anthropic_body(kept) if style == "anthropic" else _naive_chat(kept)
    return out


def _end_marked(blocks: list[B.Block]) -> list[B.Block]:
    """What an application sends GPT-5.6 without planning: no explicit breakpoint."""
    return [B.Block(b.key, b.tokens) for b in blocks]


def replay(workload: str, provider: str, seed: int = 7) -> dict[str, Any]:
    """Blocks of every strategy's requests and the request times (seconds)."""
    style, _, model, small_model = PROVIDERS[provider]
    model = small_model if workload == "min-4096" else model
    history: list[dict[str, Any]] = []
    requests: dict[str, list[list[B.Block]]] = {s: [] for s in STRATEGIES}
    times: list[float] = []
    now, trim_error = 0.0, ""
    pace: list[int] = []  # the profile's record of question times, as the engine keeps it
    for step in WORKLOADS[workload](seed):
        history = [*history, *step["attachments"]]
        pace = step.get("pace", pace)
        user = {**step["user"], "createdAt": int(now * 1000)}
        try:
            bodies = _bodies(provider, model, history, user, not trim_error, pace)
        except Exception as exc:  # a missing or broken peer is reported, never hidden
            trim_error = f"{type(exc).__name__}: {exc}"[:160]
            bodies = _bodies(provider, model, history, user, False, pace)
        pace = remember_question(pace, user["createdAt"])
        for strategy, body in bodies.items():
            blocks = B.blocks_of(body, style)
            requests[strategy].append(
                _end_marked(blocks) if strategy != "chatkeep" and provider == "gpt-5.6" else blocks
            )
        times.append(now)
        history = [*history, user, step["reply"]]
        history = stamp_images_seen(history) or history
        now += step.get("gap", 60.0)
    if trim_error:
        requests.pop("trim")
    return {"requests": requests, "times": times, "model": model, "trimError": trim_error}


def _price_one(
    provider: str, model: str, reqs: list[list[B.Block]], times: list[float]
) -> dict[str, Any]:
    style, base, _, _ = PROVIDERS[provider]
    rule = find_rule(style, base, model)
    if provider == "anthropic":
        return B.bill_anthropic(
            reqs, times=times, min_tokens=rule.min_tokens, read_factor=rule.read
        )
    if provider == "gpt-5.6":
        return B.bill_anthropic(
            reqs,
            times=times,
            min_tokens=rule.min_tokens,
            read_factor=rule.read,
            look_back=10_000,
            implicit_end=True,
            long_write_factor=1.25,
        )
    if provider == "deepseek":
        return B.bill_units(reqs, read_factor=rule.read, min_tokens=rule.min_tokens)
    ttl = 86_400.0 if rule.retention else 300.0
    step = rule.step or 1
    return B.bill_openai(
        reqs, cached_factor=rule.read, min_tokens=rule.min_tokens, step=step, ttl=ttl, times=times
    )


def _floor(
    provider: str, model: str, reqs: list[list[B.Block]], times: list[float]
) -> dict[str, Any]:
    style, base, _, _ = PROVIDERS[provider]
    rule = find_rule(style, base, model)
    if provider == "anthropic":
        lifetimes = [(300.0, 1.25), (3600.0, 2.0)]
    elif provider == "gpt-5.6":
        lifetimes = [(1800.0, 1.25)]
    else:
        lifetimes = [(86_400.0 if rule.retention or provider == "deepseek" else 300.0, 1.0)]
    return B.bill_floor(
        reqs, read_factor=rule.read, min_tokens=rule.min_tokens, times=times, lifetimes=lifetimes
    )


def price(workload: str, provider: str, seed: int = 7) -> dict[str, Any]:
    """Every strategy's bill (``billed`` relative to naive) and the floor, under one rule set."""
    r = replay(workload, provider, seed)
    bills = {s: _price_one(provider, r["model"], q, r["times"]) for s, q in r["requests"].items()}
    bills["floor"] = _floor(provider, r["model"], r["requests"]["chatkeep"], r["times"])
    naive = bills["naive"]["billed"]
    row = {s: b["billed"] / naive for s, b in bills.items()}
    ck, fl = bills["chatkeep"], bills["floor"]
    row["ck/floor"] = ck["billed"] / fl["billed"]
    row["read"] = ck["read"] / ck["tokens"] if ck["tokens"] else 0.0
    row["floorRead"] = fl["read"] / fl["tokens"] if fl["tokens"] else 0.0
    row["tokens"] = (
        ck["tokens"] / naive_tokens if (naive_tokens := bills["naive"]["tokens"]) else 0.0
    )
    return {"row": row, "model": r["model"], "trimError": r["trimError"]}


def run(seed: int = 7, workloads: tuple[str, ...] = tuple(WORKLOADS)) -> dict[str, dict[str, Any]]:
    return {w: {p: price(w, p, seed) for p in PROVIDERS} for w in workloads}


def verdicts(result: dict[str, dict[str, Any]]) -> list[str]:
    """The targets of the module docstring, each with met / NOT met."""
    lines = []
    for workload, per in result.items():
        for provider in JUDGED:
            row = per[provider]["row"]
            ok = round(row["ck/floor"], 2) <= TARGET_FLOOR
            read_ok = row["floorRead"] < TARGET_READ or round(row["read"], 2) >= TARGET_READ
            lines.append(
                f"{workload} / {provider}: chatkeep {row['ck/floor']:.3f}× its floor "
                f"(≤ {TARGET_FLOOR:.2f}) {'met' if ok else 'NOT met'}; read from cache "
                f"{row['read']:.0%} (floor {row['floorRead']:.0%}) "
                f"{'met' if read_ok else 'NOT met'}"
            )
    return lines


def print_table(result: dict[str, dict[str, Any]]) -> None:
    print("\nThe bill under each provider's caching rules — billed input, ratio to naive resend")
    head = (
        f"{'workload':<12} {'rules':<10} {'model':<17} {'trim':>6} {'chatkeep':>9} {'floor':>6} "
        f"{'ck/floor':>9} {'read':>5} {'floor read':>10}"
    )
    print(head)
    print("-" * len(head))
    for workload, per in result.items():
        for provider, data in per.items():
            r = data["row"]
            trim = f"{r['trim']:.2f}" if "trim" in r else "—"
            print(
                f"{workload:<12} {provider:<10} {data['model']:<17} {trim:>6} {r['chatkeep']:>9.2f} "
                f"{r['floor']:>6.2f} {r['ck/floor']:>9.3f} {r['read']:>5.0%} {r['floorRead']:>10.0%}"
            )
        print("-" * len(head))
    for line in verdicts(result):
        print(line)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.cache_bill")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workload", action="append", choices=list(WORKLOADS))
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    result = run(args.seed, tuple(args.workload or WORKLOADS))
    print_table(result)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {w: {p: d["row"] for p, d in per.items()} for w, per in result.items()},
                fh,
                indent=1,
            )
    return result


if __name__ == "__main__":
    main()
