"""``categorical`` draws PyTensor's values for any weights, on every linker that runs
random variables with NumPy's generators; ``power`` of two Python numbers is computed in
double precision, as in PyTensor.

PyTensor draws ``categorical(p)`` as the left insertion point of one uniform per draw in
``cumsum(p)`` and does not check ``p``. PyMC relies on that: ``ZeroInflatedPoisson`` with
``psi`` above 1 (a ``HalfNormal`` prior on ``psi`` gives such values) builds a mixture whose
weights ``[1 - psi, psi]`` hold a negative entry, and ``sample_prior_predictive`` draws it.
opweave used to raise for such weights, and to clip the draw to ``len(p) - 1`` when the
uniform exceeded ``sum(p)``, where PyTensor returns ``len(p)``. Random variables have no C
code, so the ``c`` linker, which compiles the whole graph to C, is left out.

PyTensor's ``power(x, y)`` is ``x ** y``: for two Python numbers, a Python float. PyMC's
power spectral densities of the Matern kernels (used by ``HSGP``) multiply such a
``power(3, 3 / 2)``; opweave's ``power`` was the ``pow`` Elemwise, whose constants ``3`` and
``1.5`` give a ``float32`` result, 5e-8 away (relatively) from PyTensor's density.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as ot
from opweave.tensor.random.basic import categorical

LINKERS = list(usable_linkers())
NUMPY_LINKERS = [n for n in usable_linkers() if n in ("py", "vm", "cvm")]

CASES = {
    "probabilities": (np.array([0.2, 0.3, 0.5]), (7,)),
    "sum-below-one": (np.array([0.2, 0.2]), (9,)),
    "negative-weight": (np.array([-0.98, 1.98]), (6,)),
    "unsorted-cumsum": (np.array([0.5, -0.3, 0.8]), (8,)),
    "batched": (np.array([[0.1, 0.9], [0.7, 0.3], [0.5, 0.5]]), (4, 3)),
    "batched-negative": (np.array([[0.5, -0.3, 0.8], [0.2, 0.3, 0.5]]), (5, 2)),
    "no-size": (np.array([[0.1, 0.9], [0.7, 0.3], [0.5, 0.5]]), None),
}

_searchsorted = np.vectorize(np.searchsorted, signature="(p),()->()")


def _expected(generator: np.random.Generator, p: np.ndarray, size: tuple | None) -> np.ndarray:
    shape = p.shape[:-1] if size is None else size
    return np.asarray(_searchsorted(np.cumsum(p, axis=-1), generator.uniform(size=shape)))


@pytest.mark.parametrize("linker", NUMPY_LINKERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_categorical_draws_are_pytensors(linker: str, case: str) -> None:
    p, size = CASES[case]
    generator = np.random.default_rng(11)
    rv = categorical(p, size=size, rng=opweave.shared(deepcopy(generator)))
    got = opweave.function([], rv, mode=opweave.Mode(linker=linker))()
    expected = _expected(generator, p, size)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int64


@pytest.mark.parametrize("linker", NUMPY_LINKERS)
def test_sum_below_one_can_draw_past_the_last_category(linker: str) -> None:
    p = np.array([0.1, 0.1])
    rv = categorical(p, size=(50,), rng=opweave.shared(np.random.default_rng(0)))
    got = opweave.function([], rv, mode=opweave.Mode(linker=linker))()
    assert set(np.unique(got)) <= {0, 1, 2}
    assert np.any(got == 2)  # a uniform above 0.2: PyTensor's index is len(p)


def test_power_of_python_numbers_is_a_python_number() -> None:
    assert ot.power(3, 3 / 2) == 3**1.5
    assert isinstance(ot.power(3, 3 / 2), float)
    assert ot.power(2, 3) == 8


@pytest.mark.parametrize("linker", LINKERS)
def test_power_of_a_tensor_is_the_pow_elemwise(linker: str) -> None:
    x = ot.dvector("x")
    out = ot.power(x, 1.5)
    assert out.owner is not None and out.owner.op == ot.pow
    fn = opweave.function([x], [out, ot.power(2.0, x)], mode=opweave.Mode(linker=linker))
    values = np.array([0.5, 2.0, 3.0])
    got_power, got_base = fn(values)
    np.testing.assert_allclose(got_power, values**1.5, rtol=1e-15)
    np.testing.assert_allclose(got_base, 2.0**values, rtol=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
def test_matern32_spectral_density_in_double_precision(linker: str) -> None:
    omega = ot.dmatrix("omega")
    ls = ot.dscalar("ls")
    # PyMC's Matern32 density in one dimension, term by term.
    num = ot.power(2, 1) * ot.power(np.pi, 0.5) * ot.gamma(2.0) * ot.power(3, 3 / 2)
    root_pi: Any = ot.sqrt(np.pi)
    omega_sq: Any = ot.square(omega)
    density = (num / (0.5 * root_pi)) * ls * ot.power(3.0 + omega_sq.sum(axis=1) * ls**2, -2.0)
    fn = opweave.function([omega, ls], density, mode=opweave.Mode(linker=linker))
    w = np.linspace(0.1, 3.0, 7)[:, None]
    lam = np.sqrt(3.0) / 0.7
    expected = 4 * lam**3 / (lam**2 + w[:, 0] ** 2) ** 2  # 4 lambda^3 (lambda^2 + w^2)^-2
    np.testing.assert_allclose(fn(w, 0.7), expected, rtol=1e-13)
