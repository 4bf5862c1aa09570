"""Side-by-side measurements of chatkeep and its peers, all in one run.

:func:`storage` drives every storage peer of :mod:`bench.peers` through the same workloads in
fresh SQLite files under one temporary directory, alternating the systems round by round so
machine noise hits all of them alike, and returns medians:

* ``append@100`` / ``append@5000`` — one turn (user entry + reply) appended to a text
  conversation of that length; every 5 rounds the conversation is reset to its length (untimed);
  ``append+seen@…`` — chatkeep only: the turn plus ``mark_images_seen()``, as a send does;
* ``read@5000`` and ``read@figure`` — reading the history for the next request;
* ``settings`` — ``get_all()`` vs the peer's own settings read, on the 5,000-entry store;
* ``figure-build`` — the whole figure-heavy conversation stored turn by turn (one run);
* ``save-time`` / ``save-bytes`` / ``save-written`` — saving the figure conversation as a
  session: time, DB growth (file size after a TRUNCATE checkpoint, before vs after) and bytes
  handed to write calls during the save (``/proc/self/io`` ``wchar``: WAL frames, plus any
  automatic checkpoint SQLite runs once the WAL passes ~4 MB); ``disk-figure`` — the file after
  the conversation and its first save;
* ``search`` — drawer search over 1,000 saved sessions (every query of
  :data:`bench.workloads.QUERIES`, all rounds); ``drawer-save-*`` — one more save into that drawer.

:func:`requests` replays the figure-heavy conversation and builds, per turn, chatkeep's request
(unbounded history, and the default live window), the naive resend of the whole conversation
(what ``llm -c`` does) and LangChain ``trim_messages`` (strategy ``last``, system kept, start on a
human message) with a token budget equal to chatkeep's estimate for that turn
(text chars / 4, images by pixel size — :mod:`chatkeep.rules.tokens` — the same counter on both
sides). Nothing here asserts timings.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench import peers as P
from bench import workloads as W
from bench.request_economy import SYSTEM, _bound, _naive
from chatkeep.entries import text_length
from chatkeep.rules.accounting import request_stats
from chatkeep.rules.context import AGED_STUB_HEADER
from chatkeep.rules.images import stamp_images_seen
from chatkeep.rules.tokens import image_tokens, text_tokens
from chatkeep.rules.wire import build_request, serialize

LENGTHS = (100, 5_000)
RESET_EVERY = 5


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _wchar() -> int:
    """Bytes this process passed to write calls so far (Linux ``/proc/self/io``), or -1."""
    try:
        with open("/proc/self/io") as fh:
            for line in fh:
                if line.startswith("wchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _saved(run: _Run, name: str, peer: Any, prefix: str) -> int | None:
    """One timed ``save_session``: time, DB growth and bytes written; returns the file size."""
    before = P.disk_bytes(peer.path)
    w0 = _wchar()
    t = run.guard(name, f"{prefix}-time", lambda: _timed(peer.save_session))
    if t is None:
        return None
    written = _wchar() - w0
    after = P.disk_bytes(peer.path)
    run.add(name, f"{prefix}-time", t)
    run.add(name, f"{prefix}-bytes", after - before)
    if w0 >= 0:
        run.add(name, f"{prefix}-written", written)
    return after


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


class _Run:
    """Per-peer samples and failure reasons (a failing peer is reported, never fatal)."""

    def __init__(self) -> None:
        self.samples: dict[str, dict[str, list[float]]] = {}
        self.notes: dict[str, dict[str, str]] = {}

    def add(self, peer: str, figure: str, value: float) -> None:
        self.samples.setdefault(peer, {}).setdefault(figure, []).append(value)

    def note(self, peer: str, figure: str, text: str) -> None:
        self.notes.setdefault(peer, {}).setdefault(figure, text)

    def guard(self, peer: str, figure: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            self.note(peer, figure, f"failed: {type(exc).__name__}: {exc}"[:160])
            return None


def _open_all(root: str, tag: str, run: _Run) -> dict[str, Any]:
    out = {}
    for cls in P.STORAGE_PEERS:
        peer, why = P.open_peer(cls, os.path.join(root, f"{cls.name}-{tag}.db"))
        if peer is None:
            run.note(cls.name, "*", why)
        else:
            out[cls.name] = peer
    return out


def _text_phase(root: str, rounds: int, run: _Run, log: Callable[[str], None]) -> None:
    convs = {n: W.text_conversation(n) for n in LENGTHS}
    stores = {n: _open_all(root, f"text{n}", run) for n in LENGTHS}
    for n, group in stores.items():
        for name, peer in list(group.items()):
            if run.guard(name, f"append@{n}", lambda p=peer, n=n: p.load(convs[n]) or True) is None:
                group.pop(name).close()
    turns = W.extra_turns(rounds + 10)
    for name, peer in stores[LENGTHS[0]].items():  # warm-up, untimed
        run.guard(name, "warm-up", lambda p=peer: p.append_turn(*turns[-1]))
    log(f"appending: {rounds} rounds × {len(LENGTHS)} lengths × {len(stores[LENGTHS[0]])} systems")
    for r in range(rounds):
        if r and r % RESET_EVERY == 0:
            for n, group in stores.items():
                for name, peer in group.items():
                    run.guard(name, f"append@{n}", lambda p=peer, n=n: p.load(convs[n]))
        for n, group in stores.items():
            for name, peer in group.items():
                t = run.guard(
                    name,
                    f"append@{n}",
                    lambda p=peer, r=r: _timed(lambda: p.append_turn(*turns[r])),
                )
                if t is not None:
                    run.add(name, f"append@{n}", t)
                if name == "chatkeep":
                    t = _timed(lambda p=peer, r=r: (p.append_turn(*turns[r]), p.mark_seen()))
                    run.add(name, f"append+seen@{n}", t)
    big = stores[LENGTHS[-1]]
    for name, peer in big.items():
        run.guard(name, "read@5000", lambda p=peer: p.load(convs[LENGTHS[-1]]))
    log(f"reading history and settings: {rounds} rounds")
    for _ in range(rounds):
        for name, peer in big.items():
            t = run.guard(name, "read@5000", lambda p=peer: _timed(p.read))
            if t is not None:
                run.add(name, "read@5000", t)
            if hasattr(peer, "settings"):
                for _k in range(5):
                    run.add(name, "settings", _timed(peer.settings))
            else:
                run.note(name, "settings", peer.missing["settings"])
    for group in stores.values():
        for peer in group.values():
            peer.close()


def _figure_phase(
    root: str, rounds: int, read_rounds: int, run: _Run, log: Callable[[str], None]
) -> None:
    steps = W.figure_conversation()
    group = _open_all(root, "figure", run)
    log(f"figure conversation: storing it in {len(group)} systems, then {rounds} saves each")
    for name, peer in group.items():

        def build(p: Any = peer, name: str = name) -> None:
            p.load([])
            for step in steps:
                for entry in step["attachments"]:
                    p.append_entry(entry)
                p.append_turn(step["user"], step["reply"])
                if name == "chatkeep":
                    p.mark_seen()  # after every successful turn, as a send does

        t = run.guard(name, "figure-build", lambda b=build: _timed(b))
        if t is not None:
            run.add(name, "figure-build", t)
    for r in range(rounds):
        for name, peer in group.items():
            if "figure-build" not in run.samples.get(name, {}):
                continue
            after = _saved(run, name, peer, "save")
            if r == 0 and after is not None:
                run.add(name, "disk-figure", after)
    for _ in range(read_rounds):
        for name, peer in group.items():
            if "figure-build" in run.samples.get(name, {}):
                run.add(name, "read@figure", _timed(peer.read))
    for peer in group.values():
        peer.close()


def _drawer_phase(
    root: str, rounds: int, sessions: int, run: _Run, log: Callable[[str], None]
) -> None:
    drawer = W.drawer(sessions)
    figure = W.figure_entries()
    group = _open_all(root, "drawer", run)
    for name, peer in list(group.items()):
        if not hasattr(peer, "fill_drawer"):
            run.note(name, "search", peer.missing["search"])
            for fig in ("drawer-save-time", "drawer-save-bytes", "drawer-save-written"):
                run.note(name, fig, "no saved-session drawer to save into (see search)")
            group.pop(name).close()
            continue
        log(f"drawer: filling {name} with {sessions} sessions")
        if run.guard(name, "search", lambda p=peer: p.fill_drawer(drawer) or True) is None:
            group.pop(name).close()
        elif "search" in peer.missing:
            run.note(name, "search", peer.missing["search"])
    for _ in range(rounds):
        for q in W.QUERIES:
            for name, peer in group.items():
                run.add(name, "search", _timed(lambda p=peer, q=q: p.search(q)))
                run.add(name, f"search:{q}", run.samples[name]["search"][-1])
    for name, peer in group.items():
        peer.load(figure)
        for _ in range(max(1, rounds // 3)):
            _saved(run, name, peer, "drawer-save")
        peer.close()


def storage(
    root: str, rounds: int, save_rounds: int, sessions: int, log: Callable[[str], None]
) -> dict[str, Any]:
    """Run the storage workloads; ``{"medians": {peer: {figure: value}}, "notes", "versions"}``."""
    run = _Run()
    _text_phase(root, rounds, run, log)
    _figure_phase(root, save_rounds, rounds, run, log)
    _drawer_phase(root, max(3, rounds // 3), sessions, run, log)
    medians = {p: {f: _median(v) for f, v in figs.items()} for p, figs in run.samples.items()}
    versions = {cls.name: _peer_version(cls) for cls in P.STORAGE_PEERS}
    return {
        "sessions": sessions,
        "medians": medians,
        "samples": {p: {f: len(v) for f, v in figs.items()} for p, figs in run.samples.items()},
        "notes": run.notes,
        "versions": versions,
        "imageBytes": W.figure_image_bytes(W.figure_entries()),
        "imageUrlChars": W.figure_image_bytes(W.figure_entries(), as_url=True),
        "textChars": sum(text_length(e) for e in W.figure_entries()),
    }


def _peer_version(cls: type) -> str:
    if cls is P.ChatkeepPeer:
        import chatkeep

        return chatkeep.__version__
    if cls is P.AgentsPeer:
        return P.version("openai-agents")
    if cls is P.LangGraphPeer:
        return f"{P.version('langgraph')} (langgraph-checkpoint-sqlite {P.version('langgraph-checkpoint-sqlite')})"
    return f"SQLite {P.sqlite3.sqlite_version}"


# -- requests -----------------------------------------------------------------------------------
def _est_tokens(messages: list[Any]) -> int:
    """chatkeep's estimate (text chars / 4, images by pixel size) over LangChain messages."""
    chars = images = 0
    for m in messages:
        if isinstance(m.content, str):
            chars += len(m.content)
            continue
        for part in m.content:
            if isinstance(part, str):
                chars += len(part)
            elif part.get("type") == "image_url":
                img = part["image_url"]
                images += image_tokens(img["url"] if isinstance(img, dict) else img)
            else:
                chars += len(part.get("text", ""))
    return text_tokens(chars) + images


