"""Indexing as PyTensor has it: ``ignore_duplicates``, index constants beyond ``int64``,
general advanced indexing (index arrays over several axes, boolean masks) and the names and
signatures of ``pytensor.tensor.subtensor``.

Values are compared with NumPy on the ``py`` and ``vm`` linkers (the C linkers are in
``tests/backend_c/test_advanced_subtensor_c.py``).
"""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import Rop, grad, verify_grad
from opweave.tensor.type import TensorType

st = sys.modules["opweave.tensor.subtensor"]

LINKERS = ["py", "vm"]
RNG = np.random.default_rng(42)


def T(shape: tuple[int | None, ...], dtype: str = "float64", name: str | None = None):
    return TensorType(dtype, shape=shape)(name)


def run(inputs, outputs, *values, linker: str = "vm"):
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))(*values)


def np_update(kind: str, a: np.ndarray, key, y) -> np.ndarray:
    a = a.copy()
    if kind == "set":
        a[key] = y
    elif kind == "once":
        a[key] += y
    else:
        np.add.at(a, key, y)
    return a


def update(kind: str, view, y):
    if kind == "set":
        return ot.set_subtensor(view, y)
    return ot.inc_subtensor(view, y, ignore_duplicates=kind == "once")


# ====================================================================== ignore_duplicates


@pytest.mark.parametrize("linker", LINKERS)
def test_ignore_duplicates_updates_each_row_once(linker) -> None:
    m = T((None, None), name="m")
    f = opweave.function(
        [m],
        [
            ot.inc_subtensor(m[[0, 1, 0]], 2.0, ignore_duplicates=True),
            ot.inc_subtensor(m[[0, 1, 0]], 2.0),
            ot.set_subtensor(m[[0, 1, 0]], np.array([[1.0], [2.0], [3.0]])),
        ],
        mode=Mode(linker=linker),
    )
    once, acc, set_ = f(np.zeros((3, 2)))
    np.testing.assert_array_equal(once, [[2, 2], [2, 2], [0, 0]])
    np.testing.assert_array_equal(acc, [[4, 4], [2, 2], [0, 0]])
    np.testing.assert_array_equal(set_, [[3, 3], [2, 2], [0, 0]])


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("kind", ["set", "once", "acc"])
@pytest.mark.parametrize(
    ("shape", "key"),
    [
        ((5,), np.array([0, 1, 0, -1, 4])),
        ((4, 3), np.array([0, 2, 0, 0])),
        ((4, 3), (slice(None), np.array([2, -1, 0]))),
        ((4, 3, 2), (slice(None), np.array([1, 1]))),
        ((4, 3), (np.array([0, 1, 0]), np.array([2, 2, 2]))),
        ((4, 3), (np.array([3, 3]), slice(1, None))),
    ],
)
def test_set_inc_and_ignore_duplicates_agree_with_numpy(linker, kind, shape, key) -> None:
    xv = RNG.standard_normal(shape)
    target = xv[key].shape
    yv = RNG.standard_normal(target)
    x = T((None,) * len(shape), name="x")
    y = T((None,) * len(target), name="y")
    got = run([x, y], update(kind, x[key], y), xv, yv, linker=linker)
    np.testing.assert_allclose(got, np_update(kind, xv, key, yv))
    # A broadcast scalar value too.
    got = run([x], update(kind, x[key], 1.5), xv, linker=linker)
    np.testing.assert_allclose(got, np_update(kind, xv, key, 1.5))


def test_ignore_duplicates_builds_advanced_inc_subtensor() -> None:
    m = T((None, None))
    once = ot.inc_subtensor(m[[0, 1, 0]], 2.0, ignore_duplicates=True)
    op = once.owner.op
    assert isinstance(op, st.AdvancedIncSubtensor)
    assert op.ignore_duplicates and not op.set_instead_of_inc
    assert op.idx_list == (TensorType("int64", shape=(None,)),)
    assert str(op) == "AdvancedIncSubtensor{int64[?]; ignore_duplicates}"
    default = ot.inc_subtensor(m[[0, 1, 0]], 2.0)
    assert default.owner.op == st.AdvancedIncSubtensor1()
    # Setting ignores the flag: the last write wins either way.
    assert ot.set_subtensor(m[[0, 0]], 1.0).owner.op == st.AdvancedIncSubtensor1(
        set_instead_of_inc=True
    )
    # Along another axis the update goes through the transpose and back.
    other = ot.inc_subtensor(m[:, [0, 0]], 2.0, ignore_duplicates=True)
    assert other.type.shape == (None, None)
    np.testing.assert_array_equal(run([m], other, np.zeros((2, 3))), [[2, 0, 0], [2, 0, 0]])


