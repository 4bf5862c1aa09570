"""``llm``'s ``logs.db`` (``llm logs path`` prints where it is), opened read-only.

Every schema ``llm`` has written since it kept conversations (its ``llm/migrations.py``):

- **message store** (``llm`` 0.32 and later, migration ``m023_message_store``): a ``threads``
  row (``name``, ``tip_message_hash``) points at the newest of a chain of ``messages``
  (``hash``, ``parent_hash``, ``role``: ``system``/``user``/``assistant``/``tool``) whose
  ``parts`` (``position``, ``type``, ``text``, ``payload`` JSON) hold the content: ``text`` and
  ``reasoning`` (literal ``text``, or ``payload.text_ref`` pieces naming ``fragments``),
  ``tool_call`` (``name``, ``arguments``, ``tool_call_id``), ``tool_result`` (``name``,
  ``output``, ``tool_call_id``, ``exception``, ``attachments``) and ``attachment``
  (``part_attachments`` → ``attachments``). One ``turns`` row per model call
  (``parent_message_hash``, ``tip_message_hash``, ``model``, ``datetime_utc``) dates the
  messages: each message takes the time of the first call that sent or produced it.
- **responses** (``llm`` 0.5 to 0.31, and what older files keep after an upgrade): one row per
  call (``prompt``, ``system``, ``response``, ``conversation_id``, ``datetime_utc``; later
  ``reasoning``), its images through ``prompt_attachments`` (0.17+), fragments through
  ``prompt_fragments``/``system_fragments`` (0.24+, placed before the typed text as llm sent
  them), tools through ``tool_calls``/``tool_results`` (0.26+). A response also logged as a
  turn (same id), or of a conversation that has a thread (same id: llm continues an old
  conversation as a thread holding its whole history), is read from the thread only.
- **log** (``llm`` 0.4; later releases rename it ``logs`` and keep it when it holds rows): one
  row per prompt (``prompt``, ``system``, ``response``, ``timestamp``/``datetime_utc``),
  ``chat_id`` naming the first row of its chat.

One saved session per thread or ``conversations`` row (its ``name`` whole is the title; a
response without a conversation is a conversation of its own), the messages in chain order:

- a **system prompt** is kept as a user entry whose text starts with ``[System prompt]`` (once,
  and again only where it changes): chatkeep's entries have no system role, and dropping it
  would lose what shaped the answers; marked, it reads as what it was and is sent on as
  context if the session is continued;
- **images** (attachments of an ``image/*`` type whose bytes are in the database, or still
  at their ``path``) become image parts; any other attachment, or an image whose bytes are
  gone, is named in the text (``[attachment not in the export: PATH (TYPE)]``);
- **tool calls** go on the assistant entry that made them (``toolCalls``), and the results of
  the ``tool`` message that answers them on that same entry (``toolResult``); the answer that
  follows is an assistant entry of its own; **reasoning** is the entry's ``reasoning``;
  message times are ``createdAt``; assistant entries name the model (``provider``).

A thread or conversation with no message is reported as skipped with its reason; a file in
which nothing could be read is an error (``save_conversations``).

Conversations are read in one ordered pass each for threads and responses (linear in their
number: 100,000 conversations of one response each read in seconds).

The file is opened read-only with no value larger than 128 MB; a view or virtual table where llm
writes a table, a query that runs past its time budget (a progress handler interrupts it), an
attachment path that is not a regular file, or an attachment over ``maxSourceBytes`` / 50
megapixels is a typed error, and nothing is imported."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

from ..constants import AUTO_NAME_MAX
from ..entries import first_text
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
from .model import (
    Conversation,
    Skipped,
    as_dict,
    as_list,
    image_url_of,
    parts_entry,
    text_entry,
    to_ms,
)
from .source import Input, bad_file

#: The tables read; each must be a plain table (a view could recurse or multiply rows).
READ = (
    "responses",
    "conversations",
    "attachments",
    "prompt_attachments",
    "part_attachments",
    "messages",
    "parts",
    "threads",
    "turns",
    "fragments",
    "prompt_fragments",
    "system_fragments",
    "tool_calls",
    "tool_results",
    "log",
    "logs",
)
#: The tables of each schema, and the columns read from them.
STORE = {
    "threads": {"id", "name", "tip_message_hash", "datetime_utc"},
    "messages": {"hash", "parent_hash", "role"},
    "parts": {"id", "message_hash", "position", "type", "text", "payload"},
}
RESPONSES = {"id", "prompt", "response", "conversation_id", "datetime_utc"}
EARLY = {"id", "prompt", "response"}
SYSTEM_MARK = "[System prompt]"
#: The note that starts a thread whose older messages the database no longer holds.
LOST_MARK = "[earlier messages not in the database:"
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
        if not self.tables & {"threads", "responses", "logs", "log"}:
            self.conn.close()
            raise bad_file(
                inp.path,
                "this SQLite file is not an llm logs.db (it has no `threads` or `responses` table)",
                _HINT,
            )
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
        return None, f"[attachment not in the export: {att_id} (no such attachment row)]"
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
    where = path or url or att_id
    return None, f"[attachment not in the export: {where} ({mime or 'unknown type'})]"


class _Turn:
    """The entries of one conversation as they are built, message by message."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.system: str | None = None

    def add_system(self, text: str, when: int | None) -> None:
        if text.strip() and text != self.system:
            self.entries.append(_timed(text_entry("user", f"{SYSTEM_MARK}\n{text}"), when))
        self.system = text

    def add_user(self, texts: list[str], urls: list[str], when: int | None) -> None:
        if any(t.strip() for t in texts) or urls:
            self.entries.append(_timed(parts_entry("user", texts, urls), when))

    def add_assistant(
        self,
        texts: list[str],
        urls: list[str],
        when: int | None,
        *,
        model: Any = None,
        reasoning: list[str] | None = None,
        calls: list[dict[str, str]] | None = None,
        results: list[dict[str, str]] | None = None,
    ) -> None:
        """An answer; ``results`` are those of tools the provider ran itself, in the answer."""
        extra: dict[str, Any] = {}
        kept = [r for r in reasoning or [] if r.strip()]
        if kept:
            extra["reasoning"] = "\n\n".join(kept)
        if calls:
            extra["toolCalls"] = calls
        if results:
            extra["toolResult"] = results
        if model:
            extra["provider"] = {"name": "llm", "model": str(model)}
        if any(t.strip() for t in texts) or urls or kept or calls or results:
            self.entries.append(_timed(parts_entry("assistant", texts, urls, **extra), when))

    def add_results(self, results: list[dict[str, str]], when: int | None) -> None:
        """Tool results go on the assistant entry whose calls they answer: the last one."""
        if not results:
            return
        last = self.entries[-1] if self.entries else None
        if last is None or last["role"] != "assistant" or "toolResult" in last:
            last = _timed({"role": "assistant", "content": ""}, when)
            self.entries.append(last)
        last["toolResult"] = results


