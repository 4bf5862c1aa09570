"""Helpers for the interop tests: fixture paths, a store file, and reading what an import saved."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import chatkeep

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "interop"


def saved(db: Path) -> list[dict[str, Any]]:
    """Every saved session of the store file, with its history, oldest first."""
    with chatkeep.open(str(db)) as store:
        rows = store.sessions.list()
        out = [store.sessions.get(r["id"]) for r in rows]
    return sorted((s for s in out if s), key=lambda s: (s["createdAt"], s["name"]))


def by_name(db: Path) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in saved(db)}


def all_text(session: dict[str, Any]) -> str:
    texts = []
    for e in session["history"]:
        c = e["content"]
        if isinstance(c, str):
            texts.append(c)
        else:
            texts.extend(p.get("text", "") for p in c if p.get("type") != "image_url")
    return "\n".join(texts)


def images(session: dict[str, Any]) -> list[str]:
    return [
        p["image_url"]["url"]
        for e in session["history"]
        if isinstance(e["content"], list)
        for p in e["content"]
        if p.get("type") == "image_url"
    ]


def chatgpt_zip(tmp_path: Path, split: bool = False) -> Path:
    """A ChatGPT export zip: the conversations (whole or split in two) and the image file."""
    convs = json.loads((FIXTURES / "chatgpt_conversations.json").read_text())
    path = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(path, "w") as z:
        if split:
            z.writestr("conversations-000.json", json.dumps(convs[:1]))
            z.writestr("conversations-001.json", json.dumps(convs[1:]))
        else:
            z.writestr("conversations.json", json.dumps(convs))
        z.writestr("chat.html", "<html></html>")
        z.write(FIXTURES / "photo-red.png", "file-Img123-photo.png")
        z.write(FIXTURES / "photo-red.png", "dalle-generations/file_000000dalle42-1b2c.png")
    return path


def llm_db(path: Path, *, tree: bool) -> Path:
    """A real ``logs.db`` in llm's legacy (responses) or node-tree schema."""
    png = (FIXTURES / "photo-red.png").read_bytes()
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
        CREATE TABLE attachments (id TEXT PRIMARY KEY, type TEXT, path TEXT, url TEXT,
                                  content BLOB);
        """
    )
    conn.execute("INSERT INTO conversations VALUES ('01conv', 'Haiku workshop', 'gpt-4o-mini')")
    conn.execute("INSERT INTO attachments VALUES ('att1', 'image/png', NULL, NULL, ?)", (png,))
    conn.execute(
        "INSERT INTO attachments VALUES ('att2', 'application/pdf', '/nowhere/x.pdf', NULL, NULL)"
    )
    if not tree:
        conn.executescript(
            """
            CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT,
              prompt_json TEXT, options_json TEXT, response TEXT, response_json TEXT,
              conversation_id TEXT, duration_ms INTEGER, datetime_utc TEXT,
              input_tokens INTEGER, output_tokens INTEGER, token_details TEXT);
            CREATE TABLE prompt_attachments (response_id TEXT, attachment_id TEXT,
              "order" INTEGER, PRIMARY KEY (response_id, attachment_id));
            """
        )
        rows = [
            (
                "r1",
                "gpt-4o-mini",
                "A haiku about moss",
                "Be terse",
                "Green hush on old stone",
                "01conv",
                "2025-06-01T10:00:00.000000",
            ),
            (
                "r2",
                "gpt-4o-mini",
                "Now about this picture",
                None,
                "Red square, quiet sun",
                "01conv",
                "2025-06-01T10:05:00.000000",
            ),
            (
                "r3",
                "gpt-4o-mini",
                "One-off question",
                None,
                "One-off answer",
                None,
                "2025-06-02T09:00:00.000000",
            ),
        ]
        conn.executemany(
            "INSERT INTO responses (id, model, prompt, system, response, conversation_id,"
            " datetime_utc) VALUES (?,?,?,?,?,?,?)",
            rows,
        )
        conn.execute("INSERT INTO prompt_attachments VALUES ('r2', 'att1', 0)")
        conn.execute("INSERT INTO prompt_attachments VALUES ('r2', 'att2', 1)")
    else:
        conn.executescript(
            """
            CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, resolved_model TEXT,
              conversation_id TEXT, input_node_id TEXT, first_input_node_id TEXT,
              output_node_id TEXT, prompt TEXT, system TEXT, response TEXT, reasoning TEXT,
              options_json TEXT, schema_id TEXT, prompt_json TEXT, response_json TEXT,
              duration_ms INTEGER, datetime_utc TEXT, input_tokens INTEGER,
              output_tokens INTEGER, token_details TEXT);
            CREATE TABLE messages (id TEXT PRIMARY KEY, role TEXT, provider_metadata TEXT);
            CREATE TABLE parts (id INTEGER PRIMARY KEY, message_id TEXT, "order" INTEGER,
              type TEXT, text TEXT, redacted INTEGER, name TEXT, arguments TEXT, output TEXT,
              tool_call_id TEXT, server_executed INTEGER, exception TEXT, instance_id INTEGER,
              attachment_id TEXT, provider_metadata TEXT);
            CREATE TABLE part_attachments (part_id INTEGER, attachment_id TEXT,
              "order" INTEGER, PRIMARY KEY (part_id, "order"));
            CREATE TABLE nodes (id TEXT PRIMARY KEY, parent_id TEXT, message_id TEXT,
              depth INTEGER);
            """
        )
        msgs = [
            ("m0", "system", [("text", "SYSTEM-LLM-HIDDEN", None)]),
            ("m1", "user", [("text", "A haiku about moss", None)]),
            (
                "m2",
                "assistant",
                [
                    ("reasoning", "HIDDEN-REASONING", None),
                    ("text", "Green hush on old stone", None),
                ],
            ),
            (
                "m3",
                "user",
                [("text", "Now about this picture", None), ("attachment", None, "att1")],
            ),
            ("m4", "assistant", [("text", "Red square, quiet sun", None)]),
            ("m2b", "assistant", [("text", "ABANDONED-LLM earlier reply", None)]),
        ]
        pid = 0
        for mid, role, parts in msgs:
            conn.execute("INSERT INTO messages VALUES (?,?,NULL)", (mid, role))
            for k, (ptype, text, att) in enumerate(parts):
                pid += 1
                conn.execute(
                    'INSERT INTO parts (id, message_id, "order", type, text, attachment_id)'
                    " VALUES (?,?,?,?,?,?)",
                    (pid, mid, k, ptype, text, att),
                )
        nodes = [
            ("n0", None, "m0"),
            ("n1", "n0", "m1"),
            ("n2", "n1", "m2"),
            ("n3", "n2", "m3"),
            ("n4", "n3", "m4"),
            ("n2b", "n1", "m2b"),
        ]
        for depth, (nid, parent, mid) in enumerate(nodes):
            conn.execute("INSERT INTO nodes VALUES (?,?,?,?)", (nid, parent, mid, depth))
        conn.executemany(
            "INSERT INTO responses (id, model, conversation_id, output_node_id, datetime_utc)"
            " VALUES (?,?,?,?,?)",
            [
                ("r0", "gpt-4o-mini", "01conv", "n2b", "2025-06-01T09:59:00.000000"),
                ("r1", "gpt-4o-mini", "01conv", "n2", "2025-06-01T10:00:00.000000"),
                ("r2", "gpt-4o-mini", "01conv", "n4", "2025-06-01T10:05:00.000000"),
            ],
        )
    conn.commit()
    conn.close()
    return path
