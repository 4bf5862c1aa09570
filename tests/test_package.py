"""The public facade: exported names, laziness, and a fast, side-effect-free import."""

from __future__ import annotations

import json
import subprocess
import sys

import chatkeep

HEAVY = (
    "PIL",
    "httpx",
    "httpx2",
    "openai",
    "anthropic",
    "trafilatura",
    "pypdf",
    "lxml",
    "psycopg",
    "rich",
    "starlette",
    "uvicorn",
    "sqlite3",
    "agents",
    "langchain_core",
    "pydantic_ai",
    "google.adk",
)


def test_all_is_sorted_and_resolvable() -> None:
    """__all__ is sorted and every name in it resolves to an object from the package."""
    assert chatkeep.__all__ == sorted(chatkeep.__all__)
    for name in chatkeep.__all__:
        assert getattr(chatkeep, name) is not None
    assert set(dir(chatkeep)) >= set(chatkeep.__all__)


def test_spec_names_exported() -> None:
    """Every public name the specification fixes is importable from chatkeep."""
    for name in (
        "open",
        "DEFAULTS",
        "GET_ALL_KEYS",
        "PAGE_CONTEXT_PREFIX",
        "parse_figure_labels",
        "compact_entry_image_parts",
        "prepare_history_for_model",
        "image_parts_bytes",
        "interleave_image_parts",
        "age_stale_attachments",
        "stub_oversized_attachments",
        "build_agent_turn",
        "build_page_context_text",
        "is_attachment",
        "is_context_overflow",
        "downscale_data_url",
        "ChatkeepError",
        "InvalidEntry",
        "StoreError",
        "ProviderError",
        "ContextOverflow",
        "ProviderConfigError",
        "AttachError",
    ):
        assert name in chatkeep.__all__, name


def test_error_tree() -> None:
    """Every chatkeep error derives from ChatkeepError; ContextOverflow is a ProviderError."""
    for cls in (
        chatkeep.InvalidEntry,
        chatkeep.InvalidValue,
        chatkeep.StoreError,
        chatkeep.ProviderError,
        chatkeep.ProviderConfigError,
        chatkeep.AttachError,
    ):
        assert issubclass(cls, chatkeep.ChatkeepError)
    assert issubclass(chatkeep.ContextOverflow, chatkeep.ProviderError)
    err = chatkeep.ProviderError("nope", status=429, hint="slow down")
    assert (err.status, err.hint) == (429, "slow down") and "slow down" in str(err)


def _fresh(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


def test_import_loads_no_heavy_library() -> None:
    """`import chatkeep` in a fresh interpreter imports no HTTP, PDF, image, web, SDK or database library."""
    loaded = _fresh(
        f"import json, sys, chatkeep; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    assert loaded == []


def test_cli_help_loads_no_heavy_library_and_no_store() -> None:
    """`chatkeep --help` imports no heavy library and opens no store."""
    loaded = _fresh(
        "import json, sys, io, contextlib\n"
        "from chatkeep.cli.main import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        cli.main(args=['--help'], prog_name='chatkeep')\n    except SystemExit:\n        pass\n"
        f"print(json.dumps([m for m in {HEAVY!r} + ('chatkeep.store', 'chatkeep.storage.sql') if m in sys.modules]))"
    )
    assert loaded == []


def test_cli_command_table_matches_commands() -> None:
    """Every lazily listed command exists under its name, and its listed help is its own first help line."""
    import importlib

    import click

    from chatkeep.cli.main import COMMANDS

    for name, (module, attr, short) in COMMANDS.items():
        command = getattr(importlib.import_module(f"chatkeep.cli.{module}"), attr)
        assert isinstance(command, click.Command)
        assert command.name == name
        assert (command.help or "").strip().splitlines()[0] == short


def test_every_command_is_documented() -> None:
    """Each CLI command appears in docs/cli.md."""
    from pathlib import Path

    from chatkeep.cli.main import COMMANDS

    text = (Path(__file__).parents[1] / "docs" / "cli.md").read_text()
    for name in COMMANDS:
        assert f"`{name}" in text or f"`sessions {name}" in text, name


def test_help_through_the_console_entry_loads_no_command_module() -> None:
    """`chatkeep --help` (the console script's entry, Click's own help) lists every command
    without importing a command module or a heavy library."""
    loaded = _fresh(
        "import json, sys, io, contextlib\n"
        "sys.argv = ['chatkeep', '--help']\n"
        "from chatkeep.cli.main import COMMANDS, main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    try:\n        main()\n    except SystemExit:\n        pass\n"
        "assert all(name in buf.getvalue() for name in COMMANDS)\n"
        "modules = tuple(f'chatkeep.cli.{m}' for m, _, _ in COMMANDS.values())\n"
        f"print(json.dumps([m for m in {HEAVY!r} + modules if m in sys.modules]))"
    )
    assert loaded == []
