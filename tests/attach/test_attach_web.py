"""Web pages over a real loopback HTTP server: extraction, content types, errors and limits."""

from __future__ import annotations

import re
import time

import pytest

from chatkeep.attach import extract_url
from chatkeep.errors import AttachError

NEWS_JUNK = [
    "COOKIE_BANNER_MARKER",
    "NAV_MENU_MARKER",
    "ADVERT_MARKER",
    "INLINE_AD_MARKER",
    "ANALYTICS_SCRIPT_MARKER",
    "SCRIPT_BODY_MARKER",
    "FOOTER_MARKER",
    "RELATED_MARKER",
    "gtag(",
    "Luxury watches",
]
BLOG_JUNK = [
    "COOKIE_MARKER",
    "NAV_MARKER",
    "SCRIPT_MARKER",
    "AD_MARKER",
    "SIDEBAR_MARKER",
    "FOOTER_MARKER",
    "SHARE_MARKER",
    "Leave a Reply",
]
ZH_JUNK = ["COOKIE标记", "导航标记", "广告标记", "侧栏标记", "页脚标记", "统计脚本标记", "分享标记"]


def test_news_article_main_text_without_clutter(http_server):
    """The article body, headings and list survive; banner, nav, ads, scripts and footer do not."""
    url = http_server.url("/news/night-trains")
    ex = extract_url(url)
    assert (ex.kind, ex.fmt, ex.url, ex.images, ex.truncated) == ("page", "html", url, (), False)
    assert ex.title == "Night trains are back in Europe"
    assert "has been sold out for weeks" in ex.text
    assert "## A bet that paid off" in ex.text
    assert "- A shortage of sleeper carriages" in ex.text
    assert "maintenance window" in ex.text
    for junk in NEWS_JUNK:
        assert junk not in ex.text, junk


def test_blog_keeps_code_and_table_and_unindents(http_server):
    """A WordPress-style post keeps its code block and table; wrapped lines lose source indentation."""
    ex = extract_url(http_server.url("/blog/2023/11/sqlite-profiling/"))
    assert ex.title == "Profiling a slow SQLite query"
    assert "```\nEXPLAIN QUERY PLAN\nSELECT user_id, count(*) FROM events" in ex.text
    assert "created_at > '2023-10-01'" in ex.text  # entity decoded inside code
    assert re.search(r"\| Index on \(kind, created\\?_at, user\\?_id\) \| 0\.08 s \|", ex.text)
    assert "\nsingle query over an events table" in ex.text
    assert not re.search(r"^[ \t]+\S", ex.text.split("```")[0], re.M)
    for junk in BLOG_JUNK:
        assert junk not in ex.text, junk


def test_chinese_page_decoded_from_meta_charset(http_server):
    """A GBK page whose charset is only in <meta> is decoded correctly, title included."""
    ex = extract_url(http_server.url("/zh/birds.html"))
    assert ex.title == "城市里的候鸟：上海滨江观鸟记"
    assert "黄浦江边的薄雾还没有散去" in ex.text
    assert "## 观鸟需要注意什么" in ex.text
    assert "“城市并不只是人的城市，”" in ex.text
    for junk in ZH_JUNK:
        assert junk not in ex.text, junk


def test_plain_text_kept_as_is(http_server, fixtures_dir):
    """text/plain is returned verbatim; the title falls back to the URL's file name."""
    ex = extract_url(http_server.url("/notes.txt"))
    assert ex.text == (fixtures_dir / "notes.txt").read_text(encoding="utf-8").strip("\n")
    assert (ex.kind, ex.fmt, ex.title) == ("page", "text", "notes.txt")


def test_markdown_by_url_titled_by_first_heading(http_server):
    """text/markdown keeps its markup and takes its first heading as title."""
    ex = extract_url(http_server.url("/guide.md"))
    assert (ex.fmt, ex.title) == ("markdown", "Composting at home")
    assert "**greens** (nitrogen)" in ex.text


