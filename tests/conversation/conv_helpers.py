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


def untimed(value: Any) -> Any:
    """An entry (or a list of entries) without ``createdAt``, after checking that every one
    that carries it holds a time in epoch milliseconds (entries chatkeep appends carry it)."""
    if isinstance(value, list):
        return [untimed(e) for e in value]
    if isinstance(value, dict) and "createdAt" in value:
        stamp = value["createdAt"]
        assert type(stamp) is int and stamp > 1_600_000_000_000, stamp
        return {k: v for k, v in value.items() if k != "createdAt"}
    return value
