"""A billing model of provider prompt caching, pricing actual request bodies. Pure, no I/O.

A request body (Chat Completions or Anthropic Messages, as built) is read as a flat list of
*blocks* (:func:`blocks_of`): the system prompt, then every content block of every message (a
string content is one block). Each block has a key (its role and content, ``cache_control``
left out, so equal blocks compare equal), its token estimate by the provider's published rules
(:mod:`chatkeep.rules.tokens`: text chars/4; images by pixel size — OpenAI high-detail tiles for
``chat`` bodies, w·h/750 for Anthropic bodies) and whether it carries a ``cache_control`` mark.

Prices are in units of the base input price (1.0 per token). Three billing rules price a
sequence of requests sent ``interval`` seconds apart:

* :func:`bill_no_cache` — every token at 1.0.
* :func:`bill_openai` — automatic prefix caching: the longest block prefix this request shares
  with an earlier one still cached (entries live ``ttl`` seconds, refreshed on a hit) is read at
  ``cached_factor`` (a per-model-family parameter, default 0.1) when it is at least
  ``min_tokens`` (1,024), counted in ``step`` (128) token increments; the rest at 1.0.
* :func:`bill_anthropic` — explicit breakpoints read from the bodies' ``cache_control`` marks
  (at most 4 are honoured, in order): at every mark the cache is looked up at that block and up
  to ``look_back`` (20) blocks before it; the longest live prefix found is read at ``read``
  (0.1×) and its entry's TTL (300 s) refreshed; everything from there up to the last mark whose
  prefix reaches ``min_tokens`` (1,024) is written at ``write`` (1.25×), creating one entry per
  such mark; tokens after the last mark are 1.0.

:func:`bill_floor` is the lower bound for a sequence: every distinct block is paid once at the
write price (1.25 under Anthropic's rule, 1.0 under OpenAI's), and a block already paid is read
at the read price once the request repeats at least ``min_tokens`` of such blocks (below that
no cache entry can exist, so repeats pay 1.0).

Each function returns ``{"tokens", "billed", "read", "written"}`` summed over the requests:
``tokens`` the input tokens sent, ``billed`` their price, ``read``/``written`` the tokens served
from / written to the cache.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from chatkeep.rules.tokens import image_tokens, text_tokens

__all__ = [
    "Block",
    "bill_anthropic",
    "bill_floor",
    "bill_no_cache",
    "bill_openai",
    "bill_units",
    "blocks_of",
]

MIN_TOKENS = 1024


@dataclass(frozen=True)
class Block:
    key: int
    tokens: int
    marked: bool = False
    #: the lifetime (seconds) a mark on this block asks for
    ttl: float = 300.0


_TTL_SECONDS = {"5m": 300.0, "1h": 3600.0, "30m": 1800.0, "12h": 43200.0}


def _image_url(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "image_url":
        img = block.get("image_url")
        return str(img.get("url", "") if isinstance(img, dict) else img)
    if kind == "input_image":
        return str(block.get("image_url", ""))
    source = block.get("source") or {}
    if source.get("type") == "base64":
        return f"data:{source.get('media_type', '')};base64," + str(source.get("data", ""))
    return str(source.get("url", ""))


def _block(role: str, block: Any, style: str) -> Block:
    if isinstance(block, str):
        return Block(hash((role, "text", block)), text_tokens(block))
    mark = block.get("cache_control") or block.get("prompt_cache_breakpoint")
    marked = mark is not None
    ttl = _TTL_SECONDS.get(str((mark or {}).get("ttl", "")), 300.0)
    if "prompt_cache_breakpoint" in block and "ttl" not in block["prompt_cache_breakpoint"]:
        ttl = 1800.0  # GPT-5.6 breakpoints inherit the request's 30-minute lifetime
    if block.get("type") in ("image_url", "input_image", "image"):
        url = _image_url(block)
        return Block(hash((role, "image", url)), image_tokens(url, style), marked, ttl)
    text = str(block.get("text", ""))
    return Block(hash((role, "text", text)), text_tokens(text), marked, ttl)


def blocks_of(body: dict[str, Any], style: str) -> list[Block]:
    """The flat blocks of a ``chat`` or ``anthropic`` request body (see the module docstring)."""
    out: list[Block] = []
    system = body.get("system")
    if isinstance(system, str) and system:
        out.append(_block("system", system, style))
    elif isinstance(system, list):
        out.extend(_block("system", b, style) for b in system)
    for message in body.get("messages") or ():
        role = message.get("role", "")
        content = message.get("content")
        if isinstance(content, str):
            if content:
                out.append(_block(role, content, style))
        else:
            out.extend(_block(role, b, style) for b in content or ())
    return out


def _prefix_keys(blocks: Sequence[Block]) -> list[int]:
    keys, h = [], 0
    for b in blocks:
        h = hash((h, b.key))
        keys.append(h)
    return keys


def _cum(blocks: Sequence[Block]) -> list[int]:
    total, out = 0, []
    for b in blocks:
        total += b.tokens
        out.append(total)
    return out


def _result(tokens: int, billed: float, read: int, written: int) -> dict[str, Any]:
    return {"tokens": tokens, "billed": billed, "read": read, "written": written}


def bill_no_cache(requests: Iterable[Sequence[Block]]) -> dict[str, Any]:
    """Every input token at the base price."""
    total = sum(b.tokens for blocks in requests for b in blocks)
    return _result(total, float(total), 0, 0)


def _times(times: Sequence[float] | None, n: int, interval: float) -> float:
    return times[n] if times is not None else n * interval


def bill_openai(
    requests: Iterable[Sequence[Block]],
    *,
    cached_factor: float = 0.1,
    min_tokens: int = MIN_TOKENS,
    step: int = 128,
    ttl: float = 300.0,
    interval: float = 60.0,
    times: Sequence[float] | None = None,
) -> dict[str, Any]:
    """OpenAI's automatic prefix caching (see the module docstring); ``times`` (seconds) when
    the requests are not ``interval`` apart. Also Gemini's implicit caching (its minimum,
    ``step=1``)."""
    cache: dict[int, tuple[float, int]] = {}  # prefix key -> (expiry, tokens up to it)
    tokens = read = 0
    billed = 0.0
    for n, blocks in enumerate(requests):
        now = _times(times, n, interval)
        keys, cum = _prefix_keys(blocks), _cum(blocks)
        hit = -1
        for k in range(len(blocks) - 1, -1, -1):
            entry = cache.get(keys[k])
            if entry is not None and entry[0] >= now:
                hit = k
                break
        common = cum[hit] if hit >= 0 else 0
        cached = (common // step) * step if common >= min_tokens else 0
        total = cum[-1] if cum else 0
        tokens += total
        read += cached
        billed += (total - cached) + cached * cached_factor
        for k in range(len(blocks)):  # every prefix of this request is now cached (or refreshed)
            cache[keys[k]] = (now + ttl, cum[k])
    return _result(tokens, billed, read, 0)


def bill_anthropic(
    requests: Iterable[Sequence[Block]],
    *,
    read_factor: float = 0.1,
    write_factor: float = 1.25,
    min_tokens: int = MIN_TOKENS,
    look_back: int = 20,
    max_marks: int = 4,
    ttl: float | None = None,
    interval: float = 60.0,
    times: Sequence[float] | None = None,
    long_write_factor: float = 2.0,
    implicit_end: bool = False,
) -> dict[str, Any]:
    """Anthropic's explicit breakpoints (see the module docstring). Each entry lives as long
    as its mark asked (``Block.ttl``, or ``ttl`` for all); tokens written under a mark asking
    for more than five minutes cost ``long_write_factor``. ``implicit_end`` adds a mark on the
    last block (GPT-5.6's implicit breakpoint; ``look_back`` is then the whole request)."""
    cache: dict[int, float] = {}  # prefix key -> expiry
    tokens = read = written = 0
    billed = 0.0
    for n, blocks in enumerate(requests):
        now = _times(times, n, interval)
        if implicit_end and blocks and not blocks[-1].marked:
            blocks = [*blocks[:-1], Block(blocks[-1].key, blocks[-1].tokens, True, 1800.0)]
        keys, cum = _prefix_keys(blocks), _cum(blocks)
        total = cum[-1] if cum else 0
        marks = [k for k, b in enumerate(blocks) if b.marked][:max_marks]
        hit = -1
        for m in marks:
            for k in range(m, max(-1, m - look_back - 1), -1):
                expiry = cache.get(keys[k])
                if expiry is not None and expiry >= now:
                    hit = max(hit, k)
                    break
        got = cum[hit] if hit >= 0 else 0
        life = {m: ttl if ttl is not None else blocks[m].ttl for m in marks}
        for m in marks:  # entries up to the read point were used: created or refreshed
            if m <= hit and cum[m] >= min_tokens:
                cache[keys[m]] = now + life[m]
        last = -1
        for m in marks:
            if m > hit and cum[m] >= min_tokens:
                cache[keys[m]] = now + life[m]
                last = m
        wrote = cum[last] - got if last >= 0 else 0
        factor = long_write_factor if last >= 0 and life[last] > 300 else write_factor
        tokens += total
        read += got
        written += wrote
        billed += got * read_factor + wrote * factor + (total - got - wrote)
    return _result(tokens, billed, read, written)


def bill_floor(
    requests: Iterable[Sequence[Block]],
    *,
    read_factor: float = 0.1,
    write_factor: float = 1.0,
    min_tokens: int = MIN_TOKENS,
    times: Sequence[float] | None = None,
    lifetimes: Sequence[tuple[float, float]] = (),
) -> dict[str, Any]:
    """Every distinct block once at ``write_factor``, repeats at ``read_factor`` (docstring).

    With ``times`` and ``lifetimes`` (``(seconds, write factor)``, shortest first), a block
    pays the cheapest lifetime that spans the longest wait between two of its uses; a wait
    longer than every lifetime pays the block again."""
    requests = list(requests)
    uses: dict[int, list[float]] = {}
    for n, blocks in enumerate(requests):
        for b in blocks:
            uses.setdefault(b.key, []).append(_times(times, n, 60.0))

    def price(key: int, now: float) -> float:
        if not lifetimes:
            return write_factor
        later = [t for t in uses[key] if t > now]
        wait = later[0] - now if later else 0.0
        return next((f for s, f in lifetimes if wait <= s), lifetimes[0][1])

    paid: dict[int, float] = {}  # key -> last use
    longest = max((s for s, _ in lifetimes), default=float("inf"))
    tokens = read = written = 0
    billed = 0.0
    for n, blocks in enumerate(requests):
        now = _times(times, n, 60.0)
        fresh = [b for b in blocks if b.key not in paid or now - paid[b.key] > longest]
        new = sum(b.tokens for b in fresh)
        cost_new = sum(b.tokens * price(b.key, now) for b in fresh)
        repeat = sum(b.tokens for b in blocks) - new
        tokens += new + repeat
        written += new
        if repeat >= min_tokens:
            read += repeat
            billed += cost_new + repeat * read_factor
        else:
            billed += cost_new + repeat
        paid.update((b.key, now) for b in blocks)
    return _result(tokens, billed, read, written)


def bill_units(
    requests: Iterable[Sequence[Block]],
    *,
    read_factor: float = 0.1,
    min_tokens: int = 64,
) -> dict[str, Any]:
    """DeepSeek's disk cache: a request hits only an earlier request's whole prefix unit (the
    end of its input), never part of one; writes cost nothing extra."""
    units: set[int] = set()
    tokens = read = 0
    billed = 0.0
    for blocks in requests:
        keys, cum = _prefix_keys(blocks), _cum(blocks)
        hit = next((k for k in range(len(blocks) - 1, -1, -1) if keys[k] in units), -1)
        got = cum[hit] if hit >= 0 and cum[hit] >= min_tokens else 0
        total = cum[-1] if cum else 0
        tokens += total
        read += got
        billed += got * read_factor + (total - got)
        if keys:
            units.add(keys[-1])
    return _result(tokens, billed, read, 0)
