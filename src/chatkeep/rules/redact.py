"""URL redaction for prompt-facing text (SPEC §8.2).

- user-info (``user:pass@``) is removed from the authority;
- the values of query parameters named like secrets (case-insensitive, ``_``/``-`` variants,
  e.g. ``token``, ``api-key``, ``X-Amz-Signature``, ``client_secret``) become ``…``;
- a fragment holding such parameters (``#access_token=…``) is dropped;
- everything else is kept byte for byte, and an unchanged URL is returned as the same string.

:func:`redact_text` applies :func:`redact_url` to every ``http(s)://…`` run in a text. Only what
is sent to a model is redacted; stored metadata keeps the URL as given.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

__all__ = ["REDACTED", "is_secret_param", "redact_text", "redact_url"]

REDACTED = "…"

_SECRET_NAMES = frozenset(
    """
    password passwd pwd pass secret token access_token id_token refresh_token auth_token
    oauth_token bearer api_key apikey key access_key secret_key private_key auth authorization
    session session_id sessionid sessid phpsessid jsessionid sid sig signature credential
    credentials client_secret jwt ticket code_verifier otp security_token
    """.split()
)
#: A name whose last ``_``-separated word is one of these is a secret too (``csrf_token``, …).
_SECRET_SUFFIXES = frozenset(
    "token secret password passwd signature credential credentials apikey".split()
)
_SQUASHED = {n.replace("_", "") for n in _SECRET_NAMES}

_URL_RUN_RE = re.compile(r"""https?://[^\s<>"'`\\{}|^\[\]]+""", re.I)
_TRAILING_PUNCT = ".,;:!?'\")]}*"
_AUTHORITY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:)?//([^/?#]*)")


def is_secret_param(name: str) -> bool:
    """Whether a query/fragment parameter name looks like it carries a credential."""
    norm = unquote_plus(name).strip().lower().replace("-", "_")
    if not norm:
        return False
    if norm in _SECRET_NAMES or norm.replace("_", "") in _SQUASHED:
        return True
    return norm.rsplit("_", 1)[-1] in _SECRET_SUFFIXES and "_" in norm


def _redact_params(query: str) -> tuple[str, bool]:
    """The query with secret values replaced, and whether it held any secret parameter."""
    out = []
    found = False
    for piece in query.split("&"):
        name, eq, value = piece.partition("=")
        if eq and is_secret_param(name):
            found = True
            if value:
                piece = f"{name}={REDACTED}"
        out.append(piece)
    return "&".join(out), found


def redact_url(url: str) -> str:
    """``url`` without credentials (see module doc); the same object when nothing changes."""
    if not isinstance(url, str) or not url:
        return url
    rest = url
    changed = False
    m = _AUTHORITY_RE.match(rest)
    if m and "@" in m.group(2):
        host = m.group(2).rsplit("@", 1)[1]
        rest = (m.group(1) or "") + "//" + host + rest[m.end() :]
        changed = True
    head, hash_, fragment = rest.partition("#")
    base, qmark, query = head.partition("?")
    if qmark:
        new_query, _ = _redact_params(query)
        if new_query != query:
            changed = True
            query = new_query
    if hash_ and "=" in fragment:
        _, secret_in_fragment = _redact_params(fragment.lstrip("!/?"))
        if secret_in_fragment:
            hash_, fragment = "", ""
            changed = True
    if not changed:
        return url
    return base + qmark + query + hash_ + fragment


def _trim(run: str) -> tuple[str, str]:
    """Split trailing sentence punctuation off a URL run (balanced ``)`` stays)."""
    end = len(run)
    while end > 0 and run[end - 1] in _TRAILING_PUNCT:
        if run[end - 1] == ")" and run[:end].count("(") >= run[:end].count(")"):
            break
        end -= 1
    return run[:end], run[end:]


def redact_text(text: str) -> str:
    """``text`` with every ``http(s)://`` URL redacted; the same object when nothing changes."""
    if not isinstance(text, str) or "://" not in text:
        return text
    changed = False

    def fix(m: re.Match[str]) -> str:
        nonlocal changed
        url, tail = _trim(m.group(0))
        new = redact_url(url)
        if new is url:
            return m.group(0)
        changed = True
        return new + tail

    out = _URL_RUN_RE.sub(fix, text)
    return out if changed else text
