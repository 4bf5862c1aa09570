"""The auto-summary chunker: line cuts, atomic code fences and tables, repeated table headers."""

from __future__ import annotations

import pytest

from chatkeep.conversation import chunk_text

TABLE_HEAD = "| name | value |\n|:-----|------:|\n"


def table(rows: int, start: int = 0) -> str:
    return TABLE_HEAD + "".join(f"| row {k} | {k * 7} |\n" for k in range(start, start + rows))


def fence(lines: int, opener: str = "```python") -> str:
    return opener + "\n" + "".join(f"value_{k} = {k}\n" for k in range(lines)) + "```\n"


def test_blank_text_gives_no_chunks():
    """Empty or whitespace-only text has nothing to summarize."""
    assert chunk_text("") == [] and chunk_text(" \n\n ") == []


def test_short_text_is_one_chunk_unchanged():
    """Text under the limit comes back whole."""
    text = "one\ntwo\nthree"
    assert chunk_text(text) == [text]


def test_cuts_on_line_boundaries_and_round_trips():
    """Chunks respect the limit, end at line ends and join back to the text."""
    text = "".join(f"line number {k} with some words\n" for k in range(500))
    chunks = chunk_text(text, 1000)
    assert len(chunks) > 10
    assert all(len(c) <= 1000 and c.endswith("\n") for c in chunks)
    assert "".join(chunks) == text


def test_default_limit_is_twelve_thousand():
    """Without a limit, chunks are at most 12,000 characters."""
    text = "".join(f"{k:06d} " * 10 + "\n" for k in range(1000))
    chunks = chunk_text(text)
    assert len(text) > 70_000
    line = len(text.splitlines(keepends=True)[0])
    assert all(12_000 - line < len(c) <= 12_000 for c in chunks[:-1])  # packed full, never over
    assert "".join(chunks) == text


def test_code_fence_that_fits_is_never_split():
    """A fenced block moves whole to the next chunk rather than being cut."""
    before = "intro text line\n" * 30
    code = fence(20)
    text = before + code + "after\n"
    limit = len(before) + len(code) // 2
    chunks = chunk_text(text, limit)
    assert sum(code in c for c in chunks) == 1
    assert "".join(chunks) == text


def test_tilde_fence_with_pipes_inside_is_not_a_table():
    """Pipes inside a code block do not start a table; the block stays whole."""
    code = "~~~\n| a | b |\n|---|---|\n| 1 | 2 |\n~~~\n"
    text = "x\n" * 40 + code
    chunks = chunk_text(text, len(code) + 10)
    assert sum(code in c for c in chunks) == 1


def test_oversized_fence_is_closed_and_reopened():
    """A code block bigger than a chunk is cut between lines, each piece a valid fence."""
    code = fence(200)
    chunks = chunk_text(code, 500)
    assert len(chunks) > 3
    for c in chunks:
        assert len(c) <= 500
        assert c.startswith("```python\n") and c.endswith("```\n")
    inner = "".join(c[len("```python\n") : -len("```\n")] for c in chunks)
    assert inner == "".join(f"value_{k} = {k}\n" for k in range(200))


def test_table_that_fits_is_atomic():
    """A table moves whole into the next chunk instead of being split."""
    before = "paragraph line\n" * 20
    tab = table(10)
    chunks = chunk_text(before + tab, len(before) + 20)
    assert tab in chunks[-1] and sum(tab in c for c in chunks) == 1


def test_continued_table_repeats_its_header_rows():
    """A table bigger than a chunk: every continuation starts with header + delimiter rows."""
    tab = table(300)
    text = "Results\n\n" + tab + "Closing words\n"
    chunks = chunk_text(text, 1200)
    with_rows = [c for c in chunks if "| row " in c]
    assert len(with_rows) > 3
    assert all(len(c) <= 1200 for c in chunks)
    for c in with_rows:
        assert TABLE_HEAD in c
        start = c.index(TABLE_HEAD)
        assert "| row " not in c[:start]  # the header comes before any row of the piece
    rows = [line for c in chunks for line in c.splitlines() if line.startswith("| row ")]
    assert rows == [f"| row {k} | {k * 7} |" for k in range(300)]
    assert chunks[-1].endswith("Closing words\n")


def test_overlong_single_line_is_cut():
    """A line longer than the limit is the only thing cut mid-line."""
    text = "a" * 2500
    chunks = chunk_text(text, 1000)
    assert [len(c) for c in chunks] == [1000, 1000, 500] and "".join(chunks) == text


def test_tiny_limit_is_rejected():
    """A limit too small to hold a fence frame is a programming error."""
    with pytest.raises(ValueError):
        chunk_text("x", 4)
