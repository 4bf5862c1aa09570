"""Panel failure paths and small things a chat UI gets right (SPEC §11, third edition), in
Chromium: a Retry that answers the question takes the kept draft away (Enter cannot ask it a
second time), the request preview shows no stray "null", Save works on an unsaved conversation,
and hints name the panel's actions rather than terminal commands."""

from __future__ import annotations

from panel_helpers import expected_console_errors, open_panel, use_provider

from factories import assistant, user
from support.provider_server import Close, Text, unauthorized


def test_retry_then_enter_asks_the_question_once_per_answer(
    page, live_server, pstore, provider_server
):
    """A failed question answered with Retry, then Enter: no second paid answer, one bubble
    per send."""
    use_provider(pstore, provider_server)
    provider_server.queue(unauthorized(), Text("the answer"), Text("a second paid answer"))
    open_panel(page, live_server)
    page.fill("#message", "my question")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.user.failed .bubble-error")
    assert page.input_value("#message") == "my question"  # the draft is kept while it failed
    page.click(".bubble-error .retry")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('the answer')")
    assert page.input_value("#message") == ""
    page.press("#message", "Enter")
    page.wait_for_timeout(500)
    assert page.locator(".bubble.user").count() == 1
    assert page.locator(".bubble.assistant").count() == 1
    assert len(provider_server.requests) == 2  # the refused attempt and the one answer
    assert [(e["role"], e["content"]) for e in pstore.history.read()] == [
        ("user", "my question"),
        ("assistant", "the answer"),
    ]
    expected_console_errors(page, "status of")


def test_request_preview_shows_no_stray_null(page, live_server, pstore, provider_server):
    """The request preview of a draft names no "null" or "undefined" where a value is missing."""
    use_provider(pstore, provider_server)
    pstore.history.append(user("first question"))
    pstore.history.append(assistant("first answer"))
    open_panel(page, live_server)
    page.fill("#message", "next question")
    page.click("#open-preview")
    body = page.locator("#preview-body")
    body.locator(".preview-messages").wait_for()
    text = body.inner_text()
    assert "null" not in text and "undefined" not in text
    assert "next question" in text


def test_save_in_the_drawer_saves_an_unsaved_conversation(page, live_server, pstore):
    """The drawer's highlighted Save works before any session exists: it makes the first one."""
    pstore.history.append(user("notes about lamps"))
    pstore.history.append(assistant("Lamps are nice."))
    open_panel(page, live_server)
    page.click("#open-drawer")
    save = page.locator("#drawer-save")
    assert save.is_enabled()
    save.click()
    page.wait_for_selector(".session .session-name:has-text('notes about lamps')")
    assert [s["name"] for s in pstore.sessions.list()] == ["notes about lamps"]
    assert page.locator("#session-name").inner_text() == "notes about lamps"
    save.click()  # a second Save updates the same session
    page.wait_for_selector(".notice:has-text('saved “notes about lamps”')")
    assert len(pstore.sessions.list()) == 1


def test_enter_in_a_settings_field_saves_and_keeps_the_dialog_open(page, live_server, pstore):
    """Enter in a Settings field saves what was typed (it used to close the dialog unsaved);
    Close still closes it."""
    open_panel(page, live_server)
    page.click("#open-settings")
    page.wait_for_selector("#settings-dialog[open]")
    page.fill("#set-replyLanguage", "French")
    page.press("#set-replyLanguage", "Enter")
    page.wait_for_selector(".notice:has-text('settings saved')")
    assert pstore.get_all()["replyLanguage"] == "French"
    assert page.locator("#settings-dialog").evaluate("d => d.open")
    page.fill("#set-fontSize", "18")
    page.press("#set-fontSize", "Enter")
    page.wait_for_function("() => getComputedStyle(document.body).fontSize === '18px'")
    assert pstore.get_all()["fontSize"] == 18
    assert page.locator("#settings-dialog").evaluate("d => d.open")
    page.click("#settings-dialog button[value='cancel']")
    page.wait_for_function("() => !document.getElementById('settings-dialog').open")


def test_hints_name_the_panels_actions_not_terminal_commands(
    page, live_server, pstore, provider_server
):
    """With no provider the toast points to Settings; a refused send and a cut-short reply
    point to Retry; none names a `chatkeep …` command."""
    open_panel(page, live_server)
    page.fill("#message", "hello?")
    page.press("#message", "Enter")
    toast = page.locator(".notice.error")
    toast.wait_for()
    assert "Settings" in toast.inner_text() and "chatkeep " not in toast.inner_text()
    expected_console_errors(page, "status of 4")
    use_provider(pstore, provider_server)
    provider_server.queue(unauthorized())
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    page.fill("#message", "hello again")
    page.press("#message", "Enter")
    error = page.locator(".bubble-error")
    error.wait_for()
    assert "Retry" in error.inner_text() and "chatkeep " not in error.inner_text()
    provider_server.queue(Close(after_chunks=2, text=Text("half an answer here")))
    page.click(".bubble-error .retry")
    page.wait_for_selector(".bubble.assistant.interrupted")
    notice = page.locator(".notice").filter(has_text="incomplete")
    notice.wait_for()
    assert "Retry" in notice.inner_text() and "chatkeep " not in notice.inner_text()
    expected_console_errors(page, "status of")


