"""Scale: the everyday operations at 1× and 100× store size, on SQLite and PostgreSQL side by side.

A profile at scale ``k`` holds an archive of ``1,000·k`` entries behind a 60-entry live window
and a drawer of ``100·k`` saved sessions (20 entries each; every 500th session also holds a 1 MB
page attachment). At 100× that is a 100,000-entry archive and 10,000 sessions. Each profile is
built by one ``import_data`` of a generated chatkeep export (deterministic, seeded), then these
figures are timed, ``--rounds`` times each, as medians (the sizes take turns round by round, so
a slow moment of the machine hits both alike):

* ``append`` — one user entry appended to the live history (the window archives the oldest);
* ``get_all`` — the settings read every page load and every send does;
* ``live read`` — ``history.read()`` right after an append (a cold read: the write moved the
  history's write counter, so no cached copy is used);
* ``archive page`` — the newest page of the archive with its length, as the panel's history
  view loads it (``history.archived_page(None, 30)``);
* ``drawer search`` — ``sessions.list(q, limit=DRAWER_PAGE)`` (one page of the drawer, as the
  panel asks for it) for each of :data:`QUERIES`, whose answers are the same size at every
  scale (see there), also shown per query; :data:`GROWING_QUERIES` (answers that grow with
  the drawer) and :data:`SHORT_QUERY` (a one-letter search) are timed and shown on their own
  lines, outside the figure. Each search is timed as a user meets it: after other work has
  gone through the CPU caches (a :class:`_Sweep` before it), since a search follows typing,
  never another search of the same drawer a millisecond earlier. The four queries timed back
  to back (caches warm) are shown on lines of their own, outside the figure: there the 1×
  profile's few pages stay in the caches between its searches while the 100× profile's do
  not, so those lines also measure how much of each profile fits in the caches. The sweep
  adds about the same time to a search at both sizes, which brings a ratio closer to 1 too
  (``docs/benchmarks.md`` reads both);
* ``session save`` — the 60-entry live conversation saved into the drawer (deleted again,
  untimed, so the drawer keeps its size);
* ``session add`` — one 4-entry session added with ``sessions.add_many`` (what an import and
  the first turn of an Agents SDK or LangChain session do; deleted again, untimed).

The table prints each figure at 1× and 100× and the growth ratio 100×/1×; targets: growth ≤ 1.5×
for every figure and a drawer search median ≤ 20 ms at 100×. PostgreSQL runs when
``CHATKEEP_BENCH_PG`` (or ``CHATKEEP_TEST_PG``) names a database; its profiles are removed at the
end. Timings are reported, never asserted.

Run: ``python -m bench.scale [--quick] [--rounds N] [--json PATH]`` (``--quick``: 1× and 10×).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

import chatkeep
from bench.workloads import RARE_MARKER

WINDOW = 60
ARCHIVE_PER_X, SESSIONS_PER_X, SESSION_ENTRIES = 1_000, 100, 20
HEAVY_EVERY, HEAVY_CHARS = 500, 1_000_000
#: The ``drawer search`` figure's queries. Each one's answer is the same at every scale, so
#: what grows from 1× to 100× is the drawer around it, not the page: a word nearly every
#: session holds (a full page from the newest sessions), :data:`SPREAD_MARKER`, held by
#: :data:`SPREAD_SESSIONS` sessions spread over the whole drawer (60 % of the sessions at 1×,
#: 0.6 % at 100×: an index must find them), a name prefix of the 100 oldest sessions (the far
#: end of the drawer's order) and a miss. Every query but the miss fills a page.
SPREAD_MARKER, SPREAD_SESSIONS = "quokka", 60
QUERIES = ("network", SPREAD_MARKER, "session 000", "no-such-phrase-anywhere")
#: Queries whose answer grows with the drawer, timed outside the figure: the 1 % marker
#: (1 session at 1×, 100 at 100×) and a name prefix that only the larger drawers hold
#: ("Session 04000"–"04999": none at 1×, 1,000 at 100×). A page of 50 rows costs more than an
#: empty one at any size; these lines show by how much.
GROWING_QUERIES = (RARE_MARKER, "session 04")
FIGURES = (
    "append",
    "get_all",
    "live read",
    "archive page",
    "drawer search",
    "session save",
    "session add",
)
#: Key of the figure's queries timed back to back (caches warm), outside the figure.
WARM = "drawer search, back to back"
#: Entries in one page of the archive, as the panel's history view asks for it (its default).
ARCHIVE_PAGE = 30
#: A one-letter search (the first keystroke in the drawer's search box; the letter is in the
#: 1 % marker's sessions only): no trigram index answers it, so the drawer is read in its order
#: up to the page's last match. Printed per query, not part of the "drawer search" figure.
SHORT_QUERY = "z"
WORDS = (
    "network model training data figure table page layer sample loss result method value "
    "image session store query index window archive budget token request reply"
).split()


def _text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(max(1, n // 7)))[:n]


def _entry(rnd: random.Random, i: int) -> dict[str, Any]:
    role = "user" if i % 2 == 0 else "assistant"
    return {"role": role, "content": f"m{i} " + _text(rnd, 80 if role == "user" else 300)}


def export_doc(scale: int, seed: int = 23) -> dict[str, Any]:
    """A chatkeep export of a profile at ``scale`` (same seed, same bytes)."""
    rnd = random.Random(seed)
    archive = [_entry(rnd, i) for i in range(ARCHIVE_PER_X * scale)]
    live = [_entry(rnd, i) for i in range(WINDOW)]
    local: dict[str, Any] = {
        "maxHistoryEntries": WINDOW,
        "systemPrompt": "You are a helpful assistant.",
        "fontSize": 14,
    }
    index = []
    heavy = _text(rnd, HEAVY_CHARS)
    n = SESSIONS_PER_X * scale
    # one after each 60th of the drawer: never a session with a 1 MB page (every 500th), as
    # 37 after each would have made every third one (a digest of 100,000 characters each)
    spread = {i * n // SPREAD_SESSIONS + 1 for i in range(SPREAD_SESSIONS)}
    for s in range(n):
        body = [_entry(rnd, i) for i in range(SESSION_ENTRIES)]
        body[0]["content"] = f"Session {s:05d}: " + body[0]["content"]
        if s in spread:  # past the name's 48 characters, before any page (digests stop
            body[0]["content"] += f" {SPREAD_MARKER}"  # after 100,000 characters)
        if s % 100 == 37:
            body[2]["content"] += f" {RARE_MARKER}"
        if s % HEAVY_EVERY == 0:
            page = chatkeep.PAGE_CONTEXT_PREFIX + f"\nTitle: page {s}\n\n{s} " + heavy
            body.insert(1, {"role": "user", "content": page})
        sid = f"{s:032x}"
        local[f"session_{sid}"] = body
        index.append(
            {
                "id": sid,
                "name": body[0]["content"][:48],
                "createdAt": 1_700_000_000_000 + s * 60_000,
                "pinned": False,
                "textDigest": "\n".join(e["content"] for e in body).lower()[:100_000],
            }
        )
    local["savedSessions"] = index
    return {
        "format": "chatkeep-export",
        "version": 1,
        "local": local,
        "history": live,
        "archive": archive,
    }


class _Sweep:
    """Writes :data:`SWEEP_BYTES` through the CPU caches (a copy between two buffers), so the
    next timed search finds none of the store's pages there."""

    def __init__(self) -> None:
        self.src, self.dst = bytearray(SWEEP_BYTES), bytearray(SWEEP_BYTES)
        self()  # the buffers' pages are mapped now, not during the first timed search

    def __call__(self) -> None:
        memoryview(self.dst)[:] = self.src


