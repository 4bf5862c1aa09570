"""Build, then send: the preview shows exactly the request the next send sends (SPEC §6).

Also the two phases of the engine (prepare checks and writes nothing; run performs) and the
retry rules of §3.5 (a failed send leaves one unanswered question; a retry never duplicates it).
"""

from __future__ import annotations

import json

import pytest
from conv_helpers import untimed, use_provider

import chatkeep
from clirun import run as cli
from factories import attachment, png_data_url
from support.provider_server import HttpError, Text

STYLES = ("chat", "responses", "anthropic")


def _seed(store: chatkeep.Store) -> None:
    """A conversation with a seen image, an aged attachment and an unseen image."""
    seen = png_data_url(40, 30, noise=True)
    store.history.append(attachment("long page " + "p" * 9000, title="Old page"))
    store.history.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": seen}},
            ],
            "imagesSeen": True,
        }
    )
    store.history.append({"role": "assistant", "content": "a chart"})
    for k in range(3):
        store.history.append({"role": "user", "content": f"question {k}"})
        store.history.append({"role": "assistant", "content": f"answer {k}"})
    store.history.append(attachment("a newer, short page", title="New page"))


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("stream", [True, False])
def test_preview_body_is_the_body_the_server_receives(
    lite_chat, provider_server, style, stream
) -> None:
    """For every style, streaming or not, the previewed body equals the body that is sent."""
    store = lite_chat.store
    use_provider(store, provider_server, style=style, stream=stream)
    _seed(store)
    preview = chatkeep.preview_request(store, "the next question")
    resize = "resize_images_anthropic" if style == "anthropic" else "resize_images_openai"
    assert preview["steps"] == [
        "age_stale_attachments",
        "prepare_history_for_model",
        "sendable_history",
        resize,
        "cap_request_images",
    ]
    sent_as = {row["index"]: row["sent"] for row in preview["entries"]}
    assert sent_as[0] == "stub" and sent_as[1] == "labels" and sent_as[2] == "raw"
    provider_server.queue(Text("ok"))
    lite_chat.send("the next question")
    assert provider_server.requests[-1].body == preview["body"]


def test_server_transcript_preview_shows_the_chain_and_only_the_new_turn(
    lite_chat, provider_server
) -> None:
    """A server-transcript card previews previous_response_id and only the new turn — what the
    next send sends — and marks the entries the server already holds."""
    store = lite_chat.store
    use_provider(store, provider_server, style="responses", serverTranscript=True)
    provider_server.queue(Text("first answer", response_id="resp_1"))
    lite_chat.send("first question " + "x" * 300)
    preview = chatkeep.preview_request(store, "second question")
    assert preview["previousResponseId"] == "resp_1"
    assert preview["body"]["previous_response_id"] == "resp_1"
    assert "x" * 300 not in json.dumps(preview["body"])
    assert [row["sent"] for row in preview["entries"]] == ["server", "server"]
    provider_server.queue(Text("second answer", response_id="resp_2"))
    lite_chat.send("second question")
    assert provider_server.requests[-1].body == preview["body"]


def test_cli_request_json_matches_the_next_send(tmp_path, provider_server) -> None:
    """`chatkeep request --json` through the CLI: same chain, same body as the send."""
    db = tmp_path / "plan.db"
    cli(
        db,
        "provider",
        "add",
        "agent",
        "--style",
        "responses",
        "--base-url",
        provider_server.url("/v1"),
        "--model",
        "m",
        "--server-transcript",
    )
    provider_server.queue(Text("one", response_id="resp_a"))
    cli(db, "chat", "hello there")
    shown = json.loads(cli(db, "request", "--json", "--text", "and then?").stdout)
    assert shown["previousResponseId"] == "resp_a"
    provider_server.queue(Text("two", response_id="resp_b"))
    cli(db, "chat", "and then?")
    assert provider_server.requests[-1].body == shown["body"]
    human = cli(db, "request", "--text", "more").stdout
    assert "continues server transcript resp_b" in human and "server" in human


