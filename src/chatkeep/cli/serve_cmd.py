"""``chatkeep serve [--host 127.0.0.1] [--port 8765] [--no-open]`` — the web panel (SPEC §11).

Binds (``--port 0`` = any free port), prints ``http://HOST:PORT/?token=…`` — the token is new at
every launch and every API call needs it — opens it in the browser unless ``--no-open``, and
serves until Ctrl-C. A host that is not loopback is allowed but warned about: anyone who can
reach it and learns the token can read the store.
"""

from __future__ import annotations

import threading
import webbrowser

import click

from .context import pass_ctx


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="0 = any free port.",
)
@click.option("--no-open", is_flag=True, help="Do not open the panel in a browser.")
@pass_ctx
def serve_cmd(ctx, host: str, port: int, no_open: bool) -> None:
    """Serve the web panel on localhost (prints the URL with its launch token)."""
    from ..panel.server import PanelServer, is_loopback  # lazy: Starlette & uvicorn

    server = PanelServer(ctx.store(), host=host, port=port)
    if not is_loopback(host):
        click.echo(
            f"warning: listening on {host}, not only on this machine; "
            "anyone with the URL below can read and change this store",
            err=True,
        )
    click.echo(f"chatkeep panel: {server.url}")
    click.echo("Press Ctrl-C to stop.")
    if not no_open:
        threading.Timer(0.5, webbrowser.open, args=(server.url,)).start()
    try:
        server.serve()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        pass