@pytest.mark.parametrize("kind", ["set", "once", "acc"])
@pytest.mark.parametrize(
    ("shape", "key"),
    [
        ((5,), [0, 1, 0, 3]),
        ((4, 3), [0, 2, 0]),
        ((4, 3), (slice(None), [1, 1, 2])),
        ((4, 3), ([0, 1, 0], [2, 2, 2])),
        ((4, 3), ([0, 1, 0], [2, 1, 2])),
    ],
)
def test_gradients_of_updates_with_repeated_indices(kind, shape, key) -> None:
    xv = RNG.standard_normal(shape)
    yv = RNG.standard_normal(xv[key].shape)
    verify_grad(lambda a, b: update(kind, a[key], b), [xv, yv], rng=0)
    # A broadcast value: its gradient sums the positions it reaches.
    verify_grad(lambda a, b: update(kind, a[key], b), [xv, np.array(0.5)], rng=1)


def test_gradient_of_repeated_writes_goes_to_the_last_one() -> None:
    x, y = T((None,)), T((None,))
    w = np.array([1.0, 10.0, 100.0])
    for kind, expected_gy, expected_gx in [
        ("set", [0.0, 10.0, 1.0], [0.0, 0.0, 100.0]),
        ("once", [0.0, 10.0, 1.0], [1.0, 10.0, 100.0]),
        ("acc", [1.0, 10.0, 1.0], [1.0, 10.0, 100.0]),
    ]:
        out = update(kind, x[[0, 1, 0]], y)
        gx, gy = grad(ot.sum(out * w), [x, y])
        got_gx, got_gy = run([x, y], [gx, gy], np.zeros(3), np.ones(3))
        np.testing.assert_array_equal(got_gy, expected_gy, err_msg=kind)
        np.testing.assert_array_equal(got_gx, expected_gx, err_msg=kind)


def test_constant_distinct_indices_need_no_last_write_mask() -> None:
    x, y = T((None, None)), T((None, None))

    def scatters_ids(out) -> bool:
        """Whether the gradient of ``y`` scatters int64 ids (the last-write mask)."""
        seen, todo = set(), [grad(ot.sum(out), y)]
        while todo:
            v = todo.pop()
            if v.owner is None or id(v) in seen:
                continue
            seen.add(id(v))
            if isinstance(v.owner.op, st.AdvancedIncSubtensor | st.AdvancedIncSubtensor1):
                if v.owner.inputs[1].dtype == "int64":
                    return True
            todo.extend(v.owner.inputs)
        return False

    assert not scatters_ids(ot.set_subtensor(x[[2, 0]], y))
    assert not scatters_ids(ot.set_subtensor(x[[2, 0], [1, 1]], y[0]))
    assert not scatters_ids(ot.inc_subtensor(x[[2, 2]], y))
    assert scatters_ids(ot.set_subtensor(x[[2, 2]], y))
    assert scatters_ids(ot.set_subtensor(x[[2, -2]], y))  # the same row when x has 4 rows
    assert not scatters_ids(ot.set_subtensor(T((5, None))[[2, -2]], y))
    assert not scatters_ids(ot.inc_subtensor(x[[2, 0], [1, 1]], y[0], ignore_duplicates=True))
    assert scatters_ids(ot.inc_subtensor(x[[2, 0, 2], [1, 1, 1]], y[0], ignore_duplicates=True))
    assert scatters_ids(ot.inc_subtensor(x[ot.lvector()], y, ignore_duplicates=True))


# ====================================================================== index constants


@pytest.mark.parametrize(
    "key",
    [
        slice(None, 2**63),
        slice(-(2**63) - 1, None),
        slice(None, None, 2**63),
        slice(np.uint64(2**64 - 1), None),
        2**63,
        -(2**63) - 1,
        np.uint64(2**63),
        (slice(None), 2**64),
        ([0, 1], 2**63),
    ],
    ids=repr,
)
def test_index_constants_beyond_int64_are_type_errors(key) -> None:
    s = opweave.shared(np.arange(12.0).reshape(4, 3))
    with pytest.raises(TypeError, match="does not fit in int64"):
        s[key]


