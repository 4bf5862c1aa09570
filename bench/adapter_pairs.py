"""The adapter/peer pairs :mod:`bench.adapters` measures: for each framework, how its runner
writes a turn and reads a session, on chatkeep's adapter and on the framework's own SQLite
store. Each framework is imported only when its pair runs."""

from __future__ import annotations

import asyncio
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


class _Async(Target):
    """A target whose framework calls are coroutines: one event loop per call of ours."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def write_turns(self, turns: list[Turn]) -> None:
        async def go() -> None:
            for turn in turns:
                await self.session.add_items(turn)

        asyncio.run(go())

    def read(self) -> int:
        return len(asyncio.run(self.session.get_items()))


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
                yield _Async(ChatkeepSession(store, "bench"))
            return
        from agents import SQLiteSession

        session = SQLiteSession("bench", path)
        try:
            yield _Async(session)
        finally:
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


PAIRS: tuple[Pair, ...] = (AgentsPair(), LangChainPair())