def test_prepare_checks_everything_and_writes_nothing(lite_chat) -> None:
    """Bad index, role, empty text or no question: typed errors from prepare, storage untouched."""
    store = lite_chat.store
    store.history.append(attachment("a page"))
    store.history.append({"role": "user", "content": "hi"})
    store.history.append({"role": "assistant", "content": "hello"})
    before = store.history.read()
    for call in (
        lambda: lite_chat.prepare_edit(7, "x"),
        lambda: lite_chat.prepare_edit(0, "x"),  # an attachment, not the user's message
        lambda: lite_chat.prepare_edit(2, "x"),  # an assistant entry
        lambda: lite_chat.prepare_edit(True, "x"),
        lambda: lite_chat.prepare_send("   "),
        lambda: lite_chat.prepare_send("ok", images=["http://example.com/a.png"]),
    ):
        with pytest.raises((chatkeep.InvalidValue, chatkeep.InvalidEntry)):
            call()
    store.history.clear()
    with pytest.raises(chatkeep.InvalidValue, match="no question"):
        lite_chat.prepare_regenerate()
    store.local.set("providers", {})
    store.local.set("activeProvider", "")
    with pytest.raises(chatkeep.ProviderConfigError):
        lite_chat.prepare_send("hello")
    assert store.history.read() == [] and before[1]["content"] == "hi"


def test_run_refuses_what_prepare_did_not_make(lite_chat) -> None:
    """run() takes only a prepared Turn."""
    with pytest.raises(chatkeep.InvalidValue):
        lite_chat.run({"text": "hi"})


def test_edit_prepared_then_history_changed_sends_nothing(lite_chat, provider_server) -> None:
    """If the entry to edit changed between prepare and run, nothing is written or sent."""
    store = lite_chat.store
    store.history.append({"role": "user", "content": "first"})
    turn = lite_chat.prepare_edit(0, "first, edited")
    store.history.mutate(lambda e: [{"role": "user", "content": "someone else's edit"}])
    with pytest.raises(chatkeep.InvalidValue, match="changed"):
        lite_chat.run(turn)
    assert store.history.read() == [{"role": "user", "content": "someone else's edit"}]
    assert provider_server.requests == []


def test_failed_send_then_same_text_answers_the_one_question(lite_chat, provider_server) -> None:
    """A failed send keeps one unanswered question; sending the same text again answers it
    without a second user entry, and neither the history nor the request holds it twice."""
    store = lite_chat.store
    lite_chat.retries = 0
    provider_server.queue(HttpError(500, {"error": {"message": "boom", "type": "server_error"}}))
    with pytest.raises(chatkeep.ProviderError) as info:
        lite_chat.send("what is 2+2?")
    assert "chatkeep regenerate" in info.value.hint
    assert untimed(store.history.read()) == [{"role": "user", "content": "what is 2+2?"}]
    provider_server.queue(Text("4"))
    lite_chat.send("what is 2+2?")
    history = store.history.read()
    assert [(e["role"], e["content"]) for e in history] == [
        ("user", "what is 2+2?"),
        ("assistant", "4"),
    ]
    sent = json.dumps(provider_server.requests[-1].body)
    assert sent.count("what is 2+2?") == 1


def test_failed_send_then_regenerate_answers_in_place(lite_chat, provider_server) -> None:
    """regenerate after a failure answers the unanswered question: one user bubble, one reply."""
    store = lite_chat.store
    lite_chat.retries = 0
    store.history.append({"role": "user", "content": "earlier"})
    store.history.append({"role": "assistant", "content": "earlier answer"})
    provider_server.queue(HttpError(500, {"error": {"message": "boom", "type": "server_error"}}))
    with pytest.raises(chatkeep.ProviderError):
        lite_chat.send("the question")
    provider_server.queue(Text("the answer"))
    lite_chat.regenerate()
    assert [e["content"] for e in store.history.read()] == [
        "earlier",
        "earlier answer",
        "the question",
        "the answer",
    ]
    assert json.dumps(provider_server.requests[-1].body).count("the question") == 1


def test_same_text_after_an_answer_is_a_new_turn(lite_chat, provider_server) -> None:
    """Only an unanswered question is reused: asking the same thing again after an answer is
    an ordinary second turn."""
    provider_server.queue(Text("a"), Text("b"))
    lite_chat.send("again?")
    lite_chat.send("again?")
    assert [e["content"] for e in lite_chat.store.history.read()] == ["again?", "a", "again?", "b"]