def test_index_constants_beyond_int64_in_ops_and_helpers() -> None:
    x = T((None, None))
    with pytest.raises(TypeError, match="does not fit in int64"):
        x[ot.constant(np.uint64(2**63))]
    with pytest.raises(TypeError, match="does not fit in int64"):
        st.Subtensor((2**63,))
    with pytest.raises(TypeError, match="does not fit in int64"):
        st.Subtensor((slice(None, -(2**63) - 1),))
    with pytest.raises(TypeError, match="does not fit in int64"):
        st.as_index_constant(2**63)
    with pytest.raises(TypeError, match="does not fit in int64"):
        st.basic_subtensor(x, slice(None, 2**63))


def test_int64_extremes_and_small_uint64_are_valid_indices() -> None:
    s = opweave.shared(np.arange(12.0).reshape(4, 3))
    a = np.arange(12.0).reshape(4, 3)
    f = opweave.function(
        [], [s[: 2**63 - 1], s[-(2**63) :], s[np.uint64(1)], s[np.uint64(3) :: np.int8(-1)]]
    )
    for got, expected in zip(f(), [a, a, a[1], a[3::-1]], strict=True):
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(IndexError, match="out of bounds"):
        opweave.function([], s[-(2**63)])()


# ====================================================================== advanced indexing


X_SHAPE = (4, 5, 6)
XV = RNG.standard_normal(X_SHAPE)
MASK2 = XV[:, :, 0] > 0

ADVANCED_KEYS = [
    ([0, 1], [1, 2]),
    ([0, -1], slice(None), [1, -2]),
    (slice(None), [0, 1], [2, 3]),
    (0, slice(None), [1, 2]),
    (slice(None), 0, [1, 2]),
    ([[0, 1], [2, 3]], [1, 2]),
    ([[0], [1]], [1, 2, 3]),
    (np.array([], dtype=np.int64), np.array([], dtype=np.int64)),
    ([], slice(None), 2),
    (MASK2,),
    (MASK2[:, 0], 1),
    (slice(1, 3), MASK2[0]),
    (np.array([True, False, False, True]), slice(None), [0, 5]),
    (np.zeros(4, dtype=bool),),
    ([0, 1], None, [1, 2]),
    (None, [0, 1], [1, 2]),
    (slice(None), [0, 1], None, [1, 2]),
    (Ellipsis, [0, 1]),
    (Ellipsis, [[0, 1], [1, 0]]),
    ([[0, 1], [1, 0]],),
    ([-1, -4],),
    (slice(None, None, -1), [1, 3], slice(1, None, 2)),
    (2, [1, 1], -1),
    ([3, 0, 3], np.array([[1], [4]]), slice(None, 2)),
]


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=lambda k: repr(k)[:60])
def test_advanced_indexing_agrees_with_numpy(linker, key) -> None:
    expected = XV[key]
    for shape in [(None, None, None), X_SHAPE]:
        x = T(shape, name="x")
        out = x[key]
        assert out.ndim == expected.ndim
        assert all(s in (None, e) for s, e in zip(out.type.shape, expected.shape))
        got = run([x], out, XV, linker=linker)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    # The fully static case knows every length.
    assert T(X_SHAPE)[key].type.shape == expected.shape


def test_multi_axis_indices_build_advanced_subtensor() -> None:
    x = T((None, None, None))
    out = x[[0, 1], [1, 2]]
    assert isinstance(out.owner.op, st.AdvancedSubtensor)
    assert out.owner.op.idx_list == (TensorType("int64", shape=(None,)),) * 2
    assert str(out.owner.op) == "AdvancedSubtensor{int64[?], int64[?]}"
    mask = x[MASK2]
    assert mask.owner.op.idx_list == (TensorType("bool", shape=(None, None)),)
    assert isinstance(x[0, :, [1, 2]].owner.op, st.AdvancedSubtensor)
    # One integer vector with full slices elsewhere is still a take.
    assert isinstance(x[[0, 1]].owner.op, st.AdvancedSubtensor1)
    node = out.owner
    assert node.op.connection_pattern(node) == [[True], [False], [False]]
    assert x[[0, 1], 1:3].owner.op == x[[2, 3], 1:3].owner.op
    assert hash(x[[0, 1], 1:3].owner.op) == hash(x[[2, 3], 1:3].owner.op)
    assert x[[0, 1], 1:3].owner.op != x[[0, 1], 1:4].owner.op


