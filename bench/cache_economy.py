"""Cache economy: what each strategy's requests cost under provider prompt caching.

Three deterministic workloads are replayed turn by turn the way the store holds them (pending
attachments appended, the request built, the user entry and reply appended, images stamped seen
after the turn; history unbounded):

* ``figures`` — the figure-heavy conversation of :mod:`bench.request_economy` (30 turns, 3 PDFs
  with 8 figures, 5 long pages, 5 screenshots);
* ``text+attach`` — a long text-only chat (60 turns) with one big page attachment
  (30,000–60,000 chars) every ten turns;
* ``screenshots`` — a 30-turn session with a 1280×800 screenshot in every question.

For every turn four strategies build the request of both API families (``chat`` for OpenAI's
rule, ``anthropic`` for Anthropic's): **naive** resend of the stored history (pixels and full
attachments every time, one cache mark at the end for Anthropic), LangChain **trim_messages**
(``strategy="last"``, system kept, starting on a human message, token budget = chatkeep's own
estimate for that turn; one mark at the end), **end-mark** (chatkeep's requests with the single
end-of-request breakpoint chatkeep used before planning them), **chatkeep** (``build_request``,
its planned marks), and the **floor** over chatkeep's own requests (:func:`bench.billing.bill_floor`).
:mod:`bench.billing` prices the bodies (turns 60 s apart, 5-minute TTL); the table shows each
figure as a ratio to naive, and chatkeep's billed input over the floor.

Targets (figure-heavy): Anthropic billed ≤ 0.60× naive, OpenAI billed ≤ 0.50×, input tokens ≤
0.22×; on every workload chatkeep billed ≤ 1.15× the floor under both rules.

Run: ``python -m bench.cache_economy [--seed N] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from bench import billing as B
from bench.request_economy import SYSTEM, _noise_jpeg, _prose, conversation
from chatkeep.rules.accounting import request_stats
from chatkeep.rules.context import build_page_context_text
from chatkeep.rules.images import image_part, stamp_images_seen
from chatkeep.rules.wire import build_request
from chatkeep.rules.wire.anthropic import anthropic_messages

STRATEGIES = ("naive", "trim", "end-mark", "chatkeep")
TARGETS = {"anthropic": 0.60, "openai": 0.50, "tokens": 0.22, "floor": 1.15}
Step = dict[str, Any]


# -- workloads -----------------------------------------------------------------------------------
def text_attach_workload(seed: int = 21, turns: int = 60) -> Iterator[Step]:
    """A long text chat with one 30,000–60,000-char page attachment every ten turns."""
    rnd = random.Random(seed)
    for turn in range(turns):
        attachments = []
        if turn % 10 == 0:
            k = turn // 10 + 1
            body = _prose(rnd, rnd.randint(30_000, 60_000))
            meta = {"url": f"https://example.org/report/{k}", "title": f"Report {k}"}
            text = build_page_context_text(meta, body, "full")
            attachments.append({"role": "user", "content": text, "attachId": f"report{k}"})
        yield {
            "attachments": attachments,
            "user": {"role": "user", "content": _prose(rnd, rnd.randint(60, 300))},
            "reply": {"role": "assistant", "content": _prose(rnd, rnd.randint(400, 1500))},
        }


def screenshot_workload(seed: int = 31, turns: int = 30) -> Iterator[Step]:
    """Every question carries a fresh 1280×800 screenshot."""
    rnd = random.Random(seed)
    for _ in range(turns):
        question = _prose(rnd, rnd.randint(60, 300))
        shot = image_part(_noise_jpeg(rnd, (1280, 800)))
        yield {
            "attachments": [],
            "user": {"role": "user", "content": [{"type": "text", "text": question}, shot]},
            "reply": {"role": "assistant", "content": _prose(rnd, rnd.randint(400, 1500))},
        }


WORKLOADS: dict[str, Callable[[int], Iterator[Step]]] = {
    "figures": lambda seed: conversation(seed),
    "text+attach": lambda seed: text_attach_workload(seed + 14),
    "screenshots": lambda seed: screenshot_workload(seed + 24),
}


# -- strategies ----------------------------------------------------------------------------------
def _entries(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def _anthropic_body(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """What an application sends Anthropic for these entries: one cache mark at the end."""
    return {
        "model": "m",
        "max_tokens": 4096,
        "system": [{"type": "text", "text": SYSTEM}],
        "messages": anthropic_messages(entries),
    }


def _end_mark(body: dict[str, Any]) -> dict[str, Any]:
    """chatkeep's request with the earlier single breakpoint: system and last block only."""
    messages = []
    for message in body["messages"]:
        blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]]
        messages.append({**message, "content": blocks})
    if messages:
        last = messages[-1]["content"]
        last[-1] = {**last[-1], "cache_control": {"type": "ephemeral"}}
    system = [{**b, "cache_control": {"type": "ephemeral"}} for b in body.get("system") or []]
    return {**body, "system": system, "messages": messages}


