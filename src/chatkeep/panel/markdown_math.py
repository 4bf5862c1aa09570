"""Math in replies (SPEC §11): TeX between ``$…$``, ``$$…$$``, ``\\(…\\)`` and ``\\[…\\]`` is kept
whole by the Markdown parser and handed to the page, which typesets it with KaTeX (vendored in
``static/katex``, loaded only when a reply holds math).

:func:`math_rule` is a markdown-it inline rule that runs before backslash escapes, so the TeX
reaches the page exactly as the model wrote it (``\\\\``, ``_``, ``*`` and ``\\{`` untouched).
It never looks inside code: code spans and code blocks are consumed by their own rules first,
and math never spans a backtick (``$10 … `$x$` `` stays text and code). A
single ``$`` opens math only when a non-space follows it, and closes it only after a non-space
and not before a digit, so prices ("$5 and $10") stay text; a delimiter with no partner is text.
:func:`render_math` writes ``<span class="math">TeX</span>`` (``math display`` for ``$$`` and
``\\[``): the TeX escaped, so without the script the reader sees the source.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["math_rule", "render_math"]

_PAIRS = (("$$", "$$", True), ("\\[", "\\]", True), ("\\(", "\\)", False))


def _closing_dollar(src: str, start: int, end: int) -> int:
    """Where the single ``$`` opened before ``start`` closes, or -1."""
    i = start
    while i < end:
        ch = src[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`":  # a code span starts before any closing: not math
            return -1
        if ch == "$":
            after = src[i + 1] if i + 1 < end else ""
            if not src[i - 1].isspace() and not after.isdigit():
                return i
        i += 1
    return -1


def _math_at(src: str, pos: int, end: int) -> tuple[str, bool, int] | None:
    """``(TeX, display, position after it)`` of math starting at ``pos``, or ``None``."""
    for opener, closer, display in _PAIRS:
        if src.startswith(opener, pos):
            close = src.find(closer, pos + len(opener), end)
            tex = src[pos + len(opener) : close] if close >= 0 else ""
            if not tex.strip() or "`" in tex:
                return None
            return tex, display, close + len(closer)
    if src[pos] != "$" or pos + 1 >= end or src[pos + 1].isspace():
        return None
    close = _closing_dollar(src, pos + 1, end)
    return None if close < 0 else (src[pos + 1 : close], False, close + 1)


def math_rule(state: Any, silent: bool) -> bool:
    """The inline rule (see the module docstring)."""
    src, pos, end = state.src, state.pos, state.posMax
    found = _math_at(src, pos, end) if src[pos] in "$\\" else None
    if found is None:
        return False
    tex, display, after = found
    if not silent:
        token = state.push("ck_math", "", 0)
        token.content = tex.strip()
        token.meta = {"display": display}
    state.pos = after
    return True


def render_math(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """The render rule of ``ck_math`` tokens."""
    tok = tokens[idx]
    kind = "math display" if tok.meta.get("display") else "math"
    return f'<span class="{kind}">{html.escape(tok.content)}</span>'
