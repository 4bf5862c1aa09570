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

import sqlite3
from collections.abc import Iterator

from .llmdb_legacy import _early_conversations, _legacy_conversations
from .llmdb_rows import _HINT, EARLY, RESPONSES, STORE, _columns, _Db
from .llmdb_threads import _store_conversations
from .model import (
    Conversation,
    Skipped,
)
from .source import Input, bad_file


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
