"""store.chat.send over real HTTP: styles, system prompt, per-request image cap, retries, stop,
drops."""

from __future__ import annotations

import base64
import io
import sys
import threading

import pytest
from conv_helpers import untimed, use_provider
from PIL import Image

from chatkeep.conversation import Chat, Reply
from chatkeep.errors import AttachError, InvalidValue, ProviderConfigError, ProviderError
from factories import png_data_url
from support.provider_server import Drop, Text, rate_limited, server_error


def users(store):
    return [e for e in store.history.read() if e["role"] == "user"]


def assistants(store):
    return [e for e in store.history.read() if e["role"] == "assistant"]


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_every_style_sends_and_stores_one_turn(sqlite_store, provider_server, style):
    """Each API style reaches its endpoint with the image and stores one user + one reply."""
    use_provider(sqlite_store, provider_server, style=style)
    provider_server.queue(Text("Bonjour to you"))
    image = png_data_url()
    reply = sqlite_store.chat.send("hello there", images=[image])
    assert isinstance(reply, Reply)
    assert reply.text == "Bonjour to you" and not reply.interrupted
    assert reply.provider == "loop" and reply.model == f"{style}-model"
    assert reply.usage and reply.usage["input"] > 0
    path = {
        "chat": "/v1/chat/completions",
        "responses": "/v1/responses",
        "anthropic": "/v1/messages",
    }
    assert provider_server.paths() == [path[style]]
    raw = provider_server.requests[0].raw.decode()
    assert "hello there" in raw
    b64 = image.split(",", 1)[1]
    assert b64 in raw  # unseen pixels travel with the turn
    history = sqlite_store.history.read()
    assert [e["role"] for e in history] == ["user", "assistant"]
    assert untimed(history[1]) == {
        "role": "assistant",
        "content": "Bonjour to you",
        "provider": {"name": "loop", "model": f"{style}-model"},
        "usage": reply.usage,  # the provider's own figures, normalised (SPEC §6.4)
    }
    assert history[0]["imagesSeen"] is True  # stamped after the successful turn
    assert history[0]["content"][1]["image_url"]["url"] == image  # pixels untouched
    assert reply.landed == "live"


def test_store_chat_is_one_engine_per_store(sqlite_store):
    """store.chat returns the same Chat bound to that store on every access."""
    engine = sqlite_store.chat
    assert isinstance(engine, Chat) and engine is sqlite_store.chat and engine.store is sqlite_store


