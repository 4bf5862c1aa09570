"""Hints that tell the user what actually went wrong: a web page instead of an API, a silent
server (the card's timeout, not retried), through the real SDKs over loopback HTTP."""

from __future__ import annotations

import time

import pytest
from provider_bodies import STYLES, body_for

from chatkeep.errors import ProviderConfigError, ProviderError
from chatkeep.providers import resolve_provider, stream_with_retries, validate_card
from support.provider_server import Page, Text


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("status", [200, 404, 500])
def test_web_page_says_the_base_url_is_not_an_llm_api(style, status, provider_server, make_card):
    """An HTML page (any status, streamed or not) is "not an LLM API" with a short, tag-free
    excerpt — never the whole page and never "the provider failed on its side"."""
    for streamed in (True, False):
        provider_server.queue(Page(status=status))
        card = make_card(style, stream=streamed)
        with pytest.raises(ProviderError) as info:
            list(stream_with_retries(card, body_for(style), sleep=lambda s: None))
        err = info.value
        assert "seems not to be an LLM API" in err.hint and card.base_url in err.hint
        assert "failed on its side" not in err.hint
        assert "Welcome to nginx!" in err.message and "<" not in err.message
        assert len(err.message) < 300
    assert len(provider_server.requests) == 2  # not retried


@pytest.mark.parametrize("style", STYLES)
def test_silent_server_fails_after_the_card_timeout_without_retrying(
    style, provider_server, make_card
):
    """A server that accepts the request and then says nothing fails after the card's timeout
    (here 1 s), once: a read timeout is not retried, and the hint names the timeout option."""
    provider_server.queue(Text("late", delay=4.0))
    card = make_card(style, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        list(stream_with_retries(card, body_for(style), sleep=lambda s: None))
    elapsed = time.monotonic() - started
    assert elapsed < 3.5 and len(provider_server.requests) == 1
    assert "sent nothing for 1 s" in info.value.message and "--timeout" in info.value.hint


def test_card_timeout_is_validated_and_resolved():
    """``timeout`` is seconds from 1 to 3600; a resolved card carries it (default 60 s)."""
    base = {"style": "chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}
    for bad in (0, -5, "60", True, float("nan"), 10_000):
        with pytest.raises(ProviderConfigError, match="timeout"):
            validate_card({**base, "timeout": bad}, name="x")
    settings = {"providers": {"a": {**base, "timeout": 15}, "b": base}, "activeProvider": "a"}
    assert resolve_provider(settings, env={}).timeout == 15.0
    assert resolve_provider(settings, "b", env={}).timeout == 60.0
