"""The shape of a sparse result is computed from its inputs' shapes (the Op's
``infer_shape``), as for tensors: compiling ``y.shape`` does not run the Op."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import opweave
from opweave import sparse

CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "transpose": (sparse.transpose, lambda m: m.T),
    "hstack": (lambda x: sparse.hstack([x, x]), lambda m: sps.hstack([m, m])),
    "vstack": (lambda x: sparse.vstack([x, x]), lambda m: sps.vstack([m, m])),
    "add": (lambda x: sparse.add(x, x), lambda m: m + m),
    "slice": (lambda x: x[1:, ::2], lambda m: m[1:, ::2]),
}


@pytest.mark.parametrize("linker", ["py", "cvm"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_shape_of_a_sparse_result_does_not_run_its_op(linker: str, case: str, fmt: str) -> None:
    build, reference = CASES[case]
    x = sparse.matrix(fmt, name="x", dtype="float64")
    y = build(x)
    f = opweave.function([x], [y.shape, y.shape[0]], mode=opweave.Mode(linker=linker))
    ops = {type(node.op).__name__ for node in f.maker.fgraph.apply_nodes}
    assert y.owner is not None and type(y.owner.op).__name__ not in ops, ops
    value = sps.random(4, 6, density=0.5, format=fmt, random_state=3)
    shape, rows = f(value)
    want = reference(value).shape
    np.testing.assert_array_equal(shape, want)
    assert int(rows) == want[0]
