"""Talking to a real ``chatkeep mcp`` with the MCP SDK's own client, as an agent does.

``stdio_server(spec, *args)`` gives the parameters that start the installed console script on a
test's store (``--store``/``--profile`` from a :class:`conftest.StoreSpec`); ``HttpLaunch``
starts ``python -m chatkeep … mcp --http --port 0`` and reads the endpoint and token it prints.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, ImageContent

from clirun import chatkeep_exe

READ_TOOLS = {"search", "list_sessions", "read_session", "recent", "get_attachment"}


def server_env() -> dict[str, str]:
    """What the server process needs beyond the SDK's default environment: the source tree
    under test (PYTHONPATH) and no CHATKEEP_* from the outside."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}


def stdio_server(spec: Any, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=chatkeep_exe(),
        args=["--store", spec.url, "--profile", spec.profile, "mcp", *args],
        env=server_env(),
    )


def payload(result: CallToolResult) -> dict[str, Any]:
    """The JSON payload of a successful call (its first text block)."""
    first = result.content[0]
    text = getattr(first, "text", "")
    assert not result.is_error, text
    value = json.loads(text)
    assert result.structured_content == value
    return value


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result
    return str(getattr(result.content[0], "text", ""))


def image_blocks(result: CallToolResult) -> list[ImageContent]:
    return [c for c in result.content if isinstance(c, ImageContent)]


class HttpLaunch:
    """``chatkeep mcp --http --port 0`` in a subprocess (stopped by :meth:`stop`)."""

    def __init__(self, spec: Any, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chatkeep", "--store", spec.url, "--profile", spec.profile]
            + ["mcp", "--http", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.endpoint = self.token = self.url = ""
        deadline = time.monotonic() + 60
        assert self.proc.stdout is not None
        while not self.url:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"chatkeep mcp --http ended: {err}")
            if line.startswith("chatkeep mcp: "):
                self.endpoint = line.split()[2]
            elif line.startswith("token: "):
                self.token = line.split()[1]
            elif line.startswith("URL with the token: "):
                self.url = line.split()[-1]
            assert time.monotonic() < deadline, "no URL printed"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