def _timed(entry: dict[str, Any], when: int | None) -> dict[str, Any]:
    if when is not None:
        entry["createdAt"] = when
    return entry


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) and text else {}
    except ValueError:
        return {}


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _tool_call(name: Any, arguments: Any, call_id: Any) -> dict[str, str]:
    call = {"name": str(name or ""), "arguments": _arguments(arguments if arguments else {})}
    if call_id:
        call["id"] = str(call_id)
    return call


def _tool_result(name: Any, output: Any, call_id: Any, exception: Any) -> dict[str, str]:
    text = output if isinstance(output, str) else _arguments(output) if output else ""
    if exception:
        text += ("\n" if text else "") + f"[exception: {exception}]"
    result = {"content": text}
    if name:
        result["name"] = str(name)
    if call_id:
        result["id"] = str(call_id)
    return result


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


def read(inp: Input) -> Iterator[Conversation | Skipped]:
    db = _Db(inp)
    try:
        yield from _read(db)
    except sqlite3.DatabaseError as exc:
        raise bad_file(inp.path, db.why(exc)) from None
    finally:
        db.close()


def _read(db: _Db) -> Iterator[Conversation | Skipped]:
    """The threads of the message store, then the responses no thread holds."""
    store = "threads" in db.tables
    if store:
        missing = [
            f"{table}.{col}"
            for table, cols in STORE.items()
            for col in sorted(cols - (_columns(db, table) if table in db.tables else set()))
        ]
        if missing and not db.tables & {"responses", "log", "logs"}:
            raise bad_file(
                db.path,
                f"its `threads` are not llm's message store (no {', '.join(missing[:3])})",
                "this is not a logs.db written by llm; " + _HINT,
            )
        store = not missing
    legacy = "responses" in db.tables
    if legacy:
        missing = sorted(RESPONSES - _columns(db, "responses") - {"conversation_id"})
        if missing and not store and not db.tables & {"log", "logs"}:
            raise bad_file(
                db.path,
                f"its `responses` table is not llm's (no {', '.join(missing[:3])})",
                "this is not a logs.db written by llm; " + _HINT,
            )
        legacy = not missing
    early = [t for t in ("logs", "log") if t in db.tables and EARLY <= _columns(db, t)]
    if not (store or legacy or early):
        raise bad_file(
            db.path,
            "its tables are not llm's (no `threads`, `responses` or `log` as llm writes them)",
            "this is not a logs.db written by llm; " + _HINT,
        )
    if store:
        yield from _store_conversations(db)
    if legacy:
        yield from _legacy_conversations(db)
    if early:
        yield from _early_conversations(db, early[0])


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


def _conversation(
    where: str, cid: Any, first_time: Any, entries: list[dict[str, Any]], name: Any
) -> Iterator[Conversation | Skipped]:
    title = str(name) if name else ""
    if not title:  # the first question, not the system prompt
        for e in entries:
            text = first_text(e) if e["role"] == "user" else ""
            if text and not text.startswith((SYSTEM_MARK, LOST_MARK)):
                words = " ".join(text.split())
                title = words[:AUTO_NAME_MAX] + ("…" if len(words) > AUTO_NAME_MAX else "")
                break
    if not entries:
        yield Skipped(where, "it holds no message", " ".join(title.split()))
        return
    yield Conversation(
        source="llm",
        source_id=str(cid),
        title=title,
        created_ms=to_ms(first_time),
        entries=entries,
    )
