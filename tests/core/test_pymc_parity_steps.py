"""What PyMC's step-method and sampling tests need of the graph layer, as PyTensor gives it.

* The ``warn_float64`` flag exists with PyTensor's values (PyMC's tests set it with
  ``change_flags`` and in their ``strict_float32`` fixture): ``ignore`` lets float64
  variables be created, ``warn`` warns, ``raise`` raises; float32 variables and constants
  are not checked. A graph built while it is ``ignore`` computes the same values on
  every linker.
* ``FAST_COMPILE`` answers shapes from ``infer_shape`` as PyTensor's does: ``x.shape`` of
  a statically shaped ``x`` is a constant, and ``exp(x).shape`` does not compute the
  exponential. PyMC's initial points (``make_initial_point_fn``, compiled in
  ``FAST_COMPILE``) add ``uniform(-1, 1, size=value.shape)`` jitter to each value and set
  the graph's generators in the order :func:`graph_inputs` meets them: the jitter's
  generator comes first when the size is a constant, so the jitter of a packed Cholesky
  factor (an ``AdvancedSetSubtensor1`` of static shape) is the one PyTensor draws.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.compile.sharedvalue import SharedVariable
from opweave.configdefaults import config
from opweave.graph.traversal import graph_inputs
from opweave.tensor._typing import tensor_out
from opweave.tensor.random.type import RandomType
from opweave.tensor.shape import Shape

LINKERS = ["py", "vm", "c", "cvm"]


def _function(inputs: list[Any], outputs: Any, linker: str) -> Any:
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))


def test_warn_float64_defaults_to_ignore() -> None:
    assert config.warn_float64 == "ignore"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pt.dvector("x").dtype == "float64"


def test_warn_float64_refuses_an_unknown_value() -> None:
    with pytest.raises(ValueError), config.change_flags(warn_float64="shout"):
        pass


def test_warn_float64_raise_refuses_a_float64_variable() -> None:
    with config.change_flags(warn_float64="raise"):
        with pytest.raises(TypeError, match="float64"):
            pt.dvector("x")
        x = pt.fvector("x")
        with pytest.raises(TypeError, match="float64"):
            pt.cast(x, "float64")
        assert pt.constant(np.float64(1.5)).dtype == "float64"
        assert (x * 2).dtype == "float32"


def test_warn_float64_warn_warns_once_per_variable() -> None:
    with config.change_flags(warn_float64="warn"):
        with pytest.warns(UserWarning, match="float64") as record:
            pt.dscalar("a")
        assert len(record) == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pt.iscalar("b")
            pt.fmatrix("c")


@pytest.mark.parametrize("linker", LINKERS)
def test_a_function_decorated_with_warn_float64_ignore_computes_float64(linker: str) -> None:
    @config.change_flags(floatX="float64", warn_float64="ignore")
    def build() -> Any:
        x = pt.dvector("x")
        return _function([x], tensor_out(pt.exp(x)) * 2.0 + x.sum(), linker)

    fn = build()
    value = np.array([-1.5, 0.0, 2.25])
    result = fn(value)
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, np.exp(value) * 2.0 + value.sum(), rtol=1e-15)


def _fast_compile(inputs: list[Any], outputs: Any, linker: str) -> Any:
    return opweave.function(inputs, outputs, mode=Mode(linker=linker, optimizer="fast_compile"))


# the c linker compiles no random Op (it has no C code, as in PyTensor): cvm runs it in Python
@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_fast_compile_meets_a_jitter_generator_first(linker: str) -> None:
    inner = opweave.shared(np.random.default_rng(0), name="inner")
    outer = opweave.shared(np.random.default_rng(0), name="outer")
    x = pt.dvector("x")
    index = np.array([0, 2, 5])
    drawn = tensor_out(pt.random.normal(0.0, 1.0, size=(3,), rng=inner))
    packed = tensor_out(pt.set_subtensor(pt.zeros(6)[index], x[:3] + drawn))
    jitter = tensor_out(pt.random.uniform(-1.0, 1.0, size=packed.shape, rng=outer))
    fn = _fast_compile([x], packed + jitter, linker)
    rngs = [
        var
        for var in graph_inputs(fn.maker.fgraph.outputs)
        if isinstance(var, SharedVariable) and isinstance(var.type, RandomType)
    ]
    assert [var.name for var in rngs] == ["outer", "inner"]
    # PyMC gives the i-th generator met the i-th of its generators, in this order
    for var, start in zip(rngs, [11, 12], strict=True):
        var.set_value(np.random.default_rng(start), borrow=True)
    value = np.array([0.5, -1.25, 2.0, 7.0])
    expected = np.zeros(6)
    expected[index] = value[:3] + np.random.default_rng(12).normal(0.0, 1.0, size=3)
    expected += np.random.default_rng(11).uniform(-1.0, 1.0, size=6)
    np.testing.assert_allclose(fn(value), expected, rtol=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
def test_fast_compile_answers_shapes_without_computing(linker: str) -> None:
    x = pt.dvector("x")
    m = pt.dmatrix("m")
    result = tensor_out(pt.dot(m, pt.exp(x)))
    exponential = tensor_out(pt.exp(x))
    fn = _fast_compile([x, m], [exponential.shape, result.shape, result.shape[0]], linker)
    ops = [type(node.op).__name__ for node in fn.maker.fgraph.apply_nodes]
    assert "Exp" not in ops and "Dot" not in ops
    assert not any(isinstance(node.op, Shape) for node in fn.maker.fgraph.apply_nodes)
    xv, mv = np.array([0.1, 0.2, 0.3]), np.ones((2, 3))
    shape_x, shape_r, rows = fn(xv, mv)
    np.testing.assert_array_equal(shape_x, np.shape(np.exp(xv)))
    np.testing.assert_array_equal(shape_r, np.shape(mv @ np.exp(xv)))
    assert rows == (mv @ np.exp(xv)).shape[0]
