"""The reading commands ``chatkeep history`` and ``chatkeep sessions list`` through the
installed console script: real listings of a filled store (control characters escaped, images
as sizes), stores that cannot be read (typed errors, exit 4), PostgreSQL, a terminal's bold
header, and no traceback for any command line around them.
"""

from __future__ import annotations

import os
import pty
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatkeep
from clirun import chatkeep_exe
from factories import assistant, attachment, image_entry, png_data_url, user

SESSIONS = 55  # more than a page of 50, so a default page size would show


def _fill(store: chatkeep.Store, sessions: int) -> None:
    store.local.set("maxHistoryEntries", 8)  # the first entries go to the archive
    for k in range(sessions):
        store.history.mutate(
            lambda _, k=k: [user(f"topic {k} question"), assistant(f"topic {k} answer " * 5)]
        )
        names = ["alpha", "bête noire ★", "\x1b]0;title\x07 evil", "日本語の名前", "plain"]
        row = store.sessions.save(f"{names[k % len(names)]} {k}")
        assert row is not None
        if k % 9 == 0:
            store.sessions.pin(row["id"], True)
    live = [
        user("hello"),
        assistant("hi — café ★ 日本"),
        user("\x1b[31mred\x07 and a tab\there"),
        image_entry("look at this", png_data_url(32, 24)),
        assistant("a picture of nothing", imagesSeen=True),
        attachment("the body of the page " * 20, title="A [page] title"),
        assistant("summary"),
    ]
    live += [user(f"more {i}") if i % 2 else assistant(f"more {i}") for i in range(6)]
    store.history.mutate(lambda _: live)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("reading") / "chatkeep.db")
    with chatkeep.open(path) as s:
        _fill(s, SESSIONS)
    return path


def _env(tmp: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CHATKEEP_", "_CHATKEEP")) and k != "PYTHONIOENCODING"
    }
    env["XDG_DATA_HOME"] = str(tmp / "data")  # a default store never lands in the real home
    os.makedirs(env["XDG_DATA_HOME"], exist_ok=True)
    return {**env, **(extra or {})}


