"""A reply that finishes after a session switch lands in the session it started in (SPEC §7.2)."""

from __future__ import annotations

from conv_helpers import untimed

from factories import assistant, user
from support.provider_server import Text


def slow_text(text: str = "the late reply arrives in pieces") -> Text:
    return Text(text, delay=0.01)


def once(action):
    """An on_delta callback that runs ``action`` at the first delta only."""
    state = {"done": False}

    def on_delta(_text: str) -> None:
        if not state["done"]:
            state["done"] = True
            action()

    return on_delta


def test_new_session_mid_stream_sends_the_reply_to_the_saved_one(chat, provider_server):
    """sessions.new() while streaming: the reply joins the saved conversation, not the new one."""
    store = chat.store
    store.history.append(user("earlier"))
    store.history.append(assistant("earlier answer"))
    provider_server.queue(slow_text())
    reply = chat.send("question", on_delta=once(store.sessions.new))
    assert reply.landed == "session" and reply.session_id
    assert store.history.read() == []  # the new conversation is untouched
    body = store.sessions.get(reply.session_id)["history"]
    assert [e["content"] for e in body] == [
        "earlier",
        "earlier answer",
        "question",
        "the late reply arrives in pieces",
    ]
    assert body[-1]["provider"]["name"] == "loop"


def test_switch_to_another_saved_session_keeps_both_apart(chat, provider_server):
    """Session X streaming, user updates X and loads Y: X gets the reply, Y stays as it was."""
    store = chat.store
    store.history.append(user("in y"))
    y = store.sessions.save("Y")["id"]
    store.history.clear()
    store.history.append(user("in x"))
    x = store.sessions.save("X")["id"]

    def switch() -> None:
        store.sessions.update(x)
        store.sessions.load(y)

    provider_server.queue(slow_text())
    reply = chat.send("question in x", on_delta=once(switch))
    assert (reply.landed, reply.session_id) == ("session", x)
    assert store.history.read() == [user("in y")]
    assert store.sessions.active_id() == y
    x_body = store.sessions.get(x)["history"]
    assert [e["role"] for e in x_body] == ["user", "user", "assistant"]
    assert untimed(x_body[1]) == user("question in x")
    assert store.sessions.get(y)["history"] == [user("in y")]


def test_switch_without_write_back_still_brings_the_question(lite_chat, provider_server):
    """If session X was left without saving the new question, X gets question and answer once."""
    store = lite_chat.store
    store.history.append(user("in y"))
    y = store.sessions.save("Y")["id"]
    store.history.clear()
    store.history.append(user("in x"))
    x = store.sessions.save("X")["id"]
    provider_server.queue(slow_text())
    reply = lite_chat.send("question", on_delta=once(lambda: store.sessions.load(y)))
    assert reply.session_id == x
    x_body = store.sessions.get(x)["history"]
    assert [e["content"] for e in x_body] == [
        "in x",
        "question",
        "the late reply arrives in pieces",
    ]
    assert store.history.read() == [user("in y")]


def test_saving_mid_stream_keeps_the_reply_live(lite_chat, provider_server):
    """Saving the conversation while it streams is not a switch: the reply lands live."""
    store = lite_chat.store
    provider_server.queue(slow_text())
    reply = lite_chat.send("question", on_delta=once(lambda: store.sessions.save("mine")))
    assert reply.landed == "live" and reply.session_id == store.sessions.active_id() != ""
    assert [e["role"] for e in store.history.read()] == ["user", "assistant"]


def test_cleared_conversation_drops_nothing_silently(lite_chat, provider_server):
    """History cleared without saving while streaming: question and reply go to the archive."""
    store = lite_chat.store
    provider_server.queue(slow_text())
    reply = lite_chat.send("question", on_delta=once(store.history.clear))
    assert reply.landed == "archive" and reply.text == "the late reply arrives in pieces"
    assert any("archive" in w for w in reply.warnings)
    assert store.history.read() == [] and store.sessions.index() == []
    tail = store.history.archived()[-2:]
    assert untimed(tail[0]) == user("question")
    assert tail[1]["role"] == "assistant" and tail[1]["content"] == reply.text


def test_reply_whose_session_was_deleted_goes_to_the_archive(lite_chat, provider_server):
    """The session the turn started in is deleted mid-stream: the reply is archived, not lost."""
    store = lite_chat.store
    store.history.append(user("earlier"))
    sid = store.sessions.save("doomed")["id"]

    def switch_and_delete() -> None:
        store.sessions.new()
        store.sessions.delete(sid)

    provider_server.queue(slow_text())
    reply = lite_chat.send("late question", on_delta=once(switch_and_delete))
    assert reply.landed == "archive" and reply.session_id is None
    assert store.sessions.get(sid) is None
    assert [e.get("content") for e in store.history.archived()[-2:]] == [
        "late question",
        reply.text,
    ]


def test_same_words_in_the_other_session_do_not_attract_the_reply(lite_chat, provider_server):
    """Y already holds an identical "hi": the reply to X's "hi" still goes to X, not to Y."""
    store = lite_chat.store
    store.history.append(user("hi"))
    y = store.sessions.save("Y")["id"]
    store.history.clear()
    store.history.append(user("hello"))
    x = store.sessions.save("X")["id"]

    def switch() -> None:
        store.sessions.update(x)
        store.sessions.load(y)

    provider_server.queue(slow_text())
    reply = lite_chat.send("hi", on_delta=once(switch))
    assert (reply.landed, reply.session_id) == ("session", x)
    assert store.history.read() == [user("hi")]
    assert [e["role"] for e in store.sessions.get(x)["history"]] == ["user", "user", "assistant"]


def test_reply_landing_in_a_session_stamps_its_images_seen(chat, provider_server):
    """A reply saved into the session it started in stamps that turn's images seen there too."""
    from factories import png_data_url

    store = chat.store
    picture = png_data_url(40, 30, noise=True)
    provider_server.queue(slow_text())
    reply = chat.send(
        "what is in this picture?", images=[picture], on_delta=once(store.sessions.new)
    )
    assert reply.landed == "session"
    body = store.sessions.get(reply.session_id)["history"]
    assert [e["role"] for e in body] == ["user", "assistant"]
    assert body[0]["imagesSeen"] is True
    assert body[0]["content"][1]["image_url"]["url"] == picture  # pixels kept
