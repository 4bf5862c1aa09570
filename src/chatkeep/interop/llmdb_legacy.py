"""llm's older layouts: ``conversations``/``responses`` (0.5 to 0.31) with their linked
attachment, fragment and tool tables, and 0.4's ``log`` (see :mod:`.llmdb`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from .llmdb_rows import _attachment, _columns, _conversation, _Db, _tool_call, _tool_result, _Turn
from .llmdb_threads import _fragments
from .model import (
    Conversation,
    Skipped,
    to_ms,
)

LINKED = (
    "prompt_attachments",
    "prompt_fragments",
    "system_fragments",
    "tool_calls",
    "tool_results",
)


def _legacy_conversations(db: _Db) -> Iterator[Conversation | Skipped]:
    """One conversation per ``conversations`` row (or response without one), from the
    responses that no thread holds, grouped in one ordered pass."""
    cols = _columns(db, "responses")
    names = (
        dict(db.all("SELECT id, name FROM conversations")) if "conversations" in db.tables else {}
    )
    pick = ", ".join(
        c if c in cols else f"NULL AS {c}"
        for c in ("id", "prompt", "system", "response", "model", "reasoning", "datetime_utc")
    )
    cid = "COALESCE(conversation_id, id)" if "conversation_id" in cols else "id"
    where = []
    if "turns" in db.tables and "id" in _columns(db, "turns"):
        where.append("id NOT IN (SELECT id FROM turns)")
    if "threads" in db.tables and "id" in _columns(db, "threads"):
        where.append(f"{cid} NOT IN (SELECT id FROM threads)")
    rows = db.batches(
        f"SELECT {cid} AS cid, MIN(datetime_utc) OVER (PARTITION BY {cid}) AS first, {pick}"
        f" FROM responses{' WHERE ' + ' AND '.join(where) if where else ''}"
        " ORDER BY first, cid, datetime_utc, rowid"
    )
    linked = {
        t for t in LINKED if t in db.tables and db.one(f"SELECT EXISTS (SELECT 1 FROM [{t}])")[0]
    }
    for (conv, first), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        turn = _Turn()
        for row in group:
            _response(db, turn, row[2:], linked)
        yield from _conversation(f"conversation {conv}", conv, first, turn.entries, names.get(conv))


def _linked(db: _Db, table: str, column: str, rid: Any, linked: set[str]) -> list[Any]:
    if table not in linked:
        return []
    order = '"order"' if "order" in _columns(db, table) else "rowid"
    return [
        r[0]
        for r in db.all(
            f"SELECT {column} FROM [{table}] WHERE response_id = ? ORDER BY {order}", (rid,)
        )
    ]


def _response(db: _Db, turn: _Turn, row: tuple[Any, ...], linked: set[str]) -> None:
    """One legacy response: its system prompt (where it changes), the tool results it sent
    (onto the assistant entry that asked for them), the prompt with its fragments and images,
    and the answer with its tool calls and reasoning."""
    rid, prompt, system, response, model, reasoning, when_text = row
    when = to_ms(when_text)
    sys_frags = _fragments(db, _linked(db, "system_fragments", "fragment_id", rid, linked))
    bits = [b.strip() for b in [*sys_frags, str(system or "")] if b.strip()]
    turn.add_system("\n\n".join(bits), when)
    if "tool_results" in linked:
        exc = "exception" if "exception" in _columns(db, "tool_results") else "NULL"
        rows = db.all(
            f"SELECT name, output, tool_call_id, {exc} FROM tool_results"
            " WHERE response_id = ? ORDER BY id",
            (rid,),
        )
        turn.add_results([_tool_result(*r) for r in rows], when)
    frags = _fragments(db, _linked(db, "prompt_fragments", "fragment_id", rid, linked))
    texts = ["\n".join([*frags, *([str(prompt)] if prompt else [])])]
    urls: list[str] = []
    for att in _linked(db, "prompt_attachments", "attachment_id", rid, linked):
        url, note = _attachment(db, att)
        if url:
            urls.append(url)
        elif note:
            texts.append(note)
    turn.add_user(texts, urls, when)
    calls = []
    if "tool_calls" in linked:
        calls = [
            _tool_call(*r)
            for r in db.all(
                "SELECT name, arguments, tool_call_id FROM tool_calls"
                " WHERE response_id = ? ORDER BY id",
                (rid,),
            )
        ]
    turn.add_assistant(
        [str(response or "")],
        [],
        when,
        model=model,
        reasoning=[str(reasoning)] if reasoning else [],
        calls=calls,
    )


def _early_conversations(db: _Db, table: str) -> Iterator[Conversation | Skipped]:
    """llm 0.4's ``log`` table (kept as ``logs`` by later releases when it holds rows): one
    row per prompt, ``chat_id`` naming the first row of its chat."""
    cols = _columns(db, table)
    when = next((c for c in ("datetime_utc", "timestamp_utc", "timestamp") if c in cols), "NULL")
    pick = ", ".join(
        c if c in cols else f"NULL AS {c}" for c in ("prompt", "system", "response", "model")
    )
    cid = "COALESCE(chat_id, id)" if "chat_id" in cols else "id"
    rows = db.batches(
        f"SELECT {cid} AS cid, MIN({when}) OVER (PARTITION BY {cid}) AS first, id, {pick},"
        f" NULL, {when} FROM [{table}] ORDER BY first, cid, {when}, rowid"
    )
    for (conv, first), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        turn = _Turn()
        for row in group:
            _response(db, turn, row[2:], set())
        yield from _conversation(f"{table} chat {conv}", f"log-{conv}", first, turn.entries, None)
