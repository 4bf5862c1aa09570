"""``chatkeep`` entry point: global options, error reporting, command groups.

Errors: every :class:`chatkeep.ChatkeepError` is printed on stderr as ``error: …`` plus
``hint: …`` and exits non-zero (see :data:`EXIT_CODES`); tracebacks only with ``--debug``.
Click is imported at start-up; rich, Pillow and everything heavy only by the commands that
print tables or images.
"""

from __future__ import annotations

import importlib
import sys

import click

from .. import ChatkeepError, __version__
from .context import Ctx
from .paths import typed_paths

#: The one exit-code table: the kind of mistake (``ChatkeepError.kind``, see
#: :data:`chatkeep.errors.KINDS`) → exit status. Every command exits through it; docs/cli.md
#: states the same table (a test compares them). "usage" is Click's own status for a bad
#: command line, "interrupted" Ctrl-C's; `doctor` exits with the "store" status when problems
#: remain.
EXIT_CODES: dict[str, int] = {
    "other": 1,
    "usage": 2,
    "bad-value": 3,
    "store": 4,
    "provider": 5,
    "context-overflow": 6,
    "provider-config": 7,
    "attach": 8,
    "unknown-name": 9,
    "missing-file": 10,
    "wrong-type": 11,
    "interrupted": 130,
}


#: Every command: name → (module, attribute, one-line help). Modules are imported only when their
#: command runs, so `chatkeep --help` loads none of them (a test checks the help lines match).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "chat": ("chat_cmds", "chat_cmd", "Send one message and stream the reply."),
    "config": (
        "config_cmd",
        "config_group",
        "Settings: list them, get one, set one (validated, written whole or not at all).",
    ),
    "doctor": (
        "doctor_cmd",
        "doctor_cmd",
        "Check the store: index and bodies, blob references, missing images, unreadable rows.",
    ),
    "edit": (
        "chat_cmds",
        "edit_cmd",
        "Edit your message at INDEX and send it again (everything after it is replaced).",
    ),
    "regenerate": ("chat_cmds", "regenerate_cmd", "Ask for a new answer to your last message."),
    "attach": (
        "attach_cmds",
        "attach_cmd",
        "Attach a web page, file, PDF or image, or a video transcript (--video URL --transcript FILE).",
    ),
    "export": (
        "transfer_cmds",
        "export_cmd",
        "Export the profile or one session (json, md, jsonl, sharegpt or html).",
    ),
    "history": (
        "history_cmds",
        "history_cmd",
        "Show the live history (images as sizes, never base64).",
    ),
    "import": (
        "transfer_cmds",
        "import_cmd",
        "Import an export: chatkeep, browsa, ChatGPT, Claude, Open WebUI, LibreChat, llm, …",
    ),
    "mcp": (
        "mcp_cmd",
        "mcp_cmd",
        "Serve the store to MCP clients (stdio, or --http on 127.0.0.1); read-only by default.",
    ),
    "provider": (
        "provider_cmds",
        "provider_group",
        "Model providers: add a card, pick the active one, list them.",
    ),
    "request": (
        "request_cmd",
        "request_cmd",
        "Show what the next request would send, and what it saves.",
    ),
    "search": (
        "search_cmd",
        "search_cmd",
        "Find messages by words or meaning, everywhere: live, archive, saved and evicted sessions.",
    ),
    "serve": (
        "serve_cmd",
        "serve_cmd",
        "Serve the web panel on localhost (prints the URL with its launch token).",
    ),
    "sessions": (
        "sessions_cmds",
        "sessions_group",
        "Saved sessions: list/search, save, new, load, rename, pin, delete, show.",
    ),
    "stats": (
        "history_cmds",
        "stats_cmd",
        "Entries, sessions, bytes stored, unseen image bytes, archive size, unreadable values.",
    ),
    "undo-attach": (
        "attach_cmds",
        "undo_attach_cmd",
        "Remove an attachment from the live history by its attach id.",
    ),
    "usage": (
        "usage_cmd",
        "usage_cmd",
        "Tokens in / cached / written / out, cache-hit share and estimated cost of stored turns.",
    ),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use; help lists them from the table."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.commands.get(cmd_name)
        module, attr, _short = COMMANDS[cmd_name]
        command = getattr(importlib.import_module(f".{module}", __package__), attr)
        # file arguments report a missing file / a directory as the typed errors (exit table)
        return typed_paths(command) if isinstance(command, click.Command) else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
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


def exit_code_for(exc: ChatkeepError) -> int:
    """The exit status of an error: its kind's row of :data:`EXIT_CODES`."""
    return EXIT_CODES.get(exc.kind, EXIT_CODES["other"])


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="chatkeep", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_CODES["interrupted"])
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except ChatkeepError as exc:
        if debug:
            raise
        from .output import plain  # error text may quote user input: shown as plain text

        click.echo(f"error: {plain(exc.message)}", err=True)
        if exc.hint:
            click.echo(f"hint: {plain(exc.hint)}", err=True)
        sys.exit(exit_code_for(exc))
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
