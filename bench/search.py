"""Message search (SPEC §16) at scale, and the drawer search on a shared PostgreSQL server.

``python -m bench.search [--entries N] [--sessions N] [--rounds N] [--others N] [--json PATH]``
(also run by ``python -m bench`` with ``--search quick|full|off``). Figures, on SQLite and —
when ``CHATKEEP_BENCH_PG`` (or ``CHATKEEP_TEST_PG``) names a database — PostgreSQL:

* a generated profile of ``entries`` entries in ``sessions`` saved sessions (default 20,000
  in 2,000; SPEC §16's figure is 1,000,000 in 100,000: ``--entries 1000000 --sessions
  100000``), made with ``store.sessions.add_many`` as an import makes it;
* ``text search`` / ``hybrid search`` — median and p95 of ``store.search`` over a fixed mix of
  queries (a rare word, a word in 1 % of entries, a common word, a substring inside words, a
  two-word query, a CJK phrase and a miss), each query's median printed beside; hybrid only
  where ``chatkeep[semantic]`` is installed, taken once every row built has its vector (the
  time that takes is reported: searches embed a backlog 1,024 rows at a time);
* ``LIKE scan`` — the same queries answered by a plain substring scan of the stored bodies
  (what a store without the index does), and ``drawer search`` — ``sessions.list(q)`` (one
  page of sessions, SPEC §4.3) for the same words;
* ``index size`` against the text it indexes, and ``append`` with the index kept against the
  same appends with it switched off (bench only);
* on PostgreSQL every figure is taken in a database that also holds ``others`` (default 200)
  other profiles of mixed sizes, as a server shared by several users holds; and the drawer
  search of a 100-session profile against a 10,000-session one in that database (SPEC §4.3;
  the growth must stay within 1.5×).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import chatkeep

WORDS = (
    "network model training data figure table page layer sample loss result method value "
    "image session store query index window archive budget token request reply graph"
).split()
RARE, ONE_PERCENT = "zanzibar", "marmoset"
CJK = "数据库设计"
QUERIES = (RARE, ONE_PERCENT, "network", "ampl", "loss graph", CJK, "nothing-like-this")
#: Drawer queries whose answer is the same at every drawer size (as in :mod:`bench.scale`): a
#: word nearly every session holds, a marker held by :data:`SPREAD` sessions spread over the
#: drawer, a name prefix of the oldest sessions, and a miss.
SPREAD_MARKER, SPREAD = "quokka", 60
DRAWER_QUERIES = ("network", SPREAD_MARKER, "session 000", "no-such-phrase-anywhere")
OTHER_SIZES = (10, 50, 200, 1000, 3000)


def _text(rnd: random.Random, words: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(words))


def sessions(
    n_sessions: int, per: int, seed: int = 7, tag: str = ""
) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """``n_sessions`` sessions of ``per`` entries; one entry in 100 holds the 1 % word, one
    session (the middle one) the rare word, one in 1,000 entries a CJK sentence."""
    rnd = random.Random(seed)
    k = 0
    for s in range(n_sessions):
        body = []
        for i in range(per):
            text = _text(rnd, 12 if i % 2 == 0 else 40)
            if k % 100 == 37:
                text += f" {ONE_PERCENT}"
            if k % 1000 == 500:
                text += f" 我们讨论{CJK}的原则"
            if s == n_sessions // 2 and i == 1:
                text += f" {RARE}"
            if (
                i == 1
                and s % max(1, n_sessions // SPREAD) == 0
                and s // max(1, n_sessions // SPREAD) < SPREAD
            ):
                text += f" {SPREAD_MARKER}"
            body.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
            k += 1
        body[0]["content"] = f"Session {s:05d}: " + body[0]["content"]
        row = {
            "id": f"{tag}{s:08d}",
            "name": f"Session {s:05d}",
            "createdAt": 1_700_000_000_000 + s,
        }
        yield row, body


def _fill(store: chatkeep.Store, n_sessions: int, per: int, batch: int = 2000) -> None:
    gen = sessions(n_sessions, per, tag=uuid.uuid4().hex[:8])
    while True:
        chunk = [x for _, x in zip(range(batch), gen, strict=False)]
        if not chunk:
            return
        store.sessions.add_many(chunk)


def _timed(fn: Callable[[], Any], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _p(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def _like_scan(store: chatkeep.Store, q: str) -> int:
    """The queries as a store without the index answers them: a substring scan of every
    session body (bench only: SQL on the store's own connection)."""
    b = store._backend
    fn = b.substring_fn
    words = q.split()
    cond = " AND ".join(f"{fn}(lower(value), ?) > 0" for _ in words)
    rows = b.query(
        f"SELECT key FROM ck_kv WHERE profile=? AND key LIKE ? AND {cond} LIMIT 20",
        (store.profile, r"session\_%", *words),
    )
    return len(rows)


def _index_bytes(store: chatkeep.Store) -> tuple[int, int]:
    """(index bytes, text bytes) of the profile's search rows."""
    b = store._backend
    text = b.query("SELECT sum(length(body)) FROM ck_search WHERE profile=?", (store.profile,))
    if b.dialect == "sqlite":
        size = b.query(
            "SELECT sum(pgsize) FROM dbstat WHERE name IN ('ck_search', 'ck_search_at')"
            " OR name LIKE 'ck_search_fts%'"
        )
    else:
        size = b.query("SELECT pg_total_relation_size('ck_search')")
    return int(size[0][0] or 0), int(text[0][0] or 0)


def _embed_all(store: chatkeep.Store) -> float | None:
    """Seconds to embed every row built (a search embeds a backlog a bounded piece at a
    time: the hybrid figures are taken once none waits); ``None`` without the extra."""
    from chatkeep.storage.search_vectors import semantic_for

    side = semantic_for(store._backend)
    if side is None:
        return None
    t = time.perf_counter()
    side.catch_up(store.profile, most=2**62)
    return time.perf_counter() - t


def _appends(store: chatkeep.Store, rounds: int) -> dict[bool, list[float]]:
    """Appends with the index kept and with it switched off (bench only), in alternating
    blocks of 16 — which side goes first alternates too — so neither side gets the warmer
    caches or the quieter moment; ``rounds`` blocks each."""
    b = store._backend
    keep = b.search_rows
    rnd = random.Random(3)
    out: dict[bool, list[float]] = {True: [], False: []}
    try:
        for k in range(rounds):
            for indexed in (True, False) if k % 2 == 0 else (False, True):
                b.search_rows = indexed
                out[indexed] += _timed(
                    lambda: store.history.append({"role": "user", "content": _text(rnd, 40)}), 16
                )
    finally:
        b.search_rows = keep
    return out


def measure(
    url: str, profile: str, entries: int, n_sessions: int, rounds: int, log: Callable[[str], None]
) -> dict[str, Any]:
    per = max(1, entries // max(1, n_sessions))
    out: dict[str, Any] = {"entries": per * n_sessions, "sessions": n_sessions}
    with chatkeep.open(url, profile=profile) as store:
        t = time.perf_counter()
        _fill(store, n_sessions, per)
        out["build s"] = time.perf_counter() - t
        log(f"  built {per * n_sessions:,} entries in {out['build s']:.0f} s")
        store._backend.refresh_statistics()
        import warnings

        warnings.simplefilter("ignore", chatkeep.SemanticUnavailable)
        out["embed s"] = _embed_all(store)
        for name, fn in (
            ("text search", lambda q: store.search(q, mode="text")),
            ("hybrid search", lambda q: store.search(q, mode="hybrid")),
            ("LIKE scan", lambda q: _like_scan(store, q)),
            ("drawer search", lambda q: store.sessions.list(q, limit=chatkeep.DRAWER_PAGE)),
        ):
            qs = DRAWER_QUERIES if name == "drawer search" else QUERIES
            for q in qs:
                fn(q)  # warm
            by_query = {q: _timed(lambda q=q, fn=fn: fn(q), rounds) for q in qs}
            samples = [s for q in qs for s in by_query[q]]
            out[name] = (statistics.median(samples), _p(samples, 0.95))
            out[name + " per query"] = {q: statistics.median(v) for q, v in by_query.items()}
        out["index bytes"], out["text bytes"] = _index_bytes(store)
        appends = _appends(store, rounds * 4)
        out["append, indexed"] = statistics.median(appends[True])
        out["append, no index"] = statistics.median(appends[False])
        out["append p99"] = (_p(appends[True], 0.99), _p(appends[False], 0.99))
    return out


def others(url: str, count: int, log: Callable[[str], None]) -> list[str]:
    """``count`` other profiles of mixed sizes in the database at ``url``."""
    names = []
    for i in range(count):
        name = f"bench_other_{i}"
        names.append(name)
        with chatkeep.open(url, profile=name) as store:
            if store.sessions.list(limit=1):
                continue
            _fill(store, OTHER_SIZES[i % len(OTHER_SIZES)], 4)
        if i % 20 == 19:
            log(f"  {i + 1} other profiles")
    with chatkeep.open(url, profile="bench_admin") as admin:
        admin._backend.execute("VACUUM (ANALYZE) ck_sessions, ck_session_digest, ck_kv, ck_search")
    return names


#: Calls of one statement on one connection before psycopg prepares it (its default
#: ``prepare_threshold``); from then on the server runs the plan it keeps for it.
PREPARED_AFTER = 5
#: The fewest samples of a query in :func:`drawer_growth` (whatever ``--rounds`` says).
DRAWER_ROUNDS = 25


def drawer_growth(
    url: str,
    rounds: int,
    log: Callable[[str], None],
    sizes: tuple[int, int] = (100, 10_000),
    prefix: str = "bench_drawer_",
) -> dict[str, Any]:
    """Drawer search of a 100- and a 10,000-session profile (``sizes``; the profiles are
    ``prefix`` and the size, filled on first use) in a shared database, as a user
    meets it two ways: ``first`` — the first search on a new connection (a ``chatkeep``
    command: its statements are planned for their parameters on every call), the median of
    ``rounds`` new connections a query; ``steady`` — a search on a connection that has made it
    before (the panel, a library user: the statements are prepared), the median of
    ``rounds`` calls a query after :data:`PREPARED_AFTER` + 1 untimed ones, both profiles on one
    connection. Each figure is the median of the queries' medians; its growth is 10,000
    against 100.

    Until Dec 3 2026 this took one untimed call and then ``rounds`` timed ones (5 in the
    bench's command): the first few of those ran unprepared and the rest prepared, a mix that
    moved with ``rounds`` (1.30-1.58x at 5 rounds, 1.00-1.29x at 25, the same code and data).
    Each search takes 1-6 ms, so a query is sampled :data:`DRAWER_ROUNDS` times at least; the
    two sizes are measured interleaved, a search on one and then the same on the other (the
    first alternating), so a machine that speeds up or slows down meanwhile moves both."""
    rounds = max(rounds, DRAWER_ROUNDS)
    for n in sizes:
        with chatkeep.open(url, profile=f"{prefix}{n}") as store:
            if not store.sessions.list(limit=1):
                _fill(store, n, 20)  # digests of about 4,000 characters, as bench.scale's
                store._backend.refresh_statistics()
    with chatkeep.open(url, profile="bench_admin") as admin:
        admin._backend.execute("VACUUM (ANALYZE) ck_sessions, ck_session_digest")
    samples: dict[tuple[str, int], dict[str, list[float]]] = {
        (way, n): {q: [] for q in DRAWER_QUERIES} for way in ("first", "steady") for n in sizes
    }

    def search(store: chatkeep.Store, q: str) -> float:
        return _timed(lambda: store.sessions.list(q, limit=chatkeep.DRAWER_PAGE), 1)[0]

    with chatkeep.open(url, profile="bench_admin") as base:
        # both profiles on one connection: two connections are two server processes, which
        # the machine may serve unequally (the same search on two of them measured 0.97 and
        # 1.65 ms side by side); on one, only the profile differs
        kept = {n: chatkeep.Store(base._backend, f"{prefix}{n}") for n in sizes}
        for n in sizes:
            for q in DRAWER_QUERIES:
                for _ in range(PREPARED_AFTER + 1):
                    search(kept[n], q)
        for r in range(rounds):  # the sizes interleaved, the first alternating
            for q in DRAWER_QUERIES:
                for n in sizes if r % 2 == 0 else sizes[::-1]:
                    samples["steady", n][q].append(search(kept[n], q))
        for r in range(rounds):  # new connections apart: each disturbs the server's caches
            for q in DRAWER_QUERIES:
                for n in sizes if r % 2 == 0 else sizes[::-1]:
                    with chatkeep.open(url, profile=f"{prefix}{n}") as store:
                        store.sessions.list(limit=1)  # the connection opened, outside the figure
                        samples["first", n][q].append(search(store, q))
    out: dict[str, Any] = {"sizes": sizes, **{n: {} for n in sizes}}
    for (way, n), by_query in samples.items():
        per = {q: statistics.median(v) for q, v in by_query.items()}
        out[n][way] = {"median": statistics.median(per.values()), "per query": per}
        log(f"  drawer {n}, {way}: {_ms(out[n][way]['median'])} {_per_ms(per)}")
    for way in ("first", "steady"):
        out["growth " + way] = out[sizes[1]][way]["median"] / out[sizes[0]][way]["median"]
    out["growth"] = max(out["growth first"], out["growth steady"])
    return out


def _per_ms(per: dict[str, float]) -> str:
    return ", ".join(f"{q} {v * 1e3:.2f}" for q, v in per.items())


RETRIEVAL = os.path.join(
    os.path.dirname(__file__), "..", "tests", "fixtures", "search", "retrieval.json"
)


def recall_at(k: int = 5, path: str = RETRIEVAL) -> dict[str, dict[str, float]]:
    """Recall@k of text, semantic and hybrid search on the labelled set: for each group of
    queries ('meaning': no word shared with the answer; 'words': an exact word needed), the
    share of queries whose answer is among the first ``k`` hits. Semantic and hybrid need
    ``chatkeep[semantic]``."""
    with open(path) as fh:
        data = json.load(fh)
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as root, chatkeep.open(os.path.join(root, "r.db")) as store:
        ids = list(data["docs"])
        store.sessions.add_many(
            [({"id": "retrieval", "name": "retrieval"}, [
                {"role": "user", "content": data["docs"][i]} for i in ids
            ])]
        )  # fmt: skip
        for mode in ("text", "semantic", "hybrid"):
            out[mode] = {}
            for group in ("meaning", "words", "all"):
                pairs = data["meaning"] + data["words"] if group == "all" else data[group]
                found = 0
                for query, answer in pairs:
                    hits = store.search(query, mode=mode, limit=k)
                    found += any(ids[h["index"]] == answer for h in hits)
                out[mode][group] = found / len(pairs)
    return out


def _ms(s: float) -> str:
    return f"{s * 1e3:.2f} ms"


def report(res: dict[str, Any]) -> None:
    for backend, r in res.items():
        if backend == "drawer growth":
            small, big = r["sizes"]
            for way in ("first", "steady"):
                print(
                    f"drawer search, shared PostgreSQL, {way} search: {small:,} sessions"
                    f" {_ms(r[small][way]['median'])}, {big:,} sessions"
                    f" {_ms(r[big][way]['median'])}, growth {r['growth ' + way]:.2f}× (≤ 1.5×)"
                )
            continue
        print(
            f"{backend}: {r['entries']:,} entries in {r['sessions']:,} sessions (built in {r['build s']:.0f} s)"
        )
        if r.get("embed s") is not None:
            print(f"  vectors for every row embedded in {r['embed s']:.0f} s (before the figures)")
        for fig, budget in (
            ("text search", "≤ 50 ms"),
            ("hybrid search", "≤ 150 ms"),
            ("LIKE scan", ""),
            ("drawer search", ""),
        ):
            med, p95 = r[fig]
            print(f"  {fig:<15} median {_ms(med):>10}  p95 {_ms(p95):>10}  {budget}")
            per = r.get(fig + " per query") or {}
            if per:
                print("    " + ", ".join(f"{q!r} {_ms(t).strip()}" for q, t in per.items()))
        print(
            f"  index {r['index bytes'] / 1e6:.1f} MB for {r['text bytes'] / 1e6:.1f} MB of text"
            f" ({r['index bytes'] / max(1, r['text bytes']):.2f}×)"
        )
        ratio = r["append, indexed"] / r["append, no index"]
        print(
            f"  append {_ms(r['append, indexed'])} indexed, {_ms(r['append, no index'])} without"
            f" ({ratio:.2f}×, ≤ 1.5×; medians)"
        )
        if "append p99" in r:
            p99 = r["append p99"]
            print(f"  append p99 {_ms(p99[0])} indexed, {_ms(p99[1])} without")


def run(
    entries: int, n_sessions: int, rounds: int, n_others: int, log: Callable[[str], None] = print
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as root:
        log("SQLite")
        res["SQLite"] = measure(
            os.path.join(root, "search.db"), "default", entries, n_sessions, rounds, log
        )
    pg = os.environ.get("CHATKEEP_BENCH_PG") or os.environ.get("CHATKEEP_TEST_PG")
    if pg:
        log(f"PostgreSQL: {n_others} other profiles")
        others(pg, n_others, log)
        res["drawer growth"] = drawer_growth(pg, rounds, log)
        profile = "bench_search_" + uuid.uuid4().hex[:8]
        log("PostgreSQL")
        try:
            res["PostgreSQL"] = measure(pg, profile, entries, n_sessions, rounds, log)
        finally:
            with chatkeep.open(pg, profile=profile) as store:
                with store._backend.transaction(profile) as tx:  # bench clean-up only
                    tx.wipe_profile()
    return res


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench.search")
    ap.add_argument("--entries", type=int, default=20_000)
    ap.add_argument("--sessions", type=int, default=2_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--others", type=int, default=200)
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args(argv)
    res = run(args.entries, args.sessions, args.rounds, args.others)
    report(res)
    res["recall@5"] = recall_at(5)
    print("recall@5 on tests/fixtures/search/retrieval.json (meaning / words / all):")
    for mode, r in res["recall@5"].items():
        print(f"  {mode:<8} {r['meaning']:.2f} / {r['words']:.2f} / {r['all']:.2f}")
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(res, fh, indent=1, default=str)
    return res


if __name__ == "__main__":
    main()
