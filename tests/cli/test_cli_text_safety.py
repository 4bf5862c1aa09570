"""User text is never read as terminal markup, and session ids may be given by a unique prefix.

Names, titles and entries holding rich markup (``[/]``, ``[draft]``, ``[bold]``), emoji codes
and escape sequences go through every command that prints them, through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chatkeep
from clirun import run
from factories import assistant, attachment, user

NASTY = ["broken [/] markup", "[draft] notes", "[bold red]loud[/bold red] :smile:"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "cli.db"


def _save(db: Path, *names: str) -> list[str]:
    ids = []
    with chatkeep.open(str(db)) as s:
        for name in names:
            s.history.append(user(f"about {name}"))
            s.history.append(assistant("ok"))
            ids.append(s.sessions.save(name)["id"])
    return ids


def test_sessions_list_prints_names_verbatim(db: Path) -> None:
    """sessions list (and its search) prints names with brackets and emoji codes as typed."""
    _save(db, *NASTY)
    out = run(db, "sessions", "list").stdout
    for name in NASTY:
        assert name in out
    found = run(db, "sessions", "list", "draft").stdout
    assert "[draft] notes" in found


def test_show_history_save_print_text_verbatim(db: Path) -> None:
    """sessions show/save/new and history print names and entries as plain text."""
    (sid,) = _save(db, "[draft] notes")
    shown = run(db, "sessions", "show", sid).stdout
    assert shown.startswith("[draft] notes") and "about [draft] notes" in shown
    with chatkeep.open(str(db)) as s:
        s.history.append(user("[bold]not bold[/bold] and [/] too"))
        s.history.append(attachment("body", title="[red]Title[/red]", url="https://ex.org/a"))
    hist = run(db, "history").stdout
    assert "[bold]not bold[/bold] and [/] too" in hist and "[red]Title[/red]" in hist
    saved = run(db, "sessions", "save", "[x] second").stdout
    assert "[x] second" in saved


def test_escape_sequences_are_shown_not_executed(db: Path) -> None:
    """An escape sequence in a stored name or entry is printed escaped, never sent raw."""
    _save(db, "red\x1b[31mname")
    with chatkeep.open(str(db)) as s:
        s.history.append(user("clear\x1b[2Jscreen"))
    for args in (("sessions", "list"), ("history",)):
        out = run(db, *args).stdout
        assert "\x1b" not in out
    assert "red\\x1b[31mname" in run(db, "sessions", "list").stdout


def test_error_messages_keep_brackets(db: Path) -> None:
    """An error quoting user input prints it verbatim on stderr."""
    proc = run(db, "sessions", "show", "[nope]", ok=False)
    assert proc.returncode == 9 and "[nope]" in proc.stderr and "Traceback" not in proc.stderr


def test_session_id_prefixes_everywhere(db: Path) -> None:
    """A unique prefix of 4+ characters works for show/rename/pin/unpin/load/delete/export."""
    (sid,) = _save(db, "owls")
    short = sid[:6]
    assert json.loads(run(db, "sessions", "show", short, "--json").stdout)["id"] == sid
    run(db, "sessions", "rename", short, "barn owls")
    run(db, "sessions", "pin", short)
    rows = json.loads(run(db, "sessions", "list", "--json").stdout)
    assert rows[0]["name"] == "barn owls" and rows[0]["pinned"] is True
    run(db, "sessions", "unpin", short)
    assert "loaded " + sid in run(db, "sessions", "load", short).stdout
    exported = json.loads(run(db, "export", "--session", short).stdout)
    assert json.dumps(exported).count(sid) >= 1
    run(db, "sessions", "delete", short)
    assert json.loads(run(db, "sessions", "list", "--json").stdout) == []


def test_short_ambiguous_and_unknown_prefixes(db: Path) -> None:
    """A prefix under 4 characters or shared by two ids exits 3 naming the cause; unknown exits 1."""
    with chatkeep.open(str(db)) as s:
        by_prefix: dict[str, str] = {}
        shared = ""
        for k in range(3000):  # random uuid4 ids: two share 4 hex digits after ~300 saves
            s.history.append(user(f"q{k}"))
            sid = s.sessions.save(f"n{k}")["id"]
            if sid[:4] in by_prefix:
                shared = sid[:4]
                break
            by_prefix[sid[:4]] = sid
        assert shared
        with pytest.raises(chatkeep.InvalidValue, match="matches 2 sessions"):
            s.sessions.resolve(shared)
        assert s.sessions.resolve(by_prefix[shared].upper()) == by_prefix[shared]
        with pytest.raises(chatkeep.NotFound):
            s.sessions.resolve("0" * 33)
    ambiguous = run(db, "sessions", "show", shared, ok=False)
    assert ambiguous.returncode == 3 and "matches 2 sessions" in ambiguous.stderr
    too_short = run(db, "sessions", "show", shared[:3], ok=False)
    assert too_short.returncode == 3 and "at least 4" in too_short.stderr
    unknown = run(db, "sessions", "show", "zzzzzzzz", ok=False)
    assert unknown.returncode == 9 and "no saved session" in unknown.stderr


def test_history_last_n(db: Path) -> None:
    """history -n N shows the last N entries with their indexes in the whole history."""
    with chatkeep.open(str(db)) as s:
        for k in range(5):
            s.history.append(user(f"q{k}") if k % 2 == 0 else assistant(f"a{k}"))
    views = json.loads(run(db, "history", "-n", "2", "--json").stdout)
    assert [v["index"] for v in views] == [3, 4]
    assert [v["content"][0]["text"] for v in views] == ["a3", "q4"]
    human = run(db, "history", "-n", "1").stdout.splitlines()
    assert human == ["#4 user: q4"]
    assert len(json.loads(run(db, "history", "-n", "99", "--json").stdout)) == 5
    assert run(db, "history", "-n", "-1", ok=False).returncode == 2


def test_spinner_message_with_brackets_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal, the spinner shows a file named `[bold]…` with its brackets, as typed."""
    import os
    import pty
    import subprocess

    from clirun import chatkeep_exe

    dump = tmp_path / "[bold]dump.json"
    dump.write_text(json.dumps({"history": [{"role": "user", "content": "hi"}]}))
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    proc = subprocess.run(
        [chatkeep_exe(), "--store", str(tmp_path / "t.db"), "import", str(dump)],
        stdout=subprocess.PIPE,
        stderr=follower,
        stdin=subprocess.DEVNULL,
        env={**env, "TERM": "xterm"},
        timeout=60,
    )
    os.close(follower)
    shown = b""
    try:
        while chunk := os.read(leader, 4096):
            shown += chunk
    except OSError:  # the pty closes once the child is gone
        pass
    os.close(leader)
    assert proc.returncode == 0, shown.decode(errors="replace")
    assert b"Traceback" not in shown
    assert b"[bold]dump.json" in shown
