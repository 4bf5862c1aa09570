"""Numbers in prices and usage are bounded, through the CLI: prices are finite and
at most MAX_PRICE per million tokens, token counts and their totals fit in 64 bits, and every
``--json`` output is strict JSON (no ``Infinity`` or ``NaN``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import chatkeep
from chatkeep.limits import MAX_INT, MAX_PRICE
from clirun import run
from support.provider_server import Text, provider_server  # noqa: F401


def _strict(text: str) -> Any:
    """Parse as a strict JSON reader does: Infinity, -Infinity and NaN are errors."""

    def refuse(name: str) -> Any:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _card(server_url: str, *prices: str, name: str = "p") -> list[str]:
    return [
        "provider",
        "add",
        name,
        "--style",
        "chat",
        "--base-url",
        server_url,
        "--model",
        "m",
        *prices,
    ]


@pytest.mark.parametrize("price", ["1e308", "inf", "nan", "-1", "1000000.5"])
def test_an_unbounded_price_is_refused_and_no_card_is_written(tmp_path: Path, price: str) -> None:
    """provider add --price-input 1e308 (inf, nan, negative, over MAX_PRICE): a typed error
    naming the limit, exit 7, no card stored."""
    db = tmp_path / "s.db"
    args = ["--price-input", price, "--price-output", "1"]
    proc = run(db, *_card("http://127.0.0.1:9/v1", *args), ok=False)
    assert proc.returncode == 7, proc.stderr
    assert "1,000,000" in proc.stderr and "Traceback" not in proc.stderr
    with chatkeep.open(str(db)) as store:
        assert not store.local.get("providers")


def test_the_highest_price_is_accepted(tmp_path: Path) -> None:
    """A price of exactly MAX_PRICE per million tokens is a valid card."""
    db = tmp_path / "s.db"
    top = f"{MAX_PRICE:.0f}"
    run(db, *_card("http://127.0.0.1:9/v1", "--price-input", top, "--price-output", top))
    with chatkeep.open(str(db)) as store:
        assert store.local.get("providers")["p"]["prices"]["input"] == MAX_PRICE


def _reply(n_in: int, n_out: int, name: str = "p") -> dict[str, Any]:
    usage = {"input": n_in, "cachedRead": 0, "cacheWrite": 0, "output": n_out}
    return {
        "role": "assistant",
        "content": "a",
        "provider": {"name": name, "model": "m"},
        "usage": usage,
    }


def test_usage_json_is_strict_with_an_old_unbounded_price(tmp_path: Path) -> None:
    """A card an older version stored with prices of 1e308: `usage --json` parses strictly,
    the turn counts as unpriced (cost null) and the text table shows no `inf`."""
    db = tmp_path / "s.db"
    card = {"style": "chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}
    with chatkeep.open(str(db)) as store:
        store.local.set("providers", {"p": {**card, "prices": {"input": 1e308, "output": 1e308}}})
        store.history.append({"role": "user", "content": "q"})
        store.history.append(_reply(10**12, 10**12))
    report = _strict(run(db, "usage", "--json").stdout)
    assert report["totals"]["turns"] == 1
    assert report["totals"]["cost"] is None and report["totals"]["pricedTurns"] == 0
    assert "inf" not in run(db, "usage").stdout


def test_usage_totals_stop_at_64_bits(tmp_path: Path) -> None:
    """Turns whose counts add up past 2**63 - 1: every total (and group) is at most 2**63 - 1,
    the cost a finite number, the JSON strict."""
    db = tmp_path / "s.db"
    top = f"{MAX_PRICE:.0f}"
    run(db, *_card("http://127.0.0.1:9/v1", "--price-input", top, "--price-output", top))
    with chatkeep.open(str(db)) as store:
        for _ in range(3):
            store.history.append({"role": "user", "content": "q"})
            store.history.append(_reply(MAX_INT, MAX_INT))
    report = _strict(run(db, "usage", "--json", "--by", "session").stdout)
    for totals in (report["totals"], *report["groups"]):
        assert totals["turns"] == 3
        assert totals["input"] == MAX_INT and totals["output"] == MAX_INT
        assert isinstance(totals["cost"], float) and totals["cost"] > 0
    assert "inf" not in run(db, "usage").stdout


@pytest.mark.parametrize("prompt", [2**64, 2**63])
def test_a_provider_count_beyond_64_bits_keeps_the_reply(
    tmp_path: Path,
    provider_server,  # noqa: F811
    prompt: int,
) -> None:
    """A provider reporting more prompt tokens than 64 bits hold: the reply is stored (without
    that usage), chat --json and usage --json are strict JSON."""
    db = tmp_path / "s.db"
    run(db, *_card(provider_server.url("/v1"), "--price-input", "3", "--price-output", "15"))
    provider_server.queue(Text("the answer", prompt_tokens=prompt, completion_tokens=7))
    out = _strict(run(db, "chat", "hello", "--json").stdout)
    assert out["usage"] is None
    with chatkeep.open(str(db)) as store:
        replies = [e for e in store.history.read() if e["role"] == "assistant"]
    assert [r["content"] for r in replies] == ["the answer"] and "usage" not in replies[0]
    report = _strict(run(db, "usage", "--json").stdout)
    assert report["totals"]["turns"] == 0
