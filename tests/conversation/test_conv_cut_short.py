"""A reply whose stream ends without the provider's end marker is kept as interrupted and the
user is told (SPEC §7.2), in every API style; a connection dropped mid-reply says so."""

from __future__ import annotations

import pytest
from conv_helpers import use_provider

from chatkeep.conversation.engine import CUT_SHORT_WARNING, RETRY_HINT
from chatkeep.errors import ProviderError
from support.provider_server import Close, Drop, Text

STYLES = ("chat", "responses", "anthropic")


@pytest.mark.parametrize("style", STYLES)
def test_clean_close_is_saved_interrupted_with_a_warning(
    style, sqlite_store, provider_server, sleeps
):
    """Three words then a clean close: the reply is interrupted, warned about, never complete."""
    use_provider(sqlite_store, provider_server, style=style)
    chat = sqlite_store.chat
    chat.sleep = sleeps
    provider_server.queue(Close(after_chunks=3, text=Text("alpha beta gamma delta epsilon")))
    notices: list[str] = []
    reply = chat.send("tell me", on_notice=notices.append)
    assert reply.interrupted is True and reply.text == "alpha beta gamma "
    assert CUT_SHORT_WARNING in reply.warnings and CUT_SHORT_WARNING in notices
    user, kept = sqlite_store.history.read()
    assert user["content"] == "tell me"
    assert kept["content"] == "alpha beta gamma " and kept["interrupted"] is True
    assert len(provider_server.requests) == 1


def test_drop_mid_reply_says_dropped_and_names_the_retry(lite_chat, provider_server):
    """A connection reset after some text: the error says the connection dropped mid-reply
    (not "could not reach … check the base URL"), the partial reply was kept, and how to retry."""
    provider_server.queue(Drop(after_chunks=2))
    with pytest.raises(ProviderError) as info:
        lite_chat.send("tell me")
    err = info.value
    assert "dropped in the middle of the reply" in err.message
    assert "could not reach" not in err.message and "base URL" not in (err.hint or "")
    assert "partial reply was kept" in err.hint and RETRY_HINT in err.hint
