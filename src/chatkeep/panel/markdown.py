"""Safe Markdown for model output, rendered on the server (SPEC §11).

Contract of :func:`render_markdown`:

* Parsing is `markdown-it-py <https://markdown-it-py.readthedocs.io>`_ (CommonMark plus tables
  and strikethrough) with **raw HTML disabled**: every ``<`` ``>`` ``&`` ``"`` in the text comes
  out escaped, so ``<script>`` or ``<img onerror=…>`` in a reply is shown as text, never run.
* Images are disabled (a reply cannot make the browser fetch a remote URL); ``![a](u)`` shows as
  a link instead.
* Links keep only ``http``, ``https`` and ``mailto`` targets (anything else — ``javascript:``,
  ``data:``, ``file:``, relative paths — is left as plain text) and open in a new tab with
  ``rel="noopener noreferrer"``.
* ``[mm:ss]`` / ``[h:mm:ss]`` markers become timestamp pills. With ``video_url`` (an ``http(s)``
  URL, e.g. the ``videoSrc.url`` of a video attachment) a pill is a link that opens the video at
  that second (:func:`video_time_url`: YouTube ``t=<s>s``, Bilibili ``t=<s>``, Vimeo ``#t=<s>s``,
  anything else the media fragment ``#t=<s>``); without one it is a plain ``<span>``.
* Code blocks (fenced or indented) are highlighted on the server by
  `Pygments <https://pygments.org>`_ into class-named ``<span>`` tokens (no inline styles, so the
  strict CSP holds; the colours are in ``static/panel.css``) and framed as
  ``<div class="code-block">`` with a header naming the language and a **Copy** button (the
  page's script copies the block's text); the ``<pre>`` is focusable (``tabindex="0"``) so a
  keyboard user can scroll it. An unknown language is shown escaped, unhighlighted, under its
  given name. Tables sit in a focusable scrolling wrapper.
* Math — ``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``, never inside code — becomes
  ``<span class="math">`` holding the escaped TeX, typeset in the page by KaTeX
  (:mod:`chatkeep.panel.markdown_math`).
* A leading ``<think>…</think>`` block (reasoning models) becomes a ``<details class="thought">``
  block, itself rendered by the same rules, open unless ``collapse_thoughts``.

The output is the only stored text the panel ever inserts with ``innerHTML``.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .markdown_math import math_rule, render_math

__all__ = [
    "TIMESTAMP_RE",
    "code_block_html",
    "render_markdown",
    "render_markdown_cached",
    "split_thought",
    "video_time_url",
]

TIMESTAMP_RE = re.compile(r"\[(?:(\d{1,2}):)?(\d{1,2}):([0-5]\d)\]")
_THINK_RE = re.compile(r"^\s*<think>(.*?)(?:</think>|\Z)", re.S)
_SAFE_LINK_RE = re.compile(r"^(https?:|mailto:)", re.I)


@lru_cache(maxsize=1)
def _parser() -> Any:
    # Lazy: the Markdown parser is only needed when a reply is rendered.
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    # markdown-it-py's documented hook for link policy: keep only http(s) and mailto targets.
    md.validateLink = lambda url: bool(_SAFE_LINK_RE.match(url.strip()))  # type: ignore[method-assign]
    md.core.ruler.push("chatkeep_timestamps", _timestamp_rule)
    # TeX kept whole for the page's KaTeX, read before backslash escapes (markdown_math)
    md.inline.ruler.before("escape", "ck_math", math_rule)

    def link_open(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("target", "_blank")
        tokens[idx].attrSet("rel", "noopener noreferrer")
        return self.renderToken(tokens, idx, options, env)

    def timestamp(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        seconds = int(tok.meta["seconds"])
        label = html.escape(tok.content)
        target = video_time_url(env.get("video_url") or "", seconds)
        if target:
            return (
                f'<a class="ts-pill" href="{html.escape(target, quote=True)}" '
                f'data-seconds="{seconds}" target="_blank" rel="noopener noreferrer">{label}</a>'
            )
        return f'<span class="ts-pill" data-seconds="{seconds}">{label}</span>'

    def fence(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        info = (tokens[idx].info or "").strip()
        return code_block_html(tokens[idx].content, info.split()[0] if info else "")

    def table_open(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        return '<div class="table-wrap" tabindex="0" role="region" aria-label="Table">' + (
            self.renderToken(tokens, idx, options, env)
        )

    def table_close(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        return self.renderToken(tokens, idx, options, env) + "</div>"

    md.add_render_rule("fence", fence)
    md.add_render_rule("code_block", fence)
    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("ck_timestamp", timestamp)
    md.add_render_rule("ck_math", render_math)
    return md


@lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter  # lazy: only when a reply has code

    return HtmlFormatter(nowrap=True)


@lru_cache(maxsize=256)
def _lexer(lang: str) -> Any:
    from pygments.lexers import get_lexer_by_name  # lazy: only when a reply has code
    from pygments.util import ClassNotFound

    if not lang:
        return None
    try:
        return get_lexer_by_name(lang.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def code_block_html(code: str, lang: str = "") -> str:
    """One highlighted code block with its language label and copy button (see above)."""
    from pygments import highlight  # lazy: only when a reply has code

    lang = lang[:40]
    lexer = _lexer(lang)
    body = highlight(code, lexer, _formatter()) if lexer is not None else html.escape(code)
    label = html.escape(lexer.name if lexer is not None else (lang or "text"))
    css_lang = re.sub(r"[^a-z0-9_+-]", "", lang.lower()) or "text"
    return (
        f'<div class="code-block"><div class="code-head"><span class="code-lang">{label}</span>'
        f'<button type="button" class="code-copy" aria-label="Copy {label} code">Copy</button>'
        f'</div><pre tabindex="0" aria-label="{label} code"><code class="hl language-{css_lang}">'
        f"{body}</code></pre></div>\n"
    )


def _timestamp_rule(state: Any) -> None:
    """Split text tokens at ``[mm:ss]`` markers into ``ck_timestamp`` tokens (not inside links)."""
    from markdown_it.token import Token as token_cls  # the parser is loaded already

    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        out = []
        in_link = 0
        for tok in block.children:
            if tok.type == "link_open":
                in_link += 1
            elif tok.type == "link_close":
                in_link -= 1
            if tok.type != "text" or in_link or not TIMESTAMP_RE.search(tok.content):
                out.append(tok)
                continue
            pos = 0
            for m in TIMESTAMP_RE.finditer(tok.content):
                if m.start() > pos:
                    out.append(_text_token(token_cls, tok.content[pos : m.start()]))
                pill = token_cls("ck_timestamp", "", 0)
                hours, minutes, secs = (int(g) if g else 0 for g in m.groups())
                pill.content = m.group(0)
                pill.meta = {"seconds": hours * 3600 + minutes * 60 + secs}
                out.append(pill)
                pos = m.end()
            if pos < len(tok.content):
                out.append(_text_token(token_cls, tok.content[pos:]))
        block.children = out


def _text_token(token_cls: Any, content: str) -> Any:
    tok = token_cls("text", "", 0)
    tok.content = content
    return tok


def video_time_url(url: str, seconds: int) -> str:
    """``url`` opened at ``seconds``; ``""`` for anything that is not an http(s) URL."""
    try:
        parts = urlsplit((url or "").strip())
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    host = (parts.hostname or "").lower()
    seconds = max(0, int(seconds))

    def with_query(key: str, value: str) -> str:
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != key]
        query.append((key, value))
        return urlunsplit(parts._replace(query=urlencode(query), fragment=""))

    if host == "youtu.be" or host.endswith("youtube.com") or host.endswith("youtube-nocookie.com"):
        if "/embed/" in parts.path:
            return with_query("start", str(seconds))
        return with_query("t", f"{seconds}s")
    if host.endswith("bilibili.com") or host == "b23.tv":
        return with_query("t", str(seconds))
    if host.endswith("vimeo.com"):
        return urlunsplit(parts._replace(fragment=f"t={seconds}s"))
    return urlunsplit(parts._replace(fragment=f"t={seconds}"))


def split_thought(text: str) -> tuple[str | None, str]:
    """``(thought, answer)``: a leading ``<think>…</think>`` block split off (``None`` if absent).

    An unclosed ``<think>`` (a reply still streaming its reasoning) is all thought."""
    m = _THINK_RE.match(text or "")
    if not m:
        return None, text or ""
    return m.group(1).strip(), (text or "")[m.end() :].lstrip()


def render_markdown(
    text: str, *, video_url: str | None = None, collapse_thoughts: bool = True
) -> str:
    """Sanitized HTML for one reply (see the module docstring)."""
    env = {"video_url": video_url or ""}
    thought, answer = split_thought(text if isinstance(text, str) else "")
    body = _parser().render(answer, env) if answer else ""
    if thought is None:
        return body
    inner = _parser().render(thought, env) if thought else ""
    state = "" if collapse_thoughts else " open"
    return (
        f'<details class="thought"{state}><summary>Thoughts</summary>'
        f'<div class="thought-body">{inner}</div></details>{body}'
    )


@lru_cache(maxsize=2048)
def render_markdown_cached(text: str, video_url: str | None, collapse_thoughts: bool) -> str:
    """:func:`render_markdown`, remembered: a stored reply never changes, so the history view
    renders each one once per process."""
    return render_markdown(text, video_url=video_url, collapse_thoughts=collapse_thoughts)
