"""Bad sources raise AttachError and leave every stored row byte-identical (both backends)."""

from __future__ import annotations

import io

import pytest
from attach_pdfgen import text_pdf
from PIL import Image

from chatkeep.attach.store_ops import (
    attach_file,
    attach_image,
    attach_source,
    attach_url,
    attach_video,
)
from chatkeep.errors import AttachError
from factories import user


@pytest.fixture
def seeded(store, http_server):
    """A store that already holds a conversation, an attachment and a snapshot map."""
    store.history.append(user("earlier question"))
    attach_url(store, http_server.url("/notes.txt"))
    assert store.local.get("attachSnapshots")
    return store


def _locked_pdf() -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=io.BytesIO(text_pdf(["secret page"])))
    writer.encrypt(user_password="hunter2", owner_password="owner")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def _unchanged(spec, action) -> AttachError:
    before = spec.dump()
    with pytest.raises(AttachError) as err:
        action()
    assert err.value.hint
    assert spec.dump() == before
    return err.value


@pytest.mark.parametrize("path", ["/data.json", "/gone", "/broken", "/empty.html", "/logo.png"])
def test_bad_urls_store_nothing(spec, seeded, http_server, path):
    """Unsupported types, HTTP errors and pages without text raise and store nothing."""
    _unchanged(spec, lambda: attach_url(seeded, http_server.url(path)))


def test_unreachable_url_stores_nothing(spec, seeded, closed_port_url):
    """A URL where nothing listens raises and stores nothing."""
    err = _unchanged(spec, lambda: attach_url(seeded, closed_port_url))
    assert "cannot reach" in err.message


def test_oversize_download_stores_nothing(spec, seeded, http_server):
    """A body over max_bytes raises and stores nothing."""
    _unchanged(
        spec, lambda: attach_url(seeded, http_server.url("/huge-streamed"), max_bytes=100_000)
    )


def test_encrypted_pdf_stores_nothing(spec, seeded, tmp_path):
    """A password-protected PDF raises and stores nothing."""
    path = tmp_path / "locked.pdf"
    path.write_bytes(_locked_pdf())
    err = _unchanged(spec, lambda: attach_file(seeded, path))
    assert "password" in err.message


def test_corrupt_pdf_stores_nothing(spec, seeded, tmp_path):
    """A truncated PDF raises and stores nothing."""
    data = text_pdf(["page one", "page two"])
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 3])
    _unchanged(spec, lambda: attach_file(seeded, path))


def test_oversize_file_stores_nothing(spec, seeded, tmp_path):
    """A file over max_bytes raises before it is read and stores nothing."""
    path = tmp_path / "big.txt"
    path.write_text("y" * 5000, encoding="utf-8")
    err = _unchanged(spec, lambda: attach_file(seeded, path, max_bytes=1000))
    assert "limit" in err.message


def test_missing_file_stores_nothing(spec, seeded, tmp_path):
    """A path that does not exist raises and stores nothing."""
    _unchanged(spec, lambda: attach_source(seeded, str(tmp_path / "nope.md")))


@pytest.mark.parametrize(
    "source", ["fake.png", b"definitely not pixels", "data:image/png;base64,AAAA"]
)
def test_not_an_image_stores_nothing(spec, seeded, fixtures_dir, source):
    """A text file named .png, random bytes or a bogus data URL raise and store nothing."""
    arg = fixtures_dir / source if source == "fake.png" else source
    _unchanged(spec, lambda: attach_image(seeded, arg))


def test_oversize_pasted_image_stores_nothing(spec, seeded):
    """Pasted image bytes over max_bytes raise and store nothing."""
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (1, 2, 3)).save(buf, format="PNG")
    err = _unchanged(spec, lambda: attach_image(seeded, buf.getvalue(), max_bytes=50))
    assert "limit" in err.message


def test_text_file_is_not_an_image(spec, seeded, fixtures_dir):
    """attach_image refuses a real text file by path and stores nothing."""
    _unchanged(spec, lambda: attach_image(seeded, fixtures_dir / "notes.txt"))


@pytest.mark.parametrize("transcript", ["broken_transcript.vtt", "missing.vtt"])
def test_bad_transcript_stores_nothing(spec, seeded, fixtures_dir, transcript):
    """A transcript without cues, or a missing one, raises and stores nothing."""
    _unchanged(
        spec,
        lambda: attach_video(seeded, "https://youtu.be/x", fixtures_dir / transcript),
    )


def test_bad_video_url_stores_nothing(spec, seeded, fixtures_dir):
    """A non-http video URL raises and stores nothing."""
    _unchanged(spec, lambda: attach_video(seeded, "ftp://v/1", fixtures_dir / "talk.vtt"))


def test_transcript_as_a_file_stores_nothing(spec, seeded, fixtures_dir):
    """A .vtt attached as a plain file is refused (it needs its video URL) and stores nothing."""
    _unchanged(spec, lambda: attach_file(seeded, fixtures_dir / "talk.vtt"))


@pytest.mark.parametrize("mode", ["two\nlines", "x" * 41, "a::b"])
def test_unusable_mode_stores_nothing(spec, seeded, http_server, mode):
    """A mode that would break the header or the tracker key raises and stores nothing."""
    _unchanged(spec, lambda: attach_url(seeded, http_server.url("/notes.txt"), mode=mode))
