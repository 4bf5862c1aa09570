"""``chatkeep sessions …``: the drawer (SPEC §4)."""

from __future__ import annotations

import sys

import click

from .. import InvalidValue, NotFound, entry_view
from .context import pass_ctx
from .output import echo_json, plain, render_entry
from .reading import sessions_list_text
from .reading import when as _when


def _missing(session_id: str) -> NotFound:
    return NotFound(
        f"no saved session with id {session_id!r}",
        hint="list ids with `chatkeep sessions list`",
    )


@click.group("sessions")
def sessions_group() -> None:
    """Saved sessions: list/search, save, new, load, rename, pin, delete, show."""


@sessions_group.command("list")
@click.argument("query", required=False, default="")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@click.option(
    "-n", "--limit", type=click.IntRange(min=0), default=None, help="Show at most N sessions."
)
@click.option(
    "--offset", type=click.IntRange(min=0), default=0, show_default=True, help="Skip the first N."
)
@pass_ctx
def list_cmd(ctx, query: str, as_json: bool, limit: int | None, offset: int) -> None:  # noqa: ANN001
    """List saved sessions, pinned first then newest; QUERY searches names and text."""
    # the text is made in .reading, which the start-up fast path (.fast) prints as well
    text = sessions_list_text(
        ctx.store(),
        query,
        as_json=as_json,
        bold=sys.stdout.isatty(),
        limit=limit,
        offset=offset,
    )
    sys.stdout.write(text) if as_json else click.echo(text, nl=False)


@sessions_group.command("save")
@click.argument("name", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the saved row {id, name, createdAt, pinned}."
)
@pass_ctx
def save_cmd(ctx, name: str | None, as_json: bool) -> None:  # noqa: ANN001
    """Save the live conversation as a new session (NAME or an automatic name)."""
    row = ctx.store().sessions.save(name)
    if row is None:
        raise InvalidValue(
            "the live history is empty; there is nothing to save",
            hint="chat or attach something first",
        )
    echo_json(row) if as_json else click.echo(f"saved {row['id']}  {plain(row['name'])}")


@sessions_group.command("new")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the saved row {id, name, createdAt, pinned} (null when nothing was saved).",
)
@pass_ctx
def new_cmd(ctx, as_json: bool) -> None:  # noqa: ANN001
    """Save the live conversation (back into its session if loaded) and start an empty one."""
    row = ctx.store().sessions.new()
    if as_json:
        echo_json(row)
    elif row is None:
        click.echo("the live history was already empty")
    else:
        click.echo(f"saved {row['id']}  {plain(row['name'])}; started a new conversation")


@sessions_group.command("load")
@click.argument("session_id")
@pass_ctx
def load_cmd(ctx, session_id: str) -> None:  # noqa: ANN001
    """Replace the live history with a saved session."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    n = store.sessions.load(session_id)
    if n < 0:
        raise _missing(session_id)
    click.echo(f"loaded {session_id}: {n} entries")


@sessions_group.command("rename")
@click.argument("session_id")
@click.argument("name")
@pass_ctx
def rename_cmd(ctx, session_id: str, name: str) -> None:  # noqa: ANN001
    """Rename a saved session."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    if not store.sessions.rename(session_id, name):
        raise _missing(session_id)
    click.echo(f"renamed {session_id}")


@sessions_group.command("pin")
@click.argument("session_id")
@pass_ctx
def pin_cmd(ctx, session_id: str) -> None:  # noqa: ANN001
    """Pin a session to the top of the drawer (pinned sessions are never evicted)."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    if not store.sessions.pin(session_id, True):
        raise _missing(session_id)
    click.echo(f"pinned {session_id}")


@sessions_group.command("unpin")
@click.argument("session_id")
@pass_ctx
def unpin_cmd(ctx, session_id: str) -> None:  # noqa: ANN001
    """Unpin a session."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    if not store.sessions.pin(session_id, False):
        raise _missing(session_id)
    click.echo(f"unpinned {session_id}")


@sessions_group.command("delete")
@click.argument("session_id")
@pass_ctx
def delete_cmd(ctx, session_id: str) -> None:  # noqa: ANN001
    """Delete a saved session and its body."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    if not store.sessions.delete(session_id):
        raise _missing(session_id)
    click.echo(f"deleted {session_id}")


@sessions_group.command("show")
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def show_cmd(ctx, session_id: str, as_json: bool) -> None:  # noqa: ANN001
    """Show one saved session (images as sizes, never base64)."""
    store = ctx.store()
    got = store.sessions.get(store.sessions.resolve(session_id))
    if got is None:
        raise _missing(session_id)
    views = [entry_view(i, e) for i, e in enumerate(got.pop("history"))]
    if as_json:
        echo_json({**got, "history": views})
        return
    click.echo(
        f"{plain(got['name'])}  ({got['id']}, {_when(got['createdAt'])}{', pinned' if got['pinned'] else ''})"
    )
    for v in views:
        click.echo(plain(render_entry(v)))
