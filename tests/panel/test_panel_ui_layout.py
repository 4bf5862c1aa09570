"""Layout, theme, scrolling and keyboard in the browser: a 400-px side panel without sideways
scrolling and a centred column at 1400 px, light/dark/system themes, following the stream only
at the bottom, opening at the last message, every control reachable, dialogs as modals, only
the streaming reply live for screen readers."""

from __future__ import annotations

import pytest
from panel_helpers import open_panel, use_provider

from factories import assistant, attachment, image_entry, png_data_url, user
from support.provider_server import Text

SIZES = [(400, "light"), (400, "dark"), (1400, "light"), (1400, "dark")]

NO_SIDEWAYS = """() => [document.documentElement, document.getElementById('conversation'),
    ...document.querySelectorAll('dialog[open]')].every(n => n.scrollWidth <= n.clientWidth)"""


def _wide_conversation(store):
    store.history.append(
        attachment(
            "body", title="A page with a long address", url="https://example.com/" + "x" * 300
        )
    )
    store.history.append(image_entry("look " + "y" * 200, png_data_url(900, 300)))
    code = "```python\n" + "value = " + "1 + " * 120 + "1\n```"
    table = "|" + "|".join(f"column {i}" for i in range(30)) + "|\n|" + "-|" * 30
    store.history.append(assistant(f"{code}\n\n{table}\n\nhttps://example.com/{'z' * 200}"))


@pytest.mark.parametrize(("width", "theme"), SIZES)
def test_no_sideways_scroll_and_compact_chrome(make_page, live_server, pstore, width, theme):
    """Long URLs, wide code, tables and images never widen the page; header and composer stay
    compact (the header on one row, two in a narrow side panel); the open Settings and preview dialogs fit the width too."""
    _wide_conversation(pstore)
    page = make_page(width=width, theme=theme, height=800)
    open_panel(page, live_server)
    assert page.evaluate(NO_SIDEWAYS)
    header = page.locator("#topbar").bounding_box()
    composer = page.locator("#composer").bounding_box()
    # one row of icon buttons; in a narrow side panel the model picker takes a second row so
    # that neither it nor the session name is cut short
    assert header["height"] < (56 if width > 560 else 90)
    assert composer["height"] < 110  # a compact composer leaves the reading room
    page.click("#open-settings")
    page.wait_for_selector("#settings-dialog[open]")
    assert page.evaluate(NO_SIDEWAYS)
    box = page.locator("#settings-dialog").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    page.keyboard.press("Escape")
    page.click("#open-preview")
    page.wait_for_selector("#preview-dialog[open]")
    assert page.evaluate(NO_SIDEWAYS)


def test_wide_screen_has_a_centred_reading_column(page, live_server, pstore):
    """At 1400 px the conversation is a centred column of readable width."""
    pstore.history.append(user("hello"))
    pstore.history.append(assistant("A reply. " * 60))
    open_panel(page, live_server)
    box = page.locator("#thread").bounding_box()
    assert box["width"] <= 820
    assert abs((box["x"] + box["width"] / 2) - 700) < 20


def test_every_button_has_an_accessible_name(page, live_server, pstore):
    """Icon buttons carry labels for screen readers."""
    pstore.history.append(user("hello"))
    pstore.history.append(assistant("```js\nx()\n```"))
    open_panel(page, live_server)
    nameless = page.evaluate(
        """() => [...document.querySelectorAll('button, select, input, textarea')]
            .filter(b => !(b.getAttribute('aria-label') || b.textContent.trim() || b.labels?.length
                           || b.getAttribute('aria-hidden') === 'true'))
            .map(b => b.outerHTML.slice(0, 80))"""
    )
    assert nameless == []


def test_theme_toggle_cycles_system_light_dark_and_is_kept(make_page, live_server):
    """The theme button goes system → light → dark, colours follow, the choice survives reload."""
    page = make_page(theme="light")
    open_panel(page, live_server)
    bg = "() => getComputedStyle(document.body).backgroundColor"
    light = page.evaluate(bg)
    assert page.evaluate("document.documentElement.dataset.themeMode") == "system"
    page.click("#theme-toggle")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    page.click("#theme-toggle")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.evaluate(bg) != light
    assert "dark" in page.get_attribute("#theme-toggle", "aria-label")
    open_panel(page, live_server)
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.click("#theme-toggle")
    assert page.evaluate("document.documentElement.dataset.themeMode") == "system"
    assert page.evaluate(bg) == light


def test_dark_system_preference_gives_dark_colours(make_page, live_server):
    """With no choice made the page follows the OS's dark preference."""
    page = make_page(theme="dark")
    open_panel(page, live_server)
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(20, 23, 28)"


