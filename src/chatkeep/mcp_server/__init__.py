"""``chatkeep mcp``: the store, for the user's agents, over the Model Context Protocol (SPEC §17).

Public API::

    create_server(store, *, allow_write=False) -> mcp.server.mcpserver.MCPServer
    serve_stdio(server)                         # stdio, until the client closes it
    HttpServer(server, *, port=8766, token=None).url / .serve()   # Streamable HTTP, 127.0.0.1

The tools (:mod:`.tools`) read one profile through the public ``chatkeep`` API; their views and
bounds are in :mod:`.views`. Importing this package loads the ``mcp`` SDK (the extra
``chatkeep[mcp]``); nothing else in chatkeep imports it.
"""

from __future__ import annotations

from .server import HttpServer, create_server, serve_stdio

__all__ = ["HttpServer", "create_server", "serve_stdio"]
