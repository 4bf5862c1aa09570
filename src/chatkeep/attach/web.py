"""Web pages: fetch a URL and extract its main text; HTML → (title, text).

Contract of :func:`extract_url`:

- Only ``http``/``https`` URLs. The fetch follows redirects, gives up after ``timeout`` seconds
  in total (connect, headers and body together), and stops reading past ``max_bytes``.
- By content type: HTML/XHTML → main text extracted with trafilatura (Markdown-ish: headings,
  lists, tables, code), falling back to all visible text of the page (one line per block) when
  trafilatura finds no article; ``text/plain`` and Markdown → the text as it is; PDF → the PDF path
  (:mod:`chatkeep.attach.pdf`), also when a server labels a PDF ``application/octet-stream``.
  Anything else raises :class:`~chatkeep.errors.AttachError` ("unsupported content type …").
- Title: trafilatura's metadata title, else ``<title>``, else the first Markdown heading (text),
  else the last URL path segment or the host.
- ``url`` of the result is the URL as the caller gave it (stable for change tracking);
  ``kind`` is ``"page"`` (``"pdf"`` for PDFs); ``fmt`` is ``html``, ``text``, ``markdown`` or
  ``pdf``.
- Unreachable hosts, timeouts, HTTP error statuses, oversized bodies, HTML over
  :data:`MAX_HTML_BYTES` (checked before parsing) and pages without any readable text raise
  ``AttachError`` with a hint.

httpx and trafilatura are imported lazily inside the functions so ``import chatkeep`` stays fast.
"""

from __future__ import annotations

import html as html_lib
import re
import time
from urllib.parse import urlsplit

from ..errors import AttachError
from .pdf import extract_pdf_bytes
from .sources import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_FETCH_BYTES,
    DEFAULT_TIMEOUT,
    Extracted,
    cap_text,
    decode_text,
    looks_binary,
    markdown_title,
    name_title,
)

__all__ = ["USER_AGENT", "extract_html", "extract_url", "html_charset"]

USER_AGENT = "Mozilla/5.0 (compatible; chatkeep/0.1; +https://pypi.org/project/chatkeep/)"

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = {"text/plain": "text", "text/markdown": "markdown", "text/x-markdown": "markdown"}
_PDF_TYPES = ("application/pdf", "application/x-pdf")
_SNIFF_TYPES = ("application/octet-stream", "binary/octet-stream", "")

_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_INDENT_RE = re.compile(r"^[ \t]+(?=\S)")
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_BLANKS_RE = re.compile(r"\n{3,}")


def html_charset(head: bytes) -> str | None:
    """The charset a ``<meta>`` tag declares in the first 4 KiB of an HTML document."""
    m = _META_CHARSET_RE.search(head[:4096])
    return m.group(1).decode("ascii", "ignore").lower() if m else None


def _tidy(text: str) -> str:
    """Drop source indentation from wrapped paragraph lines (not in code fences or lists)."""
    out: list[str] = []
    in_fence = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and not _LIST_RE.match(line):
            line = _INDENT_RE.sub("", line)
        out.append(line.rstrip() if not in_fence else line)
    return _BLANKS_RE.sub("\n\n", "\n".join(out)).strip()


_BLOCK_TAGS = (
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "aside",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "br",
    "hr",
    "figcaption",
    "address",
    "form",
)


def _visible_text(html: str) -> str:
    """All visible text of a page, one line per block (the fallback when no article is found)."""
    # lxml is imported lazily (it comes with trafilatura): importing chatkeep must stay light.
    import lxml.html

    try:
        doc = lxml.html.document_fromstring(html)
    except Exception:  # empty or unparsable document
        return ""
    for el in doc.xpath("//script|//style|//noscript|//template|//head|//svg"):
        el.drop_tree()
    for el in doc.iter(*_BLOCK_TAGS):
        el.tail = "\n" + (el.tail or "")
    lines = (" ".join(line.split()) for line in doc.text_content().splitlines())
    return "\n".join(line for line in lines if line)


def extract_html(html: str, *, url: str | None = None) -> tuple[str, str]:
    """``(title, main_text)`` of an HTML document; either may be ``""``."""
    # trafilatura (and lxml under it) are imported lazily: importing chatkeep must stay light.
    import trafilatura

    text = ""
    try:
        text = (
            trafilatura.extract(
                html,
                url=url,
                output_format="markdown",
                include_comments=False,
                include_tables=True,
                include_formatting=True,
                include_links=False,
            )
            or ""
        )
    except Exception:  # a page that breaks the article extractor still has visible text
        text = ""
    if not text.strip():
        text = _visible_text(html)
    title = ""
    try:
        meta = trafilatura.extract_metadata(html, default_url=url)
        title = (meta.title or "") if meta is not None else ""
    except Exception:
        title = ""
    if not title:
        m = _TITLE_RE.search(html)
        title = html_lib.unescape(m.group(1)) if m else ""
    return " ".join(title.split()), _tidy(text)


def _check_url(url: str) -> str:
    url = url.strip()
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - parsing the port is the check (a bad one raises)
    except ValueError as exc:  # an unclosed "[::1", a port that is not a number, …
        raise AttachError(
            f"malformed URL {url!r}: {exc}",
            hint="an IPv6 host goes in brackets, e.g. http://[::1]:8080/"
            if "[" in url
            else "check the address (a port is a number, e.g. http://example.org:8080/)",
        ) from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise AttachError(
            f"not a web address: {url!r}",
            hint="pass an http(s):// URL; attach local files by their path",
        )
    return url