def _run(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    # in the test's own directory: a relative store path (`--store --store`, say) lands there
    cwd = env["XDG_DATA_HOME"]
    proc = subprocess.run(argv, capture_output=True, env=env, timeout=120, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def run_cli(args: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """The console script with ``args``: never a traceback, whatever the outcome."""
    result = _run([chatkeep_exe(), *args], env)
    assert b"Traceback" not in result[2], (args, result[2][-400:])
    return result


READ_FORMS = [
    ["history"],
    ["history", "--json"],
    ["history", "-n", "3"],
    ["history", "-n3"],
    ["history", "-n", "0"],
    ["history", "-n", "007"],
    ["history", "--json", "-n", "2"],
    ["history", "--archived"],
    ["history", "--archived", "--json", "-n1"],
    ["sessions", "list"],
    ["sessions", "list", "--json"],
    ["sessions", "list", "alpha"],
    ["sessions", "list", "--json", "bête"],
    ["sessions", "list", "nothing matches this"],
    ["sessions", "list", " "],
]


@pytest.mark.parametrize("form", READ_FORMS, ids=" ".join)
def test_reading_forms_answer_without_error(filled: str, tmp_path: Path, form: list[str]) -> None:
    code, out, err = run_cli(["--store", filled, *form], _env(tmp_path))
    assert code == 0 and not err
    assert bool(out) == (form != ["history", "-n", "0"])
    assert b"base64" not in out  # images as sizes, never their bytes


def test_the_forms_show_what_the_store_holds(filled: str, tmp_path: Path) -> None:
    env = _env(tmp_path)
    _, out, _ = run_cli(["--store", filled, "sessions", "list"], env)
    lines = out.decode().splitlines()
    assert lines[0].split() == ["id", "name", "created", "pinned"]
    assert len(lines) == 1 + SESSIONS
    assert "\\x1b]0;title\\x07 evil" in out.decode()  # control characters shown escaped
    _, out, _ = run_cli(["--store", filled, "history", "-n", "2"], env)
    assert out.decode().splitlines() == ["#6 assistant: more 4", "#7 user: more 5"]
    _, out, _ = run_cli(["--store", filled, "history", "--archived", "-n1"], env)
    assert out.decode().startswith("#")
    _, out, _ = run_cli(["--store", filled, "sessions", "list", "--json", "topic 3"], env)
    assert out.startswith(b"[") and b'"contentMatch": true' in out


def test_stores_that_cannot_be_read(tmp_path: Path) -> None:
    """A store that cannot be opened is a typed error (exit 4) on stderr; an empty one says so."""
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    empty = str(tmp_path / "new" / "fresh.db")
    os.makedirs(os.path.dirname(empty))
    env = _env(tmp_path)
    seen = set()
    for store in [
        str(tmp_path / "missing" / "dir" / "x.db"),
        "ftp://example.com/x",
        "sqlite://relative.db",
        str(garbage),
        str(tmp_path),
    ]:
        for form in (["history"], ["sessions", "list", "--json"]):
            code, out, err = run_cli(["--store", store, *form], env)
            assert code != 0 and err.startswith(b"error: ") and not out
            seen.add(code)
    assert seen == {4}
    for form in (
        ["history"],
        ["history", "--archived"],
        ["sessions", "list"],
        ["sessions", "list", "q"],
    ):
        assert run_cli(["--store", empty, *form], env)[1].startswith(b"(")


def test_postgresql_store(pg_spec: Any, tmp_path: Path) -> None:
    with pg_spec.open() as s:
        _fill(s, 6)
    url, profile = pg_spec.url, pg_spec.profile
    env = _env(tmp_path)
    code, out, _ = run_cli(["--store", url, "--profile", profile, "sessions", "list"], env)
    assert code == 0 and len(out.splitlines()) == 7
    env = _env(tmp_path, {"CHATKEEP_STORE": url, "CHATKEEP_PROFILE": profile})
    assert run_cli(["history", "--json", "-n", "1"], env)[1].startswith(b"[")
    wrong = url.rsplit("/", 1)[0] + "/ck_no_such_database_" + uuid.uuid4().hex[:8]
    code, _, err = run_cli(["--store", wrong, "history"], env)
    assert code == 4 and err.startswith(b"error: ")


TOKENS = [
    "--store",
    "--profile",
    "default",
    "elsewhere",
    "history",
    "sessions",
    "list",
    "--json",
    "--archived",
    "-n",
    "-n2",
    "2",
    "0",
    "-1",
    "alpha",
    "--help",
    "--",
    "-x",
    "",
]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.sampled_from(TOKENS), max_size=3),
    st.sampled_from([["history"], ["sessions", "list"]]),
    st.lists(st.sampled_from(TOKENS), max_size=4),
)
def test_any_command_line_is_answered_or_refused_with_a_usage_error(
    filled: str, tmp_path: Path, before: list[str], command: list[str], after: list[str]
) -> None:
    """Whatever surrounds the command (store from the environment): success, a usage error
    (2) or a typed error with its exit status, never a traceback."""
    code, _, err = run_cli([*before, *command, *after], _env(tmp_path, {"CHATKEEP_STORE": filled}))
    assert code in (0, 2, 3, 4, 9, 10, 11), err[-300:]
    if code:
        assert err


def _on_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        argv, stdout=slave, stderr=subprocess.PIPE, env=env, cwd=env["XDG_DATA_HOME"]
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.stderr is not None
    err = proc.stderr.read()
    return proc.wait(timeout=60), out, err


def test_on_a_terminal_the_header_is_bold(filled: str, tmp_path: Path) -> None:
    args = ["--store", filled, "sessions", "list", "alpha"]
    code, out, _ = _on_terminal([chatkeep_exe(), *args], _env(tmp_path))
    assert code == 0 and out.startswith(b"\x1b[1mid ")