@pytest.mark.parametrize("width", [400, 1400])
def test_stream_is_followed_only_while_at_the_bottom(
    make_page, live_server, pstore, provider_server, width
):
    """Scrolling up during a reply stays put; the jump button brings back the latest."""
    for i in range(15):
        pstore.history.append(user(f"question {i}"))
        pstore.history.append(assistant(f"answer {i}\n\n" + "line\n\n" * 6))
    use_provider(pstore, provider_server)
    lines = [f"streamed line {i}\n\n" for i in range(60)]
    provider_server.queue(Text("".join(lines), chunks=lines, delay=0.05))
    page = make_page(width=width)
    open_panel(page, live_server)
    page.fill("#message", "write a lot")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant.streaming .md:not(.pending)")
    page.wait_for_timeout(300)
    at_bottom = """() => { const c = document.getElementById('conversation');
        return c.scrollHeight - c.scrollTop - c.clientHeight < 48; }"""
    assert page.evaluate(at_bottom)
    page.mouse.move(width / 2, 300)
    page.mouse.wheel(0, -1500)
    page.wait_for_timeout(200)
    held = page.evaluate("document.getElementById('conversation').scrollTop")
    page.wait_for_timeout(900)
    assert page.evaluate("document.getElementById('conversation').scrollTop") == held
    assert not page.evaluate(at_bottom)
    page.wait_for_selector("#jump-latest:not([hidden])")
    page.click("#jump-latest")
    assert page.evaluate(at_bottom)
    page.wait_for_selector("#stop", state="hidden")
    assert page.evaluate(at_bottom)


@pytest.mark.parametrize("width", [400, 1400])
def test_opens_at_the_last_message_after_images_load(make_page, live_server, pstore, width):
    """A conversation with many images opens scrolled to its end, and stays there once they load."""
    for i in range(6):
        pstore.history.append(image_entry(f"picture {i}", png_data_url(400, 300, noise=True)))
        pstore.history.append(assistant(f"answer {i}"))
    page = make_page(width=width)
    open_panel(page, live_server)
    page.wait_for_function("() => [...document.images].every(i => i.complete && i.naturalWidth)")
    page.wait_for_timeout(100)
    assert page.evaluate(
        """() => { const c = document.getElementById('conversation');
            return c.scrollHeight - c.scrollTop - c.clientHeight < 48; }"""
    )
    assert page.locator(".bubble.user img").first.get_attribute("width") == "400"
    assert page.evaluate("document.activeElement.id") == "message"


def test_tab_reaches_file_and_transcript_pickers(page, live_server):
    """The file and transcript pickers are buttons in the Tab order that open the file chooser."""
    open_panel(page, live_server)
    page.focus("#toggle-attach")
    page.keyboard.press("Enter")
    page.wait_for_selector("#attach-panel:not([hidden])")
    reached = {page.evaluate("document.activeElement.id")}
    for _ in range(8):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("document.activeElement.id"))
        if page.evaluate("document.activeElement.id") == "toggle-video":
            page.keyboard.press("Enter")
    assert {"attach-url", "pick-file", "toggle-video", "pick-transcript"} <= reached
    # Enter on each picker button opens its file input's chooser (recorded as the input's click).
    page.evaluate(
        """() => { window.__picked = [];
            for (const id of ['attach-file', 'video-file'])
              document.getElementById(id).addEventListener('click', e => {
                window.__picked.push(id); e.preventDefault(); }); }"""
    )
    page.focus("#pick-file")
    page.keyboard.press("Enter")
    page.focus("#pick-transcript")
    page.keyboard.press("Enter")
    assert page.evaluate("window.__picked") == ["attach-file", "video-file"]


def test_settings_and_preview_are_modals_opening_at_their_top(page, live_server, pstore):
    """Dialogs take the focus at their heading, open scrolled to the top, close on Esc, give the
    focus back; the preview shows no literal "null"."""
    for i in range(30):
        pstore.history.append(user(f"question {i}"))
        pstore.history.append(assistant(f"answer {i}"))
    open_panel(page, live_server)
    for opener, dialog in (
        ("#open-settings", "#settings-dialog"),
        ("#open-preview", "#preview-dialog"),
    ):
        page.focus(opener)
        page.keyboard.press("Enter")
        page.wait_for_selector(f"{dialog}[open]")
        assert page.evaluate("document.activeElement.tagName") == "H2"
        assert page.evaluate(f"document.querySelector('{dialog}').scrollTop") == 0
        for _ in range(6):
            page.keyboard.press("Shift+Tab")
            assert page.evaluate(
                f"document.querySelector('{dialog}').contains(document.activeElement)"
            )
        if dialog == "#preview-dialog":
            text = page.locator("#preview-body").inner_text()
            assert "null" not in text and "undefined" not in text
        page.keyboard.press("Escape")
        page.wait_for_selector(dialog, state="hidden")
        assert page.evaluate("'#' + document.activeElement.id") == opener


def test_only_the_streaming_reply_is_a_live_region(page, live_server, pstore, provider_server):
    """The conversation is not aria-live; the reply being written is, until it is done."""
    pstore.history.append(user("earlier"))
    pstore.history.append(assistant("earlier answer"))
    use_provider(pstore, provider_server)
    words = [f"w{i} " for i in range(30)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.05))
    open_panel(page, live_server)
    assert page.get_attribute("#conversation", "aria-live") is None
    page.fill("#message", "go")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant.streaming .md:not(.pending)")
    live = page.evaluate(
        "() => [...document.querySelectorAll('#conversation [aria-live]')]"
        ".map(n => n.closest('.bubble')?.className)"
    )
    # besides it, only the one-line outcome of a turn outside the conversation (SPEC §11)
    assert page.locator("[aria-live]:not(#conversation [aria-live])").evaluate_all(
        "nodes => nodes.map(n => n.id)"
    ) == ["turn-status"]
    assert live == ["bubble assistant streaming transient"]
    assert page.get_attribute(".streaming .md", "aria-busy") == "true"
    page.wait_for_selector("#stop", state="hidden")
    assert page.locator("#conversation [aria-live]").count() == 0
