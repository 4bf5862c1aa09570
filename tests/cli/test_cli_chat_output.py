"""What `chatkeep chat` (and `edit`, `regenerate`) tell the user, through the CLI
against the loopback provider server: escaped model text, a cut-short reply, JSON errors, the
waiting notice and the hints of a wrong base URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chatkeep
from clirun import run
from support.provider_server import Close, Drop, Page, Text

ESC_REPLY = Text("clear\x1b[2J screen \x9b31m red\x07 bell\tand\nnewline")


def _setup(db: Path, server, style: str = "chat", *extra: str) -> None:
    run(db, "provider", "add", "loop", "--style", style, "--base-url", server.url("/v1"),
        "--model", "loop-model", *extra)  # fmt: skip


def test_streamed_escape_codes_are_shown_escaped(tmp_path: Path, provider_server) -> None:
    """A reply carrying ESC[2J, a C1 CSI and BEL reaches stdout escaped (tab and newline kept),
    in chat, regenerate and edit alike; the stored reply keeps the exact text."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    for args in (("chat", "hi"), ("regenerate",), ("edit", "0", "hi again")):
        provider_server.queue(ESC_REPLY)
        out = run(db, *args).stdout
        assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
        assert "clear\\x1b[2J screen \\x9b31m red\\x07 bell\tand\nnewline" in out
    with chatkeep.open(str(db)) as s:
        assert s.history.read()[-1]["content"] == ESC_REPLY.text
    provider_server.queue(ESC_REPLY)
    raw = run(db, "chat", "as json", "--json").stdout
    assert "\x1b" not in raw and "\x9b" not in raw and "\x07" not in raw
    assert json.loads(raw)["text"] == ESC_REPLY.text  # escaped in JSON, the same text


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_cut_short_reply_is_kept_interrupted_and_told(
    style: str, tmp_path: Path, provider_server
) -> None:
    """A stream closed cleanly after three words: the words are printed, a notice says the reply
    is incomplete and names regenerate, the exit is 5, and the entry is stored interrupted."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server, style)
    provider_server.queue(Close(after_chunks=3, text=Text("alpha beta gamma delta epsilon")))
    proc = run(db, "chat", "tell me", ok=False)
    assert proc.returncode == 5, proc.stderr
    assert proc.stdout == "alpha beta gamma \n"
    assert "without its end marker" in proc.stderr and "chatkeep regenerate" in proc.stderr
    assert "(stopped" not in proc.stderr
    with chatkeep.open(str(db)) as s:
        kept = s.history.read()[-1]
    assert kept["content"] == "alpha beta gamma " and kept["interrupted"] is True
    shown = json.loads(run(db, "history", "--json").stdout)
    assert shown[-1]["interrupted"] is True


def test_json_failure_prints_a_json_error(tmp_path: Path, provider_server) -> None:
    """`chat --json` that fails prints {"error": {type, message, hint, exitCode}} on stdout and
    exits with that code; the error lines still go to stderr."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    provider_server.queue(Page(status=404))
    proc = run(db, "chat", "hi", "--json", ok=False)
    assert proc.returncode == 5
    err = json.loads(proc.stdout)["error"]
    assert err["type"] == "ProviderError" and err["exitCode"] == 5
    assert "seems not to be an LLM API" in err["hint"] and "web page" in err["message"]
    assert "<" not in proc.stderr and "error:" in proc.stderr
    no_card = run(tmp_path / "empty.db", "chat", "hi", "--json", ok=False)
    assert json.loads(no_card.stdout)["error"]["exitCode"] == no_card.returncode == 7


def test_drop_mid_reply_hint_names_the_retry(tmp_path: Path, provider_server) -> None:
    """A connection dropped after some words: the error says it dropped mid-reply, that the
    partial reply was kept, and names `chatkeep regenerate` — not "check the base URL"."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    provider_server.queue(Drop(after_chunks=2))
    proc = run(db, "chat", "hi", ok=False)
    assert proc.returncode == 5
    assert "dropped in the middle of the reply" in proc.stderr
    assert "partial reply was kept" in proc.stderr and "chatkeep regenerate" in proc.stderr
    assert "check the base URL" not in proc.stderr and "could not reach" not in proc.stderr


def test_waiting_notice_then_timeout(tmp_path: Path, provider_server) -> None:
    """A silent server: after a few seconds one stderr line says the request is waiting, and
    the card's --timeout (4 s here) ends it with an error naming the option — one request."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server, "chat", "--timeout", "4")
    provider_server.queue(Text("too late", delay=8.0))
    proc = run(db, "chat", "hi", ok=False)
    assert proc.returncode == 5
    assert proc.stderr.count("waiting for loop (loop-model)") == 1
    assert "sent nothing for 4 s" in proc.stderr and "--timeout" in proc.stderr
    assert len(provider_server.requests) == 1


def test_usage_table_escapes_session_names(tmp_path: Path) -> None:
    """`usage --by session` prints a session name holding ESC[2J escaped, like `history` does."""
    db = tmp_path / "ck.db"
    usage = {"input": 10, "cachedRead": 0, "cacheWrite": 0, "output": 2}
    with chatkeep.open(str(db)) as s:
        s.history.append({"role": "user", "content": "q"})
        s.history.append({"role": "assistant", "content": "a", "usage": usage})
        s.sessions.save("\x1b[2Jwiped")
        s.sessions.new()
    out = run(db, "usage", "--by", "session").stdout
    assert "\x1b[2J" not in out and "\\x1b[2Jwiped" in out


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_reasoning_goes_to_stderr_and_the_answer_alone_to_stdout(
    style: str, tmp_path: Path, provider_server
) -> None:
    """The model's reasoning streams to stderr (escaped like any model text), the answer alone
    to stdout; the stored reply keeps both apart, and --json reports the reasoning."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server, style)
    thought = "Weigh \x1b[2J the two options first."
    provider_server.queue(Text("Option two.", reasoning=thought))
    proc = run(db, "chat", "which one?")
    assert proc.stdout == "Option two.\n"
    assert "Weigh \\x1b[2J the two options first." in proc.stderr and "\x1b" not in proc.stderr
    with chatkeep.open(str(db)) as s:
        kept = s.history.read()[-1]
    assert kept["content"] == "Option two." and kept["reasoning"] == thought
    shown_line = run(db, "history").stdout.splitlines()[-1]
    assert shown_line == f"#1 assistant [reasoning: {len(thought)} chars]: Option two."
    provider_server.queue(Text("Option one.", reasoning="Think again."))
    shown = json.loads(run(db, "chat", "sure?", "--json").stdout)
    assert shown["text"] == "Option one." and shown["reasoning"] == "Think again."
