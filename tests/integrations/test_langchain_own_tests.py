"""langchain-core's own tests of message histories, run against ``ChatkeepChatMessageHistory``.

LangChain publishes no standard test suite for ``BaseChatMessageHistory`` (``langchain-tests``
covers models, tools, retrievers, stores), but langchain-core's source distribution holds its
own tests of ``RunnableWithMessageHistory`` and of the in-memory history
(``tests/unit_tests/runnables/test_history.py``, ``…/chat_history/test_chat_history.py``). The
installed version's are downloaded and run with every ``InMemoryChatMessageHistory`` they make
swapped for a ``ChatkeepChatMessageHistory`` (``tests/support/upstream/langchain_swap.py``):
histories filled, read and cleared through the runnable, sync and async, with the input and
output shapes it takes. Left out (:data:`NOT_OURS`): tests of the base class alone, and four
that compare whole history objects with ``==`` (the in-memory history is a Pydantic model,
equal by value; two chatkeep histories are two sessions, so they compare their messages
instead, which the other tests do).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.upstream_tests import run_own_tests

pytest.importorskip("langchain_core")
pytest.importorskip("pytest_asyncio")
pytest.importorskip("syrupy")
pytest.importorskip("blockbuster")

HISTORY = "tests/unit_tests/runnables/test_history.py"
CHAT_HISTORY = "tests/unit_tests/chat_history/test_chat_history.py"

#: Tests left out, by file, each for what it checks instead of a history's behaviour.
NOT_OURS = {
    CHAT_HISTORY: {
        "test_chat_history_deprecated": "the docstrings of LangChain's own classes",
        "test_add_message_implementation_only": "the base class with a sample subclass",
        "test_bulk_message_implementation_only": "the base class with a sample subclass",
        "test_async_interface": "the base class with a sample subclass",
    },
    HISTORY: {
        "test_input_messages": "history objects compared with ==",
        "test_input_messages_async": "history objects compared with ==",
        "test_using_custom_config_specs": "history objects compared with ==",
        "test_using_custom_config_specs_async": "history objects compared with ==",
    },
}


def test_langchains_own_history_tests_pass_on_chatkeep(tmp_path: Path) -> None:
    files = [HISTORY, CHAT_HISTORY]
    passed, out = run_own_tests("langchain-core", "langchain_swap", files, NOT_OURS, tmp_path)
    assert (
        "InMemoryChatMessageHistory is ChatkeepChatMessageHistory in"
        " tests.unit_tests.chat_history.test_chat_history, tests.unit_tests.runnables.test_history"
        in out
    )
    assert passed >= 15, out[-2000:]
