"""Framework session ids at the public boundary, with the real installed frameworks: the one id
rule of ``chatkeep.limits`` refuses, when the adapter is made, every id the store could not
read back (NUL, over-long, empty, not Unicode), and writes nothing; a normal id, up to the
longest allowed, round-trips through the adapter, the library and the CLI."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import chatkeep
from chatkeep.limits import MAX_ID_CHARS
from clirun import run

pytest.importorskip("agents")
pytest.importorskip("langchain_core")
from langchain_core.messages import AIMessage, HumanMessage

from chatkeep.integrations.agents import ChatkeepSession
from chatkeep.integrations.langchain import ChatkeepChatMessageHistory

BAD_IDS = {
    "nul": "a\x00b",
    "nul-only": "\x00",
    "over-long": "x" * (MAX_ID_CHARS + 1),
    "empty": "",
    "lone-surrogate": "id-\ud800",
    "not-a-string": 42,
}
ADAPTERS = {"agents": ChatkeepSession, "langchain": ChatkeepChatMessageHistory}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("bad", sorted(BAD_IDS))
def test_an_unreadable_id_is_refused_when_the_adapter_is_made(
    store: chatkeep.Store, spec: Any, adapter: str, bad: str
) -> None:
    """NUL, over-long, empty, non-Unicode and non-string ids: InvalidValue with a hint at
    construction, nothing written."""
    store.history.append({"role": "user", "content": "kept"})
    before = spec.dump()
    with pytest.raises(chatkeep.InvalidValue) as err:
        ADAPTERS[adapter](store, BAD_IDS[bad])
    assert err.value.hint and "192 characters" in err.value.hint
    assert spec.dump() == before


def test_a_nul_id_no_longer_loses_acked_items(store: chatkeep.Store, spec: Any) -> None:
    """The reported loss: with a NUL id nothing is acked, so nothing acked can be lost; the
    NUL-free id next to it keeps every item it acked."""
    with pytest.raises(chatkeep.InvalidValue):
        ChatkeepSession(store, "a\x00b")
    session = ChatkeepSession(store, "ab")
    first = [{"role": "user", "content": "first"}]
    second = [{"role": "user", "content": "second"}]

    async def go() -> list[Any]:
        await session.add_items(first)
        await session.add_items(second)
        return await ChatkeepSession(spec.open(), "ab").get_items()

    assert asyncio.run(go()) == first + second
    assert [r["id"] for r in store.sessions.list()] == ["ab"]


def _longest_id() -> str:
    """The longest id the rule allows, mixed case and non-ASCII: the kind a framework makes."""
    head = "Agent-Ünïcode-用户-"
    return head + "Z" * (MAX_ID_CHARS - len(head))


def test_the_longest_id_round_trips_through_both_adapters(store: chatkeep.Store, spec: Any) -> None:
    """An id of exactly the limit, mixed case and non-ASCII, reads back through a new adapter
    on a new connection, and is the session's id in the drawer."""
    sid = _longest_id()
    assert len(sid) == MAX_ID_CHARS
    items = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    asyncio.run(ChatkeepSession(store, sid).add_items(items))
    lc_id = sid[:-1] + "L"
    ChatkeepChatMessageHistory(store, lc_id).add_messages(
        [HumanMessage(content="q"), AIMessage(content="a")]
    )
    with spec.open() as again:
        assert asyncio.run(ChatkeepSession(again, sid).get_items()) == items
        assert [m.content for m in ChatkeepChatMessageHistory(again, lc_id).messages] == ["q", "a"]
        assert {r["id"] for r in again.sessions.list()} == {sid, lc_id}


def test_a_framework_id_is_shown_by_the_console_script(store: chatkeep.Store, spec: Any) -> None:
    """`chatkeep sessions show ID` finds a framework session by its full mixed-case id (ids
    are matched exactly before prefixes are matched case-insensitively)."""
    sid = "Agent-User-42"
    asyncio.run(ChatkeepSession(store, sid).add_items([{"role": "user", "content": "hello"}]))
    env = {"CHATKEEP_PROFILE": spec.profile}
    shown = run(spec.url, "sessions", "show", sid, env=env)
    assert "hello" in shown.stdout
    assert "hello" in run(spec.url, "sessions", "show", "agent-user", env=env).stdout
