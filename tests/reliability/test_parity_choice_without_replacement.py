"""``choice(..., replace=False)`` draws NumPy's values, on every linker that runs random
variables with NumPy's generators.

The draws of one batch entry depend on each other, so, as in PyTensor, ``choice`` builds a
``ChoiceWithoutReplacement`` node whose core shape is the number of draws, and each
backend draws as ``numpy.random.Generator.choice(a, size, replace=False, p=p)`` does,
batch entry by batch entry. (opweave used to take a permutation's prefix, or sort
exponential races with ``p``: draws of the right distribution, but not NumPy's nor
PyTensor's values for the same generator.) Random variables have no C code, so the ``c``
linker, which compiles the whole graph to C, is left out; ``jax`` draws with its own
generator and is checked for the properties of the draws.
"""

from __future__ import annotations

from copy import deepcopy

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as ot
from opweave.tensor.random.basic import ChoiceWithoutReplacement, choice

NUMPY_LINKERS = [n for n in usable_linkers() if n in ("py", "vm", "cvm")]
A = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
P = np.array([0.05, 0.3, 0.1, 0.25, 0.2, 0.1])
ROWS = np.arange(12.0).reshape(6, 2)

CASES = {
    "vector": (A, (2, 2), None),
    "vector-p": (A, (3,), P),
    "int": (9, (4,), None),
    "int-p": (6, (2,), P),
    "rows": (ROWS, (3,), None),
    "scalar-size": (A, 2, None),
    "all": (A, (6,), P),
}


def _run(linker: str, make: object) -> np.ndarray:
    return opweave.function([], make, mode=opweave.Mode(linker=linker))()


@pytest.mark.parametrize("linker", NUMPY_LINKERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_draws_are_numpys(linker: str, case: str) -> None:
    a, size, p = CASES[case]
    generator = np.random.default_rng(5)
    rv = choice(a, size=size, replace=False, p=p, rng=opweave.shared(deepcopy(generator)))
    got = _run(linker, rv)
    expected = generator.choice(a, size=size, replace=False, p=p)
    np.testing.assert_array_equal(got, expected)
    assert got.shape == expected.shape
    assert rv.type.shape == expected.shape  # the static shape is known


@pytest.mark.parametrize("linker", NUMPY_LINKERS)
def test_a_symbolic_number_of_draws(linker: str) -> None:
    k = ot.lscalar("k")
    generator = np.random.default_rng(2)
    rv = choice(A, size=(k,), replace=False, rng=opweave.shared(deepcopy(generator)))
    fn = opweave.function([k], rv, mode=opweave.Mode(linker=linker))
    np.testing.assert_array_equal(fn(4), generator.choice(A, size=(4,), replace=False))
    with pytest.raises(ValueError, match="choice_without_replacement: invalid parameters"):
        fn(7)  # more than the 6 entries


@pytest.mark.parametrize("linker", NUMPY_LINKERS)
@pytest.mark.parametrize("with_p", [False, True], ids=["uniform", "p"])
def test_batched_entries_are_drawn_one_by_one(linker: str, with_p: bool) -> None:
    batch = np.stack([A, A + 1.0, A + 2.0])
    p = np.stack([P, P[::-1], np.full(6, 1 / 6)])
    signature = "(a0),(a0),(1)->(s0)" if with_p else "(a0),(1)->(s0)"
    op = ChoiceWithoutReplacement(signature=signature, dtype="float64")
    generator = np.random.default_rng(8)
    params = (batch, p, [2]) if with_p else (batch, [2])
    rv = op(*params, rng=opweave.shared(deepcopy(generator)))
    got = _run(linker, rv)
    expected = np.stack(
        [
            generator.choice(batch[i], size=(2,), replace=False, p=p[i] if with_p else None)
            for i in range(3)
        ]
    )
    np.testing.assert_array_equal(got, expected)


def test_too_many_constant_draws_fail_when_the_graph_is_built() -> None:
    with pytest.raises(ValueError, match="cannot draw 7 distinct entries from 6"):
        choice(A, size=(7,), replace=False)


@pytest.mark.skipif("jax" not in usable_linkers(), reason="opweave-jax is not installed")
def test_jax_draws_distinct_entries() -> None:
    rng = opweave.shared(np.random.default_rng(1))
    draws = [
        choice(A, size=(4,), replace=False, p=P, rng=rng),
        choice(9, size=(3, 3), replace=False, rng=rng),
    ]
    weighted, ints = _run("jax", draws)
    assert weighted.shape == (4,) and len(set(weighted.tolist())) == 4
    assert set(weighted.tolist()) <= set(A.tolist())
    assert sorted(ints.ravel().tolist()) == list(range(9))
    batch = np.stack([A, A + 100.0])
    op = ChoiceWithoutReplacement(signature="(a0),(1)->(s0)", dtype="float64")
    got = _run("jax", op(batch, [3], rng=rng))
    assert got.shape == (2, 3)
    for row, population in zip(got, batch, strict=True):
        assert len(set(row.tolist())) == 3 and set(row.tolist()) <= set(population.tolist())
