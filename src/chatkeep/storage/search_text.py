"""The text side of message search (SPEC §16), pure: what an entry gives the index, how a
query is split into terms, how a matching chunk is scored and how its snippet is cut.

An entry's searchable text is its text (string content, or its text parts joined with
``\\n`` — attachment bodies included, every character, image bytes never) cut into chunks of
:data:`CHUNK` characters that overlap by :data:`OVERLAP`, so a term shorter than the overlap
that straddles a cut is still whole in one chunk, and a hit reads one bounded chunk, never a
whole megabyte-long attachment.

A query is split on white space into terms (a ``"quoted phrase"`` stays one term); a chunk
matches when it holds every term as a case-insensitive substring. Snippets mark each matched
span with ``<mark>`` … ``</mark>``; the rest of the snippet is the stored text as it is (faces
escape it, and split on the markers).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from typing import Any

from ..limits import check_text

#: Characters per indexed chunk, and how many of them the next chunk repeats.
CHUNK = 4000
OVERLAP = 256
#: Characters a snippet shows around its first match.
SNIPPET_CHARS = 200
MARK_OPEN = "<mark>"
MARK_CLOSE = "</mark>"
#: Terms a query may hold, and characters per term (longer ones are cut).
MAX_TERMS = 16
MAX_TERM_CHARS = OVERLAP

_QUOTED = re.compile(r'"([^"]+)"|(\S+)')


def chunks(text: str) -> list[str]:
    """``text`` in overlapping chunks (none for an empty text)."""
    if not text:
        return []
    if len(text) <= CHUNK:
        return [text]
    step = CHUNK - OVERLAP
    out = []
    for start in range(0, len(text), step):
        out.append(text[start : start + CHUNK])
        if start + CHUNK >= len(text):
            break
    return out


def stored_text(value: Any, resolve: Callable[[str], str]) -> str:
    """The text of one stored entry (parsed as stored, blob markers left in): string content
    or its text parts joined with ``\\n``. ``resolve(s)`` gives back a NUL-prefixed stored
    string (a long text's blob marker, or an escape); image parts are never looked at."""
    if not isinstance(value, dict):
        return ""
    content = value.get("content")
    if isinstance(content, str):
        return resolve(content) if content.startswith("\x00") else content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in ("text", "input_text"):
            t = part.get("text")
            if isinstance(t, str):
                texts.append(resolve(t) if t.startswith("\x00") else t)
    return "\n".join(texts)


def text_hash(role: str, text: str) -> str:
    """A short fingerprint of one entry's indexed text (a rewrite re-indexes changed ones)."""
    return hashlib.sha1((role + "\x00" + text).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def entry_fields(value: Any) -> tuple[str, int | None]:
    """(role, createdAt) of a stored entry (``createdAt`` only when it is a plain number)."""
    if not isinstance(value, dict):
        return "", None
    role = value.get("role")
    created = value.get("createdAt")
    when: int | None = None
    if isinstance(created, int | float) and not isinstance(created, bool):
        when = int(created) if 0 <= created < 1e15 else None
    return role if isinstance(role, str) else "", when


def terms(query: str) -> list[str]:
    """The terms of a query: words, and ``"quoted phrases"`` kept whole; duplicates once."""
    out: list[str] = []
    for quoted, word in _QUOTED.findall(query):
        term = (quoted or word).strip()[:MAX_TERM_CHARS].replace("\x00", "")
        if term and term.lower() not in (t.lower() for t in out):
            out.append(term)
    return out[:MAX_TERMS]


def _pattern(found: list[str]) -> re.Pattern[str]:
    ordered = sorted(found, key=len, reverse=True)  # the longest term wins an overlap
    return re.compile("|".join(re.escape(t) for t in ordered), re.IGNORECASE)


def holds_all(text: str, found: list[str]) -> bool:
    """Whether ``text`` holds every term (case-insensitive)."""
    low = text.lower()
    return all(t.lower() in low for t in found)


def score(text: str, found: list[str]) -> float:
    """How well a chunk answers the terms: each term counts by how often it occurs (a whole
    word counts more than part of one), the whole query as one phrase adds, and a long chunk
    weighs a little less than a short one saying the same."""
    low = text.lower()
    total = 0.0
    for t in found:
        lt = t.lower()
        n = low.count(lt)
        if not n:
            continue
        total += 1.0 + math.log(n)
        if re.search(r"(?<!\w)" + re.escape(lt) + r"(?!\w)", low):
            total += 0.5
    if len(found) > 1 and " ".join(found).lower() in low:
        total += 1.0
    return round(total / (1.0 + 0.15 * math.log1p(len(text) / 500)), 4)


def snippet(text: str, found: list[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around its first match, every matched span
    marked; ``…`` where the text goes on. White space runs show as one space."""
    pattern = _pattern(found) if found else None
    first = pattern.search(text) if pattern is not None else None
    at = first.start() if first is not None else 0
    start = max(0, at - width // 3)
    if start:  # begin at a word where one is near
        space = text.rfind(" ", max(0, start - 20), start)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.find(" ", end, end + 20)
        end = space if space >= 0 else end
    piece = text[start:end]
    out: list[str] = []
    last = 0
    if pattern is not None:
        for m in pattern.finditer(piece):
            out.append(_flat(piece[last : m.start()]))
            out.append(MARK_OPEN + _flat(m.group(0)) + MARK_CLOSE)
            last = m.end()
    out.append(_flat(piece[last:]))
    return ("…" if start else "") + "".join(out).strip() + ("…" if end < len(text) else "")


_SPACES = re.compile(r"\s+")


def _flat(s: str) -> str:
    return _SPACES.sub(" ", s)


def split_snippet(snip: str) -> list[tuple[str, bool]]:
    """A snippet as (text, marked) pieces, for faces that render the marks themselves."""
    check_text(snip, "the snippet")
    out: list[tuple[str, bool]] = []
    rest = snip
    while True:
        i = rest.find(MARK_OPEN)
        j = rest.find(MARK_CLOSE, i + len(MARK_OPEN)) if i >= 0 else -1
        if i < 0 or j < 0:
            if rest:
                out.append((rest, False))
            return out
        if i:
            out.append((rest[:i], False))
        out.append((rest[i + len(MARK_OPEN) : j], True))
        rest = rest[j + len(MARK_CLOSE) :]
