"""Error mapping (SPEC §12) and transient retries (§7.3), through the SDKs over real HTTP."""

from __future__ import annotations

import socket

import pytest
from provider_bodies import STYLES, body_for

from chatkeep.errors import ContextOverflow, ProviderConfigError, ProviderError
from chatkeep.providers import (
    Card,
    TextDelta,
    complete,
    is_transient,
    stream,
    stream_with_retries,
    with_retries,
)
from support.provider_server import (
    ERROR_BODIES,
    Drop,
    HttpError,
    StreamFailure,
    Text,
    not_found,
    overflow,
    rate_limited,
    server_error,
    unauthorized,
)


class Sleeps:
    """Records requested delays instead of waiting (the HTTP stays real)."""

    def __init__(self):
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def run(card, body, **kw):
    return complete(card, body, **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- mapping


@pytest.mark.parametrize("style", STYLES)
def test_401_hints_at_the_api_key(style, provider_server, make_card):
    """401 → ProviderError(status=401) with an API-key hint and the provider's body kept."""
    provider_server.queue(unauthorized())
    with pytest.raises(ProviderError) as info:
        list(stream(make_card(style), body_for(style)))
    err = info.value
    assert type(err) is ProviderError and err.status == 401
    assert "API key" in err.hint
    expected = "invalid_api_key" if style != "anthropic" else "authentication_error"
    assert err.code == expected
    provider_words = "Incorrect API key provided" if style != "anthropic" else "invalid x-api-key"
    assert provider_words in err.message and "HTTP 401" in err.message
    assert err.body


def test_403_also_hints_at_the_api_key(provider_server, make_card):
    """403 is treated like 401: check the key."""
    provider_server.queue(HttpError(403, {"error": {"message": "Forbidden", "type": "x"}}))
    with pytest.raises(ProviderError) as info:
        run(make_card("chat"), body_for("chat"))
    assert info.value.status == 403 and "API key" in info.value.hint


@pytest.mark.parametrize("style", STYLES)
def test_404_hints_at_model_or_base_url(style, provider_server, make_card):
    """404 → hint naming the model and the base URL."""
    provider_server.queue(not_found())
    card = make_card(style, model="gpt-9-imaginary")
    with pytest.raises(ProviderError) as info:
        list(stream(card, body_for(style)))
    err = info.value
    assert err.status == 404
    assert "gpt-9-imaginary" in err.hint and card.base_url in err.hint


def test_wrong_base_path_is_a_404_with_the_same_hint(provider_server, make_card):
    """A base URL pointing at the wrong place (server answers 'Invalid URL') maps to 404."""
    provider_server.require_prefix = "/v1/"
    card = make_card("chat", base_url=provider_server.base_url + "/wrong/path")
    with pytest.raises(ProviderError) as info:
        run(card, body_for("chat"), retries=0)
    assert info.value.status == 404 and "base URL" in info.value.hint


@pytest.mark.parametrize("style", STYLES)
def test_429_hints_rate_limit(style, provider_server, make_card):
    """429 → rate-limit hint, marked transient."""
    provider_server.queue(rate_limited())
    with pytest.raises(ProviderError) as info:
        list(stream(make_card(style), body_for(style)))
    err = info.value
    assert err.status == 429 and "rate limit" in err.hint
    assert is_transient(err)


@pytest.mark.parametrize("style", STYLES)
def test_500_is_a_provider_error_not_retried(style, provider_server, make_card):
    """500 → ProviderError(status=500), not transient, sent once."""
    provider_server.script(server_error())
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        run(make_card(style), body_for(style), sleep=sleeps)
    assert info.value.status == 500 and not isinstance(info.value, ContextOverflow)
    assert len(provider_server.requests) == 1 and sleeps.calls == []


def test_ordinary_400_keeps_the_provider_message(provider_server, make_card):
    """A plain 400 is a ProviderError with the provider's own message and code."""
    provider_server.queue(HttpError(*ERROR_BODIES["openai_400"]))
    with pytest.raises(ProviderError) as info:
        run(make_card("chat"), body_for("chat"))
    err = info.value
    assert type(err) is ProviderError and err.status == 400
    assert err.code == "invalid_value" and "temperature" in err.message


@pytest.mark.parametrize(
    ("style", "flavor"),
    [
        ("chat", "openai_chat"),
        ("chat", "azure"),
        ("chat", "vllm"),
        ("chat", "llamacpp"),
        ("chat", "gemini"),
        ("responses", "openai_responses"),
        ("anthropic", "anthropic"),
        ("anthropic", "anthropic_max_tokens"),
        ("anthropic", "anthropic_413"),
    ],
)
def test_overflow_becomes_context_overflow_and_is_not_retried(
    style, flavor, provider_server, make_card
):
    """Each provider's overflow → ContextOverflow (status/body kept), one request, no sleep."""
    provider_server.script(overflow(flavor))
    sleeps = Sleeps()
    with pytest.raises(ContextOverflow) as info:
        run(make_card(style), body_for(style), sleep=sleeps)
    err = info.value
    status, _body = ERROR_BODIES[flavor]
    assert err.status == status and err.body
    assert "context window" in err.message
    assert len(provider_server.requests) == 1 and sleeps.calls == []
    assert not is_transient(err)


@pytest.mark.parametrize("style", STYLES)
def test_overflow_reported_inside_the_stream(style, provider_server, make_card):
    """An overflow error event inside a 200 stream is a ContextOverflow too."""
    body = {"error": ERROR_BODIES["openai_responses"][1]["error"]}
    if style == "anthropic":
        body = ERROR_BODIES["anthropic"][1]
    provider_server.queue(StreamFailure(body))
    with pytest.raises(ContextOverflow) as info:
        run(make_card(style), body_for(style))
    assert info.value.status is None


def test_in_stream_non_overflow_error(provider_server, make_card):
    """Anthropic's mid-stream overloaded error is a plain ProviderError, after the partial."""
    provider_server.queue(
        StreamFailure(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            after_chunks=2,
        )
    )
    seen = []
    with pytest.raises(ProviderError) as info:
        for event in stream(make_card("anthropic"), body_for("anthropic")):
            seen.append(event)
    assert type(info.value) is ProviderError and info.value.code == "overloaded_error"
    assert len(seen) == 2 and all(isinstance(e, TextDelta) for e in seen)


@pytest.mark.parametrize("style", STYLES)
def test_connection_refused_hints_at_base_url(style, make_card):
    """Nothing listening → ProviderError(status=None) telling to check the URL and server."""
    card = make_card(style, base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ProviderError) as info:
        list(stream(card, body_for(style)))
    err = info.value
    assert err.status is None and is_transient(err)
    assert card.base_url in err.hint and "running" in err.hint


@pytest.mark.parametrize("style", STYLES)
def test_drop_mid_stream_is_a_network_error(style, provider_server, make_card):
    """A connection cut after two chunks raises a transient network error after the partial."""
    provider_server.queue(Drop(after_chunks=2))
    seen = []
    with pytest.raises(ProviderError) as info:
        for event in stream(make_card(style), body_for(style)):
            seen.append(event)
    assert info.value.status is None and is_transient(info.value)
    assert [type(e) for e in seen] == [TextDelta, TextDelta]


# --------------------------------------------------------------------------- retries


@pytest.mark.parametrize("style", STYLES)
def test_429_then_success_is_retried(style, provider_server, make_card):
    """One 429, then a reply: two requests, one 1-second delay, the reply returned."""
    provider_server.queue(rate_limited(), Text("Second time lucky."))
    sleeps = Sleeps()
    done = run(make_card(style), body_for(style), sleep=sleeps)
    assert done.text == "Second time lucky."
    assert len(provider_server.requests) == 2 and sleeps.calls == [1.0]


def test_429_forever_gives_up_after_two_retries(provider_server, make_card):
    """Persistent 429: 1 + 2 requests, delays 1 s then 2 s, then the 429 reaches the caller."""
    provider_server.script(rate_limited())
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        run(make_card("chat"), body_for("chat"), sleep=sleeps)
    assert info.value.status == 429
    assert len(provider_server.requests) == 3 and sleeps.calls == [1.0, 2.0]


@pytest.mark.parametrize("style", STYLES)
def test_dropped_connection_before_reply_is_retried(style, provider_server, make_card):
    """Two connections closed without an answer, then a reply: three requests, success."""
    provider_server.queue(Drop(), Drop(), Text("Made it."))
    sleeps = Sleeps()
    done = run(make_card(style), body_for(style), sleep=sleeps)
    assert done.text == "Made it."
    assert len(provider_server.requests) == 3 and sleeps.calls == [1.0, 2.0]


def test_dropped_stream_before_any_text_is_retried(provider_server, make_card):
    """Headers sent, then cut before any text: retried, since the user saw nothing yet."""
    provider_server.queue(Drop(after_chunks=0), Text("Fresh start."))
    done = run(make_card("responses"), body_for("responses"), sleep=Sleeps())
    assert done.text == "Fresh start." and len(provider_server.requests) == 2


def test_dropped_stream_after_text_is_not_restarted(provider_server, make_card):
    """A cut after text reached the caller raises instead of silently restarting the reply."""
    provider_server.queue(Drop(after_chunks=2), Text("should not be requested"))
    sleeps = Sleeps()
    got = []
    with pytest.raises(ProviderError) as info:
        for event in stream_with_retries(make_card("chat"), body_for("chat"), sleep=sleeps):
            got.append(event)
    assert is_transient(info.value)
    assert len(provider_server.requests) == 1 and sleeps.calls == []
    assert len(got) == 2


def test_with_retries_wraps_a_whole_call(provider_server, make_card):
    """with_retries retries a complete call (even a mid-stream drop) on transient errors."""
    provider_server.queue(Drop(after_chunks=3), rate_limited(), Text("Done at last."))
    sleeps = Sleeps()
    card = make_card("anthropic")
    done = with_retries(
        lambda: complete(card, body_for("anthropic"), retries=0), sleep=sleeps, delay=0.5
    )
    assert done.text == "Done at last."
    assert len(provider_server.requests) == 3 and sleeps.calls == [0.5, 1.0]


def test_with_retries_never_retries_overflow_or_config_errors():
    """Overflow (even with status 429) and config errors propagate on the first attempt."""
    sleeps = Sleeps()
    calls = []

    def overflowing():
        calls.append(1)
        raise ContextOverflow("too big", status=429)

    with pytest.raises(ContextOverflow):
        with_retries(overflowing, sleep=sleeps)

    def misconfigured():
        calls.append(1)
        raise ProviderConfigError("no key")

    with pytest.raises(ProviderConfigError):
        with_retries(misconfigured, sleep=sleeps)
    assert len(calls) == 2 and sleeps.calls == []


def test_retry_wait_respects_cancel(provider_server, make_card):
    """A stop pressed during the retry wait ends with an interrupted, empty Done."""
    import threading

    provider_server.queue(rate_limited(), Text("never fetched"))
    cancel = threading.Event()
    done = run(make_card("chat"), body_for("chat"), cancel=cancel, sleep=lambda s: cancel.set())
    assert done.interrupted and done.text == ""
    assert len(provider_server.requests) == 1


def test_unknown_style_is_a_config_error():
    """A card with an unknown style cannot be streamed."""
    with pytest.raises(ProviderConfigError):
        list(stream(Card("x", "gemini", "http://127.0.0.1:9/v1", "m"), {}))
