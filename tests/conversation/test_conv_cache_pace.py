"""The pace the cache lifetime is chosen from, kept by the engine across conversations, and
Claude's cache marks through OpenRouter as the real OpenAI SDK puts them on the wire."""

from __future__ import annotations

import time

from conv_helpers import use_provider

import chatkeep
from chatkeep.providers import complete, resolve_provider
from chatkeep.rules.cache import PACE_KEY
from chatkeep.rules.cache_rules import find_rule
from chatkeep.rules.wire import build_request
from support.provider_server import Text

MINUTE = 60_000


def _ttls(body) -> set:
    blocks = [*(body.get("system") or []), *(b for m in body["messages"] for b in m["content"])]
    return {b["cache_control"].get("ttl") for b in blocks if "cache_control" in b}


def test_a_slow_users_first_turn_asks_for_the_hour(store, provider_server):
    """The profile's record says the user asks every ten minutes: a new conversation's first
    request already asks for the 1-hour lifetime (preview and send agree); every send adds
    its own time to the record (five at most)."""
    use_provider(store, provider_server, "anthropic")
    yesterday = int(time.time() * 1000) - 24 * 60 * MINUTE
    store.local.set(PACE_KEY, [yesterday + k * 10 * MINUTE for k in range(5)])
    assert _ttls(chatkeep.preview_request(store, "hello")["body"]) == {"1h"}
    before = int(time.time() * 1000)
    store.chat.send("hello")
    assert _ttls(provider_server.requests[0].body) == {"1h"}
    record = store.local.get(PACE_KEY)
    asked = store.history.read()[0]["createdAt"]
    assert len(record) == 5 and record[-1] == asked >= before
    assert record[:4] == [yesterday + k * 10 * MINUTE for k in range(1, 5)]


def test_a_fast_or_unknown_pace_keeps_the_default(store, provider_server):
    """No record, then questions seconds apart: every mark asks for the default lifetime."""
    use_provider(store, provider_server, "anthropic")
    store.chat.send("one")
    store.chat.send("two")
    assert [_ttls(r.body) for r in provider_server.requests] == [{None}, {None}]
    assert len(store.local.get(PACE_KEY)) == 2


def test_openrouter_claude_marks_reach_the_wire(provider_server):
    """A chat request built for Claude through OpenRouter, sent by the real OpenAI SDK client:
    the body on the wire carries the planned ``cache_control`` parts unchanged."""
    base = "https://openrouter.ai/api/v1"
    model = "anthropic/claude-sonnet-5"
    history = [
        {"role": "user", "content": "x " * 4000, "createdAt": 1},
        {"role": "assistant", "content": "ok " * 500},
    ]
    body = build_request(
        "chat",
        history,
        user_entry={"role": "user", "content": "and then?", "createdAt": 2},
        system_prompt="Be brief.",
        model=model,
        base_url=base,
        cache_rule=find_rule("chat", base, model),
    ).body
    card = resolve_provider(
        {
            "providers": {
                "or": {
                    "style": "chat",
                    "baseUrl": provider_server.url("/v1"),
                    "model": model,
                    "apiKey": "sk-test",
                }
            }
        },
        "or",
    )
    provider_server.queue(Text("fine"))
    assert complete(card, body).text == "fine"
    sent = provider_server.requests[0].body["messages"]
    marked = [p for m in sent if isinstance(m["content"], list) for p in m["content"]]
    marked = [p for p in marked if "cache_control" in p]
    assert marked and all(p["type"] == "text" for p in marked)
    assert sent == body["messages"]