def _in_view(page, selector: str) -> bool:
    """Whether the element is inside the visible part of the conversation's scroll box."""
    return page.evaluate(
        """sel => { const n = document.querySelectorAll(sel); const node = n[n.length - 1];
                    const box = document.getElementById('conversation').getBoundingClientRect();
                    const r = node.getBoundingClientRect();
                    return r.bottom > box.top && r.top < box.bottom; }""",
        selector,
    )


def _long_conversation(store) -> None:
    for i in range(30):
        store.history.append(user(f"question {i} " + "words " * 30))
        store.history.append(assistant(f"answer {i} " + "more words " * 40))


def test_a_failed_send_is_shown_where_the_user_is_looking(
    page, live_server, pstore, provider_server
):
    """Scrolled up to read, the user sends; the provider refuses: the view follows to the
    error and the live region says the send failed."""
    use_provider(pstore, provider_server)
    pstore.local.set("maxHistoryEntries", 200)
    _long_conversation(pstore)
    provider_server.queue(unauthorized())
    page.set_viewport_size({"width": 400, "height": 700})
    open_panel(page, live_server)
    page.fill("#message", "a question asked while reading above")
    page.evaluate("() => { document.getElementById('conversation').scrollTop = 0; }")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble-error")
    page.wait_for_function("() => document.getElementById('turn-status').textContent !== ''")
    assert "failed" in page.locator("#turn-status").text_content()
    assert _in_view(page, ".bubble-error")
    assert page.locator("#jump-latest").is_hidden()
    expected_console_errors(page, "status of")


def test_a_stop_is_shown_where_the_user_is_looking(page, live_server, pstore, provider_server):
    """Stopped after scrolling up during a slow reply: the stopped reply is in view, and the
    live region says it was stopped."""
    use_provider(pstore, provider_server)
    pstore.local.set("maxHistoryEntries", 200)
    _long_conversation(pstore)
    words = [f"word{i} " for i in range(200)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.05))
    open_panel(page, live_server)
    page.fill("#message", "talk for a while")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant.streaming .md:not(.pending)")
    page.evaluate("() => { document.getElementById('conversation').scrollTop = 0; }")
    page.click("#stop")
    page.wait_for_selector(".bubble.assistant .meta:has-text('stopped')")
    page.wait_for_function("() => document.getElementById('turn-status').textContent !== ''")
    assert "stopped" in page.locator("#turn-status").text_content()
    assert _in_view(page, ".bubble.assistant")


def test_a_reasoning_model_shows_thinking_then_the_answer_with_its_reasoning_folded(
    page, live_server, pstore, provider_server
):
    """While the model reasons the pending reply says it is thinking; once it lands the answer
    is clean and the reasoning sits folded above it (never in the answer)."""
    use_provider(pstore, provider_server)
    thought = "step one, step two, and then the last step of all " * 6
    words = thought.split(" ")
    provider_server.queue(
        Text(
            "The answer is 42.",
            reasoning=thought,
            reasoning_chunks=[w + " " for w in words],
            reasoning_as="reasoning_content",
            delay=0.03,
        )
    )
    open_panel(page, live_server)
    page.fill("#message", "think hard")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant.streaming .md:has-text('thinking…')")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('The answer is 42.')")
    bubble = page.locator(".bubble.assistant")
    assert bubble.locator(".md").inner_text().strip() == "The answer is 42."
    folded = bubble.locator("details.reasoning")
    assert folded.get_attribute("open") is None
    assert folded.locator(".aside-text").text_content().strip() == thought.strip()
    stored = pstore.history.read()[-1]
    assert (
        stored["content"] == "The answer is 42." and stored["reasoning"].strip() == thought.strip()
    )


def test_regenerate_on_an_earlier_reply_asks_its_question_again(
    page, live_server, pstore, provider_server
):
    """Every reply offers Regenerate (SPEC §3.5): on an earlier one it asks that question again;
    the reply and the turns after it are replaced and kept in the archive."""
    use_provider(pstore, provider_server)
    for e in (user("first question"), assistant("first answer")):
        pstore.history.append(e)
    for e in (user("second question"), assistant("second answer")):
        pstore.history.append(e)
    provider_server.queue(Text("a new first answer"))
    open_panel(page, live_server)
    earlier = page.locator(".bubble.assistant").first
    assert earlier.locator("button.regenerate-here").inner_text() == "Regenerate"
    assert page.locator("button.regenerate").count() == 1  # the last reply's own
    earlier.locator("button.regenerate-here").click()
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('a new first answer')")
    assert page.locator(".bubble.user").count() == 1
    assert [(e["role"], e["content"]) for e in pstore.history.read()] == [
        ("user", "first question"),
        ("assistant", "a new first answer"),
    ]
    kept = " ".join(str(e.get("content")) for e in pstore.history.archived())
    assert "second question" in kept and "second answer" in kept and "first answer" in kept
    assert provider_server.requests[-1].body["messages"][-1]["content"] == "first question"
