"""Import of every format at 10,000 and 100,000 messages, each against the bare parse of the
same file in the same run.

Each file is made from a sample its producer wrote (``tests/fixtures/interop/real``, where
``SOURCES.md`` says where each came from): the sample's conversations are repeated, each copy
under an id of its own, until the file holds the wanted number of messages (SillyTavern's
one-chat files repeat their messages in one chat; llm's ``logs.db`` repeats its responses
rows, each copy in a conversation of its own). ``chatkeep import_file`` then runs into a
fresh SQLite store, in a child process of its own, and so does the bare parse the import
cannot do without: ``json.load`` of a JSON file, ``json.loads`` of every line of a JSON Lines
file, every row of llm's ``responses`` table. The figures are wall time, CPU time and the
child's peak RSS; "growth" is the time per message at 100,000 over the time per message at
10,000 (1.00 is linear).

Run alone: ``python -m bench.imports [--messages N [N ...]] [--formats F [F ...]]``;
``python -m bench`` runs it too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.peak import PEAK_RSS

REAL = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "interop" / "real"

#: format → (its sample, as the producer wrote it; the field holding a conversation's id)
SAMPLES: dict[str, tuple[str, str | None]] = {
    "chatgpt": ("chatgpt/librechat-modern-export.json", "id"),
    "claude": ("claude/polylogue-with-attachments.json", "uuid"),
    "openwebui": ("openwebui/librechat-openwebui-export.json", "id"),
    "librechat": ("librechat/librechat-export.json", "conversationId"),
    "sharegpt": ("llama-factory/glaive_toolcall_en_demo.json", None),
    "jsonl": ("llama-factory/v1_sft_demo.jsonl", None),
    "sillytavern": ("sillytavern/Aqua/1673181146000.jsonl", None),
    "llm": ("llm/llm-0.27.1-logs.db", None),
}

_CHILD_IMPORT = (
    PEAK_RSS
    + """
import sys, time, chatkeep
w, c = time.perf_counter(), time.process_time()
with chatkeep.open(sys.argv[1]) as store:
    report = chatkeep.import_file(store, sys.argv[2], source=sys.argv[3])
print(time.perf_counter() - w, time.process_time() - c, peak_rss(), report["messages"])
"""
)

_CHILD_PARSE = (
    PEAK_RSS
    + """
import json, sqlite3, sys, time
w, c = time.perf_counter(), time.process_time()
kind, path = sys.argv[3], sys.argv[2]
if kind == "llm":
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n = sum(1 for _ in con.execute("SELECT * FROM responses"))
elif path.endswith(".jsonl"):
    with open(path, encoding="utf-8") as fh:
        n = sum(1 for line in fh if line.strip() and json.loads(line) is not None)
else:
    with open(path, encoding="utf-8") as fh:
        n = len(json.load(fh))
