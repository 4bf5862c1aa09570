"""Earlier versions of an edited or regenerated turn (SPEC §3.5, §11): the question shows
‹ n/m ›, and ‹ opens the earlier versions read-only. Real Chromium, real server."""

from __future__ import annotations

from panel_helpers import open_panel, use_provider

from factories import assistant, user
from support.provider_server import Text


def test_regenerated_turn_shows_its_earlier_version_read_only(
    page, live_server, pstore, provider_server
):
    """After Regenerate the question reads 2/2; ‹ opens version 1 with the first answer,
    without edit or regenerate buttons; Close returns to the conversation unchanged."""
    use_provider(pstore, provider_server)
    pstore.history.append(user("what is a monad?"))
    pstore.history.append(assistant("the first answer"))
    provider_server.queue(Text("the second answer"))
    open_panel(page, live_server)
    assert page.locator(".versions").count() == 0
    page.click("button.regenerate")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('the second answer')")
    switcher = page.locator(".bubble.user .versions")
    switcher.wait_for()
    assert switcher.locator(".version-count").inner_text() == "2/2"
    switcher.locator(".version-prev").click()
    dialog = page.locator("#versions-dialog[open]")
    dialog.wait_for()
    assert "Version 1 of 2" in dialog.locator("#versions-title").inner_text()
    assert "the first answer" in dialog.locator("#versions-body").inner_text()
    assert "what is a monad?" in dialog.locator("#versions-body").inner_text()
    assert dialog.locator("button.edit, button.regenerate, button.regenerate-here").count() == 0
    assert dialog.locator("#versions-prev").is_disabled()
    dialog.locator("#versions-close").click()
    page.wait_for_selector("#versions-dialog", state="hidden")
    assert page.locator("#messages .bubble.assistant").count() == 1
    # the dialog's close event empties it (an event fired just after the dialog hides)
    page.wait_for_function("() => !document.querySelector('#versions-body .bubble')")
    assert [e["content"] for e in pstore.history.read()] == [
        "what is a monad?",
        "the second answer",
    ]
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector(".bubble.user .versions")  # read back from the library after a reload
