"""`chatkeep provider …` and `chatkeep request` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import chatkeep
from clirun import run
from factories import assistant, attachment, image_entry, png_data_url, user


def test_provider_add_use_list_remove(tmp_path: Path) -> None:
    """Cards are validated and stored; the first becomes active; use/remove switch it."""
    db = tmp_path / "p.db"
    run(
        db,
        "provider",
        "add",
        "local",
        "--style",
        "chat",
        "--base-url",
        "http://127.0.0.1:11434/v1",
        "--model",
        "llama3",
    )
    run(
        db,
        "provider",
        "add",
        "claude",
        "--style",
        "anthropic",
        "--base-url",
        "https://api.anthropic.com",
        "--model",
        "claude-x",
        "--api-key-env",
        "ANTHROPIC_API_KEY",
    )
    listed = json.loads(run(db, "provider", "list", "--json").stdout)
    assert listed["activeProvider"] == "local"
    assert [p["name"] for p in listed["providers"]] == ["claude", "local"]
    assert listed["providers"][0]["apiKeyEnv"] == "ANTHROPIC_API_KEY"
    run(db, "provider", "use", "claude", "--model", "claude-y")
    with chatkeep.open(str(db)) as s:
        settings = s.get_all()
        assert (settings["activeProvider"], settings["activeModel"]) == ("claude", "claude-y")
        assert "apiKey" not in settings["providers"]["claude"]
    out = run(db, "provider", "remove", "claude").stdout
    assert "local is now active" in out  # the only card left takes over, model reset
    listed = json.loads(run(db, "provider", "list", "--json").stdout)
    assert (listed["activeProvider"], listed["activeModel"]) == ("local", "")
    run(db, "provider", "remove", "local")
    assert json.loads(run(db, "provider", "list", "--json").stdout)["activeProvider"] == ""


def test_provider_bad_input(tmp_path: Path) -> None:
    """A bad card or unknown name exits 7 with a hint and stores nothing."""
    db = tmp_path / "p.db"
    bad = run(
        db,
        "provider",
        "add",
        "x",
        "--style",
        "chat",
        "--base-url",
        "ftp://nope",
        "--model",
        "m",
        ok=False,
    )
    assert bad.returncode == 7 and "baseUrl" in bad.stderr and "hint:" in bad.stderr
    unknown = run(db, "provider", "use", "ghost", ok=False)
    assert unknown.returncode == 9 and "ghost" in unknown.stderr
    usage = run(
        db,
        "provider",
        "add",
        "x",
        "--style",
        "carrier-pigeon",
        "--base-url",
        "http://a",
        "--model",
        "m",
        ok=False,
    )
    assert usage.returncode == 2
    assert json.loads(run(db, "provider", "list", "--json").stdout)["providers"] == []


def test_request_preview_reports_treatment_and_savings(tmp_path: Path) -> None:
    """request --json marks seen images as labels and cold attachments as stubs, and shows savings."""
    db = tmp_path / "r.db"
    url = png_data_url(300, 200, noise=True)
    with chatkeep.open(str(db)) as s:
        s.history.append(attachment("old page " * 2000, title="Old"))
        s.history.append(attachment("new page " * 2000, title="New"))
        s.history.append(image_entry("chart?", url, imagesSeen=True))
        s.history.append(assistant("a chart"))
        for i in range(3):
            s.history.append(user(f"q{i}"))
            s.history.append(assistant(f"a{i}"))
    run(
        db,
        "provider",
        "add",
        "local",
        "--style",
        "chat",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    )
    p = json.loads(run(db, "request", "--json", "--text", "next").stdout)
    sent = [e["sent"] for e in p["entries"]]
    assert sent[0] == "stub" and sent[1] == "raw" and sent[2] == "labels"
    assert p["entries"][0]["sentChars"] < p["entries"][0]["chars"]
    assert p["request"]["images"] == 0 and p["naive"]["images"] == 1
    assert p["request"]["bytes"] < p["naive"]["bytes"] and 0 < p["savings"]["ratio"] < 1
    assert p["url"] == "http://127.0.0.1:9/v1/chat/completions"
    assert p["prefix"]["source"] == "rebuilt"  # nothing sent yet: the previous turn, rebuilt
    assert url.split(",")[1][:100] not in run(db, "request").stdout
