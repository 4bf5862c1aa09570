"""Integrity check and safe repair of one profile (``chatkeep doctor``, SPEC §10).

:func:`check` reads everything the profile stores and reports each problem as
``{"kind", "where", "detail", "repaired"}``:

``missing-body``     a ``savedSessions`` row (or an ``evicted_<id>`` row) whose ``session_<id>``
                     body is not there
``orphan-body``      a ``session_<id>`` body that no index row and no evicted row lists
``missing-ref``      a stored value that points at a blob without a reference row
``dangling-ref``     a reference row whose owner (key, live row, archive row) is gone
``orphan-blob``      a blob nothing references
``unreadable``       a row that does not parse (or a history row that is not an entry)
``missing-blob``     a row pointing at blobs whose rows are gone: it still reads, each missing
                     image as the text part ``[image missing: sha256:<hash>]``, and is left as it
                     is (never quarantined); the problem remains until the same bytes are stored
                     again, which brings the image back
``over-limit``       a row an older version accepted past today's limits (§12): it reads, but
                     could not be imported again
``history-state``    the live count/length or the archive's kept length disagrees with the rows
``permissions``      the SQLite file (or its own directory) is readable by other users
``duplicate-index``  a session listed more than once in ``savedSessions`` (repair keeps the first
                     row: the body is one key either way)
``versions``         the write counters of ``ck_versions`` are not counts (repair sets a fresh
                     value, so every cache reads again)
``empty-file``       the SQLite file was 0 bytes when this process opened it (a store cut off
                     looks like a new file): reported once, nothing to repair
``newer-schema``     a newer chatkeep changed the schema: this version opened the store
                     read-only, checks it without writing and repairs nothing
``damaged-pages``    pages of the SQLite file do not read (zeroed, overwritten), with each row
                     that cannot be read; repair rebuilds the store from the rows that read
                     and keeps the damaged file (:mod:`.doctor_pages`)
``missing-table``    a table (or an index or trigger) of the schema is gone, dropped behind
                     chatkeep's back: nothing else can be checked until it is back; repair
                     re-creates every missing part, then recovers the index rows of a dropped
                     ``ck_sessions`` from the ``session_<id>`` bodies (as orphan bodies)

With ``repair=True`` it fixes what is safe, in one transaction, and never deletes user content:
orphan bodies get an index row back, index and evicted rows without a body get an empty body, references
are re-linked or dropped, orphan blobs are collected, the bookkeeping is recomputed, unreadable
and over-limit rows move to a new ``quarantine_<n>`` key (their stored text, with blob markers
resolved to the bytes they stand for; exported with the profile, never deleted by chatkeep),
and the file and directory are made private (0600 / 0700; a directory only when it holds
nothing but the store). The report is then taken again: ``healthy`` says whether problems remain.

A store this process may only read is not damaged: the report's ``notes`` say it is read-only
(its file mode is shown there, not judged as a problem, since only the file's owner chooses
it), and ``repair=True`` changes nothing in it and says so in a note; problems found in its
content are still reported, and remain.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..constants import SESSION_BODY_PREFIX, SESSIONS_INDEX_KEY
from ..errors import CorruptValue
from ..limits import ENTRY_MAX_DEPTH, MAX_DEPTH
from ..limits import problem as limit_problem
from . import codec, doctor_pages
from .body_rows import BODY_MARK
from .doctor_files import permissions, problem, read_only_notes, repair_permissions, unhealthy
from .evicted import evicted_ids, evicted_key
from .quarantine import QUARANTINE_PREFIX, restore
from .sql import now_ms

if TYPE_CHECKING:
    from .backend import Backend
    from .sql import Tx

__all__ = ["QUARANTINE_PREFIX", "check"]


def _resolve_text(text: str, tx: Tx) -> str:
    """The stored text with every blob marker replaced by the JSON string it stands for."""
    urls = tx.blobs.fetch_urls(codec.blob_hashes(text))
    return codec.MARK_RE.sub(
        lambda m: (
            json.dumps(urls[m.group(1)], ensure_ascii=False) if m.group(1) in urls else m.group(0)
        ),
        text,
    )


def _readability(
    text: str, tx: Tx, max_depth: int, missing: set[str]
) -> tuple[tuple[str, str] | None, Any]:
    """((kind, detail) when a stored text cannot be read or re-imported, else None; its
    value). Hashes of blobs it points at that are gone are added to ``missing``: such a row
    still reads (a placeholder stands for each), so it is not unreadable."""
    try:
        value = codec.decode(text, tx.blobs.fetch_urls, missing)
    except CorruptValue as exc:
        return ("unreadable", exc.message), None
    why = limit_problem(value, max_depth)
    if why is not None:
        return ("over-limit", why), value
    return None, value


EMPTY_FILE = (
    "the store file was empty (0 bytes) when opened: a store that was cut off, or a new file;"
    " its conversations, if it held any, are not in it (restore a backup or an export with"
    " `chatkeep import`)"
)


def _missing_detail(missing: set[str]) -> str:
    shown = ", ".join("sha256:" + h[:12] for h in sorted(missing)[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return (
        f"{len(missing)} blob(s) gone ({shown}{more}): the row reads with a placeholder for each;"
        " the bytes cannot be repaired here (storing the same image again brings it back)"
    )


def _text(value: Any) -> str:
    """A stored value as text: SQLite keeps whatever was written behind chatkeep's back (raw
    bytes, a number), which is checked, and quarantined if it does not read, like any text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _owners(tx: Tx) -> dict[str, str]:
    """Every blob owner of the profile and its stored text."""
    out = {"k:" + k: _text(v) for k, v in tx.rows("SELECT key, value FROM ck_kv WHERE profile=?")}
    for k in [k for k, v in out.items() if v == BODY_MARK]:  # a body kept as rows: its list
        out[k] = tx.kv.raw([k[2:]]).get(k[2:], out[k])
    for owner, sql in (
        ("h:", "SELECT pos, value FROM ck_history WHERE profile=?"),
        ("a:", "SELECT seq, value FROM ck_archive WHERE profile=?"),
    ):
        out.update({f"{owner}{n}": _text(v) for n, v in tx.rows(sql)})
    return out


