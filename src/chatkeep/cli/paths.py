"""File arguments that report a missing file or a wrong type of path as typed errors.

Click's own ``click.Path`` checks end in a usage error (exit 2), so the same mistake — a file
that is not there, a directory given for a file — would exit differently depending on whether
Click or the library noticed it. :class:`FilePath` runs the same checks but raises
:class:`~chatkeep.errors.MissingFile` / :class:`~chatkeep.errors.NotAFile`, whose kind decides
the exit status (``main.EXIT_CODES``) as everywhere else. :func:`typed_paths` gives every
``click.Path`` parameter of a command this behaviour when the command is loaded.
"""

from __future__ import annotations

import os
import stat
from typing import Any

import click

from .. import MissingFile, NotAFile


class FilePath(click.Path):
    """``click.Path`` whose failed checks raise the typed path errors."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        dash = self.file_okay and self.allow_dash and value in ("-", b"-")
        if not dash:
            check_path(os.fsdecode(value), self)
        return super().convert(value, param, ctx)


def check_path(path: str, want: click.Path) -> None:
    """Raise the typed error for ``path`` when it fails ``want``'s exists / file / dir checks."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        if want.exists:
            raise MissingFile(f"no such file or directory: {path}", path=path) from None
        return
    if not want.dir_okay and stat.S_ISDIR(st.st_mode):
        raise NotAFile(
            f"{path} is a directory, not a file", path=path, hint="give the path of a file"
        )
    if not want.file_okay and stat.S_ISREG(st.st_mode):
        raise NotAFile(
            f"{path} is a file, not a directory", path=path, hint="give the path of a directory"
        )


def typed_paths(command: click.Command) -> click.Command:
    """``command`` (and, for a group, its subcommands) with every ``click.Path`` parameter
    checked by :class:`FilePath`; returns ``command``."""
    for param in command.params:
        if type(param.type) is click.Path:
            param.type = FilePath(
                exists=param.type.exists,
                file_okay=param.type.file_okay,
                dir_okay=param.type.dir_okay,
                writable=param.type.writable,
                readable=param.type.readable,
                resolve_path=param.type.resolve_path,
                allow_dash=param.type.allow_dash,
                path_type=param.type.type,
                executable=param.type.executable,
            )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            typed_paths(sub)
    return command
