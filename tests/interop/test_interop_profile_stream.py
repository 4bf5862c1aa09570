"""The whole-profile json export and import through the CLI, streamed: the file is
the one-value-per-line layout ``Profile.export_to`` writes, it round-trips exactly (images in the
archive, the live history, saved sessions), standard input still imports, and a truncated or
corrupt file imports nothing and leaves the store as it was."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

import chatkeep
from clirun import run
from factories import assistant, attachment, image_entry, png_data_url, user

HEAD = '{"format":"chatkeep-export","version":1,'


def _fill(db: Path) -> None:
    """Images in the archive and in a saved session, a live window of 3, two sessions."""
    with chatkeep.open(str(db)) as s:
        s.local.set({"maxHistoryEntries": 3, "systemPrompt": "short\nanswers"})
        for i in range(4):
            s.history.append(image_entry(f"shot {i}", png_data_url(30, 20, noise=True)))
            s.history.append(assistant(f"seen {i}", imagesSeen=True))
        s.sessions.save("with images")
        s.history.append(attachment("page text " * 300, title="Notes"))
        s.history.append(user("é ü \u2028 \r\n tab\t"))
        s.sessions.save("second")
        s.history.append(assistant("live answer"))
        assert s.history.archived_count() > 0


def _export(db: Path) -> dict:
    with chatkeep.open(str(db)) as s:
        return s.export_data()


def test_cli_round_trip_with_archived_images_and_sessions(tmp_path: Path) -> None:
    """export -o → import into an empty store → the same document; stdout gives the same bytes."""
    db = tmp_path / "src.db"
    _fill(db)
    out = tmp_path / "profile.json"
    run(db, "export", "-o", str(out))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    text = out.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == HEAD and lines[-1] == "]}"
    assert json.loads(text) == _export(db)
    assert any("data:image/png;base64," in x for x in lines[lines.index('"archive":[') :])
    assert run(db, "export").stdout == text
    with chatkeep.open(str(db)) as s:
        assert chatkeep.export_text(s) == text

    other = tmp_path / "other.db"
    report = json.loads(run(other, "import", str(out), "--json").stdout)
    before = _export(db)
    assert report["source"] == "chatkeep" and report["renamedSessions"] == []
    assert report["history"] == len(before["history"]) == 3
    assert report["archived"] == len(before["archive"]) and report["sessions"] == 2
    assert _export(other) == before
    assert run(other, "export").stdout == text
    with chatkeep.open(str(db)) as a, chatkeep.open(str(other)) as b:
        assert [r["id"] for r in b.sessions.list()] == [r["id"] for r in a.sessions.list()]
        for row in a.sessions.list():
            assert b.sessions.get(row["id"]) == a.sessions.get(row["id"])


def test_stdin_import_and_replace(tmp_path: Path) -> None:
    """import - reads the export from standard input; a store with data needs --replace."""
    db = tmp_path / "src.db"
    _fill(db)
    text = run(db, "export").stdout
    other = tmp_path / "other.db"
    assert "imported chatkeep data: 3 live entries" in run(other, "import", "-", stdin=text).stdout
    assert _export(other) == _export(db)
    refused = run(other, "import", "-", stdin=text, ok=False)
    assert refused.returncode == 4 and "--replace" in refused.stderr
    with chatkeep.open(str(other)) as s:
        s.local.set("extra", 1)
    run(other, "import", "-", "--replace", stdin=text)
    assert _export(other) == _export(db)


def _broken(text: str) -> dict[str, str]:
    lines = text.splitlines(keepends=True)
    archive = lines.index('"archive":[\n')
    start = text.index('\n"history":[\n')
    image_line = next(i for i in range(archive, len(lines)) if "base64," in lines[i])
    return {
        "truncated": text[: len(text) * 3 // 4],
        "cut-after-archive": "".join(lines[: archive + 2]),
        "bad-line": "".join(lines[:image_line] + ['{"role":"user","content":\n'])
        + "".join(lines[image_line + 1 :]),
        "bad-entry": text[:start] + text[start:].replace('"role":"user"', '"role":"robot"', 1),
        "not-utf8": text[:200] + "\udcff" + text[200:],
        "after-end": text + '{"more": 1}\n',
    }


@pytest.mark.parametrize(
    "case", ["truncated", "cut-after-archive", "bad-line", "bad-entry", "not-utf8", "after-end"]
)
def test_a_broken_export_imports_nothing(tmp_path: Path, case: str) -> None:
    """A cut, corrupt or extended export is refused (exit 3) and the store is unchanged, even
    with --replace into a store that holds data; an empty store stays empty."""
    db = tmp_path / "src.db"
    _fill(db)
    bad = tmp_path / "bad.json"
    bad.write_bytes(
        _broken(run(db, "export").stdout)[case].encode("utf-8", errors="surrogateescape")
    )
    before = _export(db)
    proc = run(db, "import", str(bad), "--replace", ok=False)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("error: ") and "hint:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert _export(db) == before
    empty = tmp_path / "empty.db"
    assert run(empty, "import", str(bad), ok=False).returncode == 3
    after = _export(empty)
    assert (after["local"], after["history"], after["archive"]) == ({}, [], [])


def test_other_layouts_of_the_export_still_import(tmp_path: Path) -> None:
    """An export written whole by json.dump (one line, or indented) imports to the same store."""
    db = tmp_path / "src.db"
    _fill(db)
    doc = _export(db)
    for i, dumped in enumerate((json.dumps(doc, ensure_ascii=False), json.dumps(doc, indent=2))):
        path = tmp_path / f"doc{i}.json"
        path.write_text(dumped, encoding="utf-8")
        other = tmp_path / f"other{i}.db"
        run(other, "import", str(path))
        assert _export(other) == doc
