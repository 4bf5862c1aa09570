"""What people expect from a chat panel (SPEC §11, third edition), in Chromium: a Settings error
sits next to what it is about and never under a "settings saved" toast; a trimmed attachment says
so on its chip; the header, tables and toasts hold at 360–400 px; Esc stops a reply; the draft
survives a reload; user messages can be copied; images open in a lightbox; long user messages
fold."""

from __future__ import annotations

from panel_helpers import expected_console_errors, open_panel, use_provider

from factories import attachment
from support.provider_server import Text, overflow

# -- Settings: the error beside its card or field, never under "settings saved" -----------------


def _visible_toasts(page) -> list[str]:
    return page.eval_on_selector_all(
        "#notices .notice", "ns => ns.filter(n => n.getClientRects().length).map(n => n.innerText)"
    )


def test_settings_error_never_under_a_saved_toast_and_sits_by_its_field(
    make_page, live_server, pstore
):
    """Save works ("settings saved"), then a bad font size is saved: the saved toast goes, the
    error is beside the Font size field, which has the focus and is marked invalid."""
    page = make_page(width=400)
    open_panel(page, live_server)
    page.click("#open-settings")
    page.fill("#set-systemPrompt", "be brief")
    page.click("#settings-save")
    page.wait_for_selector("#settings-dialog .notice:has-text('settings saved')")
    page.fill("#set-fontSize", "99")
    page.click("#settings-save")
    page.wait_for_selector("#settings-error:not([hidden])")
    assert not any("saved" in t for t in _visible_toasts(page))
    label = page.locator("label:has(#set-fontSize)")
    note = page.locator("#settings-dialog .field-error")
    assert note.count() == 1
    assert "fontSize" in note.inner_text()
    assert label.evaluate("l => l.nextElementSibling.classList.contains('field-error')")
    assert page.evaluate("() => document.activeElement.id") == "set-fontSize"
    assert page.get_attribute("#set-fontSize", "aria-invalid") == "true"
    assert pstore.get_all()["fontSize"] == 14
    expected_console_errors(page, "status of 400")


def test_a_bad_provider_card_keeps_its_input_and_shows_the_error_inside_it(
    make_page, live_server, pstore
):
    """Two new cards, the second one bad: the first is saved, the second stays as typed with the
    error inside it and the focus on its Base URL; no "settings saved"."""
    page = make_page(width=400)
    open_panel(page, live_server)
    page.click("#open-settings")
    page.click("#add-provider")
    good = page.locator(".provider-card").last
    good.locator(".p-name").fill("good")
    good.locator(".p-baseUrl").fill("http://127.0.0.1:9/v1")
    good.locator(".p-model").fill("m1")
    page.click("#add-provider")
    bad = page.locator(".provider-card").last
    bad.locator(".p-name").fill("bad")
    bad.locator(".p-baseUrl").fill("not a url")
    bad.locator(".p-model").fill("m2")
    page.click("#settings-save")
    page.wait_for_selector("#settings-error:not([hidden])")
    assert sorted(pstore.get_all()["providers"]) == ["good"]
    cards = page.locator(".provider-card")
    assert cards.count() == 2
    bad = cards.last
    assert bad.locator(".p-name").input_value() == "bad"
    assert bad.locator(".p-baseUrl").input_value() == "not a url"
    assert "baseUrl" in bad.locator(".field-error").inner_text()
    assert page.evaluate("() => document.activeElement.classList.contains('p-baseUrl')")
    assert bad.locator(".p-baseUrl").get_attribute("aria-invalid") == "true"
    assert not any("saved" in t for t in _visible_toasts(page))
    assert page.locator("#set-activeProvider option[value='good']").count() == 1
    bad.locator(".p-baseUrl").fill("http://127.0.0.1:9/v2")
    page.click("#settings-save")
    page.wait_for_selector("#settings-dialog .notice:has-text('settings saved')")
    assert page.locator(".field-error").count() == 0
    assert sorted(pstore.get_all()["providers"]) == ["bad", "good"]
    expected_console_errors(page, "status of 400")


# -- a trimmed attachment says so on its chip ----------------------------------------------------


def test_an_attachment_trimmed_by_a_rescue_says_so_on_its_chip(
    page, live_server, pstore, provider_server
):
    """The provider answers "context too long" once: the rescue trims the big page and asks
    again; the page's chip then reads "trimmed" with the original and the kept size, and the
    whole text is still in the store."""
    use_provider(pstore, provider_server)
    body = "A long page about tides. " * 1300
    page_entry = attachment(body, title="Tides")
    pstore.history.append(page_entry)
    original_chars = len(page_entry["content"])
    provider_server.queue(overflow("openai_chat"), Text("rescued answer"))
    open_panel(page, live_server)
    assert page.locator(".chip .chip-trimmed").count() == 0
    page.fill("#message", "summarise the page")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('rescued answer')")
    chip = page.locator(".chip")
    chip.locator(".chip-trimmed").wait_for()
    assert chip.locator(".chip-trimmed").inner_text() == "trimmed"
    stored = pstore.history.read()[0]
    kept_chars = len(stored["content"])
    assert kept_chars < original_chars
    meta = chip.locator(".chip-meta").inner_text()
    assert f"{kept_chars:,} of {original_chars:,} chars kept" in meta
    assert pstore.local.get(f"attachOriginal_{page_entry['attachId']}") == page_entry
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator(".chip .chip-trimmed").count() == 1