def _next_quarantine(tx: Tx) -> int:
    used = [k[len(QUARANTINE_PREFIX) :] for k in tx.kv.keys(QUARANTINE_PREFIX)]
    return max((int(n) for n in used if n.isdigit()), default=0) + 1


def _scan(tx: Tx) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    problems: list[dict[str, Any]] = []
    facts: dict[str, Any] = {
        "bad": {},
        "missing_refs": {},
        "dangling": set(),
        "orphans": set(),
        "versions": False,
    }
    owners = _owners(tx)
    # rows that cannot be read (or re-imported)
    for owner, text in owners.items():
        if owner.startswith("k:") and owner[2:].startswith(QUARANTINE_PREFIX):
            continue
        depth = MAX_DEPTH if owner.startswith("k:") else ENTRY_MAX_DEPTH
        missing: set[str] = set()
        bad, value = _readability(text, tx, depth, missing)
        if bad is None and owner[0] in "ha":
            if not (isinstance(value, dict) and value.get("role") in ("user", "assistant")):
                bad = ("unreadable", "not a history entry")
        if missing:
            problems.append(problem("missing-blob", owner, _missing_detail(missing)))
        if bad is not None:
            facts["bad"][owner] = bad
            problems.append(problem(bad[0], owner, bad[1]))
    # blob references
    refs: dict[str, set[str]] = {}
    for owner, h in tx.rows("SELECT owner, hash FROM ck_blob_refs WHERE profile=?"):
        refs.setdefault(owner, set()).add(h)
    blobs = {r[0] for r in tx.rows("SELECT hash FROM ck_blobs WHERE profile=?")}
    for owner, text in owners.items():
        wanted = codec.blob_hashes(text) & blobs
        missing = wanted - refs.get(owner, set())
        if missing:
            facts["missing_refs"][owner] = missing
            problems.append(problem("missing-ref", owner, f"{len(missing)} blob(s) not referenced"))
    for owner in refs:
        if owner not in owners:
            facts["dangling"].add(owner)
            problems.append(problem("dangling-ref", owner, "the owner row is gone"))
    referenced = {h for owner, hs in refs.items() if owner in owners for h in hs}
    referenced |= {h for hs in facts["missing_refs"].values() for h in hs}
    for h in sorted(blobs - referenced):
        facts["orphans"].add(h)
        problems.append(problem("orphan-blob", h[:16], "nothing references this blob"))
    # sessions index <-> bodies
    index = tx.sessions.index_light()
    ids = [r.get("id") for r in index if isinstance(r, dict)] if isinstance(index, list) else []
    bodies = {k[len(SESSION_BODY_PREFIX) :] for k in tx.kv.keys(SESSION_BODY_PREFIX)}
    gone = evicted_ids(tx)
    facts["missing_bodies"] = [i for i in ids if isinstance(i, str) and i not in bodies]
    facts["missing_evicted"] = [i for i in gone if i not in bodies]
    facts["orphan_bodies"] = sorted(bodies - {i for i in ids if isinstance(i, str)} - set(gone))
    for i in facts["missing_bodies"]:
        problems.append(problem("missing-body", f"savedSessions:{i}", "no session_<id> body"))
    for i in facts["missing_evicted"]:
        problems.append(problem("missing-body", evicted_key(i), "no session_<id> body"))
    for i in facts["orphan_bodies"]:
        problems.append(problem("orphan-body", SESSION_BODY_PREFIX + i, "not in savedSessions"))
    listed: dict[str, int] = {}
    for i in ids:
        if isinstance(i, str):
            listed[i] = listed.get(i, 0) + 1
    facts["duplicates"] = sorted(i for i, n in listed.items() if n > 1)
    for i in facts["duplicates"]:
        times = f"listed {listed[i]} times"
        problems.append(problem("duplicate-index", f"savedSessions:{i}", times))
    # the write counters (caches compare them): non-negative integers
    counters = tx.rows("SELECT kv, history FROM ck_versions WHERE profile=?")
    if counters and not all(isinstance(v, int) and v >= 0 for v in counters[0]):
        facts["versions"] = True
        problems.append(
            problem("versions", "ck_versions", f"counters {counters[0]!r} are not counts")
        )
    # live bookkeeping
    rows = tx.history.live_rows()
    real = (len(rows), sum(c for _p, c, _t in rows))
    if tx.history.state() != real:
        facts["state"] = real
        problems.append(
            problem("history-state", "ck_history_state", f"says {tx.history.state()}, rows {real}")
        )
    kept = tx.history.archive_count()
    rows_now = sum(1 for owner in owners if owner.startswith("a:"))
    if kept != rows_now:
        problems.append(
            problem("history-state", "ck_history_state", f"archive {kept}, rows {rows_now}")
        )
    return problems, facts


