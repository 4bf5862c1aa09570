"""Stored text never reaches the page as markup: safe Markdown, static page shell, pills."""

from __future__ import annotations

import re

import pytest

from chatkeep.panel import render_markdown, video_time_url
from factories import assistant, attachment, user

PAYLOADS = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "<svg onload=alert(1)>",
    '"><iframe src="javascript:alert(1)">',
]
_TAG_RE = re.compile(r"<\s*(script|img|svg|iframe)\b", re.I)
_HANDLER_RE = re.compile(r"<[^>]*\son\w+\s*=", re.I)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_escapes_raw_html(payload):
    """Raw HTML in a reply comes out as escaped text: no tag, no event handler attribute."""
    html = render_markdown(f"before {payload} after\n\n{payload}\n\n- {payload}\n\n> {payload}")
    assert not _TAG_RE.search(html), html
    assert not _HANDLER_RE.search(html), html
    assert "&lt;" in html


@pytest.mark.parametrize(
    "link",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "data:text/html,<b>x</b>",
        "vbscript:x",
        "file:///etc/passwd",
    ],
)
def test_markdown_drops_unsafe_link_targets(link):
    """Links to javascript:, data:, vbscript: or file: are not made into links."""
    html = render_markdown(f"[click]({link}) and <{link}>")
    assert "href" not in html.lower()


def test_markdown_links_open_safely_and_images_are_not_loaded():
    """http(s) links open in a new tab without referrer; Markdown images are not rendered."""
    html = render_markdown(
        "[docs](https://example.com/a?b=1) ![pixel](https://tracker.example/p.gif)"
    )
    assert (
        '<a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer">docs</a>'
        in html
    )
    assert "<img" not in html


def test_markdown_keeps_code_and_tables():
    """Code blocks keep their text escaped; tables render."""
    html = render_markdown("```\n<b>x</b>\n```\n\n|a|b|\n|-|-|\n|1|2|")
    assert '<code class="hl language-text">&lt;b&gt;x&lt;/b&gt;\n</code></pre>' in html
    assert "<table>" in html and "<td>1</td>" in html


def test_timestamp_pills_link_only_with_a_video():
    """[mm:ss] becomes a link at that second with a video URL, a plain pill without one."""
    with_video = render_markdown("see [02:05] and [1:00:01]", video_url="https://youtu.be/xyz")
    assert 'href="https://youtu.be/xyz?t=125s"' in with_video
    assert 'data-seconds="3601"' in with_video
    without = render_markdown("see [02:05]")
    assert '<span class="ts-pill" data-seconds="125">[02:05]</span>' in without
    assert "href" not in without
    in_code = render_markdown("`[02:05]`", video_url="https://youtu.be/xyz")
    assert "ts-pill" not in in_code


def test_timestamp_pill_refuses_unsafe_video_urls():
    """A javascript: or malformed video URL never becomes a pill link."""
    html = render_markdown("at [00:10]", video_url="javascript:alert(1)//")
    assert "href" not in html
    assert video_time_url("javascript:alert(1)", 5) == ""
    assert video_time_url("not a url", 5) == ""


@pytest.mark.parametrize(
    "url,seconds,expected",
    [
        (
            "https://www.youtube.com/watch?v=abc&t=5",
            83,
            "https://www.youtube.com/watch?v=abc&t=83s",
        ),
        ("https://www.youtube.com/embed/abc", 7, "https://www.youtube.com/embed/abc?start=7"),
        ("https://www.bilibili.com/video/BV1xx", 61, "https://www.bilibili.com/video/BV1xx?t=61"),
        ("https://vimeo.com/123", 9, "https://vimeo.com/123#t=9s"),
        ("https://example.com/talk.mp4#old", 42, "https://example.com/talk.mp4#t=42"),
    ],
)
def test_video_time_url_per_platform(url, seconds, expected):
    """The video URL opens at the right second for each platform."""
    assert video_time_url(url, seconds) == expected


def test_thoughts_block_collapses_by_option():
    """A leading <think> block becomes a details block, open unless collapsed; it is escaped too."""
    text = "<think>consider <script>x</script></think>The answer."
    closed = render_markdown(text, collapse_thoughts=True)
    opened = render_markdown(text, collapse_thoughts=False)
    assert closed.startswith('<details class="thought"><summary>')
    assert '<details class="thought" open>' in opened
    assert "<script>" not in closed and "&lt;script&gt;" in closed
    assert "<p>The answer.</p>" in closed


def test_no_stored_text_in_the_page_or_unescaped_in_json_html(client, pstore):
    """With payloads in a title, a page, a message, a reply and a session name, the page HTML
    holds none of them and the reply's rendered html holds no live markup."""
    payload = PAYLOADS[1]
    pstore.history.append(attachment(f"page {payload}", title=f"Title {PAYLOADS[0]}"))
    pstore.history.append(user(f"question {payload}"))
    pstore.history.append(assistant(f"answer {PAYLOADS[0]} {payload}"))
    pstore.sessions.save(f"name {PAYLOADS[0]}")
    page = client.get("/").text
    assert "__pwned" not in page and "onerror" not in page
    views = client.get("/api/history").json()["history"]
    html = views[2]["html"]
    assert not _TAG_RE.search(html) and not _HANDLER_RE.search(html)
    # Stored text travels as JSON data (the page sets it with textContent), unchanged.
    assert views[0]["attachment"]["title"] == f"Title {PAYLOADS[0]}"
    assert views[1]["text"] == f"question {payload}"
    names = [s["name"] for s in client.get("/api/sessions").json()["sessions"]]
    assert names == [f"name {PAYLOADS[0]}"]
    assert client.get("/api/sessions").headers["content-type"].startswith("application/json")


def test_static_js_never_uses_innerhtml_except_for_server_markdown():
    """The page's scripts assign innerHTML only from the server-rendered Markdown fields."""
    from chatkeep.panel.app import STATIC_DIR

    allowed = re.compile(r"\.innerHTML = (view\.html \|\| \"\"|data\.html);")
    uses = []
    for path in sorted(STATIC_DIR.glob("*.js")):
        for line in path.read_text().splitlines():
            code = line.split("//", 1)[0]
            if "innerHTML" in code or "outerHTML" in code or "insertAdjacentHTML" in code:
                uses.append((path.name, code.strip()))
    assert len(uses) == 2, uses  # the reply bubble and the streaming bubble
    for name, code in uses:
        assert allowed.search(code), (name, code)
    joined = "\n".join(p.read_text() for p in STATIC_DIR.glob("*.js"))
    assert "eval(" not in joined and "document.write" not in joined


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("Euler: $e^{i\\pi}+1=0$.", ['<span class="math">e^{i\\pi}+1=0</span>']),
        ("$$\na \\\\ b_1 * c_2\n$$", ['<span class="math display">a \\\\ b_1 * c_2</span>']),
        ("\\(x_1\\) and \\[y^2\\]", ['<span class="math">x_1</span>', "math display"]),
        ("It costs $5 and $10.", []),
        ("`$x$` and\n\n```\n$$y$$\n```", []),
        ("$10. Code: `$x$`", []),
        ("$<img src=x onerror=alert(1)>$", ['<span class="math">&lt;img src=x']),
    ],
)
def test_math_is_kept_whole_and_escaped_never_in_code(text, spans):
    """TeX between math delimiters reaches the page whole (no escapes or emphasis applied) and
    escaped; prices and code are never math."""
    out = render_markdown(text)
    assert out.count('class="math') == len(spans)
    for span in spans:
        assert span in out
    assert "<img" not in out
