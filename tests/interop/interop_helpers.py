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


def llm_db(path: Path) -> Path:
    """A ``logs.db`` in llm's responses-era schema (0.17 to 0.31), written by hand with one
    conversation holding a system prompt and two attachments, and a response of its own."""
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
    conn.commit()
    conn.close()
    return path
