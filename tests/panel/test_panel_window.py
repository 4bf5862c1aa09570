"""The windowed conversation: with thousands of entries only the bubbles near the viewport are in
the DOM, the page first loads the history's tail and fetches earlier pages as they scroll into
view, the session's usage line still covers every reply, and turns, Edit, Regenerate, Retry,
the archive, the Latest button and the keyboard keep working. Real Chromium, real server, the
loopback provider server speaking the wire protocol."""

from __future__ import annotations

from typing import Any

import pytest
from panel_helpers import open_panel, use_provider

from factories import assistant, user
from support.provider_server import Text, unauthorized

ENTRIES = 2000
BOUND = 200  # bubble and chip nodes in the DOM, whatever the history's length


def fill(store: Any, n: int = ENTRIES, *, window: int = 5000) -> None:
    """``n`` entries (questions and replies with usage) written in one transaction."""
    store.local.set({"maxHistoryEntries": window, "maxHistoryChars": 50_000_000})
    entries = []
    for i in range(n // 2):
        entries.append(user(f"question {i}"))
        body = f"answer **{i}**\n\n- one\n- two" if i % 3 else f"answer {i}"
        entries.append(
            assistant(
                body,
                provider={"name": "p1" if i % 2 else "p2", "model": "m"},
                usage={"input": 10, "cachedRead": 0, "cacheWrite": 0, "output": 5},
            )
        )
    store.history.mutate(lambda _old: entries)


def nodes(page: Any) -> int:
    return page.locator("#messages .bubble, #messages .chip").count()


def in_view(page: Any, selector: str) -> bool:
    """Whether the element is drawn and within the conversation's visible area."""
    return page.evaluate(
        """(sel) => {
          const node = document.querySelector(sel);
          if (!node) return false;
          const box = document.getElementById('conversation').getBoundingClientRect();
          const r = node.getBoundingClientRect();
          return r.height > 0 && r.bottom > box.top && r.top < box.bottom;
        }""",
        selector,
    )


def scroll_to_top(page: Any) -> None:
    """Scroll to the top until the first entry is drawn (earlier pages load on the way)."""
    for _ in range(40):
        page.evaluate("document.getElementById('conversation').scrollTop = 0")
        page.wait_for_timeout(100)
        if in_view(page, '#messages [data-index="0"]'):
            return
    raise AssertionError("the first message never came into view")


# -- the API -----------------------------------------------------------------------------------


def test_state_and_history_answer_a_tail_a_range_and_usage_totals(client, pstore):
    """``/api/state?tail=k`` and ``/api/history?tail=k`` give the last k views with the length;
    ``from``/``to`` a range; ``usage`` sums every reply's usage per provider."""
    fill(pstore, 10)
    state = client.get("/api/state?tail=3").json()
    assert [v["index"] for v in state["history"]] == [7, 8, 9]
    assert (state["start"], state["length"]) == (7, 10)
    assert state["usage"] == [
        {
            "provider": {"name": "p2"},
            "usage": {"input": 30, "cachedRead": 0, "cacheWrite": 0, "output": 15},
        },
        {
            "provider": {"name": "p1"},
            "usage": {"input": 20, "cachedRead": 0, "cacheWrite": 0, "output": 10},
        },
    ]
    assert len(client.get("/api/state").json()["history"]) == 10
    page = client.get("/api/history?from=6&to=9").json()
    assert [v["text"] for v in page["history"]] == ["question 3", "answer 3", "question 4"]
    assert (page["start"], page["length"]) == (6, 10)
    tail = client.get("/api/history?tail=2").json()
    assert [v["index"] for v in tail["history"]] == [8, 9] and tail["start"] == 8
    assert client.get("/api/history?from=4&to=2").json()["history"] == []
    assert client.get("/api/history?to=x").status_code == 400
    assert client.get("/api/state?tail=-1").status_code == 400


def test_session_load_new_and_undo_answer_only_the_end_of_a_long_history(client, pstore):
    """Loading a 300-entry session, starting a new one and undoing an attachment answer the last
    60 views with where they start, the length and the usage totals — never the whole list."""
    fill(pstore, 300)
    row = pstore.sessions.save("Long")
    pstore.history.clear()
    body = client.post(f"/api/sessions/{row['id']}/load").json()
    assert (len(body["history"]), body["start"], body["length"]) == (60, 240, 300)
    assert body["history"][0]["index"] == 240 and body["history"][-2]["text"] == "question 149"
    assert sum(u["usage"]["output"] for u in body["usage"]) == 150 * 5
    pstore.history.append(
        {"role": "user", "content": "page text", "attachId": "a1", "attachment": {"title": "T"}}
    )
    assert len(pstore.history.read()) == 301
    undone = client.delete("/api/attachments/a1").json()
    assert (undone["removed"], len(undone["history"]), undone["length"]) == ("a1", 60, 300)
    fresh = client.post("/api/sessions/new").json()
    assert (fresh["history"], fresh["start"], fresh["length"], fresh["usage"]) == ([], 0, 0, [])


# -- the browser -------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [400, 1400])
def test_thousands_of_entries_draw_only_what_is_on_screen(make_page, live_server, pstore, width):
    """2,000 entries: few nodes, the last message in view and the composer focused; scrolling to
    the top fetches and shows the first message; the usage line counts every reply; Latest
    goes back to the end."""
    fill(pstore)
    page = make_page(width=width, height=800)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url.split("/", 3)[3]))
    open_panel(page, live_server)
    assert nodes(page) < BOUND
    assert in_view(page, f'#messages [data-index="{ENTRIES - 1}"]')
    assert page.locator(f'#messages [data-index="{ENTRIES - 1}"] .md').inner_text() == "answer 999"
    assert page.evaluate("document.activeElement.id") == "message"
    state = [r for r in requests if r.startswith("api/state")]
    assert state == ["api/state?tail=60"]
    # every reply's usage, not only the loaded ones: 1,000 × (10 in, 5 out)
    assert page.inner_text("#session-usage") == "Session: 10,000 in · 5,000 out"

    scroll_to_top(page)
    assert page.locator('#messages [data-index="0"] .text').inner_text() == "question 0"
    assert nodes(page) < BOUND
    assert any(r.startswith("api/history?from=0&to=") for r in requests)
    page.wait_for_selector("#jump-latest:not([hidden])")
    page.click("#jump-latest")
    page.wait_for_function(
        f"""() => {{
          const n = document.querySelector('#messages [data-index="{ENTRIES - 1}"]');
          const box = document.getElementById('conversation');
          return n && box.scrollHeight - box.scrollTop - box.clientHeight < 2;
        }}"""
    )
    assert in_view(page, f'#messages [data-index="{ENTRIES - 1}"]')
    assert page.evaluate("document.activeElement.id") == "message"
    assert nodes(page) < BOUND


