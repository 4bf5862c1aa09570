"""A partly broken import file imports what it can (SPEC §14): each conversation that cannot be
read is skipped and reported with its reason (`skipped` in `--json`, a line each otherwise), the
rest import in one transaction; a file in which nothing could be imported is exit 3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chatkeep
from clirun import run

CHATGPT = (
    Path(__file__).resolve().parents[1] / "fixtures" / "interop" / "chatgpt_conversations.json"
)


def _sessions(db: Path) -> int:
    with chatkeep.open(str(db)) as store:
        return len(store.sessions.list(limit=10_000))


def test_elements_that_are_not_conversations_are_skipped_and_reported(tmp_path: Path) -> None:
    """A ChatGPT list with a number and a string among its conversations imports the rest."""
    good = json.loads(CHATGPT.read_text())
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([good[0], 42, *good[1:], "junk"]))
    db = tmp_path / "s.db"
    report = json.loads(run(db, "import", str(path), "--json").stdout)
    assert report["added"] == len(good) == _sessions(db)
    assert report["skipped"] == [
        {"where": "conversation 2", "reason": "it is not a ChatGPT conversation"},
        {"where": f"conversation {len(good) + 2}", "reason": "it is not a ChatGPT conversation"},
    ]
    again = run(tmp_path / "t.db", "import", str(path)).stdout
    assert f"{len(good)} new saved sessions; skipped 2:" in again
    assert "\n  conversation 2 — it is not a ChatGPT conversation\n" in again


def _line(text: str) -> str:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": text}]
    return json.dumps({"messages": [*msgs, {"role": "assistant", "content": "ok"}]})


def test_conversation_with_an_invalid_entry_is_skipped_the_rest_import(tmp_path: Path) -> None:
    """A JSON Lines line holding a lone surrogate is skipped with the reason; two lines import."""
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join([_line("first"), _line("\ud800 broken"), _line("third")]) + "\n")
    db = tmp_path / "s.db"
    report = json.loads(run(db, "import", str(path), "--from", "jsonl", "--json").stdout)
    assert report["added"] == 2 == _sessions(db)
    [skip] = report["skipped"]
    assert skip["where"] == "conversation 2" and "not valid" in skip["reason"]


def test_file_in_which_nothing_imports_is_an_error(tmp_path: Path) -> None:
    """A ShareGPT file whose conversations hold no message is exit 3, not 'imported 0'."""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps([{"conversations": []}, {"conversations": [{"from": "system"}]}]))
    db = tmp_path / "s.db"
    proc = run(db, "import", str(path), "--from", "sharegpt", ok=False)
    assert proc.returncode == 3, proc.stdout
    assert "no conversation in the file could be imported" in proc.stderr
    assert "conversation 1: it holds no message" in proc.stderr
    assert _sessions(db) == 0


CLAUDE = CHATGPT.with_name("claude_conversations.json")


def test_conversation_with_a_wrong_typed_field_is_skipped_with_its_reason(tmp_path: Path) -> None:
    """A Claude conversation whose `attachments` is a number is skipped (no traceback); the
    others import."""
    convs = json.loads(CLAUDE.read_text())
    convs[0]["chat_messages"][0]["attachments"] = 5
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(convs))
    db = tmp_path / "s.db"
    report = json.loads(run(db, "import", str(path), "--from", "claude", "--json").stdout)
    assert report["added"] == len(convs) - 1 == _sessions(db)
    [skip] = report["skipped"]
    assert skip["where"] == "conversation 1" and "unexpected shape" in skip["reason"]
    assert skip.get("title") == convs[0]["name"]


def test_an_export_of_an_empty_profile_imports_back_as_nothing_in_every_format(
    tmp_path: Path,
) -> None:
    """Exporting an empty profile writes a file that imports back: exit 0, no session, and a
    sentence saying the file held an empty profile (never a crash, never a bare 0)."""
    empty = tmp_path / "empty.db"
    for fmt in ("json", "md", "jsonl", "sharegpt"):
        out = tmp_path / f"empty.{fmt}"
        assert run(empty, "export", "--format", fmt, "-o", str(out)).returncode == 0
        assert out.stat().st_size > 0, fmt
        target = tmp_path / f"into-{fmt}.db"
        result = run(target, "import", str(out))
        assert result.returncode == 0, (fmt, result.stderr)
        if fmt != "json":  # chatkeep's own json is a whole profile: it reports its counts
            assert "export of an empty profile" in result.stdout, (fmt, result.stdout)
        assert _sessions(target) == 0
        report = json.loads(run(target, "import", str(out), "--json").stdout)
        assert report.get("added", 0) == 0