@pytest.mark.parametrize("linker", LINKERS)
def test_symbolic_index_arrays_masks_and_scalars(linker) -> None:
    x = T((None, None, None), name="x")
    i, j = ot.lvector("i"), ot.lmatrix("j")
    k = ot.lscalar("k")
    m = TensorType("bool", shape=(None, None))("m")
    outs = [x[i, :, j], x[m], x[k, i], x[:, m[0]], x[i, j], x[i, k:]]
    f = opweave.function([x, i, j, k, m], outs, mode=Mode(linker=linker))
    iv, jv, kv = np.array([3, -1]), np.array([[0, 4], [1, -5]]), 2
    mv = XV[:, :, 1] > 0
    expected = [XV[iv, :, jv], XV[mv], XV[kv, iv], XV[:, mv[0]], XV[iv, jv], XV[iv, kv:]]
    for got, exp in zip(f(XV, iv, jv, kv, mv), expected, strict=True):
        np.testing.assert_array_equal(got, exp)
    # Empty and broadcast index arrays.
    empty = f(XV, np.zeros(0, dtype=np.int64), np.zeros((2, 0), dtype=np.int64), 0, mv)
    assert empty[0].shape == XV[[], :, np.zeros((2, 0), dtype=int)].shape


@pytest.mark.parametrize(
    "key",
    [
        ([0, 1], [1, 2]),
        (slice(None), [0, 1], [[2], [3]]),
        ([0, -1], slice(1, None, 2), [1, 2]),
        (MASK2,),
        (slice(1, 3), MASK2[0]),
        ([0, 1], None, [1, 2]),
    ],
    ids=lambda k: repr(k)[:60],
)
def test_infer_shape_of_advanced_indexing(key) -> None:
    x = T((None, None, None), name="x")
    out = x[key]
    node = out.owner
    while not isinstance(node.op, st.AdvancedSubtensor):
        node = node.inputs[0].owner
    shapes = [tuple(ot.shape_i(v, d) for d in range(v.ndim)) for v in node.inputs]
    (inferred,) = node.op.infer_shape(None, node, shapes)
    got = run([x], [ot.as_tensor_variable(s) for s in inferred], XV)
    assert tuple(int(v) for v in got) == run([x], node.outputs[0], XV).shape
    assert tuple(run([x], out.shape, XV)) == XV[key].shape


def test_symbolic_mask_shape_is_its_count() -> None:
    x, m = T((None, None)), TensorType("bool", shape=(None,))("m")
    out = x[m]
    assert out.type.shape == (None, None)
    mv = np.array([True, False, True, True])
    f = opweave.function([x, m], out.shape)
    np.testing.assert_array_equal(f(np.zeros((4, 3)), mv), [3, 3])
    assert T((4, 3))[np.array([True, False, True, True])].type.shape == (3, 3)


def test_advanced_indexing_errors() -> None:
    x = T((4, 5, 6), name="x")
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 5"):
        x[[0, 1], [1, 5]]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0"):
        x[[-5], 1:]
    with pytest.raises(IndexError, match="shape mismatch"):
        x[[0, 1], [1, 2, 3]]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.ones((4, 4), dtype=bool)]
    with pytest.raises(IndexError, match="too many indices"):
        x[np.ones((4, 5), dtype=bool), 0, 0]
    with pytest.raises(TypeError, match="integers or booleans"):
        x[[0.5, 1.0], [0, 1]]
    with pytest.raises(TypeError, match="integers or booleans"):
        x[ot.dvector(), [0, 1]]
    with pytest.raises(TypeError, match="boolean scalars"):
        x[True]
    with pytest.raises(TypeError, match="expected TensorType"):
        st.AdvancedSubtensor((TensorType("int64", shape=(None,)),))(x, ot.lmatrix())
    with pytest.raises(TypeError, match="invalid idx_list entry"):
        st.AdvancedSubtensor((1.5,))
    with pytest.raises(TypeError, match="invalid idx_list entry"):
        st.Subtensor((TensorType("int64", shape=(None,)),))


