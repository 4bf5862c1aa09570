"""A stream that ends cleanly without the provider's end marker is interrupted (SPEC §7.2),
through the real SDKs against the loopback server, in all three API styles."""

from __future__ import annotations

import pytest
from provider_bodies import STYLES, body_for

from chatkeep.errors import ProviderError
from chatkeep.providers import Done, TextDelta, is_transient, stream, stream_with_retries
from support.provider_server import Close, Text

WORDS = Text("one two three four five six seven")


@pytest.mark.parametrize("style", STYLES)
def test_clean_close_after_text_is_a_cut_short_reply(style, provider_server, make_card):
    """Three chunks then a clean end (no finish_reason / response.completed / message_stop):
    the stream ends with Done(interrupted, cut_short) holding exactly the text that came."""
    provider_server.queue(Close(after_chunks=3, text=WORDS))
    events = list(stream(make_card(style), body_for(style)))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    done = events[-1]
    assert isinstance(done, Done)
    assert deltas == ["one ", "two ", "three "]
    assert done.text == "one two three "
    assert done.interrupted is True and done.cut_short is True
    assert done.finish_reason is None


@pytest.mark.parametrize("style", STYLES)
def test_whole_reply_is_not_cut_short(style, provider_server, make_card):
    """A reply with its end marker stays complete (neither interrupted nor cut short)."""
    provider_server.queue(WORDS)
    done = list(stream(make_card(style), body_for(style)))[-1]
    assert done.text == WORDS.text and not done.interrupted and not done.cut_short


@pytest.mark.parametrize("style", STYLES)
def test_clean_close_before_any_text_is_retried(style, provider_server, make_card):
    """A clean end before any text is a transient error, so the retry asks again."""
    provider_server.queue(Close(after_chunks=0), Close(after_chunks=0), WORDS)
    card = make_card(style)
    with pytest.raises(ProviderError) as info:
        list(stream(card, body_for(style)))
    assert is_transient(info.value) and "without" in info.value.message
    events = list(stream_with_retries(card, body_for(style), sleep=lambda s: None))
    assert events[-1].text == WORDS.text and len(provider_server.requests) == 3
