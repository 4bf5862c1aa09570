"""``chatkeep mcp``: the store's tools on an MCP server (the SDK's ``MCPServer``), over stdio or
Streamable HTTP on 127.0.0.1 behind a token (SPEC §17).

* :func:`create_server` registers the read-only tools of :mod:`.tools` (``save_session`` too
  when ``allow_write``), each with a description that states its bounds. A
  :class:`chatkeep.ChatkeepError` becomes a tool error carrying its message and hint.
* :func:`serve_stdio` runs it on standard input and output (what Claude Desktop, Claude Code and
  Cursor start); nothing else is written to standard output.
* :class:`HttpServer` binds 127.0.0.1 (``port=0``: any free port) and serves the Streamable HTTP
  endpoint ``/mcp`` behind the panel's guard (:class:`chatkeep.panel.security.PanelGuard`): one
  rule for the token (a new random one per launch unless given), the Host check and the Origin
  check of every local server chatkeep runs. The token goes in ``Authorization: Bearer …``,
  ``X-Chatkeep-Token`` or ``?token=``.

The SDK is imported here at module level: this module is loaded only by ``chatkeep mcp``.
"""

import base64
import socket
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import Field

import chatkeep

from ..panel.security import PanelGuard, new_token
from .tools import LIST_MAX, PAGE_MAX, RECENT_MAX, SEARCH_MAX, SNIPPET_CHARS, Tools
from .views import CALL_CHARS, ENTRY_CHARS, IMAGE_BYTES, IMAGES_PER_CALL, Result, dumps

__all__ = ["HOST", "DEFAULT_PORT", "HttpServer", "create_server", "serve_stdio"]

HOST = "127.0.0.1"
DEFAULT_PORT = 8766
MIN_TOKEN_CHARS = 16

