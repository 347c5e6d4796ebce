"""``opweave.tensor.reshape``: ``join_dims``/``JoinDims``, ``split_dims``/``SplitDims``,
``pack`` and ``unpack`` (PyTensor's contract), against NumPy's reshape on every linker."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.gradient import verify_grad
from opweave.graph.replace import vectorize_graph
from opweave.link.lookup import available_linkers, unusable_linkers
from opweave.tensor.reshape import (
    JoinDims,
    SplitDims,
    _analyze_axes_list,
    join_dims,
    pack,
    split_dims,
    unpack,
)

#: ``py`` and ``vm``; ``cvm`` with the C backend; ``jax`` with the JAX backend.
LINKERS = [n for n in ("py", "vm", "cvm", "jax") if n in available_linkers()]
LINKERS = [n for n in LINKERS if n not in unusable_linkers()]
RNG = np.random.default_rng(11)


def op_of(v: Any) -> Any:
    """The Op of the node that computes ``v``."""
    assert v.owner is not None
    return v.owner.op


def run(inputs: list[Any], outputs: Any, *values: Any, linker: str) -> Any:
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))(*values)


def values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype.startswith("int"):
        return RNG.integers(-50, 50, size=shape).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


# ------------------------------------------------------------------------ types, shapes


def test_join_dims_static_shapes_and_errors() -> None:
    x = ot.tensor("x", shape=(2, 3, 4, 5))
    assert join_dims(x).type.shape == (120,)
    assert join_dims(x, n_axes=1).type.shape == (2, 3, 4, 5)
    assert join_dims(x, n_axes=0).type.shape == (1, 2, 3, 4, 5)
    assert join_dims(x, n_axes=2).type.shape == (6, 4, 5)
    assert join_dims(x, start_axis=1, n_axes=2).type.shape == (2, 12, 5)
    assert join_dims(x, start_axis=-3, n_axes=2).type.shape == (2, 12, 5)
    assert join_dims(x, start_axis=2).type.shape == (2, 3, 20)
    assert join_dims(ot.tensor("y", shape=(2, None, 4)), 0, 2).type.shape == (None, 4)
    assert join_dims(ot.dscalar("s")).type.shape == (1,)
    with pytest.raises(IndexError, match="Axis 5 is out of bounds for array of dimension 4"):
        join_dims(x, start_axis=5)
    with pytest.raises(
        ValueError,
        match="JoinDims was asked to join dimensions 0 to 5, but input x has only 4 dimensions",
    ):
        join_dims(x, n_axes=5)
    with pytest.raises(ValueError, match="start_axis must be non-negative"):
        JoinDims(-1, 2)
    with pytest.raises(ValueError, match="n_axes must be non-negative"):
        JoinDims(0, -1)
    assert op_of(join_dims(x, 1, 2)) == JoinDims(1, 2)
    assert JoinDims(1, 2).view_map == {0: [0]}


@pytest.mark.parametrize(
    ("axis", "shape", "expected"),
    [
        (0, ot.as_tensor([2, 3]), (2, 3, 4, 6)),
        (2, [2, 3], (6, 4, 2, 3)),
        (-1, ot.as_tensor(6), (6, 4, 6)),
        (-1, 6, (6, 4, 6)),
        (1, np.array([2, 2]), (6, 2, 2, 6)),
    ],
    ids=["tensor list", "integer list", "0-d tensor", "integer", "array"],
)
def test_split_dims_static_shapes(axis: int, shape: Any, expected: tuple[int, ...]) -> None:
    x = ot.tensor("x", shape=(6, 4, 6))
    out = split_dims(x, shape=shape, axis=axis)
    assert out.type.shape == expected
    assert isinstance(op_of(out), SplitDims)
    xv = values((6, 4, 6), "float64")
    np.testing.assert_array_equal(run([x], out, xv, linker="py"), xv.reshape(expected))


def test_split_dims_symbolic_lengths_and_errors() -> None:
    x = ot.dmatrix("x")
    n = ot.lscalar("n")
    out = split_dims(x, shape=[n, 3], axis=1)
    assert out.type.shape == (None, None, 3)
    xv = values((2, 12), "float64")
    got = run([x, n], out, xv, 4, linker="py")
    np.testing.assert_array_equal(got, xv.reshape(2, 4, 3))
    with pytest.raises(TypeError, match="shape must be an integer tensor"):
        SplitDims(0)(x, ot.as_tensor([1.5, 2.0]))
    with pytest.raises(TypeError, match="shape must be a 1-D tensor"):
        SplitDims(0)(x, ot.as_tensor([[1, 2]]))
    with pytest.raises(ValueError, match="SplitDims axis must be non-negative"):
        SplitDims(-1)
    with pytest.raises(ValueError):  # NumPy's: the lengths do not multiply to the length
        run([x, n], out, xv, 5, linker="py")


def test_split_into_no_dimensions_drops_a_length_one_axis() -> None:
    x = ot.tensor("x", shape=(1, 4, 6))
    out = split_dims(x, axis=0, shape=ot.as_tensor(np.zeros((0,), dtype="int32")))
    assert out.type.shape == (4, 6)
    xv = values((1, 4, 6), "float64")
    np.testing.assert_array_equal(run([x], out, xv, linker="py"), xv[0])


def test_infer_shape_needs_no_kernel() -> None:
    y = ot.tensor("y", shape=(None, None, 4))
    f = opweave.function([y], join_dims(y, 0, 2).shape, mode=Mode(linker="py"))
    assert not any(isinstance(n.op, JoinDims) for n in f.maker.fgraph.toposort())
    np.testing.assert_array_equal(f(np.zeros((3, 5, 4))), [15, 4])
    n = ot.lscalar("n")
    g = opweave.function(
        [y, n], split_dims(y, [n, 2], axis=2).shape, mode=Mode(linker="py")
    )  # fmt: skip
    assert not any(isinstance(node.op, SplitDims) for node in g.maker.fgraph.toposort())
    np.testing.assert_array_equal(g(np.zeros((3, 5, 4)), 2), [3, 5, 2, 2])


# ------------------------------------------------------------------------ values


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_join_and_split_dims_values(linker: str, dtype: str) -> None:
    x = ot.tensor("x", shape=(None, None, None, None), dtype=dtype)
    xv = values((2, 3, 4, 5), dtype)
    outputs = [
        join_dims(x),
        join_dims(x, 1, 2),
        join_dims(x, 1, 0),
        join_dims(x, -1, 1),
        split_dims(join_dims(x, 1, 2), (3, 4), axis=1),
        split_dims(x, (5, 1), axis=-1),
    ]
    got = run([x], outputs, xv, linker=linker)
    expected = [
        xv.reshape(-1),
        xv.reshape(2, 12, 5),
        xv.reshape(2, 1, 3, 4, 5),
        xv,
        xv,
        xv.reshape(2, 3, 4, 5, 1),
    ]
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(g, e)


def test_whole_graph_c_linker_refuses_them_by_name() -> None:
    pytest.importorskip("opweave_c")
    from opweave_c.linkers.c_linker import MissingCCodeError

    x = ot.dtensor3("x")
    for out, name in ((join_dims(x, 1), "JoinDims"), (split_dims(x, (2, 2), 2), "SplitDims")):
        try:
            f = opweave.function([x], out, mode=Mode(linker="c"))
        except MissingCCodeError as err:
            assert f"{name}" in str(err) and "has no C implementation" in str(err)
        else:  # a rewrite made it a Reshape, which has C
            xv = values((2, 3, 4), "float64")
            want = run([x], out, xv, linker="py")
            np.testing.assert_array_equal(f(xv), want)


# ------------------------------------------------------------------------ gradients, vectorize


@pytest.mark.parametrize("linker", ["py", *(["cvm"] if "cvm" in LINKERS else [])])
def test_gradients(linker: str) -> None:
    mode = Mode(linker=linker)
    rng = np.random.default_rng(5)
    xv = rng.normal(size=(2, 3, 4, 5))
    verify_grad(lambda x: join_dims(x, start_axis=1, n_axes=2), [xv], rng=rng, mode=mode)
    verify_grad(lambda x: join_dims(x, 0, 0) * 2.0, [xv], rng=rng, mode=mode)
    yv = rng.normal(size=(6, 4, 6))
    verify_grad(lambda y: split_dims(y, shape=(2, 3), axis=2), [yv], rng=rng, mode=mode)
    verify_grad(lambda y: split_dims(y, shape=6, axis=0), [yv], rng=rng, mode=mode)


def test_gradient_is_the_output_gradient_reshaped_and_shape_is_disconnected() -> None:
    x = ot.dtensor3("x")
    w = ot.dtensor3("w")
    n = ot.lscalar("n")
    out = split_dims(x, [n, 2], axis=1)
    cost = (out * ot.reshape(w, out.shape)).sum()
    g = opweave.grad(cost, x)
    xv, wv = values((2, 4, 3), "float64"), values((2, 4, 3), "float64")
    got = run([x, w, n], g, xv, wv, 2, linker="py")
    np.testing.assert_array_equal(got, wv)
    assert op_of(out).connection_pattern(out.owner) == [[True], [False]]
    with pytest.raises(Exception, match=r"(?i)disconnected|not part|not connected"):
        opweave.grad(cost, n)


def test_vectorize_graph_moves_the_axes_past_the_batch() -> None:
    x = ot.tensor("x", shape=(3, 5))
    xb = ot.tensor("xb", shape=(10, 3, 5))
    joined = vectorize_graph(join_dims(x), {x: xb})
    assert joined.type.shape == (10, 15)
    assert op_of(joined) == JoinDims(1, 2)
    v = ot.tensor("v", shape=(10,))
    vb = ot.tensor("vb", shape=(3, 10))
    split = vectorize_graph(split_dims(v, shape=(5, 2), axis=0), {v: vb})
    assert split.type.shape == (3, 5, 2)
    assert op_of(split) == SplitDims(1)
    xbv, vbv = values((10, 3, 5), "float64"), values((3, 10), "float64")
    got = run([xb, vb], [joined, split], xbv, vbv, linker="py")
    np.testing.assert_array_equal(got[0], xbv.reshape(10, 15))
    np.testing.assert_array_equal(got[1], vbv.reshape(3, 5, 2))


# ------------------------------------------------------------------------ pack, unpack


@pytest.mark.parametrize(
    ("axes", "expected"),
    [
        (None, (0, 0, 0)),
        ([0, 1], (2, 0, 2)),
        ([-1], (0, 1, 1)),
        (-1, (0, 1, 1)),
        ([-2, -1], (0, 2, 2)),
        ([0, -1], (1, 1, 2)),
        ([0, 1, 2, -1], (3, 1, 4)),
    ],
)
def test_analyze_axes_list(axes: Any, expected: tuple[int, int, int]) -> None:
    assert _analyze_axes_list(axes) == expected


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        ([1, 3], "Positive axes must be contiguous"),
        ([-3, -1], "Negative axes must be contiguous"),
        ([0, 1, -2, 4], "Negative axes must come after positive"),
        ([0, 0], "axes must have no duplicates"),
        ([0, 2, 1], "Axes must be strictly increasing"),
        ([-1, 0], "Negative axes must come after positive"),
        ([], "ambiguous"),
        ([1], "first positive axis must be 0"),
        ([-2], "last negative axis must be -1"),
    ],
)
def test_analyze_axes_list_refuses(axes: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _analyze_axes_list(axes)
    with pytest.raises(TypeError, match="axes must be an int"):
        _analyze_axes_list(1.5)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("keep_axes", "shapes", "packed_shape"),
    [
        (None, [(), (5,), (3, 3)], (15,)),
        (0, [(3,), (3, 5), (3, 3, 3)], (3, 1 + 5 + 9)),
        ([-1], [(3, 5), (3, 3, 5), (1, 3, 5)], (3 + 9 + 3, 5)),
        ([0, -1], [(3, 2), (3, 5, 2), (3, 1, 7, 2)], (3, 1 + 5 + 7, 2)),
    ],
    ids=["ravel all", "keep first", "keep last", "keep first and last"],
)
def test_pack_unpack_round_trip(
    linker: str, keep_axes: Any, shapes: list[tuple[int, ...]], packed_shape: tuple[int, ...]
) -> None:
    xs = [ot.tensor(f"x{i}", shape=s, dtype="float64") for i, s in enumerate(shapes)]
    packed, packed_shapes = pack(*xs, keep_axes=keep_axes)
    assert packed.type.shape == packed_shape
    unpacked = unpack(packed, packed_shapes=packed_shapes, keep_axes=keep_axes)
    assert [u.type.shape for u in unpacked] == shapes
    vals = [values(s, "float64") for s in shapes]
    got = run(xs, [packed, *unpacked, *packed_shapes], *vals, linker=linker)
    n_before = _analyze_axes_list(keep_axes)[0]
    n_after = _analyze_axes_list(keep_axes)[1]
    raveled = [
        v.reshape(*v.shape[:n_before], -1, *v.shape[v.ndim - n_after :]) for v in vals
    ]  # fmt: skip
    np.testing.assert_array_equal(got[0], np.concatenate(raveled, axis=n_before))
    for v, u in zip(vals, got[1 : 1 + len(vals)], strict=True):
        np.testing.assert_array_equal(u, v)
    for v, s in zip(vals, got[1 + len(vals) :], strict=True):
        np.testing.assert_array_equal(s, v.shape[n_before : v.ndim - n_after])


def test_pack_refuses_too_few_dimensions_and_unpack_wrong_ranks() -> None:
    x, y = ot.dscalar("x"), ot.dvector("y")
    with pytest.raises(
        ValueError,
        match=r"Input 0 \(zero indexed\) to pack has 0 dimensions, but keep_axes=0 "
        r"assumes at least 1 dimension\.",
    ):
        pack(x, y, keep_axes=0)
    with pytest.raises(ValueError, match="keep_axis=None for 1d inputs"):
        unpack(ot.dmatrix("m"), [np.array([2])])
    with pytest.raises(ValueError, match="exactly one more dimension"):
        unpack(ot.dmatrix("m"), [np.array([2])], keep_axes=[0, 1])


def test_single_input_and_symbolic_lengths() -> None:
    x = ot.tensor("x", shape=(2, 5))
    packed_x, packed_shapes = ot.pack(x)
    assert packed_x.type.shape == (10,)
    [x_again] = unpack(packed_x, packed_shapes)
    assert x_again.type.shape == (2, 5)
    v = ot.dvector("v")
    d0, d1 = ot.lscalar("d0"), ot.lscalar("d1")
    a, b = ot.unpack(v, packed_shapes=[d0, d1])
    vv = values((7,), "float64")
    got = run([v, d0, d1], [a, b], vv, 3, 4, linker="py")
    np.testing.assert_array_equal(got[0], vv[:3])
    np.testing.assert_array_equal(got[1], vv[3:])


def test_flat_parameters_replace_the_inputs_of_a_loss() -> None:
    x, y, z = ot.dscalar("x"), ot.tensor("y", shape=(5,)), ot.tensor("z", shape=(3, 3))
    loss = (x + y.sum() + z.sum()) ** 2
    flat, packed_shapes = pack(x, y, z)
    new_input = flat.type()
    new_outputs = unpack(new_input, packed_shapes=packed_shapes)
    replace: dict[Any, Any] = dict(zip([x, y, z], new_outputs, strict=True))
    loss = opweave.graph.graph_replace(loss, replace)
    # The packed lengths are the old inputs' static shapes: the rewrites make them constants.
    loss = opweave.graph.rewrite_graph(loss, include=("ShapeOpt", "canonicalize"))
    vals = [values(s, "float64") for s in [(), (5,), (3, 3)]]
    flat_value = np.concatenate([v.ravel() for v in vals])
    got = run([new_input], loss, flat_value, linker="py")
    np.testing.assert_allclose(got, sum(v.sum() for v in vals) ** 2)


def test_pytensor_re_exports() -> None:
    assert ot.join_dims is join_dims and ot.split_dims is split_dims
    assert ot.pack is pack and ot.unpack is unpack
    assert ot.reshape is sys.modules["opweave.tensor.shape"].reshape  # the function's name
    module = sys.modules["opweave.tensor.reshape"]
    assert {"join_dims", "pack", "split_dims", "unpack"} <= set(ot.__all__)
    assert sorted(module.__all__) == ["join_dims", "pack", "split_dims", "unpack"]
