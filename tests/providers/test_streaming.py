"""The three adapters over real HTTP: streaming, non-streaming, usage, request shape, cancel."""

from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit

import pytest
from provider_bodies import PATHS, STYLES, body_for

from chatkeep.providers import Done, TextDelta, complete, stream, truncation_warning
from support.provider_server import Text

PIECES = ["The ", "quick ", "brown ", "fox ", "jumps."]
FULL = "".join(PIECES)


@pytest.mark.parametrize("style", STYLES)
def test_streams_text_deltas_then_done_with_usage(style, provider_server, make_card):
    """Deltas arrive in order, Done holds the full text, usage and the response id."""
    provider_server.queue(
        Text(FULL, chunks=PIECES, prompt_tokens=321, completion_tokens=9, response_id=None)
    )
    events = list(stream(make_card(style), body_for(style)))
    assert [e.text for e in events[:-1]] == PIECES
    assert all(isinstance(e, TextDelta) for e in events[:-1])
    done = events[-1]
    assert isinstance(done, Done)
    assert done.text == FULL and not done.interrupted
    assert done.usage == {"input": 321, "cachedRead": 0, "cacheWrite": 0, "output": 9}
    assert done.response_id and done.response_id.startswith(
        {"chat": "chatcmpl-", "responses": "resp_", "anthropic": "msg_"}[style]
    )
    assert provider_server.paths() == [PATHS[style]]


@pytest.mark.parametrize("style", STYLES)
def test_non_streaming_card(style, provider_server, make_card):
    """A card with stream=false sends stream:false and yields one delta plus Done."""
    provider_server.queue(Text("Whole answer at once.", prompt_tokens=50, completion_tokens=4))
    events = list(stream(make_card(style, stream=False), body_for(style)))
    assert [type(e) for e in events] == [TextDelta, Done]
    assert events[0].text == events[1].text == "Whole answer at once."
    assert events[1].usage == {"input": 50, "cachedRead": 0, "cacheWrite": 0, "output": 4}
    assert provider_server.requests[0].body["stream"] is False


@pytest.mark.parametrize("style", STYLES)
def test_request_reaches_server_as_the_api_body(style, provider_server, make_card):
    """The server receives the body's fields unchanged, plus stream and the card's defaults."""
    body = body_for(style, text="What is 2+2?")
    list(stream(make_card(style), body))
    sent = provider_server.requests[0].body
    for key, value in body.items():
        assert sent[key] == value
    assert sent["stream"] is True
    if style == "chat":
        assert sent["stream_options"] == {"include_usage": True}
    if style == "anthropic":
        assert sent["max_tokens"] == 4096  # required by the API; no card value given
    assert body == body_for(style, text="What is 2+2?")  # caller's body untouched


@pytest.mark.parametrize("style", STYLES)
def test_api_key_and_model_from_the_card(style, provider_server, make_card):
    """The card's key is sent in the SDK's auth header; a body without model gets the card's."""
    body = body_for(style)
    del body["model"]
    list(stream(make_card(style, api_key="sk-card-key", model="card-model"), body))
    req = provider_server.requests[0]
    assert "sk-card-key" in req.headers.get("authorization", "") + req.headers.get("x-api-key", "")
    assert req.body["model"] == "card-model"
    if style == "anthropic":
        assert req.headers.get("anthropic-version")


def test_card_sampling_settings_fill_missing_fields(provider_server, make_card):
    """temperature and maxTokens from the card are used only where the body has none."""
    card = make_card("chat", temperature=0.2, max_tokens=77)
    list(stream(card, body_for("chat")))
    list(stream(card, {**body_for("chat"), "temperature": 1.1}))
    first, second = (r.body for r in provider_server.requests)
    assert (first["temperature"], first["max_tokens"]) == (0.2, 77)
    assert second["temperature"] == 1.1
    list(stream(make_card("responses", max_tokens=55), body_for("responses")))
    assert provider_server.requests[2].body["max_output_tokens"] == 55


def test_unknown_vendor_fields_are_forwarded(provider_server, make_card):
    """Fields the SDK does not model (Ollama's options) still reach the server."""
    body = {**body_for("chat"), "options": {"num_ctx": 8192}}
    list(stream(make_card("chat"), body))
    assert provider_server.requests[0].body["options"] == {"num_ctx": 8192}


@pytest.mark.parametrize(
    ("base_suffix", "path"),
    [
        ("", "/v1/chat/completions"),
        ("/", "/v1/chat/completions"),
        ("/v1/", "/v1/chat/completions"),
        ("/api/paas/v4", "/api/paas/v4/chat/completions"),
    ],
)
def test_base_url_joining(base_suffix, path, provider_server, make_card):
    """The SDK posts to root + path with the /v<digits> rule applied to the card's base URL."""
    card = make_card("chat", base_url=provider_server.base_url + base_suffix)
    list(stream(card, body_for("chat")))
    assert provider_server.paths() == [path]


@pytest.mark.parametrize("base_suffix", ["", "/v1", "/v1/"])
def test_anthropic_base_url_joining(base_suffix, provider_server, make_card):
    """Anthropic cards hit /v1/messages whether or not the base URL ends in /v1."""
    card = make_card("anthropic", base_url=provider_server.base_url + base_suffix)
    list(stream(card, body_for("anthropic")))
    assert provider_server.paths() == ["/v1/messages"]


