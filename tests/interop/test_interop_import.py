"""Every foreign importer through the CLI: counts, names, times, active branches,
hidden nodes, images, attachments, idempotent re-import, and bad files refused whole."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import FIXTURES, all_text, by_name, chatgpt_zip, images, llm_db, saved

import chatkeep
from chatkeep.entries import is_attachment
from clirun import run

RED_PNG = (FIXTURES / "photo-red.png").read_bytes()


def _import(db: Path, path: Path, *args: str) -> dict:
    return json.loads(run(db, "import", str(path), "--json", *args).stdout)


def test_chatgpt_json_active_branch_only(db: Path) -> None:
    """ChatGPT: the branch ending at current_node is kept; edited-away turns are absent."""
    report = _import(db, FIXTURES / "chatgpt_conversations.json")
    assert (report["source"], report["conversations"], report["added"]) == ("chatgpt", 3, 3)
    s = by_name(db)
    lisbon = s["Trip to Lisbon"]
    text = all_text(lisbon)
    assert "What should I see in Lisbon?" in text
    assert "See the Belém tower" in text and "A red square" in text
    assert "ABANDONED" not in text
    assert [e["role"] for e in lisbon["history"]] == ["user", "assistant", "user", "assistant"]
    assert lisbon["createdAt"] == 1733000000500
    assert lisbon["history"][1]["provider"] == {"name": "chatgpt", "model": "gpt-4o"}
    assert s["Quick question"]["createdAt"] == 1733100000000


def test_chatgpt_hidden_system_context_and_tool_nodes_skipped(db: Path) -> None:
    """ChatGPT: hidden system and user_editable_context nodes are left out; thoughts and tool
    turns are kept on the answer of their turn (reasoning, toolCalls, toolResult), never in
    its text."""
    _import(db, FIXTURES / "chatgpt_conversations.json")
    lisbon = by_name(db)["Trip to Lisbon"]
    text = all_text(lisbon)
    assert "HIDDEN" not in text
    assert "HIDDEN-PROFILE" not in json.dumps(lisbon)
    answer = lisbon["history"][3]
    assert answer["reasoning"] == "x\nHIDDEN-THOUGHTS"
    assert answer["toolCalls"] == [
        {"name": "python", "arguments": "HIDDEN-TOOL-CALL print(1)", "id": "call"}
    ]
    assert answer["toolResult"] == [{"content": "HIDDEN-TOOL-OUTPUT 1", "id": "call"}]
    # the image's file is not in a bare conversations.json: it is named, not lost silently
    assert "[image not in the export: file-service://file-Img123]" in text


def test_chatgpt_time_too_large_for_a_float_is_left_out(db: Path, tmp_path: Path) -> None:
    """A message time that is an integer no float holds (a 400-digit number, as a hostile
    file may write) is no time: the message imports without one. It used to raise
    OverflowError, which stopped the whole import untyped."""
    node = {
        "id": "a",
        "parent": None,
        "children": [],
        "message": {
            "id": "a",
            "author": {"role": "user"},
            "create_time": "TIME",
            "content": {"content_type": "text", "parts": ["hello"]},
        },
    }
    conv = {"id": "c1", "title": "Huge", "current_node": "a", "mapping": {"a": node}}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]).replace('"TIME"', "1" + "0" * 400))
    assert _import(db, path)["added"] == 1
    assert by_name(db)["Huge"]["history"] == [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize("split", [False, True])
def test_chatgpt_zip_images_from_the_archive(db: Path, tmp_path: Path, split: bool) -> None:
    """ChatGPT zip (whole or split conversations-NNN.json): asset pointers become the images."""
    report = _import(db, chatgpt_zip(tmp_path, split=split))
    assert report["added"] == 3
    lisbon = by_name(db)["Trip to Lisbon"]
    urls = images(lisbon)
    assert len(urls) == 1
    assert base64.b64decode(urls[0].split(",", 1)[1]) == RED_PNG
    assert "not in the export" not in all_text(lisbon)
    cat = by_name(db)["Draw a cat"]  # a DALL·E image: the tool's picture kept, its chatter not
    assert [e["role"] for e in cat["history"]] == ["user", "assistant", "assistant"]
    assert len(images(cat)) == 1 and "HIDDEN" not in all_text(cat)


def test_chatgpt_unpacked_directory(db: Path, tmp_path: Path) -> None:
    """An unpacked export folder imports like its zip."""
    folder = tmp_path / "unpacked"
    folder.mkdir()
    shutil.copy(FIXTURES / "chatgpt_conversations.json", folder / "conversations.json")
    shutil.copy(FIXTURES / "photo-red.png", folder / "file-Img123-photo.png")
    assert _import(db, folder)["added"] == 3
    assert len(images(by_name(db)["Trip to Lisbon"])) == 1


def test_reimport_adds_nothing_and_live_history_untouched(db: Path) -> None:
    """Importing the same file twice adds nothing; the live history stays as it was."""
    with chatkeep.open(str(db)) as store:
        store.history.append({"role": "user", "content": "live question"})
    first = _import(db, FIXTURES / "chatgpt_conversations.json")
    again = _import(db, FIXTURES / "chatgpt_conversations.json")
    assert (first["added"], again["added"], again["already"]) == (3, 0, 3)
    assert len(saved(db)) == 3
    with chatkeep.open(str(db)) as store:
        assert store.history.read() == [{"role": "user", "content": "live question"}]
        assert store.sessions.active_id() == ""


def test_imported_sessions_are_searchable(db: Path) -> None:
    """Imported conversations are found by the drawer's content search at once."""
    _import(db, FIXTURES / "chatgpt_conversations.json")
    out = json.loads(run(db, "sessions", "list", "tram 28", "--json").stdout)
    assert [r["name"] for r in out] == ["Trip to Lisbon"]
    assert out[0]["contentMatch"] is True