def _last_cache_bytes() -> int:
    """The size of this machine's last-level CPU cache (Linux sysfs), 32 MiB where unknown."""
    best = 0
    root = "/sys/devices/system/cpu/cpu0/cache"
    for entry in os.listdir(root) if os.path.isdir(root) else ():
        try:
            with open(os.path.join(root, entry, "size")) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        unit = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        if text.rstrip("KM").isdigit():
            best = max(best, int(text.rstrip("KM")) * unit)
    return best or 32 << 20


#: Bytes a :class:`_Sweep` writes through: twice the last-level cache.
SWEEP_BYTES = 2 * _last_cache_bytes()


def _med(samples: list[float]) -> float:
    return statistics.median(samples)


class _Timer:
    """One built profile's samples: every figure, and drawer search per query."""

    def __init__(self, store: chatkeep.Store, sweep: _Sweep) -> None:
        self.store = store
        self.sweep = sweep
        self.rnd = random.Random(5)
        self.samples: dict[str, list[float]] = {f: [] for f in FIGURES}
        self.warm: dict[str, list[float]] = {q: [] for q in QUERIES}  # back to back
        self.per_query: dict[str, list[float]] = {}
        self.answer: dict[str, int] = {}  # rows on the page each query returned
        for _ in range(3):  # warm-up, untimed
            store.history.append(_entry(self.rnd, 0))
            store.history.read()
            store.get_all()

    def _timed(self, fig: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        out = fn()
        self.samples[fig].append(time.perf_counter() - t0)
        return out

    def round(self, r: int) -> None:
        store = self.store
        self._timed("append", lambda: store.history.append(_entry(self.rnd, r)))
        self._timed("live read", store.history.read)
        self._timed("get_all", store.get_all)
        self._timed("archive page", lambda: store.history.archived_page(None, ARCHIVE_PAGE))
        row = self._timed("session save", lambda: store.sessions.save("scale round"))
        store.sessions.delete(row["id"])
        new = ({"id": f"added-{r}", "name": "added"}, [_entry(self.rnd, i) for i in range(4)])
        self._timed("session add", lambda: store.sessions.add_many([new]))
        store.sessions.delete(new[0]["id"])

    def _search(self, q: str) -> float:
        self.sweep()
        t0 = time.perf_counter()
        page = self.store.sessions.list(q, limit=chatkeep.DRAWER_PAGE)
        took = time.perf_counter() - t0
        self.answer[q] = len(page)
        self.per_query.setdefault(q, []).append(took)
        return took

    def search_round(self, r: int = 0) -> None:
        """Each of :data:`QUERIES` once: one page of the drawer, as the panel asks for it."""
        for q in QUERIES:
            self.samples["drawer search"].append(self._search(q))

    def warm_round(self, r: int = 0) -> None:
        """:data:`QUERIES` back to back, nothing between them (outside the figure)."""
        for q in QUERIES:
            t0 = time.perf_counter()
            self.store.sessions.list(q, limit=chatkeep.DRAWER_PAGE)
            self.warm[q].append(time.perf_counter() - t0)

    def other_round(self, r: int = 0) -> None:
        """:data:`GROWING_QUERIES` and :data:`SHORT_QUERY` once each (outside the figure)."""
        for q in (*GROWING_QUERIES, SHORT_QUERY):
            self._search(q)

    def medians(self) -> dict[str, float]:
        out = {f: _med(v) for f, v in self.samples.items()}
        out.update({f"search {q!r}": _med(v) for q, v in self.per_query.items()})
        out[WARM] = _med([t for v in self.warm.values() for t in v])
        out.update({f"{WARM} {q!r}": _med(v) for q, v in self.warm.items()})
        out.update({f"rows {q!r}": float(n) for q, n in self.answer.items()})
        return out


def measure(stores: dict[int, chatkeep.Store], rounds: int) -> dict[int, dict[str, float]]:
    """Medians (seconds) of every figure on each built profile, by scale. The scales take
    turns round by round, so a slow moment of the machine hits all of them alike, and which
    one goes first alternates (on PostgreSQL the profile timed right after the other's writes
    ran 1.2–1.7× slower, whichever it was). The searches get rounds of their own, after the
    others: at 100× a rare query reads a thousand digests, and the figures timed after it in
    the same round read their pages back from colder caches (PostgreSQL's appends, settings
    reads and session adds measured 1.23–1.35× instead of 1.0×). Then the figure's queries get
    rounds back to back (:meth:`_Timer.warm_round`), then the queries outside the figure."""
    sweep = _Sweep()
    timers = {k: _Timer(store, sweep) for k, store in stores.items()}
    turns = list(timers.values())
    for step in (_Timer.round, _Timer.search_round, _Timer.warm_round, _Timer.other_round):
        for r in range(rounds):
            for timer in turns if r % 2 == 0 else turns[::-1]:
                step(timer, r)
    return {k: timer.medians() for k, timer in timers.items()}


def _backends(root: str) -> list[tuple[str, Callable[[str], str]]]:
    out: list[tuple[str, Callable[[str], str]]] = [
        ("SQLite", lambda tag: os.path.join(root, f"scale-{tag}.db"))
    ]
    pg = os.environ.get("CHATKEEP_BENCH_PG") or os.environ.get("CHATKEEP_TEST_PG")
    if pg:
        out.append(("PostgreSQL", lambda tag, pg=pg: pg))
    return out


def _wipe(store: chatkeep.Store) -> None:
    with store._backend.transaction(store.profile) as tx:  # bench clean-up only
        tx.wipe_profile()


def _vacuum(url: str, profile: str) -> None:
    """``VACUUM (ANALYZE)`` the tables a profile lives in, as autovacuum leaves a server: the
    profiles removed at the end of earlier runs leave dead rows behind, which the trigram
    indexes still point to, and every index search would visit them until autovacuum runs
    (seen here: 537 candidates for a marker 120 rows hold)."""
    # on a connection of its own: a timed profile's connection never ran it, as a user's
    # never does (with it on the 1x connection, that profile's figures ran 1.3-2.5x slower
    # than the 100x one's in two runs; 0.74-1.15x growth after, so not the only cause)
    with chatkeep.open(url, profile=profile) as admin:  # bench set-up only
        admin._backend.execute(  # VACUUM runs outside a transaction
            "VACUUM (ANALYZE) ck_sessions, ck_session_digest, ck_kv, ck_history, ck_archive"
        )


def run(
    scales: tuple[int, int], rounds: int, log: Callable[[str], None] = lambda m: None
) -> dict[str, Any]:
    """``{"scales", "results": {backend: {scale: {figure: seconds}}}, "build": {…}, "notes"}``."""
    results: dict[str, dict[int, dict[str, float]]] = {}
    build: dict[str, dict[int, float]] = {}
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="chatkeep-scale-") as root:
        for name, url_for in _backends(root):
            stores: dict[int, chatkeep.Store] = {}
            try:
                for k in scales:
                    log(f"scale: building {k}× on {name}")
                    doc = export_doc(k)
                    try:
                        store = chatkeep.open(
                            url_for(str(k)), profile=f"scale_{uuid.uuid4().hex[:12]}"
                        )
                    except chatkeep.StoreError as exc:
                        notes.append(f"{name}: {exc.message}")
                        break
                    stores[k] = store
                    t0 = time.perf_counter()
                    store.import_data(doc)
                    build.setdefault(name, {})[k] = time.perf_counter() - t0
                    # the generated export is input, not state: holding its millions of
                    # objects would make every collection of the timed code walk them
                    del doc
                    gc.collect()
                    # timed through a fresh connection, as a user opens the store later
                    store.close()
                    stores[k] = chatkeep.open(url_for(str(k)), profile=store.profile)
                if len(stores) == len(scales):
                    if name == "PostgreSQL":
                        _vacuum(url_for(str(scales[0])), stores[scales[0]].profile)
                    log(f"scale: timing {', '.join(f'{k}×' for k in scales)} on {name}")
                    results[name] = measure(stores, rounds)
            finally:
                for store in stores.values():
                    if name == "PostgreSQL":
                        _wipe(store)
                    store.close()
    if len(results) < 2:
        notes.append(
            "PostgreSQL: not measured (set CHATKEEP_BENCH_PG=postgresql://… to include it)"
        )
    return {"scales": scales, "results": results, "build": build, "notes": notes}


