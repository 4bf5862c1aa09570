"""Storage peers of the comparison benchmark, each driven the way an application uses it.

Every peer is a class with one conversation "in focus" in its own SQLite file:

* ``load(entries)`` (untimed set-up) — start a fresh conversation holding ``entries``;
* ``append_turn(user, reply)`` — store one turn (the user entry, then the reply);
  ``append_entry(entry)`` — store an attachment entry that no reply follows;
* ``read()`` — the history as needed to build the next request;
* ``settings()`` — read the application settings (``None`` attribute when the peer has none);
* ``save_session()`` — keep a copy of the conversation in focus as a saved session;
* ``fill_drawer(sessions)`` (untimed) and ``search(q)`` — the saved-sessions drawer;
* ``close()``. :func:`disk_bytes` measures a file after a full WAL checkpoint.

Peers: ``chatkeep`` (live window widened so it holds every entry), ``openai-agents``
(``agents.SQLiteSession``; two ``add_items`` per turn as its runner saves input, then output),
``langgraph`` (a one-node ``StateGraph`` over ``MessagesState`` — ``add_messages`` reducer —
compiled with ``SqliteSaver``; one ``invoke`` per turn; settings in ``SqliteStore``) and
``json-blob`` (one SQLite row per conversation holding the whole JSON list, rewritten on every
write, settings in one small row — the way the seed system and Open WebUI keep history).
A peer whose package cannot be imported is reported with the import error, never skipped
silently. Peers without a cross-session search or settings API say so in ``missing``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import uuid
from importlib import metadata
from typing import Any

import chatkeep
from bench.workloads import Entry, to_agents_item, to_langchain

SETTINGS = {
    "systemPrompt": "You are a helpful assistant.",
    "activeProvider": "local",
    "fontSize": 14,
}


def disk_bytes(path: str) -> int:
    """Bytes of an SQLite file (plus any WAL left) after a TRUNCATE checkpoint."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    wal = path + "-wal"
    return os.path.getsize(path) + (os.path.getsize(wal) if os.path.exists(wal) else 0)


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


class ChatkeepPeer:
    name = "chatkeep"
    missing: dict[str, str] = {}

    def __init__(self, path: str) -> None:
        self.path = path
        self.store = chatkeep.open(path)
        self.store.local.set(
            {"maxHistoryEntries": 1_000_000, "maxHistoryChars": 1_000_000_000, **SETTINGS}
        )
        self.version = chatkeep.__version__

    def load(self, entries: list[Entry]) -> None:
        self.store.history.mutate(lambda _: list(entries))

    def append_entry(self, entry: Entry) -> None:
        self.store.history.append(entry)

    def append_turn(self, user: Entry, reply: Entry) -> None:
        self.store.history.append(user)
        self.store.history.append(reply)

    def read(self) -> list[Entry]:
        return self.store.history.read()

    def settings(self) -> dict[str, Any]:
        return self.store.get_all()

    def mark_seen(self) -> int:
        return self.store.mark_images_seen()

    def save_session(self) -> None:
        self.store.sessions.save("figure conversation")

    def fill_drawer(self, sessions: list[dict[str, Any]]) -> None:
        # A legacy single-key drawer (a browsa import), migrated in place by the first index().
        self.store.local.set("savedSessions", sessions)
        self.store.sessions.index()

    def search(self, q: str) -> list[Any]:
        return self.store.sessions.list(q)

    def close(self) -> None:
        self.store.close()


class AgentsPeer:
    name = "openai-agents"
    missing = {
        "settings": "no settings storage in the SDK",
        "search": "no cross-session search API; shown: SQL LIKE on its agent_messages table",
    }

    def __init__(self, path: str) -> None:
        from agents import SQLiteSession

        self._cls = SQLiteSession
        self.path = path
        self.version = version("openai-agents")
        self.loop = asyncio.new_event_loop()
        self.session: Any = None
        self._k = 0

    def _new(self) -> Any:
        if self.session is not None:
            self.session.close()
        self.session = self._cls(uuid.uuid4().hex, self.path)
        return self.session

    def _items(self, entries: list[Entry]) -> list[dict[str, Any]]:
        out = []
        for e in entries:
            self._k += 1
            out.append(to_agents_item(e, self._k))
        return out

    def load(self, entries: list[Entry]) -> None:
        self.loop.run_until_complete(self._new().add_items(self._items(entries)))

    def append_entry(self, entry: Entry) -> None:
        self.loop.run_until_complete(self.session.add_items(self._items([entry])))

    def append_turn(self, user: Entry, reply: Entry) -> None:
        run = self.loop.run_until_complete
        run(self.session.add_items(self._items([user])))
        run(self.session.add_items(self._items([reply])))

    def read(self) -> list[Any]:
        return self.loop.run_until_complete(self.session.get_items())

    def save_session(self) -> None:
        items = self.read()
        copy = self._cls(uuid.uuid4().hex, self.path)
        try:
            self.loop.run_until_complete(copy.add_items(items))
        finally:
            copy.close()

    def fill_drawer(self, sessions: list[dict[str, Any]]) -> None:
        for s in sessions:
            copy = self._cls(s["id"], self.path)
            try:
                self.loop.run_until_complete(copy.add_items(self._items(s["history"])))
            finally:
                copy.close()

    def search(self, q: str) -> list[Any]:
        conn = sqlite3.connect(self.path)
        try:
            return conn.execute(
                "SELECT DISTINCT session_id FROM agent_messages WHERE message_data LIKE ?",
                (f"%{q.strip()}%",),
            ).fetchall()
        finally:
            conn.close()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self.loop.close()


