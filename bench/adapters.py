"""Framework adapters against each framework's own SQLite store, on the same work (SPEC §15).

For every adapter whose framework is installed, in the same run:

* **write per turn** — ``TURNS`` turns, each a user message and a reply written as the
  framework's runner writes them (one call per turn), into a session that grows; the figure is
  the mean time of one turn's write.
* **read 500 items** — a session of 500 items read back whole (the median of ``READS`` reads).

Both sides of a pair run interleaved — a turn (or a read) on chatkeep, then the same on the
framework's store — so a busy machine slows both alike.
* **bytes with images** — the figure-heavy conversation (:func:`bench.workloads.figure_entries`,
  its images repeated across turns) written turn by turn; the bytes the database file holds.

Peers: the Agents SDK's ``SQLiteSession``; LangChain's ``SQLChatMessageHistory`` on an SQLite
file (``langchain-community``); Pydantic AI's documented pattern (each run's
``new_messages_json()`` as one row of an SQLite table: it ships no store of its own); Google
ADK's ``SqliteSessionService``. A peer or adapter that is not installed is left out, with the
reason. Run alone: ``python -m bench.adapters [--turns N]``; ``python -m bench`` runs it too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from bench.adapter_pairs import PAIRS, Pair

TURNS = 300
READ_ITEMS = 500
READS = 15


def _db_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def _timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _measure(pair: Pair, root: str, turns: int) -> dict[str, dict[str, float]]:
    """Both sides of one pair, interleaved (a turn or a read on one, then on the other), so
    a busy machine slows both alike: the three figures for each side."""
    sides = ("chatkeep", "peer")
    out: dict[str, dict[str, float]] = {side: {} for side in sides}
    with ExitStack() as stack:
        targets = {
            s: stack.enter_context(pair.open(s, _path(root, pair, s, "write"))) for s in sides
        }
        spent = dict.fromkeys(sides, 0.0)
        for turn in pair.turns(turns):
            for side in sides:
                spent[side] += _timed(lambda t=targets[side], turn=turn: t.write_turns([turn]))
        for side in sides:
            out[side]["write"] = spent[side] / turns
    with ExitStack() as stack:
        targets = {
            s: stack.enter_context(pair.open(s, _path(root, pair, s, "read"))) for s in sides
        }
        times: dict[str, list[float]] = {side: [] for side in sides}
        for side in sides:
            targets[side].write_turns(pair.turns(READ_ITEMS // 2))
        for _ in range(READS):
            for side in sides:
                t = time.perf_counter()
                got = targets[side].read()
                times[side].append(time.perf_counter() - t)
                assert got == READ_ITEMS, f"{pair.name} {side} read {got}, not {READ_ITEMS}"
        for side in sides:
            out[side]["read"] = statistics.median(times[side])
    for side in sides:
        path = _path(root, pair, side, "bytes")
        with pair.open(side, path) as target:
            target.write_turns(pair.figure_turns())
        out[side]["bytes"] = _db_bytes(path)
    return out


def _path(root: str, pair: Pair, side: str, what: str) -> str:
    return os.path.join(root, f"{pair.name}-{side}-{what}.db".replace(" ", "_"))


def run(turns: int = TURNS) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="chatkeep-bench-adapters-") as root:
        for pair in PAIRS:
            why = pair.missing()
            if why:
                results[pair.name] = {"missing": why}
                continue
            both = _measure(pair, root, turns)
            results[pair.name] = {
                "peer": pair.peer,
                "adapter": pair.adapter,
                "chatkeep": both["chatkeep"],
                "other": both["peer"],
            }
    return {"turns": turns, "pairs": results, "rows": rows(results, turns)}


def _ms(s: float) -> str:
    return f"{s * 1e3:,.2f} ms"


def rows(results: dict[str, Any], turns: int) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for name, r in results.items():
        if "missing" in r:
            out.append((name, "—", "not measured", r["missing"]))
            continue
        ck, other, peer = r["chatkeep"], r["other"], r["peer"]
        out += [
            (
                f"{name}: write one turn ({turns} turns)",
                r["adapter"],
                _ms(ck["write"]),
                f"{ck['write'] / other['write']:.2f}× {peer} ({_ms(other['write'])})",
            ),
            (
                f"  read a {READ_ITEMS}-item session",
                r["adapter"],
                _ms(ck["read"]),
                f"{ck['read'] / other['read']:.2f}× {peer} ({_ms(other['read'])})",
            ),
            (
                "  bytes on disk, figure conversation",
                r["adapter"],
                f"{ck['bytes'] / 1e6:,.2f} MB",
                f"{ck['bytes'] / other['bytes']:.2f}× {peer} ({other['bytes'] / 1e6:,.2f} MB)",
            ),
        ]
    return out


def print_rows(table: list[tuple[str, str, str, str]]) -> None:
    head = ("figure", "adapter", "value", "ratio (chatkeep / framework's own store)")
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(4)]
    for r in [head, tuple("-" * w for w in widths), *table]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench.adapters")
    ap.add_argument("--turns", type=int, default=TURNS)
    args = ap.parse_args(argv)
    result = run(args.turns)
    print_rows(result["rows"])
    return result


if __name__ == "__main__":
    main()
