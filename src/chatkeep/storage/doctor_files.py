"""The doctor's findings about the store's own files: their modes, and the notes of a store
this process may only read (see :mod:`.doctor`)."""

from __future__ import annotations

import os
import stat
from typing import Any


def problem(kind: str, where: str, detail: str) -> dict[str, Any]:
    return {"kind": kind, "where": where, "detail": detail, "repaired": False}


def permissions(path: str | None) -> list[dict[str, Any]]:
    if not path or path == ":memory:" or not os.path.exists(path):
        return []
    found = []
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p) and os.stat(p).st_mode & 0o077:
            found.append(
                problem("permissions", p, f"mode {stat.filemode(os.stat(p).st_mode)}; want 0600")
            )
    parent = os.path.dirname(os.path.abspath(path))
    mode = os.stat(parent).st_mode
    if mode & 0o022 and not mode & stat.S_ISVTX:
        found.append(
            problem(
                "permissions", parent, f"directory mode {stat.filemode(mode)}: others can write"
            )
        )
    return found


def repair_permissions(path: str, problems: list[dict[str, Any]]) -> None:
    base = os.path.basename(path)
    for p in problems:
        target = p["where"]
        try:
            if os.path.isdir(target):
                if all(n.startswith(base) for n in os.listdir(target)):
                    os.chmod(target, 0o700)
                    p["repaired"] = True
            else:
                os.chmod(target, 0o600)
                p["repaired"] = True
        except OSError as exc:
            p["detail"] += f" (could not change it: {exc})"


def read_only_notes(path: str | None, perms: list[dict[str, Any]], repair: bool) -> list[str]:
    """The notes of a read-only store; moves the findings about its own files out of
    ``perms`` (the file's mode is the owner's choice, not damage)."""
    mode = ""
    if path and os.path.exists(path):
        mode = f" (file mode {stat.filemode(os.stat(path).st_mode)})"
    notes = [f"the store is read-only for this user{mode}: it was checked without writing"]
    own = {path, f"{path}-wal", f"{path}-shm"}
    for p in [p for p in perms if p["where"] in own]:
        perms.remove(p)
        notes.append(f"{p['where']}: {p['detail']} (only the file's owner can change it)")
    if repair:
        notes.append(
            "--repair cannot repair a read-only store: nothing was changed "
            "(get write permission on the file and its directory to repair it)"
        )
    return notes


def unhealthy(
    profile: str, problems: list[Any], notes: list[str], read_only: bool
) -> dict[str, Any]:
    """The report of a store doctor could not check whole (damaged pages, missing tables):
    its problems and notes, nothing repaired yet."""
    return {
        "profile": profile,
        "healthy": False,
        "problems": problems,
        "remaining": len(problems),
        "repaired": 0,
        "quarantined": [],
        "restored": [],
        "readOnly": read_only,
        "notes": notes,
    }
