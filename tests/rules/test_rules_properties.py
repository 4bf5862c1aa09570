"""Property tests over arbitrary valid histories: builders are total, pure and deterministic."""

from __future__ import annotations

import copy
import json

from anthropic.types import MessageParam
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter
from rules_helpers import check_shape, jpeg_url, png_url

from chatkeep.constants import PAGE_CONTEXT_PREFIX
from chatkeep.entries import validate_entry
from chatkeep.rules.images import prepare_history_for_model, stamp_images_seen
from chatkeep.rules.wire import STYLES, build_request, serialize

IMAGES = [png_url((4 + i, 3), noise=True, seed=i) for i in range(4)] + [
    jpeg_url((5, 5 + i), noise=True, seed=10 + i) for i in range(4)
]


def b64(url: str) -> str:
    return url.split(",", 1)[1]


text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
attach_text = st.builds(
    lambda t, body, n: f"{PAGE_CONTEXT_PREFIX}\nURL: https://e.com\nTitle: {t}\n---\n\n{body * n}",
    text,
    text,
    st.integers(0, 400),
)
image_part = st.sampled_from(IMAGES).flatmap(
    lambda u: st.sampled_from(
        [{"type": "image_url", "image_url": {"url": u}}, {"type": "image_url", "image_url": u}]
    )
)
text_part = st.builds(
    lambda t, k: {"type": k, "text": t}, text | attach_text, st.sampled_from(["text", "input_text"])
)
content = text | attach_text | st.lists(st.one_of(text_part, image_part), max_size=5)


@st.composite
def entries(draw):
    entry = {"role": draw(st.sampled_from(["user", "assistant"])), "content": draw(content)}
    for key, strat in (
        ("imagesSeen", st.booleans()),
        ("attachId", st.uuids().map(lambda u: u.hex)),
        ("videoSrc", st.just({"platform": "youtube", "url": "https://youtu.be/x"})),
        ("summarized", st.booleans()),
    ):
        if draw(st.booleans()):
            entry[key] = draw(strat)
    validate_entry(entry)
    return entry


histories = st.lists(entries(), max_size=12)
user_entries = st.builds(
    lambda t, imgs: (
        {"role": "user", "content": [{"type": "text", "text": t}, *imgs]}
        if imgs
        else {"role": "user", "content": t}
    ),
    text,
    st.lists(image_part, max_size=2),
)

SHAPES = {
    "chat": ("messages", TypeAdapter(list[ChatCompletionMessageParam])),
    "responses": ("input", TypeAdapter(ResponseInputParam)),
    "anthropic": ("messages", TypeAdapter(list[MessageParam])),
}

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _build(style, history, user_entry, **kw):
    return build_request(
        style,
        history,
        user_entry=user_entry,
        system_prompt="s",
        model="m",
        base_url="https://h",
        **kw,
    )


@SETTINGS
@given(histories, user_entries)
def test_builders_total_pure_deterministic(history, user_entry):
    """No builder raises; SDK shapes hold; inputs unchanged; builds byte-identical; no flag."""
    before = copy.deepcopy((history, user_entry))
    for style in STYLES:
        body = _build(style, history, user_entry).body
        key, adapter = SHAPES[style]
        check_shape(adapter, body[key])
        a = serialize(body)
        b = serialize(_build(style, history, user_entry).body)
        assert a == b
        assert "imagesSeen" not in _keys(json.loads(a))  # the flag never goes out (as a key;
        # the user may well type the word)
    assert (history, user_entry) == before


def _keys(value) -> set[str]:
    """Every mapping key anywhere in a JSON value."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.update(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


@SETTINGS
@given(histories, user_entries)
def test_seen_pixels_never_sent(history, user_entry):
    """After stamping, no stored image's base64 appears in any request."""
    stamped = stamp_images_seen(history) or history
    for style in STYLES:
        raw = serialize(_build(style, stamped, user_entry).body).decode()
        for url in IMAGES:
            if b64(url) in raw:
                # Only the new turn's pasted images may carry pixels.
                assert url in str(user_entry)


@SETTINGS
@given(histories, user_entries)
def test_agent_turn_request_total(history, user_entry):
    """The responses builder with previous_response_id never raises and sends one message."""
    body = _build("responses", history, user_entry, previous_response_id="r").body
    assert len(body["input"]) == 1 and b"imagesSeen" not in serialize(body)


@SETTINGS
@given(histories)
def test_prepare_identity_and_purity(history):
    """prepare returns the input when no entry has the flag; never mutates; no flag survives."""
    before = copy.deepcopy(history)
    out = prepare_history_for_model(history)
    assert history == before
    assert all("imagesSeen" not in e for e in out)
    if not any("imagesSeen" in e for e in history):
        assert out is history
    for old, new in zip(history, out, strict=True):
        if "imagesSeen" not in old:
            assert new is old
