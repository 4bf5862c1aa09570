"""Sessions in the browser (SPEC §4.4, §11): Save writes back into the loaded session, Save as
new copies, switching writes the conversation back first, the archive is browsable, the header
names the session."""

from __future__ import annotations

import pytest
from panel_helpers import open_panel, use_provider

from factories import assistant, user
from support.provider_server import Text


def _names(store):
    return sorted(s["name"] for s in store.sessions.list())


@pytest.mark.parametrize("width", [400, 1400])
def test_save_updates_the_loaded_session_and_save_as_new_copies(
    make_page, live_server, pstore, width
):
    """Save twice keeps one session holding the live history; Save as new adds one copy."""
    pstore.history.append(user("plan the trip"))
    pstore.history.append(assistant("Sure."))
    row = pstore.sessions.save("Trip")
    pstore.history.append(user("and the hotel?"))
    page = make_page(width=width)
    open_panel(page, live_server)
    assert page.locator("#session-name").inner_text() == "Trip"
    page.click("#open-drawer")
    page.wait_for_selector(".session.active")
    page.click("#drawer-save")
    page.wait_for_selector(".notice:has-text('saved “Trip”')")
    page.click("#drawer-save")
    page.wait_for_timeout(200)
    assert _names(pstore) == ["Trip"]
    body = pstore.sessions.get(row["id"])["history"]
    assert [e["content"] for e in body] == ["plan the trip", "Sure.", "and the hotel?"]
    page.click("#drawer-save-new")
    page.wait_for_function("() => document.querySelectorAll('.session').length === 2")
    assert _names(pstore) == ["Trip", "plan the trip"]
    assert page.locator("#session-name").inner_text() == "plan the trip"
    assert page.locator(".session.active .session-name").inner_text() == "plan the trip"


def test_switching_sessions_writes_the_conversation_back_first(page, live_server, pstore):
    """Loading a session over an unsaved conversation saves that conversation; nothing is lost."""
    pstore.history.append(user("older topic"))
    pstore.sessions.save("Older")
    pstore.history.clear()
    pstore.history.append(user("unsaved thoughts about lamps"))
    open_panel(page, live_server)
    assert page.locator("#session-name").inner_text() == "Unsaved conversation"
    page.click("#open-drawer")
    page.click(".session:has-text('Older') .session-open")
    page.wait_for_selector(".bubble.user .text:has-text('older topic')")
    page.wait_for_selector(".notice:has-text('saved as')")
    assert page.locator("#session-name").inner_text() == "Older"
    assert _names(pstore) == ["Older", "unsaved thoughts about lamps"]
    assert pstore.history.archived() == []
    page.click("#open-drawer")
    page.click(".session:has-text('lamps') .session-open")
    page.wait_for_selector(".bubble.user .text:has-text('unsaved thoughts about lamps')")
    assert page.locator("#session-name").inner_text() == "unsaved thoughts about lamps"


def test_drawer_is_a_modal_esc_closes_and_focus_returns(page, live_server, pstore):
    """The drawer takes the focus, keeps Tab inside, closes on Esc and gives the focus back."""
    pstore.history.append(user("hello"))
    pstore.sessions.save("One")
    open_panel(page, live_server)
    page.focus("#open-drawer")
    page.keyboard.press("Enter")
    page.wait_for_selector("#drawer[open]")
    assert page.evaluate("document.activeElement.id") == "session-search"
    for _ in range(12):
        page.keyboard.press("Tab")
        assert page.evaluate("document.getElementById('drawer').contains(document.activeElement)")
    page.keyboard.press("Escape")
    page.wait_for_selector("#drawer", state="hidden")
    assert page.evaluate("document.activeElement.id") == "open-drawer"


@pytest.mark.parametrize("width", [400, 1400])
def test_archive_is_browsable_in_pages_above_the_conversation(
    make_page, live_server, pstore, width
):
    """Entries the live window moved out show, read-only, page by page under "earlier"."""
    pstore.local.set("maxHistoryEntries", 4)
    for i in range(20):
        pstore.history.append(user(f"question {i}"))
        pstore.history.append(assistant(f"answer {i}"))
    archived = len(pstore.history.archived())
    assert archived == 36
    page = make_page(width=width)
    open_panel(page, live_server)
    assert page.locator("#messages .bubble").count() == 4
    button = page.locator("#load-earlier")
    assert "36" in button.inner_text()
    button.click()
    page.wait_for_function("() => document.querySelectorAll('#earlier-list .bubble').length === 30")
    assert "6" in button.inner_text()
    button.click()
    page.wait_for_function("() => document.querySelectorAll('#earlier-list .bubble').length === 36")
    assert button.is_hidden()
    first = page.locator("#earlier-list .bubble").first
    assert first.locator(".text").inner_text() == "question 0"
    assert page.locator("#earlier-list .edit, #earlier-list .regenerate").count() == 0
    assert page.locator("#earlier-list .bubble.archived").count() == 36


def test_a_loaded_session_longer_than_the_window_gets_its_new_turns_written_back(
    page, live_server, pstore, provider_server
):
    """Load a 12-entry session into a 4-entry window, ask one question, switch away: the session
    holds all 12 entries and the new turn (nothing went to the archive), and loading it again
    in the browser shows the new turn."""
    use_provider(pstore, provider_server)
    pstore.local.set("maxHistoryEntries", 100)
    long_body = [user(f"long q{i}") if i % 2 == 0 else assistant(f"long a{i}") for i in range(12)]
    for e in long_body:
        pstore.history.append(e)
    long = pstore.sessions.save("Long")
    pstore.history.clear()
    pstore.history.append(user("other topic"))
    pstore.sessions.save("Other")
    pstore.history.clear()
    pstore.local.set("maxHistoryEntries", 4)
    provider_server.queue(Text("the new answer"))
    open_panel(page, live_server)
    page.click("#open-drawer")
    page.click(".session:has-text('Long') .session-open")
    page.wait_for_selector(".bubble.assistant .md:has-text('long a11')")
    assert page.locator("#session-name").inner_text() == "Long"
    page.fill("#message", "one more question")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('the new answer')")
    page.click("#open-drawer")
    page.click(".session:has-text('Other') .session-open")
    page.wait_for_selector(".bubble.user .text:has-text('other topic')")
    body = pstore.sessions.get(long["id"])["history"]
    assert [e["content"] for e in body] == [
        *(e["content"] for e in long_body),
        "one more question",
        "the new answer",
    ]
    assert _names(pstore) == ["Long", "Other"]
    page.click("#open-drawer")
    page.click(".session:has-text('Long') .session-open")
    page.wait_for_selector(".bubble.assistant .md:has-text('the new answer')")
    assert page.locator("#session-name").inner_text() == "Long"