def test_import_chatkeep_conversation_loads_no_sdk():
    """Importing the engine imports neither the provider SDKs nor httpx."""
    import subprocess

    code = (
        "import sys, chatkeep; s = chatkeep.open(':memory:'); s.chat; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai','anthropic','httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_system_prompt_and_reply_language_reach_the_request(lite_chat, provider_server):
    """systemPrompt + replyLanguage become the system message of the request."""
    lite_chat.store.local.set({"systemPrompt": "Be terse.", "replyLanguage": "French"})
    lite_chat.send("hi")
    messages = provider_server.requests[0].body["messages"]
    assert messages[0] == {"role": "system", "content": "Be terse.\n\nAlways reply in French."}
    assert messages[-1] == {"role": "user", "content": "hi"}


def test_history_goes_before_the_new_turn(lite_chat, provider_server):
    """The second request carries the first question and answer, then the new question."""
    provider_server.queue(Text("first answer"), Text("second answer"))
    lite_chat.send("first")
    lite_chat.send("second")
    messages = provider_server.requests[1].body["messages"]
    assert [(m["role"], m["content"]) for m in messages[1:]] == [
        ("user", "first"),
        ("assistant", "first answer"),
        ("user", "second"),
    ]


def test_provider_and_model_override_the_active_card(sqlite_store, provider_server):
    """provider=/model= pick another stored card and model for one send."""
    use_provider(sqlite_store, provider_server, style="chat", name="a")
    use_provider(sqlite_store, provider_server, style="anthropic", name="b")
    sqlite_store.local.set("activeProvider", "a")
    reply = sqlite_store.chat.send("hi", provider="b", model="claude-x")
    assert provider_server.paths() == ["/v1/messages"]
    assert provider_server.requests[0].body["model"] == "claude-x"
    assert sqlite_store.history.read()[-1]["provider"] == {"name": "b", "model": "claude-x"}
    assert reply.provider == "b"


def test_image_cap_limits_the_request_not_the_stored_entry(lite_chat, provider_server):
    """Ten pasted images: all ten are stored, untouched and without a note; the request carries
    the first 8 and the other two as their labels, and the reply says so."""
    images = [png_data_url(8 + k, 8) for k in range(10)]
    reply = lite_chat.send("look", images=images)
    entry = users(lite_chat.store)[0]
    stored = [p["image_url"]["url"] for p in entry["content"] if p["type"] == "image_url"]
    assert stored == images and entry["content"][0]["text"] == "look"
    assert reply.dropped_images == 2 and any(
        "2 images were sent as a label" in w for w in reply.warnings
    )
    raw = provider_server.requests[0].raw
    assert raw.count(b"data:image/png") == 8 and b"[image 9]" in raw and b"[image 10]" in raw


def test_pasted_image_over_50_megapixels_is_refused_before_anything_is_written(
    sqlite_spec, sqlite_store, provider_server
):
    """An image whose header declares more than 50 MP raises AttachError naming the limit;
    nothing is stored or sent."""
    use_provider(sqlite_store, provider_server)
    buf = io.BytesIO()
    Image.new("1", (8000, 7000)).save(buf, format="PNG")
    huge = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    before = sqlite_spec.dump()
    with pytest.raises(AttachError) as info:
        sqlite_store.chat.send("huge", images=[huge])
    assert "56.0 megapixels" in str(info.value) and "maxImagePixels" in info.value.hint
    assert sqlite_spec.dump() == before and provider_server.requests == []


def test_bad_input_and_missing_provider_change_nothing(sqlite_spec, sqlite_store, provider_server):
    """Empty text, a non-data image and an unknown provider raise before any write."""
    use_provider(sqlite_store, provider_server)
    before = sqlite_spec.dump()
    with pytest.raises(InvalidValue):
        sqlite_store.chat.send("   ")
    with pytest.raises(Exception) as info:
        sqlite_store.chat.send("hi", images=["https://example.com/cat.png"])
    assert "data:image" in str(info.value)
    with pytest.raises(ProviderConfigError):
        sqlite_store.chat.send("hi", provider="nope")
    assert sqlite_spec.dump() == before and provider_server.requests == []


def test_rate_limit_is_retried_then_succeeds(lite_chat, provider_server, sleeps):
    """A 429 is retried after delay × attempt and the turn then succeeds normally."""
    lite_chat.retry_delay = 0.25
    provider_server.queue(rate_limited(), rate_limited(), Text("finally"))
    notices: list[str] = []
    reply = lite_chat.send("hi", on_notice=notices.append)
    assert reply.text == "finally"
    assert sleeps.calls == [0.25, 0.5]
    assert len(provider_server.requests) == 3
    assert sum("retrying" in n for n in notices) == 2
    assert [e["role"] for e in lite_chat.store.history.read()] == ["user", "assistant"]


def test_retries_exhausted_leave_only_the_user_entry(lite_chat, provider_server):
    """Three 429s: the error reaches the caller, the user entry stays, no assistant entry."""
    provider_server.script(rate_limited())
    with pytest.raises(ProviderError) as info:
        lite_chat.send("hi")
    assert info.value.status == 429 and info.value.hint
    assert len(provider_server.requests) == 3
    assert [e["role"] for e in lite_chat.store.history.read()] == ["user"]


def test_server_error_is_not_retried(lite_chat, provider_server):
    """A 500 fails at once (not transient) and stores no reply."""
    provider_server.queue(server_error())
    with pytest.raises(ProviderError):
        lite_chat.send("hi")
    assert len(provider_server.requests) == 1
    assert untimed(lite_chat.store.history.read()) == [{"role": "user", "content": "hi"}]


def test_mid_stream_drop_keeps_the_partial_reply_as_interrupted(chat, provider_server):
    """A connection cut after some text: the error is raised (its hint says what was kept),
    one user entry, and the text that arrived kept as an interrupted reply (SPEC §11)."""
    provider_server.queue(Drop(after_chunks=2))
    seen: list[str] = []
    with pytest.raises(ProviderError) as info:
        chat.send("tell me", on_delta=seen.append)
    assert seen  # text had reached the user, so the stream was not restarted
    assert "partial reply was kept" in info.value.hint
    assert len(provider_server.requests) == 1
    user, kept = chat.store.history.read()
    assert untimed(user) == {"role": "user", "content": "tell me"}
    assert kept["role"] == "assistant" and kept["interrupted"] is True
    assert kept["content"] == "".join(seen)
    provider_server.queue(Text("the whole answer"))
    chat.regenerate()  # Retry replaces the cut-off reply: still one question
    assert [e["content"] for e in chat.store.history.read()] == ["tell me", "the whole answer"]


def test_stop_keeps_the_partial_answer_as_interrupted(chat, provider_server):
    """Setting cancel mid-stream stores the partial reply with interrupted: true."""
    words = [f"w{k} " for k in range(40)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.02))
    cancel = threading.Event()
    got: list[str] = []

    def on_delta(text):
        got.append(text)
        if len(got) == 3:
            cancel.set()

    reply = chat.send("long please", cancel=cancel, on_delta=on_delta)
    assert reply.interrupted and reply.text == "w0 w1 w2 "
    history = chat.store.history.read()
    assert [e["role"] for e in history] == ["user", "assistant"]
    assert history[1]["interrupted"] is True and history[1]["content"] == "w0 w1 w2 "


