"""Opening a store: which files and directories are created, which files are refused, and what
a read-only store still allows — through ``chatkeep.open()`` and the console script."""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

import chatkeep
from clirun import chatkeep_exe, run
from factories import assistant, user


def _tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))


def test_missing_parent_directory_is_refused(tmp_path: Path) -> None:
    """A typo in the store path creates nothing: StoreError naming the missing directory."""
    target = tmp_path / "no-such-dir" / "deeper" / "ck.db"
    with pytest.raises(chatkeep.StoreError, match="does not exist") as err:
        chatkeep.open(str(target))
    assert "mkdir -p" in (err.value.hint or "")
    assert not (tmp_path / "no-such-dir").exists()
    proc = run(target, "stats", ok=False)
    assert proc.returncode == 4 and "does not exist" in proc.stderr
    assert not (tmp_path / "no-such-dir").exists()


def test_new_file_is_created_0600(tmp_path: Path) -> None:
    """A store file that does not exist yet is created in an existing directory, mode 0600."""
    target = tmp_path / "new.db"
    with chatkeep.open(str(target)) as s:
        s.local.set("replyLanguage", "de")
    assert target.stat().st_mode & 0o777 == 0o600


def test_default_store_creates_only_the_data_directory(tmp_path: Path) -> None:
    """With no URL, the user data directory is created (0700) and the store put inside it."""
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    code = "import chatkeep; s = chatkeep.open(); print(s.url); s.close()"  # default path
    proc = subprocess.run(
        [_python(), "-c", code],
        capture_output=True,
        text=True,
        env={**_clean_env(), **env},
        check=True,
    )
    data_dir = tmp_path / "xdg" / "chatkeep"
    assert proc.stdout.strip() == f"sqlite://{data_dir / 'chatkeep.db'}"
    assert data_dir.stat().st_mode & 0o777 == 0o700
    assert (data_dir / "chatkeep.db").stat().st_mode & 0o777 == 0o600


_HOMES = (None, "", "/home/ann", "/home/ann/", "/", "//srv/u", "relative/home", "~")
_XDGS = (None, "", " ", "/data", "/data/", "/x y ", "rel/xdg", "~/share", "/a//b")


