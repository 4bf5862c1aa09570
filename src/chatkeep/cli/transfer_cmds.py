"""``chatkeep export`` and ``chatkeep import`` (SPEC §10, §14): thin shells over
``chatkeep.export_file`` / ``export_text`` / ``import_file``."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

import chatkeep

from .. import EXPORT_FORMATS, IMPORT_SOURCES, StoreError
from .context import pass_ctx
from .main import EXIT_CODES
from .output import plain, working
from .words import plural

PROGRESS_MIN_BYTES = 1 << 20  # smaller files import too fast for a bar to help


@click.command("export")
@click.option(
    "--session",
    "session_id",
    metavar="ID",
    help="Export one saved session (its id or a unique prefix of 4+ characters).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default="json",
    show_default=True,
    help="json round-trips exactly; md is readable and imports back; html is one safe page.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write to FILE (mode 0600) instead of stdout.",
)
@pass_ctx
def export_cmd(ctx, session_id: str | None, fmt: str, output: str | None) -> None:
    """Export the profile or one session (json, md, jsonl, sharegpt or html)."""
    store = ctx.store()
    if output:  # written to a temporary file first: a failure leaves nothing behind
        try:
            _export(store, session_id, fmt, output)
            return
        except StoreError:
            damage = store.damaged_pages()
            if not damage:
                raise
    else:  # streamed: the damage is looked for before the first line
        damage = store.damaged_pages()
        if not damage:
            _export(store, session_id, fmt, output)
            return
    # pages of the store file do not read: export every row that still does, from a copy
    tables = ", ".join(t for t, _why in damage)
    click.echo(
        plain(f"warning: the store file has damaged pages ({tables}); exporting what still reads"),
        err=True,
    )
    with working("reading around the damage…"), store.rescued() as (copy, skipped):
        _export(copy, session_id, fmt, output)
    if skipped:
        click.echo(f"skipped {plural(len(skipped), 'unreadable row')}:", err=True)
        for row in skipped:
            click.echo(plain(f"  {row['what']}"), err=True)
    click.echo(
        "the export holds everything that still reads"
        + (", except what is listed above" if skipped else "")
        + "; `chatkeep doctor` reports the damage, `chatkeep doctor --repair` rebuilds the store",
        err=True,
    )
    sys.exit(EXIT_CODES["store"])


def _export(store: Any, session_id: str | None, fmt: str, output: str | None) -> None:
    if session_id:
        session_id = store.sessions.resolve(
            session_id, evicted=None
        )  # a unique prefix of 4+ characters
    if output:
        with working("exporting…"):
            chatkeep.export_file(store, output, fmt, session_id)
        click.echo(f"wrote {output}", err=True)
    else:
        for line in chatkeep.export_lines(store, fmt, session_id):  # streamed, session by session
            sys.stdout.write(line + "\n")


@contextmanager
def _progress(path: str) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr for a large import (nothing when not a terminal)."""
    size = os.path.getsize(path) if os.path.isfile(path) else PROGRESS_MIN_BYTES
    if not sys.stderr.isatty() or size < PROGRESS_MIN_BYTES:
        with working(f"importing {path} (one transaction)…"):
            yield None
        return
    from rich.console import Console  # lazy: only interactive imports draw a bar
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("importing", total=None)

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total or None)

        yield tick


def _stdin_copy() -> str:
    """Standard input saved to a private temporary file (imports read files by path)."""
    fd, tmp = tempfile.mkstemp(prefix=".chatkeep-import-", suffix=".json")
    with os.fdopen(fd, "wb") as fh:
        while chunk := sys.stdin.buffer.read(1 << 20):
            fh.write(chunk)
    return tmp


def _summary(report: dict[str, Any]) -> str:
    """The report the user reads: ``imported 41 conversations from chatgpt (1,204 messages,
    37 images): 41 new saved sessions; skipped 2:`` then a line each skipped conversation,
    ``"Corrupted entry" — it holds no messages …`` (its title, else where it is in the file)."""
    if report.get("whole"):
        line = (
            f"imported {report['source']} data: {plural(report['history'], 'live entry', 'live entries')}, "
            f"{report['archived']:,} archived, {plural(report['sessions'], 'session')}, "
            f"{plural(report['keys'], 'key')}"
        )
        if report.get("backup"):
            line += f"\nthe profile it replaced was backed up to {report['backup']}"
        return line
    if report.get("empty"):
        return f"nothing to import: the file is a {report['source']} export of an empty profile"
    added, already, skipped = report["added"], report["already"], report["skipped"]
    held = f"{plural(report['messages'], 'message')}, {plural(report['images'], 'image')}"
    line = f"imported {plural(added + already, 'conversation')} from {report['source']} ({held}): "
    line += plural(added, "new saved session")
    if already:
        line += f", {already:,} already there"
    if skipped:
        line += f"; skipped {len(skipped):,}:"
    for s in skipped:
        what = f'"{s["title"]}"' if s.get("title") else s["where"]
        line += f"\n  {what} — {s['reason']}"
    return line


@click.command("import")
@click.argument("file", type=click.Path(exists=True, allow_dash=True))
@click.option(
    "--from",
    "source",
    type=click.Choice(IMPORT_SOURCES),
    default="auto",
    show_default=True,
    help="The file's format (auto detects it); see docs/import-export.md.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="For a whole-profile chatkeep export or browsa dump: replace this profile's content "
    "(a backup export of it is written beside the store first, and named).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
@pass_ctx
def import_cmd(ctx, file: str, source: str, replace: bool, as_json: bool) -> None:
    """Import an export: chatkeep, browsa, ChatGPT, Claude, Open WebUI, LibreChat, llm, …

    Foreign conversations become saved sessions (the live history is untouched); importing
    the same file again adds nothing; a bad file is refused whole."""
    path = _stdin_copy() if file == "-" else file
    try:
        with _progress(path) as tick:
            report = chatkeep.import_file(
                ctx.store(), path, source=source, replace=replace, progress=tick
            )
    finally:
        if file == "-":
            os.unlink(path)
    if as_json:
        click.echo(json.dumps(report, allow_nan=False))  # strict JSON: counts only
    else:
        click.echo(_summary(report))
