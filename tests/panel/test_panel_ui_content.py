"""What replies and chips show in the browser: highlighted code blocks with a language label and
a copy button, styled quotes, copy of a reply without its hidden reasoning, each turn's usage and
cost and the session's totals (SPEC §6.4), the model picker, attachment chips with file names and
upload progress."""

from __future__ import annotations

import pytest
from panel_helpers import open_panel, use_provider

from factories import assistant, user

PRICES = {"input": 2.0, "cachedRead": 0.5, "cacheWrite": 2.5, "output": 8.0}


def _reply(text, usage=None, provider="loop"):
    entry = assistant(text)
    entry["provider"] = {"name": provider, "model": "loop-model"}
    if usage is not None:
        entry["usage"] = usage
    return entry


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_code_block_has_label_highlighting_copy_and_keyboard_scroll(
    make_page, live_server, pstore, theme
):
    """A fenced block shows its language, Pygments token colours, a working Copy, and can be
    focused to scroll it from the keyboard."""
    code = "def twice(x):\n    return x * 2  # doubled\n"
    pstore.history.append(user("show code"))
    pstore.history.append(_reply(f"Here:\n\n```python\n{code}```\n\n> quoted line"))
    page = make_page(width=400, theme=theme)
    open_panel(page, live_server)
    block = page.locator(".code-block")
    assert block.locator(".code-lang").inner_text() == "Python"
    assert block.locator("pre").get_attribute("tabindex") == "0"
    keyword = block.locator("span.k").first
    assert keyword.inner_text() == "def"
    colours = keyword.evaluate(
        "n => [getComputedStyle(n).color, getComputedStyle(n.closest('pre')).color]"
    )
    assert colours[0] != colours[1]
    block.locator(".code-copy").click()
    page.wait_for_selector(".code-copy:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == code
    quote = page.locator(".md blockquote")
    assert quote.evaluate("n => getComputedStyle(n).borderLeftStyle") == "solid"


def test_copy_reply_leaves_out_hidden_reasoning(page, live_server, pstore):
    """Copy on a reply with a <think> block copies only the answer."""
    pstore.history.append(user("q"))
    pstore.history.append(_reply("<think>private chain of thought</think>\n\nThe answer is 4."))
    open_panel(page, live_server)
    page.click(".bubble.assistant .copy")
    page.wait_for_selector(".bubble.assistant .copy:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == "The answer is 4."


@pytest.mark.parametrize("width", [400, 1400])
def test_usage_and_cost_under_each_reply_and_session_totals(make_page, live_server, pstore, width):
    """A reply with usage shows its tokens (and cost when the card has prices); the status line
    sums the session; a reply without usage shows none."""
    pstore.local.set(
        {
            "providers": {
                "loop": {
                    "style": "chat",
                    "baseUrl": "http://127.0.0.1:9/v1",
                    "model": "loop-model",
                    "prices": PRICES,
                }
            },
            "activeProvider": "loop",
        }
    )
    usage1 = {"input": 1_000_000, "cachedRead": 400_000, "cacheWrite": 100_000, "output": 10_000}
    usage2 = {"input": 2000, "cachedRead": 0, "cacheWrite": 0, "output": 500}
    pstore.history.append(user("one"))
    pstore.history.append(_reply("first", usage1))
    pstore.history.append(user("two"))
    pstore.history.append(_reply("second", usage2))
    pstore.history.append(user("three"))
    pstore.history.append(_reply("third, no usage reported"))
    page = make_page(width=width)
    open_panel(page, live_server)
    lines = page.locator(".bubble.assistant .usage")
    assert lines.count() == 2
    # 500k plain × $2 + 400k cached × $0.5 + 100k written × $2.5 + 10k out × $8, per million
    assert lines.nth(0).inner_text() == (
        "1,000,000 in · 400,000 cached (40%) · 100,000 cache write · 10,000 out · $1.530"
    )
    assert lines.nth(1).inner_text() == "2,000 in · 500 out · $0.0080"
    assert page.locator("#session-usage").inner_text() == (
        "Session: 1,002,000 in · 400,000 cached (40%) · 100,000 cache write · 10,500 out · $1.538"
    )


def test_usage_without_prices_shows_tokens_only(page, live_server, pstore):
    """Without prices on the card no cost is guessed."""
    pstore.history.append(user("one"))
    pstore.history.append(
        _reply("first", {"input": 10, "cachedRead": 0, "cacheWrite": 0, "output": 3}, "gone")
    )
    open_panel(page, live_server)
    assert page.locator(".usage").inner_text() == "10 in · 3 out"
    assert "$" not in page.locator("#session-usage").inner_text()


def test_model_picker_lists_cards_and_switches_the_active_one(
    page, live_server, pstore, provider_server
):
    """The header's picker names each card's model; choosing one makes that card active."""
    use_provider(pstore, provider_server)
    providers = dict(pstore.get_all()["providers"])
    providers["other"] = {**providers["loop"], "model": "other-model"}
    pstore.local.set({"providers": providers, "activeModel": "loop-big"})
    open_panel(page, live_server)
    options = page.locator("#model-picker option").all_inner_texts()
    assert options == ["loop · loop-big", "other · other-model"]
    assert page.input_value("#model-picker") == "loop"
    page.select_option("#model-picker", "other")
    page.wait_for_selector(".notice:has-text('other-model')")
    settings = pstore.get_all()
    assert settings["activeProvider"] == "other" and settings["activeModel"] == ""


def test_file_chip_shows_the_name_and_big_uploads_show_progress(
    page, live_server, pstore, tmp_path
):
    """A big file shows an upload bar while it goes up; its chip shows the file name, never the
    server's temporary path."""
    big = tmp_path / "field-notes.txt"
    big.write_text("observation line\n" * 60_000, encoding="utf-8")  # ~1 MB
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 400_000},
    )
    open_panel(page, live_server)
    page.set_input_files("#attach-file", str(big))
    page.wait_for_selector("#uploads progress")
    page.wait_for_selector(".chip")
    assert page.locator("#uploads .upload").count() == 0
    chip = page.locator(".chip").inner_text()
    assert "field-notes.txt" in chip
    assert "chatkeep-upload" not in chip and "/tmp" not in chip


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_reasoning_and_tool_calls_are_folded_beside_the_reply_as_plain_text(
    make_page, live_server, pstore, theme
):
    """A reply's reasoning and its tool calls with their results (SPEC §14) show folded above
    the answer, as text (markup in them stays text), and are not part of the answer."""
    thought = "Let me think <img src=x onerror=alert(1)> about **this**"
    reply = _reply("The answer is 4.")
    reply["reasoning"] = thought
    reply["toolCalls"] = [{"name": "calc", "arguments": '{"expr": "2+2"}', "id": "c1"}]
    reply["toolResult"] = [{"name": "calc", "content": "4", "id": "c1"}]
    pstore.history.append(user("what is 2+2?"))
    pstore.history.append(reply)
    page = make_page(width=400, theme=theme)
    open_panel(page, live_server)
    bubble = page.locator(".bubble.assistant")
    folded = bubble.locator("details.reasoning")
    assert folded.get_attribute("open") is None
    assert folded.locator("summary").inner_text() == "Reasoning"
    assert folded.locator(".aside-text").text_content() == thought
    assert bubble.locator("img").count() == 0
    assert bubble.locator(".md").inner_text().strip() == "The answer is 4."
    assert not folded.locator(".aside-text").is_visible()
    folded.locator("summary").click()
    assert folded.locator(".aside-text").is_visible()
    tools = bubble.locator("details.tools")
    assert tools.locator("summary").inner_text() == "Tool calls (1)"
    assert tools.locator(".aside-text").all_text_contents() == [
        'calc({"expr": "2+2"})',
        "calc → 4",
    ]
