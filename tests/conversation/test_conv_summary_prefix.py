"""Summary calls reuse the conversation's cached prefix (SPEC §7.5, §6.5), and the usage of
every paid call is kept: summaries and overflow rescues, over the loopback server through the
real SDK clients (Anthropic's and OpenAI's), which report cached tokens as each API does."""

from __future__ import annotations

import pytest
from conv_helpers import use_provider

from chatkeep.conversation import summarize_attachment
from chatkeep.conversation.summary_prefix import CONTEXT_NOTE
from factories import attachment
from support.provider_server import Text, overflow

QUESTION = "Here are my notes, keep them in mind. " + "note " * 1500  # ~1,900 tokens


def _body(lines: int) -> str:
    return "".join(f"fact {k}: the measured value was {k * 3} units.\n" for k in range(lines))


def _blocks(message) -> list:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _texts(body) -> str:
    """Every text the request carries (system and messages), joined."""
    system = body.get("system") or []
    blocks = [*system, *(b for m in body["messages"] for b in _blocks(m))]
    return "\n".join(b.get("text", "") for b in blocks)


def _bare(block):
    return {k: v for k, v in block.items() if k != "cache_control"}


def _conversation(store, provider_server, style: str, **card) -> dict:
    """One answered question, then a long attachment (stored raw, three summary calls)."""
    use_provider(store, provider_server, style, **card)
    store.local.set("systemPrompt", "Be brief.")
    store.chat.send(QUESTION)
    page = attachment(_body(500), title="Report")
    store.history.append(page)
    return page


def test_anthropic_summary_calls_read_the_conversation_from_cache(store, provider_server):
    """Every call is the conversation's own request (same system, same blocks) with the task
    last: a mark ends the conversation (read next turn), none is on the task; the calls'
    cache figures are stored in the summary usage."""
    page = _conversation(store, provider_server, "anthropic")
    provider_server.queue(*[Text("short", cached_tokens=1800, prompt_tokens=2600)] * 3)
    assert summarize_attachment(store, page["attachId"], chunk_chars=12_000, max_workers=1)
    first, *calls = [r.body for r in provider_server.requests]
    assert len(calls) == 3  # two chunks and the merge
    sent = [_bare(b) for m in first["messages"] for b in _blocks(m)]
    for body in calls:
        assert [_bare(b) for b in body["system"]] == [_bare(b) for b in first["system"]]
        blocks = [b for m in body["messages"] for b in _blocks(m)]
        assert [_bare(b) for b in blocks[: len(sent)]] == sent  # the question, as sent
        task = blocks[-1]
        assert task["text"].startswith(CONTEXT_NOTE) and "cache_control" not in task
        assert "cache_control" in blocks[-2]  # the reply: the end of the conversation
    record = store.local.get("summaryUsage")[-1]
    assert [u["cachedRead"] for u in record["calls"]] == [1800] * 3
    assert all(u["input"] == 2600 for u in record["calls"])


def test_chat_summary_calls_share_the_conversations_cache_key(store, provider_server):
    """GPT-5.5 on an endpoint that takes the key: the calls start with the conversation's
    messages and carry its prompt_cache_key and 24-hour retention; usage kept per call."""
    page = _conversation(
        store, provider_server, "chat", model="gpt-5.5", promptCacheKey=True, name="gpt"
    )
    provider_server.queue(*[Text("short", cached_tokens=1792, prompt_tokens=2500)] * 3)
    assert summarize_attachment(store, page["attachId"], chunk_chars=12_000, max_workers=1)
    first, *calls = [r.body for r in provider_server.requests]
    for body in calls:
        assert body["prompt_cache_key"] == first["prompt_cache_key"]
        assert body["prompt_cache_retention"] == "24h"
        assert body["messages"][:2] == first["messages"][:2]  # system, question
        assert body["messages"][-1]["content"].startswith(CONTEXT_NOTE)
    record = store.local.get("summaryUsage")[-1]
    assert [u["cachedRead"] for u in record["calls"]] == [1792] * 3


@pytest.mark.parametrize("why", ["other model", "reads cost too much", "nothing answered"])
def test_bare_calls_when_the_prefix_would_not_pay(sqlite_store, provider_server, why):
    """Another model answered the conversation (its cache is not this model's), the row's
    reads cost half the input price (three reads cost more than one miss), or nothing was
    answered yet: the calls are bare (the summary system prompt and the task alone), and an
    Anthropic call writes nothing into the cache."""
    store = sqlite_store
    if why == "nothing answered":
        use_provider(store, provider_server, "anthropic")
        page = attachment(_body(500), title="Report")
        store.history.append(page)
    elif why == "other model":
        page = _conversation(store, provider_server, "anthropic")
        providers = store.local.get("providers")
        providers["loop"]["model"] = "claude-sonnet-5"
        store.local.set("providers", providers)
    else:
        page = _conversation(store, provider_server, "chat", model="gpt-4o")
    before = len(provider_server.requests)
    assert summarize_attachment(store, page["attachId"], chunk_chars=12_000, max_workers=1)
    calls = [r.body for r in provider_server.requests[before:]]
    assert len(calls) == 3
    for body in calls:
        blocks = [b for m in body["messages"] for b in _blocks(m)]
        assert len(body["messages"]) == 1 + (body["messages"][0]["role"] == "system")
        assert QUESTION not in _texts(body) and CONTEXT_NOTE not in _texts(body)
        assert not any("cache_control" in b for b in blocks)


@pytest.mark.parametrize(
    ("style", "flavor"),
    [("anthropic", "anthropic"), ("chat", "openai_chat"), ("responses", "openai_responses")],
)
def test_a_rescued_turn_keeps_the_usage_of_its_retry(sqlite_store, provider_server, style, flavor):
    """The overflow costs no tokens; the retry's usage (cache figures included, normalised
    per style) is stored on the reply and counted like any turn."""
    store = sqlite_store
    use_provider(store, provider_server, style)
    store.history.append(attachment(_body(400)))
    provider_server.queue(
        overflow(flavor), Text("ok", prompt_tokens=3000, cached_tokens=1200, cache_write_tokens=300)
    )
    reply = store.chat.send("question")
    assert reply.rescued
    want = {"input": 3000, "cachedRead": 1200, "cacheWrite": 300, "output": 1}
    assert reply.usage == want
    assert store.history.read()[-1]["usage"] == want


def test_a_call_whose_conversation_overflows_is_made_again_bare(sqlite_store, provider_server):
    """The conversation plus the task is too long for the model: the call is sent again
    without the conversation, the summary lands, and only the paid call is counted."""
    store = sqlite_store
    page = _conversation(store, provider_server, "anthropic")
    provider_server.queue(overflow("anthropic"), Text("condensed"))
    assert summarize_attachment(store, page["attachId"], chunk_chars=40_000)
    reused, bare = (r.body for r in provider_server.requests[1:])
    assert CONTEXT_NOTE in _texts(reused) and QUESTION in _texts(reused)
    assert CONTEXT_NOTE not in _texts(bare) and QUESTION not in _texts(bare)
    assert len(store.local.get("summaryUsage")[-1]["calls"]) == 1
    assert "condensed" in str(store.history.read()[-1]["content"])