@pytest.mark.parametrize("linker", LINKERS)
def test_advanced_indexing_runtime_errors(linker) -> None:
    x = T((None, None), name="x")
    i, j = ot.lvector("i"), ot.lvector("j")
    f = opweave.function([x, i, j], x[i, j], mode=Mode(linker=linker))
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 3"):
        f(np.zeros((2, 3)), np.array([0, 1]), np.array([1, 7]))
    with pytest.raises(IndexError, match="shape mismatch"):
        f(np.zeros((2, 3)), np.array([0, 1]), np.array([1, 2, 0]))
    m = TensorType("bool", shape=(None,))("m")
    g = opweave.function([x, m], x[m], mode=Mode(linker=linker))
    with pytest.raises(IndexError, match="boolean index did not match"):
        g(np.zeros((2, 3)), np.array([True, False, True]))
    y = T((None,), name="y")
    h = opweave.function([x, i, j, y], ot.set_subtensor(x[i, j], y), mode=Mode(linker=linker))
    with pytest.raises(ValueError, match="cannot broadcast"):
        h(np.zeros((2, 3)), np.array([0, 1]), np.array([1, 2]), np.zeros(3))
    with pytest.raises(ValueError, match="run-time broadcasting"):
        h(np.zeros((2, 3)), np.array([0, 1]), np.array([1, 2]), np.zeros(1))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("kind", ["set", "once", "acc"])
@pytest.mark.parametrize(
    "key",
    [
        ([0, 1, 0], [1, 2, 1]),
        ([0, -1], slice(None), [1, 2]),
        (slice(None), [0, 1, 1], [2, 3, 3]),
        (0, slice(None), [1, 2, 1]),
        ([[0, 1], [2, 0]], [1, 2]),
        (MASK2,),
        (slice(1, 3), MASK2[0]),
        (slice(None, None, -1), [1, 3, 1], slice(1, None, 2)),
        (2, [1, 1], -1),
        ([], slice(None), 2),
    ],
    ids=lambda k: repr(k)[:60],
)
def test_advanced_updates_agree_with_numpy(linker, kind, key) -> None:
    target = XV[key].shape
    yv = RNG.standard_normal(target)
    x = T((None, None, None), name="x")
    y = T((None,) * len(target), name="y")
    out = update(kind, x[key], y)
    op = out.owner.op
    assert isinstance(op, st.AdvancedIncSubtensor)
    assert op.set_instead_of_inc == (kind == "set")
    assert op.ignore_duplicates == (kind == "once")
    np.testing.assert_allclose(
        run([x, y], out, XV, yv, linker=linker), np_update(kind, XV, key, yv)
    )


def test_updates_through_new_axes_and_int_values() -> None:
    x = T((None, None), name="x")
    y = T((2, 1), name="y")
    out = ot.set_subtensor(x[[0, 1], None, [1, 2]], y)
    assert out.type == x.type
    xv, yv = np.zeros((3, 4)), np.array([[5.0], [6.0]])
    expected = xv.copy()
    expected[[0, 1], None, [1, 2]] = yv
    np.testing.assert_array_equal(run([x, y], out, xv, yv), expected)
    xi = T((None, None), dtype="int32", name="xi")
    inc = ot.inc_subtensor(xi[[0, 0], [1, 1]], np.int32(3))
    got = run([xi], inc, np.zeros((2, 2), dtype=np.int32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[0, 6], [0, 0]])
    with pytest.raises(TypeError, match="cast them first"):
        ot.set_subtensor(xi[[0], [1]], T((None,)))


@pytest.mark.parametrize(
    "key",
    [
        ([0, 1, 0], [1, 2, 1]),
        ([0, -1], slice(None), [1, 2]),
        (slice(None), [0, 1], [[2], [3]]),
        (0, slice(1, None), [1, 2, 1]),
        (MASK2,),
        (slice(1, 3), MASK2[0]),
        ([0, 1], None, [1, 2]),
    ],
    ids=lambda k: repr(k)[:60],
)
def test_verify_grad_of_advanced_indexing(key) -> None:
    verify_grad(lambda a: a[key], [XV], rng=0)
    node = T((None, None, None))[key].owner
    while not isinstance(node.op, st.AdvancedSubtensor):
        node = node.inputs[0].owner
    gx = node.op.grad(node.inputs, [node.outputs[0].type()])[0]
    assert isinstance(gx.owner.op, st.AdvancedIncSubtensor)


