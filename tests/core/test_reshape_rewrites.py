"""``local_join_dims_to_reshape`` and ``local_split_dims_to_reshape``
(:mod:`opweave.tensor.rewriting.reshape`): ``join_dims`` and ``split_dims`` become
``Reshape`` in the standard rewrites, with the same static shapes and NumPy's values on
every linker (the ``c`` linker included), and can be turned off by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode, get_default_mode
from opweave.compile.rewrite_registry import optdb
from opweave.graph.basic import Apply
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting.utils import rewrite_graph
from opweave.link.lookup import available_linkers, unusable_linkers
from opweave.tensor._typing import tensor_type_of
from opweave.tensor.reshape import JoinDims, SplitDims, join_dims, pack, split_dims, unpack
from opweave.tensor.rewriting.reshape import local_join_dims_to_reshape
from opweave.tensor.shape import Reshape, SpecifyShape

#: The linkers of the core and the C backend that can run here.
LINKERS = [n for n in ("py", "vm", "c", "cvm") if n in available_linkers()]
LINKERS = [n for n in LINKERS if n not in unusable_linkers()]
RNG = np.random.default_rng(23)
EMPTY = np.zeros((0,), dtype="int64")


@dataclass(frozen=True)
class Case:
    """A ``join_dims``/``split_dims`` graph of one input and NumPy's reshape of it."""

    name: str
    in_shape: tuple[int | None, ...]  # the input's static shape
    value_shape: tuple[int, ...]  # the shape of the value it is given
    build: Callable[[Any], Any]
    numpy_shape: Callable[[tuple[int, ...]], tuple[int, ...]]


