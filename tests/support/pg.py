"""The PostgreSQL server the tests use (``CHATKEEP_TEST_PG``), and whether it answers.

A module of its own, not the root ``conftest.py``: a test module that imports ``conftest`` gets
whichever ``conftest`` pytest loaded first in a whole run.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

PG_URL = os.environ.get("CHATKEEP_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
_pg_state: dict[str, Any] = {}


def pg_available() -> bool:
    if "ok" not in _pg_state:
        try:
            import psycopg

            with psycopg.connect(PG_URL, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _pg_state["ok"] = True
        except Exception as exc:  # any failure means "not available"
            _pg_state["ok"] = False
            _pg_state["why"] = str(exc)
    return bool(_pg_state["ok"])


def require_pg() -> None:
    if not pg_available():
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"PostgreSQL is required on CI but not reachable at {PG_URL}: {_pg_state.get('why')}"
            )
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}")
