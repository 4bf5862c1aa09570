"""The print of a sent request (rules.request_print) gives the prefix figures of the full body:
the common byte prefix, and the predicted cache read, without keeping the long strings."""

from __future__ import annotations

import json
import random

from chatkeep.rules.accounting import request_stats
from chatkeep.rules.cache_read import predicted_cache_read, request_blocks
from chatkeep.rules.request_print import (
    HEAD_CHARS,
    print_from_json,
    request_print,
)
from chatkeep.rules.wire import WireRequest, serialize
from factories import png_data_url


def _request(messages: list[dict], style: str = "chat") -> WireRequest:
    body = {"model": "m", "messages": messages, "stream": True}
    return WireRequest(style=style, url="http://127.0.0.1/v1/chat/completions", body=body)


def _printed(request: WireRequest):
    raw = serialize(request.body)
    made = request_print(request, raw, request_blocks(request))
    again = print_from_json(json.loads(json.dumps(made.to_json())))
    assert again == made
    return again


def test_the_prefix_from_a_print_equals_the_prefix_of_the_bodies() -> None:
    """Over random edits (appended turns, changed short and long texts, quotes and non-ASCII,
    images swapped), the prefix from the print is that of the two full bodies."""
    rng = random.Random(7)
    image = png_data_url(60, 40, noise=True)
    other = png_data_url(61, 40, noise=True)
    long_text = 'ü"x\n' * 600
    base = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": long_text},
                {"type": "image_url", "image_url": {"url": image}},
            ],
        },
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "short question"},
    ]
    for _ in range(40):
        now = json.loads(json.dumps(base))
        change = rng.choice(["append", "short", "long_head", "image", "none"])
        if change == "append":
            now += [{"role": "assistant", "content": "fine"}, {"role": "user", "content": "more"}]
        elif change == "short":
            now[3]["content"] = "short questioN"
        elif change == "long_head":
            k = rng.randrange(HEAD_CHARS // 2)
            text = now[1]["content"][0]["text"]
            now[1]["content"][0]["text"] = text[:k] + "Z" + text[k + 1 :]
        elif change == "image":
            now[1]["content"][1]["image_url"]["url"] = other
        before, after = _request(base), _request(now)
        exact = request_stats(after, before)
        assert request_stats(after, _printed(before)) == exact, change


def test_a_long_string_changed_past_its_head_counts_up_to_the_head() -> None:
    """A long text that differs only after its kept head: the prefix stops at the head (the
    documented bound), never past the real one."""
    text = "a" * 5000
    before = _request([{"role": "user", "content": text}])
    after = _request([{"role": "user", "content": text[:3000] + "b" + text[3001:]}])
    exact = request_stats(after, before)["prefixBytes"]
    got = request_stats(after, _printed(before))["prefixBytes"]
    assert got < exact and got == serialize(before.body).index(b"aaaa") + HEAD_CHARS


def test_the_cache_read_from_a_print_equals_the_one_from_the_body() -> None:
    """predicted_cache_read against a print equals the figure against the full previous request
    (Anthropic marks and OpenAI prefixes)."""
    history = [{"role": "user", "content": "word " * 3000}, {"role": "assistant", "content": "ok"}]
    for style in ("chat", "anthropic"):
        before = _request(history, style)
        after = _request([*history, {"role": "user", "content": "next"}], style)
        assert predicted_cache_read(after, _printed(before)) == predicted_cache_read(after, before)


def test_anything_else_is_not_a_print() -> None:
    """An earlier version's stored body, junk, or a damaged print is no print (None)."""
    assert print_from_json({"style": "chat", "body": {}}) is None
    assert print_from_json("x") is None
    assert print_from_json({"print": 2, "segments": [[-1, "", ""]], "blocks": []}) is None
