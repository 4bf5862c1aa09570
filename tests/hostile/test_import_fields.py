"""Wrong-typed fields of foreign exports, as a property (issue 31, item 4).

Each example starts from a published-sample fixture of one format (tests/fixtures/interop:
ChatGPT as a file and as a zip with its image, Claude, LibreChat flat and nested, Open WebUI,
ShareGPT, OpenAI-messages JSON Lines; chatkeep's own one-session JSON and Markdown exports, made
here), walks the document, and at one to three drawn places
replaces the value by a value of another JSON type (null, a boolean, a number, a string, a
list, an object, ~200 levels of nesting) or removes the key. The file is written and imported
through the library (``chatkeep.import_file``, detected or named with ``source``), a few also
through the CLI. Either sessions are added, or a chatkeep error is raised (the
CLI: a typed exit status, no traceback) and the store is exactly as it was.
``budget(...)``: the CI figure; ``make fuzz`` runs 50×."""

from __future__ import annotations

import base64
import copy
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import chatkeep
from chatkeep import ChatkeepError
from chatkeep.interop.markdown import END, ENTRY_MARK, SESSION_MARK
from clirun import run
from hostile.strategies import budget, json_values, nest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "interop"

#: (format name for ``source``, fixture, how it is written: json, jsonl or zip)
SAMPLES = [
    ("chatgpt", "chatgpt_conversations.json", "json"),
    ("chatgpt", "chatgpt_conversations.json", "zip"),
    ("claude", "claude_conversations.json", "json"),
    ("librechat", "librechat_flat.json", "json"),
    ("librechat", "librechat_nested.json", "json"),
    ("openwebui", "openwebui_export.json", "json"),
    ("sharegpt", "sharegpt.json", "json"),
    ("jsonl", "openai_messages.jsonl", "jsonl"),
    ("jsonl", "real/llama-factory/reason_tool_use_demo_50.jsonl", "jsonl"),
    ("jsonl", "real/llama-factory/mllm_demo.json", "json"),
    ("sharegpt", "real/llama-factory/glaive_toolcall_en_demo.json", "json"),
    ("sillytavern", "real/sillytavern/Megumin/1673323621108.jsonl", "jsonl"),
    (
        "sillytavern",
        "real/sillytavern-handmade/Seraphina/Seraphina - 2025-09-26@15h04m33s123ms.jsonl",
        "jsonl",
    ),
    ("chatkeep", "chatkeep-session", "json"),
    ("chatkeep", "chatkeep-markdown", "md"),
]


DEEP = "\x00DEEP"  # a string value written as that many nested lists
RED_PNG = (FIXTURES / "photo-red.png").read_bytes()


def _own_exports() -> dict[str, str]:
    """chatkeep's own session export and Markdown export of a session with an image."""
    from chatkeep.interop import export_text

    url = "data:image/png;base64," + base64.b64encode(RED_PNG).decode()
    with chatkeep.open(":memory:") as store:
        store.history.append(
            {"role": "user", "content": [{"type": "text", "text": "look\nhere"},
                                         {"type": "image_url", "image_url": {"url": url}}]}
        )  # fmt: skip
        store.history.append(
            {"role": "assistant", "content": "red", "provider": {"name": "p", "model": "m"}}
        )
        sid = store.sessions.save("one")["id"]
        return {
            "chatkeep-session": export_text(store, "json", sid),
            "chatkeep-markdown": export_text(store, "md", sid),
        }


OWN = _own_exports()
MD_MARKS = (SESSION_MARK, ENTRY_MARK)


def _load(name: str, layout: str) -> Any:
    text = OWN[name] if name in OWN else (FIXTURES / name).read_text(encoding="utf-8")
    if layout == "md":  # its lines, each chatkeep comment as [mark, its JSON object]
        return [
            [mark, json.loads(line[len(mark) : -len(END)])] if line.startswith(MD_MARKS) else line
            for line in text.split("\n")
            for mark in [next((m for m in MD_MARKS if line.startswith(m)), "")]
        ]
    if layout == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


DOCS = {(name, layout): _load(name, layout) for _fmt, name, layout in SAMPLES}