def test_integer_tensor_gradient_and_r_op() -> None:
    xi = T((None, None), dtype="int64")
    out = xi[[0, 1], [1, 0]]
    g = out.owner.op.grad(out.owner.inputs, [out.type()])
    assert g[0].dtype == opweave.config.floatX
    x, v = T((None, None), name="x"), T((None, None), name="v")
    r = Rop(x[[0, 1], [1, 0]], x, v)
    got = opweave.function([x, v], r, on_unused_input="ignore")(
        np.zeros((2, 2)), np.arange(4.0).reshape(2, 2)
    )
    np.testing.assert_array_equal(got, [1.0, 2.0])


# ====================================================================== names and helpers


PYTENSOR_SIGNATURES = {
    "AdvancedSubtensor": ["idx_list"],
    "AdvancedIncSubtensor": ["idx_list", "inplace", "set_instead_of_inc", "ignore_duplicates"],
    "advanced_subtensor": ["x", "index_variables"],
    "advanced_inc_subtensor": ["x", "y", "args", "kwargs"],
    "advanced_set_subtensor": ["x", "y", "args", "kwargs"],
    "get_canonical_form_slice": ["theslice", "length"],
    "indexed_result_shape": ["array_shape", "indices", "indices_are_shapes"],
    "as_index_constant": ["a"],
    "as_index_literal": ["idx"],
    "get_idx_list": ["inputs", "idx_list"],
    "indices_from_subtensor": ["op_indices", "idx_list"],
    "flatten_index_variables": ["idx_vars"],
    "unflatten_index_variables": ["flat_indices", "idx_list"],
    "basic_subtensor": ["x", "index_variables"],
    "basic_shape": ["shape", "indices"],
    "group_indices": ["indices"],
    "slice_len": ["slc", "n"],
    "slice_static_length": ["slc", "dim_length"],
    "get_slice_elements": ["idxs", "cond"],
    "get_constant_idx": [
        "idx_list",
        "inputs",
        "allow_partial",
        "only_process_constants",
        "elemwise",
    ],
    "as_tensor_index_variable": ["idx"],
    "inc_subtensor": [
        "x",
        "y",
        "inplace",
        "set_instead_of_inc",
        "tolerate_inplace_aliasing",
        "ignore_duplicates",
    ],
    "set_subtensor": ["x", "y", "inplace", "tolerate_inplace_aliasing"],
    "take": ["a", "indices", "axis", "mode"],
    "slice_at_axis": ["sl", "axis"],
    "flip": ["arr", "axis"],
}


@pytest.mark.parametrize("name", sorted(PYTENSOR_SIGNATURES))
def test_pytensor_names_and_signatures(name) -> None:
    obj = getattr(st, name)
    target = obj.__init__ if isinstance(obj, type) else obj
    params = [p for p in inspect.signature(target).parameters if p != "self"]
    assert params == PYTENSOR_SIGNATURES[name]
    assert name in st.__all__
    assert getattr(ot, name) is obj


def test_get_idx_list_takes_the_whole_inputs_as_pytensor_does() -> None:
    x = T((None, None))
    i = ot.lscalar("i")
    out = x[i, 1:]
    assert st.get_idx_list(out.owner.inputs, out.owner.op.idx_list) == (i, slice(1, None, None))
    assert st.indices_from_subtensor(out.owner.inputs[1:], out.owner.op.idx_list) == (
        i,
        slice(1, None, None),
    )
    assert st.get_constant_idx(out.owner.op.idx_list, out.owner.inputs, allow_partial=True) == [
        i,
        slice(1, None, None),
    ]
    with pytest.raises(ot.NotScalarConstantError):
        st.get_constant_idx(out.owner.op.idx_list, out.owner.inputs)
    values = st.indices_from_subtensor([np.int64(2)], out.owner.op.idx_list)
    assert values == (2, slice(1, None, None)) and type(values[0]) is int


