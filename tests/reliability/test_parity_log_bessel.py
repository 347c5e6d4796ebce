"""``log(kv(v, x))`` and ``log(iv(v, x))`` stay finite where ``kv`` underflows and ``iv``
overflows, on every linker, against SciPy.

As in PyTensor, the ``stabilize`` rewrites ``local_log_kv`` and ``local_log_iv`` compute
them as ``log(kve(v, x)) - x`` and ``log(ive(v, x)) + abs(x)``; the reference is SciPy's
scaled functions written the same way, and SciPy's ``log(kv)`` / ``log(iv)`` where those
are finite. One function per linker (``py``, ``vm``, ``c``, ``cvm``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

ORDERS = np.array([4.5, 0.0, 1.0, 2.5, 10.0, 4.5])
ARGS = np.array([1000.0, 0.5, 30.0, 800.0, 2000.0, 5.0])


@pytest.fixture(scope="module", params=usable_linkers())
def computed(request: pytest.FixtureRequest) -> dict[str, Any]:
    v, x = pt.vector("v"), pt.vector("x")
    fn = opweave.function(
        [v, x], [pt.log(pt.kv(v, x)), pt.log(pt.iv(v, x))], mode=opweave.Mode(linker=request.param)
    )
    log_kv, log_iv = fn(ORDERS, ARGS)
    return {"kv": log_kv, "iv": log_iv}


def test_log_kv_is_finite_where_kv_underflows(computed: dict[str, Any]) -> None:
    with np.errstate(divide="ignore"):
        naive = np.log(sp.kv(ORDERS, ARGS))
    assert np.isneginf(naive).any()  # the unstable form does underflow on these inputs
    expected = np.log(sp.kve(ORDERS, ARGS)) - ARGS
    np.testing.assert_allclose(computed["kv"], expected, rtol=1e-12)
    finite = np.isfinite(naive)
    np.testing.assert_allclose(computed["kv"][finite], naive[finite], rtol=1e-12)


def test_log_iv_is_finite_where_iv_overflows(computed: dict[str, Any]) -> None:
    with np.errstate(over="ignore"):
        naive = np.log(sp.iv(ORDERS, ARGS))
    assert np.isposinf(naive).any()  # the unstable form does overflow on these inputs
    expected = np.log(sp.ive(ORDERS, ARGS)) + np.abs(ARGS)
    np.testing.assert_allclose(computed["iv"], expected, rtol=1e-12)
    finite = np.isfinite(naive)
    np.testing.assert_allclose(computed["iv"][finite], naive[finite], rtol=1e-12)


def test_the_rewrites_are_in_stabilize() -> None:
    x = pt.scalar("x")
    mode = opweave.compile.mode.get_default_mode().excluding("local_log_kv", "local_log_iv")
    fn = opweave.function([x], [pt.log(pt.kv(4.5, x)), pt.log(pt.iv(4.5, x))], mode=mode)
    log_kv, log_iv = fn(1000.0)
    assert np.isneginf(log_kv) and np.isposinf(log_iv)
