"""A pytest plugin for the Agents SDK's own test suite: every ``SQLiteSession(session_id,
db_path, session_settings=…)`` its test modules make is a ``ChatkeepSession`` on a chatkeep
store at that path instead (``:memory:``, the SDK's default, an in-memory store). ``close()``,
which the SDK's tests call on ``SQLiteSession``, closes that store.

Loaded by ``tests/integrations/test_agents_sdk_own_tests.py`` with ``-p agents_swap``."""

from __future__ import annotations

from typing import Any

import pytest
from own_suite import leave_out, swap_in

import chatkeep
from chatkeep.integrations.agents import ChatkeepSession


class StoreOwningSession(ChatkeepSession):
    """A ``ChatkeepSession`` on a store of its own, closed with it."""

    def __init__(self, store: Any, session_id: str, session_settings: Any = None) -> None:
        super().__init__(store, session_id, session_settings=session_settings)
        self.store = store

    def close(self) -> None:
        self.store.close()


def chatkeep_session(
    session_id: str, db_path: Any = ":memory:", *, session_settings: Any = None, **_: Any
) -> StoreOwningSession:
    return StoreOwningSession(chatkeep.open(str(db_path)), session_id, session_settings)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    leave_out(config, items)
    swap_in(items, "SQLiteSession", chatkeep_session, "ChatkeepSession", "agents_swap")