def test_flatten_and_unflatten_index_variables() -> None:
    i, v = ot.lscalar("i"), ot.lvector("v")
    idx_list, flat = st.flatten_index_variables([slice(1, i), 3, v, np.int8(-1)])
    assert idx_list == [
        slice(1, TensorType("int64", shape=()), None),
        3,
        TensorType("int64", shape=(None,)),
        -1,
    ]
    assert flat == [i, v]
    assert st.unflatten_index_variables(flat, idx_list) == (slice(1, i, None), 3, v, -1)
    with pytest.raises(ValueError, match="2 placeholders but 1"):
        st.unflatten_index_variables([i], idx_list)


def test_as_index_constant_and_literal() -> None:
    c = st.as_index_constant(3)
    assert c.type.dtype == "int64" and c.data == 3
    s = st.as_index_constant(slice(1, None, np.int32(-1)))
    assert st.as_index_literal(s) == slice(1, None, -1)
    i = ot.lscalar()
    assert st.as_index_constant(i) is i and st.as_index_constant(None) is None
    assert st.as_index_literal(ot.constant(np.int64(4))) == 4
    with pytest.raises(ot.NotScalarConstantError):
        st.as_index_literal(i)
    with pytest.raises(TypeError, match="not an index entry"):
        st.as_index_literal("a")


@pytest.mark.parametrize(
    ("theslice", "expected"),
    [
        (slice(None, None, -1), (slice(0, 5, 1), -1)),
        (slice(None, None, -2), (slice(0, 5, 2), -1)),
        (slice(1, None, -2), (slice(1, 2, 2), -1)),
        (slice(0, 5, 2), (slice(0, 5, 2), 1)),
        (slice(-3, None), (slice(2, 5, 1), 1)),
        (slice(10, -10, -3), (slice(1, 5, 3), -1)),
        (slice(3, 1), (slice(1, 1, 1), 1)),
        (3, (3, 1)),
        (-2, (3, 1)),
    ],
)
def test_get_canonical_form_slice_constant(theslice, expected) -> None:
    assert st.get_canonical_form_slice(theslice, 5) == expected


def test_get_canonical_form_slice_symbolic() -> None:
    a, b, c, n = (ot.lscalar(name) for name in "abcn")
    arr = np.arange(7)
    for start, stop, step in [
        (None, None, -1),
        (1, None, -2),
        (10, -10, -3),
        (-3, None, None),
        (3, 1, None),
        (-9, 2, 2),
        (6, 0, -4),
        (2, 100, 3),
    ]:
        sl = slice(
            None if start is None else a, None if stop is None else b, None if step is None else c
        )
        canon, direction = st.get_canonical_form_slice(sl, n)
        parts = [canon.start, canon.stop, canon.step, direction]
        f = opweave.function(
            [a, b, c, n], [ot.as_tensor_variable(p) for p in parts], on_unused_input="ignore"
        )
        lo, hi, stride, d = (int(v) for v in f(start or 0, stop or 0, step or 1, 7))
        assert 0 <= lo <= hi <= 7 and stride > 0
        np.testing.assert_array_equal(arr[lo:hi:stride][::d], arr[start:stop:step])
    idx, d = st.get_canonical_form_slice(a, n)
    assert d == 1
    assert int(opweave.function([a, n], idx)(-2, 7)) == 5


