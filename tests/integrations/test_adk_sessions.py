"""``ChatkeepSessionService`` against the real Google ADK: a ``Runner`` with a scripted model
(an ADK ``BaseLlm``) keeps its sessions on chatkeep — create/get/list/delete, events kept whole,
state deltas by scope, images stored once, drawer search and profile isolation."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncGenerator
from typing import Any

import pytest

import chatkeep
from factories import png_data_url

pytest.importorskip("google.adk")
from google.adk.agents import LlmAgent
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event, EventActions
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from chatkeep.integrations.adk import ChatkeepSessionService

IMG = png_data_url(48, 48, noise=True)
PNG = base64.b64decode(IMG.split(",", 1)[1])


class ScriptedLlm(BaseLlm):
    """A model that answers every request with a numbered reply (no network)."""

    model: str = "scripted"
    calls: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        text = f"reply number {self.calls}"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def _runner(store: chatkeep.Store) -> tuple[Runner, ChatkeepSessionService]:
    service = ChatkeepSessionService(store)
    agent = LlmAgent(name="helper", model=ScriptedLlm(), output_key="last_reply")
    return Runner(app_name="trips", agent=agent, session_service=service), service


def _ask(runner: Runner, user: str, sid: str, *parts: types.Part) -> list[Event]:
    async def go() -> list[Event]:
        message = types.Content(role="user", parts=list(parts))
        return [
            e async for e in runner.run_async(user_id=user, session_id=sid, new_message=message)
        ]

    return asyncio.run(go())


def test_a_runner_keeps_its_sessions_on_chatkeep(store: chatkeep.Store) -> None:
    """Turns run through the Runner are stored whole; state deltas land in the session."""
    runner, service = _runner(store)
    assert isinstance(service, BaseSessionService)
    asyncio.run(service.create_session(app_name="trips", user_id="ann", session_id="s1"))
    _ask(runner, "ann", "s1", types.Part(text="Plan a trip to Oslo"))
    _ask(runner, "ann", "s1", types.Part(text="And Bergen?"))
    again = ChatkeepSessionService(store)  # a new service on the same store
    session = asyncio.run(again.get_session(app_name="trips", user_id="ann", session_id="s1"))
    assert session is not None
    texts = [e.content.parts[0].text for e in session.events if e.content and e.content.parts]
    assert texts == ["Plan a trip to Oslo", "reply number 1", "And Bergen?", "reply number 2"]
    assert session.state["last_reply"] == "reply number 2"
    first = asyncio.run(service.get_session(app_name="trips", user_id="ann", session_id="s1"))
    assert first is not None and first.events == session.events  # events come back equal
    recent = asyncio.run(
        again.get_session(
            app_name="trips",
            user_id="ann",
            session_id="s1",
            config=GetSessionConfig(num_recent_events=1),
        )
    )
    assert recent is not None and len(recent.events) == 1
    assert [r["id"] for r in store.sessions.list("trip to oslo")] != []


def test_create_list_delete_and_scoped_state(store: chatkeep.Store) -> None:
    """Sessions are listed per app and user; app:/user: state is shared by scope, temp: is
    never stored; a repeated id is refused; delete removes the session and its entries."""
    service = ChatkeepSessionService(store)

    async def go() -> None:
        a = await service.create_session(
            app_name="trips", user_id="ann", session_id="a", state={"app:tz": "CET", "k": 1}
        )
        with pytest.raises(AlreadyExistsError):
            await service.create_session(app_name="trips", user_id="ann", session_id="a")
        b = await service.create_session(app_name="trips", user_id="ann")
        await service.create_session(app_name="trips", user_id="bob", session_id="c")
        await service.create_session(app_name="other", user_id="ann", session_id="a")
        delta = {"user:lang": "nb", "temp:scratch": 1, "k": 2}
        event = Event(
            author="user",
            invocation_id="i1",
            content=types.Content(role="user", parts=[types.Part(text="hello")]),
            actions=EventActions(state_delta=delta),
        )
        await service.append_event(a, event)
        got = await service.get_session(app_name="trips", user_id="ann", session_id="a")
        assert got is not None
        assert got.state == {"k": 2, "app:tz": "CET", "user:lang": "nb"}
        other = await service.get_session(app_name="trips", user_id="ann", session_id=b.id)
        assert other is not None and other.state == {"app:tz": "CET", "user:lang": "nb"}
        bob = await service.get_session(app_name="trips", user_id="bob", session_id="c")
        assert bob is not None and bob.state == {"app:tz": "CET"}
        assert await service.get_user_state(app_name="trips", user_id="ann") == {"lang": "nb"}
        listed = await service.list_sessions(app_name="trips", user_id="ann")
        assert sorted(s.id for s in listed.sessions) == sorted(["a", b.id])
        assert listed.sessions[-1].id == "a"  # the most recently active last
        everyone = await service.list_sessions(app_name="trips")
        assert len(everyone.sessions) == 3
        await service.delete_session(app_name="trips", user_id="ann", session_id="a")
        assert await service.get_session(app_name="trips", user_id="ann", session_id="a") is None
        assert await service.get_session(app_name="other", user_id="ann", session_id="a")

    asyncio.run(go())


def test_images_are_stored_once(store: chatkeep.Store) -> None:
    """An image sent in several turns and sessions is one blob and comes back byte for byte."""
    runner, service = _runner(store)
    for sid in ("p1", "p2"):
        asyncio.run(service.create_session(app_name="trips", user_id="ann", session_id=sid))
        for k in range(2):
            picture = types.Part(inline_data=types.Blob(mime_type="image/png", data=PNG))
            _ask(runner, "ann", sid, types.Part(text=f"what is on picture {k}?"), picture)
    assert store.stats()["blobs"] == 1
    got = asyncio.run(service.get_session(app_name="trips", user_id="ann", session_id="p2"))
    assert got is not None and got.events[0].content is not None
    assert got.events[0].content.parts[1].inline_data.data == PNG  # type: ignore[index,union-attr]
    assert len(store.sessions.list("picture 1")) == 2


def test_profiles_are_isolated(spec: Any) -> None:
    """The same app, user and session id in two profiles are two sessions."""
    with chatkeep.open(spec.url, profile=spec.profile + "a") as a:
        with chatkeep.open(spec.url, profile=spec.profile + "b") as b:
            runner, service = _runner(a)
            asyncio.run(service.create_session(app_name="trips", user_id="u", session_id="x"))
            _ask(runner, "u", "x", types.Part(text="only in profile a"))
            other = ChatkeepSessionService(b)
            assert (
                asyncio.run(other.get_session(app_name="trips", user_id="u", session_id="x"))
                is None
            )
            assert b.sessions.list("only in profile a") == []
            assert len(asyncio.run(other.list_sessions(app_name="trips")).sessions) == 0


def test_an_event_for_an_unknown_session_is_refused(store: chatkeep.Store) -> None:
    """Appending to a session the store does not hold fails and writes nothing."""
    service = ChatkeepSessionService(store)
    session = asyncio.run(service.create_session(app_name="t", user_id="u", session_id="gone"))
    asyncio.run(service.delete_session(app_name="t", user_id="u", session_id="gone"))
    event = Event(
        author="user", invocation_id="i", content=types.Content(parts=[types.Part(text="x")])
    )
    with pytest.raises(ValueError):
        asyncio.run(service.append_event(session, event))
    assert store.sessions.list() == []


def test_entries_chatkeep_added_read_as_plain_events(store: chatkeep.Store) -> None:
    """An entry added to the session by chatkeep itself reads as a plain text event after the
    events ADK stored, which come back equal."""
    runner, service = _runner(store)
    asyncio.run(service.create_session(app_name="trips", user_id="ann", session_id="m1"))
    _ask(runner, "ann", "m1", types.Part(text="x" * 5000))  # a long question: kept as a blob
    before = asyncio.run(service.get_session(app_name="trips", user_id="ann", session_id="m1"))
    assert before is not None and len(before.events) == 2
    sid = next(r["id"] for r in store.sessions.list() if r["id"].startswith("adk"))
    store.sessions.extend(sid, [{"role": "user", "content": "typed in the panel"}])
    got = asyncio.run(service.get_session(app_name="trips", user_id="ann", session_id="m1"))
    assert got is not None and got.events[:2] == before.events
    assert got.events[2].content.parts[0].text == "typed in the panel"  # type: ignore[union-attr,index]


def test_every_stored_form_reads_back_whole(store: chatkeep.Store) -> None:
    """An event without images is kept as its JSON object (``adk``), one with images under
    ``adkEvent`` with data URLs; entries written before ``adk`` (the event's JSON text under
    ``adkEvent``) read back the same beside them, and so do a PDF and an image of a type no browser
    shows."""
    from chatkeep.integrations.adk import EVENT_KEY, OBJECT_KEY

    service = ChatkeepSessionService(store)
    session = asyncio.run(service.create_session(app_name="t", user_id="u", session_id="forms"))

    def event(*parts: types.Part) -> Event:
        return Event(
            author="user", invocation_id="i", content=types.Content(role="user", parts=list(parts))
        )

    pdf = types.Blob(mime_type="application/pdf", data=b"%PDF-1.4 not really\x00\xff")
    odd = types.Blob(mime_type="image/x-unknown", data=b"\x00\x01 odd bytes")
    events = [
        event(types.Part(text="plain words")),
        event(
            types.Part(text="a picture"),
            types.Part(inline_data=types.Blob(mime_type="image/png", data=PNG)),
        ),
        event(types.Part(text="a document"), types.Part(inline_data=pdf)),
        event(types.Part(inline_data=odd)),
    ]
    for e in events:
        asyncio.run(service.append_event(session, e))
    sid = next(r["id"] for r in store.sessions.list() if r["id"].startswith("adk"))
    entries = store.sessions.get(sid)["history"]  # type: ignore[index]
    assert [OBJECT_KEY in e for e in entries] == [True, False, True, False]
    assert isinstance(entries[1][EVENT_KEY], dict) and isinstance(entries[3][EVENT_KEY], dict)
    # the older form: the event's JSON text, as entries written before the object form hold it
    older = event(types.Part(text="written by an older chatkeep"))
    store.sessions.extend(
        sid,
        [
            {
                "role": "user",
                "content": "written by an older chatkeep",
                EVENT_KEY: older.model_dump_json(exclude_none=True),
            }
        ],
    )
    got = asyncio.run(service.get_session(app_name="t", user_id="u", session_id="forms"))
    assert got is not None and got.events == [*events, older]
    assert got.events[2].content.parts[1].inline_data.data == pdf.data  # type: ignore[index,union-attr]
    assert got.events[3].content.parts[0].inline_data.data == odd.data  # type: ignore[index,union-attr]


def test_values_chatkeep_does_not_store_as_values_are_kept_as_text(store: chatkeep.Store) -> None:
    """An event holding an integer beyond 64 bits (a tool call's argument) is kept as its JSON
    text, with or without images, and reads back equal beside events kept as objects."""
    from chatkeep.integrations.adk import EVENT_KEY, OBJECT_KEY

    service = ChatkeepSessionService(store)
    session = asyncio.run(service.create_session(app_name="t", user_id="u", session_id="big"))
    call = types.Part(function_call=types.FunctionCall(name="count", args={"start": 10**30}))
    picture = types.Part(inline_data=types.Blob(mime_type="image/png", data=PNG))
    events = [
        Event(
            author="user",
            invocation_id="i",
            content=types.Content(role="user", parts=[types.Part(text="count")]),
        ),
        Event(
            author="helper", invocation_id="i", content=types.Content(role="model", parts=[call])
        ),
        Event(
            author="user",
            invocation_id="i",
            content=types.Content(role="user", parts=[picture, call]),
        ),
    ]
    for e in events:
        asyncio.run(service.append_event(session, e))
    got = asyncio.run(service.get_session(app_name="t", user_id="u", session_id="big"))
    assert got is not None and got.events == events
    sid = next(r["id"] for r in store.sessions.list() if r["id"].startswith("adk"))
    entries = store.sessions.get(sid)["history"]  # type: ignore[index]
    assert [OBJECT_KEY in e for e in entries] == [True, False, False]
    assert all(isinstance(e[EVENT_KEY], str) for e in entries[1:])


def test_a_state_value_the_store_refuses_writes_nothing(store: chatkeep.Store) -> None:
    """An event whose state delta holds a value chatkeep does not store (an integer beyond 64
    bits) is refused with a typed error before anything is written: neither the event nor any
    state."""
    service = ChatkeepSessionService(store)
    session = asyncio.run(service.create_session(app_name="t", user_id="u", session_id="st"))
    event = Event(
        author="helper",
        invocation_id="i",
        content=types.Content(role="model", parts=[types.Part(text="counted")]),
        actions=EventActions(state_delta={"app:total": 2**70, "seen": True}),
    )
    with pytest.raises(chatkeep.InvalidValue, match="app:total"):
        asyncio.run(service.append_event(session, event))
    got = asyncio.run(service.get_session(app_name="t", user_id="u", session_id="st"))
    assert got is not None and got.events == [] and got.state == {}
