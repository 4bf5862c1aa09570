"""Round trips through every export that imports back (json, md, jsonl, sharegpt): the same
messages in the same order, minus exactly what a format cannot hold (stated here and in
docs/import-export.md); and exports of an empty profile that import back as nothing."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import FIXTURES, saved

import chatkeep
from clirun import run
from factories import assistant, attachment, image_entry, png_data_url, user

REAL = FIXTURES / "real"
T0 = 1_764_000_000_000

#: Entry fields only chatkeep's own formats (json, md) hold.
CHATKEEP_ONLY = ("attachId", "provider", "imagesSeen", "summarized", "interrupted", "videoSrc")


def jsonl_view(e: dict[str, Any]) -> dict[str, Any]:
    """What OpenAI-messages JSON Lines holds: role, text and images, time, reasoning, tool
    calls and results (with their ids and names)."""
    return {k: v for k, v in e.items() if k not in CHATKEEP_ONLY and k != "usage"}


def sharegpt_view(e: dict[str, Any]) -> dict[str, Any]:
    """What ShareGPT holds: no images (each is the text ``<image>``), text parts joined by
    lines, tool results' text only (not their name or id), no chatkeep fields."""
    out = jsonl_view(e)
    c = out["content"]
    if isinstance(c, list):
        out["content"] = "\n".join("<image>" if p["type"] == "image_url" else p["text"] for p in c)
    if "toolResult" in out:
        out["toolResult"] = [{"content": r["content"]} for r in out["toolResult"]]
    return out


def exact(e: dict[str, Any]) -> dict[str, Any]:
    return e


VIEWS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "md": exact,
    "jsonl": jsonl_view,
    "sharegpt": sharegpt_view,
}


def _rich_profile(db: Path) -> None:
    """Two saved sessions holding images, an attachment, reasoning, tool calls with their
    results (one turn ends on a call whose arguments are not JSON) and message times."""
    weather = {"name": "weather", "arguments": '{"city": "Paris"}', "id": "call_1"}
    with chatkeep.open(str(db)) as store:
        for e in (
            attachment("Notes body\n\n## not a heading", title="Notes", createdAt=T0),
            image_entry("look at this", png_data_url(), createdAt=T0 + 1000),
            assistant(
                "A red square.",
                reasoning="The picture is\nall red.\n",
                provider={"name": "p", "model": "m"},
                imagesSeen=True,
                createdAt=T0 + 2000,
            ),
            user("What is the weather in Paris?", createdAt=T0 + 3000),
            assistant(
                "It is 20 °C.",
                reasoning="I need the weather tool.",
                toolCalls=[weather],
                toolResult=[{"content": '{"temp": 20}', "name": "weather", "id": "call_1"}],
                createdAt=T0 + 4000,
            ),
            user("And tomorrow?", createdAt=T0 + 5000),
            assistant("", toolCalls=[{"name": "forecast", "arguments": "city=Paris"}]),
        ):
            store.history.append(e)
        store.sessions.save("Weather and pictures")
        store.history.clear()
        store.history.append(user("second session"))
        store.history.append(assistant("second answer", createdAt=T0 + 9000))
        store.sessions.save("Second")
        store.history.clear()


def _sessions(db: Path) -> list[dict[str, Any]]:
    return saved(db)


def _compare(before: list[dict[str, Any]], after: list[dict[str, Any]], fmt: str) -> None:
    view = VIEWS[fmt]
    want = Counter(
        json.dumps([s["name"], s["createdAt"], [view(e) for e in s["history"]]], sort_keys=True)
        for s in before
    )
    got = Counter(
        json.dumps([s["name"], s["createdAt"], [view(e) for e in s["history"]]], sort_keys=True)
        for s in after
    )
    assert got == want


def _through(db: Path, tmp_path: Path, fmt: str) -> Path:
    out = tmp_path / f"export.{fmt}"
    run(db, "export", "--format", fmt, "-o", str(out))
    other = tmp_path / f"back-{fmt}.db"
    report = json.loads(run(other, "import", str(out), "--json").stdout)
    assert report["skipped"] == []
    return other


def test_rich_profile_json_round_trip_is_exact(db: Path, tmp_path: Path) -> None:
    _rich_profile(db)
    out = tmp_path / "p.json"
    run(db, "export", "-o", str(out))
    other = tmp_path / "back.db"
    run(other, "import", str(out))
    with chatkeep.open(str(db)) as a, chatkeep.open(str(other)) as b:
        ids = [r["id"] for r in a.sessions.list()]
        assert [r["id"] for r in b.sessions.list()] == ids
        assert [b.sessions.get(i) for i in ids] == [a.sessions.get(i) for i in ids]


