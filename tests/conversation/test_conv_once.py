"""A send does its work once (ARCHITECTURE "Each thing done once"), counted at the backend's
execute seam with ``store.trace()`` on SQLite and PostgreSQL: at most four transactions, the
live rows read once, no pixel decoded or hashed again to stamp or to remember the request."""

from __future__ import annotations

import pytest
from conv_helpers import use_provider

from factories import assistant, image_entry, png_data_url, user
from support.provider_server import Text


def _reads_live_rows(sql: str) -> bool:
    """The one statement that reads every live row (their texts joined, counted)."""
    return sql.startswith("SELECT count(*)") and "FROM ck_history" in sql


SEND_TRANSACTIONS = 4


def _fill(store, n: int = 20) -> str:
    store.local.set({"maxHistoryEntries": 1000, "maxHistoryChars": 10_000_000})
    for i in range(n):
        store.history.append(user(f"question {i}"))
        store.history.append(assistant(f"answer {i}"))
    url = png_data_url(64, 48, noise=True)
    store.history.append(image_entry("a figure", url))
    return url


@pytest.mark.parametrize("style", ["chat", "anthropic", "responses"])
def test_a_plain_send_takes_at_most_four_transactions(store, provider_server, style):
    """One send of a 41-entry conversation: ≤ 4 transactions (one read, the question, the
    landing), the live rows read once, and the figures of the request kept without its
    image: no blob row written, none read but the history's own."""
    use_provider(store, provider_server, style=style)
    _fill(store)
    store.chat.send("warm up")  # the first turn stamps the figure and keeps a request print
    provider_server.queue(Text("fine"))
    with store.trace() as t:
        reply = store.chat.send("and now?")
    assert reply.text == "fine" and reply.landed == "live"
    assert len(t.transactions) <= SEND_TRANSACTIONS, t.transactions
    assert t.transactions.count("read") + t.transactions.count("autocommit") == 1
    assert sum(_reads_live_rows(q) for q in t.statements) == 1, t.statements
    assert not any(q.startswith("INSERT INTO ck_blobs") for q in t.statements)
    assert sum("FROM ck_blobs" in q for q in t.statements) <= 1, [
        q for q in t.statements if "blob" in q
    ]
    assert [e["role"] for e in store.history.read()[-2:]] == ["user", "assistant"]


def test_a_send_with_a_new_image_stamps_it_without_reading_pixels(store, provider_server):
    """A send carrying a pasted image lands in ≤ 4 transactions and its seen stamp rewrites the
    row's stored text: no blob is read after the question is stored."""
    use_provider(store, provider_server)
    _fill(store, 5)
    url = png_data_url(30, 20, noise=True)
    with store.trace() as t:
        store.chat.send("what is this?", images=[url])
    assert len(t.transactions) <= SEND_TRANSACTIONS, t.transactions
    after_question = t.statements[t.statements.index("COMMIT", t.statements.index("COMMIT") + 1) :]
    assert not any(q.startswith("SELECT") and "FROM ck_blobs" in q for q in after_question)
    stored = store.history.read()
    assert stored[-2]["imagesSeen"] is True and stored[-2]["content"][1]["image_url"]["url"] == url


def test_a_history_moved_since_the_prepare_is_read_again(store, provider_server):
    """A write between prepare and run (another window) is not lost: the turn plans again from
    the history as it is now, and the request carries the new entry."""
    use_provider(store, provider_server)
    store.history.append(user("first"))
    store.history.append(assistant("one"))
    turn = store.chat.prepare_send("second")
    store.history.append(
        user("[Page context attached by chatkeep]\nURL: https://x.test\n---\n\nhi")
    )
    store.chat.run(turn)
    sent = provider_server.requests[-1].body["messages"]
    assert any("https://x.test" in str(m["content"]) for m in sent)
    roles = [e["role"] for e in store.history.read()]
    assert roles == ["user", "assistant", "user", "user", "assistant"]


def test_the_prefix_figures_need_no_stored_body(store, provider_server):
    """The second turn's prefix figures equal those computed against the full previous body
    (each body as the preview shows it before the send), from a print that keeps no image:
    the stored value is far smaller than the body."""
    import json

    from chatkeep import preview_request
    from chatkeep.rules.accounting import request_stats

    use_provider(store, provider_server)
    url = png_data_url(200, 150, noise=True)
    store.history.append(image_entry("look", url))
    store.history.append(assistant("a figure"))
    first_text = "tell me " + "y" * 2000
    first = preview_request(store, first_text)["body"]
    store.chat.send(first_text)
    kept = json.dumps(store.local.get("lastRequest"))  # the first request carried the image
    assert url.split(",", 1)[1][:2000] not in kept and len(kept) < len(json.dumps(first)) / 4
    second = preview_request(store, "and?")["body"]
    reply = store.chat.send("and?")
    assert reply.stats == request_stats(second, first)
    assert reply.stats["prefixBytes"] > 0
