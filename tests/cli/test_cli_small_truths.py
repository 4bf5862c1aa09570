"""Small untruths the command line used to tell: a preview that needed an API key, a
read-only store called a problem by ``doctor``, and counts such as "1 images"."""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from PIL import Image

import chatkeep
from chatkeep.cli.main import EXIT_CODES
from clirun import chatkeep_exe, run


def test_request_preview_works_without_the_cards_key(tmp_path: Path) -> None:
    """`request --provider claude` with ANTHROPIC_API_KEY unset previews (exit 0), builds the
    card's own format and says no key is set; a send still refuses."""
    db = tmp_path / "ck.db"
    run(db, "provider", "add", "claude", "--style", "anthropic", "--base-url",
        "http://127.0.0.1:9/v1", "--model", "claude-x", "--api-key-env", "ANTHROPIC_API_KEY")  # fmt: skip
    proc = run(db, "request", "--provider", "claude")
    assert "next request: anthropic claude-x" in proc.stdout
    assert "no API key is set" in proc.stdout and "ANTHROPIC_API_KEY" in proc.stdout
    preview = json.loads(run(db, "request", "--provider", "claude", "--json").stdout)
    assert preview["style"] == "anthropic" and preview["problem"] is None
    assert "ANTHROPIC_API_KEY" in preview["keyProblem"]["message"]
    send = run(db, "chat", "hi", "--provider", "claude", ok=False)
    assert send.returncode == EXIT_CODES["provider-config"] and "ANTHROPIC_API_KEY" in send.stderr


def _drop_dac() -> None:
    """Run the child without the capabilities that let root ignore file permissions."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _ro_run(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chatkeep_exe(), "--store", str(store), *args],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")},
        preexec_fn=_drop_dac if os.geteuid() == 0 else None,
        timeout=60,
    )


@pytest.fixture
def readonly_store(tmp_path: Path) -> Path:
    """A store with a conversation, its file then made 0400 (read-only for its owner)."""
    path = tmp_path / "ck.db"
    with chatkeep.open(str(path)) as s:
        s.history.append({"role": "user", "content": "keep me"})
        s.sessions.save("kept")
    path.chmod(0o400)
    probe = _ro_run(path, "sessions", "save", "probe")
    if probe.returncode == 0:
        pytest.skip("this process can write a 0400 file (file permissions are not enforced)")
    yield path
    path.chmod(0o600)


def test_doctor_notes_a_read_only_store(readonly_store: Path) -> None:
    """doctor on a 0400 store exits 0, saying in a note that it is read-only; --repair exits 0
    saying it cannot repair a read-only store, and changes nothing."""
    before = readonly_store.read_bytes()
    plain = _ro_run(readonly_store, "doctor")
    assert plain.returncode == 0, plain.stderr
    assert "note: the store is read-only" in plain.stdout and "healthy" in plain.stdout
    repair = _ro_run(readonly_store, "doctor", "--repair")
    assert repair.returncode == 0, repair.stderr
    assert "cannot repair a read-only store: nothing was changed" in repair.stdout
    assert "error:" not in repair.stderr
    report = json.loads(_ro_run(readonly_store, "doctor", "--repair", "--json").stdout)
    assert report["healthy"] and report["readOnly"] and report["problems"] == []
    assert readonly_store.read_bytes() == before


def test_counts_are_singular_for_one(tmp_path: Path) -> None:
    """One image, one char and one remaining problem are printed in the singular."""
    db = tmp_path / "ck.db"
    image = tmp_path / "dot.png"
    Image.new("RGB", (4, 4), "red").save(image)
    run(db, "attach", str(image))
    preview = run(db, "request", "--text", "x").stdout
    assert "1 image " in preview and "1 images" not in preview and "image(s)" not in preview
    assert "(1 image)" in preview  # the naive request's count
    with sqlite3.connect(db) as con:  # one damaged row, written behind chatkeep's back
        con.execute("INSERT INTO ck_kv (profile, key, value) VALUES ('default', 'broken', '{nope')")
    doctor = run(db, "doctor", ok=False)
    assert doctor.returncode == EXIT_CODES["store"]
    assert "1 problem remains" in doctor.stderr and "problem(s)" not in doctor.stderr


def test_import_and_load_counts_are_singular_for_one(tmp_path: Path) -> None:
    """Importing one conversation and loading a one-entry session say "1 conversation",
    "1 new saved session" and "1 entry", never "1 conversations"."""
    db = tmp_path / "ck.db"
    src = tmp_path / "one.jsonl"
    src.write_text('{"messages": [{"role": "user", "content": "only one"}]}\n', encoding="utf-8")
    out = run(db, "import", str(src)).stdout
    assert "imported 1 conversation from jsonl (1 message, 0 images): 1 new saved session" in out
    assert "conversations" not in out and "sessions" not in out
    sid = json.loads(run(db, "sessions", "list", "--json").stdout)[0]["id"]
    loaded = run(db, "sessions", "load", sid).stdout
    assert loaded.strip().endswith(": 1 entry")
