"""``chatkeep mcp [--http] [--port 8766] [--token T] [--allow-write]`` — the store for the user's
agents over the Model Context Protocol (SPEC §17).

Serves one profile (``--profile``, as every command) on standard input and output, the way
Claude Desktop, Claude Code and Cursor start a local server; with ``--http``, on
``http://127.0.0.1:PORT/mcp`` behind a token (new at every launch unless ``--token`` or
``CHATKEEP_MCP_TOKEN`` gives one), printed with the URL. The tools only read, unless
``--allow-write`` adds ``save_session``. Needs the extra ``chatkeep[mcp]``.
"""

from __future__ import annotations

import click

from .. import ChatkeepError
from .context import pass_ctx


@click.command("mcp")
@click.option(
    "--http",
    "use_http",
    is_flag=True,
    help="Serve Streamable HTTP on 127.0.0.1 with a token instead of stdio.",
)
@click.option(
    "--port",
    default=8766,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port of --http (0 = any free port).",
)
@click.option(
    "--token",
    envvar="CHATKEEP_MCP_TOKEN",
    metavar="TOKEN",
    help="Token of --http (16+ characters) instead of a new random one [env CHATKEEP_MCP_TOKEN].",
)
@click.option(
    "--allow-write",
    is_flag=True,
    help="Add the save_session tool (no tool deletes or rewrites anything).",
)
@pass_ctx
def mcp_cmd(ctx, use_http: bool, port: int, token: str | None, allow_write: bool) -> None:
    """Serve the store to MCP clients (stdio, or --http on 127.0.0.1); read-only by default."""
    try:
        from ..mcp_server import HttpServer, create_server, serve_stdio  # lazy: the mcp SDK
    except ImportError as exc:
        raise ChatkeepError(
            f"the MCP server needs the mcp package ({exc.name or exc})",
            hint="pip install 'chatkeep[mcp]'",
        ) from None
    store = ctx.store()
    server = create_server(store, allow_write=allow_write)
    if not use_http:
        serve_stdio(server)
        return
    http = HttpServer(server, port=port, token=token)
    click.echo(f"chatkeep mcp: {http.endpoint}  (profile {store.profile})")
    click.echo(f"token: {http.token}")
    click.echo(f"URL with the token: {http.url}")
    click.echo("Press Ctrl-C to stop.")
    try:
        http.serve()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        pass
