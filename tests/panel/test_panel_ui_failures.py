"""Failures in the browser: the draft stays, the error sits on the question with Retry (no second
bubble), a dropped stream keeps its partial reply, one toast at a time and never under a dialog's
backdrop. Real Chromium, real server, the loopback provider server speaking the wire protocol."""

from __future__ import annotations

import pytest
from panel_helpers import expected_console_errors, open_panel, use_provider

from support.provider_server import Close, Drop, Text, unauthorized

WIDTHS = [400, 1400]


@pytest.mark.parametrize("width", WIDTHS)
def test_failed_send_keeps_draft_error_on_bubble_and_retry_answers_in_place(
    make_page, live_server, pstore, provider_server, width
):
    """A provider refusal keeps the draft, shows the error on the question, Retry answers it."""
    use_provider(pstore, provider_server)
    provider_server.queue(unauthorized(), Text("the answer after retry"))
    page = make_page(width=width)
    open_panel(page, live_server)
    page.fill("#message", "my question")
    page.press("#message", "Enter")
    error = page.locator(".bubble.user.failed .bubble-error")
    error.wait_for()
    assert page.input_value("#message") == "my question"
    assert page.locator(".bubble.user").count() == 1
    assert page.locator(".bubble.assistant").count() == 0
    assert error.locator(".msg").inner_text()
    assert [e["role"] for e in pstore.history.read()] == ["user"]
    page.click(".bubble-error .retry")
    page.wait_for_selector(
        ".bubble.assistant:not(.streaming) .md:has-text('the answer after retry')"
    )
    assert page.locator(".bubble.user").count() == 1
    assert page.locator(".bubble-error").count() == 0
    stored = pstore.history.read()
    assert [(e["role"], e["content"]) for e in stored] == [
        ("user", "my question"),
        ("assistant", "the answer after retry"),
    ]


def test_sending_the_kept_draft_again_reuses_the_failed_question(
    page, live_server, pstore, provider_server
):
    """Pressing Enter on the kept draft after a failure answers the same question, one bubble."""
    use_provider(pstore, provider_server)
    provider_server.queue(unauthorized(), Text("second try worked"))
    open_panel(page, live_server)
    page.fill("#message", "same text")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.user.failed")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('second try worked')")
    assert page.locator(".bubble.user").count() == 1
    assert [e["role"] for e in pstore.history.read()] == ["user", "assistant"]
    assert page.input_value("#message") == ""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_dropped_stream_keeps_partial_reply_marked_interrupted(
    make_page, live_server, pstore, provider_server, theme
):
    """The provider closing the connection mid-reply leaves the partial text on screen, marked."""
    use_provider(pstore, provider_server)
    chunks = ["Partial ", "answer ", "so ", "far ", "and more"]
    provider_server.queue(
        Drop(after_chunks=3, text=Text("".join(chunks), chunks=chunks, delay=0.05)),
        Text("complete answer"),
    )
    page = make_page(width=400, theme=theme)
    open_panel(page, live_server)
    page.fill("#message", "tell me")
    page.press("#message", "Enter")
    partial = page.locator(".bubble.assistant.partial")
    partial.wait_for()
    assert "Partial answer so" in partial.locator(".md").inner_text()
    assert "interrupted" in partial.locator(".meta").inner_text()
    assert page.locator(".bubble.user.failed .retry").count() == 1
    assert page.input_value("#message") == "tell me"
    page.click(".bubble-error .retry")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('complete answer')")
    assert page.locator(".bubble.assistant.partial").count() == 0
    assert page.locator(".bubble").count() == 2


def test_refused_send_takes_echo_back_restores_draft_one_toast(page, live_server, pstore):
    """With no provider the send is refused: no bubble stays, the draft is back, one toast."""
    open_panel(page, live_server)
    page.fill("#message", "hello?")
    page.press("#message", "Enter")
    page.wait_for_selector(".notice.error")
    assert page.input_value("#message") == "hello?"
    assert page.locator(".bubble").count() == 0
    assert pstore.history.read() == []
    page.click("#toggle-attach")
    page.fill("#attach-url", "ftp://nowhere.invalid/x")
    page.click("#attach-url-btn")
    page.wait_for_function(
        "() => document.querySelector('.notice .msg').textContent.length > 0"
        " && !document.querySelector('.notice .msg').textContent.includes('provider')"
    )
    page.press("#message", "Enter")
    page.wait_for_timeout(300)
    assert page.locator(".notice").count() == 1
    expected_console_errors(page, "status of 4")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_settings_error_and_toast_sit_inside_the_dialog_above_its_backdrop(
    make_page, live_server, pstore, theme
):
    """A bad card is reported inside Settings; a toast shown while it is open is on top."""
    page = make_page(width=400, theme=theme)
    open_panel(page, live_server)
    page.click("#open-settings")
    page.click("#add-provider")
    card = page.locator(".provider-card").last
    card.locator(".p-name").fill("broken")
    card.locator(".p-baseUrl").fill("not a url")
    card.locator(".p-model").fill("m")
    page.click("#settings-save")
    error = page.locator("#settings-dialog #settings-error")
    error.wait_for()
    assert error.inner_text()
    assert pstore.get_all()["providers"] == {}
    card.locator(".p-baseUrl").fill("http://127.0.0.1:9/v1")
    page.click("#settings-save")
    toast = page.locator("#settings-dialog #notices .notice")
    toast.wait_for()
    assert page.locator("#settings-error").is_hidden()
    on_top = toast.evaluate(
        """n => { const r = n.getBoundingClientRect();
                  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
                  return n.contains(hit); }"""
    )
    assert on_top
    assert page.locator("#set-activeProvider").input_value() == "broken"
    assert pstore.get_all()["activeProvider"] == "broken"
    expected_console_errors(page, "status of 400")


@pytest.mark.parametrize("width", WIDTHS)
def test_cut_short_reply_is_marked_interrupted_and_offers_retry_not_regenerate(
    make_page, live_server, pstore, provider_server, width
):
    """A stream that ends cleanly without its end marker is shown cut off, with Retry; Retry
    answers the same question in place (one question bubble, one reply)."""
    use_provider(pstore, provider_server)
    provider_server.queue(
        Close(after_chunks=3, text=Text("alpha beta gamma delta epsilon")),
        Text("the whole answer"),
    )
    page = make_page(width=width)
    open_panel(page, live_server)
    page.fill("#message", "tell me everything")
    page.press("#message", "Enter")
    cut = page.locator(".bubble.assistant.interrupted:not(.streaming)")
    cut.wait_for()
    assert "alpha beta gamma" in cut.locator(".md").inner_text()
    assert "cut off" in cut.locator(".meta").inner_text()
    assert "stopped" not in cut.locator(".meta").inner_text()
    assert cut.locator("button.regenerate").inner_text() == "Retry"
    assert page.locator("button:text-is('Regenerate')").count() == 0
    assert page.locator(".notice").filter(has_text="incomplete").count() == 1
    stored = pstore.history.read()
    assert stored[-1]["interrupted"] is True
    cut.locator("button.regenerate").click()
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('the whole answer')")
    assert page.locator(".bubble.user").count() == 1
    assert page.locator(".bubble.assistant").count() == 1
    assert page.locator("button.regenerate").inner_text() == "Regenerate"
    assert [(e["role"], e["content"], e.get("interrupted")) for e in pstore.history.read()] == [
        ("user", "tell me everything", None),
        ("assistant", "the whole answer", None),
    ]
    assert [r.body["messages"][-1]["content"] for r in provider_server.requests] == [
        "tell me everything",
        "tell me everything",
    ]
