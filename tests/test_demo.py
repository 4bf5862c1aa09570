"""The demo (`make run` → scripts/demo.sh) keeps the user's provider card and settings between
runs and chats through the card the user added, as its own message tells them to."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import chatkeep
from clirun import chatkeep_exe, run
from support.provider_server import Text, provider_server  # noqa: F401

ROOT = Path(__file__).parents[1]


def _demo(db: Path) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CHATKEEP_", "OPENAI_", "ANTHROPIC_"))
    }
    env["CHATKEEP_STORE"] = str(db)
    env["PATH"] = f"{Path(chatkeep_exe()).parent}:{env.get('PATH', '')}"
    env["LOOP_KEY"] = "sk-loop"
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_demo_keeps_the_users_card_and_chats(tmp_path: Path, provider_server) -> None:  # noqa: F811
    """Run 1 says how to add a card; after adding it (and a setting) run 2 keeps both and chats."""
    db = tmp_path / "demo.db"
    first = _demo(db)
    assert "No model provider is configured yet" in first.stdout
    assert ".venv/bin/chatkeep --profile demo provider add" in first.stdout
    run(db, "--profile", "demo", "provider", "add", "loop", "--style", "chat",
        "--base-url", provider_server.url("/v1"), "--model", "loop-model",
        "--api-key-env", "LOOP_KEY")  # fmt: skip
    with chatkeep.open(str(db), profile="demo") as s:
        s.local.set("systemPrompt", "Answer like an ornithologist.")
    provider_server.script(Text("Short-eared owls hunt by day."))
    second = _demo(db)
    assert "kept" in second.stdout and "provider cards: loop" in second.stdout
    assert "Short-eared owls hunt by day." in second.stdout
    (request,) = provider_server.requests
    assert request.body["model"] == "loop-model"
    assert request.body["messages"][0]["content"].startswith("Answer like an ornithologist.")
    with chatkeep.open(str(db), profile="demo") as s:
        assert "loop" in s.get_all()["providers"]
        assert s.history.read()[-1]["content"] == "Short-eared owls hunt by day."
    with chatkeep.open(str(db)) as s:  # the default profile was never touched
        assert s.history.read() == [] and s.get_all()["providers"] == {}
