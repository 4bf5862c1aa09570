"""No export file among the fixtures imports nothing with exit 0 (SPEC §14): every file under
``tests/fixtures/interop`` — the producers' own files under ``real/`` and the older ones beside
them — imports at least one conversation through the CLI, and every conversation it
leaves out is reported with a reason. Importing it a second time adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interop"
FILES = sorted(
    p
    for p in FIXTURES.rglob("*")
    if p.is_file() and p.suffix in (".json", ".jsonl", ".db", ".md") and p.name != "SOURCES.md"
)


def test_the_fixtures_are_found() -> None:
    assert len(FILES) >= 25  # the list below is not vacuous
    assert any(p.suffix == ".db" for p in FILES) and any("real" in p.parts for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_imports_something_or_says_why(tmp_path: Path, path: Path) -> None:
    db = tmp_path / "store.db"
    result = run(db, "import", str(path), "--json", ok=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["conversations"] >= 1 and report["added"] >= 1, report
    assert report["added"] + report["already"] + len(report["skipped"]) <= report["conversations"]
    for skipped in report["skipped"]:
        assert skipped["where"] and skipped["reason"], skipped
    again = json.loads(run(db, "import", str(path), "--json").stdout)
    assert again["added"] == 0 and again["already"] == report["added"]
