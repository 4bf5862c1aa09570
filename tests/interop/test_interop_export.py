"""Every export format through the CLI: round trips (json, md, jsonl), one-session
exports that import as one session, 0600 files, and an html page that is safe to share."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from interop_helpers import saved

import chatkeep
from clirun import run
from factories import assistant, attachment, image_entry, png_data_url, user

TRICKY = '<script>alert(1)</script> & "quotes" --> <!-- chatkeep-entry {} -->'


def _fill(db: Path) -> tuple[str, str]:
    """Two saved sessions (one with an attachment and an image) and a live conversation."""
    with chatkeep.open(str(db)) as store:
        for e in (
            attachment("ATTACHED-BODY line one\n\n## not a heading\nline three", title="Notes"),
            image_entry("look at this", png_data_url()),
            assistant("A red image.", imagesSeen=True, provider={"name": "p", "model": "m"}),
            user(TRICKY + "\n\nsecond paragraph\n"),
            assistant("ok"),
        ):
            store.history.append(e)
        first = store.sessions.new()
        store.history.append(user("second session question"))
        store.history.append(assistant("second answer"))
        second = store.sessions.save("Second")
        store.sessions.pin(second["id"])
        store.history.clear()
        store.history.append(user("live only"))
    return first["id"], second["id"]


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_json_profile_export_round_trips_and_is_0600(db: Path, tmp_path: Path) -> None:
    """export -o (json) is written 0600 and imports into a new store to the same export."""
    _fill(db)
    out = tmp_path / "profile.json"
    run(db, "export", "-o", str(out))
    assert _mode(out) == 0o600
    other = tmp_path / "other.db"
    report = json.loads(run(other, "import", str(out), "--json").stdout)
    assert report["sessions"] == 2
    assert run(other, "export").stdout == out.read_text()


def test_session_json_export_imports_as_one_session(db: Path, tmp_path: Path) -> None:
    """export --session (by prefix) → import makes exactly that one saved session, no settings."""
    first, _ = _fill(db)
    out = tmp_path / "one.json"
    run(db, "export", "--session", first[:6], "-o", str(out))
    doc = json.loads(out.read_text())
    assert doc["format"] == "chatkeep-session" and doc["session"]["id"] == first
    other = tmp_path / "other.db"
    report = json.loads(run(other, "import", str(out), "--json").stdout)
    assert (report["added"], report["sessions"]) == (1, [first])
    with chatkeep.open(str(db)) as a, chatkeep.open(str(other)) as b:
        assert b.sessions.get(first) == a.sessions.get(first)
        assert b.history.read() == []
        assert set(b.export_data()["local"]) == {"savedSessions", f"session_{first}"}
    assert json.loads(run(other, "import", str(out), "--json").stdout)["added"] == 0


def test_markdown_round_trip_gives_equal_sessions(db: Path, tmp_path: Path) -> None:
    """The md export holds attachments' full text and imports back to equal sessions."""
    first, second = _fill(db)
    out = tmp_path / "all.md"
    run(db, "export", "--format", "md", "-o", str(out))
    assert _mode(out) == 0o600
    text = out.read_text()
    assert "ATTACHED-BODY line one" in text and "line three" in text
    assert "## Attachment" in text and "![image 1](data:image/png;base64," in text
    other = tmp_path / "other.db"
    report = json.loads(run(other, "import", str(out), "--json").stdout)
    assert report["added"] == 3  # two sessions and the live conversation
    with chatkeep.open(str(db)) as a, chatkeep.open(str(other)) as b:
        for sid in (first, second):
            assert b.sessions.get(sid) == a.sessions.get(sid)
        live = [s for s in saved(other) if s["name"] == "Live conversation"]
        assert live and live[0]["history"] == a.history.read()


def test_markdown_one_session_round_trip(db: Path, tmp_path: Path) -> None:
    """export --session --format md → import gives that session back, equal."""
    first, _ = _fill(db)
    md = run(db, "export", "--session", first, "--format", "md").stdout
    path = tmp_path / "one.md"
    path.write_text(md)
    other = tmp_path / "other.db"
    assert json.loads(run(other, "import", str(path), "--json").stdout)["added"] == 1
    with chatkeep.open(str(db)) as a, chatkeep.open(str(other)) as b:
        assert b.sessions.get(first) == a.sessions.get(first)


def test_jsonl_and_sharegpt_exports_import_back(db: Path, tmp_path: Path) -> None:
    """jsonl keeps text and images; sharegpt keeps the text; both import with their ids."""
    first, second = _fill(db)
    jl = tmp_path / "all.jsonl"
    run(db, "export", "--format", "jsonl", "-o", str(jl))
    lines = [json.loads(x) for x in jl.read_text().splitlines()]
    assert len(lines) == 3 and all("messages" in x for x in lines)
    sg = tmp_path / "all.sharegpt.json"
    run(db, "export", "--format", "sharegpt", "-o", str(sg))
    doc = json.loads(sg.read_text())
    second_doc = next(d for d in doc if d["title"] == "Second")
    assert [t["from"] for t in second_doc["conversations"]] == ["human", "gpt"]
    assert "<image>" in json.dumps(doc)
    other = tmp_path / "other.db"
    assert json.loads(run(other, "import", str(jl), "--json").stdout)["added"] == 3
    names = {s["name"] for s in saved(other)}
    assert "Second" in names
    imported = [s for s in saved(other) if s["name"] == "Second"][0]
    assert [e["content"] for e in imported["history"]] == [
        "second session question",
        "second answer",
    ]
    third = tmp_path / "third.db"
    assert json.loads(run(third, "import", str(sg), "--json").stdout)["added"] == 3


def test_html_export_is_self_contained_and_escaped(db: Path, tmp_path: Path) -> None:
    """html: one page, no script or external resource, user text escaped, images embedded."""
    _fill(db)
    out = tmp_path / "page.html"
    run(db, "export", "--format", "html", "-o", str(out))
    assert _mode(out) == 0o600
    page = out.read_text()
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert '<img src="data:image/png;base64,' in page
    assert re.search(r"""(src|href|url\()\s*=?\s*["']?(https?:|//)""", page) is None
    assert "<details><summary>Attachment: Notes</summary>" in page


def test_export_unknown_session_is_a_typed_error(db: Path, tmp_path: Path) -> None:
    """An unknown or ambiguous --session is an error with a hint; no file is written."""
    _fill(db)
    out = tmp_path / "x.json"
    proc = run(db, "export", "--session", "zzzzzzzz", "-o", str(out), ok=False)
    assert proc.returncode != 0 and "hint:" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_export_overwrites_an_existing_file_with_0600(db: Path, tmp_path: Path) -> None:
    """An existing world-readable target is replaced by a 0600 file."""
    _fill(db)
    out = tmp_path / "x.md"
    out.write_text("old")
    out.chmod(0o644)
    run(db, "export", "--format", "md", "-o", str(out))
    assert _mode(out) == 0o600 and out.read_text().startswith("# Live conversation")


@pytest.mark.parametrize("fmt", ["json", "md", "jsonl", "sharegpt", "html"])
def test_every_format_exports_an_empty_store(db: Path, fmt: str) -> None:
    """Every format exports an empty profile without error."""
    proc = run(db, "export", "--format", fmt)
    assert proc.returncode == 0
