"""What people expect from a chat panel (SPEC §11, third edition), in Chromium: a Settings error
sits next to what it is about and never under a "settings saved" toast; a trimmed attachment says
so on its chip; the header, tables and toasts hold at 360–400 px; Esc stops a reply; the draft
survives a reload; user messages can be copied; images open in a lightbox; long user messages
fold."""

from __future__ import annotations

import pytest
from panel_helpers import expected_console_errors, open_panel, use_provider

from factories import assistant, attachment, image_entry, png_data_url, user
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
    # the rescue is said where the user is looking: the live region names it
    page.wait_for_function("() => document.getElementById('turn-status').textContent !== ''")
    assert "trimmed" in page.locator("#turn-status").text_content()
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


# -- 360–400 px: header, tables, toasts ------------------------------------------------------------

FITS_JS = """sel => { const n = document.querySelector(sel);
    return n.scrollWidth <= n.clientWidth + 1 && n.scrollHeight <= n.clientHeight + 1; }"""

# Whether the picker's chosen option is shown whole: its text width against the room inside the
# select (its width less padding, border and the arrow).
PICKER_FITS_JS = """() => { const s = document.getElementById('model-picker');
    const st = getComputedStyle(s);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
    const text = s.selectedOptions[0].textContent;
    const room = s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 24;
    return ctx.measureText(text).width <= room; }"""


def _overlap(page, a: str, b: str) -> bool:
    return page.evaluate(
        """([a, b]) => { const r = document.querySelector(a).getBoundingClientRect();
                         const s = document.querySelector(b).getBoundingClientRect();
                         return r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom; }""",
        [a, b],
    )


@pytest.mark.parametrize("width", [360, 400])
def test_narrow_header_shows_the_session_name_and_model_whole(
    make_page, live_server, pstore, provider_server, width
):
    """At 360 and 400 px neither "Unsaved conversation", a session's name, "No model — add one
    in Settings" nor "loop · loop-model" is cut short, and nothing scrolls sideways."""
    page = make_page(width=width)
    open_panel(page, live_server)
    assert page.inner_text("#session-name") == "Unsaved conversation"
    assert page.evaluate(FITS_JS, "#session-name")
    assert "No model" in page.evaluate(
        "() => document.getElementById('model-picker').selectedOptions[0].textContent"
    )
    assert page.evaluate(PICKER_FITS_JS)
    use_provider(pstore, provider_server)
    pstore.history.append(user("hello"))
    pstore.sessions.save("Weekend trip to the coast, with notes")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_function(
        "() => document.getElementById('session-name').textContent.startsWith('Weekend')"
    )
    assert page.evaluate(FITS_JS, "#session-name")
    assert page.evaluate(PICKER_FITS_JS)
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def test_a_narrow_table_scrolls_inside_the_reply_and_keeps_words_whole(
    make_page, live_server, pstore
):
    """A wide Markdown table at 360 px: no word is broken across lines; the table scrolls
    sideways inside its reply, the page does not."""
    rows = "\n".join(
        f"| item{i} | internationalisation | characteristically | incomprehensibilities |"
        for i in range(3)
    )
    table = "| name | first column | second column | third column |\n|---|---|---|---|\n" + rows
    pstore.history.append(user("a table please"))
    pstore.history.append(assistant(table))
    page = make_page(width=360)
    open_panel(page, live_server)
    wrap = page.locator(".bubble.assistant .table-wrap")
    wrap.wait_for()
    broken = page.evaluate(
        """() => { const out = [];
            for (const cell of document.querySelectorAll('.md td, .md th')) {
              const node = cell.firstChild; if (!node || node.nodeType !== 3) continue;
              const text = node.textContent; let at = 0;
              for (const word of text.split(' ')) {
                const range = document.createRange();
                range.setStart(node, at); range.setEnd(node, at + word.length);
                const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                if (word && lines.size > 1) out.push(word);
                at += word.length + 1;
              }
            }
            return out; }"""
    )
    assert broken == []
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    assert page.evaluate(
        "() => { const c = document.getElementById('conversation'); return c.scrollWidth <= c.clientWidth; }"
    )


@pytest.mark.parametrize("width", [360, 400])
def test_toasts_cover_neither_the_first_message_nor_the_drawers_close_button(
    make_page, live_server, pstore, width
):
    """A toast on the main view takes its own room above the conversation; one in the drawer
    sits above its heading: the first message and the drawer's close button stay uncovered."""
    pstore.history.append(user("the very first message"))
    pstore.history.append(assistant("a reply"))
    page = make_page(width=width)
    open_panel(page, live_server)
    page.click("#toggle-attach")
    page.fill("#attach-url", "ftp://nowhere.invalid/x")
    page.click("#attach-url-btn")
    page.wait_for_selector("#notices .notice")
    page.evaluate("() => { document.getElementById('conversation').scrollTop = 0; }")
    assert not _overlap(page, "#notices .notice", ".bubble.user")
    assert not _overlap(page, "#notices .notice", "#topbar")
    page.click("#notices .notice .close")
    page.click("#open-drawer")
    page.click("#drawer-save")  # a saved conversation: a toast in the drawer
    page.wait_for_selector("#drawer #notices .notice")
    assert not _overlap(page, "#drawer #notices .notice", "#close-drawer")
    assert page.evaluate(
        """() => { const b = document.getElementById('close-drawer').getBoundingClientRect();
                   const hit = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
                   return document.getElementById('close-drawer').contains(hit); }"""
    )
    expected_console_errors(page, "status of 4")


