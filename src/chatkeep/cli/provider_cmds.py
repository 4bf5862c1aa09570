"""``chatkeep provider add | use | list | remove`` (SPEC §7.1)."""

from __future__ import annotations

import click

from .context import pass_ctx
from .output import echo_json, plain
from .price_opts import apply_cost_options, cost_options

STYLES = ("chat", "responses", "anthropic")


@click.group("provider")
def provider_group() -> None:
    """Model providers: add a card, pick the active one, list them."""


@provider_group.command("add")
@click.argument("name")
@click.option("--style", type=click.Choice(STYLES), required=True, help="API style of the server.")
@click.option("--base-url", required=True, help="API root, e.g. https://api.openai.com/v1.")
@click.option("--model", required=True, help="Model id.")
@click.option("--api-key-env", metavar="VAR", help="Environment variable holding the API key.")
@click.option("--temperature", type=float, help="Sampling temperature sent with every request.")
@click.option(
    "--max-tokens", type=int, help="Cap on the reply's length in tokens (default: the API's)."
)
@click.option("--no-stream", is_flag=True, help="Ask for whole answers instead of streams.")
@click.option(
    "--timeout",
    type=float,
    help="Seconds the server may stay silent before a call fails (1-3600, default 60).",
)
@click.option(
    "--server-transcript",
    is_flag=True,
    help="Responses style: the server keeps the transcript; send only new turns.",
)
@click.option(
    "--use/--no-use",
    "make_active",
    default=None,
    help="Make it the active provider (default: when it is the first).",
)
@cost_options
@pass_ctx
def add_cmd(
    ctx,
    name: str,
    style: str,
    base_url: str,
    model: str,
    api_key_env: str | None,
    temperature: float | None,
    max_tokens: int | None,
    no_stream: bool,
    timeout: float | None,
    server_transcript: bool,
    make_active: bool | None,
    **cost: float | bool | None,
) -> None:
    """Add (or replace) the provider card NAME. Keys are read from --api-key-env, never stored."""
    card: dict[str, object] = {
        "style": style,
        "baseUrl": base_url,
        "model": model,
        "stream": not no_stream,
    }
    if api_key_env:
        card["apiKeyEnv"] = api_key_env
    if temperature is not None:
        card["temperature"] = temperature
    if max_tokens is not None:
        card["maxTokens"] = max_tokens
    if server_transcript:
        card["serverTranscript"] = True
    if timeout is not None:
        card["timeout"] = timeout
    result = ctx.store().cards.put(name, apply_cost_options(card, cost), activate=make_active)
    verb = "added" if result["created"] else "replaced"
    click.echo(
        f"{verb} provider {name} ({style}, {model})" + (" — active" if result["active"] else "")
    )


@provider_group.command("use")
@click.argument("name")
@click.option("--model", help="Use this model instead of the card's own.")
@pass_ctx
def use_cmd(ctx, name: str, model: str | None) -> None:
    """Make NAME the active provider (optionally with another model)."""
    ctx.store().cards.use(name, model)
    click.echo(f"using {name}" + (f" with model {model}" if model else ""))


@provider_group.command("remove")
@click.argument("name")
@pass_ctx
def remove_cmd(ctx, name: str) -> None:
    """Remove the provider card NAME."""
    result = ctx.store().cards.remove(name)
    after = result["activeProvider"]
    click.echo(f"removed {name}" + (f"; {after} is now active" if after else ""))


@provider_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable schema).")
@pass_ctx
def list_cmd(ctx, as_json: bool) -> None:
    """List provider cards; the active one is marked."""
    listing = ctx.store().cards.rows()
    rows = listing["providers"]
    settings = {"activeModel": listing["activeModel"]}
    if as_json:
        echo_json(
            {
                "providers": [{k: v for k, v in r.items() if k != "hasKey"} for r in rows],
                "activeProvider": listing["activeProvider"],
                "activeModel": listing["activeModel"],
            }
        )
        return
    if not rows:
        click.echo(
            "no providers yet; add one with `chatkeep provider add NAME --style chat --base-url URL --model M`"
        )
        click.echo("(without one, OPENAI_BASE_URL / OPENAI_API_KEY / CHATKEEP_MODEL are used)")
        return
    for r in rows:
        mark = "*" if r["active"] else " "
        model = settings["activeModel"] if r["active"] and settings["activeModel"] else r["model"]
        key = f"  key from ${r['apiKeyEnv']}" if r["apiKeyEnv"] else ""
        click.echo(
            plain(f"{mark} {r['name']:<12} {r['style']:<10} {model:<24} {r['baseUrl']}{key}")
        )
