"""``llm``'s ``logs.db`` (``llm logs path`` prints where it is), opened read-only.

Two shapes are read:

- **node tree** (newer ``llm``): ``responses.output_node_id`` points at a ``nodes`` row; nodes
  chain to the root through ``parent_id``, each naming a ``messages`` row (``role``) whose
  ``parts`` (``order``, ``type``, ``text``, ``attachment_id``; more attachments in
  ``part_attachments``) hold the content. A conversation is the chain that ends at its last
  response's output node. ``text`` parts are kept, ``attachment`` parts become images (when the
  attachment is an image whose bytes are stored) or a named reference; ``reasoning`` and tool
  parts, and ``system``/``tool`` messages, are skipped.
- **legacy** ``responses`` rows (``prompt``, ``response``, ``conversation_id``,
  ``datetime_utc``), attachments through ``prompt_attachments``: one user entry (with its
  images) and one assistant entry per response, in time order.

One saved session per ``conversations`` row (its ``name`` is the title); a response without a
conversation is a conversation of its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from .model import Conversation, clean_role, image_url_of, parts_entry, to_ms
from .source import Input, bad_file


def _tables(db: sqlite3.Connection) -> set[str]:
    return {
        r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")
    }


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info([{table}])")}


def _attachment(db: sqlite3.Connection, att_id: Any) -> tuple[str | None, str | None]:
    """``(image data URL, None)`` or ``(None, reference text)`` for one attachment id."""
    row = db.execute(
        "SELECT type, path, url, content FROM attachments WHERE id = ?", (att_id,)
    ).fetchone()
    if row is None:
        return None, None
    mime, path, url, content = row
    if isinstance(content, bytes) and content:
        data = image_url_of(content, str(path or url or ""))
        if data:
            return data, None
    if path:
        try:
            with open(path, "rb") as fh:
                data = image_url_of(fh.read(), str(path))
            if data:
                return data, None
        except OSError:
            pass
    return None, f"[attachment not in the export: {path or url or mime or att_id}]"


def _node_messages(db: sqlite3.Connection, leaf: Any) -> list[dict[str, Any]]:
    chain = []
    seen: set[Any] = set()
    node = leaf
    while node is not None and node not in seen:
        seen.add(node)
        row = db.execute("SELECT parent_id, message_id FROM nodes WHERE id = ?", (node,)).fetchone()
        if row is None:
            break
        chain.append(row[1])
        node = row[0]
    chain.reverse()
    has_part_att = "part_attachments" in _tables(db)
    entries = []
    for mid in chain:
        mrow = db.execute("SELECT role FROM messages WHERE id = ?", (mid,)).fetchone()
        role = clean_role(mrow[0]) if mrow else None
        if role is None:
            continue
        texts: list[str] = []
        urls: list[str] = []
        parts = db.execute(
            "SELECT id, type, text, attachment_id FROM parts WHERE message_id = ? ORDER BY [order]",
            (mid,),
        ).fetchall()
        for pid, ptype, text, att in parts:
            att_ids = [att] if att else []
            if has_part_att:
                att_ids += [
                    r[0]
                    for r in db.execute(
                        "SELECT attachment_id FROM part_attachments WHERE part_id = ?"
                        " ORDER BY [order]",
                        (pid,),
                    )
                ]
            if ptype == "text" and isinstance(text, str):
                texts.append(text)
            elif ptype == "attachment" or (att_ids and ptype not in ("reasoning",)):
                for a in att_ids:
                    url, note = _attachment(db, a)
                    if url:
                        urls.append(url)
                    elif note:
                        texts.append(note)
        if any(t.strip() for t in texts) or urls:
            entries.append(parts_entry(role, texts, urls))
    return entries


def _legacy_turns(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    has_att = {"prompt_attachments", "attachments"} <= _tables(db)
    entries = []
    for rid, prompt, response, model in rows:
        urls: list[str] = []
        notes: list[str] = []
        if has_att:
            for (att,) in db.execute(
                "SELECT attachment_id FROM prompt_attachments WHERE response_id = ?"
                " ORDER BY [order]",
                (rid,),
            ):
                url, note = _attachment(db, att)
                if url:
                    urls.append(url)
                elif note:
                    notes.append(note)
        if (prompt and str(prompt).strip()) or urls or notes:
            entries.append(parts_entry("user", [str(prompt or ""), *notes], urls))
        if response and str(response).strip():
            extra = {"provider": {"name": "llm", "model": str(model)}} if model else {}
            entries.append({"role": "assistant", "content": str(response), **extra})
    return entries


def read(inp: Input) -> Iterator[Conversation]:
    try:
        db = sqlite3.connect(f"file:{inp.path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise bad_file(inp.path, f"cannot open the SQLite file ({exc})") from None
    try:
        try:
            tables = _tables(db)
        except sqlite3.DatabaseError as exc:
            raise bad_file(inp.path, f"not a readable SQLite database ({exc})") from None
        if "responses" not in tables:
            raise bad_file(
                inp.path,
                "this SQLite file has no llm `responses` table",
                "pass the file printed by `llm logs path`",
            )
        yield from _read(db, tables)
    except sqlite3.DatabaseError as exc:
        raise bad_file(inp.path, f"the llm database could not be read ({exc})") from None
    finally:
        db.close()


def _read(db: sqlite3.Connection, tables: set[str]) -> Iterator[Conversation]:
    cols = _columns(db, "responses")
    tree = "output_node_id" in cols and {"nodes", "messages", "parts"} <= tables
    names = (
        dict(db.execute("SELECT id, name FROM conversations").fetchall())
        if "conversations" in tables
        else {}
    )
    groups = db.execute(
        "SELECT COALESCE(conversation_id, id) AS cid, MIN(datetime_utc) FROM responses"
        " GROUP BY cid ORDER BY MIN(datetime_utc), cid"
    ).fetchall()
    for cid, first_time in groups:
        if tree:
            row = db.execute(
                "SELECT output_node_id FROM responses WHERE COALESCE(conversation_id, id) = ?"
                " AND output_node_id IS NOT NULL ORDER BY datetime_utc DESC, rowid DESC LIMIT 1",
                (cid,),
            ).fetchone()
            entries = _node_messages(db, row[0]) if row else []
        else:
            rows = db.execute(
                "SELECT id, prompt, response, model FROM responses"
                " WHERE COALESCE(conversation_id, id) = ? ORDER BY datetime_utc, rowid",
                (cid,),
            ).fetchall()
            entries = _legacy_turns(db, rows)
        if entries:
            yield Conversation(
                source="llm",
                source_id=str(cid),
                title=str(names.get(cid) or ""),
                created_ms=to_ms(first_time),
                entries=entries,
            )
