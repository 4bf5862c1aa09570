"""``ChatkeepMessageHistory`` and ``request_rules`` against the real Pydantic AI, driven by its
own test models (``FunctionModel``, ``TestModel``): messages kept whole, images stored once,
drawer search, the history processor, profile isolation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import chatkeep
from factories import png_data_url

pytest.importorskip("pydantic_ai")
from pydantic_ai import Agent
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from chatkeep.integrations.pydantic_ai import ChatkeepMessageHistory, request_rules

IMG = png_data_url(48, 48, noise=True)


def _png() -> bytes:
    import base64

    return base64.b64decode(IMG.split(",", 1)[1])


def _echo(seen: list[list[ModelMessage]]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart(content=f"reply number {len(seen)}")])

    return FunctionModel(answer)


def _dump(messages: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(messages)


def test_runs_continue_from_the_stored_history(store: chatkeep.Store) -> None:
    """new_messages() saved after each run come back as the next run's history, whole."""
    seen: list[list[ModelMessage]] = []
    agent = Agent(_echo(seen), system_prompt="be brief")
    history = ChatkeepMessageHistory(store, "pai-1")
    first = agent.run_sync("What is the tram timetable?", message_history=history.messages())
    history.add_messages(first.new_messages())
    again = ChatkeepMessageHistory(store, "pai-1")
    assert _dump(again.messages()) == _dump(first.all_messages())
    second = agent.run_sync("And on Sunday?", message_history=again.messages())
    again.add_messages(second.new_messages())
    assert _dump(history.messages()) == _dump(second.all_messages())
    assert len(seen[1]) == 3  # the first question, its answer and the new question
    assert asyncio.run(history.aget_messages()) is not None
    history.clear()
    assert history.messages() == [] and store.sessions.get("pai-1") is None


def test_images_stored_once_and_found_in_the_drawer(store: chatkeep.Store) -> None:
    """An image sent in several turns and sessions is one blob; the text is searchable."""
    agent = Agent(TestModel(custom_output_text="a noisy square"))
    for sid in ("pai-2", "pai-3"):
        history = ChatkeepMessageHistory(store, sid)
        for k in range(2):
            prompt: list[Any] = [
                f"look at picture {k}",
                BinaryContent(_png(), media_type="image/png"),
            ]
            run = agent.run_sync(prompt, message_history=history.messages())
            history.add_messages(run.new_messages())
        back = history.messages()
        image = back[0].parts[-1].content[1]  # type: ignore[union-attr,index]
        assert isinstance(image, BinaryContent) and image.data == _png()
    assert store.stats()["blobs"] == 1
    assert {r["id"] for r in store.sessions.list("look at picture 1")} == {"pai-2", "pai-3"}
    entries = store.sessions.get("pai-2")["history"]  # type: ignore[index]
    assert entries[0]["content"][1]["image_url"]["url"] == IMG  # the drawer shows the image


def test_history_processor_labels_answered_images(store: chatkeep.Store) -> None:
    """As a history processor, the rules send an answered image as a label; the stored
    history keeps the pixels."""
    seen: list[list[ModelMessage]] = []
    agent = _with_rules(_echo(seen))
    history = ChatkeepMessageHistory(store, "pai-4")
    picture = BinaryContent(_png(), media_type="image/png")
    run = agent.run_sync(["what is this?", picture], message_history=history.messages())
    history.add_messages(run.new_messages())
    assert any(isinstance(c, BinaryContent) for c in _prompt(seen[0][0]))  # first call: pixels
    run = agent.run_sync("and its colour?", message_history=history.messages())
    history.add_messages(run.new_messages())
    sent = _prompt(seen[1][0])
    assert not any(isinstance(c, BinaryContent) for c in sent)
    assert any(isinstance(c, str) and "image" in c.lower() for c in sent)
    assert any(isinstance(c, BinaryContent) for c in _prompt(history.messages()[0]))


def test_request_rules_leave_unanswered_images_and_other_parts() -> None:
    """Nothing answered yet: the same list comes back; an ImageUrl stays the same object."""
    url = ImageUrl(url="https://example.org/a.png")
    msgs: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content=["see", url])])]
    assert request_rules(msgs) is msgs
    msgs.append(ModelResponse(parts=[TextPart(content="seen")]))
    msgs.append(ModelRequest(parts=[UserPromptPart(content="next")]))
    assert request_rules(msgs)[0] is msgs[0]  # not a data URL: only labels what it can read


