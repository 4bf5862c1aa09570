"""Request economy: what chatkeep sends vs. naively resending the stored history.

A figure-heavy conversation is generated deterministically from a seed and simulated in memory
the way the store holds it: for every user turn, the pending attachments are appended, the
request is built from the stored history (``build_request``, chat style), the user entry and an
assistant reply are appended, and ``stamp_images_seen`` runs after the successful turn. The
naive baseline sends the same stored history verbatim (every image, every attachment in full).

Conversation: 30 user turns; 3 PDF attachments of 60,000 chars with 8 figures of ~150 KB each;
5 page attachments of 20,000–120,000 chars; 5 pasted screenshots.

The conversation itself comes from :func:`conversation` (also used by ``python -m bench``).

Two scenarios are measured: the history unbounded, and the history bounded by the store's live
window (last 60 entries, then at most 300,000 text chars; SPEC §3.3) after every write.

Per turn it prints text chars, images and bytes of both requests, and the prefix reuse:
``prefix/cur`` = share of this request that is a byte-identical prefix of the previous one,
``prefix/prev`` = share of the previous request reused as that prefix. Targets: chatkeep sends
≤ 15% of the naive bytes over the conversation, and ≥ 90% of turns (after the first) reuse
≥ 90% as an identical prefix.

Run: ``python -m bench.request_economy [--seed N] [--quiet]``.
"""

from __future__ import annotations

import argparse
import base64
import io
import random
from collections.abc import Iterator
from typing import Any

from chatkeep.entries import text_length
from chatkeep.rules.accounting import request_stats
from chatkeep.rules.context import AGED_STUB_HEADER, build_page_context_text
from chatkeep.rules.images import image_part, stamp_images_seen
from chatkeep.rules.wire import build_request, serialize

TURNS = 30
PDFS, PDF_CHARS, PDF_FIGURES = 3, 60_000, 8
PAGES, PAGE_CHARS = 5, (20_000, 120_000)
SCREENSHOTS = 5
WINDOW_ENTRIES, WINDOW_CHARS = 60, 300_000
TARGET_BYTES, TARGET_PREFIX, TARGET_TURNS = 0.15, 0.90, 0.90
SYSTEM = "You are a helpful assistant."
WORDS = (
    "model data figure result method training loss accuracy layer network sample value table "
    "section page we the of and to in is for that with on as by this are from"
).split()


def _noise_jpeg(rnd: random.Random, size: tuple[int, int] = (800, 540)) -> str:
    """A ~150 KB photo-like JPEG (smooth colour noise plus grain) as a data URL."""
    # Imaging is only needed to generate the benchmark's pictures.
    from PIL import Image

    w, h = size
    coarse = Image.frombytes("RGB", (w // 12, h // 12), rnd.randbytes((w // 12) * (h // 12) * 3))
    smooth = coarse.resize(size, Image.Resampling.BICUBIC)
    grain = Image.frombytes("RGB", size, rnd.randbytes(w * h * 3))
    out = io.BytesIO()
    Image.blend(smooth, grain, 0.25).save(out, format="JPEG", quality=82)
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def _prose(rnd: random.Random, n: int) -> str:
    parts: list[str] = []
    size = 0
    while size < n:
        sentence = (
            " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(6, 18))).capitalize() + ". "
        )
        if rnd.random() < 0.08:
            sentence += "\n\n"
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts)[:n]


def _pdf_entry(rnd: random.Random, k: int) -> dict[str, Any]:
    captions = [f"Figure {i}: {' '.join(rnd.choice(WORDS) for _ in range(4))}" for i in range(1, 9)]
    figures = "\n\n## Figures\nFigures extracted from the PDF, in order:\n" + "\n".join(
        f"{i}. {c}" for i, c in enumerate(captions, 1)
    )
    pages = []
    per_page = (PDF_CHARS - len(figures)) // 12
    for p in range(1, 13):
        pages.append(f"[Page {p}]\n" + _prose(rnd, per_page - 10))
    body = "\n".join(pages) + figures
    text = build_page_context_text(
        {"url": f"https://arxiv.org/pdf/2401.{1000 + k}", "title": f"Paper {k}"}, body, "pdf"
    )
    images = [image_part(_noise_jpeg(rnd)) for _ in range(PDF_FIGURES)]
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}, *images],
        "attachId": f"pdf{k}",
    }


