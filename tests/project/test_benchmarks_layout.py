"""The layout of ``benchmarks/``: ``report.py`` a leaf, every case in the registry, no
import circle between its modules, no private name borrowed from another module.

Read from the source (``ast``), like tests/project/test_import_graph.py: an import inside
a function counts, one under ``if TYPE_CHECKING:`` does not.
"""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _imports(tree: ast.AST) -> list[ast.ImportFrom]:
    found: list[ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.ImportFrom) and child.level == 1:
                found.append(child)
            visit(child)

    visit(tree)
    return found


def graph() -> dict[str, list[tuple[str, list[str]]]]:
    """module -> [(imported sibling module, the names it takes from it)]."""
    edges: dict[str, list[tuple[str, list[str]]]] = {}
    for path in sorted(BENCHMARKS.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        out = edges.setdefault(path.stem, [])
        for node in _imports(tree):
            if node.module:
                out.append((node.module, [alias.name for alias in node.names]))
            else:
                out += [(alias.name, []) for alias in node.names]
    return edges


def test_the_graph_is_read():
    edges = graph()
    assert ("report", ["Row", "table"]) in edges["__main__"]
    assert "registry" in edges


def test_report_is_a_leaf():
    assert graph()["report"] == []


def test_no_module_imports_the_entry_point():
    assert [m for m, out in graph().items() if any(to == "__main__" for to, _ in out)] == []


def test_no_private_name_crosses_a_module():
    borrowed = [
        f"{module} takes {name} from {to}"
        for module, out in graph().items()
        for to, names in out
        for name in names
        if name.startswith("_")
    ]
    assert borrowed == []


def test_no_import_circle():
    read = graph()
    edges = {m: {to for to, _ in out if to in read} for m, out in read.items()}
    done: set[str] = set()
    circles: list[list[str]] = []

    def walk(module: str, path: list[str]) -> None:
        for to in sorted(edges.get(module, ())):
            if to in path:
                circles.append([*path[path.index(to) :], to])
            elif to not in done:
                walk(to, [*path, to])
        done.add(module)

    for module in edges:
        if module not in done:
            walk(module, [module])
    assert circles == []


def test_every_case_is_registered_once_and_named_in_the_docs():
    import benchmarks.registry as registry

    text = (BENCHMARKS.parent / "BENCHMARKS.md").read_text()
    assert list(registry.CASES)
    missing = [name for name in registry.CASES if f"`{name}`" not in text]
    assert missing == []
