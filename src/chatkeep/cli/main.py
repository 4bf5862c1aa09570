"""``chatkeep`` entry point: global options, error reporting, command groups.

Errors: every :class:`chatkeep.ChatkeepError` is printed on stderr as ``error: …`` plus
``hint: …`` and exits non-zero (see :data:`EXIT_CODES`); tracebacks only with ``--debug``.
Click is imported at start-up; rich, Pillow and everything heavy only by the commands that
print tables or images.
"""

from __future__ import annotations

import sys

import click

from .. import errors
from .._version import __version__
from .context import Ctx

#: Exit status per error class (first match wins); usage errors exit 2 (Click's own).
EXIT_CODES: list[tuple[type[errors.ChatkeepError], int]] = [
    (errors.InvalidEntry, 3),
    (errors.InvalidValue, 3),
    (errors.StoreError, 4),
    (errors.ContextOverflow, 6),
    (errors.ProviderError, 5),
    (errors.ProviderConfigError, 7),
    (errors.AttachError, 8),
    (errors.ChatkeepError, 1),
]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--store",
    "store_url",
    envvar="CHATKEEP_STORE",
    metavar="URL",
    help="Store: a file path, sqlite:///abs/path.db or postgresql://… "
    "[env CHATKEEP_STORE; default: chatkeep.db in the user data dir]",
)
@click.option(
    "--profile",
    envvar="CHATKEEP_PROFILE",
    default="default",
    show_default=True,
    help="Profile inside the store [env CHATKEEP_PROFILE].",
)
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.version_option(__version__, prog_name="chatkeep")
@click.pass_context
def cli(ctx: click.Context, store_url: str | None, profile: str, debug: bool) -> None:
    """chatkeep — a local-first conversation store for multimodal AI assistants.

    Keeps every pixel and every session on your machine; sends the model only what it needs.
    """
    ctx.obj = Ctx(store_url, profile, debug)
    ctx.call_on_close(ctx.obj.close)


def _register() -> None:
    from . import (
        attach_cmds,
        history_cmds,
        provider_cmds,
        request_cmd,
        sessions_cmds,
        transfer_cmds,
    )

    for module in (
        history_cmds,
        attach_cmds,
        sessions_cmds,
        transfer_cmds,
        provider_cmds,
        request_cmd,
    ):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def exit_code_for(exc: errors.ChatkeepError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    return 1


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="chatkeep", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except errors.ChatkeepError as exc:
        if debug:
            raise
        click.echo(f"error: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        sys.exit(exit_code_for(exc))
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
