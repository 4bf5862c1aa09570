"""Run the installed ``chatkeep`` console script in a subprocess against a store file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def chatkeep_exe() -> str:
    """The console script installed next to this interpreter (or on PATH)."""
    beside = Path(sys.executable).with_name("chatkeep")
    exe = str(beside) if beside.exists() else shutil.which("chatkeep")
    assert exe, "the chatkeep console script is not installed"
    return exe


def run(
    store_path: Path,
    *args: str,
    ok: bool = True,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``chatkeep --store STORE ARGS…`` with CHATKEEP_* unset and ``env`` added."""
    exe = chatkeep_exe()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}, **(env or {})}
    proc = subprocess.run(
        [exe, "--store", str(store_path), *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=60,
    )
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc
