"""Distinct conversations with equal text are never merged on import, and importing the same
file twice still adds nothing the second time (SPEC §14); through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chatkeep
from clirun import run


def _sharegpt_rows(distinct: int, repeated: int) -> list[dict[str, Any]]:
    """``distinct`` conversations, then the first ``repeated`` of them again (no ids, as in
    most published ShareGPT sets: two people asked the same thing and got the same answer)."""

    def row(i: int) -> dict[str, Any]:
        turns = [{"from": "human", "value": f"question {i}"}, {"from": "gpt", "value": f"a{i}"}]
        return {"conversations": turns}

    return [row(i) for i in range(distinct)] + [row(i) for i in range(repeated)]


def _import(db: Path, path: Path, *extra: str) -> dict[str, Any]:
    return json.loads(run(db, "import", str(path), "--json", *extra).stdout)


def _texts(db: Path) -> list[str]:
    with chatkeep.open(str(db)) as store:
        out = []
        for row in store.sessions.list(limit=10_000):
            session = store.sessions.get(row["id"])
            out.append(" | ".join(str(e["content"]) for e in session["history"]))
        return sorted(out)


def test_sharegpt_rows_with_equal_text_are_kept_apart(tmp_path: Path) -> None:
    """300 ShareGPT rows of which 39 repeat earlier ones: 300 sessions; again: 0 added."""
    path = tmp_path / "sharegpt.json"
    rows = _sharegpt_rows(261, 39)
    path.write_text(json.dumps(rows))
    db = tmp_path / "s.db"
    first = _import(db, path)
    assert (first["conversations"], first["added"], first["already"]) == (300, 300, 0)
    again = _import(db, path)
    assert (again["added"], again["already"]) == (0, 300)
    expected = sorted(" | ".join(t["value"] for t in r["conversations"]) for r in rows)
    assert _texts(db) == expected


def test_jsonl_lines_with_equal_text_are_kept_apart(tmp_path: Path) -> None:
    """Three equal OpenAI-messages lines are three sessions; a second import adds none."""
    line = json.dumps(
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    )
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join([line, line, line]) + "\n")
    db = tmp_path / "s.db"
    assert _import(db, path, "--from", "jsonl")["added"] == 3
    assert _import(db, path, "--from", "jsonl")["added"] == 0
    assert _texts(db) == ["hi | hello"] * 3


def test_markdown_export_of_equal_sessions_imports_back_whole(tmp_path: Path) -> None:
    """Two saved sessions with equal text exported as Markdown import back as two."""
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    path = tmp_path / "two.json"
    path.write_text(json.dumps(_sharegpt_rows(1, 1)))
    assert _import(src, path)["added"] == 2
    md = tmp_path / "all.md"
    run(src, "export", "--format", "md", "-o", str(md))
    assert _import(dst, md)["added"] == 2
    assert _import(dst, md)["added"] == 0
    assert _texts(dst) == _texts(src)
