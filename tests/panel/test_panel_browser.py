"""End to end in headless Chromium (Playwright) against the real server, store and provider
server: bubbles and chips, streamed send, stop, paste, drawer search, pills, settings, XSS."""

from __future__ import annotations

import base64
import re
from typing import Any

from panel_helpers import open_panel, use_provider

import chatkeep
from factories import assistant, attachment, image_entry, png_data_url, user
from support.provider_server import Text


def _open(pg: Any, server: Any) -> None:
    open_panel(pg, server)


def test_page_shows_bubbles_full_images_and_chip_with_undo(page, live_server, pstore):
    """User bubbles show the stored image at full size; attachments are chips with undo."""
    pic = png_data_url(300, 200, noise=True)
    note = attachment("body", title="Reference page", url="https://example.com/ref")
    pstore.history.append(note)
    pstore.history.append(image_entry("what is in this picture?", pic))
    pstore.history.append(assistant("A **noisy** picture."))
    _open(page, live_server)
    assert page.locator(".bubble").count() == 2
    assert page.locator(".chip").count() == 1
    assert page.locator(".chip .chip-title").inner_text() == "Reference page"
    img = page.locator(".bubble.user img")
    img.wait_for()
    page.wait_for_function("() => document.querySelector('.bubble.user img').naturalWidth > 0")
    assert img.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [300, 200]
    assert "/api/image/" in img.get_attribute("src")
    assert page.locator(".bubble.assistant strong").inner_text() == "noisy"
    page.click(".chip .chip-undo")
    page.wait_for_selector(".chip", state="detached")
    assert all(e.get("attachId") != note["attachId"] for e in pstore.history.read())


def test_send_streams_reply_from_provider(page, live_server, pstore, provider_server):
    """Typing and pressing Enter streams the provider's reply as Markdown and stores the turn."""
    use_provider(pstore, provider_server)
    chunks = ["Hello ", "**stream", "ed** ", "world", " — [see docs](https://example.com)"]
    provider_server.queue(Text("".join(chunks), chunks=chunks, delay=0.15))
    _open(page, live_server)
    page.fill("#message", "say hello")
    page.press("#message", "Enter")
    page.wait_for_selector("#stop:not([hidden])")
    page.wait_for_selector(".bubble.assistant.streaming .md:not(.pending)")
    page.wait_for_selector("#stop", state="hidden")
    page.wait_for_selector(".bubble.assistant:not(.streaming) strong")
    assert page.locator(".bubble.assistant strong").inner_text() == "streamed"
    link = page.locator(".bubble.assistant a")
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert page.locator(".bubble.user .text").inner_text() == "say hello"
    stored = pstore.history.read()
    assert [e["role"] for e in stored] == ["user", "assistant"]
    assert stored[1]["content"] == "".join(chunks)
    assert provider_server.requests[-1].body["messages"][-1]["content"] == "say hello"


def test_stop_button_keeps_partial_reply(page, live_server, pstore, provider_server):
    """Stop during a slow stream keeps the partial reply, marked stopped."""
    use_provider(pstore, provider_server)
    words = [f"word{i} " for i in range(100)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.1))
    _open(page, live_server)
    page.fill("#message", "talk for a while")
    page.click("#send")
    page.wait_for_selector(".bubble.assistant.streaming .md:not(.pending)")
    page.click("#stop")
    page.wait_for_selector(".bubble.assistant .meta:has-text('stopped')")
    stored = pstore.history.read()
    assert stored[-1].get("interrupted") is True
    assert len(stored[-1]["content"]) < len("".join(words))


def test_pasted_image_is_sent_and_shown(page, live_server, pstore, provider_server):
    """A pasted image shows as pending, goes with the message, and the bubble shows it."""
    use_provider(pstore, provider_server)
    provider_server.queue(Text("I see a square."))
    pic = png_data_url(50, 40)
    _open(page, live_server)
    page.evaluate(
        """b64 => {
            const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
            const dt = new DataTransfer();
            dt.items.add(new File([bytes], "shot.png", {type: "image/png"}));
            const ev = new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true});
            document.getElementById("message").dispatchEvent(ev);
        }""",
        pic.split(",", 1)[1],
    )
    page.wait_for_selector(".pending-image img")
    page.fill("#message", "what shape?")
    page.click("#send")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md p")
    stored = pstore.history.read()[0]
    urls = [p["image_url"]["url"] for p in stored["content"] if p["type"] == "image_url"]
    assert len(urls) == 1
    assert base64.b64decode(urls[0].split(",", 1)[1]) == base64.b64decode(pic.split(",", 1)[1])
    page.wait_for_function("() => document.querySelector('.bubble.user img').naturalWidth === 50")
    assert page.locator(".pending-image").count() == 0


