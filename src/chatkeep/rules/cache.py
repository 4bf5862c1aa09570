"""Planned prompt-cache breakpoints (SPEC §6.5). Pure: no I/O, inputs never mutated.

chatkeep's request rules are deterministic, so it knows which blocks of a request its own rules
rewrite on the *next* turn, and which blocks it rewrote since the *previous* request:

- unseen image blocks become labels once the turn that carries them is answered (§5.1, §5.2);
- an attachment that turns cold becomes its aging stub (§6.2).

Positions are *cuts* ``(entry index, part index)`` into ``[*history, user_entry]`` (part index
among the entry's text and image parts, as the wire builders keep them): the first block at or
after a cut is rewritten. :func:`plan_cache` computes, from the stored history and the new user
entry:

- ``keep`` — the earliest cut this request's rules will rewrite on the next turn (``None`` when
  the next request repeats this one whole);
- ``maybe`` — the attachment that ages next only if another attachment arrives first (it stops
  being the newest), when that is earlier than ``keep``;
- ``read`` — the earliest cut rewritten since the previous request (the labels of the images the
  previous turn carried, attachments aged since), or the end of the previous request's
  conversation when nothing was rewritten (``None`` on a first turn).

:func:`place_breakpoints` turns a plan into at most :data:`MAX_BREAKPOINTS` marks over a flat
list of blocks (each described by its cut and whether it is an empty text block), in order of
usefulness: the last block (read next turn when nothing is rewritten), the last block before
``keep`` (read next turn when the planned rewrite happens), the last block before ``read``
(where the previous request wrote its own ``keep`` or end mark, so the lookup is exact:
look-back distance 0, well within the API's 20 blocks), the last block before ``maybe``, and
the system prompt. Duplicates merge; a mark never sits on an empty text block (it moves to the
block before); the first four distinct marks are kept, so the system prompt — almost never the
1,024 tokens a cache entry needs on its own — is the first to go. A turn that rewrites nothing reads the whole previous request from
cache; a turn that rewrites reads everything before the rewrite.

With the model's :class:`~chatkeep.rules.cache_rules.CacheRule` the limits are that family's
own: its number of breakpoints, and its minimum prefix (a mark below it cannot make an entry, so
it goes first). :func:`choose_ttl` picks the lifetime the marks ask for from the conversation's
pace (Anthropic's 1-hour entries when the questions come more than 5 minutes apart); every mark
of a request asks for the same one, so 1-hour entries never follow 5-minute ones.

OpenAI caches prefixes automatically; :func:`prompt_cache_key` gives the stable routing key of
a conversation (``ck-`` + 32 hex of the digest of the profile name and the active session id —
never of any text), so every request of one conversation reaches the same cache machine.
:func:`accepts_prompt_cache_key` says whether an endpoint takes the field: ``api.openai.com``,
or a card that sets ``promptCacheKey: true``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..constants import PAGE_CONTEXT_PREFIX
from ..digest import digest_json, hex_of
from ..entries import Entry, is_attachment, is_image_part, is_text_part
from .cache_rules import CacheRule
from .context import stale_attachments

__all__ = [
    "EPHEMERAL",
    "LOOK_BACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "PACE_KEY",
    "CachePlan",
    "Cut",
    "Marks",
    "accepts_prompt_cache_key",
    "cache_mark",
    "choose_ttl",
    "place_breakpoints",
    "plan_cache",
    "prompt_cache_key",
    "question_times",
    "remember_question",
]

#: The API's limits: four ``cache_control`` marks per request, a 20-block look-back per mark.
MAX_BREAKPOINTS = 4
LOOK_BACK_BLOCKS = 20
EPHEMERAL = {"type": "ephemeral"}
#: The gaps between questions the cache lifetime is chosen from (:func:`choose_ttl`).
PACE_TURNS = 4
#: ``store.local`` key of the profile's last question times (:func:`remember_question`): the
#: pace a new conversation's first turn chooses its cache lifetime from.
PACE_KEY = "questionPace"

Cut = tuple[int, int]
_NEXT_ATTACHMENT: Entry = {"role": "user", "content": PAGE_CONTEXT_PREFIX + "\n"}


@dataclass(frozen=True)
class CachePlan:
    """Where the previous request's cache ends (``read``) and where the next will break
    (``keep``), as cuts into ``[*history, user_entry]``."""

    keep: Cut | None = None
    read: Cut | None = None
    maybe: Cut | None = None
    #: a one-off request (a summary call) whose new turn no later request repeats: the end
    #: mark sits on the last block before this cut instead of on the last block
    end: Cut | None = None


@dataclass(frozen=True)
class Marks:
    """The planned marks: on the system prompt or not, flat block indexes (ascending), and
    the lifetime every mark asks for (``None``: the provider's default)."""

    system: bool
    blocks: tuple[int, ...]
    ttl: str | None = None

    @property
    def count(self) -> int:
        return int(self.system) + len(self.blocks)


def _first_image(entry: Entry) -> int | None:
    content = entry.get("content")
    if not isinstance(content, list):
        return None
    k = 0
    for part in content:
        if is_image_part(part):
            return k
        if is_text_part(part):
            k += 1
    return None


def _label_cut(i: int, entry: Entry) -> Cut | None:
    """Where entry ``i``'s unseen images start (assistant entries never carry pixels)."""
    if entry.get("role") != "user" or entry.get("imagesSeen"):
        return None
    k = _first_image(entry)
    return None if k is None else (i, k)


def _newly_aged(before: list[Entry], after: list[Entry], upto: int) -> list[int]:
    """Indexes ``< upto`` that ``after`` ages and ``before`` did not (the aging rule's own
    decision: no stub is built, the request pipeline builds them once)."""
    was = set(stale_attachments(before))
    end = min(upto, len(before), len(after))
    return [i for i in stale_attachments(after) if i < end and i not in was]


def _last_assistant(history: Sequence[Entry], end: int) -> int:
    return next((i for i in range(end - 1, -1, -1) if history[i].get("role") == "assistant"), -1)


def plan_cache(history: list[Entry], user_entry: Entry) -> CachePlan:
    """The cache plan of the request for ``history`` + ``user_entry`` (module docstring)."""
    n = len(history)
    # next turn: every unseen image of this request is labelled; one more user entry ages
    keep_cuts = [c for i, e in enumerate([*history, user_entry]) if (c := _label_cut(i, e))]
    keep_cuts += [(i, 0) for i in _newly_aged(history, [*history, user_entry], n)]
    keep = min(keep_cuts) if keep_cuts else None
    # an attachment arriving next turn makes the newest one cold (if it is otherwise cold)
    turn = [*history, user_entry]
    maybe_cuts = [(i, 0) for i in _newly_aged(turn, [*turn, _NEXT_ATTACHMENT], n)]
    maybe = min(maybe_cuts) if maybe_cuts else None
    if maybe is not None and keep is not None and maybe >= keep:
        maybe = None

    a1 = _last_assistant(history, n)
    if a1 < 0:
        return CachePlan(keep=keep, maybe=maybe)
    # the previous request was built from history[:j] and carried history[j] as its question
    j = a1 - 1 if a1 > 0 and history[a1 - 1].get("role") == "user" else a1
    a2 = _last_assistant(history, j)
    read_cuts: list[Cut] = [(a1, 0)]  # nothing rewritten: the end of the previous request
    for i in range(a2 + 1, a1):
        entry = history[i]
        if entry.get("imagesSeen") and entry.get("role") == "user":
            k = _first_image(entry)
            if k is not None:
                read_cuts.append((i, k))
    read_cuts += [(i, 0) for i in _newly_aged(history[:j], history, j)]
    return CachePlan(keep=keep, read=min(read_cuts), maybe=maybe)


def _before(cuts: Sequence[Cut], cut: Cut) -> int:
    """Index of the last block before ``cut`` (-1 when none)."""
    pos = -1
    for k, c in enumerate(cuts):
        if c >= cut:
            break
        pos = k
    return pos


def place_breakpoints(
    cuts: Sequence[Cut],
    plan: CachePlan,
    *,
    empty: Sequence[bool] = (),
    has_system: bool = False,
    tokens: Sequence[int] = (),
    system_tokens: int = 0,
    rule: CacheRule | None = None,
    ttl: str | None = None,
) -> Marks:
    """At most ``rule.breakpoints`` (default four) marks over the blocks whose cuts are
    ``cuts`` (module docstring).

    ``cuts[k]`` is block ``k``'s ``(entry, part)`` origin, ascending; ``empty[k]`` says block
    ``k`` is an empty text block (never marked); ``tokens[k]`` its token estimate. With a
    ``rule`` and ``tokens``, a mark whose prefix is shorter than the rule's minimum (no cache
    entry can exist there) is the first to go when there are more marks than the rule allows.
    Under OpenAI's breakpoints (``rule.marks == "prompt_cache_breakpoint"``) the provider's
    implicit breakpoint covers the end and no look-back needs a mark where the previous
    request wrote, so only the planned rewrites are marked. A one-off request
    (``plan.end``) marks the end of what later requests repeat instead of its own end, under
    either kind of mark.
    """

    def usable(pos: int) -> int:
        while pos >= 0 and pos < len(empty) and empty[pos]:
            pos -= 1
        return pos

    limit = rule.breakpoints if rule is not None else MAX_BREAKPOINTS
    openai = rule is not None and rule.marks == "prompt_cache_breakpoint"
    # in order of usefulness (module docstring); -1 stands for the system prompt
    last = usable(len(cuts) - 1 if plan.end is None else _before(cuts, plan.end))
    wanted: list[int] = [last] if not openai or plan.end is not None else []
    for cut in (plan.keep, plan.maybe) if openai else (plan.keep, plan.read, plan.maybe):
        if cut is not None:
            wanted.append(usable(_before(cuts, cut)))
    ranked = [p for p in wanted if p >= 0] + ([-1] if has_system and not openai else [])
    if rule is not None and tokens:
        prefix = [system_tokens]
        for t in tokens:
            prefix.append(prefix[-1] + t)
        big = [p for p in ranked if prefix[p + 1] >= rule.min_tokens]
        ranked = big + [p for p in ranked if p not in big]
    marks: list[int] = []
    for pos in ranked:
        if pos not in marks and len(marks) < limit:
            marks.append(pos)
    return Marks(system=-1 in marks, blocks=tuple(sorted(p for p in marks if p >= 0)), ttl=ttl)


def question_times(history: Sequence[Entry], user_entry: Entry | None = None) -> list[int]:
    """The times (``createdAt``, epoch ms) of the user's questions in ``history`` and of
    ``user_entry`` (attachments are not questions)."""
    entries = [*history, user_entry] if user_entry is not None else list(history)
    return [
        e["createdAt"]
        for e in entries
        if isinstance(e, dict)
        and e.get("role") == "user"
        and not is_attachment(e)
        and isinstance(e.get("createdAt"), int)
    ]


def choose_ttl(
    history: Sequence[Entry],
    rule: CacheRule | None,
    user_entry: Entry | None = None,
    earlier: Sequence[int] = (),
) -> str | None:
    """The cache lifetime the conversation's pace pays for (``None``: the default one).

    Under a rule with two lifetimes (Anthropic: 5 minutes at 1.25×, 1 hour at 2×), a turn that
    comes after the short one ran out rewrites the whole conversation, while the long one
    costs 0.75× more only on what each turn adds. So the long lifetime is chosen when the
    median of the last :data:`PACE_TURNS` gaps between the user's questions (``createdAt``)
    is longer than the short lifetime and within the long one.

    The gaps count the question being sent (``user_entry``, stamped with the time of the send:
    the pause that just ended is the freshest sign of the pace) and, before the conversation's
    own, the ``earlier`` questions of the profile (:data:`PACE_KEY`, kept across sessions), so
    the first turn of a new conversation already asks for the lifetime the user's pace pays
    for instead of writing an entry that runs out before the second question.

    With no gap known at all (a profile's first question) the default lifetime stays: the
    hour pays on a first write only when the chance of a pause longer than the short lifetime
    exceeds ``(w_long − w_short) / w_long`` (0.375 at 1.25× and 2×), which nothing before the
    first answer tells, and asking for it costs every fast first conversation the difference
    on its whole first prefix (docs/benchmarks.md, ``python -m bench.bill_choices``)."""
    if rule is None or len(rule.writes) < 2:
        return None
    own = question_times(history, user_entry)
    start = own[0] if own else None
    times = sorted({*(t for t in earlier if start is None or t < start), *own})
    gaps = sorted([b - a for a, b in zip(times, times[1:], strict=False)][-PACE_TURNS:])
    if not gaps:
        return None
    median = gaps[len(gaps) // 2]
    short, long = sorted(rule.writes, key=rule.seconds)[:2]
    if rule.seconds(short) * 1000 < median <= rule.seconds(long) * 1000:
        return long
    return None


def remember_question(times: object, at: int) -> list[int]:
    """The profile's pace record (:data:`PACE_KEY`) after a question sent at ``at``: the last
    ``PACE_TURNS + 1`` question times, ascending (a bad record starts over)."""
    kept = [t for t in times if isinstance(t, int) and t < at] if isinstance(times, list) else []
    return [*sorted(kept), at][-(PACE_TURNS + 1) :]


def cache_mark(ttl: str | None) -> dict[str, str]:
    """An Anthropic ``cache_control`` value (the default lifetime sends no ``ttl``)."""
    return {**EPHEMERAL, "ttl": ttl} if ttl else dict(EPHEMERAL)


def prompt_cache_key(profile: str, session_id: str) -> str:
    """The OpenAI ``prompt_cache_key`` of one conversation: profile + active session only."""
    return "ck-" + hex_of(digest_json(["prompt_cache_key", profile, session_id or ""]))[:32]


def accepts_prompt_cache_key(base_url: str, option: bool | None = None) -> bool:
    """Whether to send ``prompt_cache_key``: the card's explicit option, else api.openai.com."""
    if option is not None:
        return bool(option)
    host = (urlsplit((base_url or "").strip()).hostname or "").lower()
    return host == "api.openai.com"
