"""docs/cli.md documents every command, every option and every exit code; every option has
help text (what `chatkeep COMMAND --help` shows)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from chatkeep.cli.main import EXIT_CODES, cli

DOC = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()


def _leaves() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    out: list[tuple[str, click.Command]] = []

    def walk(group: click.Group, prefix: str) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None, name
            path = f"{prefix}{name}"
            if isinstance(command, click.Group):
                walk(command, path + " ")
            else:
                out.append((path, command))

    walk(cli, "")
    return out


def _rows(path: str) -> str:
    """The doc lines that document command ``path`` (they name it in backticks)."""
    pattern = re.compile(r"`" + re.escape(path) + r"(?=[ `])")
    return "\n".join(line for line in DOC.splitlines() if pattern.search(line))


def test_every_command_has_a_row() -> None:
    """Each command (group subcommands by their full name) has a line in docs/cli.md."""
    missing = [path for path, _ in _leaves() if not _rows(path)]
    assert missing == [], f"undocumented commands: {missing}"


def test_every_option_is_documented_with_its_command() -> None:
    """Each option of each command appears on that command's lines in docs/cli.md."""
    missing = []
    for path, command in _leaves():
        rows = _rows(path)
        for param in command.params:
            if isinstance(param, click.Option) and not any(o in rows for o in param.opts):
                missing.append(f"{path} {param.opts[-1]}")
    assert missing == [], f"undocumented options: {missing}"


def test_every_option_has_help_text() -> None:
    """No option is shown without a description in --help."""
    bare = [
        f"{path} {param.opts[-1]}"
        for path, command in _leaves()
        for param in command.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert bare == [], f"options without help: {bare}"


def test_every_exit_code_is_documented() -> None:
    """The exit-code table lists every code the CLI uses, Ctrl-C's 130 included."""
    table = DOC[DOC.index("## Errors and exit codes") :]
    for code in set(EXIT_CODES.values()) | {0, 2, 130}:
        assert re.search(rf"^\| {code} \|", table, re.M), code