def _trimmed(history: list[W.Entry], user: W.Entry, budget: int) -> dict[str, Any]:
    from langchain_core.messages import SystemMessage, convert_to_openai_messages, trim_messages

    msgs = [SystemMessage(content=SYSTEM), *(W.to_langchain(e) for e in [*history, user])]
    kept = trim_messages(
        msgs,
        max_tokens=budget,
        token_counter=_est_tokens,
        strategy="last",
        include_system=True,
        start_on="human",
        allow_partial=False,
    )
    return {"model": "m", "messages": convert_to_openai_messages(kept), "stream": True}


def requests(seed: int = 7) -> dict[str, Any]:
    """Per-turn request figures of chatkeep (unbounded and live window), naive and trim."""
    full: list[W.Entry] = []
    windowed: list[W.Entry] = []
    prev: dict[str, bytes | None] = {"chatkeep": None, "window": None, "naive": None, "trim": None}
    rows = []
    prev_images = prev_stubs = 0
    trim_error = ""
    for step in W.figure_conversation(seed):
        for entry in step["attachments"]:
            full = [*full, entry]
            windowed = _bound([*windowed, entry])
        user = step["user"]
        row: dict[str, Any] = {"turn": step["turn"], "events": step["events"]}
        bodies = {
            "chatkeep": build_request(
                "chat", full, user_entry=user, system_prompt=SYSTEM, model="m", base_url="https://h"
            ).body,
            "window": build_request(
                "chat",
                windowed,
                user_entry=user,
                system_prompt=SYSTEM,
                model="m",
                base_url="https://h",
            ).body,
            "naive": _naive(full, user),
        }
        for key, body in bodies.items():
            row[key] = request_stats(body, prev[key])
            prev[key] = serialize(body)
        if not trim_error:
            try:
                body = _trimmed(full, user, row["chatkeep"]["estTokens"])
                row["trim"] = request_stats(body, prev["trim"])
                prev["trim"] = serialize(body)
            except Exception as exc:  # reported in the table
                trim_error = f"{type(exc).__name__}: {exc}"[:160]
        stubs = (prev["chatkeep"] or b"").count(AGED_STUB_HEADER.encode())
        causes = (["labels"] if prev_images else []) + (["aged"] if stubs > prev_stubs else [])
        row["breaks"] = "+".join(causes)
        prev_images, prev_stubs = row["chatkeep"]["images"], stubs
        rows.append(row)
        full = stamp_images_seen([*full, user, step["reply"]]) or [*full, user, step["reply"]]
        windowed = _bound([*windowed, user, step["reply"]])
        windowed = stamp_images_seen(windowed) or windowed
    return {"rows": rows, "totals": _request_totals(rows), "trimError": trim_error}


def _request_totals(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    later = rows[1:]
    calm = [r for r in later if not r["breaks"]]
    for key in ("chatkeep", "window", "naive", "trim"):
        if not all(key in r for r in rows):
            continue
        out[key] = {
            "bytes": sum(r[key]["bytes"] for r in rows),
            "images": sum(r[key]["images"] for r in rows),
            "reusePrev": sum(r[key]["prefixOfPrevious"] >= 0.9 for r in later) / len(later),
            "reuseCur": sum(r[key]["prefixRatio"] >= 0.9 for r in later) / len(later),
            "reuseCalm": sum(r[key]["prefixOfPrevious"] >= 0.9 for r in calm) / max(1, len(calm)),
            "calmTurns": len(calm),
        }
    return out
