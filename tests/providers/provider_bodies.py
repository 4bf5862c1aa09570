"""Minimal request bodies in each API style, as the wire builders produce them."""

from __future__ import annotations

from typing import Any


def body_for(style: str, text: str = "Hello?", system: str = "Be brief.") -> dict[str, Any]:
    if style == "chat":
        return {
            "model": "test-model",
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": text},
            ],
        }
    if style == "responses":
        return {
            "model": "test-model",
            "instructions": system,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": text}]}],
        }
    return {
        "model": "test-model",
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }


STYLES = ("chat", "responses", "anthropic")
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "anthropic": "/v1/messages"}
