"""`chatkeep import` of a deeply nested JSON file (SPEC §12): refused with a typed error (exit 3)
in bounded memory, the store unchanged — measured as the peak RSS of the console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import chatkeep
from clirun import chatkeep_exe, run

#: The console script's peak memory on a refused file (it starts in ~25 MB; before the depth
#: limit, 39 KB of brackets took ~1 GB and 200 KB ran out of memory).
MAX_PEAK_KB = 150 * 1024
#: A ceiling on the child's address space, so a regression fails the test instead of the host.
ADDRESS_SPACE = 3 << 30


def _nest(n: int, leaf: Any = 1) -> Any:
    for _ in range(n):
        leaf = [leaf]
    return leaf


#: Runs the command in a child of a fresh, small interpreter and prints "<exit> <peak KB>": a
#: child forked straight from pytest would start with pytest's own resident pages counted in
#: its peak (the high-water mark is inherited across fork and kept across exec).
_LAUNCHER = """
import os, resource, subprocess, sys
space, out, err = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (space, space))
with open(out, "wb") as o, open(err, "wb") as e:
    proc = subprocess.Popen(sys.argv[4:], stdout=o, stderr=e, preexec_fn=limit)
    _pid, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def _import_measured(db: Path, path: Path, tmp: Path) -> tuple[int, str, int]:
    """Run `chatkeep import PATH` in a child of its own: (exit status, stderr, peak RSS KB)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    args = [chatkeep_exe(), "--store", str(db), "import", str(path)]
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, str(ADDRESS_SPACE), str(tmp / "out"), str(tmp / "err"),
         *args],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    code, peak_kb = (int(x) for x in done.stdout.split())
    return code, (tmp / "err").read_text(), peak_kb


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    with chatkeep.open(str(path)) as store:
        store.sessions.add_many(iter([({"id": "kept", "name": "mine"}, [_USER])]))
    return path


_USER = {"role": "user", "content": "what I asked before"}


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # the hostile case: 200 KB of nested empty arrays
        '{"k": ' + "[" * 100_000 + "]" * 100_000 + "}",  # the same inside an object
        '[{"conversations": [], "x": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}]",
        '{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n",
    ],
    ids=["arrays", "in-object", "objects-in-element", "json-lines"],
)
def test_deeply_nested_file_is_refused_in_bounded_memory(
    db: Path, tmp_path: Path, text: str
) -> None:
    """A 100k-deep JSON file is exit 3 (no traceback) within 150 MB, the store unchanged."""
    path = tmp_path / "deep.json"
    path.write_text(text)
    before = chatkeep.open(str(db)).export_data()
    code, err, peak_kb = _import_measured(db, path, tmp_path)
    assert code == 3, err[-2000:]
    assert "nests deeper than" in err and "Traceback" not in err
    assert peak_kb < MAX_PEAK_KB, f"peak RSS {peak_kb} KB"
    assert chatkeep.open(str(db)).export_data() == before


def _sharegpt(extra: Any) -> list[dict[str, Any]]:
    turns = [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]
    return [{"conversations": turns, "meta": extra}]


def test_depth_limit_is_exact(tmp_path: Path) -> None:
    """An element of a list file nests at most 101 levels (the file 102): 101 imports, 102
    is refused (exit 3) and imports nothing."""
    ok, deep = tmp_path / "ok.json", tmp_path / "deep.json"
    ok.write_text(json.dumps(_sharegpt(_nest(100))))  # the element: 1 + 100 levels
    deep.write_text(json.dumps(_sharegpt(_nest(101))))
    db = tmp_path / "s.db"
    proc = run(db, "import", str(deep), ok=False)
    assert proc.returncode == 3, proc.stderr
    assert "nests deeper than 102 levels" in proc.stderr
    assert "1 new saved session" in run(db, "import", str(ok)).stdout
