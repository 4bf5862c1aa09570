"""The screenshots of ``docs/panel.md``, taken from a real ``chatkeep serve``.

Fills a store in a temporary directory (a saved session, an archived start, a page attachment,
an image, a reply with code, a table, reasoning and tool calls, an edited turn with its earlier
version), starts ``chatkeep serve --port 0 --no-open`` on it as a separate process, with an
OpenAI-style provider served on loopback (the tests' ``support/provider_server.py``, which
speaks the real wire protocol), and takes PNGs with Playwright and Debian's Chromium
(``/usr/bin/chromium``, or ``CHATKEEP_CHROMIUM``) into ``docs/img/``:

* ``panel-main-{400,1280}-{light,dark}.png`` — the conversation, with a chip and the earlier
  messages opened;
* the sessions drawer, Settings, the request preview, the image lightbox and an earlier
  version, each at one width and theme;
* ``panel-failed-400-light.png`` — a send the provider refused: the error on the question with
  Retry; ``panel-cutoff-400-dark.png`` — a reply whose stream was cut short.

Run: ``python scripts/panel_screenshots.py`` (from the repository, with the development
dependencies and Playwright installed). Old ``panel-*.png`` files are replaced.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import chatkeep

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
CHROMIUM = os.environ.get("CHATKEEP_CHROMIUM", "/usr/bin/chromium")
sys.path.insert(0, str(ROOT / "tests"))

from support.panel_views import open_view  # noqa: E402
from support.provider_server import Close, ProviderServer, Text, unauthorized  # noqa: E402

# (view, width, theme): the pictures taken
SHOTS = [
    ("main", 400, "light"),
    ("main", 400, "dark"),
    ("main", 1280, "light"),
    ("main", 1280, "dark"),
    ("drawer", 400, "light"),
    ("drawer", 1280, "dark"),
    ("settings", 400, "dark"),
    ("settings", 1280, "light"),
    ("preview", 400, "light"),
    ("preview", 1280, "dark"),
    ("lightbox", 400, "light"),
    ("lightbox", 1280, "dark"),
    ("versions", 400, "light"),
    ("failed", 400, "light"),
    ("cutoff", 400, "dark"),
]


def _png(width: int, height: int) -> str:
    from PIL import Image, ImageDraw  # lazy: Pillow comes with chatkeep's image support

    img = Image.new("RGB", (width, height), (245, 247, 250))
    draw = ImageDraw.Draw(img)
    for i, (h, colour) in enumerate(
        [(120, (70, 110, 200)), (80, (90, 160, 120)), (45, (220, 140, 60))]
    ):
        x = 40 + i * 90
        draw.rectangle([x, height - 20 - h, x + 60, height - 20], fill=colour)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _page(body: str, title: str, url: str) -> dict[str, Any]:
    text = f"{chatkeep.PAGE_CONTEXT_PREFIX}\nURL: {url}\nTitle: {title}\nMode: auto\n---\n\n{body}"
    return {"role": "user", "content": text, "attachId": uuid.uuid4().hex}


def fill(store: Any, provider_url: str) -> None:
    """The conversation the pictures show."""
    store.local.set(
        {
            "providers": {
                "openai": {
                    "style": "chat",
                    "baseUrl": provider_url,
                    "model": "gpt-4o-mini",
                    "apiKey": "sk-loopback",
                    "prices": {"input": 0.15, "cachedRead": 0.075, "output": 0.6},
                }
            },
            "activeProvider": "openai",
            "maxHistoryEntries": 10,
        }
    )
    h = store.history
    h.append({"role": "user", "content": "What changed in the 2.0 release?"})
    h.append({"role": "assistant", "content": "Mostly speed: the notes list three changes."})
    h.append(_page("Release notes body. " * 40, "Release notes 2.0", "https://example.com/notes"))
    chart = _png(320, 180)
    h.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What does this chart show?"},
                {"type": "image_url", "image_url": {"url": chart}},
            ],
        }
    )
    h.append(
        {
            "role": "assistant",
            "content": "The chart compares **three** releases.\n\n```python\n"
            "def speedup(old, new):\n    return old / new  # higher is better\n```\n\n"
            "| release | p50 ms |\n|---|---|\n| 1.0 | 120 |\n| 2.0 | 45 |\n\n"
            "See [the notes](https://example.com/notes).",
            "provider": {"name": "openai", "model": "gpt-4o-mini"},
            "usage": {"input": 1850, "cachedRead": 1024, "cacheWrite": 0, "output": 96},
            "reasoning": "Compare the three bars, then read the table.",
            "toolCalls": [{"name": "read_chart", "arguments": '{"bars": 3}'}],
            "toolResult": [{"name": "read_chart", "content": "120, 80, 45"}],
        }
    )
    h.append({"role": "user", "content": "And the memory use?"})
    store.sessions.save("Release 2.0 review")
    h.append({"role": "assistant", "content": "It dropped by a third: $m_2 = \\frac{2}{3} m_1$."})
    h.append({"role": "user", "content": "Which change mattered most?"})
    h.append({"role": "assistant", "content": "The new index."})
    # asked again: the first answer is kept as an earlier version (‹ 2/2 ›)
    h.truncate_from(len(h.read()) - 2)
    h.append({"role": "user", "content": "Which change mattered most?"})
    h.append({"role": "assistant", "content": "The new index: searches read a tenth of the rows."})
    h.append(_page("Changelog body. " * 30, "Changelog", "https://example.com/changelog"))


def _serve(db: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "CHATKEEP_STORE": str(db)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatkeep", "serve", "--port", "0", "--no-open"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "?token=" in line:
            return proc, line[line.index("http") :].split()[0]
    raise SystemExit("chatkeep serve printed no URL")


def _open(browser: Any, url: str, width: int, theme: str) -> Any:
    context = browser.new_context(
        viewport={"width": width, "height": 820}, color_scheme=theme, device_scale_factor=1
    )
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    return page


def _show(page: Any, view: str, provider: ProviderServer) -> None:
    if view == "failed":
        provider.queue(unauthorized())
        page.fill("#message", "Draft the upgrade note.")
        page.press("#message", "Enter")
        page.wait_for_selector(".bubble.user.failed .bubble-error")
    elif view == "cutoff":
        words = ["The upgrade ", "keeps every ", "setting; the ", "index is "]
        provider.queue(Close(after_chunks=3, text=Text("".join(words), chunks=words)))
        page.fill("#message", "Draft the upgrade note.")
        page.press("#message", "Enter")
        page.wait_for_selector(".bubble.assistant.partial")
    else:
        open_view(page, view, draft="Summarise the changelog in three lines.")
    page.wait_for_timeout(300)  # the dialogs' and toasts' transitions end


def main() -> int:
    from playwright.sync_api import sync_playwright

    IMG.mkdir(parents=True, exist_ok=True)
    for old in IMG.glob("panel-*.png"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="chatkeep-shots-") as tmp, ProviderServer() as provider:
        provider.script(Text("Noted."))
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, args=["--headless", "--no-sandbox"]
            )
            for n, (view, width, theme) in enumerate(SHOTS):
                # a fresh store per picture: a send in one picture does not show in the next
                db = Path(tmp) / f"shot{n}.db"
                with chatkeep.open(str(db)) as store:
                    fill(store, provider.url())
                proc, url = _serve(db)
                try:
                    page = _open(browser, url, width, theme)
                    _show(page, view, provider)
                    out = IMG / f"panel-{view}-{width}-{theme}.png"
                    page.screenshot(path=str(out))
                    page.context.close()
                    print(f"{out.relative_to(ROOT)}  {out.stat().st_size / 1024:,.0f} KB")
                finally:
                    proc.terminate()
                    proc.wait(timeout=10)
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
