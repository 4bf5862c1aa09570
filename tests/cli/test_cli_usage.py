"""Usage through the CLI: stored on replies, the chat usage line, `chatkeep usage`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

import chatkeep
from clirun import run
from factories import png_data_url
from support.provider_server import Text, provider_server  # noqa: F401

PRICES = ("--price-input", "3", "--price-cached", "0.3", "--price-cache-write", "3.75")


def _add(db: Path, server, style: str, stream: bool, name: str = "loop") -> None:
    base = server.url("/v1") if style != "anthropic" else server.base_url
    args = ["provider", "add", name, "--style", style, "--base-url", base, "--model", "m"]
    args += [*PRICES, "--price-output", "15"]
    if not stream:
        args.append("--no-stream")
    run(db, *args)


def _assistants(db: Path) -> list[dict]:
    with chatkeep.open(str(db)) as s:
        return [e for e in s.history.read() if e["role"] == "assistant"]


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_usage_stored_printed_and_totalled(tmp_path: Path, provider_server, style, stream) -> None:  # noqa: F811
    """The provider's own numbers land on the reply, the usage line shows them, totals match."""
    db = tmp_path / "u.db"
    _add(db, provider_server, style, stream)
    write = 500 if style == "anthropic" else 0  # only Anthropic reports cache writes
    provider_server.queue(
        Text("first answer", prompt_tokens=4000, cached_tokens=0, cache_write_tokens=write),
        Text("second answer", prompt_tokens=4200, cached_tokens=3072, completion_tokens=42),
    )
    first = run(db, "chat", "hello there")
    second = run(db, "chat", "and again", "--json")
    replies = _assistants(db)
    assert replies[0]["usage"] == {"input": 4000, "cachedRead": 0, "cacheWrite": write, "output": 2}
    assert replies[1]["usage"] == {"input": 4200, "cachedRead": 3072, "cacheWrite": 0, "output": 42}
    assert "usage: 4,000 tokens in (0% from cache" in first.stderr
    assert "~$" in first.stderr and "2 out" in first.stderr
    out = json.loads(second.stdout)
    assert out["usage"] == replies[1]["usage"]
    expected_cost = ((4200 - 3072) * 3 + 3072 * 0.3 + 42 * 15) / 1e6
    assert out["cost"] == pytest.approx(expected_cost)

    report = json.loads(run(db, "usage", "--json").stdout)
    totals = report["totals"]
    for key in ("input", "cachedRead", "cacheWrite", "output"):
        assert totals[key] == sum(r["usage"][key] for r in replies)
    assert totals["turns"] == 2 and totals["pricedTurns"] == 2
    assert totals["cacheHitRate"] == pytest.approx(3072 / 8200)
    first_cost = ((4000 - write) * 3 + write * 3.75 + 2 * 15) / 1e6
    assert totals["cost"] == pytest.approx(first_cost + expected_cost)
    table = run(db, "usage").stdout
    assert "total" in table and "8,200" in table


def test_usage_never_reaches_requests_or_get_all(tmp_path: Path, provider_server) -> None:  # noqa: F811
    """Stored usage stays on the entry: the next request and get_all() never carry it."""
    db = tmp_path / "u.db"
    _add(db, provider_server, "chat", True)
    run(db, "chat", "one")
    run(db, "chat", "two")
    assert "usage" not in json.dumps(provider_server.requests[1].body["messages"])
    with chatkeep.open(str(db)) as s:
        assert "usage" not in s.get_all()


def test_usage_by_session_and_one_session(tmp_path: Path, provider_server) -> None:  # noqa: F811
    """--by session groups the saved session and the live conversation; --session picks one."""
    db = tmp_path / "u.db"
    _add(db, provider_server, "chat", True)
    provider_server.queue(Text("a", prompt_tokens=1000), Text("b", prompt_tokens=2000))
    run(db, "chat", "in the first session")
    saved = json.loads(run(db, "sessions", "save", "first", "--json").stdout)
    run(db, "sessions", "new")
    run(db, "chat", "in the live conversation")
    report = json.loads(run(db, "usage", "--by", "session", "--json").stdout)
    assert report["totals"]["input"] == 3000
    by_label = {g["label"]: g["input"] for g in report["groups"]}
    assert by_label["first"] == 1000 and sum(by_label.values()) == 3000
    sid = saved["id"]
    one = json.loads(run(db, "usage", "--session", sid[:6], "--json").stdout)
    assert one["totals"]["input"] == 1000
    days = json.loads(run(db, "usage", "--by", "day", "--json").stdout)
    assert sum(g["input"] for g in days["groups"]) == 3000
    missing = run(db, "usage", "--session", "nope-nope", ok=False)
    assert missing.returncode != 0 and "hint:" in missing.stderr


def test_no_false_truncation_warning_on_small_images(tmp_path: Path, provider_server) -> None:  # noqa: F811
    """A 320x200 screenshot read honestly (~270 tokens) does not warn of silent truncation."""
    db = tmp_path / "u.db"
    image = tmp_path / "shot.png"
    image.write_bytes(base64.b64decode(png_data_url(320, 200, noise=True).split(",", 1)[1]))
    _add(db, provider_server, "chat", True)
    provider_server.queue(Text("I see it.", prompt_tokens=270))
    out = run(db, "chat", "what is on this screenshot?", "--image", str(image))
    assert "truncat" not in out.stderr
    provider_server.queue(Text("short", prompt_tokens=100))  # a real cut still warns
    long = run(db, "chat", "lorem ipsum " * 800)
    assert "truncated" in long.stderr


def test_request_shows_predicted_cache_read(tmp_path: Path, provider_server) -> None:  # noqa: F811
    """After a long first turn, `request` predicts the cache serves the repeated prefix."""
    db = tmp_path / "u.db"
    _add(db, provider_server, "chat", True)
    run(db, "chat", "lorem ipsum dolor " * 400)  # ~7,200 chars ≈ 1,800 tokens
    preview = json.loads(run(db, "request", "--text", "next", "--json").stdout)
    read = preview["cacheRead"]
    assert read["tokens"] >= 1024 and read["tokens"] % 128 == 0
    assert read["tokens"] <= read["ofTokens"]
    assert "predicted cache read: ~" in run(db, "request", "--text", "next").stdout


def test_cache_hit_per_turn_per_conversation_and_in_usage(tmp_path: Path, provider_server) -> None:  # noqa: F811
    """The chat line shows the turn's share and the conversation's; `usage` has a cacheHit
    column and a cacheHit field in every total and group."""
    db = tmp_path / "u.db"
    _add(db, provider_server, "chat", True)
    provider_server.queue(
        Text("a", prompt_tokens=4000, cached_tokens=0),
        Text("b", prompt_tokens=4000, cached_tokens=3000),
    )
    first = run(db, "chat", "one")
    second = run(db, "chat", "two")
    assert "conversation:" not in first.stderr  # one turn: the turn's share says it all
    assert "(75% from cache" in second.stderr
    assert "conversation: 38% cache hit over 2 turns" in second.stderr  # 3000 / 8000
    report = json.loads(run(db, "usage", "--by", "session", "--json").stdout)
    assert report["totals"]["cacheHit"] == pytest.approx(3000 / 8000)
    assert all("cacheHit" in g for g in report["groups"]) and "cacheHit" in report["summary"]
    table = run(db, "usage").stdout
    assert "cacheHit" in table.splitlines()[0] and "38%" in table
