"""`chatkeep import` never wipes what the user stored (SPEC §14): a JSON object of no known
format is refused (never taken as a browsa dump), and `--replace` writes a backup export of the
profile it replaces first, names it, and replaces nothing when that backup cannot be written.
Driven through the CLI on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

import chatkeep
from clirun import run

StoreSpec = Any  # tests/conftest.py's StoreSpec: kind, url, profile, dump()

ROOT = Path(__file__).resolve().parents[2]
CHATGPT = ROOT / "tests" / "fixtures" / "interop" / "chatgpt_conversations.json"
BROWSA = ROOT / "examples" / "browsa-dump.json"
#: What a ChatGPT data export holds beside conversations.json: not a chat export at all.
USER_JSON = {"id": "user-1", "email": "me@example.com", "chatgpt_plus_user": True, "phone": None}


def _cli(spec: StoreSpec, *args: str, xdg: Path, ok: bool = True) -> Any:
    env = {"CHATKEEP_PROFILE": spec.profile, "XDG_DATA_HOME": str(xdg)}
    return run(spec.url, *args, ok=ok, env=env)  # a file path or a postgresql:// URL


def _export(spec: StoreSpec, xdg: Path) -> dict[str, Any]:
    return json.loads(_cli(spec, "export", xdg=xdg).stdout)


@pytest.fixture
def user_json(tmp_path: Path) -> Path:
    path = tmp_path / "user.json"
    path.write_text(json.dumps(USER_JSON))
    return path


def test_unknown_json_object_is_refused_and_never_wipes(
    spec: StoreSpec, tmp_path: Path, user_json: Path
) -> None:
    """A JSON object of no known format is exit 3 naming --from, with or without --replace."""
    xdg = tmp_path / "xdg"
    _cli(spec, "import", str(CHATGPT), xdg=xdg)
    before = spec.dump()
    for extra in ((), ("--replace",)):
        proc = _cli(spec, "import", str(user_json), *extra, xdg=xdg, ok=False)
        assert proc.returncode == 3, proc.stderr
        assert "not a known format" in proc.stderr and "--from" in proc.stderr
        assert spec.dump() == before
    assert not xdg.exists() or not any(xdg.rglob("chatkeep-backup-*"))


def test_unknown_json_object_imports_nothing_into_an_empty_store(
    spec: StoreSpec, tmp_path: Path, user_json: Path
) -> None:
    """On an empty store the junk keys are not imported either (exit 3, still empty)."""
    proc = _cli(spec, "import", str(user_json), xdg=tmp_path / "xdg", ok=False)
    assert proc.returncode == 3, proc.stderr
    assert _export(spec, tmp_path / "xdg")["local"] == {}


def test_from_browsa_refuses_a_dump_without_browsa_keys(
    spec: StoreSpec, tmp_path: Path, user_json: Path
) -> None:
    """`--from browsa --replace` of an object holding no browsa key is refused, store kept."""
    xdg = tmp_path / "xdg"
    _cli(spec, "import", str(CHATGPT), xdg=xdg)
    before = spec.dump()
    proc = _cli(spec, "import", str(user_json), "--from", "browsa", "--replace", xdg=xdg, ok=False)
    assert proc.returncode == 3, proc.stderr
    assert "not a browsa dump" in proc.stderr
    assert spec.dump() == before


def test_browsa_dump_with_a_wrong_typed_key_is_refused(spec: StoreSpec, tmp_path: Path) -> None:
    """A browsa key holding the wrong type (history a string) is not the browsa signature."""
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"history": "not a list", "theme": "dark"}))
    proc = _cli(spec, "import", str(path), xdg=tmp_path / "xdg", ok=False)
    assert proc.returncode == 3, proc.stderr
    assert "'history' holds a str" in proc.stderr


def test_replace_writes_a_backup_export_first_and_names_it(spec: StoreSpec, tmp_path: Path) -> None:
    """--replace backs the old profile up (beside the SQLite file, else the user data dir),
    names the file, and that file imports back to the profile it replaced."""
    xdg = tmp_path / "xdg"
    _cli(spec, "import", str(CHATGPT), xdg=xdg)
    before = _export(spec, xdg)
    assert before["local"]["savedSessions"]
    out = _cli(spec, "import", str(BROWSA), "--replace", xdg=xdg).stdout
    line = next(x for x in out.splitlines() if "backed up to " in x)
    backup = Path(line.split("backed up to ", 1)[1])
    where = Path(spec.url).parent if spec.kind == "sqlite" else xdg / "chatkeep"
    assert backup.parent == where and backup.name.startswith("chatkeep-backup-")
    assert stat.S_IMODE(os.stat(backup).st_mode) == 0o600
    assert json.loads(backup.read_text()) == before
    report = json.loads(_cli(spec, "import", str(backup), "--replace", "--json", xdg=xdg).stdout)
    assert report["backup"] and Path(report["backup"]) != backup
    assert _export(spec, xdg) == before


def test_replace_replaces_nothing_when_the_backup_cannot_be_written(
    pg_spec: StoreSpec, tmp_path: Path
) -> None:
    """When the backup directory cannot be made, --replace fails (exit 4) and wipes nothing."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    xdg = blocker / "data"  # the user data dir would have to be made under a regular file
    _cli(pg_spec, "import", str(CHATGPT), xdg=xdg)
    before = pg_spec.dump()
    proc = _cli(pg_spec, "import", str(BROWSA), "--replace", xdg=xdg, ok=False)
    assert proc.returncode == 4, proc.stderr
    assert "cannot write the backup" in proc.stderr and "nothing was replaced" in proc.stderr
    assert pg_spec.dump() == before


def test_library_replace_in_memory_backs_up_to_the_user_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """import_data(replace=True) on an in-memory store writes its backup to the data dir."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with chatkeep.open(":memory:") as store:
        store.sessions.add_many(iter([({"id": "s1", "name": "kept"}, [_USER])]))
        before = store.export_data()
        report = store.import_data(json.loads(BROWSA.read_text()), replace=True)
        backup = Path(report["backup"])
        assert backup.parent == tmp_path / "xdg" / "chatkeep"
        assert json.loads(backup.read_text()) == before


_USER = {"role": "user", "content": "a question I asked"}
