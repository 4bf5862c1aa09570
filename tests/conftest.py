"""Shared fixtures: a real store on every backend, each test in its own file or profile.

``backend`` is parametrized over ``sqlite`` (a fresh file per test) and ``postgres`` (the
server at ``CHATKEEP_TEST_PG``, default ``postgresql://postgres@127.0.0.1:5432/test``, a fresh
profile per test). Without a server the PostgreSQL cases are skipped, except when ``CI=true``:
then a missing server is a failure.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import chatkeep
from support.pg import PG_URL, pg_available, require_pg  # noqa: F401 - used by tests
from support.stores import StoreSpec


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
