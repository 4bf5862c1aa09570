"""``chatkeep attach …`` and ``chatkeep undo-attach ID`` (SPEC §8, §10).

``attach SOURCE`` takes an ``http(s)://`` URL, a local HTML/Markdown/text/PDF/image file, or a
``data:image/…`` URL; ``attach --video URL --transcript FILE`` attaches a video transcript.
``--json`` prints the :class:`~chatkeep.attach.store_ops.AttachResult` as a stable object
(``attachId, kind, title, url, chars, images, truncated, changed, summarizing, index,
summaryError, summaryCalls, summaryWritten``). Bad sources raise :class:`~chatkeep.errors.AttachError` (exit 8, nothing
stored); an unknown id for ``undo-attach`` exits 1. An attachment over the summary threshold
is condensed right away by the active provider: one stderr line announces it with its number of
model calls before the first one, then progress (a bar on a terminal, one line per provider call
otherwise); each call's usage is stored and counted by ``chatkeep usage``; ``--no-summary``
skips that. A failed summary leaves the raw
attachment: ``summaryWritten`` is false and ``summaryError`` says why. Ctrl-C while condensing
keeps the raw attachment and exits 130.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import click

from .. import (
    AttachResult,
    NotFound,
    attach_source,
    attach_video,
    summarize_attachment,
    undo_attach,
)
from .context import pass_ctx
from .main import EXIT_CODES
from .output import echo_json, plain
from .words import plural


def _summarize_now(store: Any, attach_id: str) -> bool:
    """Condense the attachment now, with progress on stderr (a bar on a terminal, one line per
    finished call otherwise). Ctrl-C stops waiting: the raw attachment stays, exit 130."""
    result: dict[str, Any] = {}
    finished = threading.Event()
    progress = _Progress()

    def work() -> None:
        try:
            result["written"] = summarize_attachment(
                store, attach_id, on_progress=progress.update, raise_errors=True
            )
        except BaseException as exc:  # re-raised in the main thread
            result["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=work, name="chatkeep-summary", daemon=True).start()
    try:
        while not finished.wait(0.1):
            pass
    except KeyboardInterrupt:
        progress.close()
        click.echo(
            f"\n(stopped while condensing: attachment {attach_id} is kept in full, not condensed; "
            "`chatkeep history` shows it)",
            err=True,
        )
        sys.stderr.flush()
        sys.stdout.flush()
        # the provider calls still in flight cannot be joined quickly; nothing is half-written
        # (the write-back is one transaction, not started yet or done)
        os._exit(EXIT_CODES["interrupted"])
    progress.close()
    if "error" in result:
        raise result["error"]
    return bool(result.get("written"))


class _Progress:
    """Summary progress on stderr: a rich bar on a terminal, plain lines when piped."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None
        self._lock = threading.Lock()

    def update(self, done: int, total: int) -> None:
        with self._lock:
            if not done:  # announced before the first call, on a terminal or not (SPEC §7.5)
                calls = plural(total, "model call")
                click.echo(
                    f"condensing the attachment with the active provider in {calls} "
                    "(each one is billed; `chatkeep usage` counts them; --no-summary skips this)",
                    err=True,
                )
            if not sys.stderr.isatty():
                if done:
                    click.echo(f"condensing: call {done} of {total} done", err=True)
                return
            if self._bar is None:
                from rich.console import Console  # lazy: only a terminal draws the bar
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

                self._bar = Progress(
                    TextColumn("condensing the attachment"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    console=Console(stderr=True),
                )
                self._bar.start()
                self._task = self._bar.add_task("summary", total=total)
            self._bar.update(self._task, completed=done, total=total)

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None


def _describe(result: AttachResult) -> str:
    r = result.as_dict()
    bits = [f"{r['chars']:,} chars"]
    if r["images"]:
        bits.append(f"{r['images']} image{'s' if r['images'] != 1 else ''}")
    if r["truncated"]:
        bits.append("truncated")
    if r["changed"]:
        bits.append("changed since it was last attached")
    where = f" — {r['url']}" if r["url"] else ""
    return f"attached {r['attachId']}  {r['title']}{where} ({', '.join(bits)})"


@click.command("attach")
@click.argument("source", required=False)
@click.option("--title", help="Title to show instead of the extracted one.")
@click.option("--mode", help="Context mode for the Mode: line [default: the contextMode setting].")
@click.option("--video", "video_url", metavar="URL", help="Video URL (needs --transcript).")
@click.option(
    "--transcript",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="WebVTT/SRT transcript of --video.",
)
@click.option("--no-summary", is_flag=True, help="Keep a long attachment raw (no auto-summary).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def attach_cmd(
    ctx,
    source: str | None,
    title: str | None,
    mode: str | None,
    video_url: str | None,
    transcript: str | None,
    no_summary: bool,
    as_json: bool,
) -> None:
    """Attach a web page, file, PDF or image, or a video transcript (--video URL --transcript FILE)."""
    written: list[bool] = []

    def summarize(store, attach_id: str) -> None:
        # the process ends with the command, so the summary runs now, in the foreground; a
        # provider failure propagates, so the result's summaryError names it
        written.append(_summarize_now(store, attach_id))

    hook = None if no_summary else summarize
    if video_url or transcript:
        if source:
            raise click.UsageError("give either SOURCE or --video URL --transcript FILE, not both")
        if not (video_url and transcript):
            raise click.UsageError("--video and --transcript go together")
        result = attach_video(
            ctx.store(), video_url, transcript, title=title, mode=mode, summarize=hook
        )
    elif source:
        result = attach_source(ctx.store(), source, title=title, mode=mode, summarize=hook)
    else:
        raise click.UsageError("missing SOURCE (a URL or a file), or --video URL --transcript FILE")
    data = {**result.as_dict(), "summaryWritten": bool(written and written[0])}
    if as_json:
        echo_json(data)
        return
    click.echo(plain(_describe(result)))
    if result.summarizing:
        click.echo(
            "condensed to a summary by the model (images kept; the original text is kept too)"
            if data["summaryWritten"]
            else "the summary came back empty or the attachment changed; it stays raw",
            err=True,
        )
    elif result.summary_error:
        click.echo(plain(f"could not condense it ({result.summary_error}); it stays raw"), err=True)


@click.command("undo-attach")
@click.argument("attach_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_ctx
def undo_attach_cmd(ctx, attach_id: str, as_json: bool) -> None:
    """Remove an attachment from the live history by its attach id."""
    if not undo_attach(ctx.store(), attach_id):
        raise NotFound(
            f"no attachment with id {attach_id!r} in the live history",
            hint="see attach ids with `chatkeep history --json`",
        )
    if as_json:
        echo_json({"attachId": attach_id, "removed": True})
    else:
        click.echo(f"removed attachment {attach_id}")
