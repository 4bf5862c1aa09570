"""``chatkeep search`` (SPEC §10, §16): hits with place, position and snippet; ``--json``
with the library's hit shape; matched words highlighted on a terminal; typed errors."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import chatkeep
from chatkeep.cli.main import cli
from clirun import run


def _fill(db: Path) -> str:
    with chatkeep.open(str(db)) as store:
        store.history.append({"role": "user", "content": "where do [bold]puffins[/bold] nest?"})
        store.history.append({"role": "assistant", "content": "Puffins nest in burrows."})
        row = store.sessions.save("Seabirds")
        assert row is not None
        store.sessions.new()
        store.history.append({"role": "user", "content": "and gannets? \x1b[31m"})
        return str(row["id"])


def test_search_prints_place_position_and_snippet(tmp_path: Path) -> None:
    """Each hit: its place (session name and id), ``#index``, role, and the snippet; user
    text is never read as markup and control characters are escaped."""
    db = tmp_path / "s.db"
    sid = _fill(db)
    out = run(db, "search", "--text", "puffins").stdout
    assert f"session Seabirds [{sid[:8]}]  #0  user" in out
    assert f"session Seabirds [{sid[:8]}]  #1  assistant" in out
    assert "where do [bold]puffins[/bold] nest?" in out
    assert "\x1b" not in run(db, "search", "--text", "gannets").stdout
    assert "\\x1b[31m" in run(db, "search", "--text", "gannets").stdout


def test_search_json_is_the_library_hit_list(tmp_path: Path) -> None:
    """``--json`` prints exactly what ``store.search`` returns; ``-n``/``--offset`` page."""
    db = tmp_path / "s.db"
    _fill(db)
    got = json.loads(run(db, "search", "--text", "nest", "--json").stdout)
    with chatkeep.open(str(db)) as store:
        assert got == store.search("nest", mode="text")
    assert [h["index"] for h in got] == [1, 0]  # the reply says it as a whole word, first
    page = json.loads(
        run(db, "search", "--text", "nest", "-n", "1", "--offset", "1", "--json").stdout
    )
    assert page == got[1:2]
    assert set(got[0]) == {
        "where", "sessionId", "sessionName", "index", "role", "createdAt", "snippet", "score"
    }  # fmt: skip


def test_search_where_narrows_and_words_join(tmp_path: Path) -> None:
    """``--where`` keeps those places; several words are one query (all must occur)."""
    db = tmp_path / "s.db"
    _fill(db)
    live = json.loads(run(db, "search", "--text", "--where", "live", "gannets", "--json").stdout)
    assert [(h["where"], h["index"]) for h in live] == [("live", 0)]
    assert (
        json.loads(run(db, "search", "--text", "--where", "archive", "gannets", "--json").stdout)
        == []
    )
    both = json.loads(run(db, "search", "--text", "puffins", "burrows", "--json").stdout)
    assert [h["index"] for h in both] == [1]


def test_highlight_on_a_terminal(tmp_path: Path) -> None:
    """Matched spans are bold yellow when colour is on, and nothing else is styled in the
    snippet; without colour the text is plain."""
    db = tmp_path / "s.db"
    _fill(db)
    runner = CliRunner()
    coloured = runner.invoke(cli, ["--store", str(db), "search", "--text", "burrow"], color=True)
    assert coloured.exit_code == 0, coloured.output
    assert "in \x1b[33m\x1b[1mburrow\x1b[0ms." in coloured.output
    flat = runner.invoke(cli, ["--store", str(db), "search", "--text", "burrow"])
    assert "Puffins nest in burrows." in flat.output and "\x1b" not in flat.output


def test_no_hit_and_bad_input(tmp_path: Path) -> None:
    """No hit says so on stderr (exit 0); --text with --semantic is a usage error."""
    db = tmp_path / "s.db"
    _fill(db)
    none = run(db, "search", "--text", "albatross")
    assert none.stdout == "" and "no messages found" in none.stderr
    both = run(db, "search", "--text", "--semantic", "x", ok=False)
    assert both.returncode == 2 and "exclude each other" in both.stderr