@pytest.mark.parametrize("home", _HOMES)
@pytest.mark.parametrize("xdg", _XDGS)
def test_default_store_path_is_where_platformdirs_puts_it(
    home: str | None, xdg: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default store sits in the data directory platformdirs names, whatever ``HOME`` and
    ``XDG_DATA_HOME`` hold (chatkeep answers the plain Linux cases without importing it)."""
    import platformdirs

    from chatkeep.store import default_store_path

    for key, value in (("HOME", home), ("XDG_DATA_HOME", xdg)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    try:
        expected = os.path.join(platformdirs.user_data_dir("chatkeep"), "chatkeep.db")
    except RuntimeError:  # platformdirs cannot name a home: nor may chatkeep guess one
        with pytest.raises(RuntimeError):
            default_store_path()
        return
    assert default_store_path() == expected


def test_default_store_path_is_platformdirs_user_data_dir(tmp_path: Path) -> None:
    """In a fresh process with only ``HOME`` set, the default store is ``chatkeep.db`` in the
    directory platformdirs names for ``chatkeep`` (``~/.local/share/chatkeep`` on Linux)."""
    code = "from chatkeep.store import default_store_path as d; print(d())"
    env = {k: v for k, v in _clean_env().items() if k != "XDG_DATA_HOME"}
    proc = subprocess.run(
        [_python(), "-c", code],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(tmp_path)},
        check=True,
    )
    assert proc.stdout.strip() == str(tmp_path / ".local" / "share" / "chatkeep" / "chatkeep.db")


def test_directory_as_store_is_refused(tmp_path: Path) -> None:
    """--store pointing at a directory is a StoreError suggesting a file inside it."""
    with pytest.raises(chatkeep.StoreError, match="is a directory") as err:
        chatkeep.open(str(tmp_path))
    assert "chatkeep.db" in (err.value.hint or "")


def test_foreign_sqlite_database_is_refused_unchanged(tmp_path: Path) -> None:
    """Another application's SQLite file is refused, and no chatkeep table is added to it."""
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
        conn.execute("CREATE TABLE moz_bookmarks (id INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    before = path.read_bytes()
    with pytest.raises(chatkeep.StoreError, match="another application's SQLite database"):
        chatkeep.open(str(path))
    proc = run(path, "history", ok=False)
    assert proc.returncode == 4 and "moz_bookmarks, moz_places" in proc.stderr
    assert _tables(path) == ["moz_bookmarks", "moz_places"]
    assert path.read_bytes() == before
    assert not Path(str(path) + "-wal").exists()


def test_empty_sqlite_file_becomes_a_store(tmp_path: Path) -> None:
    """An SQLite database with no tables at all is not foreign: it becomes a chatkeep store."""
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    with chatkeep.open(str(path)) as s:
        s.history.append(user("hello"))
    assert "ck_history" in _tables(path)


def test_a_new_store_opened_by_eight_connections_at_once_opens_on_all(tmp_path: Path) -> None:
    """Eight connections opening the same new file together (commands started at once on a new
    machine) all open it and all write: switching the file to WAL answers "database is locked"
    at once, without SQLite's busy wait, to the connections that race it. Forty new files: the
    race lost about one file in twenty before opening waited for it."""
    for trial in range(40):
        path = str(tmp_path / f"new{trial}.db")
        errors: list[BaseException] = []

        def work(n: int, path: str = path, errors: list[BaseException] = errors) -> None:
            try:
                with chatkeep.open(path) as s:
                    s.local.set(f"k{n}", n)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, (trial, errors)
        with chatkeep.open(path) as s:
            assert {k: s.local.get(k) for k in s.local.keys()} == {f"k{n}": n for n in range(8)}


def test_not_a_database_hint_matches_the_cause(tmp_path: Path) -> None:
    """A file that is not SQLite gets a hint about the file, not about writable directories."""
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(chatkeep.StoreError, match="is not an SQLite database") as err:
        chatkeep.open(str(path))
    hint = err.value.hint or ""
    assert "another kind of file" in hint and "writable" not in hint
    proc = run(path, "stats", ok=False)
    assert proc.returncode == 4 and "not an SQLite database" in proc.stderr
    assert "writable" not in proc.stderr and "Traceback" not in proc.stderr
    assert path.read_text().startswith("these are my notes")


def test_open_honours_chatkeep_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """open() without profile= uses CHATKEEP_PROFILE; an explicit profile wins over it."""
    path = str(tmp_path / "p.db")
    monkeypatch.setenv("CHATKEEP_PROFILE", "work")
    with chatkeep.open(path) as s:
        assert s.profile == "work"
        s.local.set("replyLanguage", "fr")
    with chatkeep.open(path, profile="default") as s:
        assert s.get_all()["replyLanguage"] == ""
    monkeypatch.delenv("CHATKEEP_PROFILE")
    with chatkeep.open(path) as s:
        assert s.profile == "default"
    with chatkeep.open(path, profile="work") as s:
        assert s.get_all()["replyLanguage"] == "fr"


# -- read-only stores ----------------------------------------------------------------------


def _drop_dac() -> None:
    """Run the child without the capabilities that let root ignore file permissions."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}


def _python() -> str:
    return str(Path(chatkeep_exe()).with_name("python"))


def _ro_run(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chatkeep_exe(), "--store", str(store), *args],
        capture_output=True,
        text=True,
        env=_clean_env(),
        preexec_fn=_drop_dac if os.geteuid() == 0 else None,
        timeout=60,
    )


@pytest.fixture
def readonly_store(tmp_path: Path) -> Path:
    """A valid store with history and a session, then its file and directory made read-only."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "ck.db"
    with chatkeep.open(str(path)) as s:
        s.history.append(user("what do owls eat?"))
        s.history.append(assistant("mice, mostly"))
        s.sessions.save("owl food")
    path.chmod(0o444)
    folder.chmod(0o555)
    probe = _ro_run(path, "--version")
    if probe.returncode != 0:
        pytest.skip(f"cannot drop file-permission capabilities here: {probe.stderr[-200:]}")
    yield path
    folder.chmod(0o755)
    path.chmod(0o644)


def test_read_commands_work_on_a_read_only_store(readonly_store: Path) -> None:
    """history, sessions list/show, stats, export and provider list read a read-only store."""
    hist = _ro_run(readonly_store, "history", "--json")
    assert hist.returncode == 0, hist.stderr
    assert [v["content"][0]["text"] for v in json.loads(hist.stdout)] == [
        "what do owls eat?",
        "mice, mostly",
    ]
    rows = _ro_run(readonly_store, "sessions", "list", "--json")
    assert rows.returncode == 0, rows.stderr
    (row,) = json.loads(rows.stdout)
    shown = _ro_run(readonly_store, "sessions", "show", row["id"][:6])
    assert shown.returncode == 0 and "owl food" in shown.stdout
    search = _ro_run(readonly_store, "sessions", "list", "mice")
    assert search.returncode == 0 and "owl food" in search.stdout, search.stderr
    for args in (("stats",), ("export",), ("provider", "list")):
        proc = _ro_run(readonly_store, *args)
        assert proc.returncode == 0, (args, proc.stderr)


def test_write_on_a_read_only_store_is_a_store_error(readonly_store: Path) -> None:
    """A writing command on a read-only store exits 4 saying the store is read-only."""
    before = readonly_store.read_bytes()
    proc = _ro_run(readonly_store, "sessions", "save", "again")
    assert proc.returncode == 4, proc.stderr
    assert "read-only" in proc.stderr and "Traceback" not in proc.stderr
    assert readonly_store.read_bytes() == before
