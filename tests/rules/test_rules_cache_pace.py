"""The cache lifetime from the pace (the send's own gap, the profile's earlier questions) and
Anthropic's planned marks on chat requests to Claude through OpenRouter."""

from __future__ import annotations

import pytest
from rules_helpers import assistant, attachment, png_url, user

from chatkeep.rules.cache import choose_ttl, remember_question
from chatkeep.rules.cache_hits import recent_hits
from chatkeep.rules.cache_rules import find_rule
from chatkeep.rules.images import stamp_images_seen
from chatkeep.rules.wire import build_request

MINUTE = 60_000
T0 = 1_700_000_000_000
CLAUDE = find_rule("anthropic", "https://api.anthropic.com", "claude-sonnet-5")
OPENROUTER = "https://openrouter.ai/api/v1"
SHOT = png_url((400, 300), noise=True, seed=9)
BIG = "word " * 2400


def _q(text: str, at: int) -> dict:
    return {**user(text), "createdAt": at}


def test_the_pause_that_just_ended_counts():
    """One question so far: the second, sent 12 minutes later, already asks for the hour (the
    first entry ran out unread); a minute later it keeps the default."""
    history = [_q("one", T0), assistant("a")]
    assert choose_ttl(history, CLAUDE) is None  # no gap known without the send's own time
    assert choose_ttl(history, CLAUDE, _q("two", T0 + 12 * MINUTE)) == "1h"
    assert choose_ttl(history, CLAUDE, _q("two", T0 + MINUTE)) is None
    assert choose_ttl(history, CLAUDE, _q("two", T0 + 3 * 60 * MINUTE)) is None  # past the hour


@pytest.mark.parametrize(("gap", "ttl"), [(10, "1h"), (1, None), (90, None)])
def test_a_first_turn_reads_the_profiles_earlier_pace(gap, ttl):
    """A new conversation's first question: the profile's earlier questions (a day before,
    ``gap`` minutes apart) decide; the day-long pause between conversations does not."""
    day = 24 * 60 * MINUTE
    earlier = [T0 - day + k * gap * MINUTE for k in range(5)]
    assert choose_ttl([], CLAUDE, _q("first", T0), earlier) == ttl
    # questions of this conversation in the record are not counted twice
    own = [_q("one", T0), assistant("a")]
    later = [*earlier, T0, T0 + 11 * MINUTE]
    assert choose_ttl(own, CLAUDE, _q("two", T0 + 11 * MINUTE), later) == (
        "1h" if gap != 90 else None
    )
    # a rule with one lifetime has nothing to choose
    gpt = find_rule("chat", "https://api.openai.com/v1", "gpt-5.6")
    assert choose_ttl([], gpt, _q("first", T0), earlier) is None


def test_the_pace_record_keeps_the_last_questions():
    """Five times at most, ascending; a bad record starts over; a time not after the last
    one (a clock step back) replaces the later ones."""
    record: object = None
    for k in range(8):
        record = remember_question(record, T0 + k * MINUTE)
    assert record == [T0 + k * MINUTE for k in range(3, 8)]
    assert remember_question({"bad": 1}, T0) == [T0]
    assert remember_question([T0, "x", T0 + 5], T0 + 9) == [T0, T0 + 5, T0 + 9]
    assert remember_question([T0, T0 + 10], T0 + 5) == [T0, T0 + 5]


# -- Claude through OpenRouter: cache_control on text parts -----------------------------------
def _turns():
    return [
        ([], "hello there", []),
        ([attachment(BIG, attach_id="p1")], "summarise the page", []),
        ([], "what about this?", [SHOT]),
        ([], "and the second point", []),
        ([attachment(BIG + " more", title="B", attach_id="p2")], "compare", []),
        ([], "go on", []),
        ([], "a screenshot", [SHOT]),
        ([], "thanks", []),
    ]


def _bodies(base: str, model: str, minutes: float = 12.0):
    rule = find_rule("chat", base, model)
    history: list = []
    for n, (attached, text, shots) in enumerate(_turns()):
        history = [*history, *attached]
        question = {**user(text, shots), "createdAt": T0 + int(n * minutes * MINUTE)}
        yield build_request(
            "chat",
            history,
            user_entry=question,
            system_prompt="Be brief.",
            model=model,
            base_url=base,
            cache_rule=rule,
        ).body
        history = [*history, question, assistant(f"answer {n} " * 200)]
        history = stamp_images_seen(history) or history


def _parts(body):
    """``(key, part, marked)`` of every content part, the system message's first."""
    out = []
    for message in body["messages"]:
        content = message["content"]
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            bare = {k: v for k, v in part.items() if k != "cache_control"}
            out.append((repr((message["role"], bare)), part, "cache_control" in part))
    return out


def test_claude_through_openrouter_carries_planned_cache_control():
    """Every request: at most four marks (system included), only on text parts, all asking
    for the hour at a 12-minute pace from the second question on; each request after the
    first marks a block where the request before it wrote an entry over the same prefix
    (an exact lookup, as on Anthropic's own API)."""
    previous = None
    for n, body in enumerate(_bodies(OPENROUTER, "anthropic/claude-sonnet-5")):
        parts = _parts(body)
        marked = [k for k, (_, _, m) in enumerate(parts) if m]
        assert 2 <= len(marked) <= 4
        assert all(parts[k][1]["type"] == "text" for k in marked)
        ttls = {parts[k][1]["cache_control"].get("ttl") for k in marked}
        assert {parts[k][1]["cache_control"]["type"] for k in marked} == {"ephemeral"}
        assert ttls == ({None} if n == 0 else {"1h"})
        if previous is not None:
            reads = [
                k
                for k in marked
                if k < len(previous)
                and previous[k][2]
                and [p[0] for p in parts[: k + 1]] == [p[0] for p in previous[: k + 1]]
            ]
            assert reads, n
        previous = parts


@pytest.mark.parametrize(
    ("base", "model"),
    [
        (OPENROUTER, "meta-llama/llama-4-maverick"),  # no vendor row that marks
        ("http://127.0.0.1:8080/v1", "claude-sonnet-5"),  # a proxy not known to pass marks on
        (OPENROUTER, "openai/gpt-5.5"),
    ],
)
def test_no_cache_control_where_it_is_not_passed_on(base, model):
    for body in _bodies(base, model):
        assert not any(m for _, _, m in _parts(body))
        assert all(isinstance(m["content"], str) for m in body["messages"][:1])


def test_the_hit_notice_knows_the_lifetime_the_pace_gave():
    """A first turn that asked for the hour from the profile's record: a pause of 20 minutes
    after it is within the cache's life, so the drop notice does not blame the pause."""
    usage = {"input": 5000, "cachedRead": 4000, "cacheWrite": 0, "output": 10}
    reply = {**assistant("a"), "usage": usage, "createdAt": T0 + MINUTE}
    history = [_q("one", T0), reply]
    earlier = [T0 - 24 * 60 * MINUTE + k * 10 * MINUTE for k in range(5)]
    nxt = _q("two", T0 + 21 * MINUTE)
    assert recent_hits(history, nxt, CLAUDE, earlier)["lifeMs"] == 3600 * 1000
    assert recent_hits(history, nxt, CLAUDE)["lifeMs"] == 300 * 1000
