"""Several processes on one store, and processes killed with SIGKILL mid-write (SPEC §1, §3.4, §4.2)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from factories import png_data_url, user

WORKER = str(Path(__file__).with_name("worker.py"))
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}


def _spawn(mode: str, url: str, profile: str, arg: str = "") -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, WORKER, mode, url, profile, arg], stdout=subprocess.PIPE, env=ENV
    )


@pytest.mark.slow
def test_four_processes_append_800(spec) -> None:
    """4 processes × 200 appends: live + archived hold exactly those 800, each process's in its own order."""
    with spec.open() as s:
        s.local.set("maxHistoryEntries", 150)
    procs = [_spawn("append", spec.url, spec.profile, f"p{n}:200") for n in range(4)]
    for p in procs:
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0
        assert out.decode().count("ack") == 200
    with spec.open() as s:
        live = s.history.read()
        everything = [e["content"] for e in s.history.archived() + live]
    assert len(live) == 150
    assert len(everything) == 800 == len(set(everything))
    for n in range(4):
        assert [c for c in everything if c.startswith(f"p{n}-")] == [
            f"p{n}-{k}" for k in range(200)
        ]


def _run_until_killed(mode: str, url: str, profile: str, rng: random.Random, arg: str = "") -> int:
    """Start a worker, kill it with SIGKILL at a random moment; returns how many writes it acknowledged."""
    name = f"ckw{uuid.uuid4().hex[:12]}"
    if url.startswith("postgresql"):
        url += ("&" if "?" in url else "?") + f"application_name={name}"
    proc = _spawn(mode, url, profile, arg)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    time.sleep(rng.uniform(0.0, 0.06))
    proc.send_signal(signal.SIGKILL)
    rest = proc.stdout.read().decode()
    proc.wait()
    if url.startswith("postgresql"):
        _wait_server_side_gone(url, name)
    return rest.count("ack")


def _wait_server_side_gone(url: str, name: str) -> None:
    """The killed client's server process may still be finishing a COMMIT it was sent (that
    write then lands, as it should): wait until it has gone before the test reads."""
    import psycopg

    base = url.split("?", 1)[0]
    with psycopg.connect(base, autocommit=True) as conn:
        for _ in range(200):
            if not conn.execute(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchall():
                return
            time.sleep(0.05)
    raise AssertionError(f"the server still serves the killed client {name} after 10 s")


def _kv_without(spec, *skip: str) -> list:
    return [r for r in spec.dump()["ck_kv"] if not any(r[1].startswith(s) for s in skip)]


def _check_sqlite_integrity(spec) -> None:
    if spec.kind == "sqlite":
        assert spec.raw_rows("PRAGMA integrity_check") == [("ok",)]


def _trials(spec, sqlite_n: int, pg_n: int) -> int:
    return sqlite_n if spec.kind == "sqlite" else pg_n


@pytest.mark.slow
def test_crash_while_appending(spec) -> None:
    """SIGKILL during appends: every acknowledged append is present, in order, nothing else appears or changes."""
    rng = random.Random(1234)
    with spec.open() as s:
        s.local.set({"maxHistoryEntries": 7, "other": {"untouched": True}})
    kv_before = _kv_without(spec, "activeSessionId")
    expected: list[str] = []
    for trial in range(_trials(spec, 70, 30)):
        acked = _run_until_killed("append", spec.url, spec.profile, rng, f"t{trial}:0")
        with spec.open() as s:
            stored = [e["content"] for e in s.history.archived() + s.history.read()]
        mine = [c for c in stored if c.startswith(f"t{trial}-")]
        assert mine[:acked] == [f"t{trial}-{k}" for k in range(acked)]
        assert len(mine) in (acked, acked + 1)  # at most the one in flight when killed
        expected += mine
        assert stored == expected
        assert len(stored) == len(set(stored))
        _check_sqlite_integrity(spec)
    assert _kv_without(spec, "activeSessionId") == kv_before


@pytest.mark.slow
def test_crash_while_saving_sessions(spec) -> None:
    """SIGKILL during saves: acknowledged sessions exist, index rows and bodies always agree."""
    rng = random.Random(99)
    saved_total = 0
    for _trial in range(_trials(spec, 50, 20)):
        acked = _run_until_killed("save", spec.url, spec.profile, rng)
        with spec.open() as s:
            index = s.local.get("savedSessions") or []
            body_keys = set(s.local.keys("session_"))
            assert body_keys == {f"session_{r['id']}" for r in index}
            assert len(index) in (saved_total + acked, saved_total + acked + 1)
            for r in index:
                assert s.local.get(f"session_{r['id']}"), "a session body is empty"
            saved_total = len(index)
            s.history.clear()
        _check_sqlite_integrity(spec)


@pytest.mark.slow
def test_crash_while_migrating(spec) -> None:
    """SIGKILL during a legacy migration: the index stays legacy (bodies maybe written) or is fully migrated; index() repairs."""
    rng = random.Random(7)
    image = png_data_url(64, 64, noise=True)
    legacy = [
        {
            "id": f"l{i}",
            "name": f"Legacy {i}",
            "createdAt": 1_700_000_000_000 + i,
            "pinned": False,
            "history": [
                user(f"question {i} " + "x" * 2000),
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "pic"},
                        {"type": "image_url", "image_url": {"url": image}},
                    ],
                },
                {"role": "assistant", "content": f"answer {i}"},
            ],
        }
        for i in range(40)
    ]
    states = {"legacy": 0, "leftover": 0, "migrated": 0}
    for trial in range(_trials(spec, 60, 25)):
        profile = f"{spec.profile}_m{trial}"
        import chatkeep

        with chatkeep.open(spec.url, profile=profile) as s:
            s.local.set({"savedSessions": legacy, "keep": trial})
        _run_until_killed("migrate", spec.url, profile, rng)
        with chatkeep.open(spec.url, profile=profile) as s:
            raw_index = s.local.get("savedSessions")
            bodies = set(s.local.keys("session_"))
            if raw_index == legacy:
                states["leftover" if bodies else "legacy"] += 1
                assert bodies in (set(), {f"session_l{i}" for i in range(40)})
            else:
                states["migrated"] += 1
                assert all("history" not in r for r in raw_index)
                assert bodies == {f"session_l{i}" for i in range(40)}
            rows = s.sessions.index()
            assert [r["id"] for r in rows] == [f"l{i}" for i in range(40)]
            for r in legacy:
                assert s.local.get(f"session_{r['id']}") == r["history"]
            assert s.local.get("keep") == trial
    print("migration states after kill:", states)
    assert sum(states.values()) == _trials(spec, 60, 25)
