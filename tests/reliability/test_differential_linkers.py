"""Every linker gives the values of every other and NumPy's: fused elementwise chains
(one ``Composite`` node, one C loop) and shape and indexing Ops on edge inputs in several
memory layouts.
"""

from __future__ import annotations

import pytest

# The harness's modules live next to this file (tests/reliability/differential).
from differential.catalogue import FUSED_CASES, SHAPE_CASES, ElemwiseCase
from differential.runner import (
    Item,
    MatrixItem,
    as_param,
    describe_disagreements,
    describe_matrix_disagreements,
    elemwise_items,
    elemwise_outcomes,
    matrix_items,
    matrix_outcomes,
    usable_linkers,
)

import opweave
from opweave.scalar.composite import Composite
from opweave.tensor.elemwise import Elemwise

FUSED: tuple[Item, ...] = tuple(elemwise_items(FUSED_CASES))
SHAPES: tuple[MatrixItem, ...] = tuple(matrix_items(SHAPE_CASES))


@pytest.mark.reliability_long
@pytest.mark.parametrize("item", [as_param(item) for item in FUSED])
def test_fused_chain_agrees_on_every_linker(item: Item) -> None:
    outcomes = {linker: elemwise_outcomes(FUSED, linker)[item.id] for linker in usable_linkers()}
    problems = describe_disagreements(item, outcomes)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", FUSED_CASES, ids=lambda case: case.name)
def test_chain_is_fused(case: ElemwiseCase) -> None:
    signature = next(item.signature for item in FUSED if item.case is case)
    inputs = [opweave.tensor.matrix(dtype=dtype) for dtype in signature]
    fn = opweave.function(inputs, case.build(*inputs), mode=opweave.Mode(linker="py"))
    nodes = fn.maker.fgraph.toposort()
    assert any(
        isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite) for node in nodes
    ), nodes


@pytest.mark.reliability_long
@pytest.mark.parametrize("item", [as_param(item) for item in SHAPES])
def test_shape_op_agrees_with_numpy_on_every_linker(item: MatrixItem) -> None:
    outcomes = {linker: matrix_outcomes(SHAPES, linker)[item.id] for linker in usable_linkers()}
    problems = describe_matrix_disagreements(item, outcomes)
    assert not problems, "\n".join(problems)


def test_linkers_compared_include_py_and_a_c_linker_where_installed() -> None:
    linkers = usable_linkers()
    assert linkers[0] == "py"
    try:
        import opweave_c  # noqa: F401
    except ImportError:
        return
    assert {"c", "cvm"} <= set(linkers)
