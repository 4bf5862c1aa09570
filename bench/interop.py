"""Import and integration benchmarks, each against its alternative in the same run.

* **ChatGPT import** — a generated 10,000-conversation ChatGPT-style ``conversations.json``
  (each with an edited-away branch, a hidden system node and six visible turns) imported by
  ``chatkeep.import_file`` into a fresh SQLite store, against the obvious alternative: ``json.load``
  the whole file and walk the same branches (no store). Each runs in its own process; the figures
  are the child's own CPU time (``time.process_time``: other work on the machine does not count)
  and peak RSS (``VmHWM``, :mod:`bench.peak`). A third child times the ChatGPT reader alone (the
  same conversations made, nothing stored), so the line tells reading from storing. The import's
  child then times its first drawer search and its first message search (``mode="text"``): what
  the import leaves for the next reader to pay.
* **Agents SDK session** — the figure-heavy conversation (:func:`bench.workloads.figure_entries`)
  written turn by turn (two ``add_items`` per turn, as the SDK's runner does) into
  ``ChatkeepSession`` and into the SDK's own ``SQLiteSession``; the figures are the time to write
  and read it back, and the bytes the database file holds afterwards.

Run alone: ``python -m bench.interop [--conversations N]``; ``python -m bench`` runs it too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.peak import PEAK_RSS

_CHILD_IMPORT = (
    PEAK_RSS
    + """
import sys, time, chatkeep
t = time.process_time()
with chatkeep.open(sys.argv[1]) as store:
    report = chatkeep.import_file(store, sys.argv[2])
    took = time.process_time() - t
    t = time.process_time()
    store.sessions.list("bridge coffee")  # the drawer's first search after the import
    drawer = time.process_time() - t
    t = time.process_time()
    store.search("bridge coffee", mode="text")  # the first message search
    message = time.process_time() - t
print(took, peak_rss(), report["added"], drawer, message)
"""
)

_CHILD_READ = (
    PEAK_RSS
    + """
import sys, time
from chatkeep.interop import chatgpt
from chatkeep.interop.source import Input
t = time.process_time()
read = sum(1 for _ in chatgpt.read(Input(sys.argv[2])))
print(time.process_time() - t, peak_rss(), read)
"""
)

_CHILD_NAIVE = (
    PEAK_RSS
    + """
import json, sys, time
t = time.process_time()
with open(sys.argv[2]) as fh:
    data = json.load(fh)
kept = 0
for conv in data:
    mapping, node = conv["mapping"], conv["current_node"]
    while node:
        kept += 1
        node = mapping[node]["parent"]
print(time.process_time() - t, peak_rss(), len(data))
"""
)


def chatgpt_export(path: str, n: int, seed: int = 5) -> int:
    """Write an n-conversation ChatGPT-style export to ``path``, streamed; returns its size."""
    rnd = random.Random(seed)
    words = "the of tram city river bridge light north window coffee paper music garden".split()

    def text(k: int) -> str:
        return " ".join(rnd.choice(words) for _ in range(k))

    def msg(i: str, role: str, body: str, hidden: bool = False) -> dict[str, Any]:
        meta = {"is_visually_hidden_from_conversation": True} if hidden else {}
        return {
            "id": i,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": 1.7e9,
            "content": {"content_type": "text", "parts": [body]},
            "status": "finished_successfully",
            "metadata": meta,
            "recipient": "all",
        }

    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for c in range(n):
            mapping: dict[str, Any] = {
                "root": {"id": "root", "parent": None, "children": ["sys"], "message": None},
                "sys": {
                    "id": "sys",
                    "parent": "root",
                    "children": ["t0"],
                    "message": msg("sys", "system", "", hidden=True),
                },
            }
            parent = "sys"
            for t in range(6):
                node = f"t{t}"
                role = "user" if t % 2 == 0 else "assistant"
                mapping[node] = {
                    "id": node,
                    "parent": parent,
                    "children": [],
                    "message": msg(node, role, text(12 if role == "user" else 60)),
                }
                mapping[parent]["children"].append(node)
                parent = node
            mapping["alt"] = {
                "id": "alt",
                "parent": "t0",
                "children": [],
                "message": msg("alt", "assistant", text(60)),
            }
            mapping["t0"]["children"].insert(0, "alt")
            conv = {
                "id": f"conv-{c:06d}",
                "conversation_id": f"conv-{c:06d}",
                "title": f"Conversation {c}",
                "create_time": 1.7e9 + c,
                "current_node": parent,
                "mapping": mapping,
            }
            fh.write(("," if c else "") + json.dumps(conv))
        fh.write("]")
    return os.path.getsize(path)


def _child(code: str, *args: str) -> tuple[float, ...]:
    """What the child prints: its CPU time, its peak RSS, a count, then any more times."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    ).stdout.split()
    return (float(out[0]), int(out[1]), int(out[2]), *(float(v) for v in out[3:]))


