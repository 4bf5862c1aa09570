"""``ChatkeepSession`` against the real OpenAI Agents SDK: the Session protocol, items kept
verbatim, images stored once, drawer visibility, and the request-rules input filter."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import chatkeep
from factories import png_data_url

agents = pytest.importorskip("agents")
from agents.memory import Session  # noqa: E402
from agents.run_config import CallModelData, ModelInputData, RunConfig  # noqa: E402

from chatkeep.integrations.agents import ChatkeepSession, call_model_input_filter  # noqa: E402

IMG = png_data_url(48, 48, noise=True)


def _turn(question: str, answer: str, image: str | None = None) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"type": "input_text", "text": question}]
    if image:
        content.append({"type": "input_image", "image_url": image, "detail": "auto"})
    return [
        {"role": "user", "content": content},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": answer, "annotations": []}],
        },
    ]


def test_is_an_sdk_session_and_keeps_items_verbatim(store: chatkeep.Store) -> None:
    """The SDK's runtime Session protocol accepts it; items come back equal, in order."""
    session = ChatkeepSession(store, "agent-user-1")
    assert isinstance(session, Session)
    items = _turn("What is in the picture?", "A noisy square.", IMG)

    async def go() -> None:
        await session.add_items(items[:2])
        await session.add_items(items[2:])
        assert await session.get_items() == items
        assert await session.get_items(limit=2) == items[-2:]

    asyncio.run(go())


def test_pop_and_clear(store: chatkeep.Store) -> None:
    """pop_item removes and returns the newest item; clear_session empties the session."""
    session = ChatkeepSession(store, "agent-user-2")
    items = _turn("q", "a")

    async def go() -> None:
        assert await session.pop_item() is None
        await session.add_items(items)
        assert await session.pop_item() == items[-1]
        assert await session.get_items() == items[:-1]
        await session.clear_session()
        assert await session.get_items() == []

    asyncio.run(go())
    assert store.sessions.get("agent-user-2") is None


def test_visible_and_searchable_in_the_drawer(store: chatkeep.Store) -> None:
    """The SDK conversation is a saved session: listed, found by its text, readable entries."""
    asyncio.run(
        ChatkeepSession(store, "agent-user-3").add_items(
            _turn("Plan a trip to Oslo", "Go in June.")
        )
    )
    hits = store.sessions.list("go in june")
    assert [h["id"] for h in hits] == ["agent-user-3"] and hits[0]["contentMatch"]
    assert store.sessions.list()[0]["name"] == "Plan a trip to Oslo"
    body = store.sessions.get("agent-user-3")["history"]
    assert body[0]["content"] == "Plan a trip to Oslo"
    assert body[1]["content"] == '[tool call] lookup({"q": 1})'
    assert body[3]["role"] == "assistant" and body[3]["content"] == "Go in June."
    assert store.history.read() == []


def test_images_are_stored_once(store: chatkeep.Store) -> None:
    """The same image in many turns and two sessions is one blob in the store."""

    async def go() -> None:
        for sid in ("s-a", "s-b"):
            session = ChatkeepSession(store, sid)
            for k in range(3):
                await session.add_items(_turn(f"turn {k}", "ok", IMG))

    asyncio.run(go())
    assert store.stats()["blobs"] == 1


def test_continues_a_chatkeep_session(store: chatkeep.Store) -> None:
    """An existing chatkeep session's entries come back as plain SDK messages."""
    store.history.append({"role": "user", "content": "hello from the panel"})
    store.history.append({"role": "assistant", "content": "hi"})
    row = store.sessions.save("panel chat")
    items = asyncio.run(ChatkeepSession(store, row["id"]).get_items())
    assert items == [
        {"role": "user", "content": "hello from the panel"},
        {"role": "assistant", "content": "hi"},
    ]


def test_bad_session_id_is_a_typed_error(store: chatkeep.Store) -> None:
    """An empty or over-long session id is an InvalidValue with a hint."""
    for bad in ("", "x" * 300):
        with pytest.raises(chatkeep.InvalidValue):
            ChatkeepSession(store, bad)


def _call_data(items: list[Any]) -> CallModelData[Any]:
    agent = agents.Agent(name="helper", instructions="be brief")
    return CallModelData(
        model_data=ModelInputData(input=items, instructions="be brief"), agent=agent, context=None
    )


def test_input_filter_labels_answered_images_and_keeps_the_new_one() -> None:
    """call_model_input_filter: images already answered go as labels; the newest turn's image
    and every non-message item pass unchanged."""
    old = _turn("first picture?", "a square", IMG)
    new = [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "and this?"},
                {"type": "input_image", "image_url": IMG, "detail": "auto"},
            ],
        }
    ]
    data = _call_data([*old, *new])
    out = call_model_input_filter(data)
    assert isinstance(out, ModelInputData) and out.instructions == "be brief"
    first = out.input[0]["content"]
    assert all(p.get("type") != "input_image" for p in first) or isinstance(first, str)
    assert "[" in str(first)  # a label names the image instead of its bytes
    assert out.input[1:4] == old[1:4]
    assert out.input[-1] == new[0]
    assert len(str(out.input)) < len(str(data.model_data.input))
    RunConfig(call_model_input_filter=call_model_input_filter)  # the SDK accepts it


