"""Hostile import files through the console script: each refused with exit 3 and a hint,
nothing imported, in bounded time (no hang on a FIFO or a crafted llm database) and memory (no
zip member, device, line or blank run read past its budget); and the llm reader linear in the
number of responses."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from interop_helpers import FIXTURES, saved

from chatkeep.interop import llmdb
from chatkeep.interop.source import Input
from clirun import chatkeep_exe, run
from hostile.corpus_imports import (
    MB,
    PNG_SIG,
    chatgpt_conv,
    chatgpt_zip,
    deflated,
    export_dir,
    fifo,
    link,
    sparse,
)
from hostile.corpus_llm import llm_db


def _limit_memory() -> None:
    """Run in the child: 1.5 GB of address space, so an unbounded read fails instead of
    taking the machine's memory."""
    resource.setrlimit(resource.RLIMIT_AS, (1536 * MB, 1536 * MB))


def _refused(db: Path, path: Path) -> str:
    """Import ``path`` with the console script (memory-limited, 30 s at most): exit 3 with a
    hint, no traceback, and the one session imported before still the only one."""
    import subprocess

    run(db, "import", str(FIXTURES / "openai_messages.jsonl"))
    before = saved(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    started = time.monotonic()
    proc = subprocess.run(
        [chatkeep_exe(), "--store", str(db), "import", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        preexec_fn=_limit_memory,
    )
    assert time.monotonic() - started < 20
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "nothing was imported" in proc.stderr and "hint:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert saved(db) == before
    return proc.stderr


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "zip image member inflating to 300 MB": (
        lambda d: chatgpt_zip(d, (*deflated(PNG_SIG, b"\x00", 300 * MB), 300 * MB)),
        "larger than 50 MB",
    ),
    "folder image symlinked to /dev/zero": (
        lambda d: export_dir(d, link("/dev/zero")),
        "is a device, not a regular file",
    ),
    "folder image that is a FIFO": (lambda d: export_dir(d, fifo), "FIFO"),
    "import path that is a FIFO": (lambda d: fifo(d / "conversations.json"), "FIFO"),
    "llm responses as a recursive view": (
        lambda d: llm_db(
            d,
            extra="DROP TABLE responses; CREATE VIEW responses AS WITH RECURSIVE n(i) AS"
            " (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT 'r' || i AS id, 'm' AS model,"
            " 'q' AS prompt, 'a' AS response, NULL AS conversation_id, i AS datetime_utc FROM n;",
        ),
        "`responses` is a view",
    ),
    "llm attachment path that is a FIFO": (
        lambda d: llm_db(d, att=(str(fifo(d / "a.png")), None)),
        "FIFO",
    ),
    "JSON Lines line of 500 MB": (
        lambda d: sparse(
            d / "x.jsonl",
            500 * MB,
            b'{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": "',
        ),
        "line 2 is larger than 128 MB",
    ),
    "ChatGPT object followed by 20 MB of spaces": (
        lambda d: _write(d / "c.json", json.dumps(chatgpt_conv(None)).encode() + b" " * (20 * MB)),
        "blank space",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_import_file_refused_in_bounds(db: Path, tmp_path: Path, name: str) -> None:
    """A hostile import file is refused (exit 3, hint, nothing imported) within 1.5 GB and 20 s."""
    make, says = CASES[name]
    work = tmp_path / "case"
    work.mkdir()
    assert says in _refused(db, make(work))


def _responses_without_conversation(path: Path, n: int) -> Path:
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, response TEXT,"
        " conversation_id TEXT, datetime_utc TEXT)"
    )
    conn.executemany(
        "INSERT INTO responses VALUES (?, 'm', ?, ?, NULL, ?)",
        ((f"r{i:06d}", f"q{i}", f"a{i}", f"2025-01-01T{i:09d}") for i in range(n)),
    )
    conn.commit()
    conn.close()
    return path


def test_llm_reader_is_linear_in_responses(tmp_path: Path) -> None:
    """10,000 llm responses without a conversation id are read as 10,000 conversations in
    order in a few seconds (a query per conversation rescanned the table: about 25 s)."""
    path = _responses_without_conversation(tmp_path / "logs.db", 10_000)
    inp = Input(str(path))
    started = time.monotonic()
    convs = list(llmdb.read(inp))
    took = time.monotonic() - started
    assert len(convs) == 10_000
    assert [c.source_id for c in convs[:3]] == ["r000000", "r000001", "r000002"]
    assert convs[-1].entries[0]["content"] == "q9999"
    assert took < 5, took