class LangGraphPeer:
    name = "langgraph"
    missing = {
        "search": "no cross-thread search API; checkpoints are msgpack blobs SQL cannot search",
    }

    def __init__(self, path: str) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.store.sqlite import SqliteStore

        self.path = path
        self.version = (
            f"{version('langgraph')} (checkpoint-sqlite {version('langgraph-checkpoint-sqlite')})"
        )
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.saver = SqliteSaver(self.conn)
        self.saver.setup()
        self.kv_conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.kv = SqliteStore(self.kv_conn)
        self.kv.setup()
        self.kv.put(("settings",), "default", dict(SETTINGS))

        def respond(state: MessagesState) -> dict[str, Any]:  # the model's answer, canned
            return {"messages": [to_langchain(self._reply)]}

        graph = StateGraph(MessagesState)
        graph.add_node("respond", respond)
        graph.add_edge(START, "respond")
        graph.add_edge("respond", END)
        self.graph = graph.compile(checkpointer=self.saver)
        self.thread = ""
        self._reply: Entry = {"role": "assistant", "content": ""}

    def _config(self, thread: str | None = None) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread or self.thread}}

    def load(self, entries: list[Entry]) -> None:
        self.thread = uuid.uuid4().hex
        msgs = [to_langchain(e) for e in entries]
        self.graph.update_state(self._config(), {"messages": msgs}, as_node="respond")

    def append_entry(self, entry: Entry) -> None:
        self.graph.update_state(
            self._config(), {"messages": [to_langchain(entry)]}, as_node="respond"
        )

    def append_turn(self, user: Entry, reply: Entry) -> None:
        self._reply = reply
        self.graph.invoke({"messages": [to_langchain(user)]}, self._config())

    def read(self) -> list[Any]:
        return self.graph.get_state(self._config()).values.get("messages", [])

    def settings(self) -> Any:
        return self.kv.get(("settings",), "default").value

    def save_session(self) -> None:
        msgs = self.read()
        self.graph.update_state(
            self._config(uuid.uuid4().hex), {"messages": msgs}, as_node="respond"
        )

    def close(self) -> None:
        self.kv_conn.close()
        self.conn.close()


class JsonBlobPeer:
    name = "json-blob"
    missing: dict[str, str] = {}
    version = f"sqlite {sqlite3.sqlite_version}"

    def __init__(self, path: str) -> None:
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS chat (id TEXT PRIMARY KEY, title TEXT, created_at INTEGER, chat TEXT)"
        )
        self.conn.execute("CREATE TABLE IF NOT EXISTS settings (id TEXT PRIMARY KEY, value TEXT)")
        self.conn.execute(
            "INSERT OR REPLACE INTO settings VALUES ('default', ?)", (json.dumps(SETTINGS),)
        )
        self.chat = ""

    def _put(self, chat_id: str, title: str, entries: list[Entry]) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO chat VALUES (?, ?, ?, ?)",
            (chat_id, title, 0, json.dumps(entries, ensure_ascii=False)),
        )

    def load(self, entries: list[Entry]) -> None:
        self.chat = uuid.uuid4().hex
        self._put(self.chat, "conversation", entries)

    def _append(self, entry: Entry) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            (body,) = self.conn.execute(
                "SELECT chat FROM chat WHERE id = ?", (self.chat,)
            ).fetchone()
            entries = json.loads(body)
            entries.append(entry)
            self.conn.execute(
                "UPDATE chat SET chat = ? WHERE id = ?",
                (json.dumps(entries, ensure_ascii=False), self.chat),
            )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def append_entry(self, entry: Entry) -> None:
        self._append(entry)

    def append_turn(self, user: Entry, reply: Entry) -> None:
        self._append(user)
        self._append(reply)

    def read(self) -> list[Entry]:
        (body,) = self.conn.execute("SELECT chat FROM chat WHERE id = ?", (self.chat,)).fetchone()
        return json.loads(body)

    def settings(self) -> dict[str, Any]:
        (value,) = self.conn.execute("SELECT value FROM settings WHERE id = 'default'").fetchone()
        return json.loads(value)

    def save_session(self) -> None:
        self._put(uuid.uuid4().hex, "figure conversation", self.read())

    def fill_drawer(self, sessions: list[dict[str, Any]]) -> None:
        self.conn.execute("BEGIN")
        for s in sessions:
            self.conn.execute(
                "INSERT OR REPLACE INTO chat VALUES (?, ?, ?, ?)",
                (s["id"], s["name"], s["createdAt"], json.dumps(s["history"], ensure_ascii=False)),
            )
        self.conn.execute("COMMIT")

    def search(self, q: str) -> list[Any]:
        like = f"%{q.strip()}%"
        return self.conn.execute(
            "SELECT id, title FROM chat WHERE title LIKE ? OR chat LIKE ? ORDER BY created_at DESC",
            (like, like),
        ).fetchall()

    def close(self) -> None:
        self.conn.close()


STORAGE_PEERS: tuple[type, ...] = (ChatkeepPeer, AgentsPeer, LangGraphPeer, JsonBlobPeer)


def open_peer(cls: type, path: str) -> tuple[Any | None, str]:
    """``(peer, "")``, or ``(None, reason)`` when the peer cannot be installed or used here."""
    try:
        return cls(path), ""
    except ImportError as exc:
        return None, f"not importable: {exc} (install bench/requirements.txt)"
    except Exception as exc:  # a peer that breaks is reported, not fatal
        return None, f"unusable: {type(exc).__name__}: {exc}"