@pytest.mark.parametrize("fmt", ["md", "jsonl", "sharegpt"])
def test_rich_profile_round_trips(db: Path, tmp_path: Path, fmt: str) -> None:
    """Images, attachments, reasoning, tool calls and times come back through md exactly,
    and through jsonl and sharegpt up to what the format cannot hold (the views above)."""
    _rich_profile(db)
    before = _sessions(db)
    stored = [e for s in before for e in s["history"]]
    assert any("toolCalls" in e for e in stored) and any("reasoning" in e for e in stored)
    after = _sessions(_through(db, tmp_path, fmt))
    _compare(before, after, fmt)
    if fmt == "md":  # chatkeep's own Markdown keeps the session ids too
        assert sorted(s["id"] for s in after) == sorted(s["id"] for s in before)


def test_markdown_shows_folded_reasoning_and_tools(db: Path, tmp_path: Path) -> None:
    """The md export writes reasoning, tool calls and tool results as folded sections a
    reader sees, and each message's time in its heading."""
    _rich_profile(db)
    text = run(db, "export", "--format", "md").stdout
    assert "<details><summary>Reasoning</summary>" in text
    assert "<details><summary>Tool call: weather</summary>" in text
    assert "<details><summary>Tool result: weather</summary>" in text
    assert "I need the weather tool." in text and '{"temp": 20}' in text
    assert "## User · 2025-11-24" in text


def test_exports_write_tool_loops_as_their_formats_do(db: Path) -> None:
    """jsonl: OpenAI tool_calls and tool messages, reasoning beside; sharegpt: function_call
    and observation turns, reasoning as <think>."""
    _rich_profile(db)
    lines = [json.loads(x) for x in run(db, "export", "--format", "jsonl").stdout.splitlines()]
    msgs = [m for ln in lines for m in ln["messages"]]
    call = next(m for m in msgs if m.get("tool_calls"))
    assert call["reasoning"] == "I need the weather tool."
    assert call["tool_calls"][0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
    }
    tool = msgs[msgs.index(call) + 1]
    assert tool == {
        "role": "tool",
        "content": '{"temp": 20}',
        "tool_call_id": "call_1",
        "name": "weather",
    }
    doc = json.loads(run(db, "export", "--format", "sharegpt").stdout)
    turns = [t for c in doc for t in c["conversations"]]
    kinds = [t["from"] for t in turns]
    assert "function_call" in kinds and "observation" in kinds
    fc = json.loads(next(t["value"] for t in turns if t["from"] == "function_call"))
    assert fc == {"name": "weather", "arguments": {"city": "Paris"}, "id": "call_1"}
    assert any(t["value"].startswith("<think>\nI need the weather tool.\n</think>") for t in turns)


def _import_real(db: Path) -> None:
    for path in sorted((REAL / "llama-factory").iterdir()) + sorted(REAL.glob("sillytavern*/*/*")):
        run(db, "import", str(path))


@pytest.mark.parametrize("fmt", ["md", "jsonl", "sharegpt"])
def test_imported_real_files_round_trip(db: Path, tmp_path: Path, fmt: str) -> None:
    """Everything imported from the real fixtures goes out and back in with the same
    messages in the same order (up to what the format cannot hold)."""
    _import_real(db)
    before = _sessions(db)
    assert len(before) > 100
    _compare(before, _sessions(_through(db, tmp_path, fmt)), fmt)


@pytest.mark.parametrize("fmt", ["json", "md", "jsonl", "sharegpt"])
def test_empty_profile_export_imports_back(db: Path, tmp_path: Path, fmt: str) -> None:
    """An empty profile's export is not a 0-byte file: it says it holds nothing, and it
    imports back (exit 0, nothing added) — into an empty store and into a full one."""
    out = tmp_path / f"empty.{fmt}"
    run(db, "export", "--format", fmt, "-o", str(out))
    assert out.stat().st_size > 0
    fresh = tmp_path / "fresh.db"
    report = json.loads(run(fresh, "import", str(out), "--json").stdout)
    if fmt == "json":
        assert report["whole"] and report["sessions"] == 0
    else:
        assert (report["conversations"], report["added"], report["empty"]) == (0, 0, True)
        full = tmp_path / "full.db"
        _rich_profile(full)
        before = _sessions(full)
        report = json.loads(run(full, "import", str(out), "--json").stdout)
        assert report["added"] == 0 and _sessions(full) == before
    with chatkeep.open(str(fresh)) as store:
        assert store.sessions.list() == [] and store.history.read() == []


def test_empty_profile_html_says_so(db: Path) -> None:
    page = run(db, "export", "--format", "html").stdout
    assert "This export holds no conversations" in page


def test_an_empty_foreign_file_is_still_an_error(db: Path, tmp_path: Path) -> None:
    """Only chatkeep's own marked export imports as nothing: an empty dataset is exit 3."""
    for name, body in (("x.jsonl", '{"messages": []}\n'), ("x.json", '[{"conversations": []}]')):
        path = tmp_path / name
        path.write_text(body)
        proc = run(db, "import", str(path), ok=False)
        assert proc.returncode == 3 and "nothing was imported" in proc.stderr
