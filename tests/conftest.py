"""Shared fixtures: a real store on every backend, each test in its own file or profile.

``backend`` is parametrized over ``sqlite`` (a fresh file per test) and ``postgres`` (the
server at ``CHATKEEP_TEST_PG``, default ``postgresql://postgres@127.0.0.1:5432/test``, a fresh
profile per test). Without a server the PostgreSQL cases are skipped, except when ``CI=true``:
then a missing server is a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import chatkeep
from support.pg import PG_URL, pg_available, require_pg  # noqa: F401 - used by tests
from support.stores import StoreSpec

# What the test run itself is told: the server to use and the fuzz budget. Every other
# CHATKEEP_* variable, and the provider fallback's OPENAI_* ones, are the user's and unset.
_RUN_SETTINGS = {"CHATKEEP_TEST_PG", "CHATKEEP_FUZZ_SCALE", "CHATKEEP_BENCH_PG"}
_USER_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def isolated_user(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test runs as a user with no chatkeep settings of their own: the data, config, cache
    and state directories are fresh (so the default store is never the real user's), and the
    user's CHATKEEP_* and provider variables are unset. Child processes inherit the same."""
    home = tmp_path_factory.mktemp("user")
    for var, sub in (
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    for var in list(os.environ):
        if (var.startswith("CHATKEEP_") and var not in _RUN_SETTINGS) or var in _USER_VARS:
            monkeypatch.delenv(var)
    return home


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Any) -> StoreSpec:
    if request.param == "postgres":
        require_pg()
        return StoreSpec("postgres", PG_URL, "t_" + uuid.uuid4().hex)
    return StoreSpec("sqlite", str(tmp_path / "chatkeep.db"), "default")


@pytest.fixture
def store(spec: StoreSpec) -> Iterator[chatkeep.Store]:
    s = spec.open()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def sqlite_spec(tmp_path: Any) -> StoreSpec:
    return StoreSpec("sqlite", str(tmp_path / "chatkeep.db"), "default")


@pytest.fixture
def pg_spec() -> StoreSpec:
    require_pg()
    return StoreSpec("postgres", PG_URL, "t_" + uuid.uuid4().hex)


_EXIT_STATUS: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT_STATUS.append(int(exitstatus))


def pytest_unconfigure(config: pytest.Config) -> None:
    """A test that fails while other threads wait for it (on a barrier, an event) can leave
    non-daemon threads waiting for ever: the interpreter would then never exit after the
    summary, and a CI run would end only at its time limit. Threads still running a few seconds
    after the run are named, and the process ends with the run's own status."""
    import sys
    import threading

    lingering = [
        t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon
    ]
    for t in lingering:
        t.join(2)
    lingering = [t for t in lingering if t.is_alive()]
    if not lingering or not _EXIT_STATUS:
        return
    names = ", ".join(t.name for t in lingering)
    print(f"\nthreads still running after the tests: {names}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(_EXIT_STATUS[-1])