def test_profiles_are_isolated(spec: Any) -> None:
    """The same session id in two profiles of one database holds two conversations."""
    agent = Agent(TestModel(custom_output_text="ok"))
    with chatkeep.open(spec.url, profile=spec.profile + "a") as a:
        with chatkeep.open(spec.url, profile=spec.profile + "b") as b:
            ha, hb = ChatkeepMessageHistory(a, "same"), ChatkeepMessageHistory(b, "same")
            ha.add_messages(agent.run_sync("only in a").new_messages())
            assert hb.messages() == [] and b.sessions.list("only in a") == []
            assert len(ha.messages()) == 2
            ha.clear()


def test_bad_input_is_refused_and_changes_nothing(store: chatkeep.Store) -> None:
    """Something that is not a message is a typed error; nothing is written."""
    history = ChatkeepMessageHistory(store, "pai-5")
    with pytest.raises(chatkeep.InvalidValue):
        history.add_messages(["not a message"])  # type: ignore[list-item]
    with pytest.raises(chatkeep.InvalidValue):
        ChatkeepMessageHistory(store, "")
    assert store.sessions.get("pai-5") is None


def _with_rules(model: Any) -> Agent[None, str]:
    """An agent with ``request_rules`` as its history processor, the way this Pydantic AI
    takes one (a keyword in 1.x, the ``ProcessHistory`` capability later)."""
    try:
        return Agent(model, history_processors=[request_rules])  # type: ignore[call-arg]
    except TypeError:
        from pydantic_ai.capabilities import ProcessHistory

        return Agent(model, capabilities=[ProcessHistory(request_rules)])


def _prompt(message: ModelMessage) -> list[Any]:
    parts = [p for p in message.parts if isinstance(p, UserPromptPart)]
    content = parts[0].content
    return [content] if isinstance(content, str) else list(content)


def test_a_run_with_a_tool_call_saves_its_question_whole(store: chatkeep.Store) -> None:
    """Within one run the model answers a tool call before its reply: the run's own question is
    not labelled, so new_messages() (what is saved) keeps the picture's bytes."""
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart(content="it is square")])
        return ModelResponse(parts=[ToolCallPart(tool_name="measure", args={})])

    agent = _with_rules(FunctionModel(answer))

    @agent.tool_plain
    def measure() -> str:
        return "48 by 48"

    history = ChatkeepMessageHistory(store, "pai-6")
    picture = BinaryContent(_png(), media_type="image/png")
    run = agent.run_sync(["what shape?", picture], message_history=history.messages())
    history.add_messages(run.new_messages())
    assert any(isinstance(c, BinaryContent) for c in _prompt(history.messages()[0]))


def test_every_stored_form_reads_back_whole(store: chatkeep.Store) -> None:
    """Long replies (kept as blobs), text starting with NUL, tool calls and images come back
    equal to what was saved; an entry chatkeep itself added reads as a plain message."""
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart

    saved: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content="\x00starts with NUL")]),
        ModelResponse(parts=[TextPart(content="long " * 3000)]),
        ModelResponse(parts=[ToolCallPart(tool_name="measure", args={"unit": "px"})]),
        ModelRequest(parts=[ToolReturnPart(tool_name="measure", content="48 by 48")]),
        ModelRequest(
            parts=[UserPromptPart(content=["look", BinaryContent(_png(), media_type="image/png")])]
        ),
        ModelResponse(parts=[TextPart(content="a square")]),
    ]
    history = ChatkeepMessageHistory(store, "pai-7")
    history.add_messages(saved)
    assert _dump(history.messages()) == _dump(saved)
    store.sessions.extend("pai-7", [{"role": "user", "content": "typed in the panel"}])
    back = history.messages()
    assert _dump(back[:-1]) == _dump(saved)
    assert _prompt(back[-1]) == ["typed in the panel"]


