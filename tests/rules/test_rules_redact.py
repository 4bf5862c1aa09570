"""URL redaction for prompt-facing text (SPEC §8.2)."""

from __future__ import annotations

import pytest

from chatkeep.rules.redact import is_secret_param, redact_text, redact_url


def test_userinfo_removed():
    """`user:pass@` disappears from the authority."""
    assert redact_url("https://bob:hunter2@example.com/x") == "https://example.com/x"


@pytest.mark.parametrize(
    "name",
    [
        "token",
        "ACCESS_TOKEN",
        "id-token",
        "api_key",
        "apikey",
        "Api-Key",
        "password",
        "sig",
        "X-Amz-Signature",
        "client_secret",
        "session_id",
        "credentials",
        "jwt",
        "ticket",
        "auth",
    ],
)
def test_secret_params_values_replaced(name):
    """Secret-named parameter values become `…`, other parameters stay byte-identical."""
    url = f"https://e.com/p?a=1&{name}=S3CR3T&b=%20x"
    assert redact_url(url) == f"https://e.com/p?a=1&{name}=…&b=%20x"


def test_innocent_params_not_secret():
    """Ordinary names are not treated as secrets."""
    assert not any(is_secret_param(n) for n in ("q", "page", "id", "tokenizer", "sort", "lang"))


def test_unchanged_url_is_same_object():
    """A URL with nothing to redact is returned byte-identical (the same string)."""
    url = "https://e.com/a/b?q=hello%20world&page=2#section-3"
    assert redact_url(url) is url


def test_fragment_with_secret_dropped():
    """An OAuth-style fragment holding a token is dropped; a plain fragment stays."""
    assert redact_url("https://e.com/cb#access_token=abc&type=bearer") == "https://e.com/cb"
    assert redact_url("https://e.com/p?token=1#intro") == "https://e.com/p?token=…#intro"


def test_redact_text_every_url_run():
    """Every http(s) URL in a body is redacted; trailing punctuation stays outside."""
    text = "A (https://e.com/x?sig=abc). B: http://u:p@h.io/y, C https://ok.org/z."
    assert redact_text(text) == "A (https://e.com/x?sig=…). B: http://h.io/y, C https://ok.org/z."


def test_redact_text_unchanged_is_same_object():
    """Text whose URLs are clean is returned as the same object."""
    text = "see https://e.com/a?q=1 and ftp://x"
    assert redact_text(text) is text
