"""The start-up fast path of ``chatkeep history`` and ``chatkeep sessions list`` (cli/fast.py).

The installed console script answers the plain reading forms without Click; the Click
application (``chatkeep.cli.main.main``, run with the same command line) is the reference.
For every command line — the forms the fast path answers, the ones it leaves to Click, broken
ones, stores that cannot be opened — both give the same stdout, stderr and exit status, on
SQLite and on PostgreSQL. And the fast path does not import Click.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatkeep
from clirun import chatkeep_exe
from factories import assistant, attachment, image_entry, png_data_url, user

CLICK_APP = [sys.executable, "-c", "from chatkeep.cli.main import main; main()"]
#: Runs the console script's entry point, then says whether Click got imported.
PROBE = (
    "import sys\n"
    "sys.argv = ['chatkeep', *sys.argv[1:]]\n"
    "from chatkeep.cli.entry import main\n"
    "main()\n"
    "sys.stderr.write(f'click imported: {\"click\" in sys.modules}\\n')\n"
)
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
    path = str(tmp_path_factory.mktemp("fast") / "chatkeep.db")
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


def assert_same(args: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """The console script and the Click application give the same result for ``args``."""
    fast = _run([chatkeep_exe(), *args], env)
    click_app = _run([*CLICK_APP, *args], env)
    if fast[2].startswith(b"Traceback") and click_app[2].startswith(b"Traceback"):
        # a crash inside the Click application on both paths (an output stream that cannot
        # encode the text): the frames name the two launchers, the error itself must agree
        fast = (fast[0], fast[1], fast[2].splitlines()[-1])
        click_app = (click_app[0], click_app[1], click_app[2].splitlines()[-1])
    assert fast == click_app, args
    return fast


READ_FORMS = [
    ["history"],
    ["history", "--json"],
    ["history", "-n", "3"],
    ["history", "-n3"],
    ["history", "-n", "0"],
    ["history", "-n", "007"],
    ["history", "-n", "999"],
    ["history", "--json", "-n", "2"],
    ["history", "--archived"],
    ["history", "--archived", "--json", "-n1"],
    ["sessions", "list"],
    ["sessions", "list", "--json"],
    ["sessions", "list", "alpha"],
    ["sessions", "list", "--json", "bête"],
    ["sessions", "list", "topic 3", "--json"],
    ["sessions", "list", "nothing matches this"],
    ["sessions", "list", " "],
    ["sessions", "list", ""],
]
#: Forms the fast path leaves to Click: other options, errors, help, odd spellings.
CLICK_FORMS = [
    ["history", "--help"],
    ["history", "-h"],
    ["history", "-n", "-1"],
    ["history", "-n", "x"],
    ["history", "-n"],
    ["history", "-n=2"],
    ["history", "-n", "+3"],
    ["history", "-n", "1_0"],
    ["history", "-n", "٣"],
    ["history", "-n", "1", "-n", "2"],
    ["history", "--json", "--json"],
    ["history", "--json=1"],
    ["history", "extra"],
    ["history", "--limit", "3"],
    ["history", "--"],
    ["sessions", "list", "a", "b"],
    ["sessions", "list", "--", "-x"],
    ["sessions", "list", "-x"],
    ["sessions", "list", "--help"],
    ["sessions", "list", "--limit", "5"],
    ["sessions"],
    ["sessions", "lst"],
    ["sessions", "--json", "list"],
    ["--debug", "history", "-n", "2"],
    ["--version"],
    ["stats"],
    ["histor"],
    [],
]


@pytest.mark.parametrize("form", READ_FORMS + CLICK_FORMS, ids=" ".join)
def test_same_output_as_the_click_application(filled: str, tmp_path: Path, form: list[str]) -> None:
    code, out, err = assert_same(["--store", filled, *form], _env(tmp_path))
    if form in READ_FORMS:
        assert code == 0 and not err
        assert bool(out) == (form != ["history", "-n", "0"])
        assert b"base64" not in out  # images as sizes, never their bytes


def test_the_forms_show_what_the_store_holds(filled: str, tmp_path: Path) -> None:
    """The compared outputs are real listings (a comparison of two empty outputs proves little)."""
    env = _env(tmp_path)
    _, out, _ = assert_same(["--store", filled, "sessions", "list"], env)
    lines = out.decode().splitlines()
    assert lines[0].split() == ["id", "name", "created", "pinned"]
    assert len(lines) == 1 + SESSIONS
    assert "\\x1b]0;title\\x07 evil" in out.decode()  # control characters shown escaped
    _, out, _ = assert_same(["--store", filled, "history", "-n", "2"], env)
    assert out.decode().splitlines() == ["#6 assistant: more 4", "#7 user: more 5"]
    _, out, _ = assert_same(["--store", filled, "history", "--archived", "-n1"], env)
    assert out.decode().startswith("#")


@pytest.mark.parametrize(
    ("prefix", "extra"),
    [
        (["--store={}"], {}),
        ([], {"CHATKEEP_STORE": "{}"}),
        (["--store", "{}", "--profile", "default"], {}),
        (["--profile=default", "--store", "{}"], {}),
        (["--store", "{}"], {"CHATKEEP_PROFILE": ""}),
        (["--store", "{}"], {"CHATKEEP_PROFILE": "elsewhere"}),
        (["--store", "{}", "--profile", "elsewhere"], {"CHATKEEP_PROFILE": "default"}),
        (["--store", "{}", "--profile", "p" * 101], {}),
        (["--store", "{}", "--store", "{}"], {}),
        (["--store", "{}", "--profile", "-p"], {}),
        (["--store", "{}"], {"PYTHONIOENCODING": "ascii"}),
        (["--store", "{}"], {"PYTHONIOENCODING": "latin-1"}),
        (["--store", "{}"], {"_CHATKEEP_COMPLETE": "bash_source"}),
    ],
)
@pytest.mark.parametrize("form", [["history", "-n", "4"], ["sessions", "list", "bête"]])
def test_store_and_profile_spellings(
    filled: str, tmp_path: Path, prefix: list[str], extra: dict[str, str], form: list[str]
) -> None:
    args = [a.format(filled) for a in prefix]
    assert_same([*args, *form], _env(tmp_path, {k: v.format(filled) for k, v in extra.items()}))


def test_stores_that_cannot_be_read(tmp_path: Path) -> None:
    """Errors come out exactly as the Click application reports them."""
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
            code, out, err = assert_same(["--store", store, *form], env)
            assert code != 0 and err.startswith(b"error: ") and not out
            seen.add(code)
    assert seen == {4}
    for form in (
        ["history"],
        ["history", "--archived"],
        ["sessions", "list"],
        ["sessions", "list", "q"],
    ):
        assert assert_same(["--store", empty, *form], env)[1].startswith(b"(")


def test_postgresql_store(pg_spec: Any, tmp_path: Path) -> None:
    with pg_spec.open() as s:
        _fill(s, 6)
    url, profile = pg_spec.url, pg_spec.profile
    env = _env(tmp_path)
    for form in READ_FORMS[:12] + CLICK_FORMS[:3]:
        assert_same(["--store", url, "--profile", profile, *form], env)
    code, out, _ = assert_same(["--store", url, "--profile", profile, "sessions", "list"], env)
    assert code == 0 and len(out.splitlines()) == 7
    env = _env(tmp_path, {"CHATKEEP_STORE": url, "CHATKEEP_PROFILE": profile})
    assert assert_same(["history", "--json", "-n", "1"], env)[1].startswith(b"[")
    wrong = url.rsplit("/", 1)[0] + "/ck_no_such_database_" + uuid.uuid4().hex[:8]
    code, _, err = assert_same(["--store", wrong, "history"], env)
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
    "topic",
    "--help",
    "--",
    "-x",
    "--debug",
    "",
]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.sampled_from(TOKENS), max_size=3),
    st.sampled_from([["history"], ["sessions", "list"]]),
    st.lists(st.sampled_from(TOKENS), max_size=4),
)
def test_any_command_line_gives_the_same_result(
    filled: str, tmp_path: Path, before: list[str], command: list[str], after: list[str]
) -> None:
    """Whatever surrounds the command (with the store from the environment), both agree."""
    assert_same([*before, *command, *after], _env(tmp_path, {"CHATKEEP_STORE": filled}))


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


def test_on_a_terminal_the_header_is_bold_on_both_paths(filled: str, tmp_path: Path) -> None:
    args = ["--store", filled, "sessions", "list", "alpha"]
    env = _env(tmp_path)
    fast = _on_terminal([chatkeep_exe(), *args], env)
    assert fast == _on_terminal([*CLICK_APP, *args], env)
    assert fast[1].startswith(b"\x1b[1mid ")


def _probe(args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=env["XDG_DATA_HOME"],
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "form",
    [
        ["history"],
        ["history", "--json", "-n", "2"],
        ["sessions", "list"],
        ["sessions", "list", "a"],
    ],
)
def test_the_fast_path_does_not_import_click(filled: str, tmp_path: Path, form: list[str]) -> None:
    env = _env(tmp_path)
    assert _probe(["--store", filled, *form], env) == "click imported: False"
    # the same probe sees Click when the command goes to the Click application
    assert _probe(["--store", filled, "--debug", *form], env) == "click imported: True"
