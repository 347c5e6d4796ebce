"""No backend or plugin imports another: each imports only the core (``opweave``) and its
own package, at module level or inside functions. What one backend needs of another's
implementations goes through the core's resolver (``opweave.link.resolver``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Where the backends and plugins keep their packages (``<dist>/src/<package>``).
SOURCE_DIRS = sorted([*ROOT.glob("backend-*/src"), *ROOT.glob("plugins/*/src")])


def _packages() -> dict[str, Path]:
    return {
        package.name: package
        for src in SOURCE_DIRS
        for package in src.iterdir()
        if package.is_dir() and (package / "__init__.py").exists()
    }


PACKAGES = _packages()


def imported_top_levels(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, top-level package)`` of every absolute import in ``tree``, wherever it is."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.partition(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.partition(".")[0]))
    return found


def foreign_imports(package: str, root: Path, others: set[str], base: Path = ROOT) -> list[str]:
    """``file:line imports <package>`` (``file`` relative to ``base``) for each import of
    one of ``others`` (but ``package``) in the ``.py`` files under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, top in imported_top_levels(tree):
            if top in others and top != package:
                found.append(f"{path.relative_to(base)}:{line} imports {top}")
    return found


def test_the_backends_and_plugins_are_found() -> None:
    assert {"opweave_python", "opweave_c", "opweave_cuda", "opweave_dask"} <= set(PACKAGES)
    assert "opweave_double" in PACKAGES


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_a_backend_imports_no_other_backend(package: str) -> None:
    found = foreign_imports(package, PACKAGES[package], set(PACKAGES))
    assert not found, f"{package} imports other backends or plugins:\n" + "\n".join(found)


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(
        "import os\nimport mine.x\n\n\ndef f():\n"
        "    from opweave_c.impls import C_OPS\n    import opweave_python.thunk\n"
    )
    found = foreign_imports("mine", tmp_path, {"opweave_c", "opweave_python", "mine"}, tmp_path)
    assert found == ["mod.py:6 imports opweave_c", "mod.py:7 imports opweave_python"]
