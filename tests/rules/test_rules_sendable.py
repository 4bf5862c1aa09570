"""Any image type is stored and converted only inside requests (SPEC §3.2, §5.3); ``{url}``
images are proper parts (§5.6)."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

import chatkeep
from chatkeep.rules.sendable import SENT_IMAGE_TYPES, sendable_history, to_sendable_url

SVG = (
    "data:image/svg+xml;base64,"
    + base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>').decode()
)


def _url(fmt: str, mime: str, size=(30, 20), color=(200, 10, 10), mode="RGB") -> str:
    buf = io.BytesIO()
    Image.new(mode, size, color).save(buf, format=fmt)
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode()}"


def _pixels(url: str) -> tuple[str, tuple[int, int], bytes]:
    raw = base64.b64decode(url.split(",", 1)[1])
    with Image.open(io.BytesIO(raw)) as img:
        return img.format, img.size, img.convert("RGBA").tobytes()


BMP = _url("BMP", "image/bmp")
AVIF = _url("AVIF", "image/avif", color=(10, 200, 10))
TIFF = _url("TIFF", "image/tiff", mode="RGBA", color=(1, 2, 3, 100))
PNG = _url("PNG", "image/png")


@pytest.mark.parametrize("url", [BMP, TIFF, AVIF, SVG, "data:image/x-whatever;base64,AAAA"])
def test_any_image_type_is_a_valid_entry(url: str) -> None:
    """The validator accepts every image/* data URL (nothing pasted is refused for its type)."""
    chatkeep.validate_entry(
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    )


def test_sent_types_pass_through_as_the_same_string() -> None:
    """PNG/JPEG/WebP/GIF data URLs are sent as they are stored."""
    for mime in SENT_IMAGE_TYPES:
        url = f"data:{mime};base64,AAAA"
        assert to_sendable_url(url) is url


@pytest.mark.parametrize("url", [BMP, TIFF])
def test_other_types_become_png_with_the_same_pixels(url: str) -> None:
    """BMP and TIFF (alpha kept) become PNG inside the request, pixel for pixel."""
    out = to_sendable_url(url)
    assert out.startswith("data:image/png;base64,")
    fmt, size, pixels = _pixels(out)
    assert fmt == "PNG" and (size, pixels) == _pixels(url)[1:]


def test_avif_becomes_png() -> None:
    """AVIF (lossy) becomes a PNG of the same size."""
    fmt, size, _ = _pixels(to_sendable_url(AVIF))
    assert (fmt, size) == ("PNG", (30, 20))


def test_history_step_converts_labels_and_keeps_identity() -> None:
    """The step converts, labels what cannot be decoded, and returns the same objects otherwise."""
    plain = {
        "role": "user",
        "content": [
            {"type": "text", "text": "x"},
            {"type": "image_url", "image_url": {"url": PNG}},
        ],
    }
    mixed = {
        "role": "user",
        "attachId": "a1",
        "content": [
            {
                "type": "text",
                "text": "scan\n## Figures\n1. Figure 1: the logo\n2. Figure 2: a scan",
            },
            {"type": "image_url", "image_url": {"url": SVG}},
            {"type": "image_url", "image_url": BMP},
        ],
    }
    history = [plain, {"role": "assistant", "content": "ok"}]
    assert sendable_history(history) is history
    out = sendable_history([plain, mixed])
    assert out[0] is plain and out[1] is not mixed
    assert out[1]["attachId"] == "a1"
    assert out[1]["content"][1] == {"type": "text", "text": "[Figure 1: the logo]"}
    assert out[1]["content"][2]["image_url"]["url"].startswith("data:image/png;base64,")
    assert mixed["content"][2]["image_url"] == BMP  # the input is never mutated


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_requests_carry_png_while_the_store_keeps_the_bmp(tmp_path, style: str) -> None:
    """A stored BMP stays byte for byte in the store; every wire style sends it as PNG."""
    with chatkeep.open(str(tmp_path / "s.db")) as store:
        store.history.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "old"},
                    {"type": "image_url", "image_url": {"url": BMP}},
                ],
            }
        )
        store.history.append({"role": "assistant", "content": "a red box"})
        stored = store.history.read()
        assert stored[0]["content"][1]["image_url"]["url"] == BMP
        turn = {
            "role": "user",
            "content": [
                {"type": "text", "text": "and this?"},
                {"type": "image_url", "image_url": {"url": TIFF}},
            ],
        }
        req = chatkeep.build_request(
            style,
            stored,
            user_entry=turn,
            system_prompt="s",
            model="m",
            base_url="http://127.0.0.1:1",
        )
    body = chatkeep.serialize(req.body).decode()
    assert "image/bmp" not in body and "image/tiff" not in body
    assert body.count("image/png") == 2
    assert (
        chatkeep.build_request(
            style,
            stored,
            user_entry=turn,
            system_prompt="s",
            model="m",
            base_url="http://127.0.0.1:1",
        ).body
        == req.body
    )


def test_interleave_turns_url_objects_into_image_parts() -> None:
    """{url} objects (what extractors produce), strings and parts all become image_url parts."""
    out = chatkeep.interleave_image_parts(
        "intro [图1]\nmiddle [图2]\nend",
        [{"url": PNG}, BMP, {"type": "image_url", "image_url": PNG}],
    )
    images = [p for p in out if p["type"] == "image_url"]
    assert images == [{"type": "image_url", "image_url": {"url": u}} for u in (PNG, BMP, PNG)]
    assert out[1] == images[0] and out[-1] == images[2]
    chatkeep.validate_entry({"role": "user", "content": out})
    with pytest.raises(ValueError):
        chatkeep.interleave_image_parts("x", [{"nope": 1}])
