"""Pasted images of any type through the CLI: a browsa dump holding BMP, SVG and
AVIF images imports whole, keeps their bytes, and a chat sends them as PNG (or a label)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image

import chatkeep
from clirun import run
from support.provider_server import Text


def _url(fmt: str, mime: str, color=(200, 10, 10)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (24, 16), color).save(buf, format=fmt)
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode()}"


BMP = _url("BMP", "image/bmp")
AVIF = _url("AVIF", "image/avif", (0, 0, 200))
SVG = (
    "data:image/svg+xml;base64,"
    + base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode()
)


def _entry(text: str, url: str) -> dict:
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": url}},
        ],
    }


def test_browsa_dump_with_other_image_types_imports_and_chats(
    tmp_path: Path, provider_server
) -> None:
    """BMP/SVG/AVIF images import byte for byte; the next request carries PNGs and a label."""
    dump = {
        "history": [
            _entry("a bitmap", BMP),
            {"role": "assistant", "content": "red"},
            _entry("a vector", SVG),
            # answered: a question with no reply would be left behind by the next one (§3.5)
            {"role": "assistant", "content": "blue"},
        ],
        "savedSessions": [
            {"id": "s1", "name": "avif one", "createdAt": 1, "history": [_entry("an avif", AVIF)]}
        ],
    }
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump))
    db = tmp_path / "ck.db"
    run(db, "import", str(path), "--from", "browsa")
    with chatkeep.open(str(db)) as s:
        live = s.history.read()
        assert live[0]["content"][1]["image_url"]["url"] == BMP
        assert live[2]["content"][1]["image_url"]["url"] == SVG
        (row,) = s.sessions.list()
        assert s.sessions.get(row["id"])["history"][0]["content"][1]["image_url"]["url"] == AVIF
    assert "[image 24×16 bmp," in run(db, "history").stdout
    run(
        db,
        "provider",
        "add",
        "loop",
        "--style",
        "chat",
        "--base-url",
        provider_server.url("/v1"),
        "--model",
        "m",
    )
    provider_server.queue(Text("seen"))
    run(db, "chat", "what are these?", env={"OPENAI_API_KEY": "k"})
    sent = json.dumps(provider_server.requests[-1].body)
    assert "image/bmp" not in sent and "image/svg" not in sent and "data:image/png;base64," in sent
    assert "[image 1]" in sent  # the SVG cannot be decoded: its label goes instead
    with chatkeep.open(str(db)) as s:
        assert s.history.read()[0]["content"][1]["image_url"]["url"] == BMP  # still the BMP


def test_budget_counts_seen_images(tmp_path: Path) -> None:
    """store.bound_unseen_image_bytes thumbnails old seen images too, never the newest (§5.4)."""
    big = []
    for seed in range(3):
        img = Image.effect_noise((1200, 900), 80 + seed).convert("RGB")
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=95)
        big.append("data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode())
    with chatkeep.open(str(tmp_path / "b.db")) as s:
        for k, url in enumerate(big):
            s.history.append(_entry(f"photo {k}", url))
            s.history.append({"role": "assistant", "content": "nice"})
        s.mark_images_seen()
        changed = s.bound_unseen_image_bytes(budget=len(big[2]) + 10)
        after = [
            e["content"][1]["image_url"]["url"] for e in s.history.read() if e["role"] == "user"
        ]
    assert changed == 2 and after[2] == big[2] and all(len(u) < len(big[0]) for u in after[:2])