def _first_of_each(index: list[Any]) -> list[Any]:
    """The index with each session id listed once (its first row: the body is one key, so a
    later row with the same id only repeated it)."""
    seen: set[str] = set()
    out = []
    for row in index:
        i = row.get("id") if isinstance(row, dict) else None
        if isinstance(i, str):
            if i in seen:
                continue
            seen.add(i)
        out.append(row)
    return out


def _repair(tx: Tx, problems: list[dict[str, Any]], facts: dict[str, Any]) -> list[str]:
    quarantined: list[str] = []
    by_where = {(p["kind"], p["where"]): p for p in problems}
    n = _next_quarantine(tx)
    owners = _owners(tx)
    for owner, (kind, detail) in facts["bad"].items():
        key = f"{QUARANTINE_PREFIX}{n}"
        n += 1
        record = {
            "from": owner,
            "reason": f"{kind}: {detail}",
            "quarantinedAt": now_ms(),
            "text": _resolve_text(owners[owner], tx),
        }
        tx.kv.put(key, record)
        quarantined.append(key)
        if owner.startswith("k:"):
            tx.kv.delete([owner[2:]])
        elif owner.startswith("h:"):
            tx.history.delete([int(owner[2:])])
        else:
            tx.run("DELETE FROM ck_archive WHERE profile=? AND seq=?", (int(owner[2:]),))
            tx.search.drop("a", "", [int(owner[2:])])
            tx.blobs.gc(tx.blobs.drop_refs([owner]))
        by_where[(kind, owner)]["repaired"] = True
    for owner, hashes in facts["missing_refs"].items():
        if owner not in facts["bad"]:
            tx.blobs.add_refs(owner, hashes)
        by_where[("missing-ref", owner)]["repaired"] = True
    if facts["dangling"]:
        tx.blobs.gc(tx.blobs.drop_refs(sorted(facts["dangling"])))
        for owner in facts["dangling"]:
            by_where[("dangling-ref", owner)]["repaired"] = True
    if facts["orphans"]:
        tx.blobs.gc(facts["orphans"])
        for p in problems:
            if p["kind"] == "orphan-blob":
                p["repaired"] = True
    for i in facts["missing_evicted"]:
        tx.kv.put(SESSION_BODY_PREFIX + i, [])
        by_where[("missing-body", evicted_key(i))]["repaired"] = True
    if facts["versions"]:
        # a fresh value no cache holds (counters only grow, and the time is past any count)
        stamp = now_ms()
        tx.run("DELETE FROM ck_versions WHERE profile=?")
        tx.run("INSERT INTO ck_versions (profile, kv, history) VALUES (?, ?, ?)", (stamp, stamp))
        by_where[("versions", "ck_versions")]["repaired"] = True
    if facts["missing_bodies"] or facts["orphan_bodies"] or facts["duplicates"]:
        index = tx.sessions.index_light()
        index = _first_of_each(list(index) if isinstance(index, list) else [])
        for i in facts["duplicates"]:
            by_where[("duplicate-index", f"savedSessions:{i}")]["repaired"] = True
        for i in facts["missing_bodies"]:
            tx.kv.put(SESSION_BODY_PREFIX + i, [])
            by_where[("missing-body", f"savedSessions:{i}")]["repaired"] = True
        for i in facts["orphan_bodies"]:
            body = tx.kv.get([SESSION_BODY_PREFIX + i]).get(SESSION_BODY_PREFIX + i)
            if not isinstance(body, list):
                continue  # unreadable: quarantined above, or not a session body
            index.append(
                {
                    "id": i,
                    "name": f"Recovered session {i[:8]}",
                    "createdAt": now_ms(),
                    "pinned": False,
                    "textDigest": "\n".join(
                        e.get("content", "") if isinstance(e.get("content"), str) else ""
                        for e in body
                        if isinstance(e, dict)
                    ).lower()[:100_000],
                }
            )
            by_where[("orphan-body", SESSION_BODY_PREFIX + i)]["repaired"] = True
        tx.kv.put(SESSIONS_INDEX_KEY, index)
        tx.sessions.items_digested(
            facts["orphan_bodies"]
        )  # their digests were made from the bodies
    rows = tx.history.live_rows()
    real = (len(rows), sum(c for _p, c, _t in rows))
    if tx.history.state() != real:
        tx.history.set_state(*real)
    tx.history.archive_recount()  # quarantined archive rows left it, or its kept count was off
    if problems:  # the message-search rows made again from what is left
        tx.search.reindex()
    for p in problems:
        if p["kind"] == "history-state":
            p["repaired"] = True
    return quarantined


