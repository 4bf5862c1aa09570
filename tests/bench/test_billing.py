"""The billing model of bench/billing.py: block reading and the three caching rules."""

from __future__ import annotations

import pytest
from bench.billing import Block, bill_anthropic, bill_floor, bill_no_cache, bill_openai, blocks_of


def _req(*sizes, marks=()):
    """Blocks with keys 0..n-1 and the given token sizes; ``marks`` are marked positions."""
    return [Block(k, t, k in marks) for k, t in enumerate(sizes)]


def test_blocks_of_chat_and_anthropic_bodies():
    """System and every content block become blocks; cache marks are read, not keyed."""
    chat = {
        "messages": [{"role": "system", "content": "x" * 40}, {"role": "user", "content": "hi"}]
    }
    assert [b.tokens for b in blocks_of(chat, "chat")] == [10, 1]
    marked = {
        "system": [{"type": "text", "text": "s" * 8, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }
    plain = {
        "system": [{"type": "text", "text": "s" * 8}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }
    a, b = blocks_of(marked, "anthropic"), blocks_of(plain, "anthropic")
    assert [x.marked for x in a] == [True, False] and [x.key for x in a] == [x.key for x in b]


def test_no_cache_bills_every_token():
    """Without caching the bill is the token count."""
    assert bill_no_cache([_req(500, 700), _req(500, 700, 100)])["billed"] == 2500


def test_openai_reads_the_common_prefix_in_128_steps():
    """A repeated prefix ≥ 1,024 tokens is read at the cached factor, rounded down to 128."""
    first, second = _req(1100, 50), _req(1100, 50, 300)
    bill = bill_openai([first, second], cached_factor=0.1)
    assert bill["read"] == 1024  # 1,150 shared tokens → 8 × 128
    assert bill["billed"] == pytest.approx(1150 + (1450 - 1024) + 1024 * 0.1)


def test_openai_short_prefix_and_expiry_are_not_cached():
    """Below 1,024 shared tokens, or after the TTL, nothing is read from cache."""
    assert bill_openai([_req(1000), _req(1000, 10)])["read"] == 0
    assert bill_openai([_req(2000), _req(2000, 10)], ttl=30, interval=60)["read"] == 0


def test_anthropic_reads_only_through_marks():
    """Without a mark nothing is cached; a mark writes at 1.25 and the next request reads."""
    assert bill_anthropic([_req(2000, 10), _req(2000, 10, 5)])["read"] == 0
    bill = bill_anthropic([_req(2000, 10, marks={1}), _req(2000, 10, 5, marks={2})])
    assert bill["read"] == 2010 and bill["written"] == 2010 + 5
    assert bill["billed"] == pytest.approx(2010 * 1.25 + 2010 * 0.1 + 5 * 1.25)


def test_anthropic_look_back_is_twenty_blocks():
    """A mark finds a cached prefix up to 20 blocks back, not 21."""
    base = [2000] + [1] * 25
    first = _req(*base, marks={0})
    near = _req(*([2000] + [7] * 20), marks={20})  # block 0 is 20 blocks back
    far = _req(*([2000] + [7] * 21), marks={21})  # 21 blocks back
    assert bill_anthropic([first, near])["read"] == 2000
    assert bill_anthropic([first, far])["read"] == 0


def test_anthropic_min_length_and_ttl():
    """Prefixes under 1,024 tokens are never cached; entries expire after the TTL unless hit."""
    assert bill_anthropic([_req(500, marks={0}), _req(500, 1, marks={1})])["read"] == 0
    reqs = [_req(2000, marks={0})] * 3
    assert bill_anthropic(reqs, ttl=90, interval=60)["read"] == 4000  # refreshed on each hit
    assert bill_anthropic(reqs[:1] + reqs[:1], ttl=30, interval=60)["read"] == 0


def test_floor_writes_once_and_reads_repeats():
    """Distinct blocks at the write price once; repeats at the read price above 1,024 tokens."""
    bill = bill_floor([_req(2000), _req(2000, 10)], write_factor=1.25, read_factor=0.1)
    assert bill["billed"] == pytest.approx(2000 * 1.25 + 10 * 1.25 + 2000 * 0.1)
    small = bill_floor([_req(100), _req(100, 10)], write_factor=1.25)
    assert small["billed"] == pytest.approx(100 * 1.25 + 10 * 1.25 + 100)