def test_null_values_that_are_data_come_back(store: chatkeep.Store) -> None:
    """A message is kept without its null fields only when it reads back the same: a tool
    result whose content holds a null keeps it."""
    from pydantic_ai.messages import ToolReturnPart

    saved: list[ModelMessage] = [
        ModelRequest(
            parts=[ToolReturnPart(tool_name="lookup", content={"found": None, "tries": 2})]
        ),
        ModelResponse(parts=[TextPart(content="nothing found")]),
    ]
    history = ChatkeepMessageHistory(store, "pai-8")
    history.add_messages(saved)
    back = history.messages()
    assert _dump(back) == _dump(saved)
    assert back[0].parts[0].content == {"found": None, "tries": 2}  # type: ignore[union-attr]


def test_a_null_that_is_data_is_kept_after_messages_of_the_same_look(
    store: chatkeep.Store,
) -> None:
    """A lean form that read back once is trusted for messages leaving out the same fields: a
    tool result holding a null, saved after results that look the same without it (and after
    many of the same shape that did read back), still keeps its null, each time."""
    from pydantic_ai.messages import ToolReturnPart

    def result(content: dict[str, Any]) -> ModelMessage:
        return ModelRequest(parts=[ToolReturnPart(tool_name="lookup", content=content)])

    saved: list[ModelMessage] = []
    history = ChatkeepMessageHistory(store, "pai-11")
    for k in range(12):
        turn = [
            result({"tries": k}),
            ModelResponse(parts=[TextPart(content=f"found {k}")]),
            result({"found": None, "tries": k}),
        ]
        history.add_messages(turn[:2])
        history.add_messages(turn[2:])
        saved.extend(turn)
    back = history.messages()
    assert _dump(back) == _dump(saved)
    nulls = [m.parts[0].content for m in back[2::3]]  # type: ignore[union-attr]
    assert nulls == [{"found": None, "tries": k} for k in range(12)]


def test_values_chatkeep_does_not_store_as_values_are_kept_as_text(
    store: chatkeep.Store,
) -> None:
    """A message holding what chatkeep does not store as a value (an integer beyond 64 bits,
    nesting deeper than 99 levels) is kept as its JSON text, images included, beside messages
    kept as objects: nothing is refused and every message reads back equal."""
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart

    from chatkeep.integrations.pydantic_ai import MESSAGE_KEY, OBJECT_KEY

    deep: Any = "bottom"
    for _ in range(120):
        deep = [deep]
    saved: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content="count the grains")]),
        ModelResponse(parts=[ToolCallPart(tool_name="count", args={"start": 10**30})]),
        ModelRequest(parts=[ToolReturnPart(tool_name="count", content={"nested": deep})]),
        ModelRequest(
            parts=[
                UserPromptPart(
                    content=["and this one", BinaryContent(_png(), media_type="image/png")]
                ),
                ToolReturnPart(tool_name="count", content=2**70),
            ]
        ),
        ModelResponse(parts=[TextPart(content="many")]),
    ]
    history = ChatkeepMessageHistory(store, "pai-12")
    history.add_messages(saved)
    back = history.messages()
    assert _dump(back) == _dump(saved)
    assert back[1].parts[0].args == {"start": 10**30}  # type: ignore[union-attr]
    entries = store.sessions.get("pai-12")["history"]  # type: ignore[index]
    assert [OBJECT_KEY in e for e in entries] == [True, False, False, False, True]
    assert all(isinstance(e[MESSAGE_KEY], str) for e in entries[1:4])
    assert entries[3]["content"][1]["type"] == "image_url"  # the drawer still shows the image


def test_messages_kept_as_json_text_still_read(store: chatkeep.Store) -> None:
    """A message is kept as its JSON object; entries written before that, holding the
    message's JSON text, read back the same, mixed with new ones."""
    from chatkeep.integrations.pydantic_ai import MESSAGE_KEY, OBJECT_KEY

    saved: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content="an older question")]),
        ModelResponse(parts=[TextPart(content="an older answer")]),
    ]
    older = [
        {"role": r, "content": "…", MESSAGE_KEY: _dump([m])[1:-1].decode()}
        for r, m in zip(("user", "assistant"), saved, strict=True)
    ]
    store.sessions.add_many([({"id": "pai-9", "name": ""}, older)])
    history = ChatkeepMessageHistory(store, "pai-9")
    newer = [ModelRequest(parts=[UserPromptPart(content="a newer question")])]
    history.add_messages(newer)
    entries = store.sessions.get("pai-9")["history"]  # type: ignore[index]
    assert isinstance(entries[-1][OBJECT_KEY], dict) and MESSAGE_KEY not in entries[-1]
    assert _dump(history.messages()) == _dump(saved + newer)


