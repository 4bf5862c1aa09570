"""The cache-economy replay: chatkeep's planned marks against naive resend and the floor."""

from __future__ import annotations

from bench.cache_economy import price, ratios, replay, text_attach_workload


def test_short_text_attach_session_is_near_the_floor():
    """On 22 turns with three attachments chatkeep bills within 1.15x of the floor under both
    caching rules, below naive, and never sends more than four marks."""
    replayed = replay("text+attach", steps=text_attach_workload(turns=22))
    for blocks in replayed["requests"][("chatkeep", "anthropic")]:
        assert sum(b.marked for b in blocks) <= 4
    r = ratios(price(replayed))
    assert r["chatkeep/floor"]["openai"] <= 1.15
    assert r["chatkeep/floor"]["anthropic"] <= 1.15
    assert r["chatkeep"]["anthropic"] < r["naive"]["anthropic"] == 1.0
    assert r["chatkeep"]["anthropic"] < r["end-mark"]["anthropic"]