def _t(sec: float) -> str:
    return f"{sec * 1e3:,.2f} ms" if sec >= 1e-3 else f"{sec * 1e6:,.0f} µs"


def table(out: dict[str, Any]) -> list[tuple[str, ...]]:
    lo, hi = out["scales"]
    rows: list[tuple[str, ...]] = []
    for fig in FIGURES:
        for i, (name, by_scale) in enumerate(out["results"].items()):
            a, b = by_scale[lo][fig], by_scale[hi][fig]
            growth = b / a
            ok = growth <= 1.5 and (fig != "drawer search" or b <= 0.020)
            target = "≤ 1.5×" + (", ≤ 20 ms" if fig == "drawer search" else "")
            rows.append(
                (
                    fig if i == 0 else "",
                    name,
                    _t(a),
                    _t(b),
                    f"{growth:.2f}×",
                    target,
                    "met" if ok else "NOT met",
                )
            )
    return rows


def print_report(out: dict[str, Any]) -> None:
    lo, hi = out["scales"]
    print(
        f"\nScale — {ARCHIVE_PER_X * lo:,}→{ARCHIVE_PER_X * hi:,} archived entries, "
        f"{SESSIONS_PER_X * lo:,}→{SESSIONS_PER_X * hi:,} sessions, live window {WINDOW}; medians"
    )
    head = ("figure", "backend", f"{lo}×", f"{hi}×", f"growth {hi}×/{lo}×", "target", "verdict")
    rows = table(out)
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    print("drawer search by query (one page of the drawer, medians; rows: the page's size):")
    for name, by_scale in out["results"].items():
        for key in by_scale[lo]:
            if key.startswith("search "):
                a, b = by_scale[lo][key], by_scale[hi][key]
                n = "/".join(f"{by_scale[k].get('rows ' + key[7:], 0):.0f}" for k in (lo, hi))
                q = key[8:-1]
                tag = "" if q in QUERIES else "  (outside the figure)"
                print(
                    f"  {name:<10}  {key[7:]:<26}  {_t(a):>9}  {_t(b):>9}  {b / a:6.2f}×"
                    f"  rows {n}{tag}"
                )
    print("the figure's queries back to back (caches warm; outside the figure, see the notes):")
    for name, by_scale in out["results"].items():
        for key in (WARM, *(f"{WARM} {q!r}" for q in QUERIES)):
            if key in by_scale[lo]:
                a, b = by_scale[lo][key], by_scale[hi][key]
                label = key[len(WARM) + 1 :] or "all four"
                print(f"  {name:<10}  {label:<26}  {_t(a):>9}  {_t(b):>9}  {b / a:6.2f}×")
    for name, by_scale in out["build"].items():
        print(
            f"build (one import_data) on {name}: "
            + ", ".join(f"{k}× {sec:.1f} s" for k, sec in by_scale.items())
        )
    for note in out["notes"]:
        print(f"note: {note}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1× and 10× instead of 1× and 100×")
    ap.add_argument("--rounds", type=int, default=30, help="timed rounds per figure")
    ap.add_argument("--json", metavar="PATH", help="also write the medians as JSON")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.1f} s] {msg}", file=sys.stderr, flush=True)

    out = run((1, 10) if args.quick else (1, 100), args.rounds, log)
    print_report(out)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
