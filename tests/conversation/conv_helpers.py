"""Helpers shared by the conversation tests."""

from __future__ import annotations

from typing import Any

from support.provider_server import ProviderServer


class Sleeps:
    """Records the retry delays the engine asks for (the HTTP stays real, the wait is skipped)."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def use_provider(
    store: Any, server: ProviderServer, style: str = "chat", name: str = "loop", **extra: Any
) -> None:
    """Store a provider card pointing at ``server`` and make it the active one."""
    providers = store.local.get("providers") or {}
    providers[name] = {
        "style": style,
        "baseUrl": server.url("/v1"),
        "model": f"{style}-model",
        "apiKey": "sk-test-key",
        **extra,
    }
    store.local.set({"providers": providers, "activeProvider": name})
