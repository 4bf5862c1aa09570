"""Crafted llm ``logs.db`` files for the corpus (see :mod:`hostile.corpus_imports`): views that
recurse forever, a virtual table, generated columns, an unindexed message chain, attachment
paths that are FIFOs, devices or oversized, oversized or 100-megapixel blobs, a message cycle.
``tree=True`` makes llm's message store (llm 0.32+: threads, messages, parts, turns)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hostile.corpus_imports import MB, PNG_SIG, big_png, fifo, link, sparse, write_file


def llm_db(
    d: Path,
    *,
    tree: bool = False,
    extra: str = "",
    rows: int = 1,
    att: Any = None,
    gen_rows: int = 0,
) -> Path:
    """A responses-era (or, with ``tree``, message-store) llm ``logs.db``; ``extra`` SQL runs
    last; ``att`` is ``(path, blob)`` of one attachment of the first response."""
    path = d / "logs.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
        CREATE TABLE attachments (id TEXT PRIMARY KEY, type TEXT, path TEXT, url TEXT,
                                  content BLOB);
        CREATE TABLE prompt_attachments (response_id TEXT, attachment_id TEXT, "order" INTEGER);
        """
    )
    if tree:
        conn.executescript(
            """
            CREATE TABLE threads (id TEXT PRIMARY KEY, name TEXT, tip_message_hash TEXT,
              forked_from TEXT, datetime_utc TEXT);
            CREATE TABLE turns (id TEXT PRIMARY KEY, thread_id TEXT, parent_message_hash TEXT,
              tip_message_hash TEXT, model TEXT, datetime_utc TEXT);
            CREATE TABLE messages (hash TEXT PRIMARY KEY, parent_hash TEXT, role TEXT,
              provider_metadata TEXT);
            CREATE TABLE parts (id INTEGER PRIMARY KEY, message_hash TEXT, position INTEGER,
              type TEXT, tool_name TEXT, text TEXT, payload TEXT);
            CREATE TABLE part_attachments (part_id INTEGER, attachment_id TEXT,
              "order" INTEGER);
            INSERT INTO messages VALUES ('m1', NULL, 'user', NULL), ('m2', 'm1', 'assistant', NULL);
            INSERT INTO parts VALUES (1, 'm1', 0, 'text', NULL, 'q', NULL),
                                     (2, 'm2', 0, 'text', NULL, 'a', NULL);
            INSERT INTO threads VALUES ('c1', 'x', 'm2', NULL, '2025-01-01');
            INSERT INTO turns VALUES ('r1', 'c1', 'm1', 'm2', 'm', '2025-01-01');
            """
        )
    else:
        conn.execute(
            "CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, response TEXT,"
            " conversation_id TEXT, datetime_utc TEXT)"
        )
        conn.executemany(
            "INSERT INTO responses VALUES (?, 'm', ?, ?, NULL, ?)",
            ((f"r{i}", f"question {i}", f"answer {i}", f"2025-01-01T{i:09d}") for i in range(rows)),
        )
    if att is not None:
        apath, blob = att
        conn.execute(
            "INSERT INTO attachments VALUES ('a1', 'image/png', ?, NULL, ?)", (apath, blob)
        )
        conn.execute("INSERT INTO prompt_attachments VALUES ('r0', 'a1', 0)")
    if gen_rows:  # ``extra`` refills responses from a JSON list of ``gen_rows`` numbers
        for stmt in extra.split(";"):
            if stmt.strip():
                args = (json.dumps(list(range(gen_rows))),) if "?" in stmt else ()
                conn.execute(stmt, args)
    else:
        conn.executescript(extra)
    conn.commit()
    conn.close()
    return path


_RECURSE = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"