def test_shape_helpers() -> None:
    shape = st.indexed_result_shape(
        (4, 5, 6), (slice(None), np.array([0, 1]), np.array([[1], [2]]))
    )
    assert shape == (4, 2, 2)
    assert st.indexed_result_shape(
        (4, 5, 6), (np.array([0, 1]), slice(None), np.array([1, 2]))
    ) == (
        2,
        5,
    )
    assert st.indexed_result_shape((4, 5, 6), ((2,), slice(1, 3), (1,)), True) == (2, 2)
    assert st.indexed_result_shape((4, 5), (None, np.ones((4, 5), dtype=bool))) == (1, 20)
    n = ot.lscalar("n")
    v = ot.lvector("v")
    sym = st.indexed_result_shape((n, 5), (v, slice(1, None)))
    f = opweave.function([n, v], [ot.as_tensor_variable(s) for s in sym], on_unused_input="ignore")
    assert [int(s) for s in f(9, np.arange(3))] == [3, 4]
    sym = st.indexed_result_shape((n, 5), (slice(2, None), v))
    f = opweave.function([n, v], [ot.as_tensor_variable(s) for s in sym])
    assert [int(s) for s in f(9, np.arange(3))] == [7, 3]
    assert st.basic_shape((5, 4), (slice(1, None), None)) == (4, 1)
    with pytest.raises(ValueError, match="invalid basic index"):
        st.basic_shape((5,), (0,))
    groups = st.group_indices([slice(None), 0, [1], None, slice(None)])
    assert groups == [
        (True, [(0, slice(None))]),
        (False, [(1, 0), (2, [1]), (2, None)]),
        (True, [(3, slice(None))]),
    ]
    assert st.slice_len(slice(1, None, 2), 6) == 3
    assert int(opweave.function([n], st.slice_len(slice(1, None, 2), n))(6)) == 3
    assert st.slice_static_length(slice(None, None, -1), None) is None
    assert st.slice_static_length(slice(None, None, -1), 4) == 4
    assert st.slice_static_length(slice(1, 4), 10) == 3
    assert st.slice_static_length(slice(1, n), 10) is None
    assert st.get_slice_elements([slice(n, 3), v, 2]) == [n, v]


def test_basic_advanced_and_helper_constructors() -> None:
    x = T((None, None), name="x")
    i = ot.lscalar("i")
    b = st.basic_subtensor(x, slice(1, i), 0)
    assert isinstance(b.owner.op, st.Subtensor) and b.owner.inputs[1:] == [i]
    with pytest.raises(TypeError, match="index array"):
        st.basic_subtensor(x, [0, 1])
    xv = np.arange(12.0).reshape(3, 4)
    a = st.advanced_subtensor(x, [0, 2], slice(None, None, 2))
    assert isinstance(a.owner.op, st.AdvancedSubtensor)
    np.testing.assert_array_equal(run([x], a, xv), xv[[0, 2], ::2])
    inc = st.advanced_inc_subtensor(x, 1.0, [0, 0], [1, 1])
    np.testing.assert_array_equal(run([x], inc, xv), np_update("acc", xv, ([0, 0], [1, 1]), 1.0))
    once = st.advanced_inc_subtensor(x, 1.0, [0, 0], [1, 1], ignore_duplicates=True)
    np.testing.assert_array_equal(run([x], once, xv), np_update("once", xv, ([0, 0], [1, 1]), 1.0))
    # Integers only: a 0-d result, still a copy, and updates of one element.
    one = st.advanced_subtensor(x, 1, -1)
    assert one.type.shape == () and isinstance(one.owner.op, st.AdvancedSubtensor)
    assert run([x], one, xv) == xv[1, -1]
    for kind in ("set", "once", "acc"):
        op_kwargs = {"set_instead_of_inc": kind == "set", "ignore_duplicates": kind == "once"}
        upd = st.advanced_inc_subtensor(x, 5.0, 1, -1, **op_kwargs)
        np.testing.assert_array_equal(run([x], upd, xv), np_update(kind, xv, (1, -1), 5.0))
    set_ = st.advanced_set_subtensor(x, -1.0, np.array([True, False, True]))
    expected = xv.copy()
    expected[[0, 2]] = -1.0
    np.testing.assert_array_equal(run([x], set_, xv), expected)
    assert st.as_tensor_index_variable([0, 1]).dtype == "int64"
    with pytest.raises(TypeError, match="boolean scalars"):
        st.as_tensor_index_variable(True)
    assert st.slice_at_axis(slice(None, 1), 1) == (slice(None), slice(None, 1), Ellipsis)
    assert st.slice_at_axis(slice(2), -2) == (Ellipsis, slice(2), slice(None))
    np.testing.assert_array_equal(run([x], st.flip(x), xv), np.flip(xv))
    np.testing.assert_array_equal(run([x], st.flip(x, axis=-1), xv), np.flip(xv, axis=-1))
    np.testing.assert_array_equal(run([x], st.flip(x, (0, 1)), xv), np.flip(xv, (0, 1)))
    with pytest.raises(ValueError, match="repeated axis"):
        st.flip(x, (0, 0))
    with pytest.raises(TypeError, match="axis must be"):
        st.flip(x, 1.5)