def _naive_chat(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "system", "content": SYSTEM}, *entries]}


def _trim(entries: list[dict[str, Any]], budget: int, style: str) -> list[dict[str, Any]]:
    """LangChain ``trim_messages`` with the provider's token estimate as its counter."""
    from langchain_core.messages import SystemMessage, convert_to_openai_messages, trim_messages

    from bench.workloads import to_langchain

    def counter(messages: list[Any]) -> int:
        body = _naive_chat(_entries(convert_to_openai_messages(messages)))
        if style == "anthropic":
            return int(request_stats(_anthropic_body(body["messages"][1:]))["estTokens"])
        return int(request_stats(body)["estTokens"])

    msgs = [SystemMessage(content=SYSTEM), *(to_langchain(e) for e in entries)]
    kept = trim_messages(
        msgs,
        max_tokens=budget,
        token_counter=counter,
        strategy="last",
        include_system=True,
        start_on="human",
        allow_partial=False,
    )
    return _entries(convert_to_openai_messages(kept))[1:]


def _bodies(
    history: list[dict[str, Any]], user: dict[str, Any], trim: bool
) -> dict[tuple[str, str], dict[str, Any]]:
    raw = [{"role": e["role"], "content": e["content"]} for e in [*history, user]]
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for style, family in (("chat", "openai"), ("anthropic", "anthropic")):
        ours = build_request(
            style, history, user_entry=user, system_prompt=SYSTEM, model="m", base_url="https://h"
        ).body
        out[("chatkeep", family)] = ours
        out[("end-mark", family)] = ours if style == "chat" else _end_mark(ours)
        out[("naive", family)] = _naive_chat(raw) if style == "chat" else _anthropic_body(raw)
        if trim:
            budget = int(request_stats(ours)["estTokens"])
            kept = _trim(raw, budget, style)
            out[("trim", family)] = _naive_chat(kept) if style == "chat" else _anthropic_body(kept)
    return out


def replay(workload: str, seed: int = 7, steps: Iterator[Step] | None = None) -> dict[str, Any]:
    """Blocks of every request of every strategy and family, turn by turn (``steps`` replaces
    the named workload's turns, e.g. a shorter one)."""
    history: list[dict[str, Any]] = []
    requests: dict[tuple[str, str], list[list[B.Block]]] = {}
    trim_error = ""
    for step in steps if steps is not None else WORKLOADS[workload](seed):
        history = [*history, *step["attachments"]]
        user = step["user"]
        try:
            bodies = _bodies(history, user, not trim_error)
        except Exception as exc:  # a missing or broken peer is reported, never hidden
            trim_error = f"{type(exc).__name__}: {exc}"[:160]
            bodies = _bodies(history, user, False)
        for (strategy, family), body in bodies.items():
            style = "chat" if family == "openai" else "anthropic"
            requests.setdefault((strategy, family), []).append(B.blocks_of(body, style))
        history = [*history, user, step["reply"]]
        history = stamp_images_seen(history) or history
    if trim_error:
        for family in ("openai", "anthropic"):
            requests.pop(("trim", family), None)
    return {"requests": requests, "trimError": trim_error}


def price(replayed: dict[str, Any], *, cached_factor: float = 0.1) -> dict[str, Any]:
    """Bills of every strategy under the three rules, plus the floor of chatkeep's requests."""
    reqs = replayed["requests"]
    out: dict[str, Any] = {}
    for strategy in (*STRATEGIES, "floor"):
        source = "chatkeep" if strategy == "floor" else strategy
        if (source, "openai") not in reqs:
            continue
        oa, an = reqs[(source, "openai")], reqs[(source, "anthropic")]
        if strategy == "floor":
            out[strategy] = {
                "openai": B.bill_floor(oa, read_factor=cached_factor, write_factor=1.0),
                "anthropic": B.bill_floor(an, read_factor=0.1, write_factor=1.25),
            }
            continue
        out[strategy] = {
            "none": B.bill_no_cache(oa),
            "openai": B.bill_openai(oa, cached_factor=cached_factor),
            "anthropic": B.bill_anthropic(an),
        }
    return out


