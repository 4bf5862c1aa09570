"""The cache-hit share in front of the user (SPEC §6.4): a turn whose share falls sharply below
the turns before it comes with one notice saying so, and why when chatkeep knows — a model
change, a pause longer than the provider keeps its cache, a rewrite by chatkeep's own rules.
Real sends against the loopback provider, which reports cached tokens as each API does."""

from __future__ import annotations

import pytest
from conv_helpers import use_provider

from chatkeep.rules.cache_hits import hit_drop_notice, hit_share, recent_hits
from chatkeep.rules.cache_rules import find_rule
from factories import png_data_url
from support.provider_server import Text

STYLES = ("chat", "responses", "anthropic")


def _hits(cached: int, total: int = 6000) -> Text:
    return Text("ok", prompt_tokens=total, cached_tokens=cached)


def _send(store, text: str) -> list[str]:
    notes: list[str] = []
    store.chat.send(text, on_notice=notes.append)
    return [n for n in notes if "cache hits fell" in n]


@pytest.mark.parametrize("style", STYLES)
def test_steady_hits_say_nothing_and_a_sharp_fall_is_told_once(
    style, sqlite_store, provider_server, sleeps
):
    use_provider(sqlite_store, provider_server, style=style)
    sqlite_store.chat.sleep = sleeps
    provider_server.queue(_hits(0), _hits(5000), _hits(5200), _hits(5400), _hits(300))
    said = [_send(sqlite_store, f"question {k}") for k in range(5)]
    assert said[:4] == [[], [], [], []]
    assert len(said[4]) == 1
    note = said[4][0]
    assert "fell to 5%" in note and "from 87%" in note  # (5000 + 5200 + 5400) / 3 of 6000
    assert "may have been rewritten" in note
    usage = sqlite_store.history.read()[-1]["usage"]
    assert hit_share(usage) == pytest.approx(300 / 6000)


def test_a_model_change_is_named_as_the_reason(sqlite_store, provider_server, sleeps):
    use_provider(sqlite_store, provider_server)
    sqlite_store.chat.sleep = sleeps
    provider_server.queue(_hits(5000), _hits(5000), _hits(0))
    _send(sqlite_store, "one")
    _send(sqlite_store, "two")
    use_provider(sqlite_store, provider_server, model="a-bigger-model")
    (note,) = _send(sqlite_store, "three")
    assert "model changed (chat-model → a-bigger-model)" in note


def test_a_long_pause_is_named_as_the_reason(sqlite_store, provider_server, sleeps):
    use_provider(sqlite_store, provider_server)
    sqlite_store.chat.sleep = sleeps
    provider_server.queue(_hits(5000), _hits(5000), _hits(0))
    _send(sqlite_store, "one")
    _send(sqlite_store, "two")
    # the last reply was twenty minutes ago
    sqlite_store.history.mutate(
        lambda h: [*h[:-1], {**h[-1], "createdAt": h[-1]["createdAt"] - 20 * 60_000}]
    )
    (note,) = _send(sqlite_store, "three")
    assert "paused for 20 minutes" in note


def test_small_requests_and_missing_usage_never_warn() -> None:
    before = {"share": 0.9, "model": "m", "at": None}
    small = {"input": 500, "cachedRead": 0, "cacheWrite": 0, "output": 5}
    assert hit_drop_notice(before, small, model="m", now_ms=0) is None
    assert hit_drop_notice(before, None, model="m", now_ms=0) is None
    assert hit_drop_notice(None, {**small, "input": 5000}, model="m", now_ms=0) is None
    low = {"share": 0.3, "model": "m", "at": None}
    assert hit_drop_notice(low, {**small, "input": 5000}, model="m", now_ms=0) is None
    told = hit_drop_notice(before, {**small, "input": 5000}, model="m", now_ms=0)
    assert told is not None and "fell to 0%" in told
    assert recent_hits([{"role": "user", "content": "x"}]) is None


def test_a_rewrite_by_chatkeep_is_named_as_the_reason(sqlite_store, provider_server, sleeps):
    """A screenshot turn, then a turn that sends it as its label: chatkeep knows it rewrote
    earlier messages, and the notice says so."""
    use_provider(sqlite_store, provider_server, style="anthropic")
    sqlite_store.chat.sleep = sleeps
    provider_server.queue(_hits(5000), _hits(5000), _hits(5000), _hits(200))
    _send(sqlite_store, "one")
    _send(sqlite_store, "two")
    sqlite_store.chat.send("look", images=[png_data_url(320, 200)])
    (note,) = _send(sqlite_store, "and now?")
    assert "chatkeep rewrote earlier messages" in note and "labels" in note


def test_the_cache_lifetime_follows_the_models_rules_and_pace():
    """Questions 12 minutes apart on a Claude model keep a one-hour cache: a 20-minute pause
    is no reason, a 90-minute one is, and the notice names the hour."""
    rule = find_rule("anthropic", "https://api.anthropic.com", "claude-sonnet-5")
    t0 = 1_700_000_000_000
    history = []
    for k in range(4):
        history += [
            {"role": "user", "content": f"q{k}", "createdAt": t0 + k * 12 * 60_000},
            {
                "role": "assistant",
                "content": "a",
                "createdAt": t0 + k * 12 * 60_000 + 1000,
                "usage": {"input": 6000, "cachedRead": 5000, "cacheWrite": 0, "output": 5},
                "provider": {"name": "c", "model": "claude-sonnet-5"},
            },
        ]
    before = recent_hits(history, {"role": "user", "content": "next"}, rule)
    assert before is not None and before["lifeMs"] == 3_600_000 and before["rewrite"] is None
    fell = {"input": 6000, "cachedRead": 0, "cacheWrite": 6000, "output": 5}
    last = history[-1]["createdAt"]
    soon = hit_drop_notice(before, fell, model="claude-sonnet-5", now_ms=last + 20 * 60_000)
    assert soon is not None and "paused" not in soon
    late = hit_drop_notice(before, fell, model="claude-sonnet-5", now_ms=last + 90 * 60_000)
    assert late is not None and "paused for 90 minutes" in late and "about 60 minutes" in late
