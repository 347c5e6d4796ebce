"""The capability matrix (``opweave matrix``, ``opweave info --json``) against the backends'
implementation tables."""

from __future__ import annotations

import json
import subprocess
import sys

import opweave
from opweave.link.capabilities import (
    FALLBACK,
    IMPLEMENTED,
    MISSING,
    capability_matrix,
    op_class_name,
)


def test_the_matrix_agrees_with_every_implementation_table() -> None:
    infos = opweave.get_plugin_manager().hook.opweave_backend_info()
    matrix = capability_matrix(infos)
    tables = {i["name"]: i["implementations"] for i in infos if i.get("implementations")}
    assert {"opweave-python", "opweave-c"} <= set(tables)
    for name, table in tables.items():
        scope = {op_class_name(cls): cls for cls in table.scope()}
        for cls_name, row in matrix.items():
            status = row[name]
            if cls_name in scope:
                expected = IMPLEMENTED if table.implements(scope[cls_name]) else MISSING
                assert status == expected, (cls_name, name)
            else:
                assert status in (IMPLEMENTED, FALLBACK), (cls_name, name)
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
