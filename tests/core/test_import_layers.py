"""The core is layered: no import cycles, no upward imports, every late import explained.

Parses every module of ``core/src/opweave`` with :mod:`ast` (nothing is imported), builds
the graph of module-level imports between ``opweave`` modules (statements that run when the
module is imported: top-level ones, and those under ``if``/``try`` at top level, but not
under ``if TYPE_CHECKING:``), and checks it against the floors of :mod:`opweave._layers`.
Importing ``a.b.c`` also runs the ``__init__`` of ``a.b``, so an import counts as an edge
to each package on the way that is not already a parent of the importing module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from opweave._layers import FLOORS, floor_of

SRC = Path(__file__).resolve().parents[2] / "core" / "src"
PACKAGE = SRC / "opweave"


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the opweave module imported
    line: int
    late: bool  # inside a function (runs on call, not on import)


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _known(name: str) -> str | None:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = module.split(".") if is_package else module.split(".")[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join([*parts, *([node.module] if node.module else [])])
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            names.append(sub if sub in MODULES else base)
    result = []
    for name in names:
        if name == "opweave" or name.startswith("opweave."):
            known = _known(name)
            if known is not None and known != module:
                result.append(known)
    return result


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(stmts: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for stmt in stmts:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            yield stmt
        elif isinstance(stmt, ast.If):
            if not _is_type_checking(stmt.test):
                yield from _module_level(stmt.body)
                yield from _module_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                yield from _module_level(block)
            for handler in stmt.handlers:
                yield from _module_level(handler.body)


def _collect() -> tuple[list[Import], dict[str, list[str]]]:
    imports: list[Import] = []
    sources: dict[str, list[str]] = {}
    for module, (path, is_package) in MODULES.items():
        text = path.read_text(encoding="utf-8")
        sources[module] = text.splitlines()
        tree = ast.parse(text, filename=str(path))
        top = {id(node) for node in _module_level(tree.body)}
        typing_only = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and _is_type_checking(block.test)
            for node in ast.walk(block)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in typing_only:
                for target in _targets(module, is_package, node):
                    imports.append(Import(module, target, node.lineno, id(node) not in top))
    return imports, sources


IMPORTS, SOURCES = _collect()


def _edges() -> dict[str, set[str]]:
    """Module-level import edges, with the packages an import initialises on the way."""
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in IMPORTS:
        if imp.late:
            continue
        parts = imp.target.split(".")
        for i in range(2, len(parts) + 1):
            step = ".".join(parts[:i])
            if step != imp.module and not imp.module.startswith(step + "."):
                edges[imp.module].add(step)
    return edges


def _find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_every_module_has_a_floor() -> None:
    unknown = sorted(m for m in MODULES if m != "opweave" and m.split(".")[1] not in FLOORS)
    assert not unknown, f"add these to opweave._layers.FLOORS: {unknown}"


def test_no_module_level_import_cycle() -> None:
    cycle = _find_cycle(_edges())
    assert cycle is None, "module-level import cycle: " + " -> ".join(cycle or [])


def test_no_module_level_import_of_a_higher_floor() -> None:
    upward = [
        f"{imp.module} (floor {floor_of(imp.module)}) line {imp.line} imports {imp.target} "
        f"(floor {floor_of(imp.target)})"
        for imp in IMPORTS
        if not imp.late and floor_of(imp.target) > floor_of(imp.module)
    ]
    assert not upward, "imports from a higher floor at module level:\n" + "\n".join(upward)


def _explained(module: str, line: int) -> bool:
    """A comment on the import's line, or in the block of imports and comments above it."""
    lines = SOURCES[module]
    if "#" in lines[line - 1]:
        return True
    i = line - 2
    while i >= 0:
        text = lines[i].strip()
        if text.startswith("#"):
            return True
        if not text.startswith(("from ", "import ")):
            return False
        i -= 1
    return False


def test_every_late_import_says_why() -> None:
    late = sorted({(imp.module, imp.line) for imp in IMPORTS if imp.late})
    unexplained = [f"{m} line {line}" for m, line in late if not _explained(m, line)]
    assert not unexplained, (
        "in-function imports of opweave modules need a comment on the same line or the line "
        "above saying why they cannot be at module level (e.g. '# late: graph is below "
        "tensor'); prefer moving the code to the right floor:\n" + "\n".join(unexplained)
    )


def test_late_imports_are_few() -> None:
    # The count at the time the layers were drawn; lower it when you remove one.
    late = {(imp.module, imp.line) for imp in IMPORTS if imp.late}
    assert len(late) <= LATE_IMPORT_BUDGET, (
        f"{len(late)} in-function imports of opweave modules (budget {LATE_IMPORT_BUDGET}): "
        "import at module level from your own or a lower floor instead"
    )


LATE_IMPORT_BUDGET = 53
