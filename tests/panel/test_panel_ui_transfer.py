"""Export and import from the drawer, files dropped anywhere on the window, and prices on the
provider cards (SPEC §11). Real Chromium, real server, files made by the library itself."""

from __future__ import annotations

import json

from panel_helpers import open_panel

import chatkeep
from factories import assistant, png_data_url, user

DROP = """async ([name, type, text, selector]) => {
  const dt = new DataTransfer();
  const body = type.startsWith('image/')
    ? new Blob([Uint8Array.from(atob(text.split(',')[1]), (c) => c.charCodeAt(0))], {type})
    : new Blob([text], {type});
  dt.items.add(new File([body], name, {type}));
  const target = document.querySelector(selector);
  for (const kind of ['dragenter', 'dragover', 'drop']) {
    target.dispatchEvent(new DragEvent(kind, {dataTransfer: dt, bubbles: true, cancelable: true}));
  }
}"""


def test_export_downloads_the_library_export(page, live_server, pstore):
    """Download gives the whole profile as the library's exact JSON export, or the sessions as
    Markdown; both name the conversation's text."""
    pstore.history.append(user("a question worth keeping"))
    pstore.history.append(assistant("an answer worth keeping"))
    pstore.sessions.save("Kept session")
    open_panel(page, live_server)
    page.click("#open-drawer")
    page.wait_for_selector(".session")
    with page.expect_download() as got:
        page.click("#export-go")
    doc = json.loads(open(got.value.path(), encoding="utf-8").read())
    assert doc == json.loads(chatkeep.export_text(pstore, "json"))
    assert got.value.suggested_filename.endswith(".json")
    page.select_option("#export-format", "md")
    with page.expect_download() as got:
        page.click("#export-go")
    text = open(got.value.path(), encoding="utf-8").read()
    assert "a question worth keeping" in text and "an answer worth keeping" in text
    assert got.value.suggested_filename.endswith(".md")


def test_import_adds_the_file_s_conversations_as_sessions(page, live_server, pstore, tmp_path):
    """A session exported by another store, imported from the drawer, is in the drawer and the
    store; importing it again adds nothing."""
    with chatkeep.open(str(tmp_path / "other.db")) as other:
        other.history.append(user("imported question"))
        other.history.append(assistant("imported answer"))
        row = other.sessions.save("From elsewhere")
        path = tmp_path / "one-session.json"
        path.write_text(chatkeep.export_text(other, "json", row["id"]), encoding="utf-8")
    open_panel(page, live_server)
    page.click("#open-drawer")
    page.set_input_files("#import-file", str(path))
    page.wait_for_selector(".session:has-text('From elsewhere')")
    page.wait_for_selector(".notice:has-text('1 new saved session')")
    assert [r["name"] for r in pstore.sessions.list()] == ["From elsewhere"]
    page.set_input_files("#import-file", str(path))
    page.wait_for_selector(".notice:has-text('1 already there')")
    assert len(pstore.sessions.list()) == 1
    assert pstore.history.read() == []  # the live conversation is never touched


def test_files_dropped_anywhere_on_the_window_are_attached(page, live_server, pstore):
    """A text file dropped on the conversation (not the composer) becomes an attachment chip; an
    image dropped on the header waits in the composer for the next message."""
    pstore.history.append(user("hello"))
    pstore.history.append(assistant("hi"))
    open_panel(page, live_server)
    page.evaluate(
        DROP, ["notes.md", "text/markdown", "# Notes\n\nthe dropped body", "#conversation"]
    )
    page.wait_for_selector(".chip:has-text('notes.md')")
    assert "the dropped body" in pstore.history.read()[-1]["content"]
    page.evaluate(DROP, ["shot.png", "image/png", png_data_url(40, 30), "#topbar"])
    page.wait_for_selector("#pending-images .pending-image img")
    assert not page.evaluate("document.body.classList.contains('dropping')")


def test_provider_cards_show_and_save_their_prices(page, live_server, pstore):
    """A card's prices show on its card; changed there they are stored on the card, and the
    reply's cost follows them."""
    pstore.local.set(
        {
            "providers": {
                "paid": {
                    "style": "chat",
                    "baseUrl": "https://api.example.com/v1",
                    "model": "m",
                    "prices": {"input": 2.5, "output": 10},
                }
            },
            "activeProvider": "paid",
        }
    )
    reply = assistant("priced reply", provider={"name": "paid", "model": "m"})
    reply["usage"] = {"input": 1_000_000, "cachedRead": 0, "cacheWrite": 0, "output": 0}
    pstore.history.append(user("q"))
    pstore.history.append(reply)
    open_panel(page, live_server)
    assert "$2.500" in page.locator(".bubble.assistant .usage").inner_text()
    page.click("#open-settings")
    card = page.locator("#settings-dialog .provider-card").first
    assert card.locator(".p-price-input").input_value() == "2.5"
    assert card.locator(".p-price-output").input_value() == "10"
    card.locator(".p-price-input").fill("3")
    card.locator(".p-price-cachedRead").fill("0.3")
    page.click("#settings-save")
    page.wait_for_selector(".notice:has-text('settings saved')")
    prices = pstore.get_all()["providers"]["paid"]["prices"]
    assert prices == {"input": 3.0, "cachedRead": 0.3, "output": 10.0}
    page.keyboard.press("Escape")
    page.wait_for_selector(".bubble.assistant .usage:has-text('$3.000')")