def test_drawer_shows_more_sessions_page_by_page(page, live_server, pstore):
    """A drawer longer than one page shows the first page and a "Show more" button that
    appends the next; searching starts again from the first page."""
    n = chatkeep.DRAWER_PAGE + 3
    pstore.sessions.add_many(
        ({"id": f"{i:06x}", "name": f"talk {i}", "createdAt": 1_000 + i}, [user(f"tram {i}")])
        for i in range(n)
    )
    _open(page, live_server)
    page.click("#open-drawer")
    page.wait_for_function(f"() => document.querySelectorAll('.session').length === {n - 3}")
    more = page.locator("#session-more")
    assert more.is_visible()
    more.click()
    page.wait_for_function(f"() => document.querySelectorAll('.session').length === {n}")
    assert more.is_hidden()
    names = page.locator(".session .session-name").all_inner_texts()
    assert names == [f"talk {i}" for i in reversed(range(n))]
    page.fill("#session-search", "talk 1")
    page.wait_for_function("() => document.querySelectorAll('.session').length === 11")
    assert more.is_hidden()


def test_drawer_search_marks_load_and_two_step_delete(page, live_server, pstore):
    """The drawer searches names (marked) and content (badged), loads, and deletes in two steps."""
    pstore.history.append(user("Notes about the Lisbon tram"))
    pstore.sessions.save("Travel plans")
    pstore.history.clear()
    pstore.history.append(user("regex for the tram timetable"))
    pstore.sessions.save("Parser work")
    pstore.history.clear()
    _open(page, live_server)
    page.click("#open-drawer")
    page.wait_for_selector(".session")
    assert page.locator(".session").count() == 2
    page.fill("#session-search", "plans")
    page.wait_for_function("() => document.querySelectorAll('.session').length === 1")
    assert page.locator(".session mark").inner_text() == "plans"
    page.fill("#session-search", "tram")
    page.wait_for_function(
        "() => document.querySelectorAll('.session .content-match').length === 2"
    )
    page.fill("#session-search", "timetable")
    page.wait_for_function("() => document.querySelectorAll('.session').length === 1")
    page.click(".session .session-open")
    page.wait_for_selector(".bubble.user .text:has-text('regex for the tram timetable')")
    page.wait_for_selector("#drawer", state="hidden")  # loading closes the drawer
    page.click("#open-drawer")
    page.fill("#session-search", "")
    page.wait_for_function("() => document.querySelectorAll('.session').length === 2")
    delete = page.locator(".session:has-text('Travel plans') .session-delete")
    delete.click()
    assert delete.inner_text() == "Confirm delete"
    assert len(pstore.sessions.list()) == 2  # first click only arms it
    delete.click()
    page.wait_for_function("() => document.querySelectorAll('.session').length === 1")
    assert [s["name"] for s in pstore.sessions.list()] == ["Parser work"]


def test_timestamp_pill_opens_the_video_at_that_time(page, live_server, pstore):
    """A [mm:ss] pill in a reply about a video opens the video URL at that second."""
    video = {"platform": "youtube", "url": "https://www.youtube.com/watch?v=abc123"}
    pstore.history.append(attachment("[00:10] intro\n[01:23] result", title="Talk", videoSrc=video))
    pstore.history.append(user("where is the result?"))
    pstore.history.append(assistant("It is shown at [01:23]."))
    page.context.route(
        re.compile(r"https://www\.youtube\.com/.*"),
        lambda route: route.fulfill(status=200, content_type="text/html", body="<p>video</p>"),
    )
    _open(page, live_server)
    pill = page.locator(".bubble.assistant a.ts-pill")
    assert pill.inner_text() == "[01:23]"
    with page.expect_popup() as popup:
        pill.click()
    assert popup.value.url == "https://www.youtube.com/watch?v=abc123&t=83s"