def check(
    backend: Backend,
    profile: str,
    *,
    repair: bool = False,
    path: str | None = None,
    restore_quarantine: bool = False,
) -> dict[str, Any]:
    """The doctor's report for ``profile`` (see the module docstring). ``restore_quarantine``
    first puts back the quarantined rows that read now (:mod:`.quarantine`), then repairs."""
    repair = repair or restore_quarantine
    damage = backend.schema.page_damage()  # first: the schema's own bookkeeping may not read
    if damage and (not repair or getattr(backend, "read_only", False)):
        return doctor_pages.report(backend, profile, damage, path)
    rescued: list[dict[str, Any]] = []
    notes: list[str] = []
    if damage:
        rescued, notes = doctor_pages.rescue(backend, profile, damage)
    lost = [
        problem("missing-table", name, f"the {kind} {name} is gone (dropped or damaged)")
        for kind, name in backend.schema.missing_schema()
    ]
    if lost and (not repair or getattr(backend, "read_only", False)):
        return _schema_lost(backend, profile, lost, path)
    if lost:
        backend.schema.rebuild_schema()
        for p in lost:
            p["repaired"] = True
    if getattr(backend, "read_only", False):
        return _check_read_only(backend, profile, repair=repair, path=path)
    restored: list[str] = []
    with backend.transaction(profile, write=repair) as tx:
        if restore_quarantine:
            restored, kept = restore(tx)
            notes += [f"{k['key']} (from {k['from']}) stays: {k['detail']}" for k in kept]
        problems, facts = _scan(tx)
        quarantined = _repair(tx, problems, facts) if repair else []
    perms = permissions(path)
    if getattr(backend, "opened_empty", False):
        perms.insert(0, problem("empty-file", str(path), EMPTY_FILE))
    if repair and perms and path:
        repair_permissions(path, perms)
    problems = lost + rescued + problems + perms
    remaining = problems
    if repair:
        with backend.transaction(profile, write=False) as tx:
            remaining, _ = _scan(tx)
        remaining += permissions(path)
        # rows the rescue could not read are gone from the store: said once, by this report
        remaining += [p for p in rescued if not p["repaired"]]
    return {
        "profile": profile,
        "healthy": not remaining,
        "problems": problems,
        "remaining": len(remaining),
        "repaired": sum(1 for p in problems if p["repaired"]),
        "quarantined": quarantined,
        "restored": restored,
        "readOnly": False,
        "notes": notes,
    }