CASES = [
    Case("join_all", (None, None, None), (2, 3, 4), join_dims, lambda s: (-1,)),
    Case(
        "join_middle",
        (None, 3, None, 5),
        (2, 3, 4, 5),
        lambda x: join_dims(x, 1, 2),
        lambda s: (s[0], s[1] * s[2], s[3]),
    ),
    Case("join_static", (2, 3, 4), (2, 3, 4), lambda x: join_dims(x, 1, 2), lambda s: (2, 12)),
    Case(
        "join_none_inserts_one",
        (None, None),
        (2, 3),
        lambda x: join_dims(x, 1, 0),
        lambda s: (s[0], 1, s[1]),
    ),
    Case("join_single_dimension", (None, None), (2, 3), lambda x: join_dims(x, -1, 1), lambda s: s),
    Case("join_scalar", (), (), join_dims, lambda s: (1,)),
    Case(
        "join_length_zero",
        (None, None, None),
        (0, 3, 4),
        lambda x: join_dims(x, 1, 2),
        lambda s: (0, 12),
    ),
    Case(
        "join_zero_inside",
        (None, None, None),
        (2, 0, 4),
        lambda x: join_dims(x, 0, 2),
        lambda s: (0, 4),
    ),
    Case(
        "split_constant",
        (None, 12, None),
        (2, 12, 5),
        lambda x: split_dims(x, (3, 4), 1),
        lambda s: (s[0], 3, 4, s[2]),
    ),
    Case(
        "split_last_axis",
        (2, None),
        (2, 6),
        lambda x: split_dims(x, (3, 1, 2), -1),
        lambda s: (2, 3, 1, 2),
    ),
    Case(
        "split_single_dimension", (None, None), (6, 4), lambda x: split_dims(x, 6, 0), lambda s: s
    ),
    Case(
        "split_symbolic",
        (None, None),
        (6, 4),
        lambda x: split_dims(x, (x.shape[0] // 2, 2), 0),
        lambda s: (s[0] // 2, 2, s[1]),
    ),
    Case(
        "split_into_nothing",
        (None, 1, None),
        (2, 1, 3),
        lambda x: split_dims(x, EMPTY, 1),
        lambda s: (s[0], s[2]),
    ),
    Case(
        "split_length_zero",
        (None, None),
        (0, 3),
        lambda x: split_dims(x, (0, 5), 0),
        lambda s: (0, 5, 3),
    ),
    Case(
        "split_into_zero_length",
        (None, None),
        (2, 0),
        lambda x: split_dims(x, (4, 0), 1),
        lambda s: (2, 4, 0),
    ),
]


def ops_of(f: Any) -> list[type]:
    """The Op classes of a compiled function's graph."""
    return [type(node.op) for node in f.maker.fgraph.toposort()]


def built(case: Case) -> tuple[Any, Any]:
    x = ot.tensor("x", shape=case.in_shape)
    return x, case.build(x)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_default_mode_compiles_a_reshape_of_the_same_type(case: Case) -> None:
    x, out = built(case)
    assert isinstance(out.owner.op, JoinDims | SplitDims)
    f = opweave.function([x], out, mode=get_default_mode())
    ops = ops_of(f)
    assert Reshape in ops
    assert JoinDims not in ops
    assert SplitDims not in ops
    compiled: Any = f.maker.fgraph.outputs[0]
    assert compiled.type.shape == out.type.shape
    assert compiled.type.broadcastable == out.type.broadcastable
    assert compiled.type.dtype == out.type.dtype


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_values_equal_numpy_reshape(case: Case, linker: str) -> None:
    x, out = built(case)
    f = opweave.function([x], out, mode=Mode(linker=linker))
    assert JoinDims not in ops_of(f)
    assert SplitDims not in ops_of(f)
    xv = RNG.normal(size=case.value_shape)
    got = f(xv)
    want = xv.reshape(case.numpy_shape(xv.shape))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("linker", LINKERS)
def test_split_by_an_input_length_and_pack_round_trip(linker: str) -> None:
    x = ot.dtensor3("x")
    n = ot.lscalar("n")
    y = ot.dmatrix("y")
    packed, shapes = pack(x, y, keep_axes=0)
    x_back, y_back = unpack(packed, shapes, keep_axes=0)
    outputs = [split_dims(x, (n, 2), axis=2), x_back, y_back]
    f = opweave.function([x, y, n], outputs, mode=Mode(linker=linker))
    assert JoinDims not in ops_of(f)
    assert SplitDims not in ops_of(f)
    xv = RNG.normal(size=(2, 3, 4))
    yv = RNG.normal(size=(2, 5))
    split, x_got, y_got = f(xv, yv, 2)
    np.testing.assert_array_equal(split, xv.reshape(2, 3, 2, 2))
    np.testing.assert_array_equal(x_got, xv)
    np.testing.assert_array_equal(y_got, yv)


def test_the_c_linker_runs_them() -> None:
    if "c" not in LINKERS:
        pytest.skip("the c linker cannot run here")
    x = ot.dtensor3("x")
    f = opweave.function(
        [x], [join_dims(x, 1), split_dims(x, (2, 2), 2)], mode=Mode(linker="c")
    )  # fmt: skip
    xv = RNG.normal(size=(2, 3, 4))
    joined, split = f(xv)
    np.testing.assert_array_equal(joined, xv.reshape(2, 12))
    np.testing.assert_array_equal(split, xv.reshape(2, 3, 2, 2))


def test_registered_in_canonicalize_with_pytensors_tags() -> None:
    for name in ("local_join_dims_to_reshape", "local_split_dims_to_reshape"):
        assert name in optdb["canonicalize"]
        assert {"fast_run", "fast_compile", name} <= optdb["canonicalize"].tags(name)


def test_rewrite_graph_canonicalize_keeps_the_static_shape() -> None:
    """PyTensor's tests: a FunctionGraph rewritten with ``canonicalize``."""
    x = ot.tensor("x", shape=(2, 10, 3))
    fg = FunctionGraph([x], [split_dims(x, axis=1, shape=(2, 5, 1))])
    rewrite_graph(fg, include=("canonicalize",))
    assert not any(isinstance(node.op, SplitDims) for node in fg.toposort())
    assert sum(isinstance(node.op, Reshape) for node in fg.toposort()) == 1
    assert tensor_type_of(fg.outputs[0]).shape == (2, 2, 5, 1, 3)

    y = ot.tensor("y", shape=(2, 2, 5, 1, 3))
    fg = FunctionGraph([y], [join_dims(y, start_axis=1, n_axes=3)])
    rewrite_graph(fg, include=("canonicalize",))
    assert not any(isinstance(node.op, JoinDims) for node in fg.toposort())
    assert sum(isinstance(node.op, Reshape) for node in fg.toposort()) == 1
    assert tensor_type_of(fg.outputs[0]).shape == (2, 10, 3)


def test_excluding_the_rewrite_keeps_the_op() -> None:
    x = ot.dtensor3("x")
    outputs = [join_dims(x, 1), split_dims(x, (2, 2), 2)]
    xv = RNG.normal(size=(2, 3, 4))
    want = [xv.reshape(2, 12), xv.reshape(2, 3, 2, 2)]

    mode = get_default_mode().excluding("local_join_dims_to_reshape")
    ops = ops_of(opweave.function([x], outputs, mode=mode))
    assert JoinDims in ops
    assert SplitDims not in ops

    mode = get_default_mode().excluding("local_split_dims_to_reshape")
    ops = ops_of(opweave.function([x], outputs, mode=mode))
    assert SplitDims in ops
    assert JoinDims not in ops

    mode = Mode(linker="py").excluding("local_join_dims_to_reshape", "local_split_dims_to_reshape")
    f = opweave.function([x], outputs, mode=mode)
    assert JoinDims in ops_of(f)
    assert SplitDims in ops_of(f)
    for got, expected in zip(f(xv), want, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_a_less_specific_reshape_keeps_the_static_shape_through_specify_shape() -> None:
    """A node whose Type knows a length the new shape cannot tell gets it back."""
    x = ot.dmatrix("x")
    node = Apply(JoinDims(0, 2), [x], [ot.tensor(shape=(6,), dtype="float64")])
    fg = FunctionGraph([x], node.outputs, clone=False)
    result: Any = local_join_dims_to_reshape.transform(fg, node)
    [new] = result
    assert isinstance(new.owner.op, SpecifyShape)
    assert isinstance(new.owner.inputs[0].owner.op, Reshape)
    assert new.type == node.outputs[0].type
    xv = RNG.normal(size=(2, 3))
    f = opweave.function([x], new, mode=Mode(linker="py"))
    np.testing.assert_array_equal(f(xv), xv.reshape(-1))
    with pytest.raises(AssertionError, match="has length 4, expected 6"):
        f(RNG.normal(size=(2, 2)))
