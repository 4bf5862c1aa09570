"""chatkeep's own chats keep the model's reasoning and every appended entry's time (SPEC §3.2,
§14), and send neither: the reply's ``content`` is the answer alone, ``reasoning`` holds the
thinking, ``createdAt`` the time — over real HTTP in every API style."""

from __future__ import annotations

import json
import threading

import pytest
from conv_helpers import untimed, use_provider

from chatkeep import attach_file
from chatkeep.conversation import summarize_attachment
from chatkeep.conversation.engine import CUT_SHORT_WARNING, NO_ANSWER_WARNING
from chatkeep.errors import ProviderError
from support.provider_server import Close, Drop, Text
from support.provider_wire import REASONING_FORMS as FORMS
from support.provider_wire import REASONING_IDS as IDS

THOUGHT = "The user asks for the capital of France. That is Paris, no doubt about it."
ANSWER = "The capital of France is Paris."

STYLES = ("chat", "responses", "anthropic")


def thinking(form: str = "think", text: str = ANSWER, **fields) -> Text:
    as_ = form if form in ("think", "reasoning_content", "reasoning") else "think"
    return Text(text, reasoning=THOUGHT, reasoning_as=as_, **fields)


def sent_messages(body: dict) -> list[dict]:
    """The conversation of a recorded request body, whatever the style."""
    return body.get("messages") or body.get("input") or []


def text_of(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content)


def assert_nothing_extra_sent(raw: bytes) -> None:
    """No stored reasoning and no entry time in a request body."""
    body = json.loads(raw)
    assert "Paris, no doubt" not in raw.decode()
    for message in sent_messages(body):
        assert "createdAt" not in message and "reasoning" not in message
        assert set(message) <= {"role", "content"}
    assert b"createdAt" not in raw


@pytest.mark.parametrize(("style", "form"), FORMS, ids=IDS)
def test_reply_keeps_reasoning_apart_and_never_resends_it(
    style, form, sqlite_store, provider_server, sleeps
):
    """The assistant entry's content is the answer alone and ``reasoning`` the thinking; the
    faces hear the reasoning as its own event; the next request carries the answer only; both
    entries carry createdAt, which no request carries."""
    use_provider(sqlite_store, provider_server, style=style)
    chat = sqlite_store.chat
    chat.sleep = sleeps
    provider_server.queue(thinking(form), Text("Lyon is second."))
    answer: list[str] = []
    thought: list[str] = []
    reply = chat.send("capital of France?", on_delta=answer.append, on_reasoning=thought.append)
    assert reply.text == "".join(answer) == ANSWER
    assert reply.reasoning == "".join(thought).strip() == THOUGHT
    user, kept = sqlite_store.history.read()
    assert untimed(user) == {"role": "user", "content": "capital of France?"}
    assert kept["content"] == ANSWER and kept["reasoning"] == THOUGHT
    assert "<think>" not in kept["content"] and "interrupted" not in kept
    assert user["createdAt"] <= kept["createdAt"]

    chat.send("and the second city?")
    first, second = provider_server.requests
    for request in (first, second):
        assert_nothing_extra_sent(request.raw)
    earlier = [m for m in sent_messages(second.body) if m["role"] == "assistant"]
    assert [text_of(m) for m in earlier] == [ANSWER]
    history = sqlite_store.history.read()
    assert all(isinstance(e["createdAt"], int) for e in history) and len(history) == 4
    assert "reasoning" not in history[3]


@pytest.mark.parametrize("style", STYLES)
def test_requests_and_their_figures_are_those_of_a_conversation_without_them(
    style, sqlite_store, provider_server, sleeps
):
    """Times and reasoning change nothing that is compared across requests: the bodies, and
    the request figures (bytes, prefix shared with the previous request, kept in
    ``lastRequest``) of a conversation whose reply carried reasoning equal those of the same
    conversation without it."""
    use_provider(sqlite_store, provider_server, style=style)
    chat = sqlite_store.chat
    chat.sleep = sleeps
    runs = []
    for first in (thinking(), Text(ANSWER)):
        sqlite_store.history.clear()
        provider_server.reset()
        provider_server.queue(first, Text("Lyon."))
        chat.send("capital of France?")
        reply = chat.send("and the second city?")
        bodies = [r.body for r in provider_server.requests]
        runs.append((bodies, reply.stats, sqlite_store.local.get("lastRequest")))
    (with_bodies, with_stats, with_last), (plain_bodies, plain_stats, plain_last) = runs
    assert with_bodies == plain_bodies
    assert with_stats == plain_stats and with_stats["prefixBytes"] > 0
    assert with_last == plain_last


def test_server_transcript_chain_continues_after_a_reply_with_reasoning(lite_chat, provider_server):
    """The stored reply (with its reasoning and time) still chains the next turn to the
    server-held transcript: the history digest is taken of what was stored."""
    use_provider(lite_chat.store, provider_server, style="responses", serverTranscript=True)
    provider_server.queue(thinking("summary", response_id="resp_one"), Text("Lyon."))
    lite_chat.send("capital of France?")
    lite_chat.send("and the second city?")
    second = provider_server.requests[1]
    assert second.body["previous_response_id"] == "resp_one"
    assert_nothing_extra_sent(second.raw)


