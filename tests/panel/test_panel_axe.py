"""Accessibility audit with axe-core (fetched from npm by the set-up, never vendored): no serious
or critical violation on the main view, the drawer, Settings, the preview, the image lightbox and
an earlier version, in light and dark, at 360, 400 and 1280 px (the main view with the archive
opened, a live chip with its Undo and the Retry box of an unanswered question)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from panel_helpers import open_panel

from factories import assistant, attachment, image_entry, png_data_url, user
from support.panel_views import open_view

AXE_VERSION = "4"
CACHE = Path(os.environ.get("CHATKEEP_TEST_CACHE", Path.home() / ".cache" / "chatkeep-tests"))
VIEWS = ["main", "drawer", "settings", "preview", "lightbox", "versions"]


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe.min.js from the npm registry, installed once into a cache outside the repository."""
    script = CACHE / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            if os.environ.get("CI") == "true":
                pytest.fail("the axe-core audit needs npm on CI (Node 20)")
            pytest.skip("npm is not installed: cannot fetch axe-core")
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(CACHE),
                "--no-audit",
                "--no-fund",
                "--silent",
                f"axe-core@{AXE_VERSION}",
            ],
            check=True,
            timeout=300,
        )
    return script.read_text(encoding="utf-8")


def _fill(store) -> None:
    store.local.set(
        {
            "providers": {
                "openai": {
                    "style": "chat",
                    "baseUrl": "https://api.openai.com/v1",
                    "model": "gpt-4o-mini",
                    "prices": {
                        "input": 0.15,
                        "cachedRead": 0.075,
                        "cacheWrite": 0.15,
                        "output": 0.6,
                    },
                }
            },
            "activeProvider": "openai",
            "maxHistoryEntries": 10,
        }
    )
    store.history.append(user("an early question"))
    store.history.append(assistant("an early answer"))
    store.history.append(
        attachment("Release notes body", title="Release notes 2.0", url="https://example.com/notes")
    )
    store.history.append(image_entry("What does this chart show?", png_data_url(320, 180)))
    reply = assistant(
        "The chart compares **three** releases.\n\n```python\ndef speedup(old, new):\n"
        "    return old / new  # higher is better\n```\n\n> Numbers from the release notes.\n\n"
        "| release | p50 ms |\n|---|---|\n| 1.0 | 120 |\n| 2.0 | 45 |\n\n"
        "See [the notes](https://example.com/notes)."
    )
    reply["provider"] = {"name": "openai", "model": "gpt-4o-mini"}
    reply["usage"] = {"input": 1850, "cachedRead": 1024, "cacheWrite": 0, "output": 96}
    reply["reasoning"] = "Compare the three bars, then read the table."
    reply["toolCalls"] = [{"name": "read_chart", "arguments": '{"bars": 3}'}]
    reply["toolResult"] = [{"name": "read_chart", "content": "120, 80, 45"}]
    store.history.append(reply)
    store.history.append(user("And the memory use?"))
    store.sessions.save("Release 2.0 review")
    store.history.append(assistant("Memory use dropped by a third: $m_2 = \\frac{2}{3} m_1$."))
    # a live chip, with its Undo button (before the edited turn: an entry added after it would
    # move the window, and a moved turn shows no earlier version)
    store.history.append(
        attachment("Changelog body", title="Changelog", url="https://example.com/changelog")
    )
    for i in range(2):
        store.history.append(user(f"follow-up {i}"))
        store.history.append(assistant(f"answer {i}"))
    store.history.append(user("a question the provider never answered"))  # the Retry box
    # follow-up 1 asked again: its first version is an earlier version (‹ 2/2 ›, SPEC §3.5)
    store.history.truncate_from(len(store.history.read()) - 3)
    store.history.append(user("follow-up 1"))
    store.history.append(assistant("answer 1, said again"))
    store.history.append(user("a question the provider never answered"))


def _show(page, view: str) -> None:
    if view == "main":
        assert page.locator("#messages .chip .chip-undo").count() == 1  # a live chip
    open_view(page, view)
    if view == "main":
        page.evaluate(
            "() => document.querySelector('.code-block').scrollIntoView({block: 'start'})"
        )


def _audit(page, axe_source: str) -> list[str]:
    page.evaluate(axe_source)
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations'],"
        " rules: {'label-content-name-mismatch': {enabled: true}}})).violations"
    )
    return [
        f"{v['id']} ({v['impact']}): " + "; ".join(n["target"][0] for n in v["nodes"][:5])
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [360, 400, 1280])
def test_axe_finds_no_serious_violation(make_page, live_server, pstore, axe_source, width, theme):
    """Main view, drawer, Settings, preview, lightbox and earlier versions pass axe-core's
    serious and critical rules."""
    _fill(pstore)
    problems = {}
    for view in VIEWS:
        page = make_page(width=width, theme=theme, height=800)
        open_panel(page, live_server)
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        _show(page, view)
        found = _audit(page, axe_source)
        if found:
            problems[view] = found
        page.context.close()
    assert problems == {}
