"""Planned Anthropic cache breakpoints and the OpenAI prompt_cache_key (SPEC §6.3, §6.5)."""

from __future__ import annotations

import copy
import json

from anthropic.types.message_create_params import MessageCreateParamsStreaming
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from rules_helpers import assistant, attachment, check_shape, png_url, user
from test_rules_properties import entries

from chatkeep.rules.cache import (
    MAX_BREAKPOINTS,
    CachePlan,
    accepts_prompt_cache_key,
    place_breakpoints,
    plan_cache,
    prompt_cache_key,
)
from chatkeep.rules.images import stamp_images_seen
from chatkeep.rules.wire import build_request

BODY = TypeAdapter(MessageCreateParamsStreaming)
SHOT = png_url((32, 20), noise=True, seed=3)
BIG = "word " * 2000  # 10,000 chars: ages once three questions follow it


def _anthropic(history, question, system="Be brief."):
    return build_request(
        "anthropic",
        history,
        user_entry=question,
        system_prompt=system,
        model="m",
        base_url="https://api.anthropic.com",
    ).body


def _blocks(body):
    """Flat message blocks of a body, marks stripped, as comparable JSON strings."""
    out = []
    for message in body["messages"]:
        for block in message["content"]:
            bare = {k: v for k, v in block.items() if k != "cache_control"}
            out.append(json.dumps([message["role"], bare], sort_keys=True))
    return out


def _marks(body):
    flat = [b for m in body["messages"] for b in m["content"]]
    return [k for k, b in enumerate(flat) if "cache_control" in b]


def _mark_count(body):
    system = sum("cache_control" in b for b in body.get("system") or [])
    return system + len(_marks(body))


def _conversation():
    """Turns of a session with attachments that age, screenshots and plain questions."""
    return [
        ([], user("hello there")),
        ([attachment(BIG, attach_id="p1")], user("summarise the page")),
        ([], user("what about this?", [SHOT])),
        ([], user("and the second point")),
        ([attachment(BIG + "more", title="B", attach_id="p2", images=[SHOT])], user("compare")),
        ([], user("go on")),
        ([], user("a screenshot", [SHOT])),
        ([], user("thanks")),
        ([], user("one more")),
        ([], user("last question")),
    ]


def test_each_request_reads_everything_before_the_rewrite():
    """Replayed turns (labels, aging, an attachment that ages because a newer one arrives): the
    next request marks exactly the block before its first change, where the previous request
    put a mark, so the cache serves everything before the rewrite."""
    history: list = []
    previous = None
    checked = 0
    for n, (attachments, question) in enumerate(_conversation()):
        history = [*history, *attachments]
        body = _anthropic(history, question)
        assert _mark_count(body) <= MAX_BREAKPOINTS
        if previous is not None:
            old, new = _blocks(previous), _blocks(body)
            first = next(
                (k for k, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(old)
            )
            assert first > 0, f"turn {n}: the whole conversation was rewritten"
            assert first - 1 in _marks(previous), f"turn {n}: nothing written at {first - 1}"
            assert first - 1 in _marks(body), f"turn {n}: no read mark at {first - 1}"
            checked += 1
        previous = body
        history = [*history, question, assistant(f"answer {n} " * 30)]
        history = stamp_images_seen(history) or history
    assert checked == len(_conversation()) - 1


def test_plan_names_labels_and_aging():
    """keep = the earliest unseen image or next aging; read = what changed since last time."""
    shot_turn = [user("hi"), assistant("hello")]
    plan = plan_cache(shot_turn, user("look", [SHOT]))
    assert plan.keep == (2, 1) and plan.read == (1, 0)
    aging = [attachment(BIG), user("q1"), assistant("a"), user("q2"), assistant("b")]
    plan = plan_cache(aging, user("q3"))
    assert plan.keep is None  # the newest attachment never ages...
    assert plan.maybe == (0, 0)  # ...unless another one arrives
    older = [attachment(BIG), attachment("small", attach_id="a2"), user("q1"), assistant("a")]
    plan = plan_cache(older, user("q2"))
    assert plan.keep == (0, 0) and plan.maybe is None  # ages once q2 is answered
    assert plan_cache([], user("first")) == CachePlan(keep=None, read=None)


def test_plain_turn_marks_system_previous_end_and_end():
    """A text-only turn: system, end of the previous request, end — and nothing else."""
    body = _anthropic([user("q1"), assistant("a1")], user("q2"))
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert _marks(body) == [0, 2]


def test_marks_never_on_empty_text_blocks():
    """A mark meant for an empty text block moves to the block before it."""
    marks = place_breakpoints(
        [(0, 0), (1, 0), (2, 0)], CachePlan(keep=(2, 0)), empty=[False, False, True]
    )
    assert marks.blocks == (1,) and not marks.system


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    history=st.lists(entries(), max_size=8), question=entries(), system=st.sampled_from(["", "S"])
)
def test_marks_bounded_and_body_valid(history, question, system):
    """Any history: at most four marks, none on empty text, the body is the SDK's own type."""
    question = {**question, "role": "user"}
    frozen = copy.deepcopy(history)
    body = _anthropic(history, question, system)
    assert history == frozen
    assert _mark_count(body) <= MAX_BREAKPOINTS
    for message in body["messages"]:
        for block in message["content"]:
            if block["type"] == "text":
                assert block["text"]
    check_shape(BODY, body)


def test_prompt_cache_key_is_stable_and_content_free():
    """Same profile and session → same key; another session or profile → another key."""
    key = prompt_cache_key("default", "abc")
    assert key == prompt_cache_key("default", "abc") and key.startswith("ck-")
    assert len(key) <= 64
    assert key != prompt_cache_key("default", "abd")
    assert key != prompt_cache_key("work", "abc")


def test_prompt_cache_key_endpoints():
    """api.openai.com takes the key; other hosts only when the card opts in."""
    assert accepts_prompt_cache_key("https://api.openai.com/v1")
    assert not accepts_prompt_cache_key("http://localhost:11434/v1")
    assert accepts_prompt_cache_key("http://localhost:11434/v1", True)
    assert not accepts_prompt_cache_key("https://api.openai.com/v1", False)


def test_prompt_cache_key_in_openai_bodies_only():
    """build_request puts prompt_cache_key in chat and responses bodies, never Anthropic's."""
    for style in ("chat", "responses", "anthropic"):
        body = build_request(
            style,
            [],
            user_entry=user("q"),
            system_prompt="",
            model="m",
            base_url="https://h",
            prompt_cache_key="ck-1",
        ).body
        assert ("prompt_cache_key" in body) == (style != "anthropic")
