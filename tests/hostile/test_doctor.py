"""``chatkeep doctor``: every problem kind is found, ``--repair`` fixes what is safe without
deleting user content, and the CLI exits 0 when healthy, 4 when problems remain."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import chatkeep
from clirun import run

BLOB = "data:image/png;base64," + "B" * 400


def _raw(store: chatkeep.Store, sql: str, params: tuple[Any, ...]) -> None:
    with store._backend.transaction(store.profile) as tx:  # damage the store on purpose
        tx.run(sql, params)


def _kinds(report: dict[str, Any]) -> set[str]:
    return {p["kind"] for p in report["problems"]}


def test_healthy_store_has_no_problems(store: chatkeep.Store) -> None:
    """A store used only through the API is healthy."""
    store.history.append(
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": BLOB}}]}
    )
    store.sessions.save("s")
    report = store.doctor()
    assert report["healthy"] and report["problems"] == []


def test_every_problem_is_found_and_repaired(store: chatkeep.Store) -> None:
    """Unreadable rows, orphan and missing bodies, missing and dangling references, orphan
    blobs and wrong bookkeeping are reported; repair fixes them all and keeps the content."""
    store.history.append(
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": BLOB}}]}
    )
    row = store.sessions.save("kept")
    assert row is not None
    _raw(store, "INSERT INTO ck_kv (profile, key, value) VALUES (?, ?, ?)", ("broken", "{nope"))
    _raw(store, "INSERT INTO ck_kv (profile, key, value) VALUES (?, ?, ?)",
         ("session_lost", json.dumps([{"role": "user", "content": "orphan body"}])))  # fmt: skip
    _raw(store, "DELETE FROM ck_kv WHERE profile=? AND key=?", (f"session_{row['id']}",))
    _raw(store, "DELETE FROM ck_blob_refs WHERE profile=? AND owner=?", ("h:0",))
    _raw(
        store,
        "INSERT INTO ck_blob_refs (profile, owner, hash) VALUES (?, ?, ?)",
        ("h:99", "f" * 64),
    )
    _raw(store, "INSERT INTO ck_blobs (profile, hash, prefix, data) VALUES (?, ?, ?, ?)",
         ("e" * 64, None, b"x"))  # fmt: skip
    _raw(store, "UPDATE ck_history_state SET live_count = 7 WHERE profile=?", ())
    found = store.doctor()
    assert not found["healthy"]
    assert {"unreadable", "orphan-body", "missing-body", "missing-ref", "dangling-ref",
            "orphan-blob", "history-state"} <= _kinds(found)  # fmt: skip
    fixed = store.doctor(repair=True)
    assert fixed["healthy"], fixed
    assert store.doctor()["healthy"]
    names = {r["name"] for r in store.sessions.list()}
    assert "kept" in names and any(n.startswith("Recovered session") for n in names)
    assert store.local.get(fixed["quarantined"][0])["text"] == "{nope"
    (entry,) = store.history.read()
    assert entry["content"][0]["image_url"]["url"] == BLOB
    assert len(store.history) == 1


def test_quarantine_is_exported_and_reimported(store: chatkeep.Store) -> None:
    """Quarantined rows are ordinary keys: exported with the profile and imported back."""
    _raw(store, "INSERT INTO ck_kv (profile, key, value) VALUES (?, ?, ?)", ("bad", "[1,"))
    key = store.doctor(repair=True)["quarantined"][0]
    doc = store.export_data()
    assert doc["local"][key]["text"] == "[1,"
    fresh = chatkeep.open(":memory:")
    fresh.import_data(chatkeep.parse_json(json.dumps(doc)))
    assert fresh.local.get(key) == doc["local"][key]


def test_loose_permissions_are_reported_and_tightened(tmp_path: Path) -> None:
    """A store file readable by others is reported; repair makes it private."""
    path = tmp_path / "s.db"
    chatkeep.open(str(path)).close()
    store = chatkeep.open(str(path))
    os.chmod(path, 0o644)
    assert "permissions" in _kinds(store.doctor())
    assert store.doctor(repair=True)["healthy"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    store.close()


def test_opening_tightens_an_existing_store(tmp_path: Path) -> None:
    """Opening a store whose file others can read makes it private (owner bits kept)."""
    path = tmp_path / "s.db"
    chatkeep.open(str(path)).close()
    os.chmod(path, 0o664)
    chatkeep.open(str(path)).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_cli_doctor_exit_codes(tmp_path: Path) -> None:
    """`chatkeep doctor` exits 4 with problems, `--repair` fixes them and exits 0, and
    `--json` prints the report."""
    db = str(tmp_path / "s.db")
    store = chatkeep.open(db)
    store.history.append({"role": "user", "content": "hi"})
    _raw(store, "INSERT INTO ck_kv (profile, key, value) VALUES (?, ?, ?)", ("bad", "{"))
    store.close()
    found = run(Path(db), "doctor", "--json", ok=False)
    assert found.returncode == 4
    assert json.loads(found.stdout)["problems"][0]["kind"] == "unreadable"
    fixed = run(Path(db), "doctor", "--repair")
    assert fixed.returncode == 0 and "quarantined" in fixed.stdout
    assert run(Path(db), "doctor").returncode == 0
