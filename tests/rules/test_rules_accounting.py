"""Request accounting (SPEC §6.4)."""

from __future__ import annotations

from rules_helpers import assistant, png_url, user

from chatkeep.rules.accounting import common_prefix_length, request_stats
from chatkeep.rules.wire import build_request, serialize

IMG = png_url((8, 8))


def _req(style, history, text="next", images=()):
    return build_request(
        style,
        history,
        user_entry=user(text, list(images)),
        system_prompt="sys",
        model="m",
        base_url="https://h",
    )


def test_stats_counts_text_images_and_bytes():
    """chars, images, imageBytes, estTokens and bytes of a chat request."""
    req = _req("chat", [user("hello"), assistant("hey")], "q", [IMG])
    stats = request_stats(req)
    assert stats["chars"] == len("sys") + len("hello") + len("hey") + len("q")
    assert stats["images"] == 1 and stats["imageBytes"] == len(IMG)
    # an 8x8 PNG is one 512-px tile under OpenAI's rule: 85 + 170
    assert stats["estTokens"] == -(-stats["chars"] // 4) + 255
    assert stats["bytes"] == len(serialize(req.body))
    assert stats["prefixBytes"] == 0 and stats["prefixRatio"] == 0.0


def test_stats_same_for_every_style():
    """Text chars, image count and image bytes agree across the three API styles."""
    history = [user("hello", [IMG]), assistant("hey")]
    keys = ("chars", "images", "imageBytes")
    figures = [
        {k: request_stats(_req(s, history, "q", [IMG]))[k] for k in keys}
        for s in ("chat", "responses", "anthropic")
    ]
    assert figures[0] == figures[1] == figures[2]
    assert figures[0]["images"] == 2


def test_stats_prefix_with_previous_turn():
    """The next turn's request starts with almost all of the previous one."""
    history = [user("hello"), assistant("hey")]
    prev = _req("chat", history, "q1")
    nxt = _req("chat", history + [user("q1"), assistant("a1")], "q2")
    stats = request_stats(nxt, prev)
    a, b = serialize(nxt.body), serialize(prev.body)
    assert a[: stats["prefixBytes"]] == b[: stats["prefixBytes"]]
    assert a[stats["prefixBytes"]] != b[stats["prefixBytes"]]
    assert stats["prefixRatio"] == stats["prefixBytes"] / stats["bytes"]
    assert stats["prefixOfPrevious"] > 0.8


def test_common_prefix_length_edges():
    """Prefix length on equal, disjoint, nested and long inputs."""
    assert common_prefix_length(b"abc", b"abc") == 3
    assert common_prefix_length(b"abc", b"xbc") == 0
    assert common_prefix_length(b"ab", b"abcd") == 2
    long = bytes(range(256)) * 2000
    assert common_prefix_length(long, long[:300_001] + b"!" + long[300_002:]) == 300_001
