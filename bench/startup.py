"""Cold start: ``import chatkeep``, ``chatkeep --help`` and the reading commands ``chatkeep
history`` and ``chatkeep sessions list`` against a bare interpreter (SPEC §9).

Each command runs ``--runs`` times (default 10) in a fresh process, the commands interleaved
round by round so machine noise hits all of them alike; the table shows the median wall time
and its ratio to ``python -c pass``. Targets: ``chatkeep --help`` ≤ 2× the bare interpreter,
``chatkeep history`` and ``chatkeep sessions list`` ≤ 10× (on a store of 60 live entries and 100
saved sessions, made at the default store location of a temporary ``HOME``: no ``--store``, no
``CHATKEEP_STORE``, as a user who just installed chatkeep runs them). Byte-code is written to a temporary
``PYTHONPYCACHEPREFIX`` and the first round is untimed, so every command starts from compiled
modules as an installed chatkeep does — even where ``PYTHONDONTWRITEBYTECODE`` is set.

When a target is missed, the program prints what ``python -X importtime`` blames (the slowest
imports by cumulative time) and which heavy libraries the command loaded, so the cause is on
screen. It never fails: timings are information, not assertions.

Run: ``python -m bench.startup [--runs N] [--target X]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 2.0
READ_TARGET = 10.0
HEAVY = (
    "httpx",
    "httpx2",
    "trafilatura",
    "lxml",
    "pypdf",
    "PIL",
    "charset_normalizer",
    "rich",
    "openai",
    "anthropic",
    "psycopg",
    "sqlite3",
    "platformdirs",
)


def _chatkeep_argv() -> list[str]:
    """The installed console script next to this interpreter, else the entry point via -c."""
    beside = Path(sys.executable).with_name("chatkeep")
    exe = str(beside) if beside.exists() else shutil.which("chatkeep")
    if exe:
        return [exe]
    return [sys.executable, "-c", "from chatkeep.cli.main import main; main()"]


def commands() -> dict[str, list[str]]:
    py = sys.executable
    ck = _chatkeep_argv()
    return {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import chatkeep'": [py, "-c", "import chatkeep"],
        # what the entry-point launcher pip writes for `chatkeep` imports before chatkeep runs
        "python -c 'import re, sys'": [py, "-c", "import re, sys"],
        "chatkeep --help": [*ck, "--help"],
        "chatkeep history": [*ck, "history"],
        "chatkeep sessions list": [*ck, "sessions", "list"],
    }


def _env(home: str = "", pycache: str = "") -> dict[str, str]:
    # No store from the caller's shell: --help must not need one, and must not open one; the
    # reading commands find theirs where chatkeep puts it by default under ``home``.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CHATKEEP_") and k not in ("PYTHONDONTWRITEBYTECODE", "XDG_DATA_HOME")
    }
    if home:
        env["HOME"] = home
    if pycache:
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def _fill(path: str) -> None:
    """A store of 60 live entries and 100 saved sessions of 20 entries each."""
    import chatkeep

    with chatkeep.open(path) as s:
        for k in range(100):
            s.history.mutate(
                lambda _, k=k: [
                    {"role": "user" if i % 2 == 0 else "assistant", "content": f"s{k} m{i} " * 20}
                    for i in range(20)
                ]
            )
            s.sessions.new()
        s.history.mutate(
            lambda _: [
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"live {i} " * 30}
                for i in range(60)
            ]
        )


def _time_once(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - t0


def measure(runs: int) -> dict[str, float]:
    """Median wall seconds per command (one untimed warm-up round first, for the .pyc files)."""
    with tempfile.TemporaryDirectory(prefix="chatkeep-startup-") as root:
        env = _env(os.path.join(root, "home"), os.path.join(root, "pycache"))
        where = "from chatkeep.store import default_store_path as d; print(d())"
        store = subprocess.run(
            [sys.executable, "-c", where], capture_output=True, text=True, env=env, check=True
        ).stdout.strip()
        os.makedirs(os.path.dirname(store), mode=0o700)
        _fill(store)
        cmds = commands()
        for argv in cmds.values():
            _time_once(argv, env)
        samples: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(runs):
            for name, argv in cmds.items():
                samples[name].append(_time_once(argv, env))
    return {name: statistics.median(values) for name, values in samples.items()}


def importtime_top(module: str, limit: int = 12) -> list[tuple[int, int, str]]:
    """``(cumulative_us, self_us, name)`` of the slowest imports of ``module``, slowest first."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    rows: list[tuple[int, int, str]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum_us, name = (part.strip() for part in line[len("import time:") :].split("|"))
        rows.append((int(cum_us), int(self_us), name.strip()))
    rows.sort(reverse=True)
    return rows[:limit]


def heavy_loaded(module: str) -> list[str]:
    probe = (
        f"import {module}, sys\n"
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=_env(), check=True
    )
    return out.stdout.split()


def report(medians: dict[str, float], target: float) -> bool:
    base = medians["python -c pass"]
    width = max(len(n) for n in medians)
    print(f"{'command':<{width}}  {'median ms':>10}  {'× bare python':>13}  target")
    print(f"{'-' * width}  {'-' * 10}  {'-' * 13}  ------")
    met = True
    for name, secs in medians.items():
        goal = target if name == "chatkeep --help" else READ_TARGET
        ratio = secs / base
        verdict = ""
        if name.startswith("chatkeep "):
            ok = ratio <= goal
            met = met and ok
            verdict = f"≤ {goal:g}× {'met' if ok else 'MISSED'}"
        print(f"{name:<{width}}  {secs * 1000:>10.1f}  {ratio:>13.2f}  {verdict}")
    return met


def explain() -> None:
    for module in ("chatkeep", "chatkeep.cli.main", "chatkeep.store"):
        print(f"\nslowest imports under `import {module}` (python -X importtime, µs):")
        print(f"{'cumulative':>10}  {'self':>8}  module")
        for cum, own, name in importtime_top(module):
            print(f"{cum:>10}  {own:>8}  {name}")
        loaded = heavy_loaded(module)
        print(f"heavy libraries loaded: {', '.join(loaded) if loaded else 'none'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command")
    parser.add_argument("--target", type=float, default=TARGET_RATIO, help="ratio target")
    parser.add_argument("--explain", action="store_true", help="always print the import report")
    args = parser.parse_args(argv)
    medians = measure(max(1, args.runs))
    met = report(medians, args.target)
    if args.explain or not met:
        explain()
    return 0


if __name__ == "__main__":
    sys.exit(main())
