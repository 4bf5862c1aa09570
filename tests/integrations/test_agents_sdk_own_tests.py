"""The OpenAI Agents SDK's own session tests, run against ``ChatkeepSession``.

The SDK publishes its test suite in its source distribution on PyPI. The version installed
here is downloaded (``pip download --no-binary``), and its session tests
(``tests/memory/test_session.py``, ``tests/memory/test_session_limit.py``) run in a pytest of
their own with every ``SQLiteSession`` they make swapped for a ``ChatkeepSession`` on a chatkeep
store at the same path (``tests/support/upstream/agents_swap.py``): real runs of the SDK's
``Runner`` with its own scripted model, limits, ``SessionSettings``, popping, Unicode and
injection-shaped ids, several threads writing at once. Left out are only the tests that reach
into ``SQLiteSession`` itself rather than the ``Session`` protocol (:data:`NOT_THE_PROTOCOL`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.upstream_tests import run_own_tests

pytest.importorskip("agents")
pytest.importorskip("pytest_asyncio")

FILES = ("tests/memory/test_session.py", "tests/memory/test_session_limit.py")

#: Tests of ``tests/memory/test_session.py`` left out, each for what it reaches into.
NOT_THE_PROTOCOL = {
    # the SDK's private mutation helper, no session at all
    "test_await_mutation_cancellation_hides_later_failure_without_loop_error": "private helper",
    # SQLiteSession's sqlite3 connections per worker thread, their closing and eviction
    "test_sqlite_session_close_closes_worker_thread_connections": "its connections",
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": "its connections",
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": "its connections",
    "test_sqlite_session_keeps_connections_of_live_worker_threads": "its connections",
    "test_sqlite_session_rollback_failure_evicts_connection": "its connections",
    "test_sqlite_session_close_retries_quarantined_connection": "its connections",
    # its closed state (a ChatkeepSession does not own the store it is given)
    "test_sqlite_session_closed_rejects_empty_add_items": "its closed state",
    # rows written straight into its own tables
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": "its tables",
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": "its tables",
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": "its tables",
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": "its tables",
    # its lock object, and failures injected into its sqlite3 connection
    "test_sqlite_session_file_lock_is_shared_across_instances": "its lock",
    "test_sqlite_session_failed_add_items_releases_write_lock": "its connection",
    "test_sqlite_session_failed_clear_session_rolls_back": "its connection",
    "test_sqlite_session_failed_pop_item_releases_write_lock": "its connection",
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": "its connection",
}


def test_the_sdks_own_session_tests_pass_on_chatkeep(tmp_path: Path) -> None:
    left_out = {FILES[0]: NOT_THE_PROTOCOL}
    passed, out = run_own_tests("openai-agents", "agents_swap", list(FILES), left_out, tmp_path)
    assert "SQLiteSession is ChatkeepSession in test_session, test_session_limit" in out
    assert passed >= 40, out[-2000:]
