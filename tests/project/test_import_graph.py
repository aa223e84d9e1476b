"""The import graph of ``chronica/``: no circle, and no module importing one on a
higher floor (issue 25).

Read from the source (``ast``), so every import that runs counts: at the top of a
module and in a function (a lazy import is still a dependency); one under ``if
TYPE_CHECKING:`` runs only for the type checker and does not count. Importing
``a.b.c`` also runs ``a/b/__init__.py``, so a module depends on the packages above
what it names (``chronica`` itself aside: every module is under it).

The floors, lowest first; a module may import its own floor and the ones below:

0. values: ``values``, ``errors``, ``validation``, ``windows``, ``tokens``,
   ``states``, ``signals``: plain Python, what everything shares.
1. interfaces: ``interfaces``, ``conf`` (settings build the store a protocol
   describes), ``models`` (the tables), the package ``chronica`` (its public names).
2. stores: ``stores``, ``storeconformance`` (the cases a store passes).
3. ``follow``: following a chronicum, the loop and its wake-ups, on a store.
4. services: ``services``, the one door to the rules.
5. edges: ``api``, ``admin``, ``management``, ``integrations``, ``owners`` (users and
   owner IDs, for the admin and the commands), and Django's wiring: ``apps``,
   ``checks``, ``routers``, ``migrations``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import chronica

ROOT = Path(chronica.__file__).parent

FLOORS: dict[str, int] = {
    "chronica.values": 0,
    "chronica.errors": 0,
    "chronica.validation": 0,
    "chronica.windows": 0,
    "chronica.tokens": 0,
    "chronica.states": 0,
    "chronica.signals": 0,
    "chronica": 1,
    "chronica.interfaces": 1,
    "chronica.conf": 1,
    "chronica.models": 1,
    "chronica.stores": 2,
    "chronica.storeconformance": 2,
    "chronica.follow": 3,
    "chronica.services": 4,
    "chronica.api": 5,
    "chronica.admin": 5,
    "chronica.management": 5,
    "chronica.owners": 5,
    "chronica.integrations": 5,
    "chronica.apps": 5,
    "chronica.checks": 5,
    "chronica.routers": 5,
    "chronica.migrations": 5,
    "chronica.tasks": 5,
}

ALLOWED: dict[tuple[str, str], str] = {
    # None today: the follow <-> stores circle went with issue 25 item 3 (the listener
    # under chronica/stores/listener.py). An entry says why an edge is let through.
}
"""Edges the test lets through, each with why; every entry must still be an edge."""


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = ["chronica", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _named(module: str, path: Path, node: ast.Import | ast.ImportFrom, known) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        parts = package.split(".")
        base = parts[: len(parts) - node.level + 1]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    # ``from package import module`` names the module; ``from module import name``
    # names the module.
    return [
        f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target
        for alias in node.names
    ]


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree`` but those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = {}
    for module, path in known.items():
        found: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            for target in _named(module, path, node, known):
                if target != "chronica" and not target.startswith("chronica."):
                    continue
                while target not in known:
                    target = target.rpartition(".")[0]
                # Importing a.b.c runs a.b and a first.
                parts = target.split(".")
                found.update(".".join(parts[:n]) for n in range(2, len(parts) + 1))
        found.discard(module)
        # A module's own packages run before it: no edge of its own.
        found -= {module.rsplit(".", n)[0] for n in range(1, module.count("."))}
        edges[module] = found
    return edges


def floor(module: str) -> int:
    name = module
    while name not in FLOORS:
        name = name.rpartition(".")[0]
    return FLOORS[name]


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def allowed_graph() -> dict[str, set[str]]:
    return {
        module: {t for t in targets if (module, t) not in ALLOWED}
        for module, targets in graph().items()
    }


def test_every_module_is_on_a_floor():
    assert all(floor(module) >= 0 for module in modules())


def test_the_graph_is_read():
    edges = graph()
    assert "chronica.values" in edges["chronica.validation.acta"]
    # ``from .identifiers import ...`` in a package: a module beside it.
    assert "chronica.validation.identifiers" in edges["chronica.validation"]
    assert "chronica.services" in edges["chronica.api.views"]
    # A relative import of a module from its package.
    assert "chronica.services.base" in edges["chronica.services.reading"]


def test_no_import_circle():
    assert circles(allowed_graph()) == []


def part(module: str) -> str:
    """The part of chronica a module belongs to: ``chronica.stores.db.base`` is of
    ``chronica.stores``."""
    return ".".join(module.split(".")[:2])


def test_no_circle_between_the_parts():
    """``follow.py`` and ``stores/`` import each other, module by module without a
    circle, but as parts they are one: each needs the other to be understood."""
    edges: dict[str, set[str]] = {}
    for module, targets in allowed_graph().items():
        edges.setdefault(part(module), set()).update(
            part(t) for t in targets if part(t) != part(module)
        )
    assert circles(edges) == []


def test_no_module_imports_one_on_a_higher_floor():
    upward = sorted(
        f"{module} ({floor(module)}) imports {target} ({floor(target)})"
        for module, targets in allowed_graph().items()
        for target in targets
        if floor(target) > floor(module)
    )
    assert upward == []


def test_each_allowed_edge_is_still_there():
    """An entry whose edge is gone is taken out, so the list only shrinks."""
    edges = graph()
    assert [edge for edge in ALLOWED if edge[1] not in edges.get(edge[0], set())] == []


def test_a_circle_is_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The one store name an integration may import: PydanticAI's conversation store writes
# its records and the acta in one transaction, so it requires the Django store (by its
# public class) and says so when another is configured.
STORE_CLASS = {"chronica.stores", "chronica.stores.db"}


def test_the_integrations_reach_the_data_only_through_the_services():
    """An integration calls ``chronica.services``: no model of chronica's, no store
    (its own app's tables, PydanticAI's, are its own)."""
    reaching = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        if module.startswith("chronica.integrations")
        for target in targets
        if target.startswith(("chronica.models", "chronica.stores")) and target not in STORE_CLASS
    )
    assert reaching == []


# What an integration may import of chronica: the public names (``chronica``, the
# services, the signals, the store class it may require) and its own modules. The state
# values are imported from ``chronica.values`` until ``chronica`` exports them.
INTEGRATIONS_MAY_IMPORT = {
    "chronica",
    "chronica.services",
    "chronica.signals",
    "chronica.values",
    "chronica.stores.db",
}


def test_integrations_import_only_public_names():
    """STYLE.md item 13: an integration adapts its framework to chronica's public API,
    and calls only the framework's public API: no module or name of either with a
    leading underscore, and nothing of chronica below ``services`` but the public
    value types and the store class."""
    known = modules()
    wrong = []
    for module, path in known.items():
        if not module.startswith("chronica.integrations."):
            continue
        own = ".".join(module.split(".")[:3])
        for node in _imports(ast.parse(path.read_text(), str(path))):
            for target in _named(module, path, node, known):
                if target == own or target.startswith(own + ".") or target == "__future__":
                    continue
                names = [alias.name for alias in node.names]
                if any(piece.startswith("_") for piece in target.split(".")) or any(
                    name.startswith("_") for name in names
                ):
                    wrong.append(f"{module} imports a private name: {target} {names}")
                elif target.startswith("chronica") and target not in INTEGRATIONS_MAY_IMPORT:
                    wrong.append(f"{module} imports {target}")
    assert wrong == []


# The packages the integrations adapt: an integration uses their public API only.
FRAMEWORKS = ("google.adk", "google.genai", "pydantic_ai", "agents")


def _private(dotted: str) -> bool:
    """Whether a dotted name has a piece with a leading underscore (``__name__`` and the
    other dunders are public)."""
    return any(
        piece.startswith("_") and not (piece.startswith("__") and piece.endswith("__"))
        for piece in dotted.split(".")
    )


def _watched(dotted: str, own: str) -> bool:
    """A framework's name, or chronica's outside the integration itself."""
    if dotted == own or dotted.startswith(own + "."):
        return False
    return any(
        dotted == root or dotted.startswith(root + ".") for root in (*FRAMEWORKS, "chronica")
    )


def _bound(module: str, path: Path, tree: ast.AST) -> list[tuple[str, str, str, int]]:
    """Each import's local name, the dotted name it stands for, what it imports and its
    line, type-checking ones too: ``import a.b`` binds ``a`` for ``a`` (importing
    ``a.b``), ``import a.b as c`` and ``from a import b as c`` bind ``c`` for ``a.b``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.partition(".")[0]
                stands_for = alias.name if alias.asname else local
                found.append((local, stands_for, alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                dotted = f"{source}.{alias.name}"
                found.append((alias.asname or alias.name, dotted, dotted, node.lineno))
    return found


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; ``None`` for anything but names and attributes."""
    pieces = []
    while isinstance(node, ast.Attribute):
        pieces.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(pieces)]


def private_uses(module: str, path: Path) -> list[str]:
    """The private names of a framework, or of chronica outside the integration, that a
    module of an integration imports or reaches: imported (under ``TYPE_CHECKING`` too,
    which ``test_integrations_import_only_public_names`` leaves out), reached as an
    attribute of an imported name (``sessions._util.f``), by a constant name in
    ``getattr``/``hasattr``/``setattr``/``delattr``, or imported by a constant name
    (``importlib.import_module``, ``__import__``). Attributes of the framework's objects
    (``session._events``) are not seen: only names."""
    own = ".".join(module.split(".")[:3])
    tree = ast.parse(path.read_text(), str(path))
    imports = _bound(module, path, tree)
    found = [
        (line, f"{module}:{line} imports {imported}")
        for _, _, imported, line in imports
        if _watched(imported, own) and _private(imported)
    ]
    bound = {local: stands_for for local, stands_for, _, _ in imports}

    def reach(pieces: list[str] | None, line: int) -> None:
        if pieces is None or pieces[0] not in bound:
            return
        dotted = ".".join([bound[pieces[0]], *pieces[1:]])
        if _watched(dotted, own) and _private(".".join(pieces[1:])):
            found.append((line, f"{module}:{line} reaches {dotted}"))

    # Only a whole chain (``a._b.c``), not each attribute in it (``a._b``) again.
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            reach(_dotted(node), node.lineno)
        elif isinstance(node, ast.Call) and node.args:
            function = (_dotted(node.func) or [""])[-1]
            first = node.args[0]
            if function in ("getattr", "hasattr", "setattr", "delattr") and len(node.args) > 1:
                name, target = node.args[1], _dotted(first)
                if (
                    target is not None
                    and isinstance(name, ast.Constant)
                    and isinstance(name.value, str)
                ):
                    reach([*target, name.value], node.lineno)
            elif (
                function in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and _watched(first.value, own)
                and _private(first.value)
            ):
                found.append((node.lineno, f"{module}:{node.lineno} imports {first.value}"))
    return [use for _, use in sorted(found)]


def test_integrations_reach_no_private_name_of_a_framework_or_of_chronica():
    """An integration adapts its framework's public API to chronica's: whatever way it
    names something of either (an import, an attribute of a module or a class it
    imported, ``getattr``), no piece of the name starts with an underscore."""
    wrong = [
        use
        for module, path in modules().items()
        if module.startswith("chronica.integrations.")
        for use in private_uses(module, path)
    ]
    assert wrong == []


def test_a_private_use_is_found(tmp_path):
    path = tmp_path / "example.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "from google.adk import sessions\n"
        "from agents.memory import session as agent_session\n"
        "from chronica import services\n"
        "from .records import _own\n"
        "if TYPE_CHECKING:\n"
        "    from pydantic_ai._run_context import RunContext\n"
        "sessions._session_util.decode_state({})\n"
        "agent_session.Session._items\n"
        "getattr(services, '_default')\n"
        "importlib.import_module('agents._config')\n"
        "services.get_acta.__name__, _own._meta\n"
    )
    module = "chronica.integrations.example.example"
    assert private_uses(module, path) == [
        f"{module}:8 imports pydantic_ai._run_context.RunContext",
        f"{module}:9 reaches google.adk.sessions._session_util.decode_state",
        f"{module}:10 reaches agents.memory.session.Session._items",
        f"{module}:11 reaches chronica.services._default",
        f"{module}:12 imports agents._config",
    ]
