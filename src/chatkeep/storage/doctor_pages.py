"""The doctor's findings and repair for a store file with damaged pages (see :mod:`.salvage`).

``damaged-pages``  a table whose pages do not read (SQLite's ``quick_check`` summarised): one
                   problem per table, saying what it holds
``lost-row``       a row (or an unreadable stretch of rows) of a table holding the user's
                   content that cannot be read: named by its key (the body ``session_<id>``,
                   the history position, the archive sequence, the image hash), so exactly
                   what is gone is known before and after the repair
``rebuilt-row``    a row of a table derived from others (search indexes, counts, references)
                   that cannot be read: the repair makes it again, nothing is lost

Without ``--repair`` the store is only read: every table is read around its damage, so the
report lists each row the repair would not get back. ``--repair`` keeps the damaged file as
``<store>.damaged-<time>``, puts every readable row into a new file, copies that over the
store's pages, then runs the ordinary repair on the result (an index row whose body was lost
gets an empty body, a body whose index row was lost comes back as "Recovered session …", an
image that was lost reads as a placeholder). Its own report still lists the lost rows (exit 4:
not everything came back); the next ``chatkeep doctor`` finds the store healthy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .doctor_files import permissions, problem, unhealthy
from .salvage import Lost, holds, where

if TYPE_CHECKING:
    from .backend import Backend

#: Tables whose rows the repair makes again from the others.
REBUILT = {
    "ck_session_text",
    "ck_session_digest",
    "ck_session_name",
    "ck_history_state",
    "ck_versions",
    "ck_migrations",
    "ck_blob_refs",
}

HINT = (
    "`chatkeep export -o FILE` saves everything that still reads (and lists what it skips);"
    " `chatkeep doctor --repair` rebuilds the store from the readable rows and keeps the"
    " damaged file beside it"
)


def damage_problems(damage: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        problem(
            "damaged-pages",
            table,
            f"pages of this table do not read ({detail}); it holds {holds(table)}",
        )
        for table, detail in damage
    ]


def lost_problems(lost: list[Lost], profile: str, *, every: bool = False) -> list[dict[str, Any]]:
    """The lost rows of ``profile`` (and those whose profile is not known; ``every``: of every
    profile, the others' marked with theirs) as problems."""
    out = []
    for row in lost:
        if row.profile not in (None, profile) and not every:
            continue
        what = holds(row.table)
        if row.profile not in (None, profile):
            what += f" of profile {row.profile!r}"
        if row.key is None:
            what = "rows (how many is not known: no index names them) of " + what
        if row.table in REBUILT:
            out.append(problem("rebuilt-row", where(row), f"unreadable row of {what}"))
        else:
            out.append(problem("lost-row", where(row), f"{what}: cannot be read"))
    return out


def report(
    backend: Backend,
    profile: str,
    damage: list[tuple[str, str]],
    path: str | None,
) -> dict[str, Any]:
    """The report of a damaged store, read without writing anything."""
    problems = damage_problems(damage)
    notes = []
    if damage[0][0] == "sqlite_master":
        notes.append("the store's schema itself does not read: restore a backup")
    else:
        counts, lost = backend.salvage_report()  # type: ignore[attr-defined]
        problems += lost_problems(lost, profile)
        gone = sum(1 for p in problems if p["kind"] == "lost-row")
        notes.append(
            f"{sum(counts.values())} rows still read; {gone} row(s) or stretches of rows of"
            " this profile's content cannot be read"
        )
    notes.append("the rest of the store is checked once it is rebuilt from the rows that read")
    read_only = bool(getattr(backend, "read_only", False))
    notes.append("this store is read-only here: nothing was changed" if read_only else HINT)
    return unhealthy(profile, problems + permissions(path), notes, read_only)


def rescue(
    backend: Backend, profile: str, damage: list[tuple[str, str]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Rebuild the store from its readable rows (see the module docstring): the problems
    found (the damaged tables repaired, the lost rows not) and notes."""
    if damage[0][0] == "sqlite_master":
        raise StoreError(
            f"the schema of the store {backend.description} does not read: nothing was changed",
            hint="restore a backup of the store (or an export of it)",
        )
    kept, lost = backend.rescue()  # type: ignore[attr-defined]
    found = damage_problems(damage)
    for p in found:
        p["repaired"] = True
    # the whole file is rebuilt: what every profile lost is said now
    rows = lost_problems(lost, profile, every=True)
    for p in rows:
        p["repaired"] = p["kind"] == "rebuilt-row"
    gone = sum(1 for p in rows if not p["repaired"])
    notes = [
        f"the store was rebuilt from its readable rows; the damaged file is kept as {kept}"
        + (f" ({gone} lost row(s) or stretches are listed above)" if gone else "")
    ]
    return found + rows, notes
