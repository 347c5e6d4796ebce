"""``gammaln`` of an integer is rounded once on every linker, and so are the functions whose
prefactor ``exp(a log x - x - gammaln(a))`` amplifies its last bit about a thousandfold.

``gammaln(n)`` for an integer ``3 <= n <= 1024`` is ``log((n - 1)!)`` rounded to the nearest
float (the C library's ``lgamma`` is an ulp off at 101, CPython's at 255): ``py`` and ``c``
give the same bits, within half an ulp of the exact value. ``ive(-100, x)`` and
``gammainc(255, x)`` then agree between the linkers (to the ulp) and with SciPy (where an
ulp of ``gammaln`` alone would be 1e-13 to 2e-13 relative).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
import scipy.special as sps

import opweave
import opweave.tensor as ot

LINKERS = ["py", "vm", "c", "cvm"]
INTEGERS = np.arange(3, 1025, dtype="float64")


def _exact_log_factorial(n: int) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 40
        return Decimal(math.factorial(n - 1)).ln()


@pytest.fixture(scope="module")
def on_linkers() -> dict[str, list[np.ndarray]]:
    """Per linker: gammaln of the integers, ive(-100, x) and gammainc(255, x)."""
    n, v, x = ot.dvector("n"), ot.dvector("v"), ot.dvector("x")
    outputs = [ot.gammaln(n), ot.ive(v, x), ot.gammainc(v, x)]
    xs = np.array([0.5, 1.5, 3.0, 7.25, 20.0, 100.0, 254.0, 300.0])
    results = {}
    for linker in LINKERS:
        f = opweave.function([n, v, x], outputs, mode=opweave.Mode(linker=linker))
        lg, _, _ = f(INTEGERS, xs, xs)
        _, ive, _ = f(INTEGERS[:1], np.full_like(xs, -100.0), xs)
        _, _, inc = f(INTEGERS[:1], np.full_like(xs, 255.0), xs)
        results[linker] = [lg, ive, inc, xs]
    return results


def test_gammaln_of_integers_is_rounded_once_and_the_same_on_every_linker(on_linkers) -> None:
    lg = on_linkers["py"][0]
    for linker in LINKERS:
        np.testing.assert_array_equal(on_linkers[linker][0], lg, err_msg=linker)
    for n, value in zip(INTEGERS.astype(int).tolist(), lg.tolist(), strict=True):
        error = (Decimal(value) - _exact_log_factorial(n)) / Decimal(math.ulp(value))
        assert abs(error) <= Decimal("0.5"), (n, float(error))


@pytest.mark.parametrize("k", [1, 2], ids=["ive_order_minus_100", "gammainc_of_255"])
def test_amplified_prefactors_agree_across_linkers_and_with_scipy(on_linkers, k: int) -> None:
    xs = on_linkers["py"][3]
    expected = sps.ive(-100.0, xs) if k == 1 else sps.gammainc(255.0, xs)
    py = on_linkers["py"][k]
    for linker in LINKERS:
        np.testing.assert_allclose(on_linkers[linker][k], py, rtol=4e-16, err_msg=linker)
    # An ulp of gammaln would be 2e-13 relative here; the series and exp give up to 4e-14.
    np.testing.assert_allclose(py, expected, rtol=5e-14, atol=0)