def test_claude_attachments_become_attachment_entries(db: Path) -> None:
    """Claude: extracted attachment text is an attachment entry with chatkeep's prefix."""
    report = _import(db, FIXTURES / "claude_conversations.json")
    assert (report["source"], report["added"]) == ("claude", 2)
    notes = by_name(db)["Review my notes"]
    first = notes["history"][0]
    assert chatkeep.is_attachment(first)
    assert first["content"].startswith(chatkeep.PAGE_CONTEXT_PREFIX)
    assert (
        "Title: notes.txt" in first["content"]
        and "Ship the importer on Friday." in first["content"]
    )
    assert len(first["attachId"]) == 32
    assert "[file not in the export: whiteboard.jpg]" in notes["history"][1]["content"]
    assert notes["createdAt"] == 1763630100123


def test_claude_branches_follow_parent_uuids(db: Path) -> None:
    """Claude: with parent_message_uuid, the branch ending at the last message is kept."""
    _import(db, FIXTURES / "claude_conversations.json")
    haiku = all_text(by_name(db)["Haiku"])
    assert "Soft rain on the roof" in haiku and "ABANDONED" not in haiku


def test_openwebui_active_branch_and_images(db: Path) -> None:
    """Open WebUI: the branch from currentId to the root, with its data-URL image."""
    report = _import(db, FIXTURES / "openwebui_export.json")
    assert (report["source"], report["added"]) == ("openwebui", 1)
    sky = by_name(db)["Colour of the sky"]
    assert "Rayleigh scattering" in all_text(sky) and "ABANDONED" not in all_text(sky)
    assert len(sky["history"]) == 4 and len(images(sky)) == 1
    assert sky["createdAt"] == 1732000000000


@pytest.mark.parametrize("name", ["librechat_flat.json", "librechat_nested.json"])
def test_librechat_flat_and_nested(db: Path, name: str) -> None:
    """LibreChat: flat (parentMessageId) and nested (children) exports keep the shown branch."""
    report = _import(db, FIXTURES / name)
    assert (report["source"], report["added"]) == ("librechat", 1)
    (s,) = saved(db)
    assert len(s["history"]) == 2 and "ABANDONED" not in all_text(s)
    assert s["name"] in ("Sorting in Python", "Tea or coffee")


