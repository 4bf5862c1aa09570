"""Every malformed source is a typed error through the CLI, with nothing stored and
no library noise on stderr: binary bytes named ``.txt``, malformed URLs, unsupported schemes,
damaged PDFs (which still attach, quietly)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import chatkeep
from attach.attach_pdfgen import make_image, text_pdf
from clirun import run


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ck.db"


def _history(db: Path) -> list:
    with chatkeep.open(str(db)) as s:
        return s.history.read()


def _refused(db: Path, source: str, *needles: str) -> str:
    proc = run(db, "attach", source, ok=False)
    assert proc.returncode == 8, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: ")
    for needle in needles:
        assert needle in proc.stderr
    assert _history(db) == []
    return proc.stderr


def test_binary_named_txt_is_refused(db: Path, tmp_path: Path) -> None:
    """Random bytes named .txt (and .md) are an AttachError, never 150,000 chars of text."""
    for name in ("blob.txt", "notes.md"):
        path = tmp_path / name
        path.write_bytes(os.urandom(150_000))
        _refused(db, str(path), f"{name} is named like a text file but holds binary data")


def test_pdf_or_image_named_txt_is_attached_as_what_it_is(db: Path, tmp_path: Path) -> None:
    """A PDF or PNG saved under a .txt name is recognised by its bytes."""
    (tmp_path / "report.txt").write_bytes(text_pdf(["a page about owls"]))
    make_image(tmp_path / "shot.png", (200, 30, 30))
    (tmp_path / "shot.txt").write_bytes((tmp_path / "shot.png").read_bytes())
    run(db, "attach", str(tmp_path / "report.txt"))
    run(db, "attach", str(tmp_path / "shot.txt"))
    first, second = _history(db)
    assert "[Page 1]" in first["content"] and "owls" in first["content"]
    assert any(p.get("type") == "image_url" for p in second["content"])


def test_text_with_a_bom_and_plain_utf16_stays_text(db: Path, tmp_path: Path) -> None:
    """UTF-16 text with its byte-order mark holds NUL bytes but is text."""
    (tmp_path / "u16.txt").write_bytes("Eulen jagen nachts.\n".encode("utf-16"))
    run(db, "attach", str(tmp_path / "u16.txt"))
    assert "Eulen jagen nachts." in _history(db)[0]["content"]


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("http://[::1", "malformed URL"),
        ("https://[fe80::1/page", "malformed URL"),
        ("http://example.org:port/", "malformed URL"),
        ("ftp://example.org/pub/file.txt", "unsupported URL scheme 'ftp'"),
        ("gopher://example.org/", "unsupported URL scheme 'gopher'"),
        ("file://otherhost/etc/hosts", "names another host"),
    ],
)
def test_malformed_and_unsupported_urls(db: Path, source: str, needle: str) -> None:
    """Malformed URLs and other schemes are typed errors that say so (not "no such file")."""
    err = _refused(db, source, needle)
    assert "no such file" not in err


def test_ipv6_hint_matches_the_cause(db: Path) -> None:
    """The hint for an unclosed IPv6 host talks about brackets; for a bad port about ports."""
    assert "brackets" in _refused(db, "http://[::1")
    assert "port" in _refused(db, "http://example.org:port/")


def test_file_url_attaches_the_local_file(db: Path, tmp_path: Path) -> None:
    """A file:// URL attaches the file it names."""
    (tmp_path / "a b.md").write_text("# Owl notes\n\nBarn owls hunt at night.\n")
    run(db, "attach", (tmp_path / "a b.md").as_uri())
    assert "Barn owls hunt at night." in _history(db)[0]["content"]


def _damaged(pdf: bytes) -> bytes:
    """Every xref offset moved by 7 bytes and a wrong startxref: pypdf must rebuild it."""
    shifted = re.sub(rb"(\d{10}) 00000 n", lambda m: b"%010d 00000 n" % (int(m.group(1)) + 7), pdf)
    cut = shifted.rindex(b"startxref")
    return shifted[:cut] + b"startxref\n999999\n%%EOF\n"


def test_damaged_pdf_attaches_without_library_noise(db: Path, tmp_path: Path) -> None:
    """A damaged but recoverable PDF attaches with its text, and pypdf prints nothing."""
    path = tmp_path / "damaged.pdf"
    path.write_bytes(_damaged(text_pdf(["the recovered page text"])))
    proc = run(db, "attach", str(path))
    assert proc.stderr == ""
    assert "the recovered page text" in _history(db)[0]["content"]


def test_unreadable_pdf_is_typed_and_quiet(db: Path, tmp_path: Path) -> None:
    """A PDF header followed by garbage is an AttachError with nothing else on stderr."""
    path = tmp_path / "garbage.pdf"
    path.write_bytes(b"%PDF-1.7\n" + os.urandom(4000))
    err = _refused(db, str(path), "garbage.pdf")
    assert [line.split(":")[0] for line in err.strip().splitlines()] == ["error", "hint"]


def test_binary_served_as_text_plain_is_refused(db: Path, tmp_path: Path) -> None:
    """A URL answering text/plain with binary bytes is an AttachError, nothing stored."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    (tmp_path / "dump.txt").write_bytes(os.urandom(20_000))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/dump.txt"
        _refused(db, url, "is served as text/plain but holds binary data")
    finally:
        httpd.shutdown()
        httpd.server_close()
