"""Edit & resend and regenerate (SPEC §3.5): one bubble per send on every path."""

from __future__ import annotations

import pytest
from conv_helpers import untimed

from chatkeep.errors import InvalidValue, ProviderConfigError, ProviderError
from factories import assistant, attachment, image_entry, png_data_url, user
from support.provider_server import Text, server_error


def seed(store, *entries):
    for e in entries:
        store.history.append(e)


def roles(store):
    return [e["role"] for e in store.history.read()]


def test_edit_and_resend_replaces_the_entry_and_what_follows(chat, provider_server):
    """Editing entry 2 truncates from it and appends one new user entry at index 2."""
    seed(
        chat.store,
        user("q1"),
        assistant("a1"),
        user("q2"),
        assistant("a2"),
        user("q3"),
        assistant("a3"),
    )
    provider_server.queue(Text("new a2"))
    reply = chat.edit_and_resend(2, "q2 edited")
    assert reply.text == "new a2"
    history = chat.store.history.read()
    assert [e["content"] for e in history] == ["q1", "a1", "q2 edited", "new a2"]
    messages = provider_server.requests[0].body["messages"]
    assert [m["content"] for m in messages[1:]] == ["q1", "a1", "q2 edited"]


def test_edit_keeps_the_entry_images_unless_given(lite_chat, provider_server):
    """images=None re-sends the edited entry's pixels; an explicit list replaces them."""
    img, other = png_data_url(), png_data_url(20, 20, (0, 0, 0))
    seed(lite_chat.store, image_entry("what is this", img, imagesSeen=True), assistant("a cat"))
    lite_chat.edit_and_resend(0, "what animal is this")
    first = lite_chat.store.history.read()[0]
    assert first["content"] == [
        {"type": "text", "text": "what animal is this"},
        {"type": "image_url", "image_url": {"url": img}},
    ]
    assert img.split(",", 1)[1].encode() in provider_server.requests[0].raw  # fresh pixels again
    lite_chat.edit_and_resend(0, "and this?", images=[other])
    assert lite_chat.store.history.read()[0]["content"][1]["image_url"]["url"] == other


def test_failed_edit_leaves_one_user_entry_and_no_orphan(chat, provider_server):
    """A provider error after the edit: old tail gone, the new question stays alone."""
    seed(chat.store, user("q1"), assistant("a1"), user("q2"), assistant("a2"))
    provider_server.queue(server_error())
    with pytest.raises(ProviderError):
        chat.edit_and_resend(0, "q1 edited")
    assert untimed(chat.store.history.read()) == [{"role": "user", "content": "q1 edited"}]


@pytest.mark.parametrize("index", [1, 2, 5, -1])
def test_edit_refuses_answers_attachments_and_bad_indexes(lite_chat, provider_server, index):
    """Only the user's own messages can be edited; refusals change nothing."""
    seed(lite_chat.store, user("q1"), assistant("a1"), attachment("page text"))
    before = lite_chat.store.history.read()
    with pytest.raises(InvalidValue):
        lite_chat.edit_and_resend(index, "x")
    assert lite_chat.store.history.read() == before and provider_server.requests == []


def test_bad_provider_on_edit_truncates_nothing(lite_chat, provider_server):
    """A configuration error is raised before truncate_from runs."""
    seed(lite_chat.store, user("q1"), assistant("a1"))
    with pytest.raises(ProviderConfigError):
        lite_chat.edit_and_resend(0, "q1 edited", provider="missing")
    assert roles(lite_chat.store) == ["user", "assistant"]


def test_regenerate_replaces_the_last_answer(chat, provider_server):
    """Regenerate re-sends the last question once and stores one fresh answer."""
    seed(chat.store, user("q1"), assistant("a1"), user("q2"), assistant("a2"))
    provider_server.queue(Text("a2 again"))
    chat.regenerate()
    history = chat.store.history.read()
    assert [e["content"] for e in history] == ["q1", "a1", "q2", "a2 again"]
    messages = provider_server.requests[0].body["messages"]
    assert [m["content"] for m in messages[1:]] == ["q1", "a1", "q2"]


def test_regenerate_after_a_failed_turn_answers_it(lite_chat, provider_server):
    """A question left without answer is re-sent as one entry, not duplicated."""
    seed(lite_chat.store, user("q1"), assistant("a1"), user("q2"))
    lite_chat.regenerate()
    assert roles(lite_chat.store) == ["user", "assistant", "user", "assistant"]
    assert untimed(lite_chat.store.history.read()[2]) == {"role": "user", "content": "q2"}


def test_regenerate_keeps_attachments_before_the_question(lite_chat, provider_server):
    """The attachment sent with the question stays; only the question and answer are redone."""
    page = attachment("page body")
    seed(lite_chat.store, page, user("about it?"), assistant("old"))
    lite_chat.regenerate()
    history = lite_chat.store.history.read()
    assert history[0] == page and untimed(history[1]) == user("about it?") and len(history) == 3
    assert "page body" in provider_server.requests[0].body["messages"][1]["content"]


def test_regenerate_keeps_attachments_added_after_the_answer(lite_chat, provider_server):
    """An attachment added after the last answer was never sent: regenerate keeps it, before the question."""
    later = attachment("attached after the answer")
    seed(lite_chat.store, user("q1"), assistant("a1"), later)
    lite_chat.regenerate()
    history = lite_chat.store.history.read()
    assert history[0] == later and untimed(history[1]) == user("q1")
    assert history[2]["role"] == "assistant"
    assert [e["role"] for e in history].count("user") == 2
    assert "attached after the answer" in provider_server.requests[0].body["messages"][1]["content"]


def test_failed_regenerate_leaves_the_question_alone(chat, provider_server):
    """Regenerate that fails: the old answer is gone, the question stays exactly once."""
    seed(chat.store, user("q1"), assistant("a1"))
    provider_server.queue(server_error())
    with pytest.raises(ProviderError):
        chat.regenerate()
    assert untimed(chat.store.history.read()) == [user("q1")]


def test_regenerate_with_nothing_to_redo(lite_chat):
    """An empty history (or only attachments) has nothing to regenerate."""
    with pytest.raises(InvalidValue):
        lite_chat.regenerate()
    seed(lite_chat.store, attachment("page"))
    with pytest.raises(InvalidValue):
        lite_chat.regenerate()
    assert len(lite_chat.store.history.read()) == 1
