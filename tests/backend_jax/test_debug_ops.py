"""The ``jax`` lowerings of ``Print`` and ``FromFunctionOp`` against the ``py`` linker:
the same printed text and values, and a refusal where XLA cannot know an output shape."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.ops import wrap_py
from opweave.graph.utils import NoImplementationError
from opweave.printing import Print
from opweave.tensor.type import TensorType, dmatrix, dvector

from .conftest import OPTIMIZERS, compile_both


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_print_prints_as_on_py_and_passes_the_value(capfd: Any, optimizer: Any) -> None:
    x = pt.dvector("x")
    shown: Any = Print("x is", attrs=("__str__", "shape"))(x)
    y = shown * 2
    f, g = compile_both([x], [y], optimizer)
    value = np.array([1.5, -2.0, 3.25])
    capfd.readouterr()
    want = g(value)[0]
    printed_py = capfd.readouterr().out
    got = f(value)[0]
    printed_jax = capfd.readouterr().out
    np.testing.assert_array_equal(got, want)
    assert printed_py == "x is __str__ = [ 1.5  -2.    3.25]\nx is shape = (3,)\n"
    assert printed_jax == printed_py


def test_print_calls_global_fn_on_every_call_with_the_value() -> None:
    seen: list[tuple[str, np.ndarray]] = []
    op = Print("m", global_fn=lambda op, value: seen.append((op.message, np.array(value))))
    x = pt.dvector("x")
    f = opweave.function([x], pt.exp(op(x)), mode=opweave.Mode(linker="jax"))
    first, second = np.array([0.0, 1.0]), np.array([2.0, 3.0, 4.0])
    np.testing.assert_allclose(f(first), np.exp(first), rtol=1e-15)
    f(second)
    assert [m for m, _ in seen] == ["m", "m"]
    np.testing.assert_array_equal(seen[0][1], first)
    np.testing.assert_array_equal(seen[1][1], second)
    assert isinstance(seen[0][1], np.ndarray)


def test_prints_run_in_graph_order(capfd: Any) -> None:
    x = pt.dvector("x")
    a: Any = Print("first")(x)
    b: Any = Print("second")(a + 1)
    f, g = compile_both([x], [b * 2], None)
    capfd.readouterr()
    g(np.array([1.0]))
    printed_py = capfd.readouterr().out
    f(np.array([1.0]))
    assert capfd.readouterr().out == printed_py
    assert printed_py.index("first") < printed_py.index("second")


def _shape_of_input(node: Any, shapes: list[Any]) -> list[Any]:
    return [shapes[0]]


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_python_function_with_an_infer_shape_runs_through_a_callback(optimizer: Any) -> None:
    calls: list[int] = []

    @wrap_py(dvector, dvector, infer_shape=_shape_of_input)
    def running_max(v: np.ndarray) -> np.ndarray:
        calls.append(len(v))
        return np.maximum.accumulate(v)

    x = pt.dvector("x")
    out: Any = running_max(x)
    f, g = compile_both([x], [out + 1], optimizer)
    value = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    got, want = f(value)[0], g(value)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert calls[-1] == 7


def test_python_function_with_static_output_shapes_and_two_outputs() -> None:
    fixed = TensorType("float64", shape=(2,))

    @wrap_py([dmatrix], [fixed, dvector], infer_shape=lambda node, s: [(2,), (s[0][0],)])
    def extremes(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.array([m.min(), m.max()]), m.sum(axis=1)

    m = pt.dmatrix("m")
    outs: Any = extremes(m)
    f, g = compile_both([m], list(outs))
    value = np.arange(12.0).reshape(3, 4)
    for got, want in zip(f(value), g(value), strict=True):
        np.testing.assert_array_equal(got, want)


def test_python_function_without_output_shapes_is_refused() -> None:
    @wrap_py(dvector, dvector)
    def positives(v: np.ndarray) -> np.ndarray:
        return v[v > 0]

    x = pt.dvector("x")
    with pytest.raises(NoImplementationError, match="cannot run its Python function through"):
        opweave.function([x], positives(x), mode=opweave.Mode(linker="jax"))
