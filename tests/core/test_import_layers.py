"""The core is layered: no import cycles, no upward imports, every late import explained.

Parses every module of ``core/src/opweave`` with :mod:`ast` (nothing is imported), builds
the graph of module-level imports between ``opweave`` modules (statements that run when the
module is imported: top-level ones, and those under ``if``/``try`` at top level, but not
under ``if TYPE_CHECKING:``), and checks it against the floors of :mod:`opweave._layers`.
Importing ``a.b.c`` also runs the ``__init__`` of ``a.b``, so an import counts as an edge
to each package on the way that is not already a parent of the importing module.

The last checks count every import, in-function ones included (they run as soon as the
function is called): the imports of a higher floor and the largest import circle, overall
and within one floor, are held to ratchets, and a failure lists the imports
(``file:line -> module``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from opweave._layers import FLOORS, MODULE_FLOORS, floor_of

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


def test_modules_off_their_package_floor_exist() -> None:
    missing = sorted(path for path in MODULE_FLOORS if f"opweave.{path}" not in MODULES)
    assert not missing, f"opweave._layers.MODULE_FLOORS lists modules that do not exist: {missing}"
    assert floor_of("opweave.gradient.verify") == 7
    assert floor_of("opweave.gradient.reverse") == floor_of("opweave.gradient") == 4


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


LATE_IMPORT_BUDGET = 9


# ---------------------------------------------------------------------------- every import
# The checks above read only what runs when a module is imported. The ones below count every
# import, in-function ones included: an in-function import runs as soon as the function is
# called, so a lower floor that imports a higher one there still depends on it at run time.


def _where(imp: Import) -> str:
    path = MODULES[imp.module][0].relative_to(SRC.parents[1])
    return f"{path.as_posix()}:{imp.line} -> {imp.target}"


def _all_edges() -> dict[str, dict[str, list[Import]]]:
    """Every import edge, in-function ones included, with the imports that make it."""
    edges: dict[str, dict[str, list[Import]]] = {m: {} for m in MODULES}
    for imp in IMPORTS:
        if imp.late and imp.module.startswith(imp.target + "."):
            # a function importing a package its module belongs to (``import opweave``)
            # uses what that package holds, not only its ``__init__`` run so far
            edges[imp.module].setdefault(imp.target, []).append(imp)
        parts = imp.target.split(".")
        for i in range(2, len(parts) + 1):
            step = ".".join(parts[:i])
            if step != imp.module and not imp.module.startswith(step + "."):
                edges[imp.module].setdefault(step, []).append(imp)
    return edges


def _circles(edges: dict[str, dict[str, list[Import]]]) -> list[list[str]]:
    """The strongly connected components of more than one module, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        # iterative Tarjan: (node, iterator over its successors)
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found, key=len, reverse=True)


def test_circle_finder_finds_a_cycle() -> None:
    a, b, c = "opweave.a", "opweave.b", "opweave.c"
    imp = Import(a, b, 1, late=True)
    edges = {a: {b: [imp]}, b: {c: [imp]}, c: {a: [imp]}, "opweave.d": {a: [imp]}}
    assert _circles(edges) == [[a, b, c]]
    assert _circles({a: {b: [imp]}, b: {}}) == []


def test_upward_imports_within_budget() -> None:
    # In-function imports count too. The direction to avoid one is to move the helper down,
    # define the method on the higher-floor subclass, pass the function down, or let the
    # higher module (or the top floor, opweave._wiring) give the name to the lower one when
    # it is imported (see opweave._layers), not to hide the import.
    upward = sorted({_where(imp) for imp in IMPORTS if floor_of(imp.target) > floor_of(imp.module)})
    assert len(upward) <= UPWARD_IMPORT_BUDGET, (
        f"{len(upward)} imports of a higher floor (budget {UPWARD_IMPORT_BUDGET}):\n"
        + "\n".join(upward)
    )


def _check_largest_circle(edges: dict[str, dict[str, list[Import]]], limit: int, what: str) -> None:
    """Fail, listing the circle's modules and the in-function imports inside it, if the
    largest circle of ``edges`` has more than ``limit`` modules."""
    circles = _circles(edges)
    largest = circles[0] if circles else []
    if len(largest) <= limit:
        return
    members = set(largest)
    closing = sorted(
        {
            _where(imp)
            for module in largest
            for target, imps in edges[module].items()
            if target in members
            for imp in imps
            if imp.late
        }
    )
    raise AssertionError(
        f"an import circle of {len(largest)} modules {what} (at most {limit}): "
        f"{', '.join(largest)}\nthe in-function imports inside it:\n" + "\n".join(closing)
    )


