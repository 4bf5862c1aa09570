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
conversation is a conversation of its own. Responses are read in one ordered pass and grouped
as they come (linear in the number of responses: 100,000 conversations of one response each
read in seconds, where a query per conversation took minutes).

The file is opened read-only with no value larger than 128 MB; a view or virtual table where llm writes a table, a query that
runs past its time budget (a progress handler interrupts it), an attachment path that is not a
regular file, or an attachment over ``maxSourceBytes`` / 50 megapixels is a typed error, and
nothing is imported.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

from .budget import (
    IMAGE_MAX_BYTES,
    LINE_MAX_BYTES,
    NotRegular,
    TooLarge,
    image_problem,
    open_regular,
    over,
    read_capped,
)
from .model import Conversation, clean_role, image_url_of, parts_entry, to_ms
from .source import Input, bad_file

#: The tables read; each must be a plain table (a view could recurse or multiply rows).
READ = (
    "responses",
    "conversations",
    "attachments",
    "prompt_attachments",
    "part_attachments",
    "nodes",
    "messages",
    "parts",
)
#: How long one query may run: a few seconds, and more for a bigger file (an honest query
#: reads the file a few times at most) ...
STATEMENT_S = 3.0
BYTES_PER_S = 20 << 20
#: ... and all of them together (an honest import reads 100,000 responses in about 5 s).
TOTAL_S = 4.0
TOTAL_BYTES_PER_S = 1 << 20
BATCH = 1000
_HINT = "pass the file printed by `llm logs path`"


