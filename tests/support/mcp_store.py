"""A store with something of everything for the MCP tests: a long saved session, an evicted one,
a live history long enough to have an archive, images with figure labels, a long attachment and
a summarized one whose original is kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import chatkeep
from factories import assistant, attachment, image_entry, png_data_url, user

LONG_TURNS = 150
LIVE_TURNS = 70  # the live window keeps 60: the first ones go to the archive
FIGURES = "Here are the charts.\n\n## Figures\n1. Revenue by quarter\n2. Churn by cohort"


@dataclass
class Filled:
    """What :func:`fill` stored, for the tests to compare against."""

    long_id: str
    evicted_id: str
    long_body: list[dict[str, Any]]
    live: list[dict[str, Any]]
    archive: list[dict[str, Any]]
    small_png: str
    wide_png: str
    noisy_png: str
    big_text: str
    original_text: str


def long_turn(i: int) -> dict[str, Any]:
    words = f"turn {i:03d} of the long talk about lighthouse keepers and tide tables. "
    text = (words * 14)[:900]
    return user(text) if i % 2 == 0 else assistant(text)


def fill(store: chatkeep.Store) -> Filled:
    long_body = [long_turn(i) for i in range(LONG_TURNS)]
    store.sessions.add_many(
        [
            (
                {"id": "long0000talk", "name": "Long talk", "createdAt": 1_700_000_200_000},
                long_body,
            ),
            (
                {"id": "old00000notes", "name": "Old notes", "createdAt": 1_600_000_000_000},
                [user("an old note about sourdough"), assistant("keep the starter warm")],
            ),
        ]
    )
    small = png_data_url(40, 30, (10, 120, 200))
    wide = png_data_url(2000, 1500, (250, 200, 10))
    noisy = png_data_url(700, 600, noise=True)
    big_text = "".join(f"line {n:05d} of a very long page about harbours\n" for n in range(700))
    original_text = "The full report. " * 400
    summarized = attachment("A short summary of the report.", title="Report")
    original = {
        **summarized,
        "content": summarized["content"].replace("A short summary of the report.", original_text),
    }
    store.keep_original(original)
    for i in range(LIVE_TURNS - 6):
        store.history.append(user(f"live question {i}") if i % 2 == 0 else assistant(f"answer {i}"))
    store.history.append(image_entry(FIGURES, small, wide, imagesSeen=True))
    store.history.append(image_entry("a noisy photo", noisy))
    store.history.append(attachment(big_text, title="Harbours"))
    store.history.append({**summarized, "summarized": True})
    store.history.append(user("what did the report say?"))
    store.history.append(assistant("It said the harbours are busy."))
    store.local.set("maxSessions", 2)
    store.sessions.save("Live talk")  # three in the drawer: the oldest leaves it
    evicted = store.sessions.evicted()
    assert [r["id"] for r in evicted] == ["old00000notes"]
    return Filled(
        long_id="long0000talk",
        evicted_id="old00000notes",
        long_body=long_body,
        live=store.history.read(),
        archive=store.history.archived(),
        small_png=small,
        wide_png=wide,
        noisy_png=noisy,
        big_text=big_text,
        original_text=original_text,
    )
