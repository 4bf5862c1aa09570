"""Reasoning ("thinking") is read apart from the answer in every API style, through the real
SDKs against the loopback server: Anthropic thinking blocks, Responses reasoning summaries, and
chat replies' leading ``<think>`` sections or ``reasoning_content`` / ``reasoning`` fields."""

from __future__ import annotations

import threading

import pytest
from provider_bodies import body_for

from chatkeep.errors import ProviderError
from chatkeep.providers import (
    Done,
    ReasoningDelta,
    TextDelta,
    stream,
    stream_with_retries,
)
from chatkeep.providers.reasoning import REDACTED_NOTE, ReasoningParts, ThinkSplitter, split_think
from support.provider_server import Close, Drop, Text
from support.provider_wire import REASONING_FORMS as FORMS
from support.provider_wire import REASONING_IDS as IDS

THOUGHT = "The user greets me. A short friendly answer will do."
ANSWER = "Hello! How can I help?"


def reply(form: str, **fields) -> Text:
    as_ = form if form in ("think", "reasoning_content", "reasoning") else "think"
    return Text(ANSWER, reasoning=THOUGHT, reasoning_as=as_, **fields)


def split(events: list) -> tuple[str, str, Done]:
    answer = "".join(e.text for e in events if isinstance(e, TextDelta))
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    done = events[-1]
    assert isinstance(done, Done)
    return answer, thought, done


@pytest.mark.parametrize(("style", "form"), FORMS, ids=IDS)
def test_streamed_reasoning_is_apart_from_the_answer(style, form, provider_server, make_card):
    """Reasoning pieces arrive as ReasoningDelta before the answer; the text is the answer alone
    (no <think> tag, no reasoning), Done.reasoning the whole reasoning."""
    provider_server.queue(reply(form))
    events = list(stream(make_card(style), body_for(style)))
    answer, thought, done = split(events)
    assert answer == done.text == ANSWER
    assert thought.strip() == done.reasoning == THOUGHT
    kinds = [type(e) for e in events[:-1]]
    assert kinds.index(TextDelta) > max(i for i, k in enumerate(kinds) if k is ReasoningDelta)
    assert not done.interrupted and done.finish_reason


@pytest.mark.parametrize(("style", "form"), FORMS, ids=IDS)
def test_whole_answer_reasoning_is_apart_too(style, form, provider_server, make_card):
    """A non-streaming card reads the reasoning of the whole answer the same way."""
    provider_server.queue(reply(form))
    answer, thought, done = split(list(stream(make_card(style, stream=False), body_for(style))))
    assert answer == done.text == ANSWER
    assert thought == done.reasoning == THOUGHT
    assert provider_server.requests[0].body["stream"] is False


def test_redacted_thinking_is_noted(provider_server, make_card):
    """An Anthropic redacted_thinking block (encrypted) leaves a note in the reasoning."""
    provider_server.queue(reply("thinking", redacted=True), reply("thinking", redacted=True))
    for card in (make_card("anthropic"), make_card("anthropic", stream=False)):
        answer, _thought, done = split(list(stream(card, body_for("anthropic"))))
        assert answer == ANSWER
        assert done.reasoning == f"{THOUGHT}\n\n{REDACTED_NOTE}"


def test_no_reasoning_means_empty_reasoning(provider_server, make_card):
    """A reply without reasoning has Done.reasoning == "" and no ReasoningDelta."""
    provider_server.queue(Text(ANSWER))
    events = list(stream(make_card("chat"), body_for("chat")))
    assert not any(isinstance(e, ReasoningDelta) for e in events)
    assert events[-1].reasoning == "" and events[-1].text == ANSWER


@pytest.mark.parametrize(("style", "form"), FORMS, ids=IDS)
def test_clean_close_during_thinking_keeps_the_reasoning(style, form, provider_server, make_card):
    """The body ends cleanly after three reasoning chunks, before any answer: not a transient
    error but a cut-short reply holding the reasoning so far and no text."""
    provider_server.queue(Close(after_chunks=3, text=reply(form)))
    answer, thought, done = split(list(stream(make_card(style), body_for(style))))
    assert answer == done.text == ""
    assert done.interrupted and done.cut_short
    assert done.reasoning == "The user greets" == thought.strip()


@pytest.mark.parametrize(("style", "form"), FORMS, ids=IDS)
def test_drop_during_thinking_is_not_retried(style, form, provider_server, make_card):
    """Reasoning already reached the caller: a dropped connection is raised, never re-asked
    (which would show the same thoughts twice)."""
    provider_server.queue(Drop(after_chunks=2, text=reply(form)), reply(form))
    seen: list[str] = []
    with pytest.raises(ProviderError):
        for event in stream_with_retries(make_card(style), body_for(style), sleep=lambda s: None):
            if isinstance(event, ReasoningDelta):
                seen.append(event.text)
    assert "".join(seen).strip() == "The user"
    assert len(provider_server.requests) == 1


@pytest.mark.parametrize(("style", "form"), FORMS, ids=IDS)
def test_cancel_during_thinking_keeps_the_reasoning(style, form, provider_server, make_card):
    """A stop after two reasoning pieces ends with Done(interrupted) holding them."""
    provider_server.queue(reply(form, delay=0.02))
    cancel = threading.Event()
    events = []
    for event in stream(make_card(style), body_for(style), cancel=cancel):
        events.append(event)
        if sum(isinstance(e, ReasoningDelta) for e in events) == 2:
            cancel.set()
    answer, thought, done = split(events)
    assert done.interrupted and answer == done.text == ""
    assert done.reasoning == thought.strip() == "The user"


def test_think_tags_cut_anywhere_between_chunks():
    """However a server cuts "<think>" and "</think>" across chunks, the split is the same."""
    whole = "  <think>\nweigh a and b\n</think>\n\nThe answer is b."
    for a in range(1, len(whole)):
        for b in range(a, len(whole)):
            parts = ReasoningParts()
            splitter = ThinkSplitter(parts)
            events = []
            for piece in (whole[:a], whole[a:b], whole[b:]):
                events += splitter.feed(piece)
            events += splitter.finish()
            text = "".join(e.text for e in events if isinstance(e, TextDelta))
            assert (text, parts.text) == ("The answer is b.", "weigh a and b"), (a, b)


def test_think_only_at_the_start_and_unclosed_is_all_reasoning():
    """A <think> later in the reply is answer text; an unclosed one at the start is reasoning."""
    parts = ReasoningParts()
    assert split_think("Use <think> tags like this.", parts) == "Use <think> tags like this."
    assert parts.text == ""
    parts = ReasoningParts()
    assert split_think("<think>still thinking when the reply was cut", parts) == ""
    assert parts.text == "still thinking when the reply was cut"
    parts = ReasoningParts()
    assert split_think("<thinking is not the tag", parts) == "<thinking is not the tag"
    assert split_think("", parts) == "" and parts.text == ""
