"""Local files: dispatch by extension and content, titles, and refusal of bad files."""

from __future__ import annotations

import os
import shutil

import pytest
from PIL import Image

from chatkeep.attach import extract_file, extract_url
from chatkeep.errors import AttachError


def test_local_html_same_extraction_as_web(http_server, fixtures_dir):
    """A saved HTML page yields the same title and text as the same page served over HTTP."""
    local = extract_file(fixtures_dir / "article_news.html")
    remote = extract_url(http_server.url("/news/night-trains"))
    assert (local.kind, local.fmt) == ("file", "html")
    assert local.url == (fixtures_dir / "article_news.html").resolve().as_uri()
    assert local.title == remote.title
    assert local.text == remote.text


def test_local_gbk_html(fixtures_dir):
    """A local GBK page is decoded through its <meta> charset."""
    ex = extract_file(fixtures_dir / "article_zh_gbk.html")
    assert ex.title == "城市里的候鸟：上海滨江观鸟记"
    assert "珠颈斑鸠" in ex.text


def test_markdown_file_text_as_is_and_setext_title(fixtures_dir):
    """Markdown is kept verbatim; the title is the first heading after front matter, not a code comment."""
    path = fixtures_dir / "guide.md"
    ex = extract_file(path)
    assert ex.text == path.read_text(encoding="utf-8").strip("\n")
    assert (ex.kind, ex.fmt, ex.title) == ("file", "markdown", "Composting at home")


def test_markdown_atx_heading_title(tmp_path):
    """An ATX '# Heading' is the title of a .markdown file."""
    path = tmp_path / "plan.markdown"
    path.write_text("Intro line\n\n## Q3 roadmap ##\n\nbody\n", encoding="utf-8")
    assert extract_file(path).title == "Q3 roadmap"


def test_text_file_titled_by_filename(fixtures_dir):
    """A .txt without a heading is titled by its file name and kept verbatim."""
    path = fixtures_dir / "notes.txt"
    ex = extract_file(path)
    assert (ex.fmt, ex.title) == ("text", "notes.txt")
    assert ex.text == path.read_text(encoding="utf-8").strip("\n")


def test_latin1_text_file_decoded(tmp_path):
    """A text file that is not UTF-8 is still decoded (no replacement characters)."""
    path = tmp_path / "old.txt"
    path.write_bytes("Crème brûlée à la française, naïve façade, déjà vu.\n".encode("cp1252"))
    ex = extract_file(path)
    assert "\ufffd" not in ex.text
    assert "Crème brûlée" in ex.text


def test_gbk_text_file_decoded(tmp_path):
    """A Chinese text file in GBK (no charset declared anywhere) is decoded as Chinese."""
    path = tmp_path / "笔记.txt"
    text = "# 观鸟笔记\n\n清晨六点，黄浦江边的薄雾还没有散去，几位观鸟爱好者已经架好了望远镜。\n"
    path.write_bytes(text.encode("gbk"))
    ex = extract_file(path)
    assert ex.text == text.strip("\n")
    assert ex.title == "观鸟笔记"


def test_text_file_truncated(tmp_path):
    """max_chars caps a long text file and marks it truncated."""
    path = tmp_path / "long.txt"
    path.write_text("abcdefghij" * 100, encoding="utf-8")
    ex = extract_file(path, max_chars=55)
    assert ex.text == ("abcdefghij" * 6)[:55] and ex.truncated is True
    assert extract_file(path).truncated is False


def test_unknown_text_extension_attached_as_text(tmp_path):
    """A UTF-8 file with another extension (CSV) is attached as text."""
    path = tmp_path / "prices.csv"
    path.write_text("item,price\ntea,2.50\n", encoding="utf-8")
    ex = extract_file(path)
    assert (ex.kind, ex.fmt, ex.text) == ("file", "text", "item,price\ntea,2.50")


def test_unknown_binary_refused(tmp_path):
    """Binary bytes that are neither PDF nor image nor text are refused."""
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(AttachError, match="unsupported file type"):
        extract_file(path)


def test_pdf_without_extension_recognised(fixtures_dir, tmp_path):
    """A PDF saved without .pdf is recognised by its header."""
    path = tmp_path / "download"
    shutil.copy(fixtures_dir / "real_shared-mime-info-spec.pdf", path)
    assert extract_file(path).kind == "pdf"


def test_bmp_recognised_by_content(tmp_path):
    """Any image Pillow can decode (BMP here) becomes an image, kept byte for byte (§3.2)."""
    path = tmp_path / "scan.bmp"
    Image.new("RGB", (50, 40), (1, 2, 3)).save(path)
    ex = extract_file(path)
    assert ex.kind == "image" and ex.images[0].startswith("data:image/bmp;base64,")


def test_missing_file():
    """A path that does not exist raises AttachError."""
    with pytest.raises(AttachError, match="no such file") as err:
        extract_file("/nonexistent/dir/report.pdf")
    assert err.value.hint


def test_directory_refused(tmp_path):
    """A directory is not a file."""
    with pytest.raises(AttachError, match="is a directory"):
        extract_file(tmp_path)


def test_oversized_file_refused_before_reading(tmp_path):
    """A (sparse) 200 MB file is refused by size without being read."""
    path = tmp_path / "huge.txt"
    with path.open("wb") as fh:
        fh.truncate(200 * 1024 * 1024)
    with pytest.raises(AttachError, match="209,715,200 bytes, over the 52,428,800-byte limit"):
        extract_file(path)


def test_custom_size_limit(tmp_path):
    """max_bytes is honoured for small limits too."""
    path = tmp_path / "a.txt"
    path.write_text("x" * 2048)
    with pytest.raises(AttachError, match="over the 1,024-byte limit"):
        extract_file(path, max_bytes=1024)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(tmp_path):
    """A file without read permission raises AttachError."""
    path = tmp_path / "secret.txt"
    path.write_text("x")
    path.chmod(0)
    with pytest.raises(AttachError, match="permission denied"):
        extract_file(path)


@pytest.mark.parametrize("name", ["talk.vtt", "lecture.srt"])
def test_transcripts_need_video_url(fixtures_dir, name):
    """A transcript file is refused by extract_file with a hint to use extract_video."""
    with pytest.raises(AttachError, match="video transcript") as err:
        extract_file(fixtures_dir / name)
    assert "extract_video" in err.value.hint


def test_empty_text_file(tmp_path):
    """An empty text file raises AttachError."""
    path = tmp_path / "empty.md"
    path.write_text("\n\n")
    with pytest.raises(AttachError, match="empty"):
        extract_file(path)
