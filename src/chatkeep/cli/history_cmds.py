"""``chatkeep history`` and ``chatkeep stats``."""

from __future__ import annotations

import sys

import click

from .context import pass_ctx
from .output import echo_json, plain
from .reading import history_text


@click.command("history")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@click.option(
    "--archived", is_flag=True, help="Show the archive (entries dropped by the live window)."
)
@click.option(
    "-n",
    "last",
    type=click.IntRange(min=0),
    metavar="N",
    help="Only the last N entries (indexes stay those of the whole history).",
)
@pass_ctx
def history_cmd(ctx, as_json: bool, archived: bool, last: int | None) -> None:
    """Show the live history (images as sizes, never base64)."""
    text = history_text(ctx.store(), as_json=as_json, archived=archived, last=last)
    sys.stdout.write(text) if as_json else click.echo(text, nl=False)


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_ctx
def stats_cmd(ctx, as_json: bool) -> None:
    """Entries, sessions, bytes stored, unseen image bytes, archive size, unreadable values."""
    stats = ctx.store().stats()
    if as_json:
        echo_json(stats)
        return
    width = max(len(k) for k in stats)
    for k, v in stats.items():
        click.echo(plain(f"{k:<{width}}  {v}"))
