"""A 9 MB phone photo in a request: what the request weighs, and what resizing costs.

The photo is a 4000×3000 noise JPEG at quality 90 (noise does not compress: ~9.5 MB, ~12.6 MB
as a data URL). For each API style it prints the request body built from the stored entry
verbatim (``steps=()``, what was sent before requests resized images) and the request chatkeep
builds (the photo resized to the provider's size), with the image's size and tokens.

Then the cost of resizing: one resize of the photo the first time and again (the per-process
memo of :mod:`chatkeep.rules.resize`, keyed by the bytes' SHA-256 and the style), and
``preview_request`` on a store holding the unanswered photo, first and second call (a preview
builds the request up to three times: the plan, its per-entry rows and the previous request).
Timings are reported, never asserted.

Run: ``python -m bench.image_resize``.
"""

from __future__ import annotations

import io
import random
import tempfile
import time
from pathlib import Path

import chatkeep
from chatkeep.dataurl import decode, encode
from chatkeep.rules import resize
from chatkeep.rules.accounting import request_stats
from chatkeep.rules.wire import build_request


def photo_url() -> str:
    from PIL import Image

    rnd = random.Random(25)
    img = Image.frombytes("L", (4000, 3000), rnd.randbytes(12_000_000)).convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return encode(buf.getvalue(), "image/jpeg")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.2f} MB"


def _size(url: str) -> str:
    from PIL import Image

    with Image.open(io.BytesIO(decode(url)[1])) as img:
        return f"{img.width}×{img.height} {img.format}"


def weights(url: str) -> None:
    entry = {
        "role": "user",
        "content": [
            {"type": "text", "text": "phone photo"},
            {"type": "image_url", "image_url": {"url": url}},
        ],
    }
    print(f"stored photo: {_mb(len(decode(url)[1]))} bytes, {_mb(len(url))} as a data URL")
    print(f"{'style':<10} {'before':>10} {'after':>10} {'ratio':>7}  {'sent image':<18} tokens")
    for style in ("anthropic", "chat", "responses"):
        args = {"user_entry": entry, "system_prompt": "", "model": "m", "base_url": "http://x"}
        before = request_stats(build_request(style, [], steps=(), **args))
        after = request_stats(build_request(style, [], **args))
        sent = resize.resize_for_request(url, style)
        print(
            f"{style:<10} {_mb(before['bytes']):>10} {_mb(after['bytes']):>10} "
            f"{after['bytes'] / before['bytes']:>7.1%}  {_size(sent):<18} {after['estTokens']:,}"
        )


def timings(url: str) -> None:
    resize._memo.clear()
    t0 = time.perf_counter()
    resize.resize_for_request(url, "anthropic")
    t1 = time.perf_counter()
    resize.resize_for_request(url, "anthropic")
    t2 = time.perf_counter()
    print(f"resize, first call:  {(t1 - t0) * 1e3:,.0f} ms")
    print(f"resize, remembered:  {(t2 - t1) * 1e3:,.0f} ms (base64 decode + header + SHA-256)")
    with tempfile.TemporaryDirectory() as tmp:
        store = chatkeep.open(str(Path(tmp) / "b.db"))
        try:
            card = {"style": "anthropic", "baseUrl": "http://127.0.0.1:9", "model": "m"}
            store.local.set({"providers": {"a": {**card, "apiKey": "k"}}, "activeProvider": "a"})
            store.history.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "phone photo"},
                        {"type": "image_url", "image_url": {"url": url}},
                    ],
                }
            )
            resize._memo.clear()
            env: dict[str, str] = {}
            t0 = time.perf_counter()
            chatkeep.preview_request(store, "", env=env)
            t1 = time.perf_counter()
            chatkeep.preview_request(store, "", env=env)
            t2 = time.perf_counter()
        finally:
            store.close()
    print(f"preview, first call: {(t1 - t0) * 1e3:,.0f} ms (one resize, two remembered)")
    print(f"preview, again:      {(t2 - t1) * 1e3:,.0f} ms (the panel's next preview)")


def main() -> None:
    url = photo_url()
    weights(url)
    timings(url)


if __name__ == "__main__":
    main()
