"""Constant factors of a product are merged in the product's dtype before constant folding.

``x / reciprocal(int8 3)`` with a float64 ``x`` is ``3.0 * x``, as PyTensor's
``local_mul_canonizer`` makes it, and not ``x / 0.33333334``: folding the float32
``reciprocal`` of the integer constant first would put its rounding (3e-8 relative) into
the float64 result. This is the form of PyMC's ``Exponential(3)`` log-density,
``-x / reciprocal(lam) - log(reciprocal(lam))`` (where ``log(reciprocal(lam))`` stays
float32, as in PyTensor).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats as st

import opweave
import opweave.tensor as pt
from opweave.compile import Mode
from opweave.graph.basic import Constant
from opweave.raise_op import CheckAndRaise
from opweave.scalar import Mul, Reciprocal, TrueDiv
from opweave.tensor import math as tm
from opweave.tensor.elemwise import Elemwise

LINKERS = ["py", "vm", "c", "cvm"]
#: Two float64 ulps: the merged constant is exact, a folded float32 one is 3e-8 off.
ULPS = 4.5e-16
X = np.linspace(0.0, 9.0, 19)


def int8(value: int) -> Any:
    return pt.constant(np.int8(value))


def float32(value: float) -> Any:
    return pt.constant(np.float32(value))


def compile_(inputs: list[Any], out: Any, linker: str, *exclude: str) -> Any:
    mode = Mode(linker=linker, optimizer="fast_run")
    return opweave.function(inputs, out, mode=mode.excluding(*exclude) if exclude else mode)


def scalar_ops(f: Any) -> list[Any]:
    return [
        node.op.scalar_op for node in f.maker.fgraph.toposort() if isinstance(node.op, Elemwise)
    ]


def mul_constants(f: Any) -> list[Any]:
    """The values of the constant inputs of the Mul nodes of ``f``'s graph."""
    values = []
    for node in f.maker.fgraph.toposort():
        if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Mul):
            values += [np.asarray(i.data) for i in node.inputs if isinstance(i, Constant)]
    return values


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("make", [int8, float32], ids=["int8", "float32"])
def test_divide_by_reciprocal_of_constant(linker: str, make: Any) -> None:
    x = pt.dvector("x")
    f = compile_([x], x / tm.reciprocal(make(3)), linker)
    np.testing.assert_allclose(f(X), X / (1.0 / 3.0), rtol=ULPS, atol=0.0)
    np.testing.assert_array_equal(f(X), 3.0 * X)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("make", [int8, float32], ids=["int8", "float32"])
def test_times_double_reciprocal_of_constant(linker: str, make: Any) -> None:
    x = pt.dvector("x")
    f = compile_([x], x * tm.reciprocal(tm.reciprocal(make(7))), linker)
    np.testing.assert_allclose(f(X), X * 7.0, rtol=ULPS, atol=0.0)


@pytest.mark.parametrize("linker", LINKERS)
def test_times_reciprocal_of_int_constant(linker: str) -> None:
    x = pt.dvector("x")
    f = compile_([x], x * tm.reciprocal(int8(3)), linker)
    np.testing.assert_allclose(f(X), X / 3.0, rtol=ULPS, atol=0.0)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("make", [int8, float32], ids=["int8", "float32"])
