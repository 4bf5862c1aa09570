"""`pip install chatkeep` runs the main job: the built wheel in a fresh virtual environment.

The wheel is built from this checkout (``pip wheel . --no-deps``), installed with the pip that
``python -m venv`` ships (no upgrade) with its dependencies from the package index, and then the
installed console script attaches an HTML page and a PDF and chats with the loopback provider.
No extra is installed: what the faces need is in the base dependencies. A second install pins
the provider SDKs and their HTTP library to the floors pyproject declares, and chats with them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from attach.attach_pdfgen import figures_pdf
from support.provider_server import Drop, Text, provider_server  # noqa: F401

ROOT = Path(__file__).parents[1]
FIXTURES = Path(__file__).parent / "fixtures"

pytestmark = pytest.mark.install


def _sh(*cmd: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=900
    )
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


#: The dependencies the provider adapters import directly, installed at their floors below.
SDKS = ("openai", "anthropic", "httpx2")


def _install(work: Path, *pip_args: str | Path) -> Path:
    """A fresh venv with the wheel of this checkout installed; returns its bin directory."""
    _sh(sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "-q", "-w", work / "dist")
    (wheel,) = (work / "dist").glob("chatkeep-*.whl")
    _sh(sys.executable, "-m", "venv", work / "venv")
    bin_dir = work / "venv" / "bin"
    _sh(bin_dir / "pip", "install", "-q", wheel, *pip_args)
    return bin_dir


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel with the newest dependencies the index offers."""
    return _install(tmp_path_factory.mktemp("install"))


def sdk_floors() -> dict[str, str]:
    """``{name: lowest version}`` of :data:`SDKS`, read from pyproject's ``name>=version``."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = {}
    for spec in deps["dependencies"]:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", spec)
        if m and m.group(1) in SDKS:
            found[m.group(1)] = m.group(2)
    assert sorted(found) == sorted(SDKS), deps["dependencies"]
    return found


@pytest.fixture(scope="module")
def installed_at_floors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel with the provider SDKs and their HTTP library pinned to pyproject's floors."""
    work = tmp_path_factory.mktemp("floors")
    pins = work / "floors.txt"
    pins.write_text("".join(f"{name}=={v}\n" for name, v in sdk_floors().items()))
    return _install(work, "--constraint", pins)


def test_fresh_venv_attach_and_chat(installed: Path, tmp_path: Path, provider_server) -> None:  # noqa: F811
    """The installed wheel attaches an HTML page and a PDF and chats, with no extra installed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHATKEEP_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{installed}:{env.get('PATH', '')}"
    env["LOOP_KEY"] = "sk-loop"
    db = tmp_path / "fresh.db"
    exe = installed / "chatkeep"

    def ck(*args: str) -> subprocess.CompletedProcess[str]:
        proc = _sh(exe, "--store", db, *args, env=env)
        assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
        return proc

    ck("provider", "add", "loop", "--style", "chat", "--base-url", provider_server.url("/v1"),
       "--model", "loop-model", "--api-key-env", "LOOP_KEY")  # fmt: skip
    page = json.loads(ck("attach", str(FIXTURES / "article_blog.html"), "--json").stdout)
    assert page["kind"] == "file" and page["chars"] > 300 and page["title"]
    pdf_bytes, _ = figures_pdf(tmp_path)
    (tmp_path / "report.pdf").write_bytes(pdf_bytes)
    pdf = json.loads(ck("attach", str(tmp_path / "report.pdf"), "--json").stdout)
    assert pdf["kind"] == "pdf" and pdf["images"] == 4
    provider_server.queue(Text("installed and answering"))
    reply = json.loads(ck("chat", "What do the two attachments say?", "--json").stdout)
    assert reply["text"] == "installed and answering" and reply["interrupted"] is False
    sent = json.dumps(provider_server.requests[-1].body)
    assert "What do the two attachments say?" in sent and "[Page 1]" in sent
    # the installed package imports without the dev tools, and its import stays light
    probe = _sh(
        installed / "python",
        "-c",
        "import sys, chatkeep; print(sorted(m for m in ('httpx','pypdf','trafilatura',"
        "'openai','starlette') if m in sys.modules))",
        env=env,
    )
    assert probe.stdout.strip() == "[]"


def test_the_installed_command_is_the_click_application(installed: Path) -> None:
    """The installed `chatkeep` is a standard entry point to the Click application; `--help`
    loads no command module, and `python -m chatkeep` is the same command."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHATKEEP_", "VIRTUAL_ENV"))}
    proc = _sh(installed / "chatkeep", "--help", env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert "chatkeep.cli.main" in loaded and "click" in loaded
    assert not loaded & {"rich", "chatkeep.cli.chat_cmds", "chatkeep.store"}
    same = _sh(installed / "python", "-m", "chatkeep", "--help", env=env)
    assert same.stdout == proc.stdout and "Usage: chatkeep" in same.stdout


def test_the_reading_commands_on_the_default_store_skip_rich(
    installed: Path, tmp_path: Path
) -> None:
    """`history` and `sessions list` on the default store answer without importing rich (the
    table printer of other commands)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CHATKEEP_", "VIRTUAL_ENV")) and k != "XDG_DATA_HOME"
    }
    env["HOME"] = str(tmp_path)
    fill = (
        "import chatkeep; s = chatkeep.open();"
        " s.history.append({'role': 'user', 'content': 'zebra notes'});"
        " s.sessions.save('Zebra notes'); s.history.append({'role': 'user', 'content': 'live'});"
        " s.close()"
    )
    _sh(installed / "python", "-c", fill, env=env)
    for args, shown in (
        (("history",), "live"),
        (("sessions", "list"), "Zebra notes"),
        (("sessions", "list", "zebra"), "Zebra notes"),
    ):
        proc = _sh(installed / "chatkeep", *args, env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
        loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
        assert shown in proc.stdout
        assert {"chatkeep.cli.reading", "chatkeep.storage.sqlite"} <= loaded
        assert "rich" not in loaded, args


def test_the_sdk_floors_chat_and_translate_a_dropped_stream(
    installed_at_floors: Path,
    tmp_path: Path,
    provider_server,  # noqa: F811
) -> None:
    """With openai, anthropic and httpx2 at pyproject's floors, the chat and anthropic styles
    answer and a stream dropped mid-way is a network error (exit code), not a traceback."""
    bin_dir = installed_at_floors
    versions = _sh(
        bin_dir / "python",
        "-c",
        "import importlib.metadata as m; print(' '.join("
        f"n + '==' + m.version(n) for n in {SDKS!r}))",
    ).stdout.split()
    assert versions == [f"{n}=={v}" for n, v in sdk_floors().items()]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHATKEEP_", "VIRTUAL_ENV"))}
    env["LOOP_KEY"] = "sk-loop"
    db = tmp_path / "floors.db"

    def ck(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(bin_dir / "chatkeep"), "--store", str(db), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        assert (proc.returncode == 0) == ok, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    for name, style in (("oai", "chat"), ("claude", "anthropic")):
        ck("provider", "add", name, "--style", style, "--base-url", provider_server.url("/v1"),
           "--model", "loop-model", "--api-key-env", "LOOP_KEY")  # fmt: skip
        provider_server.queue(Text(f"{style} at its floor"))
        reply = json.loads(ck("chat", "hello", "--provider", name, "--json").stdout)
        assert reply["text"] == f"{style} at its floor"
        provider_server.queue(Drop(after_chunks=2))
        dropped = ck("chat", "again", "--provider", name, ok=False)
        assert dropped.returncode == 5 and "dropped in the middle of the reply" in dropped.stderr