def test_stop_from_another_thread_with_discard(lite_chat, provider_server):
    """Chat.stop() from another thread ends the turn; discard_partial stores no reply."""
    words = [f"w{k} " for k in range(200)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.01))
    started = threading.Event()
    result: dict = {}

    def run():
        result["reply"] = lite_chat.send(
            "long", on_delta=lambda _t: started.set(), discard_partial=True
        )

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(10)
    assert lite_chat.stop() == 1
    worker.join(10)
    reply = result["reply"]
    assert reply.interrupted and reply.landed == "none" and reply.text
    assert untimed(lite_chat.store.history.read()) == [{"role": "user", "content": "long"}]


def test_interrupted_turn_does_not_stamp_images_seen(lite_chat, provider_server):
    """Pixels of a stopped turn stay unseen, so the next request sends them again."""
    words = [f"w{k} " for k in range(40)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.02), Text("ok"))
    cancel = threading.Event()
    lite_chat.send("see", images=[png_data_url()], cancel=cancel, on_delta=lambda _t: cancel.set())
    assert "imagesSeen" not in lite_chat.store.history.read()[0]
    lite_chat.send("again")
    assert b"data:image/png" in provider_server.requests[1].raw


def test_silent_truncation_is_warned(lite_chat, provider_server):
    """Usage far below the estimate (Ollama beyond num_ctx) adds a warning to the reply."""
    provider_server.queue(Text("ok", prompt_tokens=10))
    reply = lite_chat.send("x" * 20_000)
    assert any("truncated" in w for w in reply.warnings)
    provider_server.queue(Text("ok"))
    assert not any("truncated" in w for w in lite_chat.send("y" * 20_000).warnings)


def test_empty_reply_stores_nothing_and_warns(lite_chat, provider_server):
    """A blank answer leaves only the user entry (ready to regenerate) and says so."""
    provider_server.queue(Text(""))
    reply = lite_chat.send("hi")
    assert reply.landed == "none" and any("empty reply" in w for w in reply.warnings)
    assert untimed(lite_chat.store.history.read()) == [{"role": "user", "content": "hi"}]


def test_request_stats_report_prefix_reuse(lite_chat, provider_server):
    """Reply.stats compares with the previous request: the second turn reuses its prefix."""
    first = lite_chat.send("a" * 4000)
    second = lite_chat.send("b")
    assert first.stats["prefixBytes"] == 0 and first.stats["chars"] >= 4000
    assert second.stats["prefixBytes"] > 4000


def test_previous_request_is_kept_for_the_preview(lite_chat, provider_server):
    """The figures of the last request sent are stored — its print, not its body (the long
    text kept as its first characters and a digest) — so a preview in another process
    reports prefix reuse against it."""
    import json

    import chatkeep
    from chatkeep import preview_request
    from chatkeep.rules.wire import serialize

    lite_chat.send("x" * 3000)
    sent = provider_server.requests[-1].body
    kept = lite_chat.store.local.get("lastRequest")
    assert kept["print"] == 2 and kept["bytes"] == len(serialize(sent))
    assert "x" * 3000 not in json.dumps(kept) and "body" not in kept
    with chatkeep.open(
        lite_chat.store.url.removeprefix("sqlite://"), profile=lite_chat.store.profile
    ) as other:
        p = preview_request(other, "next")
    assert p["prefix"]["source"] == "sent" and p["prefix"]["bytes"] > 3000
