"""The adapter/peer pairs :mod:`bench.adapters` measures: for each framework, how its runner
writes a turn and reads a session, on chatkeep's adapter and on the framework's own SQLite
store. Each framework is imported only when its pair runs."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.workloads import figure_entries

Turn = list[Any]


def _question(k: int) -> str:
    return f"Question {k}: what does the tram timetable say about the north bridge at {k % 24}h?"


def _answer(k: int) -> str:
    return f"Answer {k}: " + "the tram crosses the north bridge every twelve minutes. " * 3


def _entry_turns() -> list[list[dict[str, Any]]]:
    """The figure conversation as turns: each user entry and the replies after it."""
    turns: list[list[dict[str, Any]]] = []
    for e in figure_entries():
        if e["role"] == "user" or not turns:
            turns.append([])
        turns[-1].append(e)
    return turns


class Target:
    """One store under test: writes turns, reads the session back (returns its item count)."""

    def write_turns(self, turns: list[Turn]) -> None:
        raise NotImplementedError

    def read(self) -> int:
        raise NotImplementedError


class Pair:
    name = ""
    adapter = ""
    peer = ""
    needs: tuple[str, ...] = ()

    def missing(self) -> str:
        gone = [m for m in self.needs if importlib.util.find_spec(m) is None]
        return f"not installed: {', '.join(gone)}" if gone else ""

    def turns(self, n: int) -> list[Turn]:
        return [self.turn(_question(k), _answer(k), k) for k in range(n)]

    def turn(self, question: str, answer: str, k: int) -> Turn:
        raise NotImplementedError

    def figure_turns(self) -> list[Turn]:
        raise NotImplementedError

    @contextmanager
    def open(self, side: str, path: str) -> Iterator[Target]:
        raise NotImplementedError
        yield


class _Loop(Target):
    """A target whose framework calls are coroutines, run on one event loop of its own (as
    an application's runner would)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        self.loop.close()


class _Async(_Loop):
    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session

    def write_turns(self, turns: list[Turn]) -> None:
        async def go() -> None:
            for turn in turns:
                await self.session.add_items(turn)

        self.loop.run_until_complete(go())

    def read(self) -> int:
        return len(self.loop.run_until_complete(self.session.get_items()))


class AgentsPair(Pair):
    name = "OpenAI Agents SDK"
    adapter = "ChatkeepSession"
    peer = "SQLiteSession"
    needs = ("agents",)

    def turn(self, question: str, answer: str, k: int) -> Turn:
        from bench.workloads import to_agents_item

        return [
            to_agents_item({"role": "user", "content": question}, 2 * k),
            to_agents_item({"role": "assistant", "content": answer}, 2 * k + 1),
        ]

    def figure_turns(self) -> list[Turn]:
        from bench.workloads import to_agents_item

        return [[to_agents_item(e, k) for k, e in enumerate(t)] for t in _entry_turns()]

    @contextmanager
    def open(self, side: str, path: str) -> Iterator[Target]:
        if side == "chatkeep":
            import chatkeep
            from chatkeep.integrations.agents import ChatkeepSession

            with chatkeep.open(path) as store:
                target = _Async(ChatkeepSession(store, "bench"))
                yield target
                target.close()
            return
        from agents import SQLiteSession

        session = SQLiteSession("bench", path)
        target = _Async(session)
        try:
            yield target
        finally:
            target.close()
            session.close()


class _History(Target):
    def __init__(self, history: Any) -> None:
        self.history = history

    def write_turns(self, turns: list[Turn]) -> None:
        for turn in turns:
            self.history.add_messages(turn)

    def read(self) -> int:
        return len(self.history.messages)


class LangChainPair(Pair):
    name = "LangChain"
    adapter = "ChatkeepChatMessageHistory"
    peer = "SQLChatMessageHistory"
    needs = ("langchain_core", "langchain_community", "sqlalchemy")

    def turn(self, question: str, answer: str, k: int) -> Turn:
        from langchain_core.messages import AIMessage, HumanMessage

        return [HumanMessage(content=question), AIMessage(content=answer)]

    def figure_turns(self) -> list[Turn]:
        from bench.workloads import to_langchain

        return [[to_langchain(e) for e in t] for t in _entry_turns()]

    @contextmanager
    def open(self, side: str, path: str) -> Iterator[Target]:
        if side == "chatkeep":
            import chatkeep
            from chatkeep.integrations.langchain import ChatkeepChatMessageHistory

            with chatkeep.open(path) as store:
                yield _History(ChatkeepChatMessageHistory(store, "bench"))
            return
        from langchain_community.chat_message_histories import SQLChatMessageHistory

        history = SQLChatMessageHistory(session_id="bench", connection=f"sqlite:///{path}")
        try:
            yield _History(history)
        finally:
            history.engine.dispose()


class _PaiTarget(Target):
    """Pydantic AI: each run's ``new_messages()`` saved after the run, the history loaded
    before the next (what ``agent.run(message_history=…)`` needs)."""

    def __init__(self, save: Any, load: Any) -> None:
        self.save, self.load = save, load

    def write_turns(self, turns: list[Turn]) -> None:
        for turn in turns:
            self.save(turn)

    def read(self) -> int:
        return len(self.load())


def _response(answer: str, k: int) -> Any:
    """A model's reply as a real provider call returns it: the model and provider named, the
    response id, the finish reason and a filled usage (the conversation read from the cache,
    growing turn by turn)."""
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.usage import RequestUsage

    prompt = 1_200 + 350 * k
    usage = RequestUsage(
        input_tokens=prompt,
        cache_read_tokens=prompt - 400,
        output_tokens=max(1, len(answer) // 4),
        details={"reasoning_tokens": 0},
    )
    return ModelResponse(
        parts=[TextPart(content=answer)],
        usage=usage,
        model_name="claude-sonnet-5",
        provider_name="anthropic",
        provider_response_id=f"msg_{k:024d}",
        finish_reason="stop",
    )


class PydanticAIPair(Pair):
    """Pydantic AI ships no SQLite store; its peer is the store of its chat example
    (``examples/pydantic_ai_examples/chat_app.py``): ``sqlite3.connect(file)`` as Python opens
    it (a rollback journal, ``synchronous=FULL``), one row of ``new_messages_json()`` a run,
    committed, read back ``ORDER BY id`` and validated row by row. Two differences, neither in
    chatkeep's favour: the calls are made directly, not through the example's thread pool, and
    ``id`` is ``INTEGER PRIMARY KEY`` (the example's ``INT PRIMARY KEY`` leaves every id NULL, so
    its order is the table's). :class:`PydanticAIWalPair` is the same store in WAL mode, which
    the example does not use: the least work an SQLite store of these messages can do."""

    name = "Pydantic AI"
    adapter = "ChatkeepMessageHistory"
    peer = "the chat example's SQLite rows"
    needs = ("pydantic_ai",)
    wal = False

    def turn(self, question: str, answer: str, k: int) -> Turn:
        from pydantic_ai.messages import ModelRequest, UserPromptPart

        return [
            ModelRequest(parts=[UserPromptPart(content=question)]),
            _response(answer, k),
        ]

    def figure_turns(self) -> list[Turn]:
        from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart

        def prompt(e: dict[str, Any]) -> Any:
            if isinstance(e["content"], str):
                return e["content"]
            out: list[Any] = []
            for p in e["content"]:
                if p.get("type") == "image_url":
                    url = p["image_url"]["url"]
                    mime, data = url[5:].split(";base64,", 1)
                    out.append(BinaryContent(base64.b64decode(data), media_type=mime))
                else:
                    out.append(p.get("text", ""))
            return out

        return [
            [
                ModelRequest(parts=[UserPromptPart(content=prompt(e))])
                if e["role"] == "user"
                else _response(str(e["content"]), k)
                for e in t
            ]
            for k, t in enumerate(_entry_turns())
        ]

    @contextmanager
    def open(self, side: str, path: str) -> Iterator[Target]:
        if side == "chatkeep":
            import chatkeep
            from chatkeep.integrations.pydantic_ai import ChatkeepMessageHistory

            with chatkeep.open(path) as store:
                history = ChatkeepMessageHistory(store, "bench")
                yield _PaiTarget(history.add_messages, history.messages)
            return
        import sqlite3

        from pydantic_ai.messages import ModelMessagesTypeAdapter

        # the chat example's store: one row per run's new messages (JSON)
        con = sqlite3.connect(path)
        if self.wal:
            con.execute("PRAGMA journal_mode=WAL")
        con.execute("CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, list TEXT)")

        def save(msgs: list[Any]) -> None:
            con.execute(
                "INSERT INTO messages (list) VALUES (?)",
                (ModelMessagesTypeAdapter.dump_json(msgs).decode(),),
            )
            con.commit()

        def load() -> list[Any]:
            out: list[Any] = []
            for (text,) in con.execute("SELECT list FROM messages ORDER BY id"):
                out.extend(ModelMessagesTypeAdapter.validate_json(text))
            return out

        try:
            yield _PaiTarget(save, load)
        finally:
            con.close()


class _AdkTarget(_Loop):
    def __init__(self, service: Any) -> None:
        super().__init__()
        self.service = service
        self.session: Any = None

    def write_turns(self, turns: list[Turn]) -> None:
        async def go() -> None:
            if self.session is None:
                self.session = await self.service.create_session(
                    app_name="bench", user_id="u", session_id="bench"
                )
            for turn in turns:
                for event in turn:
                    await self.service.append_event(self.session, event)

        self.loop.run_until_complete(go())

    def read(self) -> int:
        got = self.loop.run_until_complete(
            self.service.get_session(app_name="bench", user_id="u", session_id="bench")
        )
        return len(got.events)


class AdkPair(Pair):
    name = "Google ADK"
    adapter = "ChatkeepSessionService"
    peer = "SqliteSessionService"
    needs = ("google.adk",)

    def missing(self) -> str:
        try:
            import google.adk  # noqa: F401 - a namespace package: find_spec of it can raise
        except ImportError:
            return "not installed: google-adk"
        return ""

    @staticmethod
    def _event(role: str, parts: list[Any]) -> Any:
        from google.adk.events import Event
        from google.genai import types

        author = "user" if role == "user" else "helper"
        return Event(
            author=author,
            invocation_id="bench",
            content=types.Content(role="user" if role == "user" else "model", parts=parts),
        )

    def turn(self, question: str, answer: str, k: int) -> Turn:
        from google.genai import types

        return [
            self._event("user", [types.Part(text=question)]),
            self._event("assistant", [types.Part(text=answer)]),
        ]

    def figure_turns(self) -> list[Turn]:
        from google.genai import types

        def parts(e: dict[str, Any]) -> list[Any]:
            if isinstance(e["content"], str):
                return [types.Part(text=e["content"])]
            out = []
            for p in e["content"]:
                if p.get("type") == "image_url":
                    mime, data = p["image_url"]["url"][5:].split(";base64,", 1)
                    blob = types.Blob(mime_type=mime, data=base64.b64decode(data))
                    out.append(types.Part(inline_data=blob))
                else:
                    out.append(types.Part(text=p.get("text", "")))
            return out

        return [[self._event(e["role"], parts(e)) for e in t] for t in _entry_turns()]

    @contextmanager
    def open(self, side: str, path: str) -> Iterator[Target]:
        if side == "chatkeep":
            import chatkeep
            from chatkeep.integrations.adk import ChatkeepSessionService

            with chatkeep.open(path) as store:
                target = _AdkTarget(ChatkeepSessionService(store))
                yield target
                target.close()
            return
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        target = _AdkTarget(SqliteSessionService(path))
        yield target
        target.close()


class PydanticAIWalPair(PydanticAIPair):
    name = "Pydantic AI, peer in WAL mode"
    peer = "the same rows, WAL"
    wal = True


PAIRS: tuple[Pair, ...] = (
    AgentsPair(),
    LangChainPair(),
    PydanticAIPair(),
    PydanticAIWalPair(),
    AdkPair(),
)
