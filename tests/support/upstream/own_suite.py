"""What every plugin for a framework's own suite does at collection (``agents_swap``,
``langchain_swap``): leave out exactly the tests named in ``CHATKEEP_LEAVE_OUT``, and swap the
framework's store class in the test modules for the chatkeep adapter."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


def leave_out(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect exactly the test functions named in ``CHATKEEP_LEAVE_OUT`` (``file::function``
    entries separated by spaces; every parameter of a function), nothing that merely shares a
    prefix with one (as ``--deselect`` would); a name that matches nothing is an error."""
    names = set(os.environ.get("CHATKEEP_LEAVE_OUT", "").split())
    root = Path(str(config.rootpath))
    kept, left, found = [], [], set()
    for item in items:
        where = f"{Path(str(item.path)).relative_to(root).as_posix()}::{item.originalname}"  # type: ignore[attr-defined]
        if where in names:
            left.append(item)
            found.add(where)
        else:
            kept.append(item)
    if names - found:
        raise pytest.UsageError(f"tests to leave out not found: {sorted(names - found)}")
    config.hook.pytest_deselected(items=left)
    items[:] = kept


def swap_in(items: list[pytest.Item], name: str, adapter: Any, shown: str, plugin: str) -> None:
    """In every test module of ``items`` that has ``name`` (the framework's store class), put
    ``adapter`` in its place, and print which (``<plugin>: <name> is <shown> in <modules>``,
    what the calling test looks for); no such module is an error."""
    swapped = set()
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and getattr(module, name, None) is not None:
            setattr(module, name, adapter)
            swapped.add(module.__name__)
    if not swapped:
        raise pytest.UsageError(f"no test module makes a {name}: nothing swapped")
    print(f"{plugin}: {name} is {shown} in {', '.join(sorted(swapped))}")