def test_import_circles_counting_in_function_imports_are_small() -> None:
    _check_largest_circle(_all_edges(), LARGEST_IMPORT_CIRCLE, "counting in-function imports")


def test_import_circles_within_a_floor_are_small() -> None:
    # The same, leaving out the imports of a higher floor (which the budget above counts):
    # what remains are the circles among the modules of one floor.
    within = {
        module: {
            target: imps for target, imps in targets.items() if floor_of(target) <= floor_of(module)
        }
        for module, targets in _all_edges().items()
    }
    _check_largest_circle(
        within, LARGEST_CIRCLE_WITHIN_A_FLOOR, "within one floor, counting in-function imports"
    )


# Ratchets: the counts today. Lower them when you untie a circle.
UPWARD_IMPORT_BUDGET = 0
LARGEST_CIRCLE_WITHIN_A_FLOOR = 4
# With no import of a higher floor, every circle lies within one floor.
LARGEST_IMPORT_CIRCLE = LARGEST_CIRCLE_WITHIN_A_FLOOR


# ------------------------------------------------------------------ names given downward
# opweave._wiring binds PyTensor's paths in lower floors to names defined higher up, and the
# printer and the compiler give graph objects their dprint and eval methods. Whichever module
# a program imports first, they are in place (the ``opweave`` package runs first).

_GIVEN_DOWNWARD = """
import sys
import numpy as np
import opweave.compile, opweave.compile.ops, opweave.compile.sharedvalue, opweave.gradient
import opweave.graph.rewriting.basic as gb, opweave.graph.rewriting.tools as gt
import opweave.compile.mode as cm
from opweave.compile.gradient_ops import zero_grad
from opweave.gradient.matrices import jacobian
from opweave.gradient.verify import verify_grad
from opweave.tensor.shape import Shape, Shape_i
from opweave.tensor.sharedvar import TensorSharedVariable
assert opweave.compile.Shape is opweave.compile.ops.Shape is Shape
assert opweave.compile.Shape_i is opweave.compile.ops.Shape_i is Shape_i
assert isinstance(opweave.compile.ops.shape, Shape)
assert opweave.shared is opweave.compile.shared is opweave.compile.sharedvalue.shared
assert isinstance(opweave.compile.shared(np.zeros(2)), TensorSharedVariable)
assert opweave.gradient.zero_grad is zero_grad
assert opweave.gradient.jacobian is jacobian and opweave.gradient.verify_grad is verify_grad
assert gb.get_active_mode is gt.get_active_mode is cm.get_active_mode
if "pytensor" in sys.modules:
    import pytensor.compile, pytensor.gradient
    assert pytensor.compile.Shape is Shape and pytensor.gradient.jacobian is jacobian
x = opweave.tensor.dscalar("x")
assert (x * 2).eval({x: 3.0}) == 6.0
assert "Mul" in (x * 2).dprint(file="str")
db = opweave.graph.rewriting.build_rewrite_database()
assert "local_mul_by_one" in db["canonicalize"]
"""


@pytest.mark.parametrize(
    "first",
    [
        "import opweave.compile",
        "import opweave.gradient",
        "import opweave.graph.basic",
        "from opweave.compat import pytensor_alias; pytensor_alias(); import pytensor.compile",
    ],
)
def test_names_given_downward_are_there_whichever_module_comes_first(first: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"{first}\nimport opweave\n{_GIVEN_DOWNWARD}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_pytensor_paths_of_the_scalar_and_tensor_packages_are_the_home_objects() -> None:
    # The packages give lower modules the names PyTensor has there (scalar.basic.exp,
    # tensor.math.allclose, tensor.slinalg.schur); each must be the defining module's object.
    import opweave.scalar as scalar_package
    import opweave.tensor.slinalg as slinalg
    from opweave.tensor import _pytensor_paths
    from opweave.tensor.linalg.decomposition import schur as schur_module

    paths = [*_pytensor_paths.PATHS, *scalar_package._PYTENSOR_PATHS]
    wrong = [
        f"{lower.__name__}.{name}"
        for lower, home, names in paths
        for name in names.split()
        if getattr(lower, name) is not getattr(home, name)
    ]
    assert wrong == []
    assert len(paths) >= 10
    for name in ("schur", "qz", "ordqz", "Schur", "QZ"):
        assert getattr(slinalg, name) is getattr(schur_module, name)
