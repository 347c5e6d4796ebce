"""Reductions (sum, prod, max, min, mean, argmax, argmin, all, any) with their axis, dtype
and keepdims variants, on every linker, against NumPy.

Inputs are matrices whose rows are edge scenarios (NaN, infinities, negative zeros,
overflow, subnormals, integer extremes), passed in several memory layouts, and empty
matrices for the reductions with an identity. Integer and boolean results must be exact;
float results within the rounding error any summation order may make.
"""

from __future__ import annotations

import pytest

# The harness's modules live next to this file (tests/reliability/differential).
from differential.catalogue import REDUCTION_CASES
from differential.runner import (
    MatrixItem,
    as_param,
    describe_matrix_disagreements,
    matrix_items,
    matrix_outcomes,
    usable_linkers,
)

ITEMS: tuple[MatrixItem, ...] = tuple(matrix_items(REDUCTION_CASES))


@pytest.mark.reliability_long
@pytest.mark.parametrize("item", [as_param(item) for item in ITEMS])
def test_reduction_agrees_with_numpy_on_every_linker(item: MatrixItem) -> None:
    outcomes = {linker: matrix_outcomes(ITEMS, linker)[item.id] for linker in usable_linkers()}
    problems = describe_matrix_disagreements(item, outcomes)
    assert not problems, "\n".join(problems)


def test_every_reduction_family_is_checked() -> None:
    names = {case.name.split("(")[0] for case in REDUCTION_CASES}
    assert names >= {"sum", "prod", "max", "min", "mean", "argmax", "argmin", "all", "any"}
