"""``chatkeep request``: a preview of the next request (SPEC §6.4)."""

from __future__ import annotations

import click

from .. import preview_request
from .context import pass_ctx
from .output import echo_json, human_size, plain
from .words import plural


@click.command("request")
@click.option("--text", default="", help="The next message (default: empty).")
@click.option("--provider", help="Provider card to build for (default: the active one).")
@click.option("--model", help="Model to build for.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def request_cmd(ctx, text: str, provider: str | None, model: str | None, as_json: bool) -> None:
    """Show what the next request would send, and what it saves.

    Per entry: raw, image labels, aged stub, or held by the server (a server-transcript card);
    the history steps that ran; totals; savings against resending everything; prefix reuse
    against the previous request. It is built by the same planner a send uses."""
    p = preview_request(ctx.store(), text, provider=provider, model=model)
    if as_json:
        echo_json(p)
        return
    if p["problem"]:
        click.echo(
            plain(
                f"no usable provider ({p['problem']['message']}); shown in the {p['style']} format"
            )
        )
    else:
        click.echo(plain(f"next request: {p['style']} {p['model']}  →  {p['url']}"))
    if p["keyProblem"]:  # a preview sends nothing, so it needs no key; a send would
        click.echo(
            plain(
                f"no API key is set: {p['keyProblem']['message']} — a send would fail; "
                "this preview sends nothing"
            )
        )
    if p["previousResponseId"]:
        click.echo(
            f"continues server transcript {p['previousResponseId']}: "
            "entries marked 'server' are not sent again"
        )
    click.echo("steps: " + " → ".join(p["steps"]) if p["steps"] else "steps: none")
    for e in p["entries"]:
        img = (
            f", {plural(e['images'], 'image')} {human_size(e['imageBytes'])}" if e["images"] else ""
        )
        chars = plural(e["chars"], "char")
        click.echo(f"  #{e['index']:<3} {e['role']:<9} {e['sent']:<6} {chars:>15}{img}")
    r, n, saved = p["request"], p["naive"], p["savings"]
    click.echo(
        f"sends {human_size(r['bytes'])} ({plural(r['chars'], 'char')}, "
        f"{plural(r['images'], 'image')}, ~{plural(r['estTokens'], 'token')}) "
        f"instead of {human_size(n['bytes'])} ({plural(n['images'], 'image')}): "
        f"{saved['ratio']:.0%} saved"
    )
    pre = p["prefix"]
    if pre["hasPrevious"]:
        what = "the request sent last" if pre["source"] == "sent" else "the previous turn"
        click.echo(
            f"prefix reuse: {human_size(pre['bytes'])} identical to the start of {what} "
            f"({pre['ratio']:.0%} of this one, {pre['ofPrevious']:.0%} of that one)"
        )
    else:
        click.echo("prefix reuse: nothing to compare with yet")
    cr = p["cacheRead"]
    click.echo(
        f"predicted cache read: ~{cr['tokens']:,} of ~{plural(cr['ofTokens'], 'prompt token')} "
        f"({cr['ratio']:.0%})"
    )
