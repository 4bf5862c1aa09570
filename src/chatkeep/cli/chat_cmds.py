"""``chatkeep chat``, ``chatkeep edit`` and ``chatkeep regenerate`` (SPEC §3.5, §7.2).

Each command asks the engine to prepare its turn (every check, nothing written), then runs it.

The reply streams to stdout as it arrives, as plain text: control characters a model may send
(``ESC[2J`` and every other C0/C1 control but newline and tab) are shown escaped by
:func:`~chatkeep.cli.output.plain`, never executed by the terminal (SPEC §12). The model's
reasoning ("thinking"), when it sends any, streams dimmed to stderr as it arrives — never to
stdout, so a redirected answer holds the answer alone; it is stored on the reply's entry
(``reasoning``) and is in ``--json``'s ``reasoning``. Notices (retries,
trimmed attachments, dropped images, truncation warnings) go to stderr; when no text has arrived
after :data:`WAIT_NOTICE_SECONDS`, one line says the request is still waiting. Ctrl-C stops the
stream and keeps the partial answer marked ``interrupted`` (exit 130). A reply whose stream ended
without the provider's end marker is kept ``interrupted`` too, with a notice, and the command
exits 5 (a provider error) so a script never takes it for a whole answer. With ``--json``
nothing streams and one JSON object is printed at the end — the reply, or on failure
``{"error": {"type", "message", "hint", "exitCode"}}`` (the error also goes to stderr as usual).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import click

from .. import AttachError, ChatkeepError, InvalidValue, ProviderError, extract_file, usage_totals
from .context import pass_ctx
from .main import EXIT_CODES, exit_code_for
from .output import echo_json, plain
from .usage_cmd import usage_line

#: Seconds without a first piece of the reply before the command says it is still waiting.
WAIT_NOTICE_SECONDS = 3.0

_JSON = click.option("--json", "as_json", is_flag=True, help="Print the reply as one JSON object.")
_PROVIDER = click.option("--provider", help="Provider card to use (default: the active one).")
_MODEL = click.option("--model", help="Model to use instead of the card's own.")


def _text_arg(text: str) -> str:
    """TEXT as given, or standard input when TEXT is ``-`` (one trailing newline dropped)."""
    if text != "-":
        return text
    data = sys.stdin.read()
    if data.endswith("\n"):
        data = data[:-2] if data.endswith("\r\n") else data[:-1]
    if not data.strip():
        raise InvalidValue(
            "standard input held no text to send",
            hint="pipe the message in, e.g. echo hi | chatkeep chat -",
        )
    return data


def _read_images(paths: tuple[str, ...]) -> list[str]:
    urls = []
    for path in paths:
        ex = extract_file(path)
        if ex.kind != "image" or not ex.images:
            raise AttachError(
                f"{path} is not an image", hint="--image takes PNG, JPEG, WebP or GIF files"
            )
        urls.append(ex.images[0])
    return urls


def _wait(
    finished: threading.Event,
    cancel: threading.Event,
    first: threading.Event,
    waiting_note: str,
) -> bool:
    """Wait for the turn; the first Ctrl-C stops the stream and waits for the partial answer
    to be saved, a second one stops waiting. True when the user pressed Ctrl-C. When nothing
    has arrived (``first`` unset) after :data:`WAIT_NOTICE_SECONDS`, ``waiting_note`` is shown
    once on stderr.

    The wait is on an Event, never on ``Thread.join``: on Python 3.11 a ``join`` interrupted by
    Ctrl-C marks the thread as finished while it still runs, so the next ``join`` returns at
    once and the reply is lost."""
    interrupted = False
    started = time.monotonic()
    noted = False
    while True:
        try:
            while not finished.wait(0.1):
                if noted or first.is_set() or interrupted:
                    continue
                if time.monotonic() - started >= WAIT_NOTICE_SECONDS:
                    noted = True
                    click.echo(click.style(f"note: {plain(waiting_note)}", dim=True), err=True)
            return interrupted
        except KeyboardInterrupt:
            if interrupted:
                click.echo("(stopped without waiting: the partial answer may be lost)", err=True)
                sys.exit(EXIT_CODES["interrupted"])
            interrupted = True
            cancel.set()
            click.echo("\n(stopping… press Ctrl-C again to quit at once)", err=True)


def _run(chat: Any, as_json: bool, **kwargs: Any) -> None:
    """Run one turn of ``chat`` (the store's engine) in a worker thread so Ctrl-C can stop the
    stream cleanly; a turn stopped by Ctrl-C keeps its partial answer (``interrupted``) and
    exits 130. The usage line ends with the conversation's cache-hit share."""
    call = chat.run
    cancel = threading.Event()
    finished = threading.Event()
    first = threading.Event()
    streamed = False
    thinking = False  # reasoning is on stderr and its line is not ended yet

    def end_thinking() -> None:
        nonlocal thinking
        if thinking:
            thinking = False
            click.echo("", err=True)

    def on_delta(text: str) -> None:
        nonlocal streamed
        first.set()
        if not as_json:
            end_thinking()
            streamed = True
            sys.stdout.write(plain(text))  # model text: escape sequences shown, not run
            sys.stdout.flush()

    def on_reasoning(text: str) -> None:
        nonlocal thinking
        first.set()
        if not as_json:
            thinking = True
            click.echo(click.style(plain(text), dim=True), err=True, nl=False)

    def on_notice(message: str) -> None:
        end_thinking()
        click.echo(click.style(f"note: {plain(message)}", dim=True), err=True)

    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["reply"] = call(
                on_delta=on_delta,
                on_notice=on_notice,
                on_reasoning=on_reasoning,
                cancel=cancel,
                **kwargs,
            )
        except BaseException as exc:  # re-raised in the main thread
            result["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="chatkeep-turn", daemon=True)
    worker.start()
    card = kwargs["turn"].card
    waiting = (
        f"waiting for {card.name} ({card.model}) to answer — no reply yet; "
        f"it gives up after {card.timeout:g} s of silence; Ctrl-C stops"
    )
    stopped = _wait(finished, cancel, first, waiting)
    end_thinking()
    if "error" in result:
        if streamed:
            sys.stdout.write("\n")
        raise result["error"]
    reply = result["reply"]
    if as_json:
        echo_json(dataclasses.asdict(reply))
    else:
        if streamed or reply.text:
            if not streamed:
                sys.stdout.write(plain(reply.text))
            sys.stdout.write("\n")
        session = usage_totals(chat.store.history.read()) if reply.landed == "live" else None
        line = usage_line(reply.usage, reply.cost, session)
        if line:
            click.echo(click.style(line, dim=True), err=True)
        if reply.interrupted and stopped:
            if reply.text:
                click.echo("(stopped: the partial answer was kept)", err=True)
            else:
                click.echo("(stopped before any answer arrived: no reply was saved)", err=True)
        if reply.landed == "session":
            click.echo(f"(the reply was saved into session {reply.session_id})", err=True)
        elif reply.landed == "archive":
            click.echo("(its session was deleted: question and reply are in the archive)", err=True)
    if stopped:
        sys.stdout.flush()
        sys.exit(EXIT_CODES["interrupted"])
    if reply.interrupted and reply.text:  # the stream ended without its end marker
        sys.stdout.flush()
        sys.exit(exit_code_for(ProviderError("the reply was cut short")))


def _json_errors(command: Callable[..., None]) -> Callable[..., None]:
    """With ``--json``, a failure also prints ``{"error": {type, message, hint, exitCode}}`` on
    stdout (the usual ``error:``/``hint:`` lines still go to stderr, the exit code is the same)."""

    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except ChatkeepError as exc:
            if kwargs.get("as_json"):
                echo_json(
                    {
                        "error": {
                            "type": type(exc).__name__,
                            "message": exc.message,
                            "hint": exc.hint,
                            "exitCode": exit_code_for(exc),
                        }
                    }
                )
            raise

    wrapper.__name__ = command.__name__
    wrapper.__doc__ = command.__doc__
    return wrapper


@click.command("chat")
@click.argument("text")
@click.option(
    "--image",
    "images",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Attach an image file (repeatable).",
)
@_PROVIDER
@_MODEL
@_JSON
@pass_ctx
@_json_errors
def chat_cmd(
    ctx, text: str, images: tuple[str, ...], provider: str | None, model: str | None, as_json: bool
) -> None:
    """Send one message and stream the reply.

    TEXT `-` reads the message from standard input. Ctrl-C stops the reply, keeps the partial
    answer (marked interrupted) and exits 130."""
    text = _text_arg(text)
    chat = ctx.store().chat
    turn = chat.prepare_send(text, _read_images(images), provider, model)
    _run(chat, as_json, turn=turn)


@click.command("edit")
@click.argument("index", type=int)
@click.argument("text")
@_PROVIDER
@_MODEL
@_JSON
@pass_ctx
@_json_errors
def edit_cmd(
    ctx, index: int, text: str, provider: str | None, model: str | None, as_json: bool
) -> None:
    """Edit your message at INDEX and send it again (everything after it is replaced).

    TEXT `-` reads the new text from standard input."""
    text = _text_arg(text)
    chat = ctx.store().chat
    _run(chat, as_json, turn=chat.prepare_edit(index, text, None, provider, model))


@click.command("regenerate")
@_PROVIDER
@_MODEL
@_JSON
@pass_ctx
@_json_errors
def regenerate_cmd(ctx, provider: str | None, model: str | None, as_json: bool) -> None:
    """Ask for a new answer to your last message."""
    chat = ctx.store().chat
    _run(chat, as_json, turn=chat.prepare_regenerate(provider, model))
