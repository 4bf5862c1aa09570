"""Storage basics: one ``append`` and one ``get_all()`` at history lengths 100 and 5,000 (SQLite).

The performance contract of SPEC §1: appending does not rewrite the history and ``get_all()``
never reads it, so both should cost about the same at 100 and at 5,000 live entries. The live
window is widened (``maxHistoryEntries`` 10,000, ``maxHistoryChars`` 10,000,000) so the live
history really holds that many entries. Each figure is the median of ``--rounds`` timings on a
file-backed store in a temporary directory. Target: both 5,000/100 ratios below 1.5.

Run: ``python -m bench.storage_basics [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

import chatkeep

LENGTHS = (100, 5_000)
TARGET_RATIO = 1.5


def _entry(i: int) -> dict[str, Any]:
    role = "user" if i % 2 == 0 else "assistant"
    return {"role": role, "content": f"message {i}: " + "lorem ipsum dolor sit amet " * 20}


def _prepared(path: str, length: int) -> chatkeep.Store:
    store = chatkeep.open(path)
    store.local.set({"maxHistoryEntries": 10_000, "maxHistoryChars": 10_000_000, "fontSize": 14})
    store.history.mutate(lambda _: [_entry(i) for i in range(length)])
    return store


def measure(rounds: int, root: str) -> dict[int, dict[str, float]]:
    """Alternate the stores round by round so machine noise hits both lengths alike."""
    stores = {n: _prepared(os.path.join(root, f"bench-{n}.db"), n) for n in LENGTHS}
    samples: dict[int, dict[str, list[float]]] = {
        n: {"append_us": [], "get_all_us": []} for n in LENGTHS
    }
    try:
        for n, store in stores.items():  # warm-up, untimed
            for k in range(20):
                store.history.append(_entry(k))
            store.history.truncate_from(n)
        for r in range(rounds):
            for n, store in stores.items():
                t0 = time.perf_counter()
                store.history.append(_entry(n + r))
                samples[n]["append_us"].append((time.perf_counter() - t0) * 1e6)
                t0 = time.perf_counter()
                store.get_all()
                samples[n]["get_all_us"].append((time.perf_counter() - t0) * 1e6)
            if r % 50 == 49:  # untimed: bring the lengths back to 100 and 5,000
                for n, store in stores.items():
                    store.history.truncate_from(n)
        for n, store in stores.items():
            store.history.truncate_from(n)
            assert len(store.history.read()) == n
    finally:
        for store in stores.values():
            store.close()
    return {n: {k: statistics.median(v) for k, v in d.items()} for n, d in samples.items()}


def main(rounds: int = 500, quiet: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root:
        results = measure(rounds, root)
    small, big = results[LENGTHS[0]], results[LENGTHS[1]]
    ratios = {k: big[k] / small[k] for k in small}
    if not quiet:
        print(f"storage basics (SQLite, median of {rounds})")
        print(
            f"{'operation':<10} {'100 entries':>14} {'5,000 entries':>15} {'ratio':>7} {'target':>8}"
        )
        for key, name in (("append_us", "append"), ("get_all_us", "get_all()")):
            ok = "met" if ratios[key] < TARGET_RATIO else "NOT met"
            print(
                f"{name:<10} {small[key]:>11.1f} µs {big[key]:>12.1f} µs {ratios[key]:>7.2f} "
                f"{'< ' + str(TARGET_RATIO):>6} {ok}"
            )
    return {"results": results, "ratios": ratios}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=500)
    args = parser.parse_args()
    main(args.rounds)
