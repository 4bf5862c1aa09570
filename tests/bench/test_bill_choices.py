"""The two measured alternatives of bench.bill_choices: the first turn's lifetime, deferral."""

from __future__ import annotations

import pytest
from bench.bill_choices import (
    MARKINGS,
    break_even,
    defer,
    deferrals,
    first_turn,
    with_first_ttl,
)
from bench.billing import Block, bill_anthropic

from chatkeep.rules.cache_rules import find_rule


def test_the_price_table_break_even_of_a_first_hour():
    """Anthropic: 1.25× for 5 minutes, 2× for the hour — the hour pays above p = 0.375; a rule
    with one lifetime has nothing to choose."""
    claude = find_rule("anthropic", "https://api.anthropic.com", "claude-sonnet-5")
    assert break_even(claude) == pytest.approx(0.375)
    assert break_even(find_rule("chat", "https://api.openai.com/v1", "gpt-5.5")) is None


def test_only_the_first_request_asks_for_the_hour():
    reqs = [[Block(1, 2000, True)], [Block(1, 2000), Block(2, 10, True)]]
    out = with_first_ttl(reqs, 3600.0)
    assert out[0][0].ttl == 3600.0 and out[1] == reqs[1]


def test_a_deferred_aging_reads_the_page_until_the_next_break():
    """A page (8,000 tokens) ages on request 2 with 300 tokens after it: deferred to request 4,
    requests 2 and 3 send the page again (read at 0.1×) instead of rewriting the 300; the
    deferral costs more here."""
    page, stub, turn = Block(1, 8000), Block(9, 60), [Block(2, 300)]

    def req(head, k):
        tail = [Block(100 + i, 40) for i in range(k)]
        return [head, *turn, *tail[:-1], Block(tail[-1].key, 40, True)]

    reqs = [req(page, 1), req(page, 2), req(stub, 3), req(stub, 4), req(stub, 5)]
    times = [0.0, 60.0, 120.0, 180.0, 240.0]
    now = bill_anthropic(reqs, times=times)["billed"]
    for marking in MARKINGS:
        alt = defer(reqs, 2, 4, marking)
        assert alt is not None
        assert [b.key for b in alt[2][:3]] == [1, 2, 100] and alt[4] == reqs[4]
        assert all(sum(b.marked for b in r) <= 4 for r in alt)
        assert alt[2][3].marked  # where request 1 wrote: the deferred requests read it
        assert bill_anthropic(alt, times=times)["billed"] > now


def test_a_rewrite_with_nothing_after_it_has_nothing_to_defer():
    """The question's own image becomes its label on the next request: nothing after it."""
    reqs = [[Block(1, 10), Block(2, 1500, True)], [Block(1, 10), Block(3, 8), Block(4, 50, True)]]
    assert defer(reqs, 1, 2) is None


def test_slow_first_with_a_first_hour_meets_the_floor_target_and_nothing_defers_cheaper():
    """The real requests of `slow-first` under Claude: asking for the hour on the first turn
    would have brought it to its floor ratio with a known pace (`slow`); deferring either
    aging raises the bill."""
    first = first_turn("slow-first")
    known = first_turn("slow")
    assert first["first"] == "5m" and known["first"] == "1h"
    assert first["built"]["ck/floor"] > 1.10
    assert first["hour"]["ck/floor"] == pytest.approx(known["built"]["ck/floor"], abs=0.005)
    rows = deferrals("slow", "anthropic")["rewrites"]
    assert len(rows) == 2 and all(r["change"] is not None and r["change"] > 0 for r in rows)
