"""Every elementwise Op of the catalogue, on every linker, against NumPy/SciPy.

Each case runs on edge values of its input dtypes (NaN, ±inf, ±0, subnormals, integer
extremes) in every combination, passed as 2-d arrays in several memory layouts
(contiguous, transposed, strided, reversed), as empty arrays and as 0-d arrays. Every
linker must give the reference's values (integers and booleans exactly, floats within a
few ulps with the right sign of zero, NaN where NaN is expected) and ``py``'s values.

The default run checks float64 inputs of every case, and for a share of the cases one
more dtype combination and 0-d inputs, drawn from the case's name (the known
disagreements always); the long run (``OPWEAVE_RELIABILITY_LONG=1``) every combination.
Every scalar Op class of the backends' implementation tables needs a case or a reasoned
exclusion.
"""

from __future__ import annotations

import numpy as np
import pytest

# The harness's modules live next to this file (tests/reliability/differential).
from differential.catalogue import (
    ELEMWISE_CASES,
    EXCLUDED_SCALAR_OPS,
    FUSED_CASES,
    KNOWN_DISAGREEMENTS,
    LINKER_DISAGREEMENTS,
    PRODUCT_CASES,
    REDUCTION_CASES,
    SHAPE_CASES,
    ElemwiseCase,
)
from differential.runner import (
    LINKERS,
    Item,
    as_param,
    describe_disagreements,
    elemwise_items,
    elemwise_outcomes,
    matrix_items,
    usable_linkers,
)
from differential.values import agree

import opweave
from opweave.scalar.basic import ScalarOp
from opweave.tensor.elemwise import Elemwise

ITEMS: tuple[Item, ...] = tuple(elemwise_items(ELEMWISE_CASES))


@pytest.mark.reliability_long
@pytest.mark.parametrize("item", [as_param(item) for item in ITEMS])
def test_elemwise_agrees_with_reference_on_every_linker(item: Item) -> None:
    outcomes = {linker: elemwise_outcomes(ITEMS, linker)[item.id] for linker in usable_linkers()}
    problems = describe_disagreements(item, outcomes)
    assert not problems, "\n".join(problems)


def scalar_op_classes_of_tables() -> set[type]:
    """The scalar Op classes of every installed backend's implementation table (its
    entries and its scope), as the capability matrix enumerates them."""
    found: set[type] = set()
    for info in opweave.get_plugin_manager().hook.opweave_backend_info():
        table = info.get("implementations")
        if table is None:
            continue
        for cls in [*table.scope(), *table]:
            if isinstance(cls, type) and issubclass(cls, ScalarOp):
                found.add(cls)
    return found


def uncovered(classes: set[type]) -> set[type]:
    """The classes with neither a catalogue case nor an exclusion."""
    cases = ELEMWISE_CASES + FUSED_CASES
    covered = {case.op_class for case in cases} | set(EXCLUDED_SCALAR_OPS)
    return {cls for cls in classes if cls not in covered}


def test_every_scalar_op_of_the_tables_has_a_case_or_an_exclusion() -> None:
    classes = scalar_op_classes_of_tables()
    assert len(classes) > 50  # the core's scalar Ops are there
    missing = sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in uncovered(classes))
    assert not missing, f"scalar Ops without a differential case: {missing}"


def test_a_new_scalar_op_is_reported_uncovered() -> None:
    class Halve(ScalarOp):
        nin = 1

    assert uncovered({Halve}) == {Halve}


def test_excluded_ops_have_reasons_and_no_case() -> None:
    with_case = {case.op_class for case in ELEMWISE_CASES + FUSED_CASES}
    for cls, reason in EXCLUDED_SCALAR_OPS.items():
        assert reason.strip(), cls
        assert cls not in with_case, cls


def _applies(case: ElemwiseCase, signature: tuple[str, ...]) -> bool:
    out = case.build(*(opweave.tensor.matrix(dtype=d) for d in signature))
    stack, seen = [out], set()
    while stack:
        node = stack.pop().owner
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, case.op_class):
            return True
        stack.extend(node.inputs)
    return False


@pytest.mark.parametrize("case", ELEMWISE_CASES, ids=lambda case: case.name)
def test_case_applies_its_op_class(case: ElemwiseCase) -> None:
    # Some Ops apply to some dtypes only (conj of a real number is the number itself).
    candidates = [item.signature for item in ITEMS if item.case is case]
    assert candidates, f"{case.name} is not checked on any dtypes"
    if case.arity == 1:
        candidates += case.signatures()
    assert any(_applies(case, sig) for sig in candidates if case.accepts(sig))


def test_known_disagreements_name_checked_items() -> None:
    checked = {(item.case.name, item.signature) for item in ITEMS}
    checked |= {(item.case.name, item.signature) for item in elemwise_items(FUSED_CASES)}
    for item in matrix_items(REDUCTION_CASES + SHAPE_CASES + PRODUCT_CASES):
        checked.add((item.case.name, (item.dtype,)))
    assert set(KNOWN_DISAGREEMENTS) <= checked
    assert {(name, sig) for name, sig, _ in LINKER_DISAGREEMENTS} <= checked
    assert {linker for _, _, linker in LINKER_DISAGREEMENTS} <= set(LINKERS)


def test_comparison_is_nan_aware_signed_zero_aware_and_tight() -> None:
    expected = np.array([np.nan, 0.0, -0.0, 1.0, 1.0, np.inf, 3.0], dtype=np.float32)
    actual = np.array([np.nan, -0.0, -0.0, 1.0, 1.0, np.inf, 3.0], dtype=np.float32)
    actual[3] = np.nextafter(np.float32(1), np.float32(2))  # one ulp off
    actual[4] = np.float32(1) + 5 * np.spacing(np.float32(1))  # five ulps off
    actual[6] = np.nan
    assert agree(actual, expected, ulps=4).tolist() == [
        True,
        False,
        True,
        True,
        False,
        True,
        False,
    ]
    assert agree(actual[:2], expected[:2], ulps=4, signed_zero=False).tolist() == [True, True]
    ints = np.array([127, -128], dtype=np.int8)
    assert agree(ints, np.array([127, 127], dtype=np.int8), ulps=4).tolist() == [True, False]
