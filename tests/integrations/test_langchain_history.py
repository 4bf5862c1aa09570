"""``ChatkeepChatMessageHistory`` against real langchain-core: the history contract, messages
kept verbatim, images stored once, drawer visibility, and the request-rules runnable."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import chatkeep
from factories import png_data_url

pytest.importorskip("langchain_core")
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import Runnable

from chatkeep.integrations.langchain import (
    ChatkeepChatMessageHistory,
    apply_request_rules_to_messages,
    request_rules,
)

IMG = png_data_url(48, 48, noise=True)


def _picture(text: str) -> HumanMessage:
    return HumanMessage(
        content=[{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": IMG}}]
    )


def test_history_contract_and_verbatim_messages(store: chatkeep.Store) -> None:
    """add_messages/messages/clear keep LangChain messages equal, in order, across instances."""
    history = ChatkeepChatMessageHistory(store, "lc-1")
    assert isinstance(history, BaseChatMessageHistory)
    msgs = [
        SystemMessage(content="be brief"),
        _picture("What is this?"),
        AIMessage(content="A noisy square.", response_metadata={"model": "m"}),
        ToolMessage(content="42", tool_call_id="t1"),
    ]
    history.add_messages(msgs[:2])
    history.add_user_message("plain question")
    history.add_messages(msgs[2:])
    again = ChatkeepChatMessageHistory(store, "lc-1").messages
    assert again == [msgs[0], msgs[1], HumanMessage(content="plain question"), msgs[2], msgs[3]]
    assert asyncio.run(history.aget_messages()) == again
    history.clear()
    assert history.messages == [] and store.sessions.get("lc-1") is None


def test_visible_in_the_drawer_and_images_once(store: chatkeep.Store) -> None:
    """The history is a saved session found by its text; a repeated image is one blob."""
    history = ChatkeepChatMessageHistory(store, "lc-2")
    for k in range(3):
        history.add_messages([_picture(f"picture {k}"), AIMessage(content=f"reply number {k}")])
    assert [r["id"] for r in store.sessions.list("reply number 2")] == ["lc-2"]
    assert store.stats()["blobs"] == 1
    body = store.sessions.get("lc-2")["history"]
    assert body[0]["role"] == "user" and body[1] == {
        **body[1],
        "role": "assistant",
        "content": "reply number 0",
    }


def test_request_rules_label_answered_images() -> None:
    """request_rules: images already answered become labels; the newest image is sent."""
    msgs = [_picture("first"), AIMessage(content="a square"), _picture("second")]
    out = apply_request_rules_to_messages(msgs)
    assert IMG not in str(out[0].content) and "first" in str(out[0].content)
    assert out[1] is msgs[1] and out[2] is msgs[2]
    assert msgs[0].content[1]["image_url"]["url"] == IMG  # the input is not mutated


def test_request_rules_runnable_in_a_chain(store: chatkeep.Store) -> None:
    """The runnable composes after a prompt template that reads the chatkeep history."""
    history = ChatkeepChatMessageHistory(store, "lc-3")
    history.add_messages([_picture("first"), AIMessage(content="a square")])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "be brief"), MessagesPlaceholder("history"), ("human", "{q}")]
    )
    chain = prompt | request_rules
    assert isinstance(request_rules, Runnable)
    out = chain.invoke({"history": history.messages, "q": "and now?"})
    assert out[0].content == "be brief" and out[-1].content == "and now?"
    assert IMG not in str(out) and IMG in str(history.messages)


def test_bad_inputs_are_typed_errors(store: chatkeep.Store) -> None:
    """A non-message or a bad session id is an InvalidValue."""
    with pytest.raises(chatkeep.InvalidValue):
        ChatkeepChatMessageHistory(store, "")
    with pytest.raises(chatkeep.InvalidValue):
        ChatkeepChatMessageHistory(store, "lc-4").add_messages(["not a message"])  # type: ignore[list-item]
    assert store.sessions.get("lc-4") is None


@pytest.mark.filterwarnings(
    "ignore::DeprecationWarning"
)  # deprecated in langchain-core 1.x, still used
def test_runnable_with_message_history_round(store: chatkeep.Store) -> None:
    """RunnableWithMessageHistory over ChatkeepChatMessageHistory: two real turns through
    langchain-core's own fake chat model land in the saved session, rules applied each call."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.history import RunnableWithMessageHistory

    seen: list[str] = []
    model = FakeMessagesListChatModel(
        responses=[AIMessage(content="a square"), AIMessage(content="still square")]
    )
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{q}")])
    spy = RunnableLambda(lambda msgs: (seen.append(str(msgs)), msgs)[1])
    chain = prompt | request_rules | spy | model
    with_history = RunnableWithMessageHistory(
        chain,
        lambda sid: ChatkeepChatMessageHistory(store, sid),
        input_messages_key="q",
        history_messages_key="history",
    )
    cfg = {"configurable": {"session_id": "lc-run"}}
    store_history = ChatkeepChatMessageHistory(store, "lc-run")
    store_history.add_messages([_picture("first picture"), AIMessage(content="noted")])
    assert with_history.invoke({"q": "what was it?"}, config=cfg).content == "a square"
    assert with_history.invoke({"q": "and now?"}, config=cfg).content == "still square"
    assert all(IMG not in s for s in seen)  # the answered picture went as a label
    texts = [m.content for m in store_history.messages]
    assert texts[2:] == ["what was it?", "a square", "and now?", "still square"]
    assert IMG in str(texts[0])  # the history keeps every pixel


