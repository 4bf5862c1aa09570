"""llm's message store (0.32 and later): ``threads``, ``messages``, ``parts``, ``turns`` — one
conversation per thread, walked from its newest message back to the first (see :mod:`.llmdb`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .llmdb_rows import (
    LOST_MARK,
    RESPONSES,
    _attachment,
    _columns,
    _conversation,
    _Db,
    _json,
    _tool_call,
    _tool_result,
    _Turn,
)
from .model import (
    Conversation,
    Skipped,
    as_dict,
    as_list,
    to_ms,
)


def _fragments(db: _Db, ids: list[Any]) -> list[str]:
    """The text of each fragment id, in order (an id with no row gives "")."""
    if not ids or "fragments" not in db.tables:
        return []
    out = []
    for fid in ids:
        row = db.one("SELECT content FROM fragments WHERE id = ?", (fid,))
        out.append(str(row[0] or "") if row is not None else "")
    return out


def _part_text(db: _Db, text: Any, body: dict[str, Any]) -> str:
    """A text or reasoning part's text: the ``text`` column, or its ``text_ref`` pieces
    (literals and fragment ids) joined as llm resolves them."""
    if isinstance(text, str):
        return text
    if isinstance(body.get("text"), str):
        return str(body["text"])
    pieces = [p for p in as_list(body.get("text_ref")) if isinstance(p, dict)]
    out = []
    for p in pieces:
        if "literal" in p:
            out.append(str(p["literal"]))
        elif "fragment" in p:
            out.extend(_fragments(db, [p["fragment"]]))
    return "".join(out)


def _chain(db: _Db, tip: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """``(hash, role)`` of each message from the root to ``tip`` (a cycle ends the walk), and
    the hash of the message the chain names but the database does not hold (``None``: whole)."""
    chain: list[tuple[Any, Any]] = []
    seen: set[Any] = set()
    node = tip
    while node is not None and node not in seen:
        seen.add(node)
        row = db.one("SELECT parent_hash, role FROM messages WHERE hash = ?", (node,))
        if row is None:
            chain.reverse()
            return chain, node
        chain.append((node, row[1]))
        node = row[0]
    chain.reverse()
    return chain, None


def _message_times(
    chain: list[tuple[Any, Any]], turns: list[tuple[Any, Any, Any]]
) -> list[tuple[int | None, Any]]:
    """Each message's ``(time, model)``: those of the first call (in time order) whose chain
    reaches it — the call that sent it, or that produced it."""
    where = {h: i for i, (h, _role) in enumerate(chain)}
    out: list[tuple[int | None, Any]] = [(None, None)] * len(chain)
    done = -1
    for tip, when, model in turns:
        end = where.get(tip)
        if end is None or end <= done:
            continue
        for i in range(done + 1, end + 1):
            out[i] = (to_ms(when), model)
        done = end
    return out


def _attachment_ids(db: _Db, pid: Any, ptype: Any, body: dict[str, Any]) -> list[Any]:
    """The attachments of a part: ``part_attachments`` rows, else the payload's references."""
    if "part_attachments" in db.tables:
        ids = [
            r[0]
            for r in db.all(
                'SELECT attachment_id FROM part_attachments WHERE part_id = ? ORDER BY "order"',
                (pid,),
            )
        ]
        if ids:
            return ids
    refs = [body.get("attachment")] if ptype == "attachment" else as_list(body.get("attachments"))
    return [r["id"] for r in refs if isinstance(r, dict) and r.get("id")]


def _message(db: _Db, turn: _Turn, mhash: Any, role: Any, when: int | None, model: Any) -> None:
    texts: list[str] = []
    urls: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, str]] = []
    results: list[dict[str, str]] = []
    for pid, ptype, text, payload in db.all(
        "SELECT id, type, text, payload FROM parts WHERE message_hash = ? ORDER BY position",
        (mhash,),
    ):
        body = as_dict(_json(payload))
        if ptype == "text":
            texts.append(_part_text(db, text, body))
        elif ptype == "reasoning":
            reasoning.append(_part_text(db, text, body))
        elif ptype == "tool_call":
            calls.append(
                _tool_call(body.get("name"), body.get("arguments"), body.get("tool_call_id"))
            )
        elif ptype in ("tool_result", "attachment"):
            notes: list[str] = []
            for att in _attachment_ids(db, pid, ptype, body):
                url, note = _attachment(db, att)
                if url and ptype == "attachment":
                    urls.append(url)
                elif note:
                    notes.append(note)
                elif url:
                    notes.append(f"[an image the tool returned: {att}]")
            if ptype == "attachment":
                texts.extend(notes)
                continue
            result = _tool_result(
                body.get("name"),
                body.get("output"),
                body.get("tool_call_id"),
                body.get("exception"),
            )
            result["content"] = "\n".join([result["content"], *notes]).strip("\n")
            results.append(result)
        else:
            texts.append(f"[llm part of type {ptype!r} not kept]")
    if role == "system":
        turn.add_system("\n".join(texts), when)
    elif role == "assistant":
        turn.add_assistant(
            texts, urls, when, model=model, reasoning=reasoning, calls=calls, results=results
        )
    else:
        turn.add_results(results, when)
        marked = texts if role in ("user", "tool") else [f"[{role} message]", *texts]
        turn.add_user(marked, urls, when)
        if reasoning or calls:
            turn.add_assistant([], [], when, reasoning=reasoning, calls=calls)


