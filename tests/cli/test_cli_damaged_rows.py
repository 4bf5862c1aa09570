"""A damaged stored row (not JSON, a truncated array) is skipped and reported, never a crash:
every reading command answers with what is readable, `stats` and `doctor` name the damage."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import chatkeep
from clirun import chatkeep_exe

DAMAGE = ("{not json", "[1,2", '{"role": "user", "content": "cut', "")


def _ck(spec: Any, *args: str, ok_codes: tuple[int, ...] = (0,)) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    proc = subprocess.run(
        [chatkeep_exe(), "--store", spec.url, "--profile", spec.profile, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode in ok_codes, (args, proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "SystemError" not in proc.stderr, proc.stderr
    return proc


def _fill(spec: Any) -> None:
    with spec.open() as store:
        store.local.set("maxHistoryEntries", 4)
        for i in range(8):
            store.history.append({"role": "user", "content": f"question number {i}"})
        store.sessions.save("Kept session")
        store.sessions.new()
        store.history.append({"role": "user", "content": "live and well"})
        store.history.append({"role": "assistant", "content": "still readable"})
        store.history.append({"role": "user", "content": "last live words"})


def _damage(spec: Any, bad: str) -> None:
    p = spec.profile
    spec.raw_rows(
        "UPDATE ck_history SET value = ? WHERE profile = ? AND pos = "
        "(SELECT min(pos) FROM ck_history WHERE profile = ?)",
        (bad, p, p),
    )
    spec.raw_rows(
        "UPDATE ck_archive SET value = ? WHERE profile = ? AND seq = "
        "(SELECT min(seq) FROM ck_archive WHERE profile = ?)",
        (bad, p, p),
    )
    spec.raw_rows("UPDATE ck_kv SET value = ? WHERE profile = ? AND key = 'systemPrompt'", (bad, p))


@pytest.mark.parametrize("bad", DAMAGE)
def test_damaged_rows_are_skipped_by_every_reading_command(
    spec: Any, bad: str, tmp_path: Path
) -> None:
    """`history`, `history --archived`, `stats`, `export`, `sessions list/show`, `config list`
    and `request` answer around a damaged row (exit 0, no traceback); stats and doctor count it."""
    _fill(spec)
    with spec.open() as store:
        store.local.set("systemPrompt", "custom prompt")
    _damage(spec, bad)

    shown = _ck(spec, "history").stdout
    assert "still readable" in shown and "last live words" in shown
    listed = json.loads(_ck(spec, "history", "--json").stdout)
    assert [e["content"] for e in listed][-2:] == [
        [{"type": "text", "text": "still readable"}],
        [{"type": "text", "text": "last live words"}],
    ] or [e.get("content") for e in listed][-2:] == ["still readable", "last live words"]
    archived = _ck(spec, "history", "--archived").stdout
    assert "question number" in archived
    stats = json.loads(_ck(spec, "stats", "--json").stdout)
    assert stats["unreadableEntries"] >= 1
    out = tmp_path / "out.json"
    _ck(spec, "export", "-o", str(out))
    exported = out.read_text()
    assert "last live words" in exported and "Kept session" in exported
    assert "Kept session" in _ck(spec, "sessions", "list").stdout
    config = _ck(spec, "config", "list", "--json").stdout
    assert json.loads(config)["settings"]["systemPrompt"] == chatkeep.DEFAULTS["systemPrompt"]
    _ck(spec, "request", "--json", "--text", "next", ok_codes=(0, 7))
    doctor = _ck(spec, "doctor", "--json", ok_codes=(4,))
    assert "unreadable" in doctor.stdout


def test_damaged_session_body_reads_as_missing_not_a_crash(spec: Any, tmp_path: Path) -> None:
    """A saved session whose stored body is cut off: `sessions show` says so with a hint and
    `sessions list`, `stats` and `export` still answer."""
    _fill(spec)
    spec.raw_rows(
        "UPDATE ck_kv SET value = ? WHERE profile = ? AND substr(key, 1, 8) = 'session_'",
        ("[1,2", spec.profile),
    )
    rows = json.loads(_ck(spec, "sessions", "list", "--json").stdout)
    assert [r["name"] for r in rows] == ["Kept session"]
    show = _ck(spec, "sessions", "show", rows[0]["id"], ok_codes=(0, 1, 2, 3, 4, 5, 6))
    assert "Traceback" not in show.stderr
    _ck(spec, "stats")
    _ck(spec, "export", "--format", "md", "-o", str(tmp_path / "out.md"))