def register_llm(imp: Callable[..., Any]) -> None:
    """Add the llm cases through the corpus's ``importfile`` registrar."""
    imp("llm_recursive_view_responses")(
        lambda d: llm_db(
            d,
            extra="DROP TABLE responses; CREATE VIEW responses AS "
            + _RECURSE
            + " SELECT 'r' || i AS id, 'm' AS model, 'q' AS prompt, 'a' AS response,"
            " NULL AS conversation_id, i AS datetime_utc FROM n;",
        )
    )
    imp("llm_recursive_view_conversations")(
        lambda d: llm_db(
            d,
            extra="DROP TABLE conversations; CREATE VIEW conversations AS "
            + _RECURSE
            + " SELECT 'c' || i AS id, 'x' AS name FROM n;",
        )
    )
    imp("llm_recursive_view_messages")(
        lambda d: llm_db(
            d,
            tree=True,
            extra="DROP TABLE messages; CREATE VIEW messages AS "
            + _RECURSE
            + " SELECT 'm' || i AS hash, 'm' || (i + 1) AS parent_hash, 'user' AS role FROM n;",
        )
    )
    imp("llm_virtual_table_responses")(
        lambda d: llm_db(
            d,
            extra="DROP TABLE responses; CREATE VIRTUAL TABLE responses USING fts5(id, prompt,"
            " response, conversation_id, datetime_utc, model);",
        )
    )
    gen = "DROP TABLE responses; CREATE TABLE responses (id TEXT, model TEXT, prompt TEXT,"
    gen += " conversation_id TEXT, datetime_utc TEXT);"
    gen += " INSERT INTO responses (id, prompt) SELECT 'r' || value, 'q' FROM json_each(?);"
    gen += " ALTER TABLE responses ADD COLUMN response TEXT GENERATED ALWAYS AS ({}) VIRTUAL;"
    imp("llm_generated_column_1gb")(
        lambda d: llm_db(d, extra=gen.format("printf('%.*c', 1000000000, 'x')"), gen_rows=3)
    )
    imp("llm_generated_column_slow")(
        lambda d: llm_db(
            d,
            extra=gen.format("length(replace(printf('%.*c', 3000000, 'x'), 'x', 'yy'))"),
            gen_rows=20_000,
        )
    )
    imp("llm_tree_unindexed_chain_30k")(
        lambda d: llm_db(
            d,
            tree=True,
            extra="DROP TABLE messages; CREATE TABLE messages (hash TEXT, parent_hash TEXT,"
            " role TEXT); INSERT INTO messages WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
            " SELECT i + 1 FROM n WHERE i < 30000) SELECT 'm' || i, 'm' || (i - 1), 'user'"
            " FROM n; UPDATE threads SET tip_message_hash = 'm30000';",
        )
    )
    imp("llm_attachment_path_fifo")(lambda d: llm_db(d, att=(str(fifo(d / "a.png")), None)))
    imp("llm_attachment_path_dev_zero")(lambda d: llm_db(d, att=("/dev/zero", None)))
    imp("llm_attachment_path_dev_urandom")(lambda d: llm_db(d, att=("/dev/urandom", None)))
    imp("llm_attachment_path_symlink_dev_zero")(
        lambda d: llm_db(d, att=(str(link("/dev/zero")(d / "z.png")), None))
    )
    imp("llm_attachment_path_sparse_60mb")(
        lambda d: llm_db(d, att=(str(sparse(d / "s.png", 60 * MB, PNG_SIG)), None))
    )
    imp("llm_attachment_path_png_100mp")(
        lambda d: llm_db(d, att=(str(write_file(d / "p.png", big_png(10_000, 10_000))), None))
    )
    imp("llm_attachment_blob_60mb")(lambda d: llm_db(d, att=(None, PNG_SIG + bytes(60 * MB))))
    imp("llm_attachment_blob_png_100mp")(lambda d: llm_db(d, att=(None, big_png(10_000, 10_000))))
    imp("llm_attachment_path_missing", ok=True)(lambda d: llm_db(d, att=("/nowhere/x.png", None)))
    imp("llm_message_cycle", ok=True)(
        lambda d: llm_db(
            d, tree=True, extra="UPDATE messages SET parent_hash = 'm2' WHERE hash = 'm1';"
        )
    )
    imp("llm_2000_responses_no_conversation", ok=True)(lambda d: llm_db(d, rows=2000))
    imp("llm_sqlite_magic_then_junk")(
        lambda d: write_file(d / "logs.db", b"SQLite format 3\x00" + os.urandom(4000))
    )
