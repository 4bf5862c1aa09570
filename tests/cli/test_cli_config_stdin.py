"""`chatkeep config list|get|set` and `chat -` through the real console script."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import chatkeep
from clirun import run_process as run
from support.provider_server import Text


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ck.db"


def test_config_list_shows_every_setting_and_panel_option(db: Path) -> None:
    """config list covers GET_ALL_KEYS but providers, marking defaults; --json too."""
    data = json.loads(run(db, "config", "list", "--json").stdout)
    expected = set(chatkeep.GET_ALL_KEYS) - {"providers"}
    assert set(data["settings"]) == expected and set(data["defaults"]) == expected
    assert data["settings"]["fontSize"] == 14 and data["settings"]["sendShortcut"] == "Enter"
    human = run(db, "config", "list").stdout
    assert re.search(r"^maxHistoryEntries +60  \(default\)$", human, re.M)
    assert re.search(r'^activeProvider +""  \(default\)$', human, re.M)
    run(db, "config", "set", "fontSize", "16")
    assert re.search(r"^fontSize +16$", run(db, "config", "list").stdout, re.M)


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("maxHistoryEntries", "80", 80),
        ("autoSummarizeAttachments", "off", False),
        ("thoughtAutoCollapse", "false", False),
        ("fontSize", "18", 18),
        ("sendShortcut", "Ctrl+Enter", "Ctrl+Enter"),
        ("systemPrompt", "Answer in [brackets] briefly.", "Answer in [brackets] briefly."),
        ("summarizeThresholdChars", "50,000", 50_000),
        ("activeModel", "", ""),
    ],
)
def test_config_set_parses_by_type(db: Path, key: str, text: str, value: object) -> None:
    """config set stores the typed value; get and the library read it back."""
    assert json.loads(run(db, "config", "set", key, text, "--json").stdout) == {key: value}
    assert json.loads(run(db, "config", "get", key, "--json").stdout) == {key: value}
    with chatkeep.open(str(db)) as s:
        assert s.get_all()[key] == value
    shown = run(db, "config", "get", key).stdout.rstrip("\n")
    assert shown == (value if isinstance(value, str) else json.dumps(value))


@pytest.mark.parametrize(
    ("key", "text", "needle"),
    [
        ("fontSize", "40", "fontSize must be an integer from 10 to 32"),
        ("fontSize", "big", "fontSize must be"),
        ("maxHistoryEntries", "0", "an integer ≥ 1"),
        ("autoSummarizeAttachments", "maybe", "true or false"),
        ("sendShortcut", "Shift+Enter", "Enter or Ctrl+Enter"),
        ("activeProvider", "nope", "no provider card named 'nope'"),
        ("providers", "{}", "chatkeep provider add"),
        ("fontsize", "14", "did you mean fontSize?"),
        ("history", "[]", "not a setting"),
    ],
)
def test_config_set_refuses_bad_values(db: Path, key: str, text: str, needle: str) -> None:
    """A bad value exits 3, a key that is not a setting 9 (unknown name), with a message
    naming it, and nothing is written."""
    proc = run(db, "config", "set", key, text, ok=False)
    unknown = key in ("fontsize", "history")
    assert proc.returncode == (9 if unknown else 3) and needle in proc.stderr, proc.stderr
    with chatkeep.open(str(db)) as s:
        assert s.local.keys() == []


def test_config_get_unknown_key(db: Path) -> None:
    """config get of an unknown key exits 9 (unknown name) with a suggestion."""
    proc = run(db, "config", "get", "maxHistoryEntry", ok=False)
    assert proc.returncode == 9 and "did you mean maxHistoryEntries?" in proc.stderr


def test_chat_dash_reads_stdin(db: Path, provider_server) -> None:
    """`chat -` sends standard input as the message (trailing newline dropped)."""
    run(db, "provider", "add", "loop", "--style", "chat", "--base-url",
        provider_server.url("/v1"), "--model", "m")  # fmt: skip
    provider_server.queue(Text("got it"))
    message = "line one\n[bold]line two[/bold]\n"
    out = run(db, "chat", "-", stdin=message, env={"OPENAI_API_KEY": "k"}).stdout
    assert out == "got it\n"
    sent = provider_server.requests[-1].body["messages"][-1]["content"]
    assert sent == "line one\n[bold]line two[/bold]"
    with chatkeep.open(str(db)) as s:
        assert s.history.read()[0]["content"] == "line one\n[bold]line two[/bold]"
    empty = run(db, "chat", "-", stdin="\n", ok=False, env={"OPENAI_API_KEY": "k"})
    assert empty.returncode == 3 and "standard input held no text" in empty.stderr
