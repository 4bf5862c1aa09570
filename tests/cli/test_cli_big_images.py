"""Big pasted images through the CLI (SPEC §5.5): a 9 MB phone photo and a 19 MB PNG
are stored whole and round-trip byte for byte; each request carries a copy resized to what the
provider uses, at most 8 images and 3 MiB of them, the rest as labels with a notice."""

from __future__ import annotations

import base64
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from clirun import run
from support.provider_server import Text, unauthorized

KEYS = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
MIB3 = 3 * 1024 * 1024


def _photo(path: Path) -> bytes:
    """A 4000×3000 noise JPEG of about 9.5 MB: a phone photo that does not compress."""
    rnd = random.Random(25)
    img = Image.frombytes("L", (4000, 3000), rnd.randbytes(12_000_000)).convert("RGB")
    img.save(path, format="JPEG", quality=90)
    return path.read_bytes()


def _big_png(path: Path) -> bytes:
    """A 2600×2450 noise PNG of about 19 MB."""
    rnd = random.Random(19)
    img = Image.frombytes("RGB", (2600, 2450), rnd.randbytes(2600 * 2450 * 3))
    img.save(path, format="PNG", compress_level=1)
    return path.read_bytes()


def _provider(db: Path, server: Any, style: str) -> None:
    base = server.base_url if style == "anthropic" else server.url("/v1")
    run(db, "provider", "add", "loop", "--style", style, "--base-url", base, "--model", "m")


def _sent_images(body: dict[str, Any]) -> list[bytes]:
    """The image bytes a request body carries, in order, whatever its style."""
    found: list[bytes] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if node.get("type") == "image":
                found.append(base64.b64decode(node["source"]["data"]))
                return
            if node.get("type") in ("image_url", "input_image"):
                url = node["image_url"]
                url = url["url"] if isinstance(url, dict) else url
                found.append(base64.b64decode(url.split(",", 1)[1]))
                return
            for value in node.values():
                walk(value)

    walk(body)
    return found


def _data_urls(doc: Any) -> list[bytes]:
    """Every image of the history in an export (live and archive), decoded, in order."""
    found: list[bytes] = []
    stack = [doc["history"], doc["archive"]]
    while stack:
        node = stack.pop()
        if isinstance(node, str) and node.startswith("data:image/"):
            found.append(base64.b64decode(node.split(",", 1)[1]))
        elif isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def _size(raw: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(raw)) as img:
        return img.size


def _stored_image(db: Path) -> dict[str, Any]:
    (entry, _reply) = json.loads(run(db, "history", "--json").stdout)
    assert entry["role"] == "user"
    (image,) = [p for p in entry["content"] if p["type"] == "image"]
    assert [p["text"] for p in entry["content"] if p["type"] == "text"] == ["phone photo"]
    return image


@pytest.mark.parametrize("style", ["anthropic", "chat"])
def test_phone_photo_is_stored_whole_and_sent_resized(
    tmp_path: Path, provider_server, style: str
) -> None:
    """A 9 MB photo: exit 0, no cap note, stored byte for byte (history, export, import back),
    and the request carries a resized copy within the provider's size and 3 MiB."""
    raw = _photo(tmp_path / "photo.jpg")
    assert len(raw) > 9_000_000
    db = tmp_path / "ck.db"
    _provider(db, provider_server, style)
    provider_server.queue(Text("a photo of noise"))
    proc = run(db, "chat", "phone photo", "--image", str(tmp_path / "photo.jpg"), env=KEYS)
    assert "not sent" not in proc.stderr and "label" not in proc.stderr

    image = _stored_image(db)
    assert (image["mime"], image["width"], image["height"]) == ("image/jpeg", 4000, 3000)
    assert image["bytes"] == len(raw)

    request = provider_server.requests[-1]
    (sent,) = _sent_images(request.body)
    w, h = _size(sent)
    if style == "anthropic":
        assert max(w, h) <= 1568
    else:
        assert max(w, h) <= 2048 and min(w, h) <= 768
    assert len(base64.b64encode(sent)) <= MIB3 and len(request.raw) < MIB3 + 10_000

    out = tmp_path / "export.json"
    run(db, "export", "-o", str(out))
    assert _data_urls(json.loads(out.read_text())) == [raw]
    db2 = tmp_path / "back.db"
    run(db2, "import", str(out))
    assert _stored_image(db2)["bytes"] == len(raw)
    out2 = tmp_path / "export2.json"
    run(db2, "export", "-o", str(out2))
    assert _data_urls(json.loads(out2.read_text())) == [raw]