@pytest.mark.parametrize("style", STYLES)
def test_wire_builder_body_round_trip(style, provider_server, make_card):
    """A request from the real wire builder is accepted and posted to the URL it names."""
    from chatkeep.rules.wire import build_request

    wire = build_request(
        style,
        [],
        user_entry={"role": "user", "content": "Hi there"},
        system_prompt="You are a helpful assistant.",
        model="test-model",
        base_url=provider_server.url("/v1"),
    )
    provider_server.queue(Text("Built and sent."))
    done = complete(make_card(style), wire.body)
    assert done.text == "Built and sent."
    assert provider_server.paths() == [urlsplit(wire.url).path]
    sent = provider_server.requests[0].body
    assert {k: v for k, v in sent.items() if k in wire.body} == wire.body


@pytest.mark.parametrize("style", STYLES)
def test_cancel_from_the_consumer_keeps_the_partial(style, provider_server, make_card):
    """Setting cancel after two deltas ends with Done(interrupted) holding exactly those two."""
    provider_server.queue(Text(FULL, chunks=PIECES, delay=0.02))
    cancel = threading.Event()
    seen = []
    for event in stream(make_card(style), body_for(style), cancel=cancel):
        if isinstance(event, TextDelta):
            seen.append(event.text)
            if len(seen) == 2:
                cancel.set()
        else:
            done = event
    assert seen == PIECES[:2]
    assert done.interrupted is True
    assert done.text == "".join(PIECES[:2])
    assert done.usage is None


def test_cancel_from_another_thread_stops_a_slow_stream(provider_server, make_card):
    """A stop pressed elsewhere ends a slow stream early; nothing is handed out after it."""
    pieces = [f"w{i} " for i in range(40)]
    provider_server.queue(Text("".join(pieces), chunks=pieces, delay=0.05))
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    after_stop = []  # deltas handed out although the stop had already been pressed

    def on_delta(text):
        if not timer.is_alive() and not cancel.is_set():
            timer.start()  # start the clock at the first delta, not before the SDK import
        if cancel.is_set():
            after_stop.append(text)

    started = time.monotonic()
    done = complete(make_card("chat"), body_for("chat"), cancel=cancel, on_delta=on_delta)
    elapsed = time.monotonic() - started
    assert after_stop == []
    assert done.interrupted is True
    assert 0 < len(done.text) < len("".join(pieces))
    assert "".join(pieces).startswith(done.text)
    assert elapsed < 1.5  # the full stream would take 2 s


def test_cancel_before_start_sends_nothing(provider_server, make_card):
    """An already-set cancel makes no request at all."""
    cancel = threading.Event()
    cancel.set()
    events = list(stream(make_card("chat"), body_for("chat"), cancel=cancel))
    assert events == [Done("", interrupted=True)]
    assert provider_server.requests == []


def test_complete_reports_each_delta(provider_server, make_card):
    """complete() hands every piece to on_delta and returns the Done."""
    provider_server.queue(Text(FULL, chunks=PIECES))
    got = []
    done = complete(make_card("responses"), body_for("responses"), on_delta=got.append)
    assert got == PIECES and done.text == FULL


@pytest.mark.parametrize("stream_on", [True, False])
def test_anthropic_usage_counts_cache_read_and_write(stream_on, provider_server, make_card):
    """Anthropic input = input + cache creation + cache read tokens; both kept apart."""
    provider_server.queue(
        Text(
            "ok", prompt_tokens=1000, cached_tokens=700, cache_write_tokens=200, completion_tokens=5
        )
    )
    done = complete(make_card("anthropic", stream=stream_on), body_for("anthropic"))
    assert done.usage == {"input": 1000, "cachedRead": 700, "cacheWrite": 200, "output": 5}


@pytest.mark.parametrize("style", ["chat", "responses"])
@pytest.mark.parametrize("stream_on", [True, False])
def test_openai_usage_reports_cached_tokens(style, stream_on, provider_server, make_card):
    """OpenAI's cached_tokens detail is the cache read; input keeps the whole prompt count."""
    provider_server.queue(Text("ok", prompt_tokens=3000, cached_tokens=2048, completion_tokens=7))
    done = complete(make_card(style, stream=stream_on), body_for(style))
    assert done.usage == {"input": 3000, "cachedRead": 2048, "cacheWrite": 0, "output": 7}


@pytest.mark.parametrize("style", STYLES)
def test_truncation_warning_when_provider_reads_less(style, provider_server, make_card):
    """A server reporting far fewer prompt tokens than sent (Ollama's silent cut) warns."""
    long_text = "lorem ipsum dolor sit amet " * 800  # ~21,600 chars ≈ 5,400 tokens
    body = body_for(style, text=long_text)
    estimate = len(long_text) // 4
    provider_server.queue(Text("Short answer.", prompt_tokens=2048))  # num_ctx = 2048
    truncated = complete(make_card(style), body)
    warning = truncation_warning(estimate, truncated.usage)
    assert warning is not None and "2,048" in warning and "num_ctx" in warning
    provider_server.queue(Text("Short answer."))  # honest count, estimated from the body
    honest = complete(make_card(style), body)
    assert truncation_warning(estimate, honest.usage) is None


def test_truncation_warning_thresholds():
    """Warn only below 50% of a non-trivial estimate; no usage means no warning."""
    assert truncation_warning(10_000, {"input": 4_999}) is not None
    assert truncation_warning(10_000, {"input": 5_000}) is None
    assert truncation_warning(100, {"input": 10}) is None  # too small to judge
    assert truncation_warning(10_000, None) is None
    assert truncation_warning(10_000, {"output": 3}) is None
