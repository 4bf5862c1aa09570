"""Framework adapters against each framework's own SQLite store, on the same work (SPEC §15).

For every adapter whose framework is installed, in the same run:

* **write per turn** — ``TURNS`` turns, each a user message and a reply written as the
  framework's runner writes them (one call per turn), into a session that grows; the figure is
  the mean time of one turn's write.
* **read 500 items** — a session of 500 items read back whole: the median of ``READS``
  rounds, in wall time and in the process's CPU time (what a busy machine disturbs least; it
  counts every thread, so the work a framework hands to a worker thread is in it too).
* **bytes with images** — the figure-heavy conversation (:func:`bench.workloads.figure_entries`,
  its images repeated across turns) written turn by turn; the bytes the database file holds, and
  of them the pages of chatkeep's message index (SPEC §16: every character of every entry's text,
  which no framework store keeps), when the SQLite build can count them (``dbstat``).

Both sides of a pair run interleaved, a turn (or a read) on one and then the same on the other,
the order swapped every round, so a busy machine slows both alike and neither always goes first.
Before each timed read the garbage collector runs, outside the figure: a full collection costs
in proportion to everything the process holds (both sides and all four frameworks), and without
this its turns locked onto one side's reads for a whole run — the same code measured 0.82–0.90×
in most runs and 1.11–1.15× in two of nine (the Agents SDK read); with it, 0.81–0.90× in six
of six. A read still pays for the collections its own allocations set off. Writes are timed
without it: a collection before every turn leaves the processor's caches cold, which doubled
both sides' turn (0.6 → 1.4 ms).

Peers: the Agents SDK's ``SQLiteSession``; LangChain's ``SQLChatMessageHistory`` on an SQLite
file (``langchain-community``); for Pydantic AI, which ships no SQLite store (its
``ConversationStore`` has an in-memory implementation only), the store of its chat example
(each run's ``new_messages_json()`` as one row, a rollback journal as ``sqlite3`` opens it),
and the same in WAL mode as a second pair (:class:`~bench.adapter_pairs.PydanticAIPair`);
Google ADK's ``SqliteSessionService``. A peer or adapter that is not installed is left out, with the reason.
Run alone: ``python -m bench.adapters [--turns N] [--reads N] [--only NAME]``;
``python -m bench`` runs it too.
"""

from __future__ import annotations

import argparse
import gc
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from bench.adapter_pairs import PAIRS, Pair

TURNS = 300
READ_ITEMS = 500
READS = 31


def _db_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def _index_bytes(path: str) -> int | None:
    """Bytes of the message index's tables and their indexes in an SQLite file (``None`` when
    the SQLite build has no ``dbstat``)."""
    con = sqlite3.connect(path)
    try:
        got = con.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'ck\\_search%' ESCAPE '\\'"
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return int(got[0] or 0)


def _timed(fn: Callable[[], Any], collect: bool = False) -> tuple[float, float, Any]:
    """Wall and CPU seconds of ``fn()``, and what it returned. With ``collect`` the garbage
    collector runs first, outside the figure, so ``fn`` pays for the collections its own
    allocations set off and not for ones the other side left pending (module docstring)."""
    if collect:
        gc.collect()
    t, c = time.perf_counter(), time.process_time()
    got = fn()
    return time.perf_counter() - t, time.process_time() - c, got


def _order(k: int) -> tuple[str, str]:
    return ("chatkeep", "peer") if k % 2 == 0 else ("peer", "chatkeep")


