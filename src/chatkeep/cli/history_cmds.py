"""``chatkeep history`` and ``chatkeep stats``."""

from __future__ import annotations

import click

from .. import entry_view
from .context import pass_ctx
from .output import echo_json, plain, render_entry


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
def history_cmd(ctx, as_json: bool, archived: bool, last: int | None) -> None:  # noqa: ANN001
    """Show the live history (images as sizes, never base64)."""
    store = ctx.store()
    entries = store.history.archived() if archived else store.history.read()
    start = 0 if last is None else max(0, len(entries) - last)
    views = [entry_view(i, entries[i]) for i in range(start, len(entries))]
    if as_json:
        echo_json(views)
        return
    if not entries:
        click.echo("(the archive is empty)" if archived else "(no messages yet)")
    for v in views:
        click.echo(plain(render_entry(v)))


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_ctx
def stats_cmd(ctx, as_json: bool) -> None:  # noqa: ANN001
    """Entries, sessions, bytes stored, unseen image bytes, archive size, unreadable values."""
    stats = ctx.store().stats()
    if as_json:
        echo_json(stats)
        return
    width = max(len(k) for k in stats)
    for k, v in stats.items():
        click.echo(plain(f"{k:<{width}}  {v}"))