B64 = IMG.split(",", 1)[1]
SHAPES = {
    "openai image_url string": {"type": "image_url", "image_url": IMG},
    "standard image, base64": {"type": "image", "base64": B64, "mime_type": "image/png"},
    "v0.3 data block": {
        "type": "image",
        "source_type": "base64",
        "data": B64,
        "mime_type": "image/png",
    },
    "anthropic source": {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": B64},
    },
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_request_rules_know_every_image_block_shape(shape: str) -> None:
    """An answered image is labelled in each of LangChain's content-block shapes; the text
    block beside it and the newest image keep their own objects."""
    text = {"type": "text", "text": "look at this"}
    first = HumanMessage(content=[text, SHAPES[shape]])
    newest = HumanMessage(content=[{"type": "text", "text": "and this"}, SHAPES[shape]])
    msgs = [first, AIMessage(content="a square"), newest]
    out = (request_rules).invoke(msgs)
    assert B64 not in str(out[0].content)
    assert out[0].content[0] is first.content[0] and out[0].content[1]["type"] == "text"
    assert out[2] is newest  # not answered yet: sent as it is
    assert first.content[1] == SHAPES[shape]  # the input is left alone


def test_filter_composes_before_a_chat_model() -> None:
    """``request_rules | model``: the model receives the filtered messages."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel

    seen: list[Any] = []

    class Spy(FakeMessagesListChatModel):
        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(messages)
            return super()._generate(messages, *args, **kwargs)

    chain = request_rules | Spy(responses=[AIMessage(content="ok")])
    assert (
        chain.invoke([_picture("first"), AIMessage(content="noted"), HumanMessage("?")]).content
        == "ok"
    )
    assert IMG not in str(seen[0]) and "first" in str(seen[0])


def test_values_chatkeep_does_not_store_as_values_are_kept_as_text(store: chatkeep.Store) -> None:
    """A message holding an integer beyond 64 bits (a tool call's argument) is kept as its JSON
    text beside messages kept as objects; all read back equal."""
    from chatkeep.integrations.langchain import MESSAGE_KEY

    history = ChatkeepChatMessageHistory(store, "lc-big")
    call = {"name": "count", "args": {"start": 10**30}, "id": "c1", "type": "tool_call"}
    saved = [HumanMessage(content="count"), AIMessage(content="", tool_calls=[call])]
    history.add_messages(saved)
    assert history.messages == saved
    entries = store.sessions.get("lc-big")["history"]  # type: ignore[index]
    assert [type(e[MESSAGE_KEY]) for e in entries] == [dict, str]