def _store_conversations(db: _Db) -> Iterator[Conversation | Skipped]:
    """One conversation per ``threads`` row, in the order they were started."""
    turns: dict[Any, list[tuple[Any, Any, Any]]] = {}
    tcols = _columns(db, "turns") if "turns" in db.tables else set()
    if {"thread_id", "tip_message_hash", "datetime_utc"} <= tcols:
        model = "model" if "model" in tcols else "NULL"
        for tid, tip, when, name in db.batches(
            f"SELECT thread_id, tip_message_hash, datetime_utc, {model} FROM turns"
            " ORDER BY datetime_utc, rowid"
        ):
            turns.setdefault(tid, []).append((tip, when, name))
    legacy = _continued(db)
    threads = db.batches(
        "SELECT id, name, tip_message_hash, datetime_utc FROM threads ORDER BY datetime_utc, rowid"
    )
    for tid, name, tip, started in threads:
        chain, lost = _chain(db, tip)
        if lost is not None and not chain:
            title = " ".join(str(name or "").split())
            yield Skipped(f"thread {tid}", f"its last message {lost} is not in the database", title)
            continue
        times = _message_times(chain, turns.get(tid, []))
        if tid in legacy:  # a conversation begun before llm 0.32: its name, time and times
            name, started, older = legacy[tid]
            times = _older_times(db, chain, times, older)
        turn = _Turn()
        if lost is not None:  # the messages before it are lost: said, not hidden
            turn.add_user([f"{LOST_MARK} {lost} is missing]"], [], None)
        for (mhash, role), (when, model) in zip(chain, times, strict=True):
            _message(db, turn, mhash, role, when, model)
        yield from _conversation(f"thread {tid}", tid, started, turn.entries, name)


def _continued(db: _Db) -> dict[Any, tuple[Any, Any, list[tuple[Any, Any, Any, Any]]]]:
    """Threads that continue a conversation of the ``responses`` era (llm gives the thread the
    conversation's id and copies its history into the chain): ``{id: (name, first time,
    [(prompt, response, time, model)])}``, the responses in time order."""
    if not {"responses", "conversations"} <= db.tables:
        return {}
    cols = _columns(db, "responses")
    if not (RESPONSES | {"model"}) <= cols or "name" not in _columns(db, "conversations"):
        return {}
    out: dict[Any, tuple[Any, Any, list[tuple[Any, Any, Any, Any]]]] = {}
    for cid, name, prompt, response, when, model in db.batches(
        "SELECT c.id, c.name, r.prompt, r.response, r.datetime_utc, r.model FROM conversations c"
        " JOIN threads t ON t.id = c.id JOIN responses r ON r.conversation_id = c.id"
        " ORDER BY c.id, r.datetime_utc, r.rowid"
    ):
        item = out.setdefault(cid, (name, when, []))
        item[2].append((prompt, response, when, model))
    return out


def _older_times(
    db: _Db,
    chain: list[tuple[Any, Any]],
    times: list[tuple[int | None, Any]],
    older: list[tuple[Any, Any, Any, Any]],
) -> list[tuple[int | None, Any]]:
    """The times of the messages a continued conversation copied from its responses: each
    response's prompt and answer, matched in order by their text, take that response's (a
    system prompt before the first, the first's)."""
    out = list(times)
    k = 0
    for i, (mhash, role) in enumerate(chain):
        if k >= len(older):
            break
        prompt, response, when, model = older[k]
        if role == "system" and k == 0:  # the system prompt the first response was sent
            out[i] = (to_ms(when), None)
        if role not in ("user", "assistant"):
            continue
        (text,) = db.one(
            "SELECT group_concat(text, '') FROM parts WHERE message_hash = ? AND type = 'text'",
            (mhash,),
        )
        if role == "user" and text == prompt:
            out[i] = (to_ms(when), None)
        elif role == "assistant" and text == response:
            out[i] = (to_ms(when), model)
            k += 1
    return out


#: The tables a response links rows of, read only when they hold any.