class _Db:
    """A ``logs.db`` opened read-only (``immutable`` unless a write-ahead log holds more), with
    views and untrusted schema functions refused and every query bounded in time by a progress
    handler (a crafted database cannot hang the import)."""

    def __init__(self, inp: Input) -> None:
        self.path = inp.path
        try:
            size = os.path.getsize(inp.path)
        except OSError:
            size = 0
        self.budget = STATEMENT_S + size / BYTES_PER_S
        self.total = TOTAL_S + size / TOTAL_BYTES_PER_S
        self.started = time.monotonic()
        self.spent = 0.0  # seconds in queries that have returned
        self.timed_out = False
        wal = inp.path + "-wal"
        immutable = "" if os.path.exists(wal) and os.path.getsize(wal) else "&immutable=1"
        uri = f"file:{urllib.parse.quote(os.path.abspath(inp.path))}?mode=ro{immutable}"
        try:
            self.conn = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise bad_file(inp.path, f"cannot open the SQLite file ({exc})") from None
        self.conn.set_progress_handler(self._tick, 100)
        # no value (a generated column's included) may be larger than a JSON Lines line
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, LINE_MAX_BYTES)
        try:
            self.conn.execute("PRAGMA trusted_schema = OFF")
            kinds = {
                name: (kind, str(sql or ""))
                for kind, name, sql in self.all("SELECT type, name, sql FROM sqlite_master")
            }
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise bad_file(inp.path, f"not a readable SQLite database ({self.why(exc)})") from None
        self.tables = {n for n, (k, _sql) in kinds.items() if k in ("table", "view")}
        if "responses" not in self.tables:
            self.conn.close()
            raise bad_file(inp.path, "this SQLite file has no llm `responses` table", _HINT)
        odd = [
            n
            for n in READ
            if n in kinds
            and (kinds[n][0] != "table" or kinds[n][1].upper().startswith("CREATE VIRTUAL"))
        ]
        odd += [n for n in READ if n in kinds and n not in odd and self._generated(n)]
        if odd:
            self.conn.close()
            kind = kinds[odd[0]][0]
            if kind == "table":
                virtual = kinds[odd[0]][1].upper().startswith("CREATE VIRTUAL")
                kind = "virtual table" if virtual else "table with generated columns"
            raise bad_file(
                inp.path,
                f"`{odd[0]}` is a {kind}, not a plain table as llm writes it",
                "this is not a logs.db written by llm; " + _HINT,
            )

    def _generated(self, table: str) -> bool:
        """Whether ``table`` has a generated column (computed on every read: llm writes none)."""
        return any(r[6] in (2, 3) for r in self.all(f"PRAGMA table_xinfo([{table}])"))

    def _tick(self) -> int:
        now = time.monotonic() - self.started
        if now > self.budget or self.spent + now > self.total:
            self.timed_out = True
            return 1
        return 0

    def why(self, exc: BaseException) -> str:
        if self.timed_out:
            return (
                f"its queries ran longer than their budget ({self.budget:.0f} s for one, "
                f"{self.total:.0f} s in all): a crafted or damaged database"
            )
        return f"the llm database could not be read ({exc})"

    def _timed(self, call: Any) -> Any:
        self.started = time.monotonic()
        try:
            return call()
        finally:
            self.spent += time.monotonic() - self.started

    def all(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        return self._timed(lambda: self.conn.execute(sql, args).fetchall())

    def one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        return self._timed(lambda: self.conn.execute(sql, args).fetchone())

    def batches(self, sql: str) -> Iterator[Any]:
        """The rows of ``sql``, fetched (and timed) a batch at a time."""
        cur = self._timed(lambda: self.conn.execute(sql))
        while True:
            rows = self._timed(lambda: cur.fetchmany(BATCH))
            if not rows:
                return
            yield from rows

    def close(self) -> None:
        self.conn.close()


def _columns(db: _Db, table: str) -> set[str]:
    return {r[1] for r in db.all(f"PRAGMA table_info([{table}])")}


def _read_path(db: _Db, path: str) -> bytes | None:
    """The bytes of an attachment's file (a regular file, at most ``maxSourceBytes``), or
    ``None`` when there is no such file."""
    try:
        with open_regular(path) as fh:
            if os.fstat(fh.fileno()).st_size > IMAGE_MAX_BYTES:  # declared: refused unread
                raise TooLarge(over(f"attachment {path}", IMAGE_MAX_BYTES))
            return read_capped(fh, IMAGE_MAX_BYTES, f"attachment {path}")
    except NotRegular as exc:
        raise bad_file(
            db.path,
            f"attachment {path} is {exc}, not a regular file",
            "attachments are read from regular files only",
        ) from None
    except TooLarge as exc:
        raise bad_file(db.path, str(exc), "scale the image down or leave it out") from None
    except OSError:
        return None


def _image(db: _Db, data: bytes, name: str) -> str | None:
    why = image_problem(data, f"attachment {name}")
    if why:
        raise bad_file(db.path, why, "scale the image down or leave it out")
    return image_url_of(data, name)


def _attachment(db: _Db, att_id: Any) -> tuple[str | None, str | None]:
    """``(image data URL, None)`` or ``(None, reference text)`` for one attachment id."""
    row = db.one(
        "SELECT type, path, url, typeof(content), length(content) FROM attachments WHERE id = ?",
        (att_id,),
    )
    if row is None:
        return None, None
    mime, path, url, kind, size = row
    name = str(path or url or att_id)
    if kind == "blob" and size:
        if size > IMAGE_MAX_BYTES:
            raise bad_file(
                db.path, over(f"attachment {name or att_id}", IMAGE_MAX_BYTES), "scale it down"
            )
        (content,) = db.one("SELECT content FROM attachments WHERE id = ?", (att_id,))
        data = _image(db, content, name)
        if data:
            return data, None
    if path:
        raw = _read_path(db, str(path))
        data = _image(db, raw, str(path)) if raw is not None else None
        if data:
            return data, None
    return None, f"[attachment not in the export: {path or url or mime or att_id}]"


def _node_messages(db: _Db, leaf: Any, tables: set[str]) -> list[dict[str, Any]]:
    chain = []
    seen: set[Any] = set()
    node = leaf
    while node is not None and node not in seen:
        seen.add(node)
        row = db.one("SELECT parent_id, message_id FROM nodes WHERE id = ?", (node,))
        if row is None:
            break
        chain.append(row[1])
        node = row[0]
    chain.reverse()
    has_part_att = "part_attachments" in tables
    entries = []
    for mid in chain:
        mrow = db.one("SELECT role FROM messages WHERE id = ?", (mid,))
        role = clean_role(mrow[0]) if mrow else None
        if role is None:
            continue
        texts: list[str] = []
        urls: list[str] = []
        parts = db.all(
            "SELECT id, type, text, attachment_id FROM parts WHERE message_id = ? ORDER BY [order]",
            (mid,),
        )
        for pid, ptype, text, att in parts:
            att_ids = [att] if att else []
            if has_part_att:
                att_ids += [
                    r[0]
                    for r in db.all(
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


def _legacy_turns(db: _Db, rows: list[tuple[Any, ...]], has_att: bool) -> list[dict[str, Any]]:
    entries = []
    for rid, prompt, response, model in rows:
        urls: list[str] = []
        notes: list[str] = []
        if has_att:
            for (att,) in db.all(
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
    db = _Db(inp)
    try:
        yield from _read(db, db.tables)
    except sqlite3.DatabaseError as exc:
        raise bad_file(inp.path, db.why(exc)) from None
    finally:
        db.close()


def _read(db: _Db, tables: set[str]) -> Iterator[Conversation]:
    cols = _columns(db, "responses")
    tree = "output_node_id" in cols and {"nodes", "messages", "parts"} <= tables
    names = dict(db.all("SELECT id, name FROM conversations")) if "conversations" in tables else {}
    if tree:
        # the newest response's output node of each conversation, in one pass
        leaves = db.all(
            "SELECT cid, first, output_node_id FROM (SELECT COALESCE(conversation_id, id) AS cid,"
            " MIN(datetime_utc) OVER w AS first, output_node_id, ROW_NUMBER() OVER"
            " (PARTITION BY COALESCE(conversation_id, id) ORDER BY (output_node_id IS NULL),"
            " datetime_utc DESC, rowid DESC) AS k FROM responses"
            " WINDOW w AS (PARTITION BY COALESCE(conversation_id, id))) WHERE k = 1"
            " ORDER BY first, cid"
        )
        for cid, first_time, leaf in leaves:
            entries = _node_messages(db, leaf, tables) if leaf is not None else []
            yield from _conversation(cid, first_time, entries, names)
        return
    # every response once, grouped by conversation (first response's time), in time order
    rows = db.batches(
        "SELECT COALESCE(conversation_id, id) AS cid, MIN(datetime_utc) OVER"
        " (PARTITION BY COALESCE(conversation_id, id)) AS first, id, prompt, response, model"
        " FROM responses ORDER BY first, cid, datetime_utc, rowid"
    )
    has_att = {"prompt_attachments", "attachments"} <= tables
    for (cid, first_time), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        turns = [r[2:] for r in group]
        yield from _conversation(cid, first_time, _legacy_turns(db, turns, has_att), names)


def _conversation(
    cid: Any, first_time: Any, entries: list[dict[str, Any]], names: dict[Any, Any]
) -> Iterator[Conversation]:
    if entries:
        yield Conversation(
            source="llm",
            source_id=str(cid),
            title=str(names.get(cid) or ""),
            created_ms=to_ms(first_time),
            entries=entries,
        )
