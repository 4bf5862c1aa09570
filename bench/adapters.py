"""Framework adapters against each framework's own SQLite store, on the same work (SPEC §15).

For every adapter whose framework is installed, in the same run:

* **write per turn** — ``TURNS`` turns, each a user message and a reply written as the
  framework's runner writes them (one call per turn), into a session that grows; the figure is
  the mean time of one turn's write.
* **read 500 items** — a session of 500 items read back whole (the median of ``READS`` reads).
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
from typing import Any

from bench.adapter_pairs import PAIRS, Pair

TURNS = 300
READ_ITEMS = 500
READS = 5


def _db_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def _timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _measure(pair: Pair, side: str, root: str, turns: int) -> dict[str, float]:
    """One side (``chatkeep`` or ``peer``) of one pair: the three figures."""
    out: dict[str, float] = {}
    path = os.path.join(root, f"{pair.name}-{side}-write.db")
    with pair.open(side, path) as target:
        msgs = pair.turns(turns)
        out["write"] = _timed(lambda: target.write_turns(msgs)) / turns
    path = os.path.join(root, f"{pair.name}-{side}-read.db")
    with pair.open(side, path) as target:
        target.write_turns(pair.turns(READ_ITEMS // 2))
        times = []
        for _ in range(READS):
            t = time.perf_counter()
            got = target.read()
            times.append(time.perf_counter() - t)
            assert got == READ_ITEMS, f"{pair.name} {side} read {got} items, not {READ_ITEMS}"
        out["read"] = statistics.median(times)
    path = os.path.join(root, f"{pair.name}-{side}-bytes.db")
    with pair.open(side, path) as target:
        target.write_turns(pair.figure_turns())
    out["bytes"] = _db_bytes(path)
    return out


def run(turns: int = TURNS) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="chatkeep-bench-adapters-") as root:
        for pair in PAIRS:
            why = pair.missing()
            if why:
                results[pair.name] = {"missing": why}
                continue
            results[pair.name] = {
                "peer": pair.peer,
                "adapter": pair.adapter,
                "chatkeep": _measure(pair, "chatkeep", root, turns),
                "other": _measure(pair, "peer", root, turns),
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