def test_sharegpt_and_jsonl(db: Path) -> None:
    """ShareGPT and OpenAI-messages JSON Lines: one session each; a system turn is kept as an
    attachment entry titled "System prompt", first in its session."""
    assert _import(db, FIXTURES / "sharegpt.json")["added"] == 2
    assert _import(db, FIXTURES / "openai_messages.jsonl")["added"] == 2
    names = by_name(db)
    assert "Translate 'cat' to French." in names
    for s in names.values():
        systems = [e for e in s["history"] if "SYSTEM" in str(e["content"])]
        assert systems in ([], s["history"][:1])
        for e in systems:
            assert is_attachment(e) and "Title: System prompt" in e["content"]
    assert sum("SYSTEM" in all_text(s) for s in names.values()) == 2
    assert len(images(names["Describe this image."])) == 1
    assert _import(db, FIXTURES / "openai_messages.jsonl")["added"] == 0


def test_llm_logs_db(db: Path, tmp_path: Path) -> None:
    """llm logs.db (responses era): conversations, names, the system prompt kept marked, an
    image attachment kept, a file attachment named (real databases: test_llm_real.py)."""
    logs = llm_db(tmp_path / "logs.db")
    report = _import(db, logs)
    assert report["source"] == "llm"
    s = by_name(db)
    haiku = s["Haiku workshop"]
    text = all_text(haiku)
    assert "Green hush on old stone" in text and "Red square, quiet sun" in text
    assert haiku["history"][0]["content"] == "[System prompt]\nBe terse"
    assert len(images(haiku)) == 1
    assert haiku["createdAt"] == 1748772000000
    assert report["added"] == 2 and "One-off question" in s
    assert "[attachment not in the export: /nowhere/x.pdf (application/pdf)]" in text
    assert _import(db, logs)["added"] == 0


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("garbled.json", '[{"mapping": {"a": {"id": "a", "parent": null, "children": [], '),
        ("empty.json", ""),
        ("binary.json", "\x00\x01\x02 not json"),
        ("unknown.json", '[{"some": "thing"}]'),
        ("badline.jsonl", '{"messages": [{"role": "user", "content": "hi"}]}\n{not json}\n'),
    ],
)
def test_bad_files_are_refused_and_import_nothing(
    db: Path, tmp_path: Path, name: str, body: str
) -> None:
    """A garbled or unknown file is a typed error (exit 3, hint) and no session is added."""
    _import(db, FIXTURES / "sharegpt.json")
    path = tmp_path / name
    path.write_text(body)
    proc = run(db, "import", str(path), ok=False)
    assert proc.returncode == 3, proc.stderr
    assert "nothing was imported" in proc.stderr and "hint:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(saved(db)) == 2


