"""``chatkeep usage`` and the usage line ``chat`` prints after a reply (SPEC §6.4, §10).

The figures are the providers' own, as stored on each assistant entry
(``usage: {input, cachedRead, cacheWrite, output}``); the cost is estimated from the answering
card's ``prices`` (per million tokens) and shown only when the card has prices. The calls that
condensed long attachments (SPEC §7.5) are counted too, on a ``summary`` line (each call is one
in the ``turns`` column), and in the total.
"""

from __future__ import annotations

from typing import Any

import click

from .. import usage_report
from .context import pass_ctx
from .output import echo_json, plain
from .words import plural


def _cost(value: float | None) -> str:
    if value is None:
        return ""
    return f"~${value:,.4f}" if value < 1 else f"~${value:,.2f}"


def usage_line(
    usage: dict[str, int] | None, cost: float | None, session: dict[str, Any] | None = None
) -> str | None:
    """One line: tokens in, this turn's share read from cache (and written), tokens out,
    estimated cost, and the cache-hit share of the whole conversation (``session``: the
    totals of :func:`chatkeep.usage_totals` over the live history)."""
    if not usage:
        return None
    inp = usage.get("input", 0)
    share = usage.get("cachedRead", 0) / inp if inp else 0.0
    parts = [f"{inp:,} tokens in ({share:.0%} from cache"]
    if usage.get("cacheWrite"):
        parts[0] += f", {usage['cacheWrite']:,} written"
    parts[0] += ")"
    parts.append(f"{usage.get('output', 0):,} out")
    if cost is not None:
        parts.append(_cost(cost))
    if session and session.get("turns", 0) > 1:
        parts.append(
            f"conversation: {session['cacheHit']:.0%} cache hit over {session['turns']} turns"
        )
    return "usage: " + " · ".join(parts)


def _row(label: str, t: dict[str, Any]) -> str:
    cost = _cost(t["cost"]) or "—"
    return (
        f"{label[:28]:<28} {t['turns']:>6,} {t['input']:>12,} {t['cachedRead']:>12,} "
        f"{t['cacheWrite']:>11,} {t['output']:>10,} {t['cacheHit']:>8.0%} {cost:>11}"
    )


@click.command("usage")
@click.option("--session", "session", metavar="ID", help="Only this saved session (id or prefix).")
@click.option(
    "--by",
    type=click.Choice(["day", "session"]),
    help="Group the totals by session, or by day (a session's turns count on its creation day).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def usage_cmd(ctx, session: str | None, by: str | None, as_json: bool) -> None:
    """Tokens in / cached / written / out, cache-hit share and estimated cost of stored turns.

    The share of input read from the cache is the cacheHit column (and --json field)."""
    report = usage_report(ctx.store(), session=session, by=by)
    if as_json:
        echo_json(report)
        return
    head = (
        f"{'':<28} {'turns':>6} {'tokens in':>12} {'from cache':>12} {'written':>11} "
        f"{'out':>10} {'cacheHit':>8} {'cost':>11}"
    )
    click.echo(head)
    for group in report["groups"]:
        click.echo(_row(plain(group["label"]), group))  # session names are user text
    if report["summary"]["turns"] and report["by"] != "session":
        click.echo(_row("summary", report["summary"]))  # attachment condensing (SPEC §7.5)
    click.echo(_row("total", report["totals"]))
    totals = report["totals"]
    if totals["turns"] and totals["pricedTurns"] < totals["turns"]:
        click.echo(
            f"{plural(totals['turns'] - totals['pricedTurns'], 'turn')} without prices: add them with "
            "`chatkeep provider add NAME … --price-input P --price-output P`",
            err=True,
        )
