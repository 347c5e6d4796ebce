"""Matrix products (``@`` for every rank pair, ``dot``) on every linker, against NumPy.

The inputs are the reduction harness's matrices: rows of edge values (NaN, infinities,
negative zeros, overflow, subnormals, integer extremes) in several memory layouts, and
empty matrices. Integer and boolean products must be exact (integers wrap as NumPy's
do); float products within the rounding error any summation order may make.
"""

from __future__ import annotations

import pytest

# The harness's modules live next to this file (tests/reliability/differential).
from differential.catalogue import PRODUCT_CASES
from differential.runner import (
    MatrixItem,
    as_param,
    describe_matrix_disagreements,
    matrix_items,
    matrix_outcomes,
    usable_linkers,
)

import opweave
from opweave.tensor.blas import Dot, MatMul

ITEMS: tuple[MatrixItem, ...] = tuple(matrix_items(PRODUCT_CASES))


@pytest.mark.reliability_long
@pytest.mark.parametrize("item", [as_param(item) for item in ITEMS])
def test_product_agrees_with_numpy_on_every_linker(item: MatrixItem) -> None:
    outcomes = {linker: matrix_outcomes(ITEMS, linker)[item.id] for linker in usable_linkers()}
    problems = describe_matrix_disagreements(item, outcomes)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", PRODUCT_CASES, ids=lambda case: case.name)
def test_products_compile_to_dot_unless_batched(case: object) -> None:
    x = opweave.tensor.matrix(dtype="float64")
    fn = opweave.function([x], case.build(x), mode=opweave.Mode(linker="py"))  # type: ignore[attr-defined]
    kinds = {type(node.op) for node in fn.maker.fgraph.toposort()}
    if case.name == "matmul_batched":  # type: ignore[attr-defined]
        assert MatMul in kinds
    else:
        assert Dot in kinds and MatMul not in kinds
