"""Condensing a long attachment is announced with its number of model calls and every call's
usage is counted by `chatkeep usage` (SPEC §7.5), through the CLI against the
loopback server, which counts the requests."""

from __future__ import annotations

import json
from pathlib import Path

import chatkeep
from clirun import run
from support.provider_server import Text, estimate_prompt_tokens, unauthorized


def _big_text(tmp_path: Path, size: int = 209_000) -> Path:
    """A plain-text file of about ``size`` bytes (numbered facts, one per line)."""
    lines, total, k = [], 0, 0
    while total < size:
        line = f"fact {k}: the measured value was {k * 3} units on day {k % 365}.\n"
        lines.append(line)
        total += len(line)
        k += 1
    path = tmp_path / "report.txt"
    path.write_text("".join(lines))
    return path


def _setup(db: Path, server) -> None:
    run(db, "provider", "add", "loop", "--style", "chat", "--base-url", server.url("/v1"),
        "--model", "loop-model", "--price-input", "2", "--price-output", "8")  # fmt: skip


def test_summary_calls_are_announced_and_counted(tmp_path: Path, provider_server) -> None:
    """A 209 KB text: one line announces N model calls before they run, N requests reach the
    server, `attach --json` says summaryCalls N, and `usage` counts exactly those N calls'
    tokens on a summary line (and in --json) — none of it in the settings or the requests."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    provider_server.script(Text("a short summary of this part"))
    proc = run(db, "attach", str(_big_text(tmp_path)), "--json")
    data = json.loads(proc.stdout)
    calls = len(provider_server.requests)
    assert calls == data["summaryCalls"] == 19 and data["summaryWritten"] is True
    announce = [ln for ln in proc.stderr.splitlines() if "model calls" in ln]
    assert (
        announce == [announce[0]]
        and f"condensing the attachment with the active provider in {calls} model calls"
        in (announce[0])
    )
    assert proc.stderr.index("model calls") < proc.stderr.index("call 1 of")
    sent_in = sum(estimate_prompt_tokens(r.body) for r in provider_server.requests)
    report = json.loads(run(db, "usage", "--json").stdout)
    assert report["summary"]["turns"] == calls and report["summary"]["input"] == sent_in
    assert report["totals"]["turns"] == calls and report["summary"]["cost"] > 0
    table = run(db, "usage").stdout
    summary_line = next(ln for ln in table.splitlines() if ln.startswith("summary "))
    assert f"{calls:,}" in summary_line and f"{sent_in:,}" in summary_line
    by_session = json.loads(run(db, "usage", "--by", "session", "--json").stdout)
    assert [g["key"] for g in by_session["groups"]] == ["summary"]
    with chatkeep.open(str(db)) as s:
        assert "summaryUsage" not in chatkeep.GET_ALL_KEYS and "summaryUsage" not in s.get_all()
        assert all("usage" not in e for e in s.history.read())
    preview = run(db, "request", "--json").stdout
    assert "summaryUsage" not in preview and "(summary call)" not in preview


def test_calls_before_a_failure_are_still_counted(tmp_path: Path, provider_server) -> None:
    """One call answers, the others are refused (401): the attachment stays raw and the one
    paid call is still counted by `usage`."""
    db = tmp_path / "ck.db"
    _setup(db, provider_server)
    with chatkeep.open(str(db)) as s:
        s.local.set("summarizeThresholdChars", 10_000)
    provider_server.queue(Text("one"))
    provider_server.script(unauthorized())
    data = json.loads(run(db, "attach", str(_big_text(tmp_path, 33_000)), "--json").stdout)
    assert data["summaryWritten"] is False and data["summaryCalls"] == 4
    report = json.loads(run(db, "usage", "--json").stdout)
    assert report["summary"]["turns"] == 1
