"""The capability matrix (``opweave matrix``, ``opweave info --json``) against the backends'
implementation tables."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
import opweave.tensor.nlinalg as nlinalg
import opweave.tensor.slinalg as slinalg
from opweave.compile import Mode
from opweave.ifelse import ifelse
from opweave.link.capabilities import (
    FALLBACK,
    IMPLEMENTED,
    MISSING,
    PARTIAL,
    capability_matrix,
    entry_capability,
    op_class_name,
)
from opweave.link.implementations import ImplementationTable


def test_the_matrix_agrees_with_every_implementation_table() -> None:
    infos = opweave.get_plugin_manager().hook.opweave_backend_info()
    matrix = capability_matrix(infos)
    tables = {i["name"]: i["implementations"] for i in infos if i.get("implementations")}
    assert {"opweave-python", "opweave-c", "opweave-dask"} <= set(tables)
    for name, table in tables.items():
        scope = {op_class_name(cls): cls for cls in table.scope()}
        for cls_name, row in matrix.items():
            status = row[name]
            if cls_name in scope and not table.implements(scope[cls_name]):
                assert status == MISSING, (cls_name, name)  # no entry: nothing to run it
            elif cls_name in scope:
                assert status in (IMPLEMENTED, PARTIAL, FALLBACK), (cls_name, name)
        assert all(op_class_name(c) in matrix for c in scope.values())
    # the Python backend implements every Op class of the core (not the GPU backend's)
    core = [row for name, row in matrix.items() if name.startswith("opweave.")]
    assert core and all(row["opweave-python"] == IMPLEMENTED for row in core)
    assert matrix["opweave_cuda.ops.blas.GpuDot"]["opweave-python"] == FALLBACK
    assert matrix["opweave.tensor.blas.Dot"]["opweave-c"] == IMPLEMENTED
    assert matrix["opweave.ifelse.IfElse"]["opweave-cuda"] == FALLBACK


def test_the_command_prints_it_as_json_and_as_a_table() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "opweave", "info", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    data = json.loads(proc.stdout)
    infos = opweave.get_plugin_manager().hook.opweave_backend_info()
    assert data == capability_matrix(infos)
    table = subprocess.run(
        [sys.executable, "-m", "opweave", "matrix"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    backends = table[0].split("  Op class")[0].split()
    assert backends == sorted(backends)
    assert {"opweave-c", "opweave-cuda", "opweave-python"} <= set(backends)
    dot = next(line for line in table if line.endswith(" opweave.tensor.blas.Dot"))
    cells = dict(zip(backends, dot.split(), strict=False))
    # the GPU backend has its own GpuDot
    assert [cells[b] for b in ("opweave-c", "opweave-cuda", "opweave-python")] == ["+", ".", "+"]
    assert len(table) == len(data) + 1


def _c_row(matrix: dict[str, dict[str, str]], op: object) -> str:
    return matrix[op_class_name(type(op))]["opweave-c"]


def test_the_c_column_says_which_nodes_cvm_runs_in_c() -> None:
    x, v = ot.dmatrix("x"), ot.dvector("v")
    outputs: list[Any] = [
        ot.dot(x, x),
        ot.exp(v),
        nlinalg.det(x),
        nlinalg.tensorinv(x, ind=1),
        ifelse(ot.gt(v.sum(), 0), v, -v),
    ]
    f = opweave.function([x, v], outputs, mode=Mode(linker="cvm"))
    matrix = capability_matrix(opweave.get_plugin_manager().hook.opweave_backend_info())
    ran = {type(node.op): impl for node, impl in f.maker.node_impls.items()}
    assert {ran[type(o.owner.op)] for o in outputs[:3]} == {"c"}  # Dot, Elemwise, Det
    assert {ran[type(o.owner.op)] for o in outputs[3:]} == {"py"}  # TensorInv, IfElse
    for cls, impl in ran.items():
        expected = IMPLEMENTED if impl == "c" else FALLBACK
        assert matrix[op_class_name(cls)]["opweave-c"] == expected, cls
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    b = np.array([1.0, 2.0])
    np.testing.assert_allclose(f(a, b)[2], np.linalg.det(a))
    np.testing.assert_allclose(f(a, b)[3], np.linalg.tensorinv(a, ind=1))


def test_the_dask_column_says_which_nodes_have_a_chunkwise_form() -> None:
    from opweave_dask.table import builder_for

    x, v = ot.dmatrix("x"), ot.dvector("v")
    matrix = capability_matrix(opweave.get_plugin_manager().hook.opweave_backend_info())
    for out in (ot.exp(v), ot.dot(x, x), slinalg.solve(x, v), ot.sort(v)):
        node = out.owner
        chunkwise = builder_for(node.op)(node, "vm") is not None
        status = matrix[op_class_name(type(node.op))]["opweave-dask"]
        assert status == (IMPLEMENTED if chunkwise else FALLBACK), node


class _Base(opweave.graph.op.Op):
    pass


class _Real(_Base):
    pass


class _Placeholder(_Base):
    pass


class _Declared(_Base):
    pass


class _Nowhere(_Base):
    pass


def _no_c(op: object, node: object) -> None:
    """No C: runs in Python."""
    return None


def _sometimes(op: object, node: object) -> object:
    return None if getattr(node, "odd", False) else "c implementation"


_sometimes.opweave_capability = PARTIAL  # type: ignore[attr-defined]


def test_entries_that_never_produce_an_implementation_are_a_fallback() -> None:
    scope = [_Real, _Placeholder, _Declared, _Nowhere]
    own = ImplementationTable(
        "own",
        {_Real: lambda op, node: "c implementation", _Placeholder: _no_c, _Declared: _sometimes},
        scope=lambda: scope,
    )
    other = ImplementationTable(
        "other", {_Placeholder: print, _Declared: print, _Real: print}, scope=lambda: scope
    )
    matrix = capability_matrix(
        [{"name": "own", "implementations": own}, {"name": "other", "implementations": other}]
    )

    def row(cls: type) -> dict[str, str]:
        return matrix[op_class_name(cls)]

    assert row(_Real) == {"other": IMPLEMENTED, "own": IMPLEMENTED}
    assert row(_Placeholder) == {"other": IMPLEMENTED, "own": FALLBACK}
    assert row(_Declared) == {"other": IMPLEMENTED, "own": PARTIAL}
    assert row(_Nowhere) == {"other": MISSING, "own": MISSING}  # nothing runs it anywhere
    assert entry_capability(lambda op, node: None) == FALLBACK
    assert entry_capability(_sometimes) == PARTIAL


def test_a_wrong_declaration_is_refused_by_name() -> None:
    def factory(op: object, node: object) -> None:
        return None

    factory.opweave_capability = "everything"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="declares opweave_capability='everything'"):
        entry_capability(factory)


def test_info_ops_counts_what_runs_where(capsys) -> None:
    from opweave.cli import main

    assert main(["info", "--ops"]) == 0
    out = capsys.readouterr().out
    matrix = capability_matrix(opweave.get_plugin_manager().hook.opweave_backend_info())
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("  opweave-c (c): ")))
    core = [row["opweave-c"] for name, row in matrix.items() if name.startswith("opweave.")]
    assert lines[at : at + 2] == [
        f"  opweave-c (c): {core.count(IMPLEMENTED)} of {len(core)} Op classes",
        f"    the others: {core.count(PARTIAL)} partly, {core.count(FALLBACK)} by another "
        f"implementation (fallback), {core.count(MISSING)} missing",
    ]
    assert core.count(FALLBACK) > 0 and core.count(IMPLEMENTED) < len(core)
    for name in ("opweave.scan.op.Scan", "opweave.tensor.slinalg.Solve"):
        assert f"    fallback: {name}" in out