_BOUNDS = (
    f"Bounded: at most {CALL_CHARS:,} characters of text per call"
    " (a page stops early and gives nextOffset to continue)"
)
_PAGE = (
    f"{_BOUNDS}; each entry's text at most {ENTRY_CHARS:,} characters (a longer one says "
    "`cut`; get_attachment reads all of it). Images appear as their labels ([label]) with "
    f"their size; images=true adds them as image blocks (at most {IMAGES_PER_CALL} per call, "
    f"each resized within {IMAGE_BYTES:,} bytes for the result)."
)
_SESSION = (
    "session: 'live' (the current conversation), 'archive' (turns the live window dropped and "
    "earlier versions of edited turns) or a saved/evicted session id (a unique prefix of 4+ "
    "characters works)."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

Offset = Annotated[
    int, Field(ge=0, description="Position to start from (nextOffset of the last page).")
]
Session = Annotated[str, Field(description="'live', 'archive', or a session id or prefix.")]
Images = Annotated[bool, Field(description="Return images as image content blocks.")]


def _result(result: Result) -> CallToolResult:
    content: list[Any] = [TextContent(type="text", text=dumps(result.payload))]
    for block in result.images:
        content.append(TextContent(type="text", text=block.caption))
        content.append(
            ImageContent(
                type="image", data=base64.b64encode(block.data).decode(), mime_type=block.mime
            )
        )
    return CallToolResult(content=content, structured_content=result.payload)


def _call(fn: Any, *args: Any, **kwargs: Any) -> CallToolResult:
    try:
        return _result(fn(*args, **kwargs))
    except chatkeep.ChatkeepError as exc:
        hint = f" (hint: {exc.hint})" if exc.hint else ""
        raise ToolError(f"{exc.message}{hint}") from None


def create_server(store: chatkeep.Store, *, allow_write: bool = False) -> MCPServer:
    """The MCP server over ``store``'s profile: the read-only tools, and ``save_session`` only
    when ``allow_write``."""
    tools = Tools(store)
    server: MCPServer = MCPServer(
        "chatkeep",
        title="chatkeep",
        version=chatkeep.__version__,
        instructions=(
            f"The user's conversation history kept by chatkeep (profile {store.profile!r}): "
            "search it, list saved sessions, read them page by page, see the live "
            "conversation's last turns, and read an attachment or an image in full."
            + ("" if allow_write else " Read-only: no tool changes the store.")
        ),
        log_level="WARNING",
    )

    def search(
        query: Annotated[str, Field(description="Words, a phrase, a substring, or a meaning.")],
        limit: Annotated[int, Field(ge=1, le=SEARCH_MAX, description="Hits per page.")] = 10,
        offset: Offset = 0,
        where: Annotated[
            list[Literal["live", "archive", "session", "evicted"]] | None,
            Field(description="Only these places (default: everywhere)."),
        ] = None,
        mode: Annotated[
            Literal["text", "semantic", "hybrid"],
            Field(description="text (exact words and substrings), semantic, or hybrid (both)."),
        ] = "hybrid",
    ) -> CallToolResult:
        return _call(tools.search, query, limit=limit, offset=offset, where=where, mode=mode)

    search.__doc__ = (
        "Find messages anywhere in the history — the live conversation, the archive, saved and "
        "evicted sessions, imports — by words or by meaning. Each hit: where, sessionId, "
        "sessionName, index (open it with read_session(session=sessionId or where, "
        "offset=index)), role, createdAt, snippet (matched spans marked), score. "
        f"At most {SEARCH_MAX} hits per call, snippets at most {SNIPPET_CHARS} characters; "
        f"{_BOUNDS}."
    )

    def list_sessions(
        query: Annotated[str, Field(description="Drawer search: names and text ('' = all).")] = "",
        limit: Annotated[int, Field(ge=1, le=LIST_MAX, description="Rows per page.")] = 20,
        offset: Offset = 0,
        evicted: Annotated[bool, Field(description="List the evicted sessions instead.")] = False,
    ) -> CallToolResult:
        return _call(tools.list_sessions, query, limit=limit, offset=offset, evicted=evicted)

    list_sessions.__doc__ = (
        "List saved sessions as the drawer shows them (pinned first, then newest): id, name, "
        "createdAt, pinned; query searches names and text like the drawer's search box. "
        f"At most {LIST_MAX} rows per call; {_BOUNDS}."
    )

    def read_session(
        session: Session,
        offset: Offset = 0,
        limit: Annotated[int, Field(ge=1, le=PAGE_MAX, description="Entries per page.")] = 20,
        images: Images = False,
    ) -> CallToolResult:
        return _call(tools.read_session, session, offset=offset, limit=limit, images=images)

    read_session.__doc__ = (
        "Read one session's entries in order, a page at a time, from offset (entry index). "
        f"{_SESSION} At most {PAGE_MAX} entries per page. {_PAGE}"
    )

    def recent(
        n: Annotated[int, Field(ge=1, le=RECENT_MAX, description="How many entries.")] = 10,
        images: Images = False,
    ) -> CallToolResult:
        return _call(tools.recent, n=n, images=images)

    recent.__doc__ = (
        "The last n entries of the live conversation (what the user is talking about now), "
        f"with their indexes. At most {RECENT_MAX}. {_PAGE}"
    )

    def get_attachment(
        session: Session,
        index: Annotated[int, Field(ge=0, description="The entry's index.")],
        image: Annotated[
            int | None, Field(ge=1, description="The k-th image of the entry (1-based).")
        ] = None,
        offset: Annotated[int, Field(ge=0, description="Character to start from.")] = 0,
    ) -> CallToolResult:
        return _call(tools.get_attachment, session, index, image=image, offset=offset)

    get_attachment.__doc__ = (
        "An attachment's (or any entry's) full text, as the user gave it (the original when a "
        "summary or a trim rewrote it), read in chunks from offset; or, with image=k, the k-th "
        f"image of the entry as an image block (resized within {IMAGE_BYTES:,} bytes for the "
        f"result; the stored image is whole). {_SESSION} {_BOUNDS}."
    )

    for fn in (search, list_sessions, read_session, recent, get_attachment):
        server.add_tool(fn, annotations=READ_ONLY, structured_output=False)

    if allow_write:

        def save_session(
            name: Annotated[str | None, Field(description="A name for the session.")] = None,
            new: Annotated[bool, Field(description="Save a copy as a new session.")] = False,
        ) -> CallToolResult:
            return _call(tools.save_session, name=name, new=new)

        save_session.__doc__ = (
            "Save the live conversation: into the loaded session when one is loaded (name "
            "renames it), else as a new session; new=true saves a copy as a new session. "
            "Deletes and overwrites nothing else. Returns the saved row."
        )
        server.add_tool(save_session, annotations=WRITES, structured_output=False)
    return server


def serve_stdio(server: MCPServer) -> None:
    """Serve on standard input and output until the client closes them."""
    server.run("stdio")


def check_token(token: str) -> str:
    """A token given by the user: at least :data:`MIN_TOKEN_CHARS` visible characters."""
    if len(token) < MIN_TOKEN_CHARS or not token.isprintable() or " " in token:
        raise chatkeep.InvalidValue(
            f"the token must be at least {MIN_TOKEN_CHARS} visible characters without spaces",
            hint="leave --token out for a new random token at every launch",
        )
    return token


HINTS = {
    "BadHost": "connect to http://127.0.0.1:PORT/mcp as printed by `chatkeep mcp --http`",
    "CrossOrigin": "this server answers MCP clients, not web pages",
    "TokenRequired": "send the token printed by `chatkeep mcp --http` as "
    "`Authorization: Bearer TOKEN` (or use the printed URL, which ends in ?token=…)",
    "BadToken": "the token changes at every `chatkeep mcp --http` unless --token is given; "
    "use the one it printed last",
}


class HttpServer:
    """One launch of the Streamable HTTP transport on 127.0.0.1 (see the module docstring)."""

    def __init__(self, server: MCPServer, *, port: int = DEFAULT_PORT, token: str | None = None):
        self.token = check_token(token) if token else new_token()
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((HOST, port))
        except OSError as exc:
            self.socket.close()
            raise chatkeep.ChatkeepError(
                f"cannot listen on {HOST}:{port}: {exc.strerror or exc}",
                hint="pick another port with --port (0 = any free port)",
            ) from None
        self.socket.listen(128)
        self.socket.setblocking(False)
        self.port = int(self.socket.getsockname()[1])
        app = server.streamable_http_app(host=HOST)
        self.app = PanelGuard(app, token=self.token, port=self.port, hints=HINTS)

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}/mcp"

    @property
    def url(self) -> str:
        """The endpoint with its token, for clients that can only be given a URL."""
        return f"{self.endpoint}?token={self.token}"

    def serve(self) -> None:
        """Serve until interrupted."""
        import uvicorn  # the ASGI server: only an HTTP launch needs it

        config = uvicorn.Config(
            self.app, log_level="warning", access_log=False, lifespan="on", ws="none"
        )
        try:
            uvicorn.Server(config).run(sockets=[self.socket])
        finally:
            self.socket.close()