def _fetch(url: str, timeout: float, max_bytes: int) -> tuple[bytes, str, str | None]:
    """``(body, media_type, charset)`` of a successful GET."""
    # httpx is imported lazily: importing chatkeep must not load HTTP libraries.
    import httpx

    deadline = time.monotonic() + timeout
    host = urlsplit(url).hostname
    too_large = AttachError(
        f"{url} is larger than the {max_bytes:,}-byte download limit",
        hint="download the file and attach it from disk, or raise the size limit",
    )
    try:
        with (
            httpx.Client(
                follow_redirects=True,
                timeout=httpx.Timeout(timeout),
                headers={
                    "User-Agent": USER_AGENT,
                    "Accept": "text/html,text/plain,application/pdf,*/*;q=0.5",
                },
            ) as client,
            client.stream("GET", url) as resp,
        ):
            if resp.status_code >= 400:
                raise AttachError(
                    f"{url} answered HTTP {resp.status_code} {resp.reason_phrase}".rstrip(),
                    hint=(
                        "check the address; the page may have moved or need a login"
                        if resp.status_code < 500
                        else "the site has a problem; try again later"
                    ),
                )
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise too_large
            chunks: list[bytes] = []
            size = 0
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise too_large
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("total download time exceeded")
            ctype = resp.headers.get("content-type", "")
    except AttachError:
        raise
    except httpx.TimeoutException:
        raise AttachError(
            f"{url} did not answer within {timeout:g} s",
            hint="the site is slow or unreachable; try again or raise the timeout",
        ) from None
    except httpx.TooManyRedirects:
        raise AttachError(
            f"{url} redirects too many times", hint="open it in a browser to check"
        ) from None
    except (httpx.ConnectError, httpx.NetworkError) as exc:
        raise AttachError(
            f"cannot reach {host}: {exc}",
            hint="check the address and your network connection",
        ) from None
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise AttachError(
            f"not a usable URL: {url!r} ({exc})", hint="pass an http(s):// URL"
        ) from None
    except httpx.HTTPError as exc:
        raise AttachError(f"fetching {url} failed: {exc}", hint="try again later") from None
    media, _, params = ctype.partition(";")
    m = re.search(r"charset\s*=\s*\"?([^\";\s]+)", params, re.I)
    return b"".join(chunks), media.strip().lower(), (m.group(1).lower() if m else None)


def _sniff(body: bytes) -> str:
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head:
        return "text/html"
    return ""


#: HTML larger than this is refused before extraction: main-text extraction of a page costs
#: about 35 MB of memory and 0.7 s per MB of markup, so this keeps one page under ~250 MB.
MAX_HTML_BYTES = 5 * 1024 * 1024


def page_from_html(
    body: bytes, *, url: str, charset: str | None, kind: str, max_chars: int
) -> Extracted:
    """An ``Extracted`` from HTML bytes (shared with local ``.html`` files)."""
    if len(body) > MAX_HTML_BYTES:
        raise AttachError(
            f"{name_title(url) or 'the page'} is {len(body):,} bytes of HTML, over the "
            f"{MAX_HTML_BYTES:,}-byte extraction limit",
            hint="save the page as text or PDF (print to PDF) and attach that file",
        )
    text_html = decode_text(body, charset or html_charset(body))
    title, text = extract_html(
        text_html, url=url if "://" in url and not url.startswith("file:") else None
    )
    if not text.strip():
        raise AttachError(
            f"no readable text found in {url or 'the page'}",
            hint="the page may be built by JavaScript; save it from your browser and attach the file",
        )
    text, truncated = cap_text(text, max_chars)
    return Extracted(
        kind=kind,
        title=title or markdown_title(text) or name_title(url),
        url=url,
        text=text,
        images=(),
        fmt="html",
        video_src=None,
        truncated=truncated,
    )


def page_from_text(text: str, *, url: str, fmt: str, kind: str, max_chars: int) -> Extracted:
    """An ``Extracted`` from plain text or Markdown, kept as it is."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if not text.strip():
        raise AttachError(f"{url or 'the source'} is empty", hint="attach a source that has text")
    capped, truncated = cap_text(text, max_chars)
    return Extracted(
        kind=kind,
        title=markdown_title(text) or name_title(url),
        url=url,
        text=capped,
        images=(),
        fmt=fmt,
        video_src=None,
        truncated=truncated,
    )


def extract_url(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_FETCH_BYTES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Extracted:
    """Fetch a web page (or a PDF or text served by URL) and extract what the model needs."""
    url = _check_url(url)
    body, media, charset = _fetch(url, timeout, max_bytes)
    if media in _SNIFF_TYPES:
        media = _sniff(body) or media
    if media in _HTML_TYPES:
        return page_from_html(body, url=url, charset=charset, kind="page", max_chars=max_chars)
    if media in _TEXT_TYPES:
        if looks_binary(body):
            raise AttachError(
                f"{url} is served as {media} but holds binary data",
                hint="download it and attach the file, or check the address",
            )
        fmt = _TEXT_TYPES[media]
        if fmt == "text" and urlsplit(url).path.lower().endswith((".md", ".markdown")):
            fmt = "markdown"
        return page_from_text(
            decode_text(body, charset), url=url, fmt=fmt, kind="page", max_chars=max_chars
        )
    if media in _PDF_TYPES:
        name = name_title(url)
        return extract_pdf_bytes(body, name=name, url=url, max_chars=max_chars)
    raise AttachError(
        f"unsupported content type {media or 'unknown'} at {url}",
        hint="chatkeep attaches web pages, plain text, Markdown and PDFs by URL; "
        "save other files and attach them from disk",
    )