@pytest.mark.parametrize("path", ["/spec.pdf", "/download"])
def test_pdf_served_by_url_goes_through_pdf_path(http_server, path):
    """application/pdf, and a PDF served as octet-stream, are extracted as PDFs."""
    url = http_server.url(path)
    ex = extract_url(url)
    assert (ex.kind, ex.fmt, ex.url) == ("pdf", "pdf", url)
    assert ex.text.startswith("[Page 1]\nShared MIME-info Database")
    assert "[Page 17]" in ex.text


@pytest.mark.parametrize(
    ("path", "ctype"), [("/logo.png", "image/png"), ("/data.json", "application/json")]
)
def test_unsupported_content_type(http_server, path, ctype):
    """Non-HTML/text/PDF responses raise AttachError naming the content type."""
    with pytest.raises(AttachError, match=f"unsupported content type {re.escape(ctype)}") as err:
        extract_url(http_server.url(path))
    assert err.value.hint


def test_redirect_followed_and_original_url_kept(http_server):
    """A 301 is followed; the result keeps the URL the caller gave."""
    url = http_server.url("/old-link")
    ex = extract_url(url)
    assert ex.url == url
    assert ex.title == "Night trains are back in Europe"


@pytest.mark.parametrize(
    ("path", "status"), [("/no/such/page", 404), ("/gone", 410), ("/broken", 500)]
)
def test_http_error_status(http_server, path, status):
    """HTTP error statuses raise AttachError with the status and a hint."""
    with pytest.raises(AttachError, match=f"HTTP {status}") as err:
        extract_url(http_server.url(path))
    assert err.value.hint


def test_declared_size_over_limit(http_server):
    """A Content-Length over max_bytes is refused before the body is read."""
    with pytest.raises(AttachError, match="download limit"):
        extract_url(http_server.url("/huge-declared"), max_bytes=1024 * 1024)


def test_streamed_size_over_limit(http_server):
    """A body without Content-Length is cut off once it passes max_bytes."""
    t0 = time.monotonic()
    with pytest.raises(AttachError, match="1,048,576-byte download limit"):
        extract_url(http_server.url("/huge-streamed"), max_bytes=1024 * 1024)
    assert time.monotonic() - t0 < 10


def test_slow_server_times_out(http_server):
    """A server that does not answer within the timeout raises AttachError quickly."""
    t0 = time.monotonic()
    with pytest.raises(AttachError, match="did not answer within 0.5 s") as err:
        extract_url(http_server.url("/slow"), timeout=0.5)
    assert time.monotonic() - t0 < 3
    assert "timeout" in err.value.hint


def test_trickling_body_hits_total_deadline(http_server):
    """A body that keeps trickling in is abandoned at the total deadline, not read forever."""
    t0 = time.monotonic()
    with pytest.raises(AttachError, match="did not answer within 1 s"):
        extract_url(http_server.url("/trickle"), timeout=1.0)
    assert time.monotonic() - t0 < 3


def test_unreachable_host(closed_port_url):
    """A refused connection raises AttachError naming the host, with a hint."""
    with pytest.raises(AttachError, match="cannot reach 127.0.0.1") as err:
        extract_url(closed_port_url, timeout=2)
    assert "network" in err.value.hint


@pytest.mark.parametrize(
    "bad", ["ftp://example.com/file.txt", "file:///etc/passwd", "example.com", ""]
)
def test_non_http_urls_refused(bad):
    """Only http(s) URLs are fetched."""
    with pytest.raises(AttachError, match="not a web address"):
        extract_url(bad)


def test_max_chars_truncates(http_server):
    """The text is capped at max_chars and the result says it was truncated."""
    ex = extract_url(http_server.url("/news/night-trains"), max_chars=200)
    assert len(ex.text) == 200 and ex.truncated is True
    assert ex.text.startswith("# Night trains are back in Europe")


def test_page_without_text(http_server):
    """An HTML page with no readable text raises AttachError with a JavaScript hint."""
    with pytest.raises(AttachError, match="no readable text") as err:
        extract_url(http_server.url("/empty.html"))
    assert "JavaScript" in err.value.hint


def test_fallback_to_visible_text(http_server):
    """When trafilatura finds no article, all visible text is used, one line per block, no scripts."""
    ex = extract_url(http_server.url("/footer-only.html"))
    assert ex.text == "Monday to Friday, 9 to 17.\nClosed on public holidays."
    assert ex.title == "Opening hours"
