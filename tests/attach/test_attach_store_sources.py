"""Attaching into a real store (SQLite and PostgreSQL): entry shape per source, caps, undo."""

from __future__ import annotations

import base64
import io
import re

import pytest
from attach_pdfgen import figures_pdf
from PIL import Image

from chatkeep import PAGE_CONTEXT_PREFIX, build_page_context_text
from chatkeep.attach import extract_file
from chatkeep.attach.sources import Extracted
from chatkeep.attach.store_ops import (
    attach_file,
    attach_image,
    attach_source,
    attach_url,
    attach_video,
    build_attachment_entry,
    undo_attach,
)
from chatkeep.entries import entry_text, validate_entry
from chatkeep.rules.labels import parse_figure_labels
from factories import assistant, image_entry, png_data_url, user

UUID_HEX = re.compile(r"^[0-9a-f]{32}$")


def _png_bytes(size=(40, 30), color=(10, 200, 90)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def _images(entry) -> list[str]:
    return [p["image_url"]["url"] for p in entry["content"] if p["type"] == "image_url"]


def test_url_attach_appends_one_attachment_entry(store, http_server):
    """A fetched page becomes one string attachment entry with header, fresh attachId and result."""
    store.history.append(user("hello"))
    url = http_server.url("/news/night-trains")
    res = attach_url(store, url)
    hist = store.history.read()
    assert len(hist) == 2 and res.index == 1
    entry = hist[1]
    assert entry["role"] == "user" and isinstance(entry["content"], str)
    assert entry["attachId"] == res.attach_id and UUID_HEX.match(res.attach_id)
    head = entry["content"].split("\n---\n\n", 1)[0].split("\n")
    assert head[0] == PAGE_CONTEXT_PREFIX
    assert head[1] == f"URL: {url}"
    assert head[2] == f"Title: {res.title}" and res.title
    assert head[3] == "Mode: auto | html"
    assert (res.kind, res.url, res.images, res.truncated, res.changed) == (
        "page",
        url,
        0,
        False,
        False,
    )
    assert res.chars == len(entry["content"].split("\n---\n\n", 1)[1])
    validate_entry(entry)


def test_two_attaches_get_distinct_ids(store, http_server):
    """Each attach gets its own uuid4 attachId."""
    a = attach_url(store, http_server.url("/notes.txt"))
    b = attach_url(store, http_server.url("/notes.txt"))
    assert a.attach_id != b.attach_id
    assert [e["attachId"] for e in store.history.read()] == [a.attach_id, b.attach_id]


def test_secrets_in_url_are_redacted_everywhere(store, http_server):
    """Header URL, result URL and change-tracker key never hold the secret query value."""
    url = http_server.url("/guide.md") + "?token=s3cr3t-value&page=2"
    res = attach_url(store, url)
    text = store.history.read()[0]["content"]
    assert "s3cr3t-value" not in text
    assert "s3cr3t-value" not in res.url and "page=2" in res.url
    assert "s3cr3t-value" not in repr(store.local.get("attachSnapshots"))


def test_title_and_mode_override(store, http_server):
    """--title replaces the extracted title; an explicit mode and the contextMode setting reach the Mode line."""
    res = attach_url(store, http_server.url("/notes.txt"), title="My notes", mode="full")
    text = store.history.read()[0]["content"]
    assert "\nTitle: My notes\n" in text and res.title == "My notes"
    assert "\nMode: full | text\n" in text
    store.local.set("contextMode", "selection")
    attach_url(store, http_server.url("/notes.txt"))
    assert "\nMode: selection | text\n" in store.history.read()[1]["content"]


def test_max_text_chars_caps_the_body(store, http_server):
    """maxTextChars from settings caps the extracted text and the result says truncated."""
    store.local.set("maxTextChars", 300)
    res = attach_url(store, http_server.url("/news/night-trains"))
    body = store.history.read()[0]["content"].split("\n---\n\n", 1)[1]
    assert res.truncated is True and res.chars == 300 and len(body) == 300


def test_zero_max_text_chars_means_the_built_in_cap(store, tmp_path):
    """maxTextChars 0 keeps a 200,000-char file whole (the built-in cap is 1,000,000)."""
    store.local.set({"maxTextChars": 0, "maxHistoryChars": 10_000_000})
    path = tmp_path / "long.txt"
    path.write_text(("word " * 40_000).strip() + "\n", encoding="utf-8")
    res = attach_file(store, path)
    assert res.truncated is False and res.chars == 199_999


def test_pdf_entry_is_text_then_figures_in_order(store, tmp_path):
    """A PDF becomes [text, figure 1, …] in the order of its ## Figures list, labels parseable."""
    data, _figs = figures_pdf(tmp_path)
    path = tmp_path / "report.pdf"
    path.write_bytes(data)
    expected = extract_file(path)
    res = attach_file(store, path)
    entry = store.history.read()[0]
    assert entry["content"][0]["type"] == "text"
    assert entry["content"][0]["text"].startswith(PAGE_CONTEXT_PREFIX)
    assert "\n\n## Figures\n" in entry["content"][0]["text"]
    assert [p["type"] for p in entry["content"][1:]] == ["image_url"] * len(expected.images)
    assert _images(entry) == list(expected.images)
    assert parse_figure_labels(entry_text(entry)) == list(expected.captions)
    assert (res.kind, res.images) == ("pdf", 4)
    assert "\nMode: auto | pdf\n" in entry["content"][0]["text"]


def test_image_file_is_a_screenshot_entry_byte_for_byte(store, tmp_path):
    """An image file becomes [text, image] whose pixels are the file's bytes."""
    path = tmp_path / "shot.png"
    path.write_bytes(_png_bytes((50, 20)))
    res = attach_file(store, path)
    entry = store.history.read()[0]
    assert [p["type"] for p in entry["content"]] == ["text", "image_url"]
    assert entry["content"][0]["text"].endswith("\n\nScreenshot: shot.png (50×20)")
    assert base64.b64decode(_images(entry)[0].split(",", 1)[1]) == path.read_bytes()
    assert (res.kind, res.images, res.title) == ("image", 1, "shot.png")


@pytest.mark.parametrize("as_data_url", [False, True])
def test_pasted_image_has_no_url_and_is_not_tracked(store, as_data_url):
    """Pasted bytes or a pasted data URL make a screenshot entry without URL line or snapshot."""
    raw = _png_bytes()
    source = "data:image/png;base64," + base64.b64encode(raw).decode() if as_data_url else raw
    res = attach_image(store, source)
    entry = store.history.read()[0]
    text = entry["content"][0]["text"]
    assert "\nURL: " not in text and "\nTitle: pasted image\n" in text
    assert base64.b64decode(_images(entry)[0].split(",", 1)[1]) == raw
    assert res.url == "" and store.local.get("attachSnapshots") is None


def test_attach_source_dispatches_url_file_and_data_url(store, http_server, tmp_path):
    """attach_source picks the URL, data-URL image or file path by the source's form."""
    path = tmp_path / "n.md"
    path.write_text("# Heading\n\nbody\n", encoding="utf-8")
    data_url = "data:image/png;base64," + base64.b64encode(_png_bytes()).decode()
    kinds = [
        attach_source(store, http_server.url("/notes.txt")).kind,
        attach_source(store, data_url).kind,
        attach_source(store, str(path)).kind,
    ]
    assert kinds == ["page", "image", "file"]


def test_video_entry_is_stamped_with_video_src(store, fixtures_dir):
    """A transcript attachment carries videoSrc and timestamped lines."""
    url = "https://www.youtube.com/watch?v=abc123"
    res = attach_video(store, url, fixtures_dir / "talk.vtt")
    entry = store.history.read()[0]
    assert entry["videoSrc"] == {"platform": "youtube", "url": url}
    assert re.search(r"^\[\d\d:\d\d\] ", entry["content"], re.M)
    assert "\nMode: auto | vtt\n" in entry["content"]
    assert res.kind == "video" and res.attach_id == entry["attachId"]


def test_anchored_images_are_interleaved():
    """A non-PDF source with [图N] anchors gets its images placed after the anchor lines."""
    a, b = png_data_url(8, 8, (1, 2, 3)), png_data_url(8, 8, (4, 5, 6))
    ex = Extracted(
        kind="page",
        title="Frames",
        url="https://example.org/v",
        text="intro\nsee [图2] here\nmiddle [图1]\nend",
        images=(a, b),
        fmt="html",
        video_src=None,
    )
    entry = build_attachment_entry(ex, mode="auto", attach_id="f" * 32)
    kinds = [p["type"] if p["type"] == "text" else p["image_url"]["url"] for p in entry["content"]]
    assert kinds == ["text", b, "text", a, "text"]
    joined = "".join(p["text"] for p in entry["content"] if p["type"] == "text")
    assert joined == build_page_context_text(
        {"url": ex.url, "title": ex.title}, ex.text, "auto", fmt="html"
    )
    validate_entry(entry)


def test_image_attach_bounds_older_unseen_images(store, tmp_path):
    """After an image attach, older unseen images are thumbnailed to fit the budget; the new one is kept."""
    big = png_data_url(900, 700, noise=True)
    store.history.append(image_entry("old picture", big))
    path = tmp_path / "new.png"
    path.write_bytes(_png_bytes((60, 60)))
    attach_file(store, path, image_budget=200_000)
    old, new = store.history.read()
    old_url = _images(old)[0]
    assert old_url != big and old_url.startswith("data:image/jpeg;base64,")
    with Image.open(io.BytesIO(base64.b64decode(old_url.split(",", 1)[1]))) as im:
        assert max(im.size) == 480
    assert base64.b64decode(_images(new)[0].split(",", 1)[1]) == path.read_bytes()


def test_text_attach_does_not_touch_older_images(store, http_server):
    """An attachment without images leaves older unseen images alone, even over budget."""
    big = png_data_url(900, 700, noise=True)
    store.history.append(image_entry("old picture", big))
    store.history.append(image_entry("another", png_data_url(600, 600, noise=True)))
    attach_url(store, http_server.url("/notes.txt"), image_budget=1000)
    assert _images(store.history.read()[0]) == [big]


def test_undo_attach_removes_only_that_entry(store, http_server):
    """undo_attach removes the attachment by id and leaves the rest; a second undo is False."""
    store.history.append(user("q"))
    res = attach_url(store, http_server.url("/notes.txt"))
    store.history.append(assistant("a"))
    assert undo_attach(store, res.attach_id) is True
    assert [e["content"] for e in store.history.read()] == ["q", "a"]
    assert undo_attach(store, res.attach_id) is False


@pytest.mark.parametrize("bad_id", ["", "   ", "0" * 32])
def test_undo_unknown_id_writes_nothing(spec, store, http_server, bad_id):
    """An unknown or blank attach id returns False and leaves every stored row as it was."""
    attach_url(store, http_server.url("/notes.txt"))
    before = spec.dump()
    assert undo_attach(store, bad_id) is False
    assert spec.dump() == before


def test_entries_written_are_valid_for_every_source(store, http_server, fixtures_dir, tmp_path):
    """Every kind of attachment entry passes validation and is recognised as an attachment."""
    from chatkeep.entries import is_attachment

    data, _ = figures_pdf(tmp_path)
    (tmp_path / "r.pdf").write_bytes(data)
    attach_url(store, http_server.url("/spec.pdf"))
    attach_file(store, tmp_path / "r.pdf")
    attach_file(store, fixtures_dir / "guide.md")
    attach_image(store, _png_bytes())
    attach_video(store, "https://vimeo.com/1", fixtures_dir / "lecture.srt")
    hist = store.history.read()
    assert len(hist) == 5
    for e in hist:
        validate_entry(e)
        assert is_attachment(e)