#: Values of each JSON type, hostile ones included; "deep" nests past every depth limit.
BY_TYPE: dict[str, st.SearchStrategy[Any]] = {
    "null": st.none(),
    "bool": st.booleans(),
    "number": st.one_of(
        st.integers(min_value=-(2**63), max_value=2**63),
        st.integers(min_value=10**30, max_value=10**40),
        st.floats(allow_nan=False),
    ),
    "string": st.one_of(
        st.text(max_size=12),
        st.sampled_from(
            [
                "",
                "\x00",
                "\ud800",
                "user",
                "assistant",
                "image_asset_pointer",
                "file-Img123",
                "text",
                "image",
                "0001-01-01T00:00:00+23:59",
            ]
        ),
    ),  # fmt: skip
    "list": st.one_of(
        st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=3),
        json_values.filter(lambda v: isinstance(v, list)),
    ),
    "object": st.one_of(
        st.dictionaries(st.text(max_size=5), st.one_of(st.none(), st.integers()), max_size=3),
        json_values.filter(lambda v: isinstance(v, dict)),
    ),
    "deep": st.one_of(
        st.builds(nest, st.sampled_from([95, 200]), st.sampled_from(["x", 1]), st.booleans()),
        st.sampled_from([5000, 100_000]).map(lambda n: f"{DEEP}{n}"),
    ),
}


def _deep_text(text: str) -> str:
    """The written JSON with each ``DEEP<n>`` placeholder as ``n`` nested lists (too deep for
    the interpreter's own JSON encoder to write)."""
    needle = json.dumps(DEEP)[:-1]  # the opening quote and the escaped NUL, without the close
    while (k := text.find(needle)) >= 0:
        end = text.index('"', k + len(needle))
        n = int(text[k + len(needle) : end])
        text = text[:k] + "[" * n + "]" * n + text[end + 1 :]
    return text


def _type_of(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "null" if value is None else "bool"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", dict: "object"}.get(type(value), "list")  # a tuple is written as a list


def _paths(doc: Any) -> list[tuple[Any, ...]]:
    """Every place in a document down to 30 levels: the root, each key's value, each list
    element (an iterative walk: a deep value put in by an earlier draw is not walked)."""
    out: list[tuple[Any, ...]] = []
    todo: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while todo:
        at, value = todo.pop()
        out.append(at)
        if len(at) < 30 and isinstance(value, dict | list):
            pairs = value.items() if isinstance(value, dict) else enumerate(value)
            todo.extend(((*at, k), v) for k, v in pairs)
    return sorted(out, key=lambda p: (len(p), repr(p)))


def _mutate(doc: Any, at: tuple[Any, ...], new: Any, drop: bool) -> Any:
    """``doc`` with the value at ``at`` replaced by ``new`` (or its key removed)."""
    if not at:
        return new
    parent = doc
    for step in at[:-1]:
        parent = parent[step]
    if drop and isinstance(parent, dict):
        del parent[at[-1]]
    else:
        parent[at[-1]] = new
    return doc


@st.composite
def variants(draw: st.DrawFn) -> tuple[str, str, Any]:
    """(format, layout, a fixture document with one to three wrong-typed places)."""
    fmt, name, layout = draw(st.sampled_from(SAMPLES))
    doc = copy.deepcopy(DOCS[(name, layout)])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.sampled_from(_paths(doc)))
        old = doc
        for step in at:
            old = old[step]
        kind = draw(st.sampled_from([k for k in BY_TYPE if k != _type_of(old)]))
        doc = _mutate(doc, at, draw(BY_TYPE[kind]), draw(st.integers(0, 5)) == 0)
    return fmt, layout, doc


def _write(folder: Path, layout: str, doc: Any, ascii_only: bool) -> Path:
    def dumps(value: Any) -> str:
        return _deep_text(json.dumps(value, ensure_ascii=ascii_only))

    if layout == "md":
        path = folder / "export.md"
        lines = [
            v[0] + dumps(v[1]) + END
            if isinstance(v, list) and len(v) == 2 and v[0] in MD_MARKS
            else v
            if isinstance(v, str)
            else dumps(v)
            for v in (doc if isinstance(doc, list) else [doc])
        ]
        path.write_text("\n".join(lines), encoding="utf-8", errors="replace")
        return path
    if layout == "jsonl":
        path = folder / "export.jsonl"
        lines = doc if isinstance(doc, list) else [doc]
        path.write_text(
            "\n".join(dumps(v) for v in lines) + "\n", encoding="utf-8", errors="replace"
        )
        return path
    text = dumps(doc)
    if layout == "zip":
        path = folder / "export.zip"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("conversations.json", text.encode("utf-8", "replace"))
            z.writestr("file-Img123-photo.png", RED_PNG)
        return path
    path = folder / "export.json"
    path.write_text(text, encoding="utf-8", errors="replace")
    return path