# -- Esc, the kept draft, copy, the lightbox, folding -------------------------------------------


def test_esc_stops_a_streaming_reply_like_the_stop_button(
    page, live_server, pstore, provider_server
):
    """Esc during a slow reply stops it: the reply is kept, marked "stopped", and the provider
    stream is cut well before its end."""
    use_provider(pstore, provider_server)
    words = [f"word{i} " for i in range(300)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.05))
    open_panel(page, live_server)
    page.fill("#message", "talk for a while")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant.streaming .md:not(.pending)")
    page.keyboard.press("Escape")
    page.wait_for_selector(".bubble.assistant .meta:has-text('stopped')")
    assert page.locator("#send").is_visible()
    reply = pstore.history.read()[-1]
    assert reply["role"] == "assistant" and reply.get("interrupted") is True
    assert len(reply["content"]) < len("".join(words))


def test_the_draft_survives_a_reload_and_goes_once_sent(page, live_server, pstore, provider_server):
    """A half-written message is back after a reload; once it is sent, a reload shows an empty
    composer. The draft belongs to this store: another store's panel does not show it."""
    use_provider(pstore, provider_server)
    provider_server.queue(Text("an answer"))
    open_panel(page, live_server)
    page.fill("#message", "a thought I have not finished\nsecond line")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.input_value("#message") == "a thought I have not finished\nsecond line"
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('an answer')")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.input_value("#message") == ""
    page.fill("#message", "kept for this store only")
    keys = page.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('chatkeep-draft:'))"
    )
    assert len(keys) == 1
    state = page.evaluate(
        "async () => (await fetch('/api/state', {headers: {'X-Chatkeep-Token': "
        "new URLSearchParams(location.search).get('token')}})).json()"
    )
    assert keys == [f"chatkeep-draft:{state['draftKey']}"]
    assert str(pstore.url) not in state["draftKey"]


def test_a_user_message_can_be_copied(page, live_server, pstore):
    """Copy on a user bubble puts its whole text on the clipboard."""
    text = "my question, with\ntwo lines"
    pstore.history.append(user(text))
    pstore.history.append(assistant("an answer"))
    open_panel(page, live_server)
    page.click(".bubble.user .copy")
    page.wait_for_selector(".bubble.user .copy:has-text('Copied')")
    assert page.evaluate("() => navigator.clipboard.readText()") == text


def test_an_image_opens_in_a_lightbox_and_focus_returns(page, live_server, pstore):
    """Clicking a sent image opens it in a modal lightbox (no new tab); Esc closes it and the
    focus goes back to the image; the Close button does the same."""
    pstore.history.append(image_entry("look at this", png_data_url(900, 600)))
    pstore.history.append(assistant("a picture"))
    open_panel(page, live_server)
    pages_before = len(page.context.pages)
    page.click(".bubble-images a")
    page.wait_for_selector("#lightbox[open]")
    assert len(page.context.pages) == pages_before
    page.wait_for_function("() => document.getElementById('lightbox-image').naturalWidth === 900")
    assert page.evaluate("() => document.activeElement.id") == "lightbox-close"
    page.keyboard.press("Escape")
    page.wait_for_selector("#lightbox:not([open])", state="attached")
    assert page.evaluate("() => document.activeElement.closest('.bubble-images') !== null")
    page.keyboard.press("Enter")  # the focused image link opens it again
    page.wait_for_selector("#lightbox[open]")
    page.click("#lightbox-close")
    page.wait_for_selector("#lightbox:not([open])", state="attached")
    assert page.evaluate("() => document.activeElement.closest('.bubble-images') !== null")
    assert len(page.context.pages) == pages_before


@pytest.mark.parametrize(
    "text",
    ["a long message " * 100, "\n".join(f"line {i}" for i in range(30))],
    ids=["chars", "lines"],
)
def test_a_long_user_message_is_folded_with_show_more(page, live_server, pstore, text):
    """Over ~1,200 characters or 20 lines a user message is folded; Show more unfolds it and
    Show less folds it back; a short one is not folded."""
    pstore.history.append(user("short question"))
    pstore.history.append(assistant("short answer"))
    pstore.history.append(user(text))
    pstore.history.append(assistant("an answer"))
    open_panel(page, live_server)
    short, long = page.locator(".bubble.user").nth(0), page.locator(".bubble.user").nth(1)
    assert short.locator(".fold-toggle").count() == 0
    body = long.locator(".text")
    toggle = long.locator(".fold-toggle")
    assert toggle.inner_text() == "Show more"
    assert toggle.get_attribute("aria-expanded") == "false"
    folded = body.evaluate("n => n.clientHeight")
    assert body.evaluate("n => n.scrollHeight > n.clientHeight")
    assert body.text_content() == text  # all of it is there, only folded
    toggle.click()
    assert toggle.inner_text() == "Show less"
    assert toggle.get_attribute("aria-expanded") == "true"
    assert body.evaluate("n => n.clientHeight") > folded
    assert body.evaluate("n => n.scrollHeight <= n.clientHeight + 1")
    toggle.click()
    assert body.evaluate("n => n.clientHeight") == folded
