"""Streaming export and import (export_to / import_from): the same document as export_data,
one value per line, imported whole or not at all."""

from __future__ import annotations

import io
import json

import pytest

import chatkeep
from factories import assistant, attachment, image_entry, png_data_url, user


def _filled(s: chatkeep.Store) -> None:
    s.local.set({"maxHistoryEntries": 3, "systemPrompt": "short\nanswers", "fontSize": 16})
    s.history.append(image_entry("look", png_data_url(40, 30, noise=True)))
    s.history.append(assistant("a cat"))
    s.sessions.save("first")
    s.history.append(attachment("a long page " * 500))
    s.history.append(user("more"))
    s.history.append(assistant("done"))


def test_export_to_writes_the_export_document(store: chatkeep.Store) -> None:
    """json.load of what export_to wrote equals export_data(), and it has one value per line."""
    _filled(store)
    buf = io.StringIO()
    counts = store.export_to(buf)
    text = buf.getvalue()
    assert json.loads(text) == store.export_data()
    assert counts == {"keys": len(store.export_data()["local"]), "history": 3, "archived": 2}
    assert text.count("\n") >= counts["keys"] + counts["history"] + counts["archived"]


def test_import_from_round_trips(spec) -> None:
    """A profile streamed out and into an empty profile exports the same document."""
    with spec.open() as s:
        _filled(s)
        buf = io.StringIO()
        s.export_to(buf)
        before = s.export_data()
    with chatkeep.open(spec.url, profile=spec.profile + "_copy") as t:
        try:
            out = t.import_from(io.StringIO(buf.getvalue()))
            assert out["history"] == 3 and out["archived"] == 2 and out["sessions"] == 1
            assert t.export_data() == before
            assert t.sessions.list("cat")[0]["name"] == "first"
        finally:
            t.local.remove(t.local.keys())
            t.history.clear()


def test_import_from_empty_profile_document(store: chatkeep.Store, tmp_path) -> None:
    """An empty profile streams out and back in."""
    buf = io.StringIO()
    assert store.export_to(buf) == {"keys": 0, "history": 0, "archived": 0}
    with chatkeep.open(str(tmp_path / "other.db")) as t:
        assert t.import_from(io.StringIO(buf.getvalue()))["history"] == 0
        assert t.export_data() == store.export_data()


def test_import_from_bad_entry_changes_nothing(store: chatkeep.Store, tmp_path) -> None:
    """A streamed file with an invalid entry late in it imports nothing at all."""
    _filled(store)
    buf = io.StringIO()
    store.export_to(buf)
    broken = buf.getvalue().replace('{"role":"assistant","content":"done"}', '{"role":"robot"}')
    with chatkeep.open(str(tmp_path / "other.db")) as t:
        with pytest.raises(chatkeep.InvalidEntry):
            t.import_from(io.StringIO(broken))
        assert t.export_data()["local"] == {} and t.history.read() == []


def test_import_from_reads_other_layouts_whole(store: chatkeep.Store, tmp_path) -> None:
    """A file written by json.dump (any layout) imports as import_data would."""
    _filled(store)
    doc = store.export_data()
    with chatkeep.open(str(tmp_path / "other.db")) as t:
        t.import_from(io.StringIO(json.dumps(doc, indent=2)))
        assert t.export_data() == doc


def test_export_lines_are_export_to_and_export_text(store: chatkeep.Store) -> None:
    """export_lines() gives export_to's text line by line, and the json export is that text."""
    _filled(store)
    buf = io.StringIO()
    store.export_to(buf)
    lines = list(store.export_lines())
    assert "".join(line + "\n" for line in lines) == buf.getvalue()
    assert all("\n" not in line for line in lines)
    assert chatkeep.export_text(store) == buf.getvalue()


def test_import_from_refuses_content_after_the_end(store: chatkeep.Store, tmp_path) -> None:
    """Anything after the closing line of the streamed layout is refused; nothing changes."""
    _filled(store)
    buf = io.StringIO()
    store.export_to(buf)
    with chatkeep.open(str(tmp_path / "other.db")) as t:
        with pytest.raises(chatkeep.InvalidValue, match="after its end"):
            t.import_from(io.StringIO(buf.getvalue() + "]}\n"))
        assert t.export_data()["local"] == {} and t.history.read() == []
        assert t.import_from(io.StringIO(buf.getvalue() + "\n\n"))["history"] == 3
