"""Splitting long attachment text into chunks for the auto-summary (SPEC §7.5).

``chunk_text(text, limit=12000) -> list[str]``

* Every chunk is at most ``limit`` characters and chunks follow the text in order.
* Cuts fall on line boundaries. Blocks are atomic: a fenced code block (```` ``` ```` or ``~~~``,
  up to its closing fence or the end of the text) and a Markdown table (a header line with
  ``|``, a delimiter row, then the ``|`` rows) are never cut while they fit in one chunk.
* A block larger than ``limit`` is cut between its lines, and every piece stays readable on its
  own: a continued table repeats its header rows (header + delimiter row) at the top of each new
  chunk; a continued code block closes its fence at the end of a piece and reopens it (same
  opening line) at the start of the next.
* A single line longer than ``limit`` is cut into ``limit``-sized pieces (the only mid-line cut).
* When nothing had to be cut inside a block or line, ``"".join(chunks) == text``.
* Empty or blank text gives ``[]``.

Pure, standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_CHUNK_CHARS", "chunk_text"]

DEFAULT_CHUNK_CHARS = 12_000

_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DELIMITER_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass
class _Block:
    kind: str  # "line" | "fence" | "table"
    lines: list[str]

    @property
    def text(self) -> str:
        return "".join(self.lines)


def _closes(line: str, fence: str) -> bool:
    char = fence[0]
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and len(stripped) >= len(fence)
        and stripped == char * len(stripped)
    )


def _is_delimiter(line: str) -> bool:
    return "|" in line and "-" in line and bool(_DELIMITER_RE.match(line))


def _blocks(text: str) -> list[_Block]:
    lines = text.splitlines(keepends=True)
    out: list[_Block] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        m = _FENCE_RE.match(line)
        if m:
            j = i + 1
            while j < n and not _closes(lines[j], m.group(1)):
                j += 1
            end = min(j + 1, n)
            out.append(_Block("fence", lines[i:end]))
            i = end
            continue
        if "|" in line and i + 1 < n and _is_delimiter(lines[i + 1]):
            j = i + 2
            while j < n and lines[j].strip() and "|" in lines[j]:
                j += 1
            out.append(_Block("table", lines[i:j]))
            i = j
            continue
        out.append(_Block("line", [line]))
        i += 1
    return out


def _hard(s: str, size: int) -> list[str]:
    return [s[k : k + size] for k in range(0, len(s), size)] or [s]


def _pack(lines: list[str], limit: int) -> list[str]:
    """Greedy line packing; over-long lines are cut."""
    chunks: list[str] = []
    cur: list[str] = []
    size = 0
    for line in lines:
        for seg in _hard(line, limit):
            if cur and size + len(seg) > limit:
                chunks.append("".join(cur))
                cur, size = [], 0
            cur.append(seg)
            size += len(seg)
    if cur:
        chunks.append("".join(cur))
    return chunks


def _framed(head: str, rows: list[str], tail: str, last_tail: str, limit: int) -> list[str]:
    """Pieces ``head + rows… + tail`` (``last_tail`` on the final piece), each ≤ ``limit``."""
    room = limit - len(head) - max(len(tail), len(last_tail))
    if room < limit // 4:
        return _pack([head, *rows, last_tail], limit)
    bodies = _pack(rows, room) or [""]
    return [
        head + body + (last_tail if k == len(bodies) - 1 else tail) for k, body in enumerate(bodies)
    ]


def _split(block: _Block, limit: int) -> list[str]:
    lines = block.lines
    if block.kind == "table":
        head = lines[0] + lines[1]
        if not head.endswith("\n"):
            return _pack(lines, limit)
        return _framed(head, lines[2:], "", "", limit)
    if block.kind == "fence":
        opening = lines[0] if lines[0].endswith("\n") else lines[0] + "\n"
        fence = _FENCE_RE.match(lines[0]).group(1)  # type: ignore[union-attr]
        closed = len(lines) > 1 and _closes(lines[-1], fence)
        inner = lines[1:-1] if closed else lines[1:]
        last_tail = lines[-1] if closed else ""
        return _framed(opening, inner, fence + "\n", last_tail, limit)
    return _pack(lines, limit)


def chunk_text(text: str, limit: int = DEFAULT_CHUNK_CHARS) -> list[str]:
    """Chunks of at most ``limit`` characters (see the module docstring)."""
    if limit < 16:
        raise ValueError("limit must be at least 16 characters")
    if not text or not text.strip():
        return []
    chunks: list[str] = []
    cur: list[str] = []
    size = 0
    for block in _blocks(text):
        piece = block.text
        if size + len(piece) <= limit:
            cur.append(piece)
            size += len(piece)
            continue
        if cur:
            chunks.append("".join(cur))
            cur, size = [], 0
        if len(piece) <= limit:
            cur, size = [piece], len(piece)
            continue
        parts = _split(block, limit)
        chunks.extend(parts[:-1])
        cur, size = [parts[-1]], len(parts[-1])
    if cur:
        chunks.append("".join(cur))
    return chunks