def test_settings_save_panel_options(page, live_server, pstore):
    """Settings saved in the dialog reach the store and the page's font size."""
    _open(page, live_server)
    page.click("#open-settings")
    page.fill("#set-fontSize", "19")
    page.select_option("#set-sendShortcut", "Ctrl+Enter")
    page.uncheck("#set-thoughtAutoCollapse")
    page.fill("#set-systemPrompt", "Answer in one line.")
    page.click("#settings-save")
    page.wait_for_selector(".notice:has-text('settings saved')")
    settings = pstore.get_all()
    assert settings["fontSize"] == 19
    assert settings["sendShortcut"] == "Ctrl+Enter"
    assert settings["thoughtAutoCollapse"] is False
    assert settings["systemPrompt"] == "Answer in one line."
    size = page.evaluate("getComputedStyle(document.body).fontSize")
    assert size == "19px"


def test_stored_markup_is_shown_as_text_and_never_runs(page, live_server, pstore):
    """Script and onerror payloads in titles, pages, messages, replies and session names stay text."""
    s = "<script>window.__pwned=1</script>"
    i = '<img src=x onerror="window.__pwned=1">'
    pstore.history.append(attachment(f"page {i}", title=f"T {s}{i}", url="https://example.com/x"))
    pstore.history.append(user(f"Q {s}{i}"))
    pstore.history.append(assistant(f"A {s}{i}"))
    pstore.sessions.save(f"S {s}{i}")
    _open(page, live_server)
    page.click("#open-drawer")
    page.wait_for_selector(".session")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("#conversation script, #drawer script").count() == 0
    assert page.locator(".chip-title").inner_text() == f"T {s}{i}"
    assert page.locator(".bubble.user .text").inner_text() == f"Q {s}{i}"
    assert s in page.locator(".bubble.assistant .md").inner_text()
    assert page.locator(".session-name").inner_text() == f"S {s}{i}"


def test_page_without_token_shows_guidance(browser, live_server):
    """The bare address (no token) and a stale token get a readable HTML page, not raw JSON."""
    context = browser.new_context()
    try:
        pg = context.new_page()
        resp = pg.goto(live_server.url.split("?", 1)[0])
        assert resp.status == 401
        assert "text/html" in resp.headers["content-type"]
        assert pg.locator("h1").inner_text() == "This panel needs its launch address"
        assert "?token=" in pg.locator("main").inner_text()
        assert "{" not in pg.locator("body").inner_text()
        resp = pg.goto(live_server.url.split("?", 1)[0] + "?token=stale")
        assert resp.status == 403
        assert pg.locator("h1").inner_text() == "This address is from another launch"
    finally:
        context.close()


def test_edit_resend_and_regenerate_from_bubbles(page, live_server, pstore, provider_server):
    """Edit on a user bubble resends it in place; Regenerate replaces the last answer."""
    use_provider(pstore, provider_server)
    for e in (user("first question"), assistant("first answer")):
        pstore.history.append(e)
    provider_server.queue(Text("edited answer"), Text("regenerated answer"))
    _open(page, live_server)
    page.click(".bubble.user .edit")
    page.fill(".edit-area", "first question, edited")
    page.click(".edit-box .resend")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('edited answer')")
    assert page.locator(".bubble").count() == 2
    assert [e["content"] for e in pstore.history.read()] == [
        "first question, edited",
        "edited answer",
    ]
    page.click(".bubble.assistant .regenerate")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('regenerated answer')")
    assert page.locator(".bubble").count() == 2
    assert [e["content"] for e in pstore.history.read()] == [
        "first question, edited",
        "regenerated answer",
    ]


def test_file_attach_preview_and_new_session(page, live_server, pstore, tmp_path):
    """A picked file becomes a chip; the preview shows sizes; New session saves and clears."""
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nThe meeting moved to Thursday.\n", encoding="utf-8")
    pstore.history.append(user("hello"))
    _open(page, live_server)
    page.set_input_files("#attach-file", str(notes))
    page.wait_for_selector(".chip .chip-title:has-text('notes.md')")
    assert chatkeep.is_attachment(pstore.history.read()[-1])
    page.fill("#message", "draft text")
    page.click("#open-preview")
    page.wait_for_selector("#preview-dialog[open] .preview-stats")
    assert "no usable provider" in page.locator(".preview-provider").inner_text()
    last = page.locator(".preview-messages li").last.inner_text()
    assert "draft text" in last
    page.click("#preview-dialog button[value='close']")
    page.click("#new-session")
    page.wait_for_selector(".empty")
    assert pstore.history.read() == []
    assert [s["name"] for s in pstore.sessions.list()] == ["hello"]