def test_a_usage_keeps_only_its_counts_and_reads_back_whole(store: chatkeep.Store) -> None:
    """A response's usage is kept without the counts left at zero; it reads back equal,
    details and all, and an all-zero usage reads back as one."""
    from pydantic_ai.usage import RequestUsage

    from chatkeep.integrations.pydantic_ai import OBJECT_KEY

    counted = RequestUsage(input_tokens=812, output_tokens=64, details={"reasoning_tokens": 0})
    saved: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content="how far is the bridge?")]),
        ModelResponse(parts=[TextPart(content="two stops")], usage=counted),
        ModelResponse(parts=[TextPart(content="no usage counted")]),
    ]
    history = ChatkeepMessageHistory(store, "pai-10")
    history.add_messages(saved)
    back = history.messages()
    assert _dump(back) == _dump(saved)
    assert back[1].usage == counted and back[2].usage == RequestUsage()  # type: ignore[union-attr]
    entries = store.sessions.get("pai-10")["history"]  # type: ignore[index]
    assert entries[1][OBJECT_KEY]["usage"] == {
        "input_tokens": 812,
        "output_tokens": 64,
        "details": {"reasoning_tokens": 0},
    }
    assert entries[2][OBJECT_KEY]["usage"] == {}


def test_a_null_field_of_the_callers_object_is_kept_after_plain_values_of_its_look(
    store: chatkeep.Store,
) -> None:
    """A tool result that is an object of the caller's (a Pydantic model) with a null field is
    dumped by Pydantic without that field when nulls are left out, the same as a plain value
    without it: saved after many plain values of that look (each read back and trusted), it
    still keeps its null. Messages of Pydantic AI's own objects alone are kept lean."""
    from pydantic import BaseModel
    from pydantic_ai.messages import ToolReturnPart

    from chatkeep.integrations.pydantic_ai import OBJECT_KEY

    class Found(BaseModel):
        tries: int
        found: str | None = None

    def result(content: Any) -> ModelMessage:
        return ModelRequest(parts=[ToolReturnPart(tool_name="lookup", content=content)])

    history = ChatkeepMessageHistory(store, "pai-13")
    saved: list[ModelMessage] = []
    for k in range(12):
        turn = [result({"tries": k}), ModelResponse(parts=[TextPart(content=f"found {k}")])]
        history.add_messages(turn)
        saved.extend(turn)
    last = [result(Found(tries=12)), ModelRequest(parts=[UserPromptPart(content="and?")])]
    history.add_messages(last)
    saved.extend(last)
    back = history.messages()
    assert _dump(back) == _dump(saved)
    assert back[-2].parts[0].content == {"tries": 12, "found": None}  # type: ignore[union-attr]
    entries = store.sessions.get("pai-13")["history"]  # type: ignore[index]
    assert "timestamp" not in entries[-1][OBJECT_KEY]  # a request's null timestamp left out
    assert entries[-2][OBJECT_KEY]["parts"][0]["content"] == {"tries": 12, "found": None}


def test_a_null_field_of_a_tagged_object_in_a_tool_result_list_is_kept(
    store: chatkeep.Store,
) -> None:
    """A tool result listing the caller's Pydantic models that carry a ``kind`` field (as Pydantic
    AI's own objects do) keeps their null fields, after plain results of the same look."""
    from pydantic import BaseModel
    from pydantic_ai.messages import ToolReturnPart

    class Hit(BaseModel):
        kind: str = "hit"
        note: str | None = None

    def result(content: Any) -> ModelMessage:
        return ModelRequest(parts=[ToolReturnPart(tool_name="find", content=content)])

    history = ChatkeepMessageHistory(store, "pai-14")
    saved: list[ModelMessage] = [result([{"kind": "hit"}]) for _ in range(5)]
    saved.append(result([Hit()]))
    for message in saved:
        history.add_messages([message])
    back = history.messages()
    assert _dump(back) == _dump(saved)
    assert back[-1].parts[0].content == [{"kind": "hit", "note": None}]  # type: ignore[union-attr]
