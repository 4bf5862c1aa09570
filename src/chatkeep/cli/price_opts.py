"""The cost options of ``chatkeep provider add``: card prices and the prompt-cache key switch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

#: option name → key of the card's ``prices`` (per million tokens, SPEC §6.4)
PRICE_OPTIONS = {
    "price_input": "input",
    "price_cached": "cachedRead",
    "price_cache_write": "cacheWrite",
    "price_output": "output",
}


def cost_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--price-*`` and ``--prompt-cache-key/--no-prompt-cache-key`` to a command."""
    for flag, what in reversed(
        (
            (
                "--price-input",
                "Price of uncached input tokens, per million (enables cost estimates).",
            ),
            ("--price-cached", "Price of input tokens read from the cache, per million."),
            ("--price-cache-write", "Price of input tokens written to the cache, per million."),
            ("--price-output", "Price of output tokens, per million."),
        )
    ):
        command = click.option(flag, type=float, metavar="PRICE", help=what)(command)
    return click.option(
        "--prompt-cache-key/--no-prompt-cache-key",
        "prompt_cache_key",
        default=None,
        help="Send OpenAI's prompt_cache_key (default: only to api.openai.com).",
    )(command)


def apply_cost_options(card: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``card`` with ``prices`` / ``promptCacheKey`` from the options given (validated later)."""
    prices = {key: options[o] for o, key in PRICE_OPTIONS.items() if options.get(o) is not None}
    if prices:
        card["prices"] = prices
    if options.get("prompt_cache_key") is not None:
        card["promptCacheKey"] = options["prompt_cache_key"]
    return card
