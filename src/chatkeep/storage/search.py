"""``store.search`` (SPEC §16): message hits from everywhere a profile keeps entries.

A hit is ``{where, sessionId, sessionName, index, role, createdAt, snippet, score}``:
``where`` is ``live``, ``archive``, ``session`` or ``evicted``; ``sessionId`` and
``sessionName`` are ``""`` outside sessions; ``index`` is the entry's position in its list (the
live history, the archive, or the session's body), so a face can open it there; ``snippet``
marks the matched spans (:mod:`.search_text`); ``score`` is higher for a better hit.

Text mode reads up to a window of matching chunks, newest first (the trigram index answers
it), ranks them by :func:`~.search_text.score`, keeps the best chunk of each entry, and pages.
Semantic mode (``chatkeep[semantic]``) ranks chunks by the cosine of their embeddings to the
query's; hybrid fuses both lists by reciprocal rank. Without the extra, hybrid is text search
and says so once (a :class:`SemanticUnavailable` warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from ..constants import ACTIVE_SESSION_KEY
from ..errors import InvalidValue, StoreError
from ..limits import check_text
from . import search_query, search_text
from .backend import Backend
from .search_index import NAMES, PLACES
from .search_query import Candidate

MODES = ("text", "semantic", "hybrid")
#: Hits one call returns at most.
MAX_LIMIT = 500
#: Candidate chunks a text search ranks at least (the newest that match).
WINDOW = 200
#: Reciprocal-rank constant of the hybrid fusion.
RRF_K = 60

Hit = dict[str, Any]


class SemanticUnavailable(UserWarning):
    """Semantic search needs ``pip install 'chatkeep[semantic]'``: hybrid is text search."""


_warned: set[str] = set()


def _check(query: Any, limit: Any, offset: Any, where: Any, mode: Any) -> list[str]:
    if not isinstance(query, str):
        raise InvalidValue("the search query must be a string", hint="pass some words to find")
    check_text(query, "the search query")
    for name, v, low in (("limit", limit, 1), ("offset", offset, 0)):
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise InvalidValue(
                f"search {name} must be an integer of at least {low}, got {v!r}",
                hint=f"pass {name}={low} or more",
            )
    if limit > MAX_LIMIT:
        raise InvalidValue(
            f"search limit is at most {MAX_LIMIT}, got {limit}",
            hint="page with offset instead",
        )
    if mode not in MODES:
        raise InvalidValue(
            f"search mode must be one of {', '.join(MODES)}, got {mode!r}",
            hint='use mode="text", "semantic" or "hybrid"',
        )
    if where is None:
        return list(PLACES.values())
    names = [where] if isinstance(where, str) else where
    if not isinstance(names, Iterable) or not names:
        raise InvalidValue("search where must be a place name or a list of them")
    names = list(names)
    bad = [n for n in names if n not in PLACES]
    if bad or not names:
        raise InvalidValue(
            f"search where must name places among {', '.join(PLACES)}, got {bad or names!r}",
            hint='e.g. where="archive" or where=["session", "evicted"]',
        )
    return [PLACES[n] for n in dict.fromkeys(names)]


def search(
    backend: Backend,
    profile: str,
    query: Any,
    *,
    limit: int = 20,
    offset: int = 0,
    where: Any = None,
    mode: str = "hybrid",
) -> list[Hit]:
    places = _check(query, limit, offset, where, mode)
    found = search_text.terms(query)
    if not found:
        return []
    if not backend.search_rows:
        raise StoreError(
            "this store has no message-search index yet (it was opened read-only, and an"
            " older chatkeep wrote it)",
            hint="open it once with write permission: the index is built then",
        )
    want = offset + limit
    semantic = None
    if mode != "text":
        semantic = _semantic(backend, mode)
        if semantic is not None:
            semantic.catch_up(profile)  # the rows written since the last search get vectors
    with backend.transaction(profile, write=False) as tx:
        ranked: list[tuple[Candidate, float]] = []
        if mode != "semantic" or semantic is None:
            ranked = _text_ranked(tx, found, places, want)
        if semantic is not None:
            sem = semantic.ranked(tx, query, places, max(WINDOW, 2 * want))
            ranked = sem if mode == "semantic" else _fuse(ranked, sem)
        active = tx.kv.get([ACTIVE_SESSION_KEY]).get(ACTIVE_SESSION_KEY) or ""
        page = _once(_best_per_entry(ranked), active)[offset:want]
        return _hits(tx, page, found)


def _semantic(backend: Backend, mode: str) -> Any:
    """The semantic side, or ``None`` (hybrid without the extra: warned once)."""
    from .search_vectors import semantic_for  # lazy: numpy and the model, only here

    side = semantic_for(backend)
    if side is None:
        if mode == "semantic":
            raise InvalidValue(
                "semantic search needs the semantic extra",
                hint="pip install 'chatkeep[semantic]', or search with mode=\"text\"",
            )
        if "hybrid" not in _warned:
            _warned.add("hybrid")
            warnings.warn(
                "semantic search is not installed (pip install 'chatkeep[semantic]'):"
                " hybrid search is text search",
                SemanticUnavailable,
                stacklevel=4,
            )
    return side


def _text_ranked(tx: Any, found: list[str], places: list[str], want: int) -> list[Any]:
    window = max(WINDOW, 2 * want)
    rows = search_query.candidates(tx, found, places, window)
    rows = [r for r in rows if search_text.holds_all(r[7], found)]
    scored = [(r, search_text.score(r[7], found)) for r in rows]
    scored.sort(key=lambda x: (-x[1], -x[0][0]))
    return scored


def _entry(row: Candidate) -> tuple[str, str, int]:
    return row[1], row[2], row[3]


def _best_per_entry(ranked: list[tuple[Candidate, float]]) -> list[tuple[Candidate, float]]:
    seen: set[tuple[str, str, int]] = set()
    out = []
    for row, sc in ranked:
        key = _entry(row)
        if key not in seen:
            seen.add(key)
            out.append((row, sc))
    return out


def _once(ranked: list[tuple[Candidate, float]], active: str) -> list[tuple[Candidate, float]]:
    """One hit per message where the store keeps copies of it. The live history of a saved or
    loaded session holds copies of that session's entries: such an entry is the live hit (what
    is on screen), its copy in the body is dropped. The archive holds copies of a loaded
    session's entries that left the live window: such an entry is the session's hit (it opens
    the session there), its archive copy is dropped. A copy has the same role, chunk and text,
    and — for the archive — the same time stamp."""
    live: dict[tuple[Any, ...], int] = {}
    body: dict[tuple[Any, ...], int] = {}  # chunks of the active session's body
    kept: set[tuple[Any, ...]] = set()
    for row, _sc in ranked:
        key = (row[4], row[5], row[7])
        if row[1] == "h" and active:
            live[key] = live.get(key, 0) + 1
        elif row[1] in "se":
            if row[2] == active:
                body[key] = body.get(key, 0) + 1
            if row[6] is not None:
                kept.add((*key, row[6]))
    out = []
    for row, sc in ranked:
        key = (row[4], row[5], row[7])
        if row[1] == "s" and row[2] == active and live.get(key):
            live[key] -= 1
            continue
        if row[1] == "a":
            if body.get(key):
                body[key] -= 1
                continue
            if row[6] is not None and (*key, row[6]) in kept:
                continue
        out.append((row, sc))
    return out


def _fuse(
    text: list[tuple[Candidate, float]], sem: list[tuple[Candidate, float]]
) -> list[tuple[Candidate, float]]:
    """Reciprocal-rank fusion of two ranked lists, by entry (each list's best chunk)."""
    total: dict[tuple[str, str, int], float] = {}
    rows: dict[tuple[str, str, int], Candidate] = {}
    for ranked in (text, sem):
        for rank, (row, _sc) in enumerate(_best_per_entry(ranked)):
            key = _entry(row)
            total[key] = total.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
            if key not in rows or ranked is text:  # the text chunk holds the words
                rows[key] = row
    order = sorted(total, key=lambda k: (-total[k], -rows[k][0]))
    return [(rows[k], round(total[k] * 1000, 4)) for k in order]


def _hits(tx: Any, page: list[tuple[Candidate, float]], found: list[str]) -> list[Hit]:
    by_place: dict[str, list[int]] = {}
    for row, _sc in page:
        by_place.setdefault(row[1], []).append(row[3])
    where_at = {p: search_query.positions(tx, p, ps) for p, ps in by_place.items()}
    names = search_query.session_names(tx, sorted({r[2] for r, _s in page if r[2]}))
    out = []
    for (_rid, place, owner, pos, _part, role, created, body), sc in page:
        out.append(
            {
                "where": NAMES[place],
                "sessionId": owner,
                "sessionName": names.get(owner, ""),
                "index": where_at[place].get(pos, pos),
                "role": role,
                "createdAt": created,
                "snippet": search_text.snippet(body, found),
                "score": sc,
            }
        )
    return out
