"""``chatkeep sessions …``: the drawer (SPEC §4)."""

from __future__ import annotations

import sys

import click

from .. import InvalidValue, NotFound, entry_view
from .context import pass_ctx
from .output import columns_text, echo_json, plain, render_entry
from .reading import sessions_list_text
from .reading import when as _when
from .words import plural


def _missing(session_id: str) -> NotFound:
    return NotFound(
        f"no saved session with id {session_id!r}",
        hint="list ids with `chatkeep sessions list`",
    )


def _left_drawer(store, row: dict | None) -> None:
    """Say on stderr how many sessions a write moved out of the drawer, and where they are."""
    n = (row or {}).get("evicted") or 0
    if n:
        cap = store.local.get("maxSessions")
        them = "it" if n == 1 else "them"
        click.echo(
            f"{n} session{'' if n == 1 else 's'} left the drawer (maxSessions={cap});"
            f" `chatkeep sessions list --evicted` shows {them}",
            err=True,
        )


@click.group("sessions")
def sessions_group() -> None:
    """Saved sessions: list/search, save, new, load, rename, pin, delete, show.

    Sessions the maxSessions cap moved out of the drawer: `list --evicted`, `restore ID`.
    """


@sessions_group.command("list")
@click.argument("query", required=False, default="")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@click.option(
    "-n", "--limit", type=click.IntRange(min=0), default=None, help="Show at most N sessions."
)
@click.option(
    "--offset", type=click.IntRange(min=0), default=0, show_default=True, help="Skip the first N."
)
@click.option(
    "--evicted",
    is_flag=True,
    help="List the sessions the maxSessions cap moved out of the drawer (QUERY: in names).",
)
@pass_ctx
def list_cmd(ctx, query: str, as_json: bool, limit: int | None, offset: int, evicted: bool) -> None:
    """List saved sessions, pinned first then newest; QUERY searches names and text."""
    if evicted:
        rows = ctx.store().sessions.evicted(query)
        rows = rows[offset:] if limit is None else rows[offset : offset + limit]
        if as_json:
            echo_json(rows)
        elif not rows:
            click.echo("(no evicted sessions)")
        else:
            table = [
                [
                    plain(c)
                    for c in (r["id"], r["name"], _when(r["createdAt"]), _when(r["evictedAt"]))
                ]
                for r in rows
            ]
            headers = ("id", "name", "created", "evicted")
            click.echo(columns_text(headers, table, bold=sys.stdout.isatty()), nl=False)
        return
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
    "--new", "as_new", is_flag=True, help="Save a copy as a new session, even when one is loaded."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the saved row {id, name, createdAt, pinned}."
)
@pass_ctx
def save_cmd(ctx, name: str | None, as_new: bool, as_json: bool) -> None:
    """Save the live conversation: into the loaded session (NAME renames it), else as a new one."""
    store = ctx.store()
    loaded = store.sessions.active_id()
    row = store.sessions.save(name) if as_new else store.sessions.write_back(name)
    if row is None:
        raise InvalidValue(
            "the live history is empty; there is nothing to save",
            hint="chat or attach something first",
        )
    if as_json:
        echo_json(row)
    else:
        done = "updated" if row["id"] == loaded and not as_new else "saved"
        click.echo(f"{done} {row['id']}  {plain(row['name'])}")
    _left_drawer(store, row)


@sessions_group.command("new")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the saved row {id, name, createdAt, pinned} (null when nothing was saved).",
)
@pass_ctx
def new_cmd(ctx, as_json: bool) -> None:
    """Save the live conversation (back into its session if loaded) and start an empty one."""
    store = ctx.store()
    row = store.sessions.new()
    if as_json:
        echo_json(row)
    elif row is None:
        click.echo("the live history was already empty")
    else:
        click.echo(f"saved {row['id']}  {plain(row['name'])}; started a new conversation")
    _left_drawer(store, row)


@sessions_group.command("load")
@click.argument("session_id")
@pass_ctx
def load_cmd(ctx, session_id: str) -> None:
    """Save the live conversation back (into its session if loaded), then load a saved session."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    report = store.sessions.switch(session_id)
    if report is None:
        raise _missing(session_id)
    saved = report["savedBack"]
    if saved is not None:
        click.echo(f"saved {saved['id']}  {plain(saved['name'])}")
    click.echo(f"loaded {session_id}: {plural(report['count'], 'entry', 'entries')}")
    _left_drawer(store, report)


@sessions_group.command("restore")
@click.argument("session_id")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the restored row {id, name, createdAt, pinned}."
)
@pass_ctx
def restore_cmd(ctx, session_id: str, as_json: bool) -> None:
    """Bring an evicted session back into the drawer, at the top (see `list --evicted`)."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id, evicted=True)
    row = store.sessions.restore(session_id)
    if row is None:
        raise NotFound(
            f"no evicted session with id {session_id!r}",
            hint="list them with `chatkeep sessions list --evicted`",
        )
    echo_json(row) if as_json else click.echo(f"restored {row['id']}  {plain(row['name'])}")
    _left_drawer(store, row)


@sessions_group.command("rename")
@click.argument("session_id")
@click.argument("name")
@pass_ctx
def rename_cmd(ctx, session_id: str, name: str) -> None:
    """Rename a saved session."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    if not store.sessions.rename(session_id, name):
        raise _missing(session_id)
    click.echo(f"renamed {session_id}")


@sessions_group.command("pin")
@click.argument("session_id")
@pass_ctx
def pin_cmd(ctx, session_id: str) -> None:
    """Pin a session to the top of the drawer (pinned sessions are never evicted)."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    if not store.sessions.pin(session_id, True):
        raise _missing(session_id)
    click.echo(f"pinned {session_id}")


@sessions_group.command("unpin")
@click.argument("session_id")
@pass_ctx
def unpin_cmd(ctx, session_id: str) -> None:
    """Unpin a session."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id)
    if not store.sessions.pin(session_id, False):
        raise _missing(session_id)
    click.echo(f"unpinned {session_id}")


@sessions_group.command("delete")
@click.argument("session_id")
@pass_ctx
def delete_cmd(ctx, session_id: str) -> None:
    """Delete a saved (or evicted) session and its body, for good."""
    store = ctx.store()
    session_id = store.sessions.resolve(session_id, evicted=None)
    if not store.sessions.delete(session_id):
        raise _missing(session_id)
    click.echo(f"deleted {session_id}")


@sessions_group.command("show")
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def show_cmd(ctx, session_id: str, as_json: bool) -> None:
    """Show one saved (or evicted) session (images as sizes, never base64)."""
    store = ctx.store()
    got = store.sessions.get(store.sessions.resolve(session_id, evicted=None))
    if got is None:
        raise _missing(session_id)
    views = [entry_view(i, e) for i, e in enumerate(got.pop("history"))]
    if as_json:
        echo_json({**got, "history": views})
        return
    flags = (", pinned" if got["pinned"] else "") + (", evicted" if "evictedAt" in got else "")
    click.echo(f"{plain(got['name'])}  ({got['id']}, {_when(got['createdAt'])}{flags})")
    for v in views:
        click.echo(plain(render_entry(v)))
