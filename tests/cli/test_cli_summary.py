"""Long attachments condensed by `chatkeep attach` through the CLI: progress per
provider call, ``summaryError`` when the provider fails, and Ctrl-C that keeps the raw entry."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import chatkeep
from clirun import chatkeep_exe, run
from support.provider_server import Text, unauthorized


def _doc(tmp_path: Path, lines: int = 600) -> Path:
    """A Markdown file of about 33,000 characters: 3 chunks of at most 12,000, then a merge."""
    body = "".join(
        f"fact {k}: the measured value was {k * 3} units on day {k}.\n" for k in range(lines)
    )
    path = tmp_path / "notes.md"
    path.write_text("# Field notes\n\n" + body)
    return path


def _setup(db: Path, server) -> None:
    run(db, "provider", "add", "loop", "--style", "chat", "--base-url", server.url("/v1"),
        "--model", "loop-model")  # fmt: skip
    with chatkeep.open(str(db)) as s:
        s.local.set("summarizeThresholdChars", 10_000)


ENV = {"OPENAI_API_KEY": "sk-loop"}


def test_summary_progress_lines(tmp_path: Path, provider_server) -> None:
    """Piped stderr gets one line per provider call (chunk calls, then the merge)."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    provider_server.queue(Text("one"), Text("two"), Text("three"), Text("merged summary"))
    proc = run(db, "attach", str(_doc(tmp_path)), env=ENV)
    assert "condensing the attachment with the active provider in 4 model calls" in proc.stderr
    for k in range(1, 5):
        assert f"condensing: call {k} of 4 done" in proc.stderr
    assert "condensed to a summary" in proc.stderr
    with chatkeep.open(str(db)) as s:
        entry = s.history.read()[-1]
    assert entry.get("summarized") is True and "merged summary" in entry["content"]


def test_summary_error_is_reported(tmp_path: Path, provider_server) -> None:
    """A failing summary call leaves the raw entry and sets summaryError (JSON and text)."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    provider_server.script(unauthorized())
    data = json.loads(run(db, "attach", str(_doc(tmp_path)), "--json", env=ENV).stdout)
    assert data["summaryWritten"] is False and data["summarizing"] is False
    assert "401" in (data["summaryError"] or "")
    with chatkeep.open(str(db)) as s:
        entry = s.history.read()[-1]
    assert "summarized" not in entry and "fact 599" in entry["content"]
    text = run(db, "attach", str(_doc(tmp_path)), env=ENV)
    assert "could not condense it (" in text.stderr and "Traceback" not in text.stderr


def test_sigint_during_summary_keeps_the_raw_attachment(tmp_path: Path, provider_server) -> None:
    """SIGINT while condensing: exit 130, a message naming what was kept, the raw entry stored."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    provider_server.script(Text(" ".join(["slow"] * 100), delay=0.3))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    proc = subprocess.Popen(
        [chatkeep_exe(), "--store", str(db), "attach", str(_doc(tmp_path))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**env, **ENV},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + 30
    while b"calls" not in seen and time.monotonic() < deadline:
        if select.select([proc.stderr], [], [], 0.5)[0]:
            seen += os.read(proc.stderr.fileno(), 4096)
    assert b"calls" in seen, seen
    while not provider_server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    err = (seen + err).decode()
    assert proc.returncode == 130, err
    assert "stopped while condensing" in err and "kept in full" in err
    assert "Traceback" not in err
    with chatkeep.open(str(db)) as s:
        (entry,) = s.history.read()
    assert "summarized" not in entry and "fact 599" in entry["content"]
