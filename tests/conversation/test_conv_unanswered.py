"""A failed question left behind by a different one (SPEC §3.5): kept, marked, never sent."""

from __future__ import annotations

import json

import pytest
from conv_helpers import untimed, use_provider

import chatkeep
from chatkeep.entries import mark_unanswered, without_unanswered
from factories import attachment
from support.provider_server import HttpError, Text

BOOM = HttpError(500, {"error": {"message": "boom", "type": "server_error"}})


def _fail(chat, text: str) -> None:
    chat.retries = 0
    with pytest.raises(chatkeep.ProviderError):
        chat.send(text)


def test_a_different_question_marks_the_failed_one_and_leaves_it_out(chat, provider_server):
    """The failed question stays, marked ``unanswered``; the next request and every later one
    carry the new question only, never the failed one (one bubble per send)."""
    provider_server.queue(BOOM)
    _fail(chat, "the failed question")
    provider_server.queue(Text("answer one"), Text("answer two"))
    chat.send("a different question")
    chat.send("and another")
    history = untimed(chat.store.history.read())
    assert history == [
        {"role": "user", "content": "the failed question", "unanswered": True},
        {"role": "user", "content": "a different question"},
        {"role": "assistant", "content": "answer one", "provider": history[2]["provider"]}
        | {"usage": history[2]["usage"]},
        {"role": "user", "content": "and another"},
        {"role": "assistant", "content": "answer two", "provider": history[4]["provider"]}
        | {"usage": history[4]["usage"]},
    ]
    for recorded in provider_server.requests[1:]:
        assert "the failed question" not in json.dumps(recorded.body)
    assert "a different question" in json.dumps(provider_server.requests[2].body)


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_every_style_leaves_the_marked_question_out(lite_chat, provider_server, style):
    """Each wire builder gets the history without the marked question (roles still alternate
    for Anthropic: no merged user message holds it)."""
    use_provider(lite_chat.store, provider_server, style=style)
    provider_server.queue(BOOM)
    _fail(lite_chat, "lost question")
    provider_server.queue(Text("ok"))
    lite_chat.send("new question")
    body = provider_server.requests[-1].body
    assert "lost question" not in json.dumps(body)
    assert "new question" in json.dumps(body)


def test_attachments_after_the_failed_question_stay_in_the_request(lite_chat, provider_server):
    """Only the question is left out: a page attached after it still goes with the new one."""
    provider_server.queue(BOOM)
    _fail(lite_chat, "first try")
    lite_chat.store.history.append(attachment("the attached page body"))
    provider_server.queue(Text("read it"))
    lite_chat.send("what does the page say?")
    sent = json.dumps(provider_server.requests[-1].body)
    assert "the attached page body" in sent and "first try" not in sent
    roles = [e["role"] for e in lite_chat.store.history.read()]
    assert roles == ["user", "user", "user", "assistant"]
    assert lite_chat.store.history.read()[0]["unanswered"] is True


def test_the_server_transcript_path_leaves_it_out_and_keeps_its_chain(lite_chat, provider_server):
    """With a server-held transcript (the TURN_STEPS path), the failed question is neither in
    the agent turn nor a reason to resend the whole transcript."""
    use_provider(lite_chat.store, provider_server, style="responses", serverTranscript=True)
    provider_server.queue(Text("a1", response_id="resp_1"))
    lite_chat.send("q1")
    provider_server.queue(BOOM)
    _fail(lite_chat, "failed q2")
    provider_server.queue(Text("a3", response_id="resp_3"))
    lite_chat.send("q3")
    body = provider_server.requests[-1].body
    assert body["previous_response_id"] == "resp_1"
    assert "failed q2" not in json.dumps(body) and "q3" in json.dumps(body)


def test_same_text_is_still_a_retry_and_regenerate_still_answers(lite_chat, provider_server):
    """Sending the failed text again reuses the entry (no mark); regenerate after a mark answers
    the new question, not the marked one."""
    provider_server.queue(BOOM)
    _fail(lite_chat, "retry me")
    provider_server.queue(Text("answered"))
    lite_chat.send("retry me")
    assert "unanswered" not in lite_chat.store.history.read()[0]
    provider_server.queue(BOOM)
    _fail(lite_chat, "second failure")
    provider_server.queue(BOOM)
    _fail(lite_chat, "third, different")
    provider_server.queue(Text("regenerated"))
    lite_chat.regenerate()
    history = lite_chat.store.history.read()
    assert [(e["content"], e.get("unanswered")) for e in history] == [
        ("retry me", None),
        ("answered", None),
        ("second failure", True),
        ("third, different", None),
        ("regenerated", None),
    ]


def test_the_preview_shows_what_the_next_send_leaves_out(lite_chat, provider_server):
    """The request preview of a different draft leaves the failed question out (row
    ``unanswered``); a draft with the failed text is its retry and sends it."""
    provider_server.queue(BOOM)
    _fail(lite_chat, "failed one")
    store = lite_chat.store
    other = chatkeep.preview_request(store, "something else")
    assert "failed one" not in json.dumps(other["body"])
    assert other["entries"][0]["sent"] == "unanswered"
    same = chatkeep.preview_request(store, "failed one")
    assert json.dumps(same["body"]).count("failed one") == 1
    assert store.history.read()[0].get("unanswered") is None  # a preview writes nothing


def test_mark_rules_are_pure():
    """``mark_unanswered`` marks only a last question with no reply after it and returns its
    input when there is nothing to mark; ``without_unanswered`` returns its input when none."""
    answered = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    assert mark_unanswered(answered) is answered
    assert without_unanswered(answered) is answered
    pending = [*answered, {"role": "user", "content": "lost"}, attachment("page")]
    marked = mark_unanswered(pending)
    assert marked is not pending and pending[2] == {"role": "user", "content": "lost"}
    assert marked[2]["unanswered"] is True
    assert mark_unanswered(marked) is marked
    assert without_unanswered(marked) == [*answered, marked[3]]
    with pytest.raises(chatkeep.InvalidEntry):
        chatkeep.validate_entry({"role": "user", "content": "x", "unanswered": "yes"})
