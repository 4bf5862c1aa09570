"""The per-provider billing bench: time-aware lifetimes, whole-unit hits, and a short replay."""

from __future__ import annotations

from bench.billing import Block, bill_anthropic, bill_floor, bill_units, blocks_of
from bench.cache_bill import price


def _req(*sizes, marks=(), ttl=300.0):
    return [Block(k, t, k in marks, ttl) for k, t in enumerate(sizes)]


def test_a_one_hour_mark_survives_a_ten_minute_pause_and_costs_twice():
    """Two requests ten minutes apart: a 5-minute entry is gone (written twice at 1.25×), a
    1-hour one is read (written once at 2×)."""
    times = [0.0, 600.0]
    short = bill_anthropic([_req(4000, marks=(0,)), _req(4000, 10, marks=(1,))], times=times)
    hour = [_req(4000, marks=(0,), ttl=3600.0), _req(4000, 10, marks=(1,), ttl=3600.0)]
    long = bill_anthropic(hour, times=times)
    assert short["read"] == 0 and short["billed"] == 4000 * 1.25 + 4010 * 1.25
    assert long["read"] == 4000 and long["billed"] == 4000 * 2 + 400 + 10 * 2


def test_the_floor_pays_the_lifetime_a_block_needs():
    """A block used again after ten minutes is paid at the 1-hour price; one used a minute
    later at the 5-minute price."""
    reqs = [_req(4000), _req(4000, 10)]
    lifetimes = [(300.0, 1.25), (3600.0, 2.0)]
    slow = bill_floor(reqs, times=[0.0, 600.0], lifetimes=lifetimes, read_factor=0.1)
    fast = bill_floor(reqs, times=[0.0, 60.0], lifetimes=lifetimes, read_factor=0.1)
    assert slow["billed"] == 4000 * 2 + 400 + 10 * 1.25
    assert fast["billed"] == 4000 * 1.25 + 400 + 10 * 1.25


def test_deepseek_hits_only_a_whole_earlier_input():
    """A request extending an earlier one reads it; one that changes its end reads nothing."""
    first, longer, changed = _req(500, 500), _req(500, 500, 50), [Block(0, 500), Block(9, 500)]
    assert bill_units([first, longer])["read"] == 1000
    assert bill_units([first, changed])["read"] == 0


def test_breakpoint_blocks_key_like_plain_ones():
    """A GPT-5.6 breakpoint on a text part keeps the block's key (the mark is not content) and
    says it lives 30 minutes."""
    plain = {"messages": [{"role": "user", "content": "hello"}]}
    marked = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "hello",
                        "prompt_cache_breakpoint": {"mode": "explicit"},
                    }
                ],
            }
        ]
    }
    (a,), (b,) = blocks_of(plain, "chat"), blocks_of(marked, "chat")
    assert a.key == b.key and b.marked and b.ttl == 1800.0


def test_slow_workload_asks_for_the_hour_and_beats_naive():
    """On the slow conversation under Claude's rules chatkeep's marks ask for the hour and its
    bill is a fraction of naive resend's (whose five-minute entries expire every turn)."""
    result = price("slow", "anthropic")
    assert result["row"]["chatkeep"] < 0.4 * result["row"]["naive"]
    assert result["row"]["read"] > 0.7


def test_a_known_pace_spares_the_first_turns_short_entry():
    """With the profile's earlier questions at the same pace, the slow conversation's first
    turn asks for the hour: its bill is within 1.10× of the floor and below the same
    conversation's in a profile that knows no pace (whose first entry runs out unread)."""
    known, first = price("slow", "anthropic")["row"], price("slow-first", "anthropic")["row"]
    assert known["ck/floor"] <= 1.10 < first["ck/floor"]
    assert known["chatkeep"] < first["chatkeep"]
