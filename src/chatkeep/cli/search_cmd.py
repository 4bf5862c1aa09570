"""``chatkeep search QUERY``: message hits from everywhere, with highlighted snippets (§16)."""

from __future__ import annotations

import datetime as _dt
import warnings
from typing import Any

import click

import chatkeep

from .context import pass_ctx
from .output import echo_json, plain

PLACES = ("live", "archive", "session", "evicted")


def _when(ms: Any) -> str:
    if not isinstance(ms, int):
        return ""
    try:
        return _dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return ""


def _snippet(snip: str) -> str:
    """The snippet for the terminal: matched spans bold yellow (click drops the styling when
    the output is not a terminal), every piece of user text escaped by :func:`plain`."""
    return "".join(
        click.style(plain(text), fg="yellow", bold=True) if marked else plain(text)
        for text, marked in chatkeep.split_snippet(snip)
    )


def _heading(hit: dict[str, Any]) -> str:
    where = hit["where"]
    if hit["sessionId"]:
        name = plain(hit["sessionName"]) or "(no name)"
        where = f"{where} {name} [{hit['sessionId'][:8]}]"
    bits = [click.style(where, bold=True), f"#{hit['index']}", hit["role"], _when(hit["createdAt"])]
    return "  ".join(b for b in bits if b)


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--text", "text_only", is_flag=True, help="Words only (substrings, any script).")
@click.option(
    "--semantic", is_flag=True, help="By meaning only (needs pip install 'chatkeep[semantic]')."
)
@click.option(
    "-n", "limit", type=click.IntRange(1, 500), default=20, show_default=True, metavar="N",
    help="At most N hits.",
)  # fmt: skip
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip the first M hits.")
@click.option(
    "--where",
    "places",
    type=click.Choice(PLACES),
    multiple=True,
    help="Only these places (repeat the option for several).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def search_cmd(
    ctx,
    query: tuple[str, ...],
    text_only: bool,
    semantic: bool,
    limit: int,
    offset: int,
    places: tuple[str, ...],
    as_json: bool,
) -> None:
    """Find messages by words or meaning, everywhere: live, archive, saved and evicted sessions.

    Imports are included. Without --text or --semantic both are used (hybrid; text only
    when the semantic extra is not installed, with a note)."""
    if text_only and semantic:
        raise click.UsageError("--text and --semantic exclude each other: give one of them")
    mode = "text" if text_only else "semantic" if semantic else "hybrid"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", chatkeep.SemanticUnavailable)
        hits = ctx.store().search(
            " ".join(query), limit=limit, offset=offset, where=list(places) or None, mode=mode
        )
    for w in caught:
        if issubclass(w.category, chatkeep.SemanticUnavailable):
            click.echo(f"note: {w.message}", err=True)
    if as_json:
        echo_json(hits)
        return
    if not hits:
        click.echo("no messages found", err=True)
        return
    for hit in hits:
        click.echo(_heading(hit))
        click.echo("  " + _snippet(hit["snippet"]))
