"""Graphs PyMC's log-probability code builds, as PyTensor 2.38.3 builds and runs them.

* ``zeros(v.shape)`` for ``v`` of static shape stays a function of ``v`` (PyMC's
  ``SumTo1.log_jac_det`` is ``sum(zeros(value.shape))``, evaluated with ``value`` given).
* The ``canonicalize`` phase merges duplicate nodes where a query selects it alone (PyMC's
  IR rewrites run ``optdb.query("+canonicalize")``; two clips of one variable become one).
* A comparison Op built without arguments (``GT()``, as PyMC's comparison rewrites build
  them) has a bool output.
* ``split(x, splits_size, axis=...)`` infers the number of pieces (PyTensor's
  signature; PyMC passes ``n_splits`` by keyword).
* ``canonicalize`` writes ``Min(x)`` as ``-Max(-x)`` (PyTensor's ``min``, the form PyMC's
  order statistics recognize), and ``specialize`` turns ``-Max(-x)`` back into ``Min``.
* A value of the wrong shape for a static shape is refused with PyTensor's words as well
  ("The type's shape ((5, 3)) is not compatible with the data's ((5, 1))").
* ``opweave.graph`` offers ``RewriteDatabaseQuery`` and ``graph_rewriter`` (PyMC imports
  them from ``pytensor.graph``).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.graph as graph
import opweave.graph.rewriting as rewriting
import opweave.tensor as pt
from opweave.compile import optdb
from opweave.compile.mode import Mode
from opweave.graph.fg import FunctionGraph
from opweave.graph.traversal import ancestors
from opweave.scalar.basic import GE, GT, LE, LT, gt
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.reductions import Max, Min

LINKERS = ["py", "vm", "c", "cvm"]


@pytest.mark.parametrize("linker", LINKERS)
def test_zeros_of_a_static_shape_depends_on_the_variable(linker: str) -> None:
    v = pt.tensor("v", dtype="float64", shape=(2, 3))
    z = pt.zeros(v.shape)
    assert z.type.shape == (2, 3)
    assert v in set(ancestors([z]))
    out = pt.sum(z, axis=-1)
    fn = opweave.function([v], [out, pt.ones(v.shape) + v], mode=Mode(linker=linker))
    value = np.arange(6.0).reshape(2, 3)
    got_sum, got_ones = fn(value)
    np.testing.assert_array_equal(got_sum, np.sum(np.zeros((2, 3)), axis=-1))
    np.testing.assert_array_equal(got_ones, np.ones((2, 3)) + value)


@pytest.mark.parametrize("linker", LINKERS)
def test_sum_of_zeros_of_a_value_shape_evaluates(linker: str) -> None:
    value = pt.tensor("value", dtype="float64", shape=(1,))
    log_jac_det = pt.sum(pt.zeros(value.shape), axis=-1)
    with opweave.config.change_flags(linker=linker):
        got = log_jac_det.eval({value: np.array([0.25])})
    np.testing.assert_array_equal(got, np.sum(np.zeros(1), axis=-1))


def test_canonicalize_query_merges_duplicate_nodes() -> None:
    x = pt.dscalar("x")
    first: Any = pt.clip(x, -1.0, 1.0)
    second: Any = pt.clip(x, -1.0, 1.0)
    assert first.owner is not second.owner
    fg = FunctionGraph([x], [first, second], clone=False)
    optdb.query("+canonicalize").rewrite(fg)
    assert fg.outputs[0] is fg.outputs[1]


@pytest.mark.parametrize("linker", LINKERS)
def test_duplicate_clips_compute_numpy_values(linker: str) -> None:
    x = pt.dvector("x")
    clipped: Any = pt.clip(x, -1.0, 1.0)
    again: Any = pt.clip(x, -1.0, 1.0)
    doubled: Any = again * 2
    fn = opweave.function([x], [clipped, doubled], mode=Mode(linker=linker))
    value = np.array([-3.0, -0.5, 0.0, 0.7, 2.0])
    first, second = fn(value)
    np.testing.assert_array_equal(first, np.clip(value, -1.0, 1.0))
    np.testing.assert_array_equal(second, np.clip(value, -1.0, 1.0) * 2)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("op_class", "reference"),
    [(GT, np.greater), (LT, np.less), (GE, np.greater_equal), (LE, np.less_equal)],
)
def test_comparison_built_without_arguments(linker: str, op_class: type, reference: object) -> None:
    x = pt.dvector("x")
    out: Any = Elemwise(op_class())(x, 0.5)
    assert out.type.dtype == "bool"
    fn = opweave.function([x], out, mode=Mode(linker=linker))
    value = np.array([0.0, 0.5, 1.0, -2.0])
    got = fn(value)
    expected = reference(value, 0.5)  # type: ignore[operator]
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_comparison_built_without_arguments_equals_the_module_instance() -> None:
    assert GT() == gt
    assert hash(GT()) == hash(gt)


def test_graph_package_offers_rewrite_query_and_graph_rewriter() -> None:
    assert graph.RewriteDatabaseQuery is rewriting.RewriteDatabaseQuery
    assert graph.graph_rewriter is rewriting.graph_rewriter
    query = graph.RewriteDatabaseQuery(include=["basic"]).excluding("dimshuffle_lift")
    assert "dimshuffle_lift" in query.exclude


@pytest.mark.parametrize("linker", LINKERS)
def test_split_infers_the_number_of_pieces(linker: str) -> None:
    x = pt.dvector("x")
    first, second = pt.split(x, [2, 3], axis=0)
    third, fourth = pt.split(x, pt.as_tensor(np.array([1, 4])))
    fifth, sixth = pt.split(x, splits_size=[4, 1], n_splits=2, axis=0)
    fn = opweave.function(
        [x], [first, second, third, fourth, fifth, sixth], mode=Mode(linker=linker)
    )
    value = np.arange(5.0)
    expected = [*np.split(value, [2]), *np.split(value, [1]), *np.split(value, [4])]
    for got, want in zip(fn(value), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def _op_names(fg: FunctionGraph) -> list[str]:
    names = []
    for node in fg.toposort():
        op = node.op.scalar_op if isinstance(node.op, Elemwise) else node.op
        names.append(type(op).__name__)
    return names


def test_canonicalize_writes_min_as_negated_max() -> None:
    x = pt.dmatrix("x")
    fg = FunctionGraph([x], [pt.min(x, axis=1)], clone=False)
    optdb.query("+canonicalize").rewrite(fg)
    out = fg.outputs[0]
    assert out.owner is not None and _op_names(fg) == ["Neg", "Max", "Neg"]
    max_node = out.owner.inputs[0].owner
    assert max_node is not None and type(max_node.op) is Max
    assert max_node.op.axis == (1,)


def test_canonicalize_keeps_min_of_unsigned_integers() -> None:
    u = pt.tensor("u", dtype="uint8", shape=(None,))
    fg = FunctionGraph([u], [pt.min(u)], clone=False)
    optdb.query("+canonicalize").rewrite(fg)
    assert _op_names(fg) == ["Min"]


@pytest.mark.parametrize("linker", LINKERS)
def test_min_computes_numpy_values_and_compiles_to_min(linker: str) -> None:
    x = pt.dmatrix("x")
    i = pt.lmatrix("i")
    u = pt.tensor("u", dtype="uint8", shape=(None,))
    negated: Any = -pt.max(-x, axis=1)
    outputs = [
        pt.min(x),
        pt.min(x, axis=0),
        pt.min(x, axis=1, keepdims=True),
        pt.min(i, axis=1),
        pt.min(u),
        negated,
        opweave.grad(pt.min(x), x),
    ]
    fn = opweave.function([x, i, u], outputs, mode=Mode(linker=linker))
    xv = np.array([[0.3, -1.2, 2.0, 0.1], [1.5, 0.2, -0.7, 4.0], [-2.5, 0.0, 0.9, 1.1]])
    iv = np.array([[3, -2, 5], [7, 1, -9]])
    uv = np.array([3, 200, 7], dtype="uint8")
    expected = [
        xv.min(),
        xv.min(axis=0),
        xv.min(axis=1, keepdims=True),
        iv.min(axis=1),
        uv.min(),
        xv.min(axis=1),
        (xv == xv.min()).astype("float64"),
    ]
    for got, want in zip(fn(xv, iv, uv), expected, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    ops = {type(node.op) for node in fn.maker.fgraph.toposort()}
    assert Min in ops and Max not in ops


def test_wrong_static_shape_message_has_pytensor_words() -> None:
    x = pt.tensor("x", dtype="float64", shape=(5, 3))
    with pytest.raises(TypeError, match=re.escape("not compatible with the data's ((5, 1))")):
        x.type.filter(np.ones((5, 1)))
    np.testing.assert_array_equal(x.type.filter(np.ones((5, 3))), np.ones((5, 3)))


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_wrong_static_shape_input_is_refused_with_pytensor_words(linker: str) -> None:
    x = pt.tensor("x", dtype="float64", shape=(5, 3))
    fn = opweave.function([x], x * 2, mode=Mode(linker=linker))
    with pytest.raises(TypeError, match=re.escape("not compatible with the data's ((5, 1))")):
        fn(np.ones((5, 1)))
    np.testing.assert_array_equal(fn(np.ones((5, 3))), np.full((5, 3), 2.0))
