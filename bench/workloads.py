"""Workloads of the comparison benchmark, generated deterministically from a seed.

* :func:`figure_conversation` — the figure-heavy conversation of :mod:`bench.request_economy`
  (30 user turns, 3 PDFs with 8 figures each, 5 long pages, 5 screenshots), reused as is.
* :func:`text_conversation` — a plain-text conversation of ``n`` alternating user/assistant
  entries (user 60–300 chars, assistant 200–1,200 chars).
* :func:`drawer` — saved sessions of ~50 entries each; every ``heavy_every``-th one also holds a
  page attachment of 100,000–140,000 chars. Names are the first user message, as the auto-name.
* :data:`QUERIES` — drawer searches: a word most sessions contain, a marker present in about 1%
  of the sessions, a name prefix, and a miss.

The same seed always gives the same entries, byte for byte. Entries are chatkeep entries
(SPEC §3.2); :func:`to_agents_item` and :func:`to_langchain` convert one entry into the item
shape of the OpenAI Agents SDK (Responses input items) and into a LangChain message.
"""

from __future__ import annotations

import functools
import random
from typing import Any

from bench.request_economy import _page_entry, _prose, conversation

Entry = dict[str, Any]

DRAWER_SESSIONS, DRAWER_ENTRIES, HEAVY_EVERY = 1_000, 50, 200
RARE_MARKER = "zebrafish"
QUERIES = ("network", RARE_MARKER, "session 04", "no-such-phrase-anywhere")


@functools.lru_cache(maxsize=4)
def figure_conversation(seed: int = 7) -> tuple[dict[str, Any], ...]:
    """The per-turn steps of the figure-heavy conversation (cached: images take a second)."""
    return tuple(conversation(seed))


def figure_entries(seed: int = 7) -> list[Entry]:
    """The figure-heavy conversation flattened the way a store holds it."""
    out: list[Entry] = []
    for step in figure_conversation(seed):
        out += [*step["attachments"], step["user"], step["reply"]]
    return out


def figure_image_bytes(entries: list[Entry], as_url: bool = False) -> int:
    """Decoded bytes of every image in ``entries`` (or, ``as_url``, their data-URL chars)."""
    total = 0
    for e in entries:
        if isinstance(e["content"], list):
            for p in e["content"]:
                if p.get("type") == "image_url":
                    url = (
                        p["image_url"]["url"]
                        if isinstance(p["image_url"], dict)
                        else p["image_url"]
                    )
                    payload = url.split(",", 1)[1]
                    total += len(url) if as_url else len(payload) * 3 // 4 - payload.count("=")
    return total


def _turn(rnd: random.Random, k: int) -> tuple[Entry, Entry]:
    user = {"role": "user", "content": f"Question {k}: " + _prose(rnd, rnd.randint(60, 300))}
    reply = {"role": "assistant", "content": _prose(rnd, rnd.randint(200, 1_200))}
    return user, reply


def text_conversation(n: int, seed: int = 11) -> list[Entry]:
    """``n`` alternating user/assistant text entries."""
    rnd = random.Random(seed)
    out: list[Entry] = []
    k = 0
    while len(out) < n:
        out += _turn(rnd, k)
        k += 1
    return out[:n]


def extra_turns(count: int, seed: int = 13) -> list[tuple[Entry, Entry]]:
    """``count`` (user, reply) pairs to append during the timed rounds."""
    rnd = random.Random(seed)
    return [_turn(rnd, 100_000 + k) for k in range(count)]


def drawer(
    sessions: int = DRAWER_SESSIONS, entries: int = DRAWER_ENTRIES, seed: int = 17
) -> list[dict[str, Any]]:
    """Saved sessions ``[{id, name, createdAt, history}]``, oldest first."""
    rnd = random.Random(seed)
    out = []
    for s in range(sessions):
        history = text_conversation(entries, seed=rnd.randrange(1 << 30))
        history[0] = {**history[0], "content": f"Session {s:04d}: " + history[0]["content"]}
        if s % 100 == 37:
            history[2] = {**history[2], "content": history[2]["content"] + f" {RARE_MARKER}"}
        if s % HEAVY_EVERY == 0:
            page = _page_entry(rnd, 1_000 + s)
            page["content"] = page["content"] + _prose(rnd, 100_000)
            history.insert(1, page)
        name = history[0]["content"].strip()
        out.append(
            {
                "id": f"{s:032x}",
                "name": name[:48] + ("…" if len(name) > 48 else ""),
                "createdAt": 1_700_000_000_000 + s * 60_000,
                "pinned": False,
                "history": history,
            }
        )
    return out


# -- peer shapes --------------------------------------------------------------------------------
def _parts(entry: Entry) -> list[dict[str, Any]]:
    content = entry["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


def _url(part: dict[str, Any]) -> str:
    img = part["image_url"]
    return img["url"] if isinstance(img, dict) else img


def to_agents_item(entry: Entry, k: int = 0) -> dict[str, Any]:
    """A Responses-API input item as ``agents.SQLiteSession`` stores it."""
    if entry["role"] == "assistant":
        text = "".join(p.get("text", "") for p in _parts(entry))
        return {
            "id": f"msg_{k:08d}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    if isinstance(entry["content"], str):
        return {"role": "user", "content": entry["content"]}
    content = [
        {"type": "input_image", "image_url": _url(p), "detail": "auto"}
        if p.get("type") == "image_url"
        else {"type": "input_text", "text": p.get("text", "")}
        for p in entry["content"]
    ]
    return {"role": "user", "content": content}


def to_langchain(entry: Entry) -> Any:
    """A LangChain ``HumanMessage``/``AIMessage`` with OpenAI-style content blocks."""
    from langchain_core.messages import AIMessage, HumanMessage

    cls = AIMessage if entry["role"] == "assistant" else HumanMessage
    return cls(content=entry["content"])
