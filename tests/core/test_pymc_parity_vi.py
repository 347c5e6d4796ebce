"""What PyMC's variational, ODE and SMC tests need of the graph layer, as PyTensor gives it.

* A compiled function's implicit inputs (the shared variables it reads) come in the order a
  left-to-right depth-first walk meets them, through the outputs and then through each
  update, and its update outputs follow the order of the inputs they update. PyMC gives new
  states to the random generators of a compiled function in the order ``graph_inputs`` finds
  them in ``f.maker.fgraph.outputs``: with another order each generator draws another stream
  (the jitter of ``pm.sample``'s initial points, hence every draw).
* ``as_tensor_variable`` of an object PyTensor has no conversion for (a string, ``None``)
  raises a ``NotImplementedError`` as PyTensor does (PyMC's ``total_size=["foo"]`` check
  expects one), which is still a ``TypeError``; a number, array, list or tuple that cannot
  be converted raises a plain ``TypeError``.
* ``graph_replace`` takes NumPy arrays and scalars as replacements, made constants of the
  replaced variable's Type (PyMC's ``Approximation.sample_node(more_replacements=...)``
  passes the new data as an array).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import graph_inputs
from opweave.graph.replace import graph_replace
from opweave.tensor.constructors import NoTensorConversionError
from opweave.tensor.random.type import RandomGeneratorType

LINKERS = ["py", "vm", "c", "cvm"]
# The random variable Ops have no C code (nor in PyTensor): the whole-graph C linker refuses them.
RANDOM_LINKERS = ["py", "vm", "cvm"]


def _function(inputs: list[Any], outputs: Any, linker: str, **kwargs: Any) -> Any:
    return opweave.function(inputs, outputs, mode=Mode(linker=linker), **kwargs)


def _rngs_in_graph_order(fn: Any) -> list[SharedVariable]:
    return [
        v
        for v in graph_inputs(fn.maker.fgraph.outputs)
        if isinstance(v, SharedVariable) and isinstance(v.type, RandomGeneratorType)
    ]


def _two_uniform_draws() -> tuple[Any, Any, Any, Any, dict[Any, Any]]:
    ra = opweave.shared(np.random.default_rng(1), name="ra")
    rb = opweave.shared(np.random.default_rng(2), name="rb")
    a = pt.random.uniform(-1, 1, rng=ra)
    b = pt.random.uniform(-1, 1, size=2, rng=rb)
    # the updates in the order PyMC's collect_default_updates finds them
    updates = {rb: b.owner.outputs[0], ra: a.owner.outputs[0]}
    return ra, rb, a + 0.0, b + np.zeros(2), updates


@pytest.mark.parametrize("linker", RANDOM_LINKERS)
def test_generators_restarted_in_graph_order_draw_pytensors_streams(linker: str) -> None:
    _, _, x, y, updates = _two_uniform_draws()
    fn = _function([], [x, y], linker, updates=updates)
    rngs = _rngs_in_graph_order(fn)
    assert [rng.name for rng in rngs] == ["rb", "ra"]
    states = [100, 200]
    for rng, state in zip(rngs, states, strict=True):
        rng.set_value(np.random.Generator(np.random.PCG64(state)), borrow=True)
    got_a, got_b = fn()
    expected_b = np.random.Generator(np.random.PCG64(states[0])).uniform(-1, 1, size=2)
    expected_a = np.random.Generator(np.random.PCG64(states[1])).uniform(-1, 1)
    np.testing.assert_array_equal(got_a, expected_a)
    np.testing.assert_array_equal(got_b, expected_b)


@pytest.mark.parametrize("linker", RANDOM_LINKERS)
def test_implicit_inputs_follow_the_outputs_not_the_updates(linker: str) -> None:
    ra, rb, x, y, updates = _two_uniform_draws()
    assert _function([], [x, y], linker, updates=updates).maker.implicit == [ra, rb]
    assert _function([], [y, x], linker, updates=updates).maker.implicit == [rb, ra]
    reversed_updates = dict(reversed(list(updates.items())))
    fn = _function([], [x + y.sum()], linker, updates=reversed_updates)
    assert fn.maker.implicit == [ra, rb]


@pytest.mark.parametrize("linker", LINKERS)
def test_update_outputs_follow_the_order_of_their_inputs(linker: str) -> None:
    first: Any = opweave.shared(np.float64(1.0), name="first")
    second: Any = opweave.shared(np.float64(10.0), name="second")
    x = pt.dscalar("x")
    fn = _function(
        [x], x * first + second, linker, updates={second: second + x, first: first * 2.0}
    )
    graph = fn.maker.fgraph
    n_out = 1
    mapped = [graph.update_mapping[k] for k in range(n_out, len(graph.outputs))]
    assert mapped == sorted(mapped)
    assert [graph.inputs[k].name for k in mapped] == ["first", "second"]
    np.testing.assert_array_equal(fn(3.0), 3.0 * 1.0 + 10.0)
    np.testing.assert_array_equal(fn(3.0), 3.0 * 2.0 + 13.0)
    assert first.get_value() == 4.0
    assert second.get_value() == 16.0


@pytest.mark.parametrize("value", ["foo", None, object()], ids=["str", "None", "object"])
def test_conversion_of_an_unconvertible_object_is_not_implemented(value: Any) -> None:
    with pytest.raises(NotImplementedError, match="Cannot convert") as info:
        pt.as_tensor_variable(value)
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, NoTensorConversionError)


@pytest.mark.parametrize("value", [["foo"], np.array(["a", "b"])], ids=["list", "array"])
def test_conversion_of_a_value_of_unsupported_dtype_is_a_type_error(value: Any) -> None:
    with pytest.raises(TypeError, match="cannot convert") as info:
        pt.as_tensor_variable(value)
    assert not isinstance(info.value, NotImplementedError)


@pytest.mark.parametrize("linker", LINKERS)
def test_conversion_of_numbers_and_sequences_still_evaluates(linker: str) -> None:
    values: list[Any] = [3, 2.5, np.float32(1.5), [1, 2], (4.0, 5.0), np.arange(3)]
    for value in values:
        out = pt.as_tensor_variable(value) * 2
        np.testing.assert_array_equal(_function([], out, linker)(), np.asarray(value) * 2)


@pytest.mark.parametrize("linker", LINKERS)
def test_graph_replace_with_arrays_makes_constants(linker: str) -> None:
    x, s = pt.dvector("x"), pt.dscalar("s")
    out = pt.exp(x) * s
    data = np.linspace(-1.0, 1.0, 5)
    values: dict[Any, Any] = {x: data, s: np.float64(3.0)}
    replaced = graph_replace(out, values)
    np.testing.assert_allclose(_function([], replaced, linker)(), np.exp(data) * 3.0, rtol=1e-15)
    # integers are converted to the float64 of the replaced variable
    integers: dict[Any, Any] = {x: np.arange(4)}
    replaced_int = graph_replace(out, integers)
    assert replaced_int.dtype == "float64"
    np.testing.assert_allclose(
        _function([s], replaced_int, linker)(2.0), np.exp(np.arange(4.0)) * 2.0, rtol=1e-15
    )


def test_graph_replace_with_an_array_of_the_wrong_rank_fails() -> None:
    x = pt.dvector("x")
    with pytest.raises(TypeError, match="expected 1 dimension"):
        graph_replace(pt.exp(x), dict[Any, Any]({x: np.ones((2, 2))}))
