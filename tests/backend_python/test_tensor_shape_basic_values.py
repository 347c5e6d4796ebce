"""Values of the shape, construction, indexing and softmax Ops through the Python backend.

Every result is compared with NumPy, through ``opweave.function`` with the ``vm``
and ``py`` linkers and no rewrites; every Op's ``infer_shape`` is compared with the
shape of the value it computes; every differentiable Op's gradient is checked with
``opweave.gradient.verify_grad``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.basic import Variable, io_toposort
from opweave.tensor import TensorType
from opweave.tensor import basic as tb
from opweave.tensor import special as tsp

# ``opweave.tensor.shape``/``.subtensor`` are also functions of ``opweave.tensor``, so the
# modules are taken from the import system rather than as package attributes.
ts = importlib.import_module("opweave.tensor.shape")
tst = importlib.import_module("opweave.tensor.subtensor")

LINKERS = ("vm", "py")


def needs(*modules: str) -> None:
    """Import every module the calling test needs (an ImportError fails the test)."""
    for name in modules:
        importlib.import_module(name)


def compile_(inputs: Sequence[Variable], outputs: Any, linker: str = "vm") -> Callable[..., Any]:
    return opweave.function(
        list(inputs), outputs, mode=Mode(linker=linker, optimizer=None), on_unused_input="ignore"
    )


def check(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    values: Sequence[Any],
    expected: Sequence[Any],
    linker: str,
) -> list[np.ndarray]:
    """Compare values, dtypes and ranks (0-d arrays, not NumPy scalars) with ``expected``."""
    results = compile_(inputs, list(outputs), linker)(*values)
    for out, got, want in zip(outputs, results, expected):
        want = np.asarray(want)
        assert isinstance(got, np.ndarray), f"{out}: got a {type(got).__name__}, not an ndarray"
        assert got.dtype == np.dtype(out.type.dtype), f"{out}: dtype {got.dtype}"
        assert got.ndim == out.type.ndim
        assert all(s is None or s == g for s, g in zip(out.type.shape, got.shape))
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-7, atol=0)
        assert got.shape == want.shape
    return results


def check_infer_shape(
    inputs: Sequence[Variable], outputs: Sequence[Variable], values: Sequence[Any]
) -> None:
    """Each node's ``infer_shape`` (from the inputs' symbolic shapes) vs computed shapes."""
    needs("opweave.tensor.math", "opweave.tensor.elemwise")
    nodes = [n for n in io_toposort(list(inputs), list(outputs)) if n.op is not None]
    shape_exprs: list[Any] = []
    value_exprs: list[Variable] = []
    for node in nodes:
        if type(node.op).__module__.split(".")[-1] not in (
            "basic",
            "shape",
            "subtensor",
            "special",
        ):
            continue
        in_shapes = [tuple(ts.shape_i(i, d) for d in range(i.ndim)) for i in node.inputs]
        out_shapes = node.op.infer_shape(None, node, in_shapes)
        for out, shp in zip(node.outputs, out_shapes):
            assert len(shp) == out.ndim, f"{node.op}: infer_shape gave {len(shp)} dims"
            value_exprs.append(out)
            shape_exprs.append([ot.as_tensor_variable(s) for s in shp])
    flat = [s for shp in shape_exprs for s in shp]
    f = compile_(inputs, value_exprs + flat)
    results = f(*values)
    got_values, got_dims = results[: len(value_exprs)], results[len(value_exprs) :]
    k = 0
    for out, value, shp in zip(value_exprs, got_values, shape_exprs):
        inferred = tuple(int(d) for d in got_dims[k : k + len(shp)])
        k += len(shp)
        assert inferred == np.shape(value), f"{out.owner.op}: inferred {inferred}"


def verify(fun: Callable[..., Any], pt: Sequence[np.ndarray], **kwargs: Any) -> None:
    """``verify_grad`` through the ``vm`` linker (skipped, with the reason, when unavailable)."""
    needs("opweave.gradient", "opweave.tensor.math", "opweave.tensor.elemwise")
    from opweave.gradient import verify_grad

    verify_grad(
        fun,
        list(pt),
        rng=np.random.default_rng(42),
        mode=Mode(linker="vm", optimizer=None),
        **kwargs,
    )


RNG = np.random.default_rng(0)
A34 = RNG.normal(size=(3, 4))
A234 = RNG.normal(size=(2, 3, 4))


# ---------------------------------------------------------------------- shape ops


@pytest.mark.parametrize("linker", LINKERS)
def test_reshape_values(linker: str) -> None:
    x, n = ot.dtensor3("x"), ot.lscalar("n")
    s = ot.lvector("s")
    outs = [
        ts.reshape(x, (6, 4)),
        ts.reshape(x, (-1, 2)),
        ts.reshape(x, (n, -1)),
        ts.reshape(x, s, ndim=2),
        ts.reshape(x, (24,)),
        ts.flatten(x),
        ts.flatten(x, 2),
        x.reshape((4, 6)),
        ts.reshape(x[0, 0, 0], (1, 1)),
        ts.reshape(x[:1, :1, :1], ()),
    ]
    vals = [A234, 3, np.array([12, 2])]
    want = [
        A234.reshape(6, 4),
        A234.reshape(-1, 2),
        A234.reshape(3, -1),
        A234.reshape(12, 2),
        A234.reshape(24),
        A234.reshape(-1),
        A234.reshape(2, 12),
        A234.reshape(4, 6),
        A234[0, 0, 0].reshape(1, 1),
        A234[:1, :1, :1].reshape(()),
    ]
    check([x, n, s], outs, vals, want, linker)
    check_infer_shape([x, n, s], outs, vals)


def test_reshape_runtime_errors() -> None:
    x, s = ot.dmatrix("x"), ot.lvector("s")
    f = compile_([x, s], ts.reshape(x, s, ndim=2))
    with pytest.raises(ValueError, match=r"Reshape.*cannot reshape"):
        f(A34, np.array([5, 5]))
    with pytest.raises(ValueError, match="3 entries, not 2"):
        f(A34, np.array([1, 2, 6]))


def test_reshape_gradients() -> None:
    verify(lambda x: ts.reshape(x, (2, -1)), [A34])
    verify(lambda x: ts.flatten(x, 2), [A234])


@pytest.mark.parametrize("linker", LINKERS)
def test_specify_shape_values_and_error(linker: str) -> None:
    x, n = ot.dmatrix("x"), ot.lscalar("n")
    out = ts.specify_shape(x, (n, 4))
    check([x, n], [out], [A34, 3], [A34], linker)
    f = compile_([x, n], out, linker)
    with pytest.raises(AssertionError, match="dimension 0 of the input has length 3, expected 2"):
        f(A34, 2)
    check_infer_shape([x, n], [out], [A34, 3])
    verify(lambda v: ts.specify_shape(v, (3, None)), [A34])


@pytest.mark.parametrize("linker", LINKERS)
def test_shape_and_shape_i_values(linker: str) -> None:
    x = ot.dtensor3("x")
    check([x], [ts.shape(x), ts.shape_i(x, 2)], [A234], [np.array([2, 3, 4]), 4], linker)


# ---------------------------------------------------------------------- construction


@pytest.mark.parametrize("linker", LINKERS)
def test_alloc_and_fills(linker: str) -> None:
    v, n = ot.dvector("v"), ot.lscalar("n")
    x = ot.fmatrix("x")
    outs = [
        tb.alloc(v, n, 4),
        tb.alloc(2.5, n),
        tb.alloc(1.0),
        tb.zeros((n, 2)),
        tb.ones(3, dtype="int8"),
        tb.full((2, n), 7, dtype="int32"),
        tb.zeros_like(x),
        tb.ones_like(x, dtype="int64"),
        tb.full_like(x, 0.5),
    ]
    vec = np.arange(4.0)
    xv = np.ones((2, 5), dtype="float32")
    want = [
        np.broadcast_to(vec, (3, 4)),
        np.full(3, 2.5),
        np.array(1.0),
        np.zeros((3, 2)),
        np.ones(3, dtype="int8"),
        np.full((2, 3), 7),
        np.zeros((2, 5)),
        np.ones((2, 5)),
        np.full((2, 5), 0.5),
    ]
    check([v, n, x], outs, [vec, 3, xv], want, linker)
    check_infer_shape([v, n, x], outs, [vec, 3, xv])


def test_alloc_reuses_output_storage_and_gives_fresh_results() -> None:
    v, n = ot.dvector("v"), ot.lscalar("n")
    f = compile_([v, n], tb.alloc(v, n, 2))
    first = f(np.array([1.0, 2.0]), 2)
    second = f(np.array([3.0, 4.0]), 2)
    np.testing.assert_array_equal(first, [[1, 2], [1, 2]])
    np.testing.assert_array_equal(second, [[3, 4], [3, 4]])


def test_alloc_and_inc_subtensor_runtime_broadcast_errors() -> None:
    v, n = ot.dvector("v"), ot.lscalar("n")
    f = compile_([v, n], tb.alloc(v, 2, n))
    with pytest.raises(ValueError, match=r"cannot broadcast a value of shape \(3,\) to \(2, 4\)"):
        f(np.zeros(3), 4)
    with pytest.raises(ValueError, match="run-time broadcasting is not allowed"):
        f(np.zeros(1), 4)
    x = ot.dmatrix("x")
    g = compile_([x, v], tst.inc_subtensor(x[1:], v))
    with pytest.raises(ValueError, match="run-time broadcasting is not allowed"):
        g(A34, np.zeros(1))
    h = compile_([x, v], tst.set_subtensor(x[[0, 0]], v))
    with pytest.raises(ValueError, match="run-time broadcasting is not allowed"):
        h(A34, np.zeros(1))
    np.testing.assert_array_equal(g(A34, np.ones(4))[1:], A34[1:] + 1)


def test_alloc_gradient_sums_over_broadcast_dimensions() -> None:
    verify(lambda v: tb.alloc(v, 3, 4), [np.arange(4.0)])
    verify(lambda v: tb.alloc(ts.specify_shape(v, (1, None)), 2, 3, 4), [A34[:1]])
    verify(lambda s: tb.alloc(s, 2, 2), [np.array(1.5)])


@pytest.mark.parametrize("linker", LINKERS)
def test_arange_and_eye(linker: str) -> None:
    n, k = ot.lscalar("n"), ot.lscalar("k")
    a, b, c = ot.dscalar("a"), ot.dscalar("b"), ot.dscalar("c")
    outs = [
        tb.arange(n),
        tb.arange(2, n, 3),
        tb.arange(n, 0, -2),
        tb.arange(a, b, c),
        tb.arange(5, dtype="float32"),
        tb.eye(n),
        tb.eye(n, 5, k, dtype="int8"),
        tb.eye(3, 2, -1),
    ]
    vals = [10, 1, 0.5, 2.0, 0.3]
    want = [
        np.arange(10),
        np.arange(2, 10, 3),
        np.arange(10, 0, -2),
        np.arange(0.5, 2.0, 0.3),
        np.arange(5, dtype="float32"),
        np.eye(10),
        np.eye(10, 5, 1, dtype="int8"),
        np.eye(3, 2, -1),
    ]
    check([n, k, a, b, c], outs, vals, want, linker)
    check_infer_shape([n, k, a, b, c], outs, vals)


def test_arange_gradient() -> None:
    verify(lambda s: tb.arange(s, 10.0, 1.5) ** 2, [np.array(0.25)])
    verify(lambda s: tb.arange(0.0, 5.0, s), [np.array(0.75)])


# ---------------------------------------------------------------------- join / stack / split


@pytest.mark.parametrize("linker", LINKERS)
def test_join_stack_split_values(linker: str) -> None:
    x, y = ot.dmatrix("x"), ot.fmatrix("y")
    ax, s = ot.lscalar("ax"), ot.lvector("s")
    i, j = ot.lscalar("i"), ot.dscalar("j")
    yv = np.ones((3, 2), dtype="float32")
    outs = [
        tb.join(1, x, y),
        tb.join(0, x, x),
        tb.concatenate([x, x, x], axis=0),
        tb.stack([x, x]),
        tb.stack([x, x], axis=2),
        tb.stack([i, j, 3]),
        *tb.split(x, [1, 3], 2, axis=1),
        *tb.split(x, s, 2, axis=ax),
    ]
    vals = [A34, yv, 0, np.array([1, 2]), 4, 0.5]
    want = [
        np.concatenate([A34, yv], axis=1),
        np.concatenate([A34, A34], axis=0),
        np.concatenate([A34] * 3),
        np.stack([A34, A34]),
        np.stack([A34, A34], axis=2),
        np.array([4.0, 0.5, 3.0]),
        A34[:, :1],
        A34[:, 1:],
        A34[:1],
        A34[1:],
    ]
    check([x, y, ax, s, i, j], outs, vals, want, linker)
    check_infer_shape([x, y, ax, s, i, j], outs, vals)


def test_split_and_join_runtime_errors() -> None:
    x, s = ot.dmatrix("x"), ot.lvector("s")
    f = compile_([x, s], tb.split(x, s, 2, axis=1))
    with pytest.raises(ValueError, match=r"sum to 3, not to the length 4"):
        f(A34, np.array([1, 2]))
    g = compile_([x], tb.join(0, x, x.T))
    with pytest.raises(ValueError, match="Join: cannot join shapes"):
        g(A34)


def test_join_split_stack_gradients() -> None:
    verify(lambda x, y: tb.join(1, x, y), [A34, A34[:, :2]])
    verify(lambda x: tb.stack([x, 2 * x], axis=1), [A34])
    verify(lambda x: tb.split(x, [1, 2], 2, axis=0)[1], [A34])
    verify(lambda x: tb.split(x, [4, 0], 2, axis=1)[0] * 3, [A34])


def test_make_vector_and_diagonal_values_and_gradients() -> None:
    x = ot.dmatrix("x")
    put = tb.DiagGrad(1, 0, 1)(x, x[0, :3])
    outs = [tb.make_vector(x[0, 0], x[1, 2]), tb.diagonal(x, 1), tb.diagonal(x, -1), put]
    expected_put = A34.copy()
    expected_put[[0, 1, 2], [1, 2, 3]] = A34[0, :3]
    want = [
        np.array([A34[0, 0], A34[1, 2]]),
        np.diagonal(A34, 1),
        np.diagonal(A34, -1),
        expected_put,
    ]
    check([x], outs, [A34], want, "vm")
    check_infer_shape([x], outs, [A34])
    verify(lambda v: tb.make_vector(v[0, 1], v[2, 3]), [A34])
    verify(lambda v: tb.diagonal(v, 1), [A34])
    verify(lambda v: tb.diagonal(v, -2, 2, 0), [A234])
    verify(lambda v, d: tb.DiagGrad(1, 0, 1)(v, d), [A34, A34[0, :3]])


def test_nonzero_values() -> None:
    needs("opweave.tensor.math")
    x = ot.dmatrix("x")
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    rows, cols = tb.nonzero(x)
    f = compile_([x], [rows, cols, tb.nonzero_values(x), tb.nonzero(x, return_matrix=True)])
    r, c, vals, m = f(a)
    np.testing.assert_array_equal(r, np.nonzero(a)[0])
    np.testing.assert_array_equal(c, np.nonzero(a)[1])
    np.testing.assert_array_equal(vals, a[a != 0])
    assert m.shape == (2, 3)


@pytest.mark.parametrize("linker", LINKERS)
def test_cast_where_fill_transpose(linker: str) -> None:
    needs("opweave.tensor.elemwise")
    x, c = ot.dmatrix("x"), ot.TensorType("bool", shape=(None, None))("c")
    cond = A34 > 0
    outs = [
        tb.cast(x, "int32"),
        x.astype("float32"),
        tb.where(c, x, 0.0),
        tb.fill(x, 2.0),
        tb.tensor_copy(x),
        tb.transpose(x),
        x.T,
        tb.swapaxes(ot.dtensor3("t"), 0, 2),
    ]
    want = [
        A34.astype("int32"),
        A34.astype("float32"),
        np.where(cond, A34, 0.0),
        np.full((3, 4), 2.0),
        A34,
        A34.T,
        A34.T,
        np.swapaxes(A234, 0, 2),
    ]
    t = outs[-1].owner.inputs[0]
    check([x, c, t], outs, [A34, cond, A234], want, linker)


# ---------------------------------------------------------------------- indexing


KEYS = [
    np.s_[1],
    np.s_[-1],
    np.s_[1:],
    np.s_[::-1],
    np.s_[::2, 1],
    np.s_[-2:, -3:-1],
    np.s_[:, ::-2],
    np.s_[5:1:-1, 3],
    np.s_[0, 0],
    np.s_[-1, -1],
    np.s_[10:],
    np.s_[..., 1],
    np.s_[1, ...],
    np.s_[None, 1],
    np.s_[:, None, 2:],
]


@pytest.mark.parametrize("linker", LINKERS)
def test_constant_basic_indexing(linker: str) -> None:
    x = ot.dmatrix("x")
    outs = [x[k] for k in KEYS]
    check([x], outs, [A34], [A34[k] for k in KEYS], linker)
    check_infer_shape([x], outs, [A34])


@pytest.mark.parametrize("linker", LINKERS)
def test_symbolic_indices_and_slices(linker: str) -> None:
    x = ot.dmatrix("x")
    i, j, k = ot.lscalar("i"), ot.iscalar("j"), ot.lscalar("k")
    outs = [x[i], x[i, j], x[i:], x[:j], x[i:j], x[::k], x[i::k, j], x[i:j:k], x[-i:, ::-1]]
    cases = [(1, 3, 1), (-1, -1, 2), (0, 3, -1), (2, 0, -2), (-3, 2, 3)]
    fn = compile_([x, i, j, k], outs, linker)
    for iv, jv, kv in cases:
        want = [
            A34[iv],
            A34[iv, jv],
            A34[iv:],
            A34[:jv],
            A34[iv:jv],
            A34[::kv],
            A34[iv::kv, jv],
            A34[iv:jv:kv],
            A34[-iv:, ::-1],
        ]
        for out, got, w in zip(outs, fn(A34, iv, np.int32(jv), kv), want):
            assert isinstance(got, np.ndarray) and got.ndim == out.ndim
            np.testing.assert_array_equal(got, w)
        check_infer_shape([x, i, j, k], outs, [A34, iv, np.int32(jv), kv])


def test_indexing_out_of_bounds_at_run_time() -> None:
    x, i = ot.dmatrix("x"), ot.lscalar("i")
    f = compile_([x, i], x[i])
    with pytest.raises(IndexError, match="out of bounds"):
        f(A34, 3)


@pytest.mark.parametrize("linker", LINKERS)
def test_set_and_inc_subtensor_values(linker: str) -> None:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    i = ot.lscalar("i")
    yv = np.array([10.0, 20.0, 30.0, 40.0])
    outs = [
        tst.set_subtensor(x[1], y),
        tst.inc_subtensor(x[1:], y),
        tst.set_subtensor(x[::-1, 0], 5.0),
        tst.inc_subtensor(x[i, i], 1.0),
        tst.set_subtensor(x[i:, :2], y[:2]),
        x[0].inc(y),
        x[:, 1].set(y[:3]),
        tst.set_subtensor(x[None, 1:], 0.0),
    ]

    def expect(fn: Callable[[np.ndarray], None]) -> np.ndarray:
        a = A34.copy()
        fn(a)
        return a

    want = [
        expect(lambda a: a.__setitem__(1, yv)),
        expect(lambda a: a.__setitem__(np.s_[1:], a[1:] + yv)),
        expect(lambda a: a.__setitem__(np.s_[::-1, 0], 5.0)),
        expect(lambda a: a.__setitem__((2, 2), a[2, 2] + 1.0)),
        expect(lambda a: a.__setitem__(np.s_[2:, :2], yv[:2])),
        expect(lambda a: a.__setitem__(0, a[0] + yv)),
        expect(lambda a: a.__setitem__(np.s_[:, 1], yv[:3])),
        expect(lambda a: a.__setitem__(np.s_[1:], 0.0)),
    ]
    results = check([x, y, i], outs, [A34, yv, 2], want, linker)
    assert all(not np.shares_memory(r, A34) for r in results)
    check_infer_shape([x, y, i], outs, [A34, yv, 2])


@pytest.mark.parametrize("linker", LINKERS)
def test_take_and_advanced_inc_with_repeated_indices(linker: str) -> None:
    x, idx, y = ot.dmatrix("x"), ot.lvector("idx"), ot.dmatrix("y")
    iv = np.array([0, 2, 2, -1])
    yv = np.arange(16.0).reshape(4, 4)
    outs = [
        tst.take(x, idx, axis=0),
        x[idx],
        tst.take(x, idx, axis=1),
        x[:, idx],
        tst.take(x, idx),
        tst.take(x, [[0, 1], [1, 2]], axis=0),
        tst.take(x, 7, mode="wrap"),
        tst.take(x, [-9, 9], axis=1, mode="clip"),
        tst.inc_subtensor(x[idx], y),
        tst.set_subtensor(x[idx], y),
        tst.advanced_inc_subtensor1(x, 1.0, idx),
        tst.inc_subtensor(x[:, idx], y[:3]),
    ]
    expected_inc = A34.copy()
    np.add.at(expected_inc, iv, yv)
    expected_set = A34.copy()
    expected_set[iv] = yv
    expected_one = A34.copy()
    np.add.at(expected_one, iv, 1.0)
    expected_col = A34.copy()
    np.add.at(expected_col.T, iv, yv[:3].T)
    want = [
        np.take(A34, iv, axis=0),
        A34[iv],
        np.take(A34, iv, axis=1),
        A34[:, iv],
        np.take(A34, iv),
        np.take(A34, [[0, 1], [1, 2]], axis=0),
        np.take(A34, 7, mode="wrap"),
        np.take(A34, [-9, 9], axis=1, mode="clip"),
        expected_inc,
        expected_set,
        expected_one,
        expected_col,
    ]
    check([x, idx, y], outs, [A34, iv, yv], want, linker)
    check_infer_shape([x, idx, y], outs, [A34, iv, yv])
    f = compile_([x, idx], x[idx], linker)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        f(A34, np.array([0, 3]))


def test_indexing_gradients() -> None:
    verify(lambda x: x[1:, ::-2], [A34])
    verify(lambda x: x[1, -1], [A34])
    verify(lambda x: x[None, :, 2], [A34])
    verify(lambda x: tst.inc_subtensor(x[1:], x[:2] * 3), [A34])
    verify(lambda x, y: tst.set_subtensor(x[::2, 1:], y), [A34, A34[:2, :3]])
    verify(lambda x, y: tst.inc_subtensor(x[1], ts.specify_shape(y, 1)), [A34, np.array([1.5])])
    verify(lambda x: tst.take(x, [0, 2, 2, 1], axis=0), [A34])
    verify(lambda x: tst.take(x, [3, 3, 0], axis=1), [A34])
    verify(lambda x, y: tst.advanced_inc_subtensor1(x, y, [0, 0, 2]), [A34, A34])
    row = [A34, A34[:1]]
    verify(lambda x, y: tst.advanced_inc_subtensor1(x, ts.specify_shape(y, (1, 4)), [0, 0]), row)
    verify(lambda x, y: tst.advanced_set_subtensor1(x, y, [1, 2]), [A34, A34[:2]])


# ---------------------------------------------------------------------- softmax family


def _softmax_ref(a: np.ndarray, axis: int | None) -> np.ndarray:
    shifted = a - np.max(a, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _logsumexp_ref(a: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@pytest.mark.parametrize("linker", LINKERS)
def test_softmax_family_is_stable(linker: str) -> None:
    needs("opweave.tensor.math")
    x = ot.dmatrix("x")
    big = np.array([[1000.0, 1001.0, 1002.0, -1000.0], [-800.0, -801.0, 0.0, 5.0], [3, 3, 3, 3]])
    outs = [
        tsp.softmax(x),
        tsp.softmax(x, axis=0),
        tsp.softmax(x, axis=None),
        tsp.log_softmax(x),
        tsp.log_softmax(x, axis=0),
        tsp.logsumexp(x),
        tsp.logsumexp(x, axis=1),
        tsp.logsumexp(x, axis=0, keepdims=True),
        tsp.SoftmaxGrad(1)(x, tsp.softmax(x)),
    ]
    sm = _softmax_ref(big, -1)
    want = [
        _softmax_ref(big, -1),
        _softmax_ref(big, 0),
        _softmax_ref(big, None),
        big - _logsumexp_ref(big, -1, True),
        big - _logsumexp_ref(big, 0, True),
        _logsumexp_ref(big, None, False),
        _logsumexp_ref(big, 1, False),
        _logsumexp_ref(big, 0, True),
        (big - np.sum(big * sm, axis=1, keepdims=True)) * sm,
    ]
    results = check([x], outs, [big], want, linker)
    assert all(np.isfinite(r).all() for r in results)
    np.testing.assert_allclose(results[0].sum(axis=1), 1.0)
    check_infer_shape([x], outs, [big])


def test_softmax_float32_and_infinities() -> None:
    needs("opweave.tensor.math")
    x = ot.fvector("x")
    f = compile_([x], [tsp.softmax(x), tsp.log_softmax(x), tsp.logsumexp(x)])
    sm, lsm, lse = f(np.array([-np.inf, 0.0, 88.0, 89.0], dtype="float32"))
    assert sm.dtype == lsm.dtype == lse.dtype == np.float32
    tail = 1 + np.exp(-1.0)
    expected = [0.0, np.exp(-89.0) / tail, np.exp(-1.0) / tail, 1 / tail]
    np.testing.assert_allclose(sm, expected, rtol=1e-5, atol=1e-42)
    assert lsm[0] == -np.inf and np.isfinite(lsm[1:]).all()
    np.testing.assert_allclose(lse, 89.0 + np.log1p(np.exp(-1.0)), rtol=1e-6)
    g = compile_([x], tsp.logsumexp(x))
    assert g(np.array([-np.inf, -np.inf], dtype="float32")) == -np.inf


def test_softmax_family_gradients() -> None:
    verify(lambda x: tsp.softmax(x), [A34])
    verify(lambda x: tsp.softmax(x, axis=0), [A34])
    verify(lambda x: tsp.softmax(x, axis=None), [A34])
    verify(lambda x: tsp.log_softmax(x), [A34])
    verify(lambda x: tsp.log_softmax(x, axis=0), [A34 * 50])
    verify(lambda x: tsp.logsumexp(x, axis=1), [A34])
    verify(lambda x: tsp.logsumexp(x), [A34 + 500])
    verify(lambda dy, sm: tsp.SoftmaxGrad(1)(dy, sm), [A34, _softmax_ref(A34, 1)])


def test_softmax_r_op_matches_jacobian_product() -> None:
    needs("opweave.gradient", "opweave.tensor.math")
    from opweave.gradient import Rop

    x, v = ot.dvector("x"), ot.dvector("v")
    xv, vv = A34[0], A34[1]
    f = compile_([x, v], [Rop(tsp.softmax(x), x, v), Rop(tsp.log_softmax(x), x, v)])
    r_sm, r_lsm = f(xv, vv)
    sm = _softmax_ref(xv, -1)
    jac = np.diag(sm) - np.outer(sm, sm)
    np.testing.assert_allclose(r_sm, jac @ vv, rtol=1e-10)
    np.testing.assert_allclose(r_lsm, vv - sm @ vv, rtol=1e-10)


def test_grad_of_shape_input_is_disconnected_but_value_grad_works() -> None:
    needs("opweave.gradient", "opweave.tensor.math")
    from opweave.gradient import grad

    x, n = ot.dscalar("x"), ot.lscalar("n")
    cost = tb.alloc(x, n, 3).sum()
    gx, gn = grad(cost, [x, n], disconnected_inputs="ignore")
    f = compile_([x, n], [gx, gn])
    got_x, got_n = f(2.0, 4)
    assert got_x == 12.0 and got_n == 0


def test_every_op_has_an_implementation() -> None:
    from opweave.graph.op import Op
    from opweave.tensor import shape_ops as tso
    from opweave_python import impls
    from opweave_python.impls import basic, shape, shape_ops, special, subtensor

    ops = {
        obj
        for module in (tb, ts, tso, tst, tsp)
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Op) and obj.__module__ == module.__name__
        and not obj.__name__.startswith("_")
    }  # fmt: skip
    tables = {
        **basic.PERFORMS,
        **shape.PERFORMS,
        **shape_ops.PERFORMS,
        **subtensor.PERFORMS,
        **special.PERFORMS,
    }
    assert ops == set(tables)
    assert ops <= set(impls.PERFORMS)  # and the backend serves them through its hook
    assert all("perform" not in vars(op) for op in ops), "the core holds no kernels"


def test_zero_d_outputs_are_arrays() -> None:
    x = ot.dvector("x")
    f = compile_([x], [x[0], tb.alloc(3.0), ts.reshape(x[:1], ())])
    for r in f(np.array([1.0, 2.0])):
        assert type(r) is np.ndarray and r.ndim == 0


def test_static_shape_of_tensor_constant_index() -> None:
    x = TensorType("float64", shape=(3, 4))("x")
    f = compile_([x], x[ot.constant(1)])
    np.testing.assert_array_equal(f(A34), A34[1])


def test_symbolic_slice_lengths_match_python_exhaustively() -> None:
    """``Subtensor.infer_shape`` for symbolic start/stop/step against ``slice.indices``."""
    needs("opweave.tensor.math", "opweave.tensor.elemwise")
    x = ot.dvector("x")
    a, b, c = ot.lscalar("a"), ot.lscalar("b"), ot.lscalar("c")
    exprs = [x[a:b:c], x[a::c], x[:b:c], x[a:b], x[::c]]
    lengths = []
    for out in exprs:
        node = out.owner
        (shp,) = node.op.infer_shape(None, node, [(ts.shape_i(x, 0),)] + [()] * 3)
        lengths.append(ot.as_tensor_variable(shp[0]))
    f = compile_([x, a, b, c], lengths)
    bounds = range(-7, 8)
    for n in (0, 1, 5):
        v = np.zeros(n)
        for start in bounds:
            for stop in bounds[::3]:
                for step in (-3, -1, 1, 2):
                    got = [int(g) for g in f(v, start, stop, step)]
                    want = [
                        len(v[start:stop:step]),
                        len(v[start::step]),
                        len(v[:stop:step]),
                        len(v[start:stop]),
                        len(v[::step]),
                    ]
                    assert got == want, (n, start, stop, step)


@pytest.mark.parametrize(
    "build",
    [
        lambda x: ts.reshape(x, (4, 3)),
        lambda x: ts.specify_shape(x, (3, 4)),
        lambda x: x[1:, ::-1],
        lambda x: tst.inc_subtensor(x[1:], x[:2]),
        lambda x: tst.take(x, [2, 0, 2]),
        lambda x: tst.advanced_inc_subtensor1(x, x[:2], [1, 1]),
        lambda x: tb.join(0, x, x[:1]),
        lambda x: tb.split(x, [1, 2], 2, axis=0)[1],
        lambda x: tb.alloc(x[0], 2, 4),
        lambda x: tb.make_vector(x[0, 0], x[1, 1]),
        lambda x: tsp.softmax(x, axis=0),
        lambda x: tsp.log_softmax(x),
    ],
)
def test_r_op_matches_the_l_op_derivation(build: Callable[[Any], Any]) -> None:
    """Each Op's ``R_op`` against the R-operator derived from its gradient."""
    needs("opweave.gradient", "opweave.tensor.math")
    from opweave.gradient import Rop

    x, v = ot.dmatrix("x"), ot.dmatrix("v")
    out = build(x)
    forward = Rop(out, x, v)
    derived = Rop(out, x, v, use_op_rop_implementation=False)
    f = compile_([x, v], [forward, derived])
    got, want = f(A34, A34[::-1] * 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_scalar_tensor_conversions(linker: str) -> None:
    import opweave.scalar as ps

    s = ps.ScalarType("float32")("s")
    t = ot.lscalar("t")
    as_tensor = tb.tensor_from_scalar(s)
    assert as_tensor.type == TensorType("float32", shape=())
    back = tb.scalar_from_tensor(t)
    assert back.type == ps.ScalarType("int64")
    assert ps.as_scalar(t).type == ps.ScalarType("int64")
    f = compile_([s, t], [as_tensor, tb.tensor_from_scalar(back)], linker)
    r1, r2 = f(np.float32(1.5), 7)
    assert type(r1) is np.ndarray and r1.dtype == np.float32 and r1 == 1.5
    assert r2.dtype == np.int64 and r2 == 7
    with pytest.raises(TypeError, match="0-d tensor"):
        tb.scalar_from_tensor(ot.dvector())
    verify(lambda v: tb.tensor_from_scalar(tb.scalar_from_tensor(v)) * 2.0, [np.array(0.5)])
