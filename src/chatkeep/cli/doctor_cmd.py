"""``chatkeep doctor [--repair] [--restore-quarantine] [--json]``: the store's integrity
check (SPEC §10).

Exit 0 when the profile is healthy (after ``--repair``: when nothing is left to fix), 4 when
problems remain. ``--repair`` fixes only what is safe: it never deletes user content, and rows
that cannot be read at all go to ``quarantine_<n>`` keys (exported with the profile); a row
that only lost an image still reads (a placeholder stands for it) and stays where it is.
``--restore-quarantine`` puts back the quarantined rows that read now, then repairs.
"""

from __future__ import annotations

import sys

import click

from .context import pass_ctx
from .main import EXIT_CODES
from .output import echo_json, plain
from .words import plural

#: Exit status when problems remain: the "store" row of the exit-code table.
PROBLEMS_EXIT = EXIT_CODES["store"]


@click.command("doctor")
@click.option("--repair", is_flag=True, help="Fix what is safe; quarantine unreadable rows.")
@click.option(
    "--restore-quarantine",
    "restore",
    is_flag=True,
    help="Put back quarantined rows that read now (then repair as --repair does).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def doctor_cmd(ctx, repair: bool, restore: bool, as_json: bool) -> None:
    """Check the store: index and bodies, blob references, missing images, unreadable rows."""
    report = ctx.store().doctor(repair=repair, restore_quarantine=restore)
    repair = repair or restore
    if as_json:
        echo_json(report)
    else:
        for p in report["problems"]:
            mark = "fixed" if p["repaired"] else "found"
            click.echo(f"{mark}  {p['kind']:<14} {p['where']}: {p['detail']}")
        for key in report["quarantined"]:
            click.echo(f"quarantined an unreadable row under {key}")
        for key in report["restored"]:
            click.echo(f"restored the row quarantined under {key}")
        for note in report["notes"]:
            click.echo(plain(f"note: {note}"))
        if report["healthy"]:
            click.echo("healthy: no problems" + (" left" if report["problems"] else ""))
        else:
            hint = (
                ""
                if repair or report["readOnly"]
                else " (run `chatkeep doctor --repair` to fix what is safe)"
            )
            left = plural(report["remaining"], "problem")
            click.echo(
                f"{left} {'remains' if report['remaining'] == 1 else 'remain'}{hint}", err=True
            )
    if not report["healthy"]:
        sys.exit(PROBLEMS_EXIT)
