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
from leave_out import leave_out

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
    swapped = set()
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and getattr(module, "InMemoryChatMessageHistory", None) is not None:
            module.InMemoryChatMessageHistory = chatkeep_history
            swapped.add(module.__name__)
    if not swapped:
        raise pytest.UsageError("no test module makes an InMemoryChatMessageHistory")
    names = ", ".join(sorted(swapped))
    print(f"langchain_swap: InMemoryChatMessageHistory is ChatkeepChatMessageHistory in {names}")