def import_figures(root: str, n: int) -> dict[str, Any]:
    path = os.path.join(root, "conversations.json")
    size = chatgpt_export(path, n)
    ck = _child(_CHILD_IMPORT, os.path.join(root, "import.db"), path)
    read = _child(_CHILD_READ, "-", path)
    naive = _child(_CHILD_NAIVE, "-", path)
    assert ck[2] == n and read[2] == n, "the import must add every conversation"
    return {
        "conversations": n,
        "fileBytes": size,
        "chatkeep": ck[:2],
        "firstSearch": {"drawer": ck[3], "message": ck[4]},
        "read": read[:2],
        "json.load": naive[:2],
    }


def _db_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def agents_figures(root: str) -> dict[str, Any]:
    from agents import SQLiteSession

    import chatkeep
    from bench.workloads import figure_entries, to_agents_item
    from chatkeep.integrations.agents import ChatkeepSession

    entries = figure_entries()
    items = [to_agents_item(e, k) for k, e in enumerate(entries)]
    out: dict[str, Any] = {"items": len(items)}

    async def write(session: Any) -> None:
        for item in items:  # one add_items per item: the runner saves input, then output
            await session.add_items([item])

    for name in ("chatkeep", "SQLiteSession"):
        path = os.path.join(root, f"{name}.db")
        store = None
        if name == "chatkeep":
            store = chatkeep.open(path)
            session: Any = ChatkeepSession(store, "bench")
        else:
            session = SQLiteSession("bench", path)
        t = time.perf_counter()
        asyncio.run(write(session))
        wrote = time.perf_counter() - t
        t = time.perf_counter()
        back = asyncio.run(session.get_items())
        read = time.perf_counter() - t
        assert len(back) == len(items)
        if store is not None:
            store.close()
        else:
            session.close()
        out[name] = {"write": wrote, "read": read, "bytes": _db_bytes(path)}
    return out


def rows(imp: dict[str, Any], ag: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    def mb(n: float) -> str:
        return f"{n / 1e6:,.1f} MB"

    ck_t, ck_m = imp["chatkeep"]
    nv_t, nv_m = imp["json.load"]
    out = [
        (
            f"import {imp['conversations']:,} ChatGPT conversations ({mb(imp['fileBytes'])}): time",
            "chatkeep import_file",
            f"{ck_t:,.2f} s CPU",
            f"{ck_t / nv_t:,.2f}× json.load ({nv_t:,.2f} s CPU, no store)",
        ),
        (
            "  of which reading the file (no store)",
            "chatkeep ChatGPT reader",
            f"{imp['read'][0]:,.2f} s CPU",
            f"{imp['read'][0] / nv_t:,.2f}× json.load",
        ),
        (
            "  then the first drawer search",
            "store.sessions.list",
            f"{imp['firstSearch']['drawer'] * 1e3:,.1f} ms CPU",
            "",
        ),
        (
            "  then the first message search",
            "store.search (text)",
            f"{imp['firstSearch']['message'] * 1e3:,.1f} ms CPU",
            "",
        ),
        (
            "  peak memory (RSS)",
            "chatkeep import_file",
            mb(ck_m),
            f"{ck_m / nv_m:,.2f}× json.load ({mb(nv_m)})",
        ),
    ]
    ck, sq = ag["chatkeep"], ag["SQLiteSession"]
    out += [
        (
            f"Agents session, figure-heavy conversation ({ag['items']} items): write",
            "ChatkeepSession",
            f"{ck['write']:,.2f} s",
            f"{ck['write'] / sq['write']:,.2f}× SQLiteSession ({sq['write']:,.2f} s)",
        ),
        (
            "  read back",
            "ChatkeepSession",
            f"{ck['read'] * 1e3:,.1f} ms",
            f"{ck['read'] / sq['read']:,.2f}× SQLiteSession ({sq['read'] * 1e3:,.1f} ms)",
        ),
        (
            "  bytes stored",
            "ChatkeepSession",
            mb(ck["bytes"]),
            f"{ck['bytes'] / sq['bytes']:,.2f}× SQLiteSession ({mb(sq['bytes'])})",
        ),
    ]
    return out


def run(conversations: int = 10_000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="chatkeep-bench-interop-") as root:
        imp = import_figures(root, conversations)
        ag = agents_figures(root)
    return {"import": imp, "agents": ag, "rows": rows(imp, ag)}


def print_rows(table: list[tuple[str, str, str, str]]) -> None:
    head = ("figure", "system", "value", "ratio (chatkeep / alternative)")
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(4)]
    for r in [head, tuple("-" * w for w in widths), *table]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench.interop")
    ap.add_argument("--conversations", type=int, default=10_000)
    args = ap.parse_args(argv)
    result = run(args.conversations)
    print_rows(result["rows"])
    return result


if __name__ == "__main__":
    main()
