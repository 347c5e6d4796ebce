"""The core names no backend: no module, import or message of ``core/src/opweave`` names a
backend distribution or its package. Docstrings may (they document where things live);
hints about what to install come from opweave's metadata extras or the installed plugins."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "src" / "opweave"


def _backend_names() -> set[str]:
    """Every distribution of the repository but the core, and its import package."""
    names = {"opweave-jax", "opweave_jax"}  # the JAX backend of the design, kept outside
    for pyproject in [
        *ROOT.glob("backend-*/pyproject.toml"),
        *ROOT.glob("plugins/*/pyproject.toml"),
    ]:
        name = tomllib.loads(pyproject.read_text())["project"]["name"]
        names |= {name, name.replace("-", "_")}
    return names


BACKENDS = _backend_names()
PATTERN = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, BACKENDS), key=len, reverse=True)) + r")\b"
)
#: Short names PyTensor's backends have that the core must not reserve as modules.
BACKEND_MODULE_NAMES = {"c", "jax", "numba", "pytorch", "mlx", "cuda", "dask"}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _offences(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    docstrings = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            names = [node.value]
        else:
            continue
        for name in names:
            match = PATTERN.search(name)
            if match is not None:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {match.group(0)!r}")
    return found


def test_the_backend_list_is_read_from_the_repository() -> None:
    assert {"opweave-c", "opweave_c", "opweave-python", "opweave_double"} <= BACKENDS
    assert PATTERN.search("pip install opweave-cuda") and not PATTERN.search("opweave.compile")


def test_no_core_code_or_message_names_a_backend() -> None:
    offences = [o for path in sorted(CORE.rglob("*.py")) for o in _offences(path)]
    assert offences == []


@pytest.mark.parametrize(
    "sample", ['raise ValueError("pip install opweave-c")', "import opweave_c"]
)
def test_the_scan_finds_a_backend_name(tmp_path: Path, sample: str) -> None:
    module = tmp_path / "m.py"
    module.write_text(f'"""Docstrings may name opweave-c."""\n{sample}\n')
    assert len(_offences(module, tmp_path)) == 1


def test_the_core_reserves_no_backend_module() -> None:
    link = CORE / "link"
    reserved = sorted(
        p.name for p in link.iterdir() if p.name.removesuffix(".py") in BACKEND_MODULE_NAMES
    )
    assert reserved == []