def test_big_png_is_stored_whole_and_sent_as_a_small_copy(tmp_path: Path, provider_server) -> None:
    """A 19 MB PNG: stored byte for byte; the request carries one image of OpenAI's size,
    re-encoded smaller, within 3 MiB."""
    raw = _big_png(tmp_path / "scan.png")
    assert len(raw) > 18_000_000
    db = tmp_path / "ck.db"
    _provider(db, provider_server, "responses")
    proc = run(db, "chat", "phone photo", "--image", str(tmp_path / "scan.png"), env=KEYS)
    assert "not sent" not in proc.stderr and "label" not in proc.stderr
    assert _stored_image(db)["bytes"] == len(raw)
    (sent,) = _sent_images(provider_server.requests[-1].body)
    assert _size(sent) == (815, 768) and len(base64.b64encode(sent)) <= MIB3
    out = tmp_path / "export.json"
    run(db, "export", "-o", str(out))
    assert _data_urls(json.loads(out.read_text())) == [raw]


def test_ten_images_are_all_stored_and_the_request_carries_eight(
    tmp_path: Path, provider_server
) -> None:
    """Ten pasted images: all ten stored, the request carries 8 and two labels, and the user is
    told on stderr — not in the stored text."""
    paths = []
    for k in range(10):
        path = tmp_path / f"shot{k}.png"
        Image.new("RGB", (40 + k, 30), (20 * k, 90, 200)).save(path)
        paths.append(path)
    db = tmp_path / "ck.db"
    _provider(db, provider_server, "chat")
    args = [a for p in paths for a in ("--image", str(p))]
    proc = run(db, "chat", "ten shots", *args, env=KEYS)
    assert "2 images were sent as a label" in proc.stderr
    (entry, _reply) = json.loads(run(db, "history", "--json").stdout)
    assert [p["type"] for p in entry["content"]] == ["text"] + ["image"] * 10
    assert entry["content"][0]["text"] == "ten shots"
    sent = _sent_images(provider_server.requests[-1].body)
    assert sent == [p.read_bytes() for p in paths[:8]]
    raw = provider_server.requests[-1].raw
    assert b"[image 9]" in raw and b"[image 10]" in raw
    out = tmp_path / "export.json"
    run(db, "export", "-o", str(out))
    assert _data_urls(json.loads(out.read_text())) == [p.read_bytes() for p in paths]


def test_resized_photo_is_byte_identical_from_request_to_request(
    tmp_path: Path, provider_server
) -> None:
    """The photo is resized the same way in every process: the preview, the failed send and the
    regenerate carry the same bytes, and `request` counts the resized copy, not the stored one."""
    raw = _photo(tmp_path / "photo.jpg")
    db = tmp_path / "ck.db"
    _provider(db, provider_server, "anthropic")
    provider_server.queue(unauthorized())
    failed = run(
        db, "chat", "phone photo", "--image", str(tmp_path / "photo.jpg"), ok=False, env=KEYS
    )
    assert failed.returncode != 0
    preview = json.loads(run(db, "request", "--json", env=KEYS).stdout)
    (row,) = [r for r in preview["entries"] if r["images"]]
    assert row["sent"] == "resized" and row["imageBytes"] > len(raw)
    assert (
        row["sentImageBytes"] < MIB3 and preview["request"]["imageBytes"] == row["sentImageBytes"]
    )
    assert preview["naive"]["imageBytes"] > 4 * preview["request"]["imageBytes"]
    assert "resize_images_anthropic" in preview["steps"] and preview["heldBack"] == 0
    provider_server.queue(Text("noise"))
    run(db, "regenerate", env=KEYS)
    first, second = provider_server.requests[-2:]
    assert _sent_images(first.body) == _sent_images(second.body)
    assert first.raw == second.raw
