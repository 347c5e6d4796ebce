"""What PyMC's model tests need of the graph layer, as PyTensor gives it.

* The gradient of a ``switch`` is 0, not ``nan``, where the condition rules out a branch
  whose derivative is ``nan`` there (``local_mul_switch_sink``, ``local_div_switch_sink``
  and the zero terms ``local_add_zero_fill`` drops): ``Model.dlogp`` of a bounded density
  at a point outside its support.
* A fill reads only the shape of its first input: ``second(check(x), v)`` does not
  evaluate the check (``Model.debug(fn="dlogp")`` at invalid parameters).
* Shared variables and elementwise Ops pickle with protocols 0 and 1 too.
* ``debugprint(..., done=...)`` shares its labels between calls (``Model.debug``).
* The ``exception_verbosity`` flag exists (PyMC's test configuration sets it); ``high``
  adds the graph of the node that failed to the error's notes.
* A ``TensorConstant`` has the shape of its value whatever Type it is given
  (``freeze_dims_and_data`` builds constants from a shared variable's Type).
* A factor of both the numerator and the denominator of a product cancels
  (``local_mul_div_cancel``, ``local_greedy_distributor``): the gradients of ``log(x / b)``
  and of a Weibull log-density are finite where ``x`` is 0.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.configdefaults import config
from opweave.printing import debugprint
from opweave.raise_op import Assert
from opweave.tensor._typing import tensor_out
from opweave.tensor.variable import TensorConstant

LINKERS = ["py", "vm", "c", "cvm"]


def _function(inputs: list[Any], outputs: Any, linker: str) -> Any:
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))


@pytest.mark.parametrize("linker", LINKERS)
def test_gradient_of_a_switch_is_zero_where_the_other_branch_is_taken(linker: str) -> None:
    x = pt.dvector("x")
    cost = tensor_out(pt.switch(x >= 0, pt.sqrt(x), 0.0)).sum()
    fn = _function([x], opweave.grad(cost, x), linker)
    value = np.array([-1.0, 4.0, -9.0, 0.25])
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(value >= 0, 0.5 / np.sqrt(value), 0.0)
    np.testing.assert_allclose(fn(value), expected, rtol=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
def test_gradient_of_a_bounded_log_density_outside_its_support(linker: str) -> None:
    # a half-normal log-density of exp(v) with scale s, -inf below 0, as PyMC writes it
    v, s = pt.dvector("v"), pt.dvector("s")
    value = tensor_out(pt.exp(v))
    logp = tensor_out(pt.switch(value >= 0, -0.5 * (value / s) ** 2 - pt.log(s), -np.inf)) + v
    fn = _function([v, s], opweave.grad(logp.sum(), [v, s]), linker)
    v_val = np.array([0.0, np.nan, 0.5])
    s_val = np.array([1.0, -1.0, 2.0])
    got_v, got_s = fn(v_val, s_val)
    with np.errstate(invalid="ignore"):
        inside = np.exp(v_val) >= 0
        want_v = np.where(inside, -(np.exp(v_val) ** 2) / s_val**2, 0.0) + 1.0
        want_s = np.where(inside, np.exp(v_val) ** 2 / s_val**3 - 1.0 / s_val, 0.0)
    np.testing.assert_allclose(got_v, want_v, rtol=1e-14)
    np.testing.assert_allclose(got_s, want_s, rtol=1e-14)


@pytest.mark.parametrize("linker", LINKERS)
def test_quotient_of_a_switch_with_a_zero_branch(linker: str) -> None:
    x = pt.dvector("x")
    out = tensor_out(pt.switch(x < 0, 0.0, pt.exp(x))) / pt.sqrt(x)
    fn = _function([x], out, linker)
    value = np.array([-4.0, 1.0, 4.0])
    with np.errstate(invalid="ignore"):
        expected = np.where(value < 0, 0.0, np.exp(value) / np.sqrt(value))
    np.testing.assert_allclose(fn(value), expected, rtol=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
def test_zero_fill_terms_do_not_keep_a_nan_factor(linker: str) -> None:
    x = pt.dvector("x")
    out = (tensor_out(pt.switch(x > 0, x, 0.0)) + pt.second(x, 0.0)) * pt.log(x)
    fn = _function([x], out, linker)
    value = np.array([-1.0, 2.0, 0.5])
    with np.errstate(invalid="ignore"):
        expected = np.where(value > 0, value * np.log(value), 0.0)
    np.testing.assert_allclose(fn(value), expected, rtol=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("static", [True, False])
def test_a_fill_does_not_evaluate_a_check_of_its_shape_input(linker: str, static: bool) -> None:
    x = pt.tensor("x", dtype="float64", shape=(3,) if static else (None,))
    checked = Assert("x > 0")(pt.log(x), pt.all(x > 0))
    fn = _function([x], pt.second(checked, pt.as_tensor([1.5])), linker)
    np.testing.assert_array_equal(fn(np.array([1.0, -1.0, 2.0])), np.full(3, 1.5))
    # the check itself still raises where its value is used
    checked_fn = _function([x], checked, linker)
    with pytest.raises(AssertionError, match="x > 0"):
        checked_fn(np.array([1.0, -1.0, 2.0]))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_shared_variables_and_elementwise_ops_pickle_with_every_protocol(protocol: int) -> None:
    value = np.arange(4.0)
    shared = opweave.shared(value, name="s")
    x = pt.dvector("x")
    out = x + shared
    restored_shared = pickle.loads(pickle.dumps(shared, protocol))
    np.testing.assert_array_equal(restored_shared.get_value(), value)
    restored_out = pickle.loads(pickle.dumps(out, protocol))
    assert restored_out.owner.op == out.owner.op
    x2, out2 = pickle.loads(pickle.dumps((x, out), protocol))
    fn = opweave.function([x2], out2)
    np.testing.assert_array_equal(fn(np.ones(4)), np.ones(4) + value)


def test_debugprint_done_shares_labels_between_calls() -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    total = x + y
    done: dict = {}
    first = debugprint(pt.exp(total), file="str", done=done)
    second = debugprint(pt.log(total), file="str", done=done)
    add_first = next(line for line in first.splitlines() if "Add" in line)
    add_second = next(line for line in second.splitlines() if "Add" in line)
    label = add_first[add_first.index("[id") :].split("]")[0] + "]"
    assert label in add_second
    assert add_second.rstrip().endswith("...")
    assert "x [id" not in second  # printed in full by the first call only
    assert total.owner in done and done[total.owner] == label
    # the new node of the second call gets a label not used by the first
    log_label = second.splitlines()[0].split("[id")[1].split("]")[0]
    assert f"[id{log_label}]" not in first


def test_debugprint_without_done_prints_everything() -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    total = x + y
    text = debugprint(pt.log(total), file="str")
    assert "x [id" in text and "y [id" in text
    assert not text.rstrip().endswith("...")


@pytest.mark.parametrize("value", ["low", "medium", "high"])
def test_exception_verbosity_flag_takes_pytensor_values(value: str) -> None:
    with config.change_flags(exception_verbosity=value):
        assert config.exception_verbosity == value


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_high_exception_verbosity_adds_the_graph_of_the_failing_node(linker: str) -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    f = opweave.function([x, y], pt.exp(x) + y * 2.0, mode=opweave.Mode(linker=linker))
    notes = {}
    for value in ("low", "high"):
        with config.change_flags(exception_verbosity=value), pytest.raises(ValueError) as info:
            f(np.ones(2), np.ones(3))
        notes[value] = getattr(info.value, "__notes__", [])
    graph = [n for n in notes["high"] if n.startswith("The graph of the node that failed")]
    assert len(graph) == 1 and " | x TensorType(float64" in graph[0]
    assert not any(n.startswith("The graph of the node") for n in notes["low"])


def test_exception_verbosity_flag_refuses_other_values() -> None:
    with pytest.raises(ValueError):
        with config.change_flags(exception_verbosity="everything"):
            pass


def test_a_tensor_constant_takes_the_shape_of_its_value() -> None:
    # PyMC's freeze_dims_and_data builds constants from a shared variable's Type
    vector_type = pt.TensorType("int32", shape=(None,))
    const = TensorConstant(vector_type, np.array([1, 2, 3], dtype="int32"), name="d")
    assert const.type == pt.TensorType("int32", shape=(3,))
    matrix_type = pt.TensorType("float64", shape=(2, None))
    assert TensorConstant(matrix_type, np.zeros((2, 4))).type.shape == (2, 4)


@pytest.mark.parametrize("linker", LINKERS)
def test_a_product_with_a_constant_of_an_unknown_type_shape_has_a_static_shape(
    linker: str,
) -> None:
    data = np.array([1, 2, 3], dtype="int32")
    const = TensorConstant(pt.TensorType("int32", shape=(None,)), data)
    x = pt.dvector("x")
    out = const * x
    assert out.type.shape == (3,)
    fn = _function([x], out, linker)
    np.testing.assert_array_equal(fn(np.array([0.5, 1.0, 2.0])), data * np.array([0.5, 1.0, 2.0]))
    with pytest.raises(ValueError):
        fn(np.ones(4))


@pytest.mark.parametrize("linker", LINKERS)
def test_gradient_of_the_log_of_a_ratio_where_the_numerator_is_zero(linker: str) -> None:
    x, b = pt.dvector("x"), pt.dscalar("b")
    cost = (0.5 * tensor_out(pt.log(x / b))).sum()
    fn = _function([x, b], opweave.grad(cost, b), linker)
    value = np.array([0.0, 0.5, 2.0])
    np.testing.assert_allclose(fn(value, 0.7), -0.5 * len(value) / 0.7, rtol=1e-14)


@pytest.mark.parametrize("linker", LINKERS)
def test_a_factor_that_gives_the_shape_is_not_cancelled(linker: str) -> None:
    row, m = pt.row("r"), pt.dmatrix("m")
    fn = _function([row, m], row * pt.exp(m) / pt.exp(m), linker)
    row_value, m_value = np.array([[1.0, 2.0, 3.0]]), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    got = fn(row_value, m_value)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, np.broadcast_to(row_value, (2, 3)), rtol=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("constant_data", [True, False])
def test_gradient_of_a_weibull_log_density_at_zero(linker: str, constant_data: bool) -> None:
    # PyMC's Weibull log-density (alpha = 1.5) of data holding a 0, by its scale ``b``
    data = np.array([0.0, 0.5, 2.0])
    b = pt.dscalar("b")
    x = pt.as_tensor(data) if constant_data else pt.dvector("x")
    alpha = 1.5
    ratio = tensor_out(x / b)
    logp = -tensor_out(pt.log(b)) + (alpha - 1.0) * tensor_out(pt.log(ratio)) - ratio**alpha
    inputs = [b] if constant_data else [b, x]
    fn = _function(inputs, opweave.grad(tensor_out(logp).sum(), b), linker)
    b_value = 0.7
    got = fn(b_value) if constant_data else fn(b_value, data)
    expected = np.sum(-alpha / b_value + alpha * data**alpha / b_value ** (alpha + 1))
    np.testing.assert_allclose(got, expected, rtol=1e-13)


@pytest.mark.parametrize("linker", LINKERS)
def test_a_factor_twice_in_the_denominator_cancels_once(linker: str) -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    fn = _function([x, y], tensor_out(x * y / x) / x, linker)
    x_value, y_value = np.array([0.5, 2.0, -4.0]), np.array([1.0, 3.0, 5.0])
    np.testing.assert_allclose(fn(x_value, y_value), y_value / x_value, rtol=1e-15)
