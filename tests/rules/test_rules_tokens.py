"""Token estimates by the providers' published rules (SPEC §6.4): text, images by pixel size."""

from __future__ import annotations

import pytest
from rules_helpers import assistant, data_url, image_bytes, jpeg_url, png_url, user

from chatkeep.rules.accounting import estimate_tokens, request_stats
from chatkeep.rules.tokens import (
    UNKNOWN_SIZE,
    anthropic_image_tokens,
    image_size,
    image_tokens,
    openai_image_tokens,
    text_tokens,
)
from chatkeep.rules.wire import build_request


def test_text_tokens_are_chars_over_four_rounded_up():
    """Text counts ceil(chars / 4); nothing counts nothing."""
    assert text_tokens("") == 0
    assert text_tokens("abc") == 1
    assert text_tokens("abcd") == 1
    assert text_tokens("abcde") == 2
    assert text_tokens(4000) == 1000


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((1024, 1024), 765),  # OpenAI's own example: 768x768, 4 tiles
        ((320, 200), 255),  # one tile
        ((2048, 4096), 1105),  # 1024x2048 then 768x1536: 2x3 tiles
        ((4096, 8192), 1105),  # same shape after fitting 2048
        ((512, 512), 255),
        ((513, 512), 425),
    ],
)
def test_openai_high_detail_tiles(size, expected):
    """85 + 170 per 512-px tile after fitting 2048x2048 and the short side to 768."""
    assert openai_image_tokens(*size) == expected


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((320, 200), 86),
        ((1000, 1000), 1334),
        ((1092, 1092), 1590),  # Anthropic's table: 1:1 at its largest unresized size
        ((4000, 1000), 820),  # long edge fitted to 1568 → 1568x392
    ],
)
def test_anthropic_pixels_over_750(size, expected):
    """w·h/750 after fitting the long edge 1568 and 784x1568 pixels."""
    assert anthropic_image_tokens(*size) == expected


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_image_size_read_from_the_header(fmt):
    """The pixel size of PNG, JPEG, GIF and WebP data URLs comes from their headers."""
    mime = "image/" + fmt.lower()
    url = data_url(image_bytes((320, 200), fmt), mime)
    assert image_size(url) == (320, 200)


def test_image_size_of_a_large_noisy_jpeg():
    """A JPEG larger than the first decoded chunk still reports its size."""
    url = jpeg_url((1600, 1200), noise=True, quality=95)
    assert len(url) > 64 * 1024
    assert image_size(url) == (1600, 1200)


def test_unreadable_image_counts_as_unknown_size():
    """A damaged image or a remote URL is counted as 1024x1024, never crashes."""
    assert image_size("data:image/png;base64,AAAA") is None
    assert image_size("https://example.com/a.png") is None
    assert image_tokens("https://example.com/a.png") == openai_image_tokens(*UNKNOWN_SIZE)


def test_small_png_is_not_counted_as_a_thousand_tokens():
    """A 320x200 screenshot in a chat request costs 255 tokens, not 1,000."""
    req = build_request(
        "chat",
        [user("hello"), assistant("hi")],
        user_entry=user("look", [png_url((320, 200))]),
        system_prompt="",
        model="m",
        base_url="https://h",
    )
    stats = request_stats(req)
    assert stats["estTokens"] == text_tokens(stats["chars"]) + 255
    assert estimate_tokens(req) == stats["estTokens"]


def test_anthropic_request_uses_anthropic_rule():
    """The same image in an Anthropic request is counted by w·h/750 (also from a bare body)."""
    req = build_request(
        "anthropic",
        [],
        user_entry=user("look", [png_url((320, 200))]),
        system_prompt="",
        model="m",
        base_url="https://h",
    )
    expected = text_tokens(len("look")) + 86
    assert request_stats(req)["estTokens"] == expected
    assert request_stats(req.body)["estTokens"] == expected