print(time.perf_counter() - w, time.process_time() - c, peak_rss(), n)
"""
)


def _child(code: str, *args: str) -> tuple[float, float, int, int]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{args[1]}: {done.stderr.strip().splitlines()[-1:]}")
    out = done.stdout.split()
    return float(out[0]), float(out[1]), int(out[2]), int(out[3])


def _messages_in(path: str, fmt: str, root: str) -> int:
    """How many messages chatkeep imports from ``path`` (the sample, once)."""
    return _child(_CHILD_IMPORT, os.path.join(root, f"count-{fmt}.db"), path, fmt)[3]


def _json_copies(sample: Path, id_field: str | None, copies: int, out: str) -> None:
    """The sample's conversations ``copies`` times, each copy's id (and every mention of it)
    made unique; formats without ids are told apart by their order on import."""
    data = json.loads(sample.read_text(encoding="utf-8"))
    convs = data if isinstance(data, list) else [data]
    texts = [json.dumps(c, ensure_ascii=False) for c in convs]
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("[")
        first = True
        for k in range(copies):
            for conv, text in zip(convs, texts, strict=True):
                own = conv.get(id_field) if id_field and isinstance(conv, dict) else None
                if isinstance(own, str) and own:
                    text = text.replace(json.dumps(own), json.dumps(f"{own}-{k}"))
                fh.write(("" if first else ",") + text)
                first = False
        fh.write("]")


def _jsonl_copies(sample: Path, copies: int, out: str, *, header: bool) -> None:
    lines = [ln for ln in sample.read_text(encoding="utf-8").splitlines() if ln.strip()]
    head, body = (lines[:1], lines[1:]) if header else ([], lines)
    with open(out, "w", encoding="utf-8") as fh:
        fh.writelines(ln + "\n" for ln in head)
        for _ in range(copies):
            fh.writelines(ln + "\n" for ln in body)


def _llm_copies(sample: Path, copies: int, out: str) -> None:
    """llm's own database with its ``responses`` rows repeated, each copy in a conversation of
    its own (ids made unique the way llm's are: text)."""
    shutil.copyfile(sample, out)
    con = sqlite3.connect(out)
    cols = [r[1] for r in con.execute("PRAGMA table_info(responses)")]
    rest = [c for c in cols if c not in ("id", "conversation_id")]
    conv_cols = [r[1] for r in con.execute("PRAGMA table_info(conversations)")]
    conv_rest = [c for c in conv_cols if c != "id"]
    with con:
        for k in range(1, copies):
            con.execute(
                f"INSERT INTO conversations (id, {', '.join(conv_rest)}) SELECT id || '-{k}',"
                f" {', '.join(conv_rest)} FROM conversations WHERE id NOT LIKE '%-%'"
            )
            con.execute(
                f"INSERT INTO responses (id, conversation_id, {', '.join(rest)})"
                f" SELECT id || '-{k}', conversation_id || '-{k}', {', '.join(rest)}"
                " FROM responses WHERE id NOT LIKE '%-%'"
            )
    con.close()


def make_file(fmt: str, messages: int, per_copy: int, root: str) -> str:
    """A file of ``fmt`` holding about ``messages`` messages (the sample repeated)."""
    rel, id_field = SAMPLES[fmt]
    sample = REAL / rel
    copies = max(1, math.ceil(messages / max(1, per_copy)))
    out = os.path.join(root, f"{fmt}-{messages}{sample.suffix}")
    if fmt == "llm":
        _llm_copies(sample, copies, out)
    elif sample.suffix == ".jsonl":
        _jsonl_copies(sample, copies, out, header=fmt == "sillytavern")
    else:
        _json_copies(sample, id_field, copies, out)
    return out


def measure(fmt: str, sizes: list[int], root: str) -> dict[str, Any]:
    rel, _ = SAMPLES[fmt]
    per_copy = _messages_in(str(REAL / rel), fmt, root)
    if fmt == "sillytavern":  # one chat: its messages repeat, the header does not
        per_copy = max(1, per_copy)
    out: dict[str, Any] = {"format": fmt, "sample": rel, "perCopy": per_copy, "sizes": {}}
    for n in sizes:
        path = make_file(fmt, n, per_copy, root)
        ck = _child(_CHILD_IMPORT, os.path.join(root, f"store-{fmt}-{n}.db"), path, fmt)
        parse = _child(_CHILD_PARSE, "-", path, fmt)
        out["sizes"][n] = {
            "bytes": os.path.getsize(path),
            "messages": ck[3],
            "chatkeep": ck[:3],
            "parse": parse[:3],
        }
        os.remove(path)
    return out


def rows(results: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    table: list[tuple[str, ...]] = []
    for res in results:
        sizes = sorted(res["sizes"])
        for n in sizes:
            f = res["sizes"][n]
            (w, c, m), (pw, pc, pm) = f["chatkeep"], f["parse"]
            table.append(
                (
                    f"{res['format']} {f['messages']:,} messages ({f['bytes'] / 1e6:,.1f} MB)",
                    f"{w:,.2f} s",
                    f"{w / pw:,.2f}× ({pw:,.2f} s)",
                    f"{c / pc:,.2f}×",
                    f"{m / 1e6:,.0f} MB ({m / pm:,.2f}×)",
                )
            )
        if len(sizes) >= 2:
            lo, hi = res["sizes"][sizes[0]], res["sizes"][sizes[-1]]
            per_lo = lo["chatkeep"][0] / max(1, lo["messages"])
            per_hi = hi["chatkeep"][0] / max(1, hi["messages"])
            table.append((f"  growth per message, {res['format']}", f"{per_hi / per_lo:,.2f}×"))
    return table


def print_rows(table: list[tuple[str, ...]]) -> None:
    head = ("import", "wall", "wall / bare parse", "CPU / bare parse", "peak RSS (/ parse)")
    full = [head, *[r + ("",) * (len(head) - len(r)) for r in table]]
    widths = [max(len(r[i]) for r in full) for i in range(len(head))]
    for r in [full[0], tuple("-" * w for w in widths), *full[1:]]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def run(sizes: list[int], formats: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="chatkeep-bench-imports-") as root:
        results = [measure(fmt, sizes, root) for fmt in formats]
    return {"results": results, "rows": rows(results)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench.imports")
    ap.add_argument("--messages", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--formats", nargs="+", choices=sorted(SAMPLES), default=list(SAMPLES))
    args = ap.parse_args(argv)
    result = run(args.messages, args.formats)
    print_rows(result["rows"])
    return result


if __name__ == "__main__":
    main()