@pytest.mark.parametrize("lam", [3, 7])
def test_exponential_logdensity_form(linker: str, make: Any, lam: int) -> None:
    x = pt.dvector("x")
    inv: Any = tm.reciprocal(make(lam))
    out = -x / inv - tm.log(inv)
    f = compile_([x], out, linker)
    # log(reciprocal(lam)) is float32 in the graph (as in PyTensor); the product is not.
    log_term = np.float64(np.log(np.reciprocal(np.float32(lam))))
    expected = -X * lam - log_term
    np.testing.assert_allclose(f(X), expected, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(f(X), st.expon.logpdf(X, scale=1.0 / lam), rtol=1e-7)


@pytest.mark.parametrize("linker", LINKERS)
def test_pymc_like_exponential_logp(linker: str) -> None:
    """The graph PyMC builds for ``pm.logp(pm.Exponential.dist(3), v)``: a switch on the
    support, a parameter check, and the rate as ``ExpandDims(reciprocal(int8 3))``."""
    v = pt.dvector("v")
    mu = pt.shape_padleft(tm.reciprocal(int8(3)))
    log_mu: Any = tm.log(mu)
    logp = -log_mu - tm.true_div(v, mu)
    body = pt.switch(tm.ge(v, pt.shape_padleft(pt.constant(0.0))), logp, -np.inf)
    checked = CheckAndRaise(ValueError, "mu >= 0")(body, tm.all(tm.ge(mu, 0)))
    f = compile_([v], checked, linker)
    expected = st.expon.logpdf(X, scale=1.0 / 3.0)
    np.testing.assert_allclose(f(X), expected, rtol=1e-7)
    exact_product = np.float64(-np.log(np.float32(1) / np.float32(3))) - 3.0 * X
    np.testing.assert_allclose(f(X), exact_product, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(f(np.array([-1.0])), [-np.inf])


@pytest.mark.parametrize("linker", LINKERS)
def test_integer_product_in_a_float_quotient(linker: str) -> None:
    """``v ** 2 / (nu * sigma ** 2)`` with int8 ``nu = 3`` and ``sigma = 7``: the constant
    ``3`` is merged in float64, as PyTensor does, so the int8 product ``147`` (which
    would wrap around to ``-109``) is not computed."""
    v = pt.dvector("v")
    sigma_sq: Any = int8(7) ** int8(2)
    ratio = v**2 / pt.shape_padleft(int8(3) * sigma_sq)
    f = compile_([v], ratio, linker)
    np.testing.assert_allclose(f(X), X**2 / 147.0, rtol=ULPS, atol=0.0)


@pytest.mark.parametrize("linker", LINKERS)
def test_pymc_like_half_student_t_logp(linker: str) -> None:
    """The log-density PyMC builds for ``HalfStudentT.dist(nu=3, sigma=7)``."""
    v = pt.dvector("v")
    nu, sigma = int8(3), int8(7)
    sigma_sq: Any = sigma ** int8(2)
    half: Any = (nu + 1.0) / 2.0
    log_two: Any = tm.log(int8(2))
    log_scale: Any = tm.log(nu * np.pi * sigma_sq)
    norm: Any = log_two + tm.gammaln(half) - tm.gammaln(nu / 2.0)
    norm = norm - 0.5 * log_scale
    logp = pt.shape_padleft(norm) - pt.shape_padleft(half) * tm.log1p(
        v ** pt.shape_padleft(int8(2)) / pt.shape_padleft(nu * sigma_sq)
    )
    f = compile_([v], logp, linker)
    expected = np.log(2.0) + st.t.logpdf(X, 3, scale=7)
    # the normalising terms are float32 (``log(int8 2)``, ``(nu + 1.0) / 2.0``), as in PyTensor
    np.testing.assert_allclose(f(X), expected, rtol=1e-7)


def test_rewritten_graph_multiplies_by_the_merged_constant() -> None:
    x = pt.dvector("x")
    f = compile_([x], x / tm.reciprocal(int8(3)), "py", "fusion", "inplace")
    ops = scalar_ops(f)
    assert not any(isinstance(op, (TrueDiv, Reciprocal)) for op in ops)
    assert [type(op) for op in ops] == [Mul]
    (value,) = mul_constants(f)
    assert value.dtype == np.float64
    assert value == 3.0


def test_rewritten_graph_of_exponential_form() -> None:
    x = pt.dvector("x")
    inv: Any = tm.reciprocal(int8(3))
    f = compile_([x], -x / inv - tm.log(inv), "py", "fusion", "inplace")
    ops = scalar_ops(f)
    assert not any(isinstance(op, (TrueDiv, Reciprocal)) for op in ops)
    values = mul_constants(f)
    assert len(values) == 1
    assert values[0].dtype == np.float64
    assert values[0] == 3.0
    # the log of the float32 reciprocal is folded as PyTensor folds it
    folded = [
        np.asarray(i.data)
        for node in f.maker.fgraph.toposort()
        for i in node.inputs
        if isinstance(i, Constant) and np.asarray(i.data).dtype == np.float32
    ]
    assert any(np.all(d == np.log(np.reciprocal(np.float32(3)))) for d in folded)


def test_reciprocal_read_elsewhere_is_still_folded() -> None:
    x = pt.dvector("x")
    inv: Any = tm.reciprocal(int8(3))
    f = compile_([x], [x / inv, tm.log(inv)], "py", "fusion", "inplace")
    assert not any(isinstance(op, Reciprocal) for op in scalar_ops(f))
    prod, log_value = f(X)
    np.testing.assert_array_equal(prod, 3.0 * X)
    assert log_value.dtype == np.float32
    assert log_value == np.log(np.reciprocal(np.float32(3)))


def test_products_without_a_product_of_constants_are_unchanged() -> None:
    x = pt.dvector("x")
    f = compile_([x], x / pt.constant(3.0), "py", "fusion", "inplace")
    assert [type(op) for op in scalar_ops(f)] == [TrueDiv]
    np.testing.assert_array_equal(f(X), X / 3.0)
