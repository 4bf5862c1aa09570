"""The floor plan of the package, enforced: imports go down the floors, never in a circle.

Floors, from the ground up (``ARCHITECTURE``): ground (entries, data URLs, digests, errors,
constants) → rules and storage (siblings: neither imports the other) → engine (conversation,
attach, interop, providers) → facade (``chatkeep``, ``chatkeep.store``) → faces (cli, panel,
integrations). Every import counts: module level, function-local and ``TYPE_CHECKING`` ones.
Faces import only the facade (``chatkeep`` itself), their own package, and — for
``chatkeep serve`` and ``chatkeep mcp`` — the panel's server entry point and the MCP server
package; the MCP server stands behind the panel's guard (one rule for the token).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PKG = SRC / "chatkeep"

FLOORS: dict[str, int] = {
    "ground": 0,
    "rules": 1,
    "storage": 1,
    "engine": 2,
    "facade": 3,
    "faces": 4,
}

#: Top-level modules and packages of chatkeep, by floor.
PLACES: dict[str, str] = {
    "chatkeep._version": "ground",
    "chatkeep.constants": "ground",
    "chatkeep.errors": "ground",
    "chatkeep.entries": "ground",
    "chatkeep.dataurl": "ground",
    "chatkeep.digest": "ground",
    "chatkeep.limits": "ground",
    "chatkeep.rules": "rules",
    "chatkeep.storage": "storage",
    "chatkeep.conversation": "engine",
    "chatkeep.attach": "engine",
    "chatkeep.interop": "engine",
    "chatkeep.providers": "engine",
    "chatkeep": "facade",
    "chatkeep.store": "facade",
    "chatkeep.cli": "faces",
    "chatkeep.panel": "faces",
    "chatkeep.integrations": "faces",
    "chatkeep.mcp_server": "faces",
    # `python -m chatkeep`: the command line run as a module
    "chatkeep.__main__": "faces",
}
FACES = (
    "chatkeep.cli",
    "chatkeep.panel",
    "chatkeep.integrations",
    "chatkeep.mcp_server",
    "chatkeep.__main__",
)
#: Face → non-facade modules it may import besides its own package.
FACE_ENTRY_POINTS = {
    "chatkeep.cli": {"chatkeep.panel.server", "chatkeep.mcp_server"},
    # `chatkeep mcp --http` stands behind the panel's guard: one rule for the token
    "chatkeep.mcp_server": {"chatkeep.panel.security"},
    "chatkeep.__main__": {"chatkeep.cli.main"},
}
HEAVY = {
    "PIL",
    "anthropic",
    "httpx",
    "httpx2",
    "jinja2",
    "markdown_it",
    "openai",
    "platformdirs",
    "psycopg",
    "pygments",
    "pypdf",
    "rich",
    "starlette",
    "trafilatura",
    "uvicorn",
    "lxml",
    "agents",
    "langchain_core",
    "mcp",
    "mcp_types",
    "pydantic_ai",
    "google",
}
#: Each framework of SPEC §15 and the one module that may import it.
FRAMEWORKS = {
    "agents": "chatkeep.integrations.agents",
    "langchain_core": "chatkeep.integrations.langchain",
    "pydantic_ai": "chatkeep.integrations.pydantic_ai",
    "google": "chatkeep.integrations.adk",
}


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


MODULES = all_modules()


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def resolve(importer: str, node: ast.ImportFrom | ast.Import) -> Iterator[tuple[str, int]]:
    """The chatkeep modules an import statement loads (``from pkg import sub`` → ``pkg.sub``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == "chatkeep" or alias.name.startswith("chatkeep."):
                yield alias.name, node.lineno
        return
    if node.level:
        base = importer.split(".")
        if not is_package(importer):
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not (target == "chatkeep" or target.startswith("chatkeep.")):
        return
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        yield (sub if sub in MODULES else target), node.lineno


def imports_of(name: str) -> list[tuple[str, int]]:
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found += [(t, line) for t, line in resolve(name, node) if t in MODULES and t != name]
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def place(name: str) -> str:
    best = ""
    for prefix in PLACES:
        if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    assert best, f"{name} has no floor: add it to PLACES"
    return PLACES[best]


def test_every_module_has_a_floor() -> None:
    """Each module of the package sits on one named floor."""
    assert {name: place(name) for name in MODULES}


def test_no_import_goes_up_a_floor() -> None:
    """No module imports a module of a higher floor (function-local and TYPE_CHECKING too)."""
    bad = [
        f"{src}:{line} imports {dst} ({place(src)} → {place(dst)})"
        for src, deps in GRAPH.items()
        for dst, line in deps
        if FLOORS[place(dst)] > FLOORS[place(src)]
    ]
    assert bad == []


def test_rules_and_storage_are_siblings() -> None:
    """The request rules and the storage layer never import each other."""
    bad = [
        f"{src}:{line} imports {dst}"
        for src, deps in GRAPH.items()
        for dst, line in deps
        if {place(src), place(dst)} == {"rules", "storage"}
    ]
    assert bad == []


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w, _ in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles() -> None:
    """No circle of imports anywhere in the package, hidden ones included."""
    assert _cycles() == []


def test_faces_use_only_the_public_facade() -> None:
    """CLI, panel and integrations import only ``chatkeep`` itself and their own package."""
    bad = []
    for src, deps in GRAPH.items():
        face = next((f for f in FACES if src == f or src.startswith(f + ".")), None)
        if face is None:
            continue
        allowed = FACE_ENTRY_POINTS.get(face, set())
        for dst, line in deps:
            own = dst == face or dst.startswith(face + ".")
            if not own and dst != "chatkeep" and dst not in allowed:
                bad.append(f"{src}:{line} imports {dst}")
    assert bad == []


def _comments(path: Path) -> dict[int, str]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return {t.start[0]: t.string for t in tokens if t.type == tokenize.COMMENT}


def test_lazy_imports_of_heavy_libraries_say_why() -> None:
    """A heavy library imported inside a function carries a one-line comment (same line or the
    line above), so lazy imports read as deliberate start-up choices, not hidden cycles."""
    bad = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        comments = _comments(path)
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Import):
                    roots = {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    roots = {(node.module or "").split(".")[0]}
                else:
                    continue
                if roots & HEAVY and not (node.lineno in comments or node.lineno - 1 in comments):
                    bad.append(f"{name}:{node.lineno} imports {sorted(roots & HEAVY)}")
    assert bad == []


def test_each_framework_is_imported_only_by_its_module() -> None:
    """A framework package (SPEC §15) is imported by its own integration module only (or the
    modules of that integration's package), so it is needed only by those who use it."""
    bad = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            bad += [
                f"{name} imports {r}"
                for r in roots & set(FRAMEWORKS)
                if name != FRAMEWORKS[r] and not name.startswith(FRAMEWORKS[r] + ".")
            ]
    assert bad == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module: str) -> None:
    """Every module stays small enough to hold in one's head (at most 450 lines)."""
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= 450, f"{module} has {lines} lines"


def test_the_checker_sees_a_violation() -> None:
    """The import resolver finds an upward import when one exists (the test can fail)."""
    node = ast.parse("from ..store import Store").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert [t for t, _ in resolve("chatkeep.storage.history", node)] == ["chatkeep.store"]
    assert FLOORS[place("chatkeep.store")] > FLOORS[place("chatkeep.storage.history")]