def test_input_filter_stubs_cold_attachments() -> None:
    """An old long attachment becomes a short stub once several user turns follow it."""
    body = "word " * 4000
    att1 = chatkeep.build_page_context_text(
        {"title": "Old page", "url": "https://example.com/a"}, body, "full"
    )
    att2 = chatkeep.build_page_context_text(
        {"title": "New page", "url": "https://example.com/b"}, "short", "full"
    )
    items: list[Any] = [{"role": "user", "content": att1}]
    for k in range(4):
        items += [
            {"role": "user", "content": f"question {k}"},
            {"role": "assistant", "content": f"answer {k}"},
        ]
    items.append({"role": "user", "content": att2})
    out = call_model_input_filter(_call_data(items)).input
    assert len(out[0]["content"]) < len(att1) / 4
    assert "Title: Old page" in out[0]["content"] and "trimmed" in out[0]["content"]
    assert out[1:] == items[1:]


def test_input_filter_without_changes_returns_the_same_items() -> None:
    """Nothing to rewrite: the filter passes the input list through as it is."""
    items = [{"role": "user", "content": "hi"}]
    assert call_model_input_filter(_call_data(items)).input is items


def test_runner_with_chatkeep_session_over_loopback(store: chatkeep.Store) -> None:
    """A real Runner.run against the loopback Responses server: two turns land in the session,
    and the second request carries the first image as a label, not its bytes."""
    from openai import AsyncOpenAI

    from support.provider_server import ProviderServer, Text

    agents.set_tracing_disabled(True)
    with ProviderServer() as server:
        server.queue(Text("A noisy square."), Text("Still a square."))
        client = AsyncOpenAI(base_url=server.url("/v1"), api_key="test-key", max_retries=0)
        model = agents.OpenAIResponsesModel(model="gpt-test", openai_client=client)
        agent = agents.Agent(name="helper", instructions="be brief", model=model)
        session = ChatkeepSession(store, "runner-1")
        config = RunConfig(call_model_input_filter=call_model_input_filter, tracing_disabled=True)
        first = [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is this?"},
                    {"type": "input_image", "image_url": IMG, "detail": "auto"},
                ],
            }
        ]

        async def go() -> tuple[Any, Any]:
            r1 = await agents.Runner.run(agent, first, session=session, run_config=config)
            r2 = await agents.Runner.run(agent, "And now?", session=session, run_config=config)
            return r1, r2

        r1, r2 = asyncio.run(go())
        assert (r1.final_output, r2.final_output) == ("A noisy square.", "Still a square.")
        first_body, second_body = (r.body for r in server.requests)
    assert IMG in str(first_body)
    assert IMG not in str(second_body)
    items = asyncio.run(session.get_items())
    assert IMG in str(items[0])  # the session keeps the pixels
    assert [i.get("role") for i in items if "role" in i][-1] == "assistant"
    assert "Still a square." in store.sessions.get("runner-1")["history"][-1]["content"]


def test_an_image_type_the_store_refuses_is_still_kept_verbatim(store: chatkeep.Store) -> None:
    """An SVG the entry validator does not take is labelled in the drawer, the item kept whole."""
    svg = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="
    item = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "an icon"},
            {"type": "input_image", "image_url": svg, "detail": "auto"},
        ],
    }
    session = ChatkeepSession(store, "svg-1")
    asyncio.run(session.add_items([item]))
    assert asyncio.run(session.get_items()) == [item]


def test_values_chatkeep_does_not_store_as_values_are_kept_as_text(store: chatkeep.Store) -> None:
    """An item holding an integer beyond 64 bits is kept as its JSON text beside items kept as
    objects; all come back equal."""
    from chatkeep.integrations.agents import ITEM_KEY

    session = ChatkeepSession(store, "agents-big")
    items = [
        {"role": "user", "content": "count"},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "count",
            "arguments": "{}",
            "seed": 2**70,
        },
    ]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == items
    entries = store.sessions.get("agents-big")["history"]  # type: ignore[index]
    assert [type(e[ITEM_KEY]) for e in entries] == [dict, str]


def test_session_settings_and_writers_on_several_threads(store: chatkeep.Store) -> None:
    """``SessionSettings(limit=…)`` (or a dict of its fields) is what ``get_items()`` returns
    without a limit; an unknown field is refused as the SDK refuses it. One session written
    from eight threads at once, each on its own event loop (an ``asyncio.Lock`` serves one
    loop only: shared, it hung), keeps every item."""
    import threading

    from agents.memory import SessionSettings

    session = ChatkeepSession(store, "agent-threads", session_settings={"limit": 3})
    assert isinstance(session.session_settings, SessionSettings)
    with pytest.raises(TypeError, match="limitt"):
        ChatkeepSession(store, "agent-threads", session_settings={"limitt": 3})

    def write(k: int) -> None:
        items = [{"role": "user", "content": f"thread {k} item {j}"} for j in range(5)]
        loop = asyncio.new_event_loop()
        try:
            for item in items:
                loop.run_until_complete(session.add_items([item]))
        finally:
            loop.close()

    threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)

    async def read() -> tuple[list[Any], list[Any]]:
        return await session.get_items(), await session.get_items(limit=100)

    newest, every = asyncio.run(read())
    assert len(newest) == 3 and newest == every[-3:]
    got = sorted(item["content"] for item in every)
    assert got == sorted(f"thread {k} item {j}" for k in range(8) for j in range(5))
    for k in range(8):  # each thread's items in the order it wrote them
        mine = [i["content"] for i in every if i["content"].startswith(f"thread {k} ")]
        assert mine == [f"thread {k} item {j}" for j in range(5)]
