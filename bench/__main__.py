"""``python -m bench``: chatkeep against the alternatives people use today, in one run.

Installs nothing: the peers come from ``bench/requirements.txt`` (``pip install -r``); a peer
that is missing or breaks shows its reason in the table instead of a figure. Prints the
per-turn request table, then one summary table: for each figure every system's median, the
ratio chatkeep/system measured side by side in this run, and the target with its verdict for
chatkeep. Timings are reported, never asserted. ``--json PATH`` also writes every median.

Then the scale table of :mod:`bench.scale`: every everyday operation at 1× and 100× store size
(100,000 archived entries, 10,000 sessions) on SQLite and — when ``CHATKEEP_BENCH_PG`` names a
database — PostgreSQL, with the growth ratios (``--scale quick``: 1× and 10×; ``off``: skipped). Then message search
(:mod:`bench.search`; ``--search full`` at 1,000,000 entries, ``quick`` — the default — at
20,000, ``off``).

Run: ``python -m bench [--rounds N] [--save-rounds N] [--sessions N] [--seed N]
[--scale full|quick|off] [--search full|quick|off] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from typing import Any

from bench import adapters, cache_economy, compare, imports, interop, scale
from bench import search as search_bench

STORAGE = ("chatkeep", "openai-agents", "langgraph", "json-blob")
REQUEST = {
    "chatkeep": "chatkeep",
    "window": "chatkeep (live window)",
    "naive": "naive resend",
    "trim": "trim_messages",
}


def _t(s: float | None) -> str:
    if s is None:
        return "—"
    return f"{s * 1e3:,.1f} ms" if s >= 1e-3 else f"{s * 1e6:,.0f} µs"


def _b(n: float | None) -> str:
    if n is None:
        return "—"
    return f"{n / 1e6:,.2f} MB" if abs(n) >= 1e6 else f"{n / 1e3:,.1f} KB"


def _storage_rows(st: dict[str, Any], foot: list[str]) -> list[tuple[str, str, str, str, str, str]]:
    med, notes = st["medians"], st["notes"]
    rows: list[tuple[str, str, str, str, str, str]] = []

    def mark(text: str) -> str:
        if text not in foot:
            foot.append(text)
        return f"[{foot.index(text) + 1}]"

    def get(peer: str, fig: str) -> float | None:
        return med.get(peer, {}).get(fig)

    def why(peer: str, fig: str) -> str:
        n = notes.get(peer, {})
        return n.get("*") or n.get(fig) or "no figure"

    def figure(label: str, fig: str, fmt: Any, target: str = "", verdict: str = "") -> None:
        ck = get("chatkeep", fig)
        for i, peer in enumerate(STORAGE):
            v = get(peer, fig)
            ratio = f"{ck / v:.2f}" if ck is not None and v else ("—" if v is not None else "")
            value = fmt(v) if v is not None else f"n/a {mark(f'{peer}: {why(peer, fig)}')}"
            if v is not None and fig in notes.get(peer, {}):
                value += " " + mark(f"{peer}: {notes[peer][fig]}")
            rows.append(
                (
                    label if i == 0 else "",
                    peer,
                    value,
                    ratio if peer != "chatkeep" else "",
                    target if i == 0 else "",
                    verdict if i == 0 else "",
                )
            )

    a100, a5k = get("chatkeep", "append@100"), get("chatkeep", "append@5000")
    figure("append one turn @100 entries", "append@100", _t)
    others = [get(p, "append@5000") for p in STORAGE[1:]]
    faster = a5k is not None and all(o is not None and a5k < o for o in others)
    figure(
        "append one turn @5,000 entries",
        "append@5000",
        _t,
        "faster than every storage peer",
        "met" if faster else "NOT met",
    )
    for peer in STORAGE:
        p100, p5k = get(peer, "append@100"), get(peer, "append@5000")
        if peer == "chatkeep" and a100 and a5k:
            g = a5k / a100
            rows.append(
                (
                    "append growth 5,000 / 100",
                    peer,
                    f"{g:.2f}×",
                    "",
                    "≤ 1.5×",
                    "met" if g <= 1.5 else "NOT met",
                )
            )
        elif p100 and p5k:
            rows.append(("", peer, f"{p5k / p100:.2f}×", "", "", ""))

    def vs(fig: str, peer: str, limit: float) -> str:
        ck, other = get("chatkeep", fig), get(peer, fig)
        if ck is None or not other:
            return "NOT met (no figure)"
        return f"{'met' if ck / other <= limit else 'NOT met'} ({ck / other:.2f}× {peer})"

    s100, s5k = get("chatkeep", "append+seen@100"), get("chatkeep", "append+seen@5000")
    if s100 and s5k:
        rows.append(
            (
                "turn + mark_images_seen()",
                "chatkeep",
                f"{_t(s100)} @100, {_t(s5k)} @5,000 ({s5k / s100:.2f}×)",
                "",
                "5,000 ≤ 1.5× 100",
                "met" if s5k / s100 <= 1.5 else "NOT met",
            )
        )
    figure(
        "read history @5,000 entries",
        "read@5000",
        _t,
        "≤ 1.0× json-blob",
        vs("read@5000", "json-blob", 1.0),
    )
    figure("read history, figure conversation", "read@figure", _t)
    figure(
        "get_all() vs peer settings read",
        "settings",
        _t,
        "≤ 2× json-blob row",
        vs("settings", "json-blob", 2.0),
    )
    build = mark(
        "chatkeep also runs mark_images_seen() after every turn, as a send does; the peers only append"
    )
    figure(
        f"store figure conversation {build}",
        "figure-build",
        _t,
        "≤ 1.0× openai-agents",
        vs("figure-build", "openai-agents", 1.0),
    )
    figure("save session: time", "save-time", _t)
    img = st["imageBytes"]
    sb = get("chatkeep", "save-bytes")
    share = (
        f"{sb / img:.1%} of {_b(img)} decoded image bytes; {sb / st['imageUrlChars']:.1%} of their data URLs; "
        f"the text alone is {st['textChars']:,} chars"
        if sb is not None
        else "—"
    )
    ok = "met" if sb is not None and sb <= 0.10 * img else "NOT met"
    pct = f"{sb / img:.1%}" if sb is not None else "—"
    figure(
        "save session: DB growth",
        "save-bytes",
        _b,
        "≤ 10% of image bytes",
        f"{ok} ({pct}) {mark(share)}",
    )
    figure("save session: bytes written", "save-written", _b)
    figure("disk after conversation + 1 save", "disk-figure", _b)
    srch = get("chatkeep", "search")
    worst = max(
        (v for k, v in med.get("chatkeep", {}).items() if k.startswith("search:")), default=None
    )
    figure(
        f"drawer search, {st['sessions']:,} sessions",
        "search",
        _t,
        "< 50 ms median",
        ("met" if srch is not None and srch < 0.05 else "NOT met")
        + f" (slowest query {_t(worst)})",
    )
    dst = get("chatkeep", "drawer-save-time")
    drawer_peers = [get(p, "drawer-save-time") for p in ("openai-agents", "json-blob")]
    figure(
        "save session into that drawer: time",
        "drawer-save-time",
        _t,
        "faster than both peers",
        "met"
        if dst is not None and all(v is not None and dst < v for v in drawer_peers)
        else "NOT met",
    )
    figure("save session into that drawer: growth", "drawer-save-bytes", _b)
    figure("save session into that drawer: written", "drawer-save-written", _b)
    return rows


def _request_rows(rq: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    tot = rq["totals"]
    rows: list[tuple[str, str, str, str, str, str]] = []
    ck, naive = tot["chatkeep"], tot["naive"]

    def figure(
        label: str, key: str, fmt: Any, target: str = "", verdict: str = "", ratio: bool = True
    ) -> None:
        for i, sys_ in enumerate(REQUEST):
            if sys_ not in tot:
                rows.append(
                    (label if i == 0 else "", REQUEST[sys_], f"n/a: {rq['trimError']}", "", "", "")
                )
                continue
            v = tot[sys_][key]
            r = f"{ck[key] / v:.2f}" if ratio and sys_ != "chatkeep" and v else ""
            rows.append(
                (
                    label if i == 0 else "",
                    REQUEST[sys_],
                    fmt(v),
                    r,
                    target if i == 0 else "",
                    verdict if i == 0 else "",
                )
            )

    share = ck["bytes"] / naive["bytes"]
    figure(
        "request bytes, 30 turns",
        "bytes",
        _b,
        "≤ 15% of naive",
        f"{'met' if share <= 0.15 else 'NOT met'} ({share:.1%})",
    )
    figure("images sent, 30 turns", "images", str)
    met = ck["reusePrev"] >= 0.9
    figure(
        "turns reusing ≥ 90% of previous request",
        "reusePrev",
        "{:.0%}".format,
        "≥ 90% of turns",
        "met" if met else "NOT met (labels/aging breaks)",
        ratio=False,
    )
    figure(
        "turns whose request is ≥ 90% reused prefix",
        "reuseCur",
        "{:.0%}".format,
        "",
        "",
        ratio=False,
    )
    figure(
        f"extra: reuse on {ck['calmTurns']} turns w/o label/aging",
        "reuseCalm",
        "{:.0%}".format,
        "",
        "not the target",
        ratio=False,
    )
    return rows


def print_table(rows: list[tuple[str, ...]], head: tuple[str, ...]) -> None:
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]
    widths[2] = min(widths[2], 60)
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def print_turns(rq: dict[str, Any]) -> None:
    print("\nPer turn — figure-heavy conversation (bytes · images · % of previous request reused)")
    keys = [k for k in ("chatkeep", "trim", "naive") if k in rq["rows"][0]]
    head = f"{'turn':>4} {'events':<10} {'breaks':<11}" + "".join(
        f" {REQUEST[k]:>29}" for k in keys
    )
    print(head)
    print("-" * len(head))
    for r in rq["rows"]:
        cells = "".join(
            f" {r[k]['bytes']:>13,} {r[k]['images']:>4} {r[k]['prefixOfPrevious']:>9.1%}"
            for k in keys
        )
        print(f"{r['turn']:>4} {r['events']:<10} {r['breaks']:<11}{cells}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30, help="timed rounds per figure (default 30)")
    ap.add_argument(
        "--save-rounds", type=int, default=5, help="session saves per system (default 5)"
    )
    ap.add_argument("--sessions", type=int, default=1_000, help="saved sessions in the drawer")
    ap.add_argument("--seed", type=int, default=7, help="seed of the figure-heavy conversation")
    ap.add_argument(
        "--conversations", type=int, default=10_000, help="conversations in the import figure"
    )
    ap.add_argument(
        "--import-messages",
        type=int,
        nargs="+",
        default=[10_000, 100_000],
        help="messages in the per-format import figures (default 10,000 and 100,000)",
    )
    ap.add_argument(
        "--scale",
        choices=("full", "quick", "off"),
        default="full",
        help="scale table: 1× and 100× (full), 1× and 10× (quick), or none",
    )
    ap.add_argument(
        "--search",
        choices=("full", "quick", "off"),
        default="quick",
        help="message search (bench/search.py): 1,000,000 entries (full), 20,000 (quick), none",
    )
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.1f} s] {msg}", file=sys.stderr, flush=True)

    log("requests: replaying the figure-heavy conversation")
    rq = compare.requests(args.seed)
    log("cache economy: pricing every strategy's requests under provider prompt caching")
    cache = cache_economy.run(args.seed)
    with tempfile.TemporaryDirectory(prefix="chatkeep-bench-") as root:
        st = compare.storage(root, args.rounds, args.save_rounds, args.sessions, log)
    log(f"interop: importing {args.conversations:,} ChatGPT conversations; Agents sessions")
    io = interop.run(args.conversations)
    log(f"imports: every format at {', '.join(f'{n:,}' for n in args.import_messages)} messages")
    per_format = imports.run(args.import_messages, list(imports.SAMPLES))
    log("adapters: each framework adapter against the framework's own SQLite store")
    ad = adapters.run()
    print_turns(rq)
    cache_economy.print_table(cache)
    print(
        f"\nSummary — medians of {args.rounds} rounds ({args.save_rounds} for saves); ratio = chatkeep / system"
    )
    head = ("figure", "system", "value", "ratio", "target (chatkeep)", "verdict")
    foot: list[str] = []
    print_table(_storage_rows(st, foot) + _request_rows(rq), head)
    for k, text in enumerate(foot, 1):
        print(f"[{k}] {text}")
    print(
        "\nversions: "
        + "; ".join(f"{k} {v}" for k, v in st["versions"].items())
        + "; langchain-core "
        + compare.P.version("langchain-core")
    )
    print("\nImport and integrations (side by side in this run)")
    interop.print_rows(io["rows"])
    print("\nImport of every format, from its producer's sample (side by side in this run)")
    imports.print_rows(per_format["rows"])
    print("\nFramework adapters against each framework's own SQLite store (same run)")
    adapters.print_rows(ad["rows"])
    sc = None
    if args.scale != "off":
        sc = scale.run((1, 10) if args.scale == "quick" else (1, 100), args.rounds, log)
        scale.print_report(sc)
    se = None
    if args.search != "off":
        full = args.search == "full"
        log("message search: " + ("1,000,000 entries" if full else "20,000 entries"))
        se = search_bench.run(
            1_000_000 if full else 20_000, 100_000 if full else 2_000, 5, 200, log
        )
        search_bench.report(se)
    log("done")
    result = {
        "search": se,
        "storage": st,
        "requests": {"totals": rq["totals"], "trimError": rq["trimError"]},
        "scale": sc,
        "cacheEconomy": {k: v["ratios"] for k, v in cache.items()},
        "interop": {"import": io["import"], "agents": io["agents"]},
        "imports": per_format["results"],
        "adapters": ad["pairs"],
    }
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1, default=str)
    return result


if __name__ == "__main__":
    main()