@pytest.mark.parametrize(("style", "form"), FORMS, ids=IDS)
def test_stream_ended_during_thinking_keeps_the_reasoning(
    style, form, sqlite_store, provider_server, sleeps
):
    """The body ends cleanly after three reasoning chunks: the reasoning is kept on an
    interrupted entry with no answer, the user is told, and the next request sends neither the
    empty answer nor the reasoning."""
    use_provider(sqlite_store, provider_server, style=style)
    chat = sqlite_store.chat
    chat.sleep = sleeps
    provider_server.queue(Close(after_chunks=3, text=thinking(form)), Text("Paris."))
    reply = chat.send("capital of France?")
    assert reply.interrupted and reply.text == "" and CUT_SHORT_WARNING in reply.warnings
    _user, kept = sqlite_store.history.read()
    kept.pop("usage", None)  # Anthropic reports the prompt's usage at the start
    assert untimed(kept) == {
        "role": "assistant",
        "content": "",
        "reasoning": "The user asks",
        "interrupted": True,
        "provider": {"name": "loop", "model": f"{style}-model"},
    }
    chat.send("are you there?")
    second = provider_server.requests[1]
    assert_nothing_extra_sent(second.raw)
    assert "The user asks" not in second.raw.decode()
    assert [m["role"] for m in sent_messages(second.body) if m["role"] != "system"] in (
        ["user", "user"],  # chat, responses: the empty answer is left out
        ["user"],  # anthropic: the two questions are one user message
    )


@pytest.mark.parametrize("style", STYLES)
def test_connection_dropped_during_thinking_keeps_the_reasoning(
    style, sqlite_store, provider_server, sleeps
):
    """A connection reset after two reasoning chunks: the error says the partial reply was
    kept, and it was — the reasoning so far, interrupted; nothing was sent again."""
    use_provider(sqlite_store, provider_server, style=style)
    chat = sqlite_store.chat
    chat.sleep = sleeps
    provider_server.queue(Drop(after_chunks=2, text=thinking()))
    with pytest.raises(ProviderError) as info:
        chat.send("capital of France?")
    assert "partial reply was kept" in info.value.hint
    _user, kept = sqlite_store.history.read()
    assert kept["reasoning"] == "The user" and kept["content"] == ""
    assert kept["interrupted"] is True and isinstance(kept["createdAt"], int)
    assert len(provider_server.requests) == 1 and sleeps.calls == []


def test_drop_after_thinking_and_some_answer_keeps_both(lite_chat, provider_server):
    """Cut after the whole reasoning and two answer words: both parts are kept, apart."""
    pieces = len(THOUGHT.split(" "))
    provider_server.queue(Drop(after_chunks=pieces + 2, text=thinking("anthropic")))
    use_provider(lite_chat.store, provider_server, style="anthropic")
    with pytest.raises(ProviderError):
        lite_chat.send("capital of France?")
    kept = lite_chat.store.history.read()[-1]
    assert kept["reasoning"] == THOUGHT and kept["content"] == "The capital "
    assert kept["interrupted"] is True


@pytest.mark.parametrize("discard", [False, True])
def test_stop_during_thinking(discard, lite_chat, provider_server):
    """The stop button while the model thinks keeps its reasoning so far (interrupted), unless
    the caller discards the partial reply."""
    provider_server.queue(thinking("reasoning_content", delay=0.02))
    cancel = threading.Event()
    pieces: list[str] = []

    def on_reasoning(text: str) -> None:
        pieces.append(text)
        if len(pieces) == 3:
            cancel.set()

    reply = lite_chat.send(
        "capital of France?", on_reasoning=on_reasoning, cancel=cancel, discard_partial=discard
    )
    assert reply.interrupted and reply.reasoning == "The user asks"
    history = lite_chat.store.history.read()
    if discard:
        assert [e["role"] for e in history] == ["user"] and reply.landed == "none"
    else:
        assert history[-1]["reasoning"] == "The user asks" and history[-1]["interrupted"]


def test_reasoning_without_an_answer_is_kept_with_a_warning(lite_chat, provider_server):
    """A whole reply that held only reasoning is no empty reply: the reasoning is kept and the
    user is told there was no answer."""
    provider_server.queue(thinking(text=""))
    reply = lite_chat.send("capital of France?")
    assert not reply.interrupted and NO_ANSWER_WARNING in reply.warnings
    kept = lite_chat.store.history.read()[-1]
    assert kept["content"] == "" and kept["reasoning"] == THOUGHT and "interrupted" not in kept


def test_attachments_carry_their_time_and_keep_it_through_the_summary(
    lite_chat, provider_server, tmp_path
):
    """An attached file carries createdAt (not sent); the condensed attachment keeps it, and a
    summary written by a reasoning model holds the answer only."""
    store = lite_chat.store
    page = tmp_path / "notes.txt"
    page.write_text("Paris has 2.1 million inhabitants.\n" * 40, encoding="utf-8")
    result = attach_file(store, page)
    entry = next(e for e in store.history.read() if e.get("attachId") == result.attach_id)
    stamp = entry["createdAt"]
    assert isinstance(stamp, int)
    provider_server.queue(Text("Paris: 2.1 million people.", reasoning="Shorten it to a line."))
    assert summarize_attachment(store, result.attach_id) is True
    assert_nothing_extra_sent(provider_server.requests[0].raw)
    condensed = next(e for e in store.history.read() if e.get("attachId") == result.attach_id)
    assert condensed["summarized"] is True and condensed["createdAt"] == stamp
    assert condensed["content"].endswith("Paris: 2.1 million people.")
    assert "Shorten it" not in condensed["content"] and "<think>" not in condensed["content"]
    lite_chat.send("how many people?")
    assert_nothing_extra_sent(provider_server.requests[-1].raw)
