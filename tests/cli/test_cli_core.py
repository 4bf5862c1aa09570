"""The CLI on a real store: history, sessions, export/import, stats, errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import chatkeep
from clirun import chatkeep_exe, run
from factories import assistant, attachment, image_entry, png_data_url, user

EXAMPLE = Path(__file__).parents[2] / "examples" / "browsa-dump.json"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "cli.db"


def test_help_lists_commands(db: Path) -> None:
    """`chatkeep --help` lists the commands and the store options."""
    out = run(db, "--help").stdout
    for word in ("history", "sessions", "export", "import", "stats", "--store", "--profile"):
        assert word in out
    assert not db.exists(), "--help must not create or open the store"


def test_history_json_never_prints_base64(db: Path) -> None:
    """history --json shows images as sizes and attachments as chips, without base64."""
    url = png_data_url(640, 480, noise=True)
    with chatkeep.open(str(db)) as s:
        s.history.append(attachment("body text", title="Owls", url="https://example.org/owls"))
        s.history.append(image_entry("what is this?", url))
        s.history.append(assistant("noise", provider={"name": "p", "model": "m"}))
    proc = run(db, "history", "--json")
    assert url.split(",")[1][:200] not in proc.stdout
    views = json.loads(proc.stdout)
    assert [v["index"] for v in views] == [0, 1, 2]
    assert views[0]["attachment"]["title"] == "Owls"
    assert views[0]["attachment"]["url"] == "https://example.org/owls"
    img = views[1]["content"][1]
    assert (img["type"], img["mime"], img["width"], img["height"]) == (
        "image",
        "image/png",
        640,
        480,
    )
    assert views[2]["provider"] == {"name": "p", "model": "m"}
    human = run(db, "history").stdout
    assert "[image 640×480 png," in human
    assert "[attached: Owls — https://example.org/owls" in human
    assert "base64" not in human


def test_sessions_flow_with_json(db: Path) -> None:
    """save, list (search), show, rename, pin, load, delete through the CLI, checked field by field."""
    with chatkeep.open(str(db)) as s:
        s.history.append(user("Compare owl species"))
        s.history.append(assistant("Barn owls are pale"))
    saved = json.loads(run(db, "sessions", "save", "--json").stdout)
    assert saved["name"] == "Compare owl species"
    rows = json.loads(run(db, "sessions", "list", "BARN", "--json").stdout)
    assert rows == [{**saved, "contentMatch": True}]
    shown = json.loads(run(db, "sessions", "show", saved["id"], "--json").stdout)
    assert shown["history"][1]["content"] == [{"type": "text", "text": "Barn owls are pale"}]
    run(db, "sessions", "rename", saved["id"], "Owls")
    run(db, "sessions", "pin", saved["id"])
    rows = json.loads(run(db, "sessions", "list", "--json").stdout)
    assert rows[0]["name"] == "Owls" and rows[0]["pinned"] is True
    run(db, "sessions", "new")
    assert json.loads(run(db, "history", "--json").stdout) == []
    assert "2 entries" in run(db, "sessions", "load", saved["id"]).stdout
    run(db, "sessions", "unpin", saved["id"])
    run(db, "sessions", "delete", saved["id"])
    assert json.loads(run(db, "sessions", "list", "--json").stdout) == []


def test_export_import_round_trip(db: Path, tmp_path: Path) -> None:
    """export -o FILE then import FILE into a new store gives the same export."""
    with chatkeep.open(str(db)) as s:
        s.history.append(image_entry("pic", png_data_url(noise=True)))
        s.sessions.save("pic")
    out = tmp_path / "export.json"
    run(db, "export", "-o", str(out))
    other = tmp_path / "other.db"
    report = json.loads(run(other, "import", str(out), "--json").stdout)
    assert report["source"] == "chatkeep" and report["sessions"] == 1
    again = run(other, "export").stdout
    assert json.loads(again) == json.loads(out.read_text())
    md = run(db, "export", "--format", "md").stdout
    assert md.startswith("# Live conversation") and "![image 1](data:image/png;base64," in md


def test_import_browsa_example(db: Path) -> None:
    """The bundled browsa dump imports with --from browsa and comes out migrated."""
    report = json.loads(run(db, "import", str(EXAMPLE), "--from", "browsa", "--json").stdout)
    assert report["source"] == "browsa" and report["sessions"] >= 2
    with chatkeep.open(str(db)) as s:
        assert all("history" not in r for r in s.local.get("savedSessions"))
    stats = json.loads(run(db, "stats", "--json").stdout)
    assert stats["sessions"] == report["sessions"]
    assert stats["entries"] == report["history"]
    assert stats["corruptKeys"] == []


def test_errors_have_hints_and_exit_codes(db: Path, tmp_path: Path) -> None:
    """Errors print `error:` and `hint:` on stderr with a non-zero exit and no traceback."""
    missing = run(db, "sessions", "show", "nope", ok=False)
    assert missing.returncode == 9
    assert "error: no saved session" in missing.stderr and "hint:" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = run(db, "import", str(bad), ok=False)
    assert proc.returncode == 3 and "cannot read" in proc.stderr
    with chatkeep.open(str(db)) as s:
        s.local.set("x", 1)
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {"format": "chatkeep-export", "version": 1, "local": {}, "history": [], "archive": []}
        )
    )
    proc = run(db, "import", str(good), ok=False)
    assert proc.returncode == 4 and "--replace" in proc.stderr
    proc = run(tmp_path, "stats", ok=False)  # a directory is not a store
    assert proc.returncode == 4 and "hint:" in proc.stderr
    empty_save = run(tmp_path / "e.db", "sessions", "save", ok=False)
    assert empty_save.returncode == 3 and "nothing to save" in empty_save.stderr


def test_profile_option_and_env(db: Path) -> None:
    """--profile and CHATKEEP_PROFILE select the profile."""
    with chatkeep.open(str(db), profile="work") as s:
        s.history.append(user("work stuff"))
    assert json.loads(run(db, "history", "--json").stdout) == []
    assert len(json.loads(run(db, "--profile", "work", "history", "--json").stdout)) == 1
    env = {**os.environ, "CHATKEEP_PROFILE": "work", "CHATKEEP_STORE": str(db)}
    proc = subprocess.run(
        [chatkeep_exe(), "history", "--json"], capture_output=True, text=True, env=env
    )
    assert len(json.loads(proc.stdout)) == 1
