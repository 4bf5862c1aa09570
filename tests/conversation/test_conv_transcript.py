"""OpenAI Responses with a server-side transcript (SPEC §6.3): only new turns are sent."""

from __future__ import annotations

import pytest
from conv_helpers import use_provider

from chatkeep import ProviderConfigError
from chatkeep.providers import validate_card
from factories import attachment, png_data_url
from support.provider_server import Text


@pytest.fixture
def agent(lite_chat, provider_server):
    use_provider(lite_chat.store, provider_server, style="responses", serverTranscript=True)
    return lite_chat


def test_later_turns_send_only_the_new_turn_with_previous_response_id(agent, provider_server):
    """Turn 1 sends the transcript; turn 2 sends only its question, chained to turn 1's response."""
    provider_server.queue(
        Text("first", response_id="resp_one"), Text("second", response_id="resp_two")
    )
    agent.send("q1 " + "x" * 500)
    agent.send("q2")
    first, second = (r.body for r in provider_server.requests)
    assert "previous_response_id" not in first
    assert second["previous_response_id"] == "resp_one"
    assert "x" * 500 not in str(second["input"]) and "q2" in str(second["input"])
    assert second["instructions"] == first["instructions"]


def test_attachments_after_the_reply_ride_along_in_the_agent_turn(agent, provider_server):
    """Pages attached after the last reply are sent with the next question (text and images)."""
    provider_server.queue(Text("ok", response_id="resp_a"), Text("read it", response_id="resp_b"))
    agent.send("hello")
    figure = png_data_url(30, 30, noise=True)
    page = attachment("the page body")
    page["content"] = [
        {"type": "text", "text": page["content"]},
        {"type": "image_url", "image_url": {"url": figure}},
    ]
    agent.store.history.append(page)
    agent.send("what does the page say?")
    body = provider_server.requests[1].body
    assert body["previous_response_id"] == "resp_a"
    sent = str(body["input"])
    assert "the page body" in sent and "what does the page say?" in sent and figure in sent
    assert "hello" not in sent


def test_a_changed_history_sends_the_full_transcript_again(agent, provider_server):
    """After edit & resend the stored conversation no longer matches the server's: no chaining."""
    provider_server.queue(
        Text("a1", response_id="r1"), Text("a2", response_id="r2"), Text("a2b", response_id="r3")
    )
    agent.send("q1")
    agent.send("q2")
    agent.edit_and_resend(2, "q2, edited")
    third = provider_server.requests[2].body
    assert "previous_response_id" not in third  # the server's transcript ends with q2/a2
    assert "q2, edited" in str(third["input"]) and "q1" in str(third["input"])
    provider_server.queue(Text("a3", response_id="r5"))
    agent.send("q3")
    assert provider_server.requests[3].body["previous_response_id"] == "r3"  # chained again
    agent.store.history.truncate_from(0)
    agent.store.history.append({"role": "user", "content": "new topic"})
    agent.store.history.append({"role": "assistant", "content": "sure"})
    provider_server.queue(Text("fresh", response_id="r4"))
    agent.send("continue")
    fourth = provider_server.requests[4].body
    assert "previous_response_id" not in fourth and "new topic" in str(fourth["input"])


def test_server_transcript_needs_the_responses_style():
    """A chat card asking for a server transcript is refused with a hint."""
    with pytest.raises(ProviderConfigError) as info:
        validate_card(
            {
                "style": "chat",
                "baseUrl": "http://127.0.0.1/v1",
                "model": "m",
                "serverTranscript": True,
            }
        )
    assert info.value.hint
