"""Cache-aware sends over the loopback server: prompt_cache_key, planned Anthropic marks, usage."""

from __future__ import annotations

from conv_helpers import use_provider

import chatkeep
from factories import png_data_url
from support.provider_server import Text


def _marks(body):
    return [
        k
        for k, b in enumerate(b for m in body["messages"] for b in m["content"])
        if "cache_control" in b
    ]


def test_prompt_cache_key_stable_per_session(sqlite_store, provider_server):
    """An opted-in card sends one key for every turn of a conversation, another per session."""
    use_provider(sqlite_store, provider_server, "chat", promptCacheKey=True)
    sqlite_store.chat.send("one")
    sqlite_store.chat.send("two")
    keys = [r.body.get("prompt_cache_key") for r in provider_server.requests]
    assert keys[0] and keys[0] == keys[1]
    assert "one" not in keys[0]
    sqlite_store.sessions.save("first")
    sqlite_store.chat.send("three")
    assert provider_server.requests[-1].body["prompt_cache_key"] != keys[0]
    preview = chatkeep.preview_request(sqlite_store, "four")
    assert (
        preview["body"]["prompt_cache_key"] == provider_server.requests[-1].body["prompt_cache_key"]
    )


def test_no_prompt_cache_key_for_other_servers(sqlite_store, provider_server):
    """A local OpenAI-compatible card without the option sends no prompt_cache_key."""
    use_provider(sqlite_store, provider_server, "responses")
    sqlite_store.chat.send("one")
    assert "prompt_cache_key" not in provider_server.requests[0].body


def test_anthropic_sends_planned_marks_and_keeps_cache_usage(sqlite_store, provider_server):
    """After a screenshot turn the next request reads up to the label: marks there and at the
    end; the provider's cache figures land on the reply."""
    use_provider(sqlite_store, provider_server, "anthropic")
    provider_server.queue(Text("first"), Text("second", prompt_tokens=900, cached_tokens=600))
    sqlite_store.chat.send("look at this", images=[png_data_url(320, 200)])
    reply = sqlite_store.chat.send("and now?")
    first, second = (r.body for r in provider_server.requests)
    # request 1: [question text, image]; the image becomes a label next turn → mark before it
    assert _marks(first) == [0, 1]
    # request 2: [question text, label, reply, new question]: read at 0, end at 3
    assert 0 in _marks(second) and _marks(second)[-1] == 3
    assert len(_marks(second)) + len(second.get("system") or []) <= 4
    assert reply.usage == {"input": 900, "cachedRead": 600, "cacheWrite": 0, "output": 1}
    stored = sqlite_store.history.read()[-1]
    assert stored["usage"] == reply.usage