def ratios(bills: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Each strategy's figures over naive's; chatkeep's billed input over the floor."""
    naive = bills["naive"]
    rows: dict[str, dict[str, float | None]] = {}
    for strategy, b in bills.items():
        if strategy == "floor":
            rows[strategy] = {
                "tokens": None,
                "openai": b["openai"]["billed"] / naive["openai"]["billed"],
                "anthropic": b["anthropic"]["billed"] / naive["anthropic"]["billed"],
            }
            continue
        rows[strategy] = {
            "tokens": b["none"]["tokens"] / naive["none"]["tokens"],
            "openai": b["openai"]["billed"] / naive["openai"]["billed"],
            "anthropic": b["anthropic"]["billed"] / naive["anthropic"]["billed"],
        }
    ck, fl = bills["chatkeep"], bills["floor"]
    rows["chatkeep/floor"] = {
        "tokens": None,
        "openai": ck["openai"]["billed"] / fl["openai"]["billed"],
        "anthropic": ck["anthropic"]["billed"] / fl["anthropic"]["billed"],
    }
    return rows


def run(seed: int = 7) -> dict[str, Any]:
    """Every workload replayed and priced: ``{workload: {"ratios", "bills", "trimError"}}``."""
    result = {}
    for name in WORKLOADS:
        replayed = replay(name, seed)
        bills = price(replayed)
        result[name] = {"ratios": ratios(bills), "bills": bills, "trimError": replayed["trimError"]}
    return result


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _met(value: float | None, target: float) -> str:
    # targets are stated to two decimals, as the table prints them
    return "met" if value is not None and round(value, 2) <= target else "NOT met"


def verdicts(result: dict[str, Any]) -> list[str]:
    """The targets of the module docstring, each with met / NOT met (compared at two decimals,
    the precision the table prints and the targets are stated in)."""
    fig = result["figures"]["ratios"]["chatkeep"]
    lines = [
        f"figures: Anthropic billed {fig['anthropic']:.3f}× naive (target ≤ "
        f"{TARGETS['anthropic']:.2f}) {_met(fig['anthropic'], TARGETS['anthropic'])}",
        f"figures: OpenAI billed {fig['openai']:.3f}× naive (target ≤ {TARGETS['openai']:.2f})"
        f" {_met(fig['openai'], TARGETS['openai'])}",
        f"figures: input tokens {fig['tokens']:.3f}× naive (target ≤ {TARGETS['tokens']:.2f})"
        f" {_met(fig['tokens'], TARGETS['tokens'])}",
    ]
    for name, data in result.items():
        r = data["ratios"]["chatkeep/floor"]
        worst = max(r["openai"] or 0, r["anthropic"] or 0)
        lines.append(
            f"{name}: chatkeep / floor = OpenAI {r['openai']:.3f}, Anthropic "
            f"{r['anthropic']:.3f} (target ≤ {TARGETS['floor']:.2f}) {_met(worst, TARGETS['floor'])}"
        )
    return lines


def print_table(result: dict[str, Any]) -> None:
    print("\nCache economy — billed input as a ratio to naive resend (same run, same workload)")
    head = f"{'workload':<12} {'strategy':<15} {'input tokens':>12} {'OpenAI cache':>13} {'Anthropic cache':>16}"
    print(head)
    print("-" * len(head))
    for name, data in result.items():
        for strategy, r in data["ratios"].items():
            label = {"trim": "trim_messages", "end-mark": "ck, end mark"}.get(strategy, strategy)
            print(
                f"{name:<12} {label:<15} {_fmt(r['tokens']):>12} {_fmt(r['openai']):>13} "
                f"{_fmt(r['anthropic']):>16}"
            )
        if data["trimError"]:
            print(f"{name:<12} trim_messages   not measured: {data['trimError']}")
        print("-" * len(head))
    for line in verdicts(result):
        print(line)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.cache_economy")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="PATH", help="also write the ratios as JSON")
    args = parser.parse_args(argv)
    result = run(args.seed)
    print_table(result)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({k: v["ratios"] for k, v in result.items()}, fh, indent=1)
    return result


if __name__ == "__main__":
    main()
