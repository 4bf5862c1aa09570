"""A pytest plugin for langchain-core's own test suite: every ``InMemoryChatMessageHistory``
its test modules make (``InMemoryChatMessageHistory(messages=[…])`` included) is a
``ChatkeepChatMessageHistory`` instead, a session of its own in one chatkeep store on disk.

Loaded by ``tests/integrations/test_langchain_own_tests.py`` with ``-p langchain_swap``."""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import Any

import pytest
from own_suite import leave_out, swap_in

import chatkeep
from chatkeep.integrations.langchain import ChatkeepChatMessageHistory

_STORE = chatkeep.open(os.path.join(tempfile.mkdtemp(prefix="langchain-swap-"), "chatkeep.db"))


def chatkeep_history(messages: Any = None, **_: Any) -> ChatkeepChatMessageHistory:
    history = ChatkeepChatMessageHistory(_STORE, "lc-" + uuid.uuid4().hex)
    if messages:
        history.add_messages(messages)
    return history


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    leave_out(config, items)
    swap_in(
        items,
        "InMemoryChatMessageHistory",
        chatkeep_history,
        "ChatkeepChatMessageHistory",
        "langchain_swap",
    )
