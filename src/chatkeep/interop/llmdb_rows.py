"""What every reader of an llm ``logs.db`` shares: the database opened read-only under its time
and size budgets, a turn being built, attachments, tool records, and a conversation made from
entries (see :mod:`.llmdb`)."""

from __future__ import annotations

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
