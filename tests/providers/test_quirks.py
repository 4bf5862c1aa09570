"""Server quirks met in the wild, over real HTTP: missing chunk index, the other answer mode."""

from __future__ import annotations

import pytest
from provider_bodies import STYLES, body_for

from chatkeep.errors import ProviderError
from chatkeep.providers import complete
from support.provider_server import HttpError, Text


def test_chat_chunks_without_index_read_as_index_zero(provider_server, make_card):
    """Stream chunks that leave out choices[].index still make the reply (index 0)."""
    provider_server.queue(Text("no index in any chunk", omit_index=True))
    done = complete(make_card("chat"), body_for("chat"))
    assert done.text == "no index in any chunk"


@pytest.mark.parametrize("style", STYLES)
def test_stream_where_a_whole_answer_was_asked(style, provider_server, make_card):
    """A server that streams although stream:false was asked: the events are read."""
    provider_server.queue(Text("streamed anyway", prompt_tokens=77, force_stream=True))
    done = complete(make_card(style, stream=False), body_for(style))
    assert provider_server.requests[0].body["stream"] is False
    assert done.text == "streamed anyway" and not done.interrupted
    if style != "chat":  # chat servers send usage in a stream only when asked
        assert done.usage["input"] == 77


@pytest.mark.parametrize("style", STYLES)
def test_whole_answer_where_a_stream_was_asked(style, provider_server, make_card):
    """A server that answers a streamed call with one JSON object: the object is the reply."""
    provider_server.queue(Text("one JSON object", prompt_tokens=55, force_stream=False))
    done = complete(make_card(style), body_for(style))
    assert provider_server.requests[0].body["stream"] is True
    assert done.text == "one JSON object"
    assert done.usage["input"] == 55


def test_anthropic_json_error_to_a_streamed_call_says_what_happened(provider_server, make_card):
    """A plain-JSON error answering a streamed Anthropic call is the provider's own message."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    provider_server.queue(HttpError(200, body))
    with pytest.raises(ProviderError) as info:
        complete(make_card("anthropic"), body_for("anthropic"), retries=0)
    message = str(info.value)
    assert "Overloaded" in message and "instead of a stream" in message
    assert "could not reach" not in message
    assert info.value.code == "overloaded_error"