def _schema_lost(
    backend: Backend, profile: str, lost: list[dict[str, Any]], path: str | None
) -> dict[str, Any]:
    """The report of a store whose schema lost a part: the rest reads through it, so it is
    checked once ``--repair`` has re-created what is missing."""
    read_only = bool(getattr(backend, "read_only", False))
    notes = [
        "the rest of the store is checked once the missing parts are back"
        + (
            " (this store is read-only here: nothing was changed)"
            if read_only
            else " (`chatkeep doctor --repair` re-creates them)"
        )
    ]
    return unhealthy(profile, lost + permissions(path), notes, read_only)


def _check_read_only(
    backend: Backend, profile: str, *, repair: bool, path: str | None
) -> dict[str, Any]:
    """The report of a store this process may only read: checked, never written. A store a
    newer chatkeep changed is one (this code must not write to it): that is reported."""
    with backend.transaction(profile, write=False) as tx:
        problems, _facts = _scan(tx)
    perms = permissions(path)
    newer = getattr(backend, "newer_schema", [])
    if newer:
        err = backend.schema.newer_schema_error()
        problems.insert(0, problem("newer-schema", "ck_migrations", f"{err.message}; {err.hint}"))
        notes = ["the store is read-only for this version: it was checked without writing"]
        if repair:
            notes.append("--repair cannot repair it: nothing was changed (upgrade chatkeep)")
    else:
        notes = read_only_notes(path, perms, repair)
    problems += perms
    return {
        "profile": profile,
        "healthy": not problems,
        "problems": problems,
        "remaining": len(problems),
        "repaired": 0,
        "quarantined": [],
        "restored": [],
        "readOnly": True,
        "notes": notes,
    }
