"""Ctrl-C through the real console script: a real SIGINT mid-stream keeps the partial answer.

The loopback provider streams slowly (one word every 0.2 s); the test waits until the first
words reached the terminal, sends SIGINT to the ``chatkeep`` process and checks the exit status
(130), stderr (no traceback) and the stored history (the partial answer, ``interrupted: true``).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

import chatkeep
from clirun import chatkeep_exe, run
from support.provider_server import Text

SLOW = Text(" ".join(f"word{k}" for k in range(200)), delay=0.2)


def _add_card(db: Path, server) -> None:
    run(
        db,
        "provider",
        "add",
        "loop",
        "--style",
        "chat",
        "--base-url",
        server.url("/v1"),
        "--model",
        "loop-model",
    )


def _interrupt(db: Path, *args: str, wait_for: bytes = b"word1") -> tuple[int, str, str]:
    """Run ``chatkeep --store DB ARGS``, send SIGINT once ``wait_for`` was printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    env["OPENAI_API_KEY"] = "sk-loop"
    proc = subprocess.Popen(
        [chatkeep_exe(), "--store", str(db), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        # a shell without job control starts children with SIGINT ignored; undo that so the
        # console script gets Python's normal Ctrl-C handling, as in a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    seen = b""
    deadline = time.monotonic() + 30
    while wait_for not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
    assert wait_for in seen, seen
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, (seen + out).decode(), err.decode()


def _last(db: Path) -> dict:
    with chatkeep.open(str(db)) as store:
        return store.history.read()[-1]


@pytest.mark.parametrize("command", ["chat", "edit", "regenerate"])
def test_sigint_keeps_partial_answer(tmp_path: Path, provider_server, command: str) -> None:
    """SIGINT mid-stream in chat/edit/regenerate: exit 130, no traceback, partial answer kept."""
    db = tmp_path / "ck.db"
    _add_card(db, provider_server)
    if command != "chat":
        provider_server.queue(Text("first answer"))
        run(db, "chat", "first question", env={"OPENAI_API_KEY": "sk-loop"})
    provider_server.script(SLOW)
    args = {
        "chat": ["chat", "tell me a long story"],
        "edit": ["edit", "0", "tell me a longer story"],
        "regenerate": ["regenerate"],
    }[command]
    code, out, err = _interrupt(db, *args)
    assert code == 130, err
    assert "Traceback" not in err and "KeyError" not in err
    assert "partial answer was kept" in err
    last = _last(db)
    assert last["role"] == "assistant" and last.get("interrupted") is True
    assert last["content"].startswith("word0 word1")
    assert "word199" not in last["content"]
    assert last["content"].strip() in out


def test_sigint_json_prints_the_partial_reply(tmp_path: Path, provider_server) -> None:
    """With --json, SIGINT still prints one JSON reply marked interrupted and exits 130."""
    import json

    db = tmp_path / "ck.db"
    _add_card(db, provider_server)
    provider_server.script(SLOW)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    env["OPENAI_API_KEY"] = "sk-loop"
    proc = subprocess.Popen(
        [chatkeep_exe(), "--store", str(db), "chat", "a long story", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # nothing streams with --json: wait until the server has sent a few chunks
    deadline = time.monotonic() + 30
    while not provider_server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    reply = json.loads(out)
    assert reply["interrupted"] is True and reply["text"].startswith("word0")
    assert _last(db).get("interrupted") is True


def test_sigint_before_any_answer(tmp_path: Path, provider_server) -> None:
    """SIGINT before the first word arrives: exit 130, no traceback, no assistant entry."""
    db = tmp_path / "ck.db"
    _add_card(db, provider_server)
    provider_server.script(Text("late answer", delay=1.5))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    env["OPENAI_API_KEY"] = "sk-loop"
    proc = subprocess.Popen(
        [chatkeep_exe(), "--store", str(db), "chat", "quick question"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while not provider_server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"no reply was saved" in err
    with chatkeep.open(str(db)) as store:
        assert all(e["role"] == "user" for e in store.history.read())