def _page_entry(rnd: random.Random, k: int) -> dict[str, Any]:
    body = _prose(rnd, rnd.randint(*PAGE_CHARS))
    text = build_page_context_text(
        {"url": f"https://example.org/article/{k}", "title": f"Article {k}"}, body, "full"
    )
    return {"role": "user", "content": text, "attachId": f"page{k}"}


def _bound(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The store's live window (SPEC §3.3): last N entries, then drop oldest over the char cap."""
    history = history[-WINDOW_ENTRIES:]
    total = sum(text_length(e) for e in history)
    while len(history) > 1 and total > WINDOW_CHARS:
        total -= text_length(history[0])
        history = history[1:]
    return history


def _naive(history: list[dict[str, Any]], user_entry: dict[str, Any]) -> dict[str, Any]:
    messages = [{"role": "system", "content": SYSTEM}]
    messages += [{"role": e["role"], "content": e["content"]} for e in [*history, user_entry]]
    return {"model": "m", "messages": messages, "stream": True}


def _schedule(rnd: random.Random) -> tuple[dict[int, list[str]], set[int]]:
    kinds = ["pdf"] * PDFS + ["page"] * PAGES
    rnd.shuffle(kinds)
    turns = sorted(rnd.sample(range(TURNS - 2), len(kinds)))
    attach: dict[int, list[str]] = {}
    for t, kind in zip(turns, kinds, strict=True):
        attach.setdefault(t, []).append(kind)
    shots = set(rnd.sample(range(TURNS), SCREENSHOTS))
    return attach, shots


def conversation(seed: int = 7) -> Iterator[dict[str, Any]]:
    """The figure-heavy conversation, one user turn at a time, deterministic for ``seed``.

    Yields ``{"turn", "events", "attachments", "user", "reply"}``: the attachment entries to
    append before the turn, the user entry of the turn and the assistant reply that follows it.
    """
    rnd = random.Random(seed)
    attach, shots = _schedule(rnd)
    n_pdf = n_page = 0
    for turn in range(TURNS):
        events = []
        attachments = []
        for kind in attach.get(turn, []):
            if kind == "pdf":
                n_pdf += 1
                attachments.append(_pdf_entry(rnd, n_pdf))
            else:
                n_page += 1
                attachments.append(_page_entry(rnd, n_page))
            events.append(kind)
        question = _prose(rnd, rnd.randint(60, 300))
        if turn in shots:
            user_entry: dict[str, Any] = {
                "role": "user",
                "content": [{"type": "text", "text": question}, image_part(_noise_jpeg(rnd))],
            }
            events.append("shot")
        else:
            user_entry = {"role": "user", "content": question}
        reply = {"role": "assistant", "content": _prose(rnd, rnd.randint(400, 1500))}
        yield {
            "turn": turn + 1,
            "events": "+".join(events),
            "attachments": attachments,
            "user": user_entry,
            "reply": reply,
        }


def simulate(seed: int = 7, window: bool = False) -> dict[str, Any]:
    """Run the conversation; per-turn rows and totals for chatkeep and the naive baseline."""
    history: list[dict[str, Any]] = []
    store = _bound if window else (lambda h: h)
    rows = []
    previous = None
    prev_images = prev_stubs = 0
    prev_first: Any = None
    for step in conversation(seed):
        for entry in step["attachments"]:
            history = store([*history, entry])
        user_entry = step["user"]
        req = build_request(
            "chat",
            history,
            user_entry=user_entry,
            system_prompt=SYSTEM,
            model="m",
            base_url="https://h",
        )
        ours = request_stats(req, previous)
        naive = request_stats(_naive(history, user_entry))
        previous = serialize(req.body)
        stubs = previous.count(AGED_STUB_HEADER.encode())
        causes = []  # why this request may not start with the previous one
        if prev_images:
            causes.append("labels")
        if stubs > prev_stubs:
            causes.append("aged")
        if prev_first is not None and (not history or history[0] is not prev_first):
            causes.append("window")
        prev_images, prev_stubs = ours["images"], stubs
        prev_first = history[0] if history else None
        rows.append(
            {
                "turn": step["turn"],
                "events": step["events"],
                "breaks": "+".join(causes),
                "chatkeep": ours,
                "naive": naive,
            }
        )
        history = store([*history, user_entry, step["reply"]])
        history = stamp_images_seen(history) or history
    return _summary(rows, seed, window)


def _summary(rows: list[dict[str, Any]], seed: int, window: bool) -> dict[str, Any]:
    ours = sum(r["chatkeep"]["bytes"] for r in rows)
    naive = sum(r["naive"]["bytes"] for r in rows)
    later = rows[1:]
    cur_ok = sum(r["chatkeep"]["prefixRatio"] >= TARGET_PREFIX for r in later)
    prev_ok = sum(r["chatkeep"]["prefixOfPrevious"] >= TARGET_PREFIX for r in later)
    calm = [r for r in later if not r["breaks"]]
    calm_ok = sum(r["chatkeep"]["prefixOfPrevious"] >= TARGET_PREFIX for r in calm)
    return {
        "seed": seed,
        "window": window,
        "turns": len(rows),
        "rows": rows,
        "chatkeepBytes": ours,
        "naiveBytes": naive,
        "bytesRatio": ours / naive,
        "chatkeepImages": sum(r["chatkeep"]["images"] for r in rows),
        "naiveImages": sum(r["naive"]["images"] for r in rows),
        "prefixTurnsShare": cur_ok / len(later),
        "prefixOfPreviousTurnsShare": prev_ok / len(later),
        "turnsWithoutBreakEvent": len(calm),
        "turnsWithoutBreakEventReusing90": calm_ok,
        "bytesTargetMet": ours / naive <= TARGET_BYTES,
        "prefixTargetMet": cur_ok / len(later) >= TARGET_TURNS,
        "prefixOfPreviousTargetMet": prev_ok / len(later) >= TARGET_TURNS,
    }


def print_table(summary: dict[str, Any]) -> None:
    title = "live window 60 entries / 300,000 chars" if summary["window"] else "unbounded history"
    print(f"\nRequest economy — seed {summary['seed']}, {title}")
    head = f"{'turn':>4} {'events':<10} {'breaks':<13} {'ck chars':>9} {'ck img':>6} {'ck bytes':>10} {'naive chars':>11} {'nv img':>6} {'naive bytes':>11} {'prefix/cur':>10} {'prefix/prev':>11}"
    print(head)
    print("-" * len(head))
    for r in summary["rows"]:
        c, n = r["chatkeep"], r["naive"]
        print(
            f"{r['turn']:>4} {r['events']:<10} {r['breaks']:<13} {c['chars']:>9,} {c['images']:>6} {c['bytes']:>10,} "
            f"{n['chars']:>11,} {n['images']:>6} {n['bytes']:>11,} {c['prefixRatio']:>10.1%} {c['prefixOfPrevious']:>11.1%}"
        )
    print("-" * len(head))
    print(
        f"total bytes: chatkeep {summary['chatkeepBytes']:,} vs naive {summary['naiveBytes']:,} "
        f"= {summary['bytesRatio']:.1%} (target ≤ {TARGET_BYTES:.0%}: {'met' if summary['bytesTargetMet'] else 'NOT met'})"
    )
    print(f"images sent: chatkeep {summary['chatkeepImages']} vs naive {summary['naiveImages']}")
    print(
        f"turns 2..{summary['turns']} with ≥ {TARGET_PREFIX:.0%} identical prefix: "
        f"{summary['prefixTurnsShare']:.1%} of the request, {summary['prefixOfPreviousTurnsShare']:.1%} of the previous request "
        f"(target ≥ {TARGET_TURNS:.0%}: {'met' if summary['prefixTargetMet'] else 'NOT met'} / "
        f"{'met' if summary['prefixOfPreviousTargetMet'] else 'NOT met'})"
    )

    print(
        f"turns with no break event (no labels, aging or window drop): {summary['turnsWithoutBreakEvent']}, "
        f"of which {summary['turnsWithoutBreakEventReusing90']} reuse ≥ {TARGET_PREFIX:.0%} of the previous request"
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run both scenarios, print their tables, return ``{"unbounded": ..., "window": ...}``."""
    parser = argparse.ArgumentParser(prog="python -m bench.request_economy")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quiet", action="store_true", help="no tables, summary only")
    args = parser.parse_args(argv)
    result = {}
    for name, window in (("unbounded", False), ("window", True)):
        summary = simulate(args.seed, window)
        if not args.quiet:
            print_table(summary)
        result[name] = {k: v for k, v in summary.items() if k != "rows"}
    return result


if __name__ == "__main__":
    main()
