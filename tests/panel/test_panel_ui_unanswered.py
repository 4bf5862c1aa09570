"""A failed question left behind by a different one (SPEC §3.5, §11): the browser shows it as not
answered and left out, and the provider never receives it again. Real Chromium, real server."""

from __future__ import annotations

import json

from panel_helpers import open_panel, use_provider

from support.provider_server import Text, unauthorized


def test_a_different_question_leaves_the_failed_one_marked_and_unsent(
    page, live_server, pstore, provider_server
):
    """Fail a question, type another one instead of Retry: the first bubble says it was not
    answered and left out, the new one is answered, and later requests never carry the first."""
    use_provider(pstore, provider_server)
    provider_server.queue(unauthorized(), Text("answer to the second"), Text("answer to the third"))
    open_panel(page, live_server)
    page.fill("#message", "the failed question")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.user.failed")
    page.fill("#message", "a different question")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('answer to the second')")
    left = page.locator(".bubble.user.left-out")
    left.wait_for()
    assert "the failed question" in left.inner_text()
    assert "left out" in left.locator(".left-out-note").inner_text()
    assert page.locator(".bubble-error").count() == 0
    page.fill("#message", "a third one")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('answer to the third')")
    assert page.locator(".bubble.user").count() == 3
    for recorded in provider_server.requests[1:]:
        assert "the failed question" not in json.dumps(recorded.body)
    stored = pstore.history.read()
    assert [(e["content"], e.get("unanswered")) for e in stored if e["role"] == "user"] == [
        ("the failed question", True),
        ("a different question", None),
        ("a third one", None),
    ]
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator(".bubble.user.left-out").count() == 1
