"""What one send, one session save and one load cost the database: transactions, SQL statements
and wall time, counted with ``store.trace()`` at the backend's execute seam.

The conversation: 400 entries (alternating questions of ~210 chars and answers of ~300 chars)
with 6 pasted images (noise PNGs, ~100 KB each as data URLs), live window widened to hold it.
A send goes to a loopback OpenAI-style server (non-streamed chat completion, one short answer)
over real HTTP, so the figure includes one round trip on 127.0.0.1. Save = ``sessions.save()``,
write-back = ``sessions.write_back()`` after one more entry, load = ``sessions.load()`` of the
saved session from an empty live history. Each is run ``--rounds`` times; the table shows the
counts of the last run and the median time.

Run: ``python -m bench.once [--rounds N]``; with ``CHATKEEP_BENCH_PG`` set, PostgreSQL too.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import random
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import chatkeep

ENTRIES, IMAGES = 400, 6


class _Answer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "ok"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        return None


def _png(seed: int) -> str:
    from PIL import Image  # the bench's images are real PNGs

    rng = random.Random(seed)
    img = Image.new("RGB", (160, 160))
    img.putdata(
        [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(160 * 160)]
    )
    out = io.BytesIO()
    img.save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def _conversation() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = [
        {"role": "user", "content": f"question {i} " + "w" * 200}
        if i % 2 == 0
        else {"role": "assistant", "content": f"answer {i} " + "v" * 300}
        for i in range(ENTRIES - IMAGES)
    ]
    for k in range(IMAGES):
        part = {"type": "image_url", "image_url": {"url": _png(k)}}
        entries.insert(
            60 * k + 1, {"role": "user", "content": [{"type": "text", "text": f"figure {k}"}, part]}
        )
    return entries


def _measure(
    store: chatkeep.Store, fn: Callable[[], Any], rounds: int, reset: Callable[[], Any]
) -> dict[str, Any]:
    times = []
    counts: dict[str, int] = {}
    for _ in range(rounds):
        reset()
        with store.trace() as t:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        counts = t.summary()
    return {**counts, "ms": statistics.median(times) * 1e3}


def run(url: str, rounds: int, api: str) -> dict[str, dict[str, Any]]:
    store = chatkeep.open(url, profile="b" + uuid.uuid4().hex[:8])
    entries = _conversation()
    store.local.set(
        {
            "maxHistoryEntries": 10_000,
            "maxHistoryChars": 10_000_000,
            "providers": {
                "loop": {
                    "style": "chat",
                    "baseUrl": api,
                    "model": "m",
                    "apiKey": "sk-x",
                    "stream": False,
                }
            },
            "activeProvider": "loop",
        }
    )
    store.history.mutate(lambda _: entries)
    out = {}
    out["send"] = _measure(store, lambda: store.chat.send("and now?"), rounds, lambda: None)
    saved: list[dict[str, Any]] = []
    out["save"] = _measure(
        store, lambda: saved.append(store.sessions.save("s")), rounds, lambda: None
    )
    out["write-back"] = _measure(
        store,
        store.sessions.write_back,
        rounds,
        lambda: store.history.append({"role": "user", "content": "more"}),
    )
    out["load"] = _measure(
        store, lambda: store.sessions.load(saved[0]["id"]), rounds, store.sessions.new
    )
    store.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = f"http://127.0.0.1:{server.server_address[1]}/v1"
    targets = []
    with tempfile.TemporaryDirectory() as tmp:
        targets.append(("sqlite", os.path.join(tmp, "once.db")))
        if os.environ.get("CHATKEEP_BENCH_PG"):
            targets.append(("postgresql", os.environ["CHATKEEP_BENCH_PG"]))
        print(
            f"{'backend':<11} {'operation':<11} {'transactions':>12} {'writes':>6} {'statements':>10} {'median':>10}"
        )
        for name, url in targets:
            for op, row in run(url, args.rounds, api).items():
                print(
                    f"{name:<11} {op:<11} {row['transactions']:>12} {row['writes']:>6}"
                    f" {row['statements']:>10} {row['ms']:>8.1f} ms"
                )
    server.shutdown()


if __name__ == "__main__":
    main()
