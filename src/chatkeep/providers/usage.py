"""Silent-truncation warning (SPEC §7.4, last rule).

Some servers (Ollama beyond ``num_ctx``) cut the prompt without an error, so the overflow rescue
cannot trigger. What they do report is how many prompt tokens they actually read (``input`` of
the normalised usage, SPEC §6.4). The estimate comes from :mod:`chatkeep.rules.tokens` (text and
images by pixel size), so small images no longer inflate it.
``truncation_warning(estimated_prompt_tokens, usage)`` compares that with chatkeep's own estimate
of what was sent and returns a one-line warning when the provider read clearly less — fewer than
``ratio`` (default 50 %) of the estimate — else ``None``. Tiny prompts (estimate below
``min_estimate``) never warn: the chars/4 estimate is too rough there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["truncation_warning"]


def truncation_warning(
    estimated_prompt_tokens: int | float,
    usage: Mapping[str, Any] | None,
    *,
    ratio: float = 0.5,
    min_estimate: int = 512,
) -> str | None:
    """A warning when ``usage["input"]`` is far below the estimate, else ``None``."""
    if not usage:
        return None
    reported = usage.get("input")
    if not isinstance(reported, int) or isinstance(reported, bool) or reported < 0:
        return None
    try:
        estimate = float(estimated_prompt_tokens)
    except (TypeError, ValueError):
        return None
    if estimate < min_estimate or reported >= estimate * ratio:
        return None
    return (
        f"the provider read only {reported:,} prompt tokens but about {int(estimate):,} were sent: "
        "it probably truncated the conversation silently (Ollama does this beyond num_ctx); "
        "raise the model's context size or attach less"
    )
