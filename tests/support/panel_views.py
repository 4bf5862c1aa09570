"""Opening each view of the panel in a Playwright page, as a user does (the axe audit and the
screenshot script both walk them)."""

from __future__ import annotations

from typing import Any


def open_view(page: Any, view: str, draft: str = "draft question") -> None:
    """Open ``view`` on a panel page already showing a conversation: ``main`` (earlier
    entries loaded), ``drawer``, ``settings``, ``preview`` (of ``draft``), ``lightbox`` (the
    first image of a user bubble) or ``versions`` (the first turn with an earlier version)."""
    if view == "main":
        page.click("#load-earlier")
        page.wait_for_selector("#earlier-list .bubble")
    elif view == "drawer":
        page.click("#open-drawer")
        page.wait_for_selector(".session")
    elif view == "settings":
        page.click("#open-settings")
        page.wait_for_selector("#settings-dialog[open] .provider-card")
    elif view == "preview":
        page.fill("#message", draft)
        page.click("#open-preview")
        page.wait_for_selector("#preview-dialog[open] .preview-stats")
    elif view == "lightbox":
        if page.locator(".bubble-images a").count() == 0:
            page.click("#load-earlier")
        page.locator(".bubble-images a").first.click()
        page.wait_for_selector("#lightbox[open]")
        page.wait_for_function("() => document.getElementById('lightbox-image').complete")
    elif view == "versions":
        page.locator(".versions .version-prev").first.click()
        page.wait_for_selector("#versions-dialog[open] #versions-body .bubble")
    else:
        raise ValueError(f"no such view: {view!r}")
