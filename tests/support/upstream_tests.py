"""A framework's own test suite, from its source distribution on PyPI, run against a chatkeep
adapter: the version installed here is downloaded (``pip download --no-binary``, the build
tools as wheels) and unpacked, and chosen test files run in a pytest of their own (the
framework's configuration, its conftest) with a plugin from ``tests/support/upstream`` that
swaps the framework's own store class in its test modules for the chatkeep adapter."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

PLUGINS = Path(__file__).resolve().parent / "upstream"


def source_of(dist: str, into: Path) -> Path:
    """The installed version of ``dist``, its source distribution unpacked under ``into``."""
    version = importlib.metadata.version(dist)
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", dist]
        + ["--dest", str(into), f"{dist}=={version}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    stem = dist.replace("-", "_")
    archives = sorted(into.glob(f"{stem}-*.tar.gz"))
    assert got.returncode == 0 and archives, f"pip download failed:\n{got.stderr[-2000:]}"
    with tarfile.open(archives[0]) as tar:
        tar.extractall(into, filter="data")
    return into / archives[0].name.removesuffix(".tar.gz")


def missing_tests(root: Path, file: str, names: list[str]) -> list[str]:
    """Of ``names``, the test functions ``file`` no longer defines (the suite changed)."""
    source = (root / file).read_text(encoding="utf-8")
    return [n for n in names if f"def {n}(" not in source]


def run_suite(root: Path, plugin: str, files: list[str], leave: list[str]) -> tuple[int, str]:
    """Run ``files`` of the suite unpacked at ``root`` with ``plugin`` loaded, without the
    test functions ``leave`` names (``file::function``, exactly: ``upstream/own_suite.py``);
    the number of tests that passed and the whole output (the run must end without a
    failure)."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", plugin, "-p", "no:cacheprovider"]
        + files,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(PLUGINS), "CHATKEEP_LEAVE_OUT": " ".join(leave)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    passed = re.search(r"(\d+) passed", out)
    assert passed is not None, out[-2000:]
    return int(passed.group(1)), out


def run_own_tests(
    dist: str, plugin: str, files: list[str], left_out: dict[str, dict[str, str]], into: Path
) -> tuple[int, str]:
    """The installed ``dist``'s own ``files`` run with ``plugin``, without the tests
    ``left_out`` names (by file: function → why), each of which must still be there."""
    root = source_of(dist, into)
    for file, names in left_out.items():
        assert missing_tests(root, file, list(names)) == [], f"{dist}'s {file} changed"
    leave = [f"{file}::{name}" for file, names in left_out.items() for name in names]
    return run_suite(root, plugin, files, leave)
