"""Faults lose nothing: a full disk, a store made read-only, the PostgreSQL server unreachable
mid-turn. Each gives a typed StoreError with a true hint, every acknowledged write survives,
and the next command works once the fault is gone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

import chatkeep
from chatkeep import StoreError
from hostile.tcp_proxy import CuttableProxy
from support.provider_server import Text, provider_server  # noqa: F401

PY = sys.executable
PG_URL = os.environ.get("CHATKEEP_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
IS_ROOT = os.geteuid() == 0


def _texts(store: chatkeep.Store) -> list[str]:
    return [e["content"] for e in store.history.archived() + store.history.read()]


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs mounted for the test (root only; skipped where mounting is refused)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_full_disk_is_a_store_error_and_loses_no_acknowledged_write(small_tmpfs: Path) -> None:
    """Appending on a full disk raises StoreError naming the full disk; every append that
    returned is still there, and appends work again once space is freed."""
    store = chatkeep.open(str(small_tmpfs / "s.db"))
    store.local.set({"maxHistoryEntries": 1000, "maxHistoryChars": 10**9})
    acked: list[str] = []
    with pytest.raises(StoreError) as info:
        for i in range(1000):
            text = f"{i} " + os.urandom(30_000).hex()
            store.history.append({"role": "user", "content": text})
            acked.append(text)
    assert "disk holding the store is full" in info.value.message
    assert "free disk space" in info.value.hint
    assert acked and _texts(store) == acked
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_tmpfs)], check=True)
    store.history.append({"role": "user", "content": "after the fault"})
    store.close()
    again = chatkeep.open(str(small_tmpfs / "s.db"))
    assert _texts(again) == [*acked, "after the fault"]
    again.close()


def test_file_size_limit_is_a_store_error_and_the_next_process_works(tmp_path: Path) -> None:
    """Under RLIMIT_FSIZE (a full disk for one process) an import fails as a StoreError and
    changes nothing; the next process without the limit imports the same data."""
    db = tmp_path / "s.db"
    chatkeep.open(str(db)).close()
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"notes": "x" * 4_000_000, "history": []}))
    script = textwrap.dedent(
        f"""
        import json, resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))
        import chatkeep
        s = chatkeep.open({str(db)!r})
        try:
            s.import_data(json.load(open({str(dump)!r})))
        except chatkeep.StoreError as exc:
            print(json.dumps({{"type": type(exc).__name__, "message": exc.message,
                               "hint": exc.hint}}))
            sys.exit(0)
        print(json.dumps({{"type": "none"}}))
        """
    )
    out = subprocess.run([PY, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["type"] == "StoreError", result
    assert "full" in result["message"] or "I/O" in result["message"]
    store = chatkeep.open(str(db))
    assert store.local.keys() == []  # nothing of the failed import
    store.import_data(json.loads(dump.read_text()))
    assert len(store.local.get("notes")) == 4_000_000
    store.close()


@pytest.mark.skipif(not IS_ROOT, reason="runs the store as another user, which needs root")
def test_store_made_read_only_mid_run() -> None:
    """A store whose files become read-only between commands still opens and reads; writes
    raise StoreError saying it is read-only; writable again, the next write works."""
    work = Path(tempfile.mkdtemp(prefix="chatkeep-ro-"))  # reachable by the other user
    os.chmod(work, 0o755)
    os.chown(work, 65534, 65534)
    try:
        _read_only_run(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _read_only_run(work: Path) -> None:
    db = work / "s.db"
    script = textwrap.dedent(
        f"""
        import json, os, chatkeep
        p = {str(db)!r}
        out = {{}}
        s = chatkeep.open(p)
        s.history.append({{"role": "user", "content": "before"}})
        s.close()
        for f in (p, p + "-wal", p + "-shm"):
            if os.path.exists(f):
                os.chmod(f, 0o400)
        s = chatkeep.open(p)
        out["read"] = [e["content"] for e in s.history.read()]
        try:
            s.history.append({{"role": "user", "content": "lost?"}})
            out["error"] = None
        except chatkeep.StoreError as exc:
            out["error"] = [exc.message, exc.hint]
        s.close()
        for f in (p, p + "-wal", p + "-shm"):
            if os.path.exists(f):
                os.chmod(f, 0o600)
        s = chatkeep.open(p)
        s.history.append({{"role": "user", "content": "after"}})
        out["final"] = [e["content"] for e in s.history.read()]
        print(json.dumps(out))
        """
    )
    proc = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PY, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["read"] == ["before"]
    assert out["error"] and "read-only" in out["error"][0] and "write" in out["error"][1]
    assert out["final"] == ["before", "after"]


def _via(proxy: CuttableProxy) -> str:
    parts = urlsplit(PG_URL)
    netloc = (parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else "") + (
        f"127.0.0.1:{proxy.port}"
    )
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture
def pg_proxy(pg_spec: Any) -> Iterator[CuttableProxy]:
    """A cuttable proxy in front of the test server (``pg_spec`` skips or fails without it)."""
    parts = urlsplit(PG_URL)
    proxy = CuttableProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    try:
        yield proxy
    finally:
        proxy.close()


def test_postgres_unreachable_between_writes(pg_proxy: CuttableProxy) -> None:
    """With the server unreachable a write raises StoreError with a reconnect hint and is not
    stored; once reachable, the same store reconnects and every acknowledged write is there."""
    store = chatkeep.open(_via(pg_proxy), profile="f_" + uuid.uuid4().hex)
    store.history.append({"role": "user", "content": "one"})
    pg_proxy.cut()
    with pytest.raises(StoreError) as info:
        store.history.append({"role": "user", "content": "during"})
    assert "reachable" in info.value.hint
    pg_proxy.resume()
    store.history.append({"role": "user", "content": "two"})
    assert _texts(store) == ["one", "two"]
    store.close()


def test_postgres_cut_mid_turn_keeps_the_streamed_reply(
    pg_proxy: CuttableProxy,
    provider_server,  # noqa: F811
) -> None:
    """The server goes away while the reply streams: the reply is shown, the StoreError says
    it was not saved, and it is stored by save_unsaved_reply once the server is back."""
    store = chatkeep.open(_via(pg_proxy), profile="f_" + uuid.uuid4().hex)
    store.local.set(
        {
            "providers": {
                "loop": {
                    "style": "chat",
                    "baseUrl": provider_server.url("/v1"),
                    "model": "m",
                    "apiKey": "sk-test",
                }
            },
            "activeProvider": "loop",
        }
    )
    provider_server.queue(Text("streamed answer"))
    shown: list[str] = []

    def on_delta(text: str) -> None:
        shown.append(text)
        pg_proxy.cut()

    with pytest.raises(StoreError) as info:
        store.chat.send("a question", on_delta=on_delta)
    assert "".join(shown) == "streamed answer"
    assert "not saved" in info.value.hint
    pg_proxy.resume()
    reply = chatkeep.save_unsaved_reply(store)
    assert reply is not None and reply.landed == "live"
    assert [e["content"] for e in store.history.read()] == ["a question", "streamed answer"]
    assert chatkeep.save_unsaved_reply(store) is None
    store.close()


@pytest.fixture
def server_tmpfs() -> Iterator[Path]:
    """An 8 MB tmpfs the PostgreSQL server's own user can reach (root only): room for a new
    database and chatkeep's schema (with 3 MB the schema's own indexes could fill it, so the
    store failed to open instead of failing an append)."""
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs needs root")
    mnt = Path(tempfile.mkdtemp(prefix="chatkeep-pgdisk-"))
    os.chmod(mnt, 0o755)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", str(mnt)],
        capture_output=True,
    )
    if r.returncode != 0:
        mnt.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        # a tablespace left on the tmpfs (its drop failed) must keep its directory: the server
        # would fail its next checkpoint, and could not start again, without it
        if not _tablespace_under(mnt):
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
            shutil.rmtree(mnt, ignore_errors=True)


def _tablespace_under(path: Path) -> bool:
    """Whether a PostgreSQL tablespace still lives under ``path`` (True when that is unknown)."""
    psycopg = pytest.importorskip("psycopg")
    try:
        with psycopg.connect(PG_URL, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute("SELECT pg_tablespace_location(oid) FROM pg_tablespace").fetchall()
    except psycopg.Error:
        return True
    return any(str(loc).startswith(str(path)) for (loc,) in rows if loc)


def test_postgres_full_disk_is_a_store_error_and_loses_no_acknowledged_write(
    server_tmpfs: Path,
) -> None:
    """A PostgreSQL database whose tablespace sits on an 8 MB tmpfs fills up: the append that
    does not fit raises StoreError saying the server ran out of space (not "connection
    problem"), every acknowledged append is there, and appends work once space is freed."""
    psycopg = pytest.importorskip("psycopg")
    try:
        admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    space = server_tmpfs / "pg"
    space.mkdir()
    shutil.chown(space, "postgres", "postgres")
    name = "ck_full_" + uuid.uuid4().hex[:8]
    try:
        admin.execute(f"CREATE TABLESPACE {name} LOCATION '{space}'")
    except psycopg.Error as exc:
        admin.close()
        pytest.skip(f"cannot create a tablespace here: {exc}")
    admin.execute(f"CREATE DATABASE {name} TABLESPACE {name}")
    url = urlunsplit(urlsplit(PG_URL)._replace(path="/" + name))
    try:
        store = chatkeep.open(url)
        store.local.set({"maxHistoryEntries": 1000, "maxHistoryChars": 10**9})
        acked: list[str] = []
        with pytest.raises(StoreError) as info:
            for i in range(1000):
                text = f"{i} " + os.urandom(30_000).hex()
                store.history.append({"role": "user", "content": text})
                acked.append(text)
        assert "ran out of a resource" in info.value.message
        assert "free disk space" in info.value.hint
        assert acked and _texts(store) == acked
        subprocess.run(["mount", "-o", "remount,size=64m", str(server_tmpfs)], check=True)
        store.history.append({"role": "user", "content": "after the fault"})
        store.close()
        again = chatkeep.open(url)
        assert _texts(again) == [*acked, "after the fault"]
        again.close()
    finally:
        # FORCE ends the database's sessions and drops it in one step: a plain drop right after
        # terminating them could fail while one was still exiting, and then the tablespace's
        # drop failed too
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"DROP TABLESPACE IF EXISTS {name}")
        admin.close()


def test_postgres_database_made_read_only_between_commands() -> None:
    """A PostgreSQL database switched to read-only between two commands: the next command
    reads everything, a write raises StoreError saying read-only (nothing written), and once
    writable again the next write works."""
    psycopg = pytest.importorskip("psycopg")
    try:
        admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    name = "ck_ro_" + uuid.uuid4().hex[:8]
    admin.execute(f"CREATE DATABASE {name}")
    url = urlunsplit(urlsplit(PG_URL)._replace(path="/" + name))
    try:
        with chatkeep.open(url) as store:
            store.history.append({"role": "user", "content": "kept"})
            store.sessions.save("before")
        admin.execute(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
        with chatkeep.open(url) as store:
            assert _texts(store) == ["kept"]
            assert [r["name"] for r in store.sessions.list()] == ["before"]
            with pytest.raises(StoreError) as info:
                store.history.append({"role": "user", "content": "refused"})
            assert "read-only" in info.value.message and "writable" in info.value.hint
            assert _texts(store) == ["kept"]
        admin.execute(f"ALTER DATABASE {name} SET default_transaction_read_only = off")
        with chatkeep.open(url) as store:
            store.history.append({"role": "user", "content": "after"})
            assert _texts(store) == ["kept", "after"]
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()
