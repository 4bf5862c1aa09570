"""Math in replies (SPEC §11): KaTeX, vendored in the package (no CDN), typesets ``$…$``,
``$$…$$``, ``\\(…\\)`` and ``\\[…\\]`` in replies, never inside code; the strict CSP holds (any CSP
report or console error fails the page fixture). Real Chromium, real server."""

from __future__ import annotations

from panel_helpers import open_panel, use_provider

from factories import assistant, user
from support.provider_server import Text

REPLY = (
    "Euler: $e^{i\\pi} + 1 = 0$, and inline \\(a_1 * b_2\\).\n\n"
    "$$\n\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}\n$$\n\n"
    "A display \\[\\sum_{k=1}^n k = \\frac{n(n+1)}{2}\\]\n\n"
    "It costs $5 and $10. Code stays code: `$x$`\n\n"
    "```python\nprice = '$5'  # $not math$\n```\n\n"
    "Unsafe: $\\href{javascript:alert(1)}{click}$\n\n"
    "Broken: $\\frac{1}{2$"
)


def test_math_is_typeset_with_the_vendored_katex(page, live_server, pstore):
    """Every delimiter form becomes KaTeX output (with its MathML), prices and code are left as
    they are, \\href is not made a link, and KaTeX came from the panel's own /static."""
    pstore.history.append(user("show me some math"))
    pstore.history.append(assistant(REPLY))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    open_panel(page, live_server)
    reply = page.locator("#messages .bubble.assistant .md")
    page.wait_for_function(
        "() => document.querySelectorAll('#messages span.math[data-typeset]').length === 6"
    )
    assert reply.locator("span.math .katex").count() == 5
    assert reply.locator("span.math.display .katex-display").count() == 2
    assert reply.locator("span.math math").count() == 5  # MathML for screen readers
    broken = reply.locator("span.math.math-error")  # its TeX, marked, no style attribute
    assert broken.count() == 1 and "\\frac{1}{2" in broken.inner_text()
    text = reply.inner_text()
    assert "It costs $5 and $10." in text
    assert reply.locator("code", has_text="$x$").count() == 1
    assert "$not math$" in reply.locator(".code-block pre").inner_text()
    assert reply.locator("span.math a").count() == 0
    katex = [u for u in requests if "katex" in u]
    assert katex and all(u.startswith(live_server.url.split("/?")[0]) for u in katex)
    assert any(u.endswith("/static/katex/katex.min.js") for u in katex)
    assert any(u.endswith(".woff2") for u in katex)
    width = page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    assert width


def test_a_page_without_math_loads_no_katex(page, live_server, pstore, provider_server):
    """KaTeX is fetched only when a reply holds math; a streamed reply's math is typeset too."""
    use_provider(pstore, provider_server)
    pstore.history.append(user("hi"))
    pstore.history.append(assistant("plain text, no formulas"))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    open_panel(page, live_server)
    assert not [u for u in requests if "katex" in u]
    provider_server.queue(Text("The area is $\\pi r^2$."))
    page.fill("#message", "area of a circle?")
    page.press("#message", "Enter")
    page.wait_for_selector("#messages .bubble.assistant:not(.streaming) span.math .katex")
    assert [u for u in requests if u.endswith("/static/katex/katex.min.js")]