def _measure(pair: Pair, root: str, turns: int, reads: int) -> dict[str, dict[str, Any]]:
    """Both sides of one pair, interleaved (a turn or a read on one, then on the other, the
    order swapped each round), so a busy machine slows both alike: the figures of each side."""
    sides = ("chatkeep", "peer")
    out: dict[str, dict[str, Any]] = {side: {} for side in sides}
    with ExitStack() as stack:
        targets = {
            s: stack.enter_context(pair.open(s, _path(root, pair, s, "write"))) for s in sides
        }
        spent = dict.fromkeys(sides, 0.0)
        first, *timed = pair.turns(turns + 1)
        for side in sides:  # a first turn outside the figures: each side's one-time set-up
            targets[side].write_turns([first])  # (schema builds) paid, as in a running app
        for k, turn in enumerate(timed):
            for side in _order(k):
                spent[side] += _timed(lambda t=targets[side], turn=turn: t.write_turns([turn]))[0]
        for side in sides:
            out[side]["write"] = spent[side] / turns
    with ExitStack() as stack:
        targets = {
            s: stack.enter_context(pair.open(s, _path(root, pair, s, "read"))) for s in sides
        }
        wall: dict[str, list[float]] = {side: [] for side in sides}
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        for side in sides:
            targets[side].write_turns(pair.turns(READ_ITEMS // 2))
            targets[side].read()  # a first read outside the figures: caches as an app has them
        for k in range(reads):
            for side in _order(k):
                w, c, got = _timed(targets[side].read, collect=True)
                wall[side].append(w)
                cpu[side].append(c)
                assert got == READ_ITEMS, f"{pair.name} {side} read {got}, not {READ_ITEMS}"
        for side in sides:
            out[side]["read"] = statistics.median(wall[side])
            out[side]["read_cpu"] = statistics.median(cpu[side])
    for side in sides:
        path = _path(root, pair, side, "bytes")
        with pair.open(side, path) as target:
            target.write_turns(pair.figure_turns())
        out[side]["bytes"] = _db_bytes(path)
        out[side]["index_bytes"] = _index_bytes(path) if side == "chatkeep" else None
    return out


def _path(root: str, pair: Pair, side: str, what: str) -> str:
    return os.path.join(root, f"{pair.name}-{side}-{what}.db".replace(" ", "_"))


def run(turns: int = TURNS, reads: int = READS, only: tuple[str, ...] = ()) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="chatkeep-bench-adapters-") as root:
        for pair in PAIRS:
            if only and not any(o.lower() in pair.name.lower() for o in only):
                continue
            why = pair.missing()
            if why:
                results[pair.name] = {"missing": why}
                continue
            both = _measure(pair, root, turns, reads)
            results[pair.name] = {
                "peer": pair.peer,
                "adapter": pair.adapter,
                "chatkeep": both["chatkeep"],
                "other": both["peer"],
            }
    return {"turns": turns, "reads": reads, "pairs": results, "rows": rows(results, turns, reads)}


def _ms(s: float) -> str:
    return f"{s * 1e3:,.2f} ms"


def rows(results: dict[str, Any], turns: int, reads: int) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for name, r in results.items():
        if "missing" in r:
            out.append((name, "—", "not measured", r["missing"]))
            continue
        ck, other, peer = r["chatkeep"], r["other"], r["peer"]
        index = ck.get("index_bytes")
        held = f" (message index {index / 1e6:,.2f} MB)" if index is not None else ""
        out += [
            (
                f"{name}: write one turn ({turns} turns)",
                r["adapter"],
                _ms(ck["write"]),
                f"{ck['write'] / other['write']:.2f}× {peer} ({_ms(other['write'])})",
            ),
            (
                f"  read a {READ_ITEMS}-item session (median of {reads})",
                r["adapter"],
                _ms(ck["read"]),
                f"{ck['read'] / other['read']:.2f}× {peer} ({_ms(other['read'])})",
            ),
            (
                "  the same read, CPU time",
                r["adapter"],
                _ms(ck["read_cpu"]),
                f"{ck['read_cpu'] / other['read_cpu']:.2f}× {peer} ({_ms(other['read_cpu'])})",
            ),
            (
                "  bytes on disk, figure conversation",
                r["adapter"],
                f"{ck['bytes'] / 1e6:,.2f} MB{held}",
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
    ap.add_argument("--reads", type=int, default=READS)
    ap.add_argument("--only", action="append", default=[], help="a pair's name (repeatable)")
    args = ap.parse_args(argv)
    result = run(args.turns, args.reads, tuple(args.only))
    print_rows(result["rows"])
    return result


if __name__ == "__main__":
    main()
