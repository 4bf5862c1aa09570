"""Start-up fast path of the reading commands (SPEC §9): ``history`` and ``sessions list``.

Importing Click costs more than a bare interpreter start, so the console script answers the
plain reading forms without it::

    chatkeep [--store URL] [--profile NAME] history [--json] [--archived] [-n N]
    chatkeep [--store URL] [--profile NAME] sessions list [QUERY] [--json]

The text comes from :mod:`.reading`, which the Click commands print too. The fast path only
takes a command line it understands completely; anything else (another option, ``--help``, a
repeated option, a value starting with ``-``, shell completion, an output stream that is not
UTF-8) is left to the Click application, unchanged. Nothing is written until the whole output
is ready: if anything goes wrong on the way (a store that cannot be opened, a bad value), the
Click application runs the command again and reports it exactly as it always does.

A new option of these commands is either added to the tables below (and to :mod:`.reading`)
or, until then, sends its command lines to Click.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # `typing` costs start-up time; only type checkers need it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Per command: its flags (option → keyword) and its options taking an integer ≥ 0.
FLAGS: dict[str, dict[str, str]] = {
    "history": {"--json": "as_json", "--archived": "archived"},
    "sessions list": {"--json": "as_json"},
}
COUNTS: dict[str, dict[str, str]] = {"history": {"-n": "last"}, "sessions list": {}}
#: Per command: the name of its one optional positional argument, if it has one.
ARGUMENT: dict[str, str] = {"sessions list": "query"}
GLOBAL_OPTIONS = ("--store", "--profile")


def parse(argv: list[str], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The command and its keywords when ``argv`` is a form the fast path handles, else None."""
    if "_CHATKEEP_COMPLETE" in environ:  # Click's shell completion
        return None
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes on the command line: Click decides
            return None
    given: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        name, eq, value = argv[i].partition("=")
        if name not in GLOBAL_OPTIONS or name in given:
            return None
        if not eq:
            i += 1
            if i == len(argv):
                return None
            value = argv[i]
        if not value or value.startswith("-"):
            return None
        given[name] = value
        i += 1
    if argv[i : i + 1] == ["history"]:
        command, rest = "history", argv[i + 1 :]
    elif argv[i : i + 2] == ["sessions", "list"]:
        command, rest = "sessions list", argv[i + 2 :]
    else:
        return None
    kwargs = _command_kwargs(command, rest)
    if kwargs is None:
        return None
    # as Click does: the option, else its environment variable when not empty, else the default
    store = given.get("--store") or environ.get("CHATKEEP_STORE") or None
    profile = given.get("--profile") or environ.get("CHATKEEP_PROFILE") or "default"
    return {"command": command, "store": store, "profile": profile, "kwargs": kwargs}


def _command_kwargs(command: str, rest: list[str]) -> dict[str, Any] | None:
    flags, counts, argument = FLAGS[command], COUNTS[command], ARGUMENT.get(command)
    kwargs: dict[str, Any] = {key: False for key in flags.values()}
    kwargs.update({key: None for key in counts.values()})
    if argument:
        kwargs[argument] = ""
    seen: set[str] = set()
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg in flags and arg not in seen:
            kwargs[flags[arg]] = True
        elif arg[:2] in counts and arg[:2] not in seen:
            value = arg[2:]
            if not value:
                i += 1
                value = rest[i] if i < len(rest) else ""
            if not (value.isascii() and value.isdigit()):
                return None
            kwargs[counts[arg[:2]]] = int(value)
            arg = arg[:2]
        elif argument and not arg.startswith("-") and argument not in seen:
            kwargs[argument] = arg
            arg = argument
        else:
            return None
        seen.add(arg)
        i += 1
    return kwargs


def run(argv: list[str]) -> bool:
    """Run a reading command without Click; False (nothing done, nothing written) when the
    command line is not one the fast path handles or the command fails."""
    plan = parse(argv, os.environ)
    stdout = sys.stdout
    if plan is None or stdout is None:
        return False
    # Click writes to a non-UTF-8 stream through its own wrapper: leave those streams to it
    if (getattr(stdout, "encoding", None) or "").lower().replace("_", "-") not in ("utf-8", "utf8"):
        return False
    try:
        text = _render(plan, bold=stdout.isatty())
    except (KeyboardInterrupt, EOFError):
        sys.stderr.write("\naborted\n")  # what the Click application prints on Ctrl-C
        sys.exit(130)
    except Exception:  # noqa: BLE001 - the Click application reports it, as it always does
        return False
    try:
        stdout.write(text)
        stdout.flush()
    except OSError as exc:
        import errno

        if exc.errno != errno.EPIPE:
            raise
        # a closed pipe, as Click handles it: later flushes are silent, the exit status is 1
        sys.stdout = _PacifyFlush(sys.stdout)  # type: ignore[assignment]
        sys.stderr = _PacifyFlush(sys.stderr)  # type: ignore[assignment]
        sys.exit(1)
    return True


def _render(plan: dict[str, Any], *, bold: bool) -> str:
    from .. import open as open_store
    from .reading import history_text, sessions_list_text

    store = open_store(plan["store"], profile=plan["profile"])
    try:
        if plan["command"] == "history":
            return history_text(store, **plan["kwargs"])
        kwargs = plan["kwargs"]
        return sessions_list_text(store, kwargs["query"], as_json=kwargs["as_json"], bold=bold)
    finally:
        store.close()


class _PacifyFlush:
    """A stream whose ``flush`` ignores a closed pipe (Click's wrapper does the same)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno

        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