def test_truncated_chatgpt_export_rolls_back_whole(db: Path, tmp_path: Path) -> None:
    """A file that breaks after valid conversations imports none of them (one transaction)."""
    text = (FIXTURES / "chatgpt_conversations.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: int(len(text) * 0.9)])
    proc = run(db, "import", str(cut), ok=False)
    assert proc.returncode == 3
    assert saved(db) == []


def test_wrong_from_is_refused(db: Path) -> None:
    """Naming the wrong format is refused with a hint, nothing imported."""
    proc = run(
        db, "import", str(FIXTURES / "claude_conversations.json"), "--from", "chatgpt", ok=False
    )
    assert proc.returncode == 3 and "not a ChatGPT conversation" in proc.stderr
    assert saved(db) == []


def test_invalid_entry_in_a_session_export_is_refused(db: Path, tmp_path: Path) -> None:
    """A session export holding an entry the store cannot hold is an InvalidEntry; nothing saved."""
    doc = {
        "format": "chatkeep-session",
        "version": 1,
        "session": {
            "id": "abcd1234",
            "name": "Bad",
            "createdAt": 1,
            "pinned": False,
            "history": [{"role": "robot", "content": "hi"}],
        },
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    proc = run(db, "import", str(path), ok=False)
    assert proc.returncode == 3 and "conversation 1" in proc.stderr, proc.stderr
    assert saved(db) == []


def test_sharegpt_one_per_line(db: Path, tmp_path: Path) -> None:
    """ShareGPT conversations written one per line (JSON Lines) are detected and imported."""
    doc = json.loads((FIXTURES / "sharegpt.json").read_text())
    path = tmp_path / "sharegpt.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in doc))
    assert _import(db, path)["added"] == 2
    assert "Translate 'cat' to French." in by_name(db)


def test_import_from_stdin(db: Path) -> None:
    """`import -` reads the export from standard input."""
    text = (FIXTURES / "claude_conversations.json").read_text()
    report = json.loads(run(db, "import", "-", "--json", stdin=text).stdout)
    assert (report["source"], report["added"]) == ("claude", 2)


def test_progress_reports_bytes_up_to_the_file_size(db: Path) -> None:
    """import_file calls the progress callback with (done, total) bytes, ending at the size."""
    path = FIXTURES / "chatgpt_conversations.json"
    calls: list[tuple[int, int]] = []
    with chatkeep.open(str(db)) as store:
        chatkeep.import_file(store, str(path), progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (path.stat().st_size, path.stat().st_size)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_claude_zip(db: Path, tmp_path: Path) -> None:
    """Claude's export zip (conversations.json beside users.json) is detected and imported."""
    import zipfile

    path = tmp_path / "claude-export.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.write(FIXTURES / "claude_conversations.json", "conversations.json")
        z.writestr("users.json", "[]")
    report = _import(db, path)
    assert (report["source"], report["added"]) == ("claude", 2)


def test_import_into_postgres_through_the_cli(tmp_path: Path, pg_spec: Any) -> None:
    """On PostgreSQL too: the zip imports, the second time adds nothing, a bad file nothing."""
    url = pg_spec.url
    profile = ["--profile", pg_spec.profile]
    zipped = chatgpt_zip(tmp_path)
    first = json.loads(run(url, *profile, "import", str(zipped), "--json").stdout)
    again = json.loads(run(url, *profile, "import", str(zipped), "--json").stdout)
    assert (first["added"], again["added"]) == (3, 0)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"mapping": {}}, {"broken": ')
    assert run(url, *profile, "import", str(bad), ok=False).returncode == 3
    listed = json.loads(run(url, *profile, "sessions", "list", "Belém", "--json").stdout)
    assert [r["name"] for r in listed] == ["Trip to Lisbon"]
    with pg_spec.open() as store:
        assert len(store.sessions.list()) == 3
        store.sessions.clear_all()


def test_an_image_type_the_store_refuses_is_named_not_fatal(db: Path, tmp_path: Path) -> None:
    """A foreign image of a type the store does not keep is named in the text; the rest imports."""
    svg = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="
    line = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "icon?"},
                    {"type": "image_url", "image_url": {"url": svg}},
                ],
            },
            {"role": "assistant", "content": "a circle"},
        ]
    }
    path = tmp_path / "svg.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert _import(db, path)["added"] == 1
    (s,) = saved(db)
    text = all_text(s)
    assert "icon?" in text and ("[image not kept: image/svg+xml]" in text or images(s) == [svg])


def test_import_of_a_missing_file_is_missing_file_from_the_library(tmp_path: Path) -> None:
    """chatkeep.import_file on a path that does not exist raises MissingFile (the CLI's
    missing-file kind), not a bad-value error, and writes nothing."""
    with chatkeep.open(str(tmp_path / "s.db")) as store:
        with pytest.raises(chatkeep.MissingFile):
            chatkeep.import_file(store, str(tmp_path / "nope.json"))
        assert store.sessions.list() == []
