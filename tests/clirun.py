"""Run ``chatkeep`` against a store file: in this process through Click's ``CliRunner`` (the
default), or as the installed console script in a subprocess (``process=True``: for what only
a real process shows — signals, start-up, the installed entry point)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any


def chatkeep_exe() -> str:
    """The console script installed next to this interpreter (or on PATH)."""
    beside = Path(sys.executable).with_name("chatkeep")
    exe = str(beside) if beside.exists() else shutil.which("chatkeep")
    assert exe, "the chatkeep console script is not installed"
    return exe


def _text(raw: bytes) -> str:
    """Output as a text-mode pipe reads it (universal newlines)."""
    return raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def _in_process(argv: list[str], stdin: str | None, env: dict[str, str]) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from chatkeep.cli.main import main

    with CliRunner().isolation(input=stdin, env=env) as (out, err, _both):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Exception:  # what the console script would print before exiting with 1
            sys.stderr.write(traceback.format_exc())
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return code, _text(out.getvalue()), _text(err.getvalue())


def run(
    store_path: Path,
    *args: str,
    ok: bool = True,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``chatkeep --store STORE ARGS…`` with ``env`` added to the test's environment (the
    autouse ``isolated_user`` fixture has already unset the user's CHATKEEP_* variables)."""
    argv = ["--store", str(store_path), *args]
    if process:
        proc = subprocess.run(
            [chatkeep_exe(), *argv],
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            input=stdin,
            timeout=60,
        )
    else:
        code, out, err = _in_process(argv, stdin, env or {})
        proc = subprocess.CompletedProcess(["chatkeep", *argv], code, out, err)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def run_process(store_path: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    """:func:`run` as the installed console script in a subprocess of its own."""
    return run(store_path, *args, process=True, **kw)