def test_a_new_turn_appears_at_the_end_even_when_scrolled_up(
    make_page, live_server, pstore, provider_server
):
    """Sending from the top of a long conversation shows the question and its reply at the end,
    in view, and the DOM stays small."""
    fill(pstore)
    use_provider(pstore, provider_server)
    provider_server.queue(Text("the fresh answer"))
    page = make_page(width=400, height=800)
    open_panel(page, live_server)
    scroll_to_top(page)
    page.fill("#message", "one more question")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('the fresh answer')")
    assert page.locator(f'#messages [data-index="{ENTRIES}"] .text').inner_text() == (
        "one more question"
    )
    assert in_view(page, f'#messages [data-index="{ENTRIES + 1}"]')
    last = page.evaluate("[...document.querySelectorAll('#messages .bubble')].pop().dataset.index")
    assert last == str(ENTRIES + 1)
    assert page.locator(".bubble.assistant .regenerate").count() == 1
    assert nodes(page) < BOUND
    assert len(pstore.history.read()) == ENTRIES + 2


def test_edit_regenerate_and_retry_work_on_the_last_bubbles(
    make_page, live_server, pstore, provider_server
):
    """On a 2,000-entry conversation: Regenerate replaces the last reply, Edit & resend replaces
    the last turn, a failed send shows Retry on its question and Retry answers it in place."""
    fill(pstore)
    use_provider(pstore, provider_server)
    provider_server.queue(Text("regenerated answer"), Text("edited answer"))
    page = make_page(width=400, height=800)
    open_panel(page, live_server)

    page.click(".bubble.assistant .regenerate")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('regenerated answer')")
    stored = pstore.history.read()
    assert len(stored) == ENTRIES and stored[-1]["content"] == "regenerated answer"
    assert page.locator(".bubble.assistant .md:has-text('answer 999')").count() == 0

    page.locator(f'#messages [data-index="{ENTRIES - 2}"] .edit').click()
    page.fill(".edit-area", "question 999, edited")
    page.click(".edit-box .resend")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('edited answer')")
    stored = pstore.history.read()
    assert [e["content"] for e in stored[-2:]] == ["question 999, edited", "edited answer"]
    assert len(stored) == ENTRIES
    assert page.locator(".bubble.user .text:has-text('question 999, edited')").count() == 1

    provider_server.queue(unauthorized(), Text("answer after retry"))
    page.fill("#message", "a question that fails first")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.user.failed .bubble-error")
    assert in_view(page, ".bubble.user.failed .bubble-error")
    page.click(".bubble-error .retry")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('answer after retry')")
    assert page.locator(".bubble.user.failed").count() == 0
    assert page.locator(".bubble.user .text:has-text('a question that fails first')").count() == 1
    assert page.input_value("#message") == ""
    assert len(pstore.history.read()) == ENTRIES + 2
    assert nodes(page) < BOUND


def test_the_keyboard_walks_the_conversation_as_the_window_follows(make_page, live_server, pstore):
    """Shift+Tab from the composer reaches the last bubble's buttons, and keeps going up through
    bubbles drawn as the focus moves; the focused bubble is always in view."""
    fill(pstore)
    page = make_page(width=400, height=800)
    open_panel(page, live_server)
    focused = "document.activeElement.closest('#messages [data-index]')?.dataset.index ?? null"
    for _ in range(6):
        page.keyboard.press("Shift+Tab")
        if page.evaluate(focused) is not None:
            break
    assert int(page.evaluate(focused)) >= ENTRIES - 2
    seen = []
    for _ in range(240):  # each bubble has two or three buttons (Copy, Edit, …)
        page.keyboard.press("Shift+Tab")
        page.wait_for_timeout(20)  # a person's pace, still far faster than scrolling by hand
        index = page.evaluate(focused)
        assert index is not None, "the focus left the conversation"
        seen.append(int(index))
    page.wait_for_timeout(100)
    assert seen == sorted(seen, reverse=True)
    assert seen[-1] < ENTRIES - 100  # well past the first load's tail of 60 entries
    assert in_view(page, f'#messages [data-index="{seen[-1]}"]')
    assert nodes(page) < BOUND


def test_the_archive_still_opens_above_a_long_windowed_conversation(make_page, live_server, pstore):
    """With 300 live entries and 20 in the archive, the top of the windowed list shows
    "Show earlier messages", which loads the archive above the first live message."""
    fill(pstore, 320, window=300)
    pstore.history.append(user("the newest question"))
    assert pstore.history.archived_count() > 0
    page = make_page(width=400, height=800)
    open_panel(page, live_server)
    assert nodes(page) < BOUND
    scroll_to_top(page)
    button = page.locator("#load-earlier")
    assert button.is_visible()
    button.click()
    page.wait_for_selector("#earlier-list .bubble.archived")
    assert page.locator("#earlier-list .bubble").first.locator(".text").inner_text() == "question 0"
