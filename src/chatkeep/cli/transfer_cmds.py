"""``chatkeep export`` and ``chatkeep import``."""

from __future__ import annotations

import json
import sys

import click

from .. import InvalidValue, entry_view
from .context import pass_ctx
from .output import render_entry, working


def _markdown(title: str, entries: list[dict]) -> str:
    lines = [f"# {title}", ""]
    for i, e in enumerate(entries):
        lines.append(render_entry(entry_view(i, e)))
        lines.append("")
    return "\n".join(lines)


@click.command("export")
@click.option(
    "--session",
    "session_id",
    metavar="ID",
    help="Export one saved session instead of the whole profile.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "md"]),
    default="json",
    show_default=True,
    help="json (re-imports exactly) or md (Markdown to read).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write to FILE instead of stdout.",
)
@pass_ctx
def export_cmd(ctx, session_id: str | None, fmt: str, output: str | None) -> None:  # noqa: ANN001
    """Export the profile (JSON round-trips exactly through `import`) or one session."""
    store = ctx.store()
    if session_id:
        data = store.sessions.get(store.sessions.resolve(session_id))
        if data is None:
            raise InvalidValue(
                f"no saved session with id {session_id!r}",
                hint="list ids with `chatkeep sessions list`",
            )
        text = (
            _markdown(data["name"], data["history"])
            if fmt == "md"
            else json.dumps(data, ensure_ascii=False)
        )
    else:
        with working("exporting the profile…"):
            data = store.export_data()
        text = (
            _markdown(f"chatkeep profile {store.profile}", data["history"])
            if fmt == "md"
            else json.dumps(data, ensure_ascii=False)
        )
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        click.echo(f"wrote {output}", err=True)
    else:
        sys.stdout.write(text + "\n")


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option(
    "--from",
    "source",
    type=click.Choice(["auto", "chatkeep", "browsa"]),
    default="auto",
    show_default=True,
    help="chatkeep export, or a browsa chrome.storage.local dump.",
)
@click.option("--replace", is_flag=True, help="Replace this profile's content if it is not empty.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the report {source, keys, history, archived, sessions} as JSON.",
)
@pass_ctx
def import_cmd(ctx, file: str, source: str, replace: bool, as_json: bool) -> None:  # noqa: ANN001
    """Import a chatkeep export or a browsa dump into this profile (whole or not at all)."""
    try:
        if file == "-":
            data = json.load(sys.stdin)
        else:
            with open(file, encoding="utf-8") as fh:
                data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidValue(
            f"cannot read {file} as JSON: {exc}",
            hint="pass a file written by `chatkeep export` or a browsa dump",
        ) from None
    with working(f"importing {file} (one transaction)…"):
        report = ctx.store().import_data(data, source=source, replace=replace)
    if as_json:
        click.echo(json.dumps(report))
    else:
        click.echo(
            f"imported {report['source']} data: {report['history']} live entries, "
            f"{report['archived']} archived, {report['sessions']} sessions, {report['keys']} keys"
        )
