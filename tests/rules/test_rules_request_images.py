"""Images in the request: resized for the provider, capped per request (SPEC §5.5, §6.4)."""

from __future__ import annotations

import base64
import io
import random

import pytest
from PIL import Image
from rules_helpers import assistant, data_url, decode, image_bytes, png_url, user

from chatkeep.errors import UndecodableImage
from chatkeep.rules.accounting import request_stats
from chatkeep.rules.request_images import (
    cap_request_images,
    held_back_note,
    request_steps,
    resize_images_anthropic,
    resize_images_openai,
)
from chatkeep.rules.resize import fit_size, resize_for_request
from chatkeep.rules.tokens import anthropic_image_tokens, image_tokens, openai_image_tokens
from chatkeep.rules.wire import build_request


def _photo() -> str:
    """A 4000×3000 noise JPEG of about 9 MB: a phone photo that does not compress."""
    rnd = random.Random(25)
    img = Image.frombytes("L", (4000, 3000), rnd.randbytes(12_000_000)).convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return data_url(buf.getvalue(), "image/jpeg")


PHOTO = _photo()


def _urls(entry) -> list[str]:
    return [p["image_url"]["url"] for p in entry["content"] if p.get("type") == "image_url"]


def test_fit_size_follows_each_providers_published_size():
    """Anthropic: long edge 1,568 and ~1.15 MP; OpenAI: fit 2,048 then short side 768."""
    assert fit_size(4000, 3000, "chat") == (1024, 768)
    assert fit_size(3000, 4000, "responses") == (768, 1024)
    assert fit_size(1000, 500, "chat") == (1000, 500)
    w, h = fit_size(4000, 3000, "anthropic")
    assert max(w, h) <= 1568 and w * h <= 784 * 1568 and abs(w / h - 4 / 3) < 0.01
    assert fit_size(1568, 400, "anthropic") == (1568, 400)
    assert fit_size(5000, 200, "anthropic") == (1568, 62)


def test_resized_photo_is_within_the_provider_size_and_far_smaller():
    """A 4000×3000 JPEG goes out as a JPEG of the provider's size, a fraction of the bytes."""
    for style, check in (
        ("anthropic", lambda w, h: max(w, h) <= 1568),
        ("chat", lambda w, h: max(w, h) <= 2048 and min(w, h) <= 768),
    ):
        out = resize_for_request(PHOTO, style)
        img = decode(out)
        assert img.format == "JPEG" and check(*img.size)
        assert len(out) < len(PHOTO) / 4 and len(out) < 3 * 1024 * 1024


def test_resize_is_deterministic():
    """The same stored image resized twice gives the same bytes (a stable cached prefix)."""
    assert resize_for_request(PHOTO, "anthropic") == resize_for_request(PHOTO, "anthropic")
    noisy_png = png_url((1600, 1200), noise=True, seed=3)
    assert resize_for_request(noisy_png, "chat") == resize_for_request(noisy_png, "chat")


def test_image_within_the_size_is_the_same_string():
    """An image the provider takes as it is comes back as the very same string, undecoded."""
    small = png_url((1000, 700), noise=True)
    assert resize_for_request(small, "chat") is small
    assert resize_for_request(small, "anthropic") is small
    history = [user("look", [small]), assistant("ok")]
    assert resize_images_openai(history) is history
    assert resize_images_anthropic(history) is history


def test_types_after_resizing():
    """Opaque photo PNG → JPEG; PNG with alpha stays PNG; WebP stays WebP."""
    opaque = png_url((1600, 1200), noise=True)
    assert decode(resize_for_request(opaque, "chat")).format == "JPEG"
    alpha = png_url((1600, 1200), mode="RGBA")
    out = decode(resize_for_request(alpha, "chat"))
    assert out.format == "PNG" and out.mode == "RGBA" and out.size == (1024, 768)
    webp = data_url(image_bytes((1600, 1200), "WEBP", noise=True), "image/webp")
    out = decode(resize_for_request(webp, "anthropic"))
    assert out.format == "WEBP" and max(out.size) <= 1568


def test_exif_orientation_is_applied_when_resizing():
    """A phone photo stored sideways with an EXIF rotation is sent upright."""
    img = Image.new("RGB", (4000, 3000), (10, 200, 10))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    buf = io.BytesIO()
    img.save(buf, format="JPEG", exif=exif.tobytes())
    url = data_url(buf.getvalue(), "image/jpeg")
    assert decode(resize_for_request(url, "chat")).size == (768, 1024)


def test_huge_non_jpeg_is_not_decoded():
    """Over 50 megapixels, only a JPEG is decoded (at a reduced scale); others raise."""
    img = Image.new("1", (8000, 7000))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    url = data_url(buf.getvalue())
    with pytest.raises(UndecodableImage):
        resize_for_request(url, "chat")
    history = [user("big", [url])]
    (entry,) = resize_images_openai(history)
    assert entry["content"][1] == {"type": "text", "text": "[image 1]"}


def test_cap_is_first_fit_over_the_whole_request():
    """At most 8 images per request, in order across entries; the rest become labels."""
    urls = [png_url((8 + k, 8)) for k in range(10)]
    history = [user("first", urls[:6]), assistant("ok"), user("second", urls[6:])]
    out = cap_request_images(history)
    assert out[0] is history[0] and out[1] is history[1]
    assert _urls(out[2]) == urls[6:8]
    assert [p["text"] for p in out[2]["content"][3:]] == ["[image 3]", "[image 4]"]
    assert _urls(history[2]) == urls[6:]  # input untouched
    first = history[:2]
    assert cap_request_images(first) is first


def test_cap_counts_bytes_first_fit():
    """A resized image over the 3 MiB budget goes as its label; a later small one still fits."""
    big = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + b"x" * 2_500_000).decode()
    small = png_url((8, 8))
    history = [user("a", [small, big, small])]
    (entry,) = cap_request_images(history)
    assert _urls(entry) == [small, small] and entry["content"][2]["text"] == "[image 2]"
    same = [user("a", [small, small])]
    assert cap_request_images(same) is same


def test_held_back_note():
    """The notice names how many images went as labels and why; none when none did."""
    assert held_back_note(0) == ""
    assert "1 image was sent as a label" in held_back_note(1)
    assert "3 images were sent as a label" in held_back_note(3) and "8 images" in held_back_note(3)


def test_request_steps_by_style():
    """Each style resizes to its own provider's size, then caps."""
    assert [s.__name__ for s in request_steps("anthropic")] == [
        "resize_images_anthropic",
        "cap_request_images",
    ]
    assert request_steps("chat") == request_steps("responses")


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_build_request_sends_the_photo_resized_and_estimates_its_tokens(style):
    """The built request carries the resized photo; its stats count the resized bytes, and
    the token estimate is the provider's figure for the size sent."""
    entry = user("phone photo", [PHOTO])
    request = build_request(
        style, [], user_entry=entry, system_prompt="", model="m", base_url="http://x"
    )
    stats = request_stats(request)
    assert stats["images"] == 1 and stats["imageBytes"] < 3 * 1024 * 1024
    assert request.held_back == 0
    naive = request_stats(
        build_request(
            style, [], user_entry=entry, system_prompt="", model="m", base_url="http://x", steps=()
        )
    )
    assert naive["imageBytes"] > 4 * stats["imageBytes"]
    w, h = fit_size(4000, 3000, style)
    rule = anthropic_image_tokens if style == "anthropic" else openai_image_tokens
    assert stats["estTokens"] == 3 + rule(w, h)
    assert image_tokens(resize_for_request(PHOTO, style), style) == rule(4000, 3000)