def _seeded(path: Path) -> chatkeep.Store:
    """A store holding one session and a live turn, so 'unchanged' has something to compare."""
    store = chatkeep.open(str(path))
    store.history.append({"role": "user", "content": "kept before the import"})
    store.sessions.add_many(
        [({"id": "before", "name": "before"}, [{"role": "user", "content": "x"}])]
    )
    return store


@budget(400)
@given(variant=variants(), named=st.booleans(), ascii_only=st.booleans())
def test_wrong_typed_field_imports_or_is_refused_with_store_unchanged(
    variant: tuple[str, str, Any], named: bool, ascii_only: bool
) -> None:
    """A wrong-typed field of any format adds sessions or raises a chatkeep error, store unchanged."""
    fmt, layout, doc = variant
    with tempfile.TemporaryDirectory(prefix="ck-fields-") as tmp:
        folder = Path(tmp)
        path = _write(folder, layout, doc, ascii_only)
        store = _seeded(folder / "store.db")
        try:
            before = store.export_data()
            try:
                report = chatkeep.import_file(store, str(path), source=fmt if named else "auto")
            except ChatkeepError as exc:
                assert exc.message
                assert store.export_data() == before, "a refused import changed the store"
                return
            added = report.get("sessions", [])
            assert report.get("added", 0) == len(added)
            for sid in added:
                assert store.sessions.get(sid) is not None
        finally:
            store.close()


@budget(12)
@given(variant=variants(), named=st.booleans())
def test_wrong_typed_field_through_the_console_script(
    variant: tuple[str, str, Any], named: bool
) -> None:
    """`chatkeep import` of a wrong-typed field exits 0 or with a typed status, never a traceback."""
    fmt, layout, doc = variant
    with tempfile.TemporaryDirectory(prefix="ck-fields-cli-") as tmp:
        folder = Path(tmp)
        path = _write(folder, layout, doc, True)
        db = folder / "store.db"
        _seeded(db).close()
        with chatkeep.open(str(db)) as store:
            before = store.export_data()
        args = ["import", str(path), *(["--from", fmt] if named else [])]
        proc = run(db, *args, ok=False)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 3, 4), proc.stderr
        if proc.returncode:
            assert proc.stderr.strip()
            with chatkeep.open(str(db)) as store:
                assert store.export_data() == before


def test_a_title_with_a_lone_surrogate_keeps_its_conversation(tmp_path: Path) -> None:
    """A title no store can write (a lone surrogate) imports with U+FFFD in its place."""
    doc = copy.deepcopy(DOCS[("claude_conversations.json", "json")])
    doc[0]["name"] = "Review \ud800 notes"
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with chatkeep.open(str(tmp_path / "store.db")) as store:
        report = chatkeep.import_file(store, str(path))
        assert report["added"] == len(doc) and not report["skipped"]
        names = {r["name"] for r in store.sessions.list()}
        assert "Review \ufffd notes" in names


def test_a_nameless_session_export_with_a_null_entry_is_a_typed_error(tmp_path: Path) -> None:
    """A session export with no name and a null entry is a typed error, store unchanged."""
    doc = copy.deepcopy(DOCS[("chatkeep-session", "json")])
    del doc["session"]["name"]
    doc["session"]["history"][0] = None
    path = tmp_path / "session.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with _seeded(tmp_path / "store.db") as store:
        before = store.export_data()
        try:
            chatkeep.import_file(store, str(path))
        except chatkeep.InvalidValue as exc:
            assert "entry[0] must be an object" in exc.message
        else:
            raise AssertionError("a session export with a null entry was accepted")
        assert store.export_data() == before
