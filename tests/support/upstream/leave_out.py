"""The tests a run of a framework's own suite leaves out: exactly the test functions named in
``CHATKEEP_LEAVE_OUT`` (``file::function`` entries separated by spaces; every parameter of a
function), nothing that merely shares a prefix with one (as ``--deselect`` would)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def leave_out(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = set(os.environ.get("CHATKEEP_LEAVE_OUT", "").split())
    root = Path(str(config.rootpath))
    kept, left = [], []
    for item in items:
        where = f"{Path(str(item.path)).relative_to(root).as_posix()}::{item.originalname}"  # type: ignore[attr-defined]
        (left if where in names else kept).append(item)
    found = {
        f"{Path(str(i.path)).relative_to(root).as_posix()}::{i.originalname}"  # type: ignore[attr-defined]
        for i in left
    }
    if names - found:
        raise pytest.UsageError(f"tests to leave out not found: {sorted(names - found)}")
    config.hook.pytest_deselected(items=left)
    items[:] = kept
