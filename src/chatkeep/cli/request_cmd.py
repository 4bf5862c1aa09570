"""``chatkeep request``: a preview of the next request (SPEC §6.4)."""

from __future__ import annotations

import click

from .context import pass_ctx
from .output import echo_json, human_size


@click.command("request")
@click.option("--text", default="", help="The next message (default: empty).")
@click.option("--provider", help="Provider card to build for (default: the active one).")
@click.option("--model", help="Model to build for.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def request_cmd(ctx, text: str, provider: str | None, model: str | None, as_json: bool) -> None:  # noqa: ANN001
    """Show what the next request would send, and what it saves.

    Per entry: raw, image labels or aged stub; totals; savings against resending everything;
    prefix reuse against the previous request."""
    from ..preview import preview_request

    p = preview_request(ctx.store(), text, provider=provider, model=model)
    if as_json:
        echo_json(p)
        return
    click.echo(f"next request: {p['style']} {p['model']}  →  {p['url']}")
    for e in p["entries"]:
        img = f", {e['images']} image(s) {human_size(e['imageBytes'])}" if e["images"] else ""
        click.echo(f"  #{e['index']:<3} {e['role']:<9} {e['sent']:<6} {e['chars']:>9,} chars{img}")
    t, n = p["totals"], p["naive"]
    click.echo(
        f"sends {human_size(t['bytes'])} ({t['chars']:,} chars, {t['images']} images, ~{t['estTokens']:,} tokens) "
        f"instead of {human_size(n['bytes'])} ({n['images']} images): {p['savings']:.0%} saved"
    )
    if p["previous"]:
        click.echo(
            f"prefix reuse: {human_size(t['prefixBytes'])} identical to the start of the previous request "
            f"({t['prefixRatio']:.0%} of this one, {t['prefixOfPrevious']:.0%} of the previous)"
        )
    else:
        click.echo("prefix reuse: no previous request recorded yet")
