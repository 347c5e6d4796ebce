"""``opweave.tensor.signal``: ``convolve1d``/``Convolve1d`` and ``convolve2d``/``Convolve2d``
(PyTensor's contract) against SciPy's ``signal.convolve``/``convolve2d`` on every linker."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pytest
from scipy.signal import convolve as scipy_convolve  # type: ignore[import-untyped]
from scipy.signal import convolve2d as scipy_convolve2d

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.gradient import verify_grad
from opweave.graph.replace import vectorize_graph
from opweave.link.lookup import available_linkers, unusable_linkers
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.signal import conv
from opweave.tensor.signal.conv import Convolve1d, Convolve2d, convolve1d, convolve2d

#: ``py`` and ``vm``; ``cvm`` with the C backend; ``jax`` with the JAX backend.
LINKERS = [n for n in ("py", "vm", "cvm", "jax") if n in available_linkers()]
LINKERS = [n for n in LINKERS if n not in unusable_linkers()]
Mode1d = Literal["full", "valid", "same"]
MODES: tuple[Mode1d, ...] = ("full", "valid", "same")
RNG = np.random.default_rng(19)


def op_of(v: Any) -> Any:
    """The Op of the node that computes ``v``."""
    assert v.owner is not None
    return v.owner.op


def run(inputs: list[Any], outputs: Any, *values: Any, linker: str) -> Any:
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))(*values)


def values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype.startswith("int"):
        return RNG.integers(-9, 10, size=shape).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


def tolerance(dtype: str) -> dict[str, Any]:
    if dtype == "float32":
        return {"rtol": 1e-5, "atol": 1e-5}
    return {"rtol": 1e-12, "atol": 1e-12}


# ------------------------------------------------------------------------ 1-d values


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("n", "k"), [(8, 3), (5, 5), (3, 8), (1, 4), (6, 1)])
def test_convolve1d_values(linker: str, mode: Mode1d, n: int, k: int) -> None:
    data, kernel = ot.dvector("data"), ot.dvector("kernel")
    dv, kv = values((n,), "float64"), values((k,), "float64")
    got = run([data, kernel], convolve1d(data, kernel, mode=mode), dv, kv, linker=linker)
    want = scipy_convolve(dv, kv, mode=mode)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **tolerance("float64"))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("dtype1", "dtype2"),
    [
        ("float32", "float32"),
        ("float64", "float32"),
        ("int64", "int64"),
        ("int32", "int16"),
        ("int64", "float32"),
        ("float32", "int8"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_convolve1d_dtypes_follow_the_upcast(
    linker: str, dtype1: str, dtype2: str, mode: Mode1d
) -> None:
    data = ot.vector("data", dtype=dtype1)
    kernel = ot.vector("kernel", dtype=dtype2)
    out = convolve1d(data, kernel, mode=mode)
    expected_dtype = np.result_type(np.dtype(dtype1), np.dtype(dtype2))
    assert out.type.dtype == expected_dtype
    dv, kv = values((7,), dtype1), values((4,), dtype2)
    got = run([data, kernel], out, dv, kv, linker=linker)
    want = scipy_convolve(dv.astype("float64"), kv.astype("float64"), mode=mode)
    assert got.dtype == expected_dtype
    tol = tolerance("float32" if "float32" in (dtype1, dtype2) else "float64")
    np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("mode", MODES)
def test_convolve1d_batches_broadcast(linker: str, mode: Mode1d) -> None:
    data = ot.tensor("data", shape=(None, None, None), dtype="float64")
    kernel = ot.tensor("kernel", shape=(1, None, None), dtype="float64")
    single = ot.dvector("single")
    dv, kv, sv = values((2, 3, 9), "float64"), values((1, 3, 4), "float64"), values((2,), "float64")
    outs = [convolve1d(data, kernel, mode=mode), convolve1d(data, single, mode=mode)]
    got = run([data, kernel, single], outs, dv, kv, sv, linker=linker)
    want0 = np.array([[scipy_convolve(dv[i, j], kv[0, j], mode=mode) for j in range(3)]
                      for i in range(2)])  # fmt: skip
    want1 = np.array([[scipy_convolve(dv[i, j], sv, mode=mode) for j in range(3)]
                      for i in range(2)])  # fmt: skip
    np.testing.assert_allclose(got[0], want0, **tolerance("float64"))
    np.testing.assert_allclose(got[1], want1, **tolerance("float64"))


def test_batches_of_swapped_inputs_agree() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    xv = values((2, 8), "float64")
    got = run([x, y], convolve1d(x, y), xv, xv[::-1], linker="py")
    want = np.convolve(xv[0], xv[1])
    np.testing.assert_allclose(got[0], want, **tolerance("float64"))
    np.testing.assert_allclose(got[1], want, **tolerance("float64"))


# ------------------------------------------------------------------------ types, shapes


@pytest.mark.parametrize(
    ("mode", "n", "k", "expected"),
    [
        ("full", 8, 3, 10),
        ("valid", 8, 3, 6),
        ("valid", 3, 8, 6),
        ("full", None, 3, None),
        ("valid", 8, None, None),
    ],
)
def test_static_shapes(mode: Mode1d, n: int | None, k: int | None, expected: int | None) -> None:
    """The core Op's lengths are static with a constant flag; the Blockwise's (whose core
    node has a symbolic flag) are not, as in PyTensor."""
    data = ot.tensor("data", shape=(4, n), dtype="float64")
    kernel = ot.tensor("kernel", shape=(k,), dtype="float64")
    core: Any = Convolve1d()(data[0], kernel, np.bool_(mode == "full"))
    assert core.type.shape == (expected,)
    out = convolve1d(data, kernel, mode=mode)
    assert out.type.shape == (4, None)
    assert isinstance(op_of(out), Blockwise)
    assert isinstance(op_of(out).core_op, Convolve1d)
    assert op_of(out).core_op.gufunc_signature == "(n0),(k0),()->(o0)"
    assert Convolve2d().gufunc_signature == "(n0,n1),(k0,k1),()->(o0,o1)"


def test_same_mode_is_valid_of_a_padded_input_with_the_first_input_s_length() -> None:
    data = ot.tensor("data", shape=(2, 9), dtype="float64")
    kernel = ot.dvector("kernel")
    out: Any = convolve1d(data, kernel, mode="same")
    assert not run([], out.owner.inputs[2], linker="py")  # valid
    dv, kv = values((2, 9), "float64"), values((4,), "float64")
    assert run([data, kernel], out, dv, kv, linker="py").shape == (2, 9)


def test_infer_shape_needs_no_kernel() -> None:
    data, kernel = ot.dvector("data"), ot.dvector("kernel")
    outs = [convolve1d(data, kernel, mode=m).shape for m in MODES]
    f = opweave.function([data, kernel], outs, mode=Mode(linker="py"))
    assert not any(
        isinstance(getattr(node.op, "core_op", node.op), Convolve1d)
        for node in f.maker.fgraph.toposort()
    )
    for n, k in [(8, 3), (3, 8)]:
        got = f(np.zeros(n), np.zeros(k))
        assert [tuple(g) for g in got] == [(n + k - 1,), (max(n, k) - min(n, k) + 1,), (n,)]


def test_make_node_refuses_wrong_ranks_and_flags() -> None:
    with pytest.raises(ValueError, match=r"Convolution inputs must have ndim=1, got: in1=2"):
        Convolve1d()(ot.dmatrix("a"), ot.dvector("b"), np.bool_(True))
    with pytest.raises(ValueError, match="full_mode flag must be a boolean type"):
        Convolve1d()(ot.dvector("a"), ot.dvector("b"), ot.lscalar("flag"))
    assert Convolve1d() == Convolve1d() and Convolve2d("fft") != Convolve2d("direct")


def test_a_symbolic_mode_flag_gives_unknown_lengths() -> None:
    a, b = ot.dvector("a"), ot.dvector("b")
    flag = ot.scalar("flag", dtype="bool")
    out: Any = Convolve1d()(a, b, flag)
    assert out.type.shape == (None,)
    av, bv = values((6,), "float64"), values((3,), "float64")
    f = opweave.function([a, b, flag], out, mode=Mode(linker="py"))
    np.testing.assert_allclose(f(av, bv, True), np.convolve(av, bv, "full"))
    np.testing.assert_allclose(f(av, bv, False), np.convolve(av, bv, "valid"))


def test_whole_graph_c_linker_refuses_the_convolution_by_name() -> None:
    pytest.importorskip("opweave_c")
    from opweave_c.linkers.c_linker import MissingCCodeError

    a, b = ot.dvector("a"), ot.dvector("b")
    with pytest.raises(MissingCCodeError, match="has no C implementation"):
        opweave.function([a, b], convolve1d(a, b), mode=Mode(linker="c"))


# ------------------------------------------------------------------------ gradients


@pytest.mark.parametrize("linker", ["py", *(["cvm"] if "cvm" in LINKERS else [])])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("n", "k"), [(8, 3), (3, 8), (5, 5)])
def test_convolve1d_gradients(linker: str, mode: Mode1d, n: int, k: int) -> None:
    rng = np.random.default_rng(n * 10 + k)
    dv, kv = rng.normal(size=n), rng.normal(size=k)
    m = Mode(linker=linker)
    verify_grad(lambda x: convolve1d(x, kv, mode=mode), [dv], rng=rng, mode=m)
    verify_grad(lambda y: convolve1d(dv, y, mode=mode), [kv], rng=rng, mode=m)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("mode", MODES)
def test_batched_gradients_against_scipy(linker: str, mode: Mode1d) -> None:
    """d/dx sum(w * conv(x, y)) is a correlation of w with y (SciPy's, per row)."""
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    out = convolve1d(x, y, mode=mode)
    w = ot.dmatrix("w")
    gx, gy = opweave.grad((out * w).sum(), [x, y])
    xv, yv = values((3, 9), "float64"), values((3, 4), "float64")
    wv = values(scipy_convolve(xv[:1], yv[:1], mode=mode).shape[-1:], "float64")
    wv = np.broadcast_to(wv, (3, wv.shape[0])).copy()
    got_gx, got_gy = run([x, y, w], [gx, gy], xv, yv, wv, linker=linker)

    # Finite differences of the scalar cost, one element at a time.
    def cost(a: np.ndarray, b: np.ndarray) -> float:
        return float(sum((scipy_convolve(a[i], b[i], mode=mode) * wv[i]).sum() for i in range(3)))

    eps = 1e-6
    for got, base, is_x in ((got_gx, xv, True), (got_gy, yv, False)):
        num = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            up, down = base.copy(), base.copy()
            up[idx] += eps
            down[idx] -= eps
            args_up = (up, yv) if is_x else (xv, up)
            args_down = (down, yv) if is_x else (xv, down)
            num[idx] = (cost(*args_up) - cost(*args_down)) / (2 * eps)
        np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-6)


def test_batched_gradients_have_only_convolution_blockwise_nodes() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    grads = opweave.grad(convolve1d(x, y, mode="valid").sum(), [x, y])
    f = opweave.function([x, y], grads, mode=Mode(linker="py"))
    blockwise: list[Any] = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Blockwise)]
    assert all(isinstance(n.op.core_op, Convolve1d) for n in blockwise)


@pytest.mark.parametrize("static_shape", [False, True])
def test_valid_gradient_of_the_smaller_input_is_a_valid_convolution(static_shape: bool) -> None:
    larger = ot.tensor("larger", shape=(128 if static_shape else None,), dtype="float64")
    smaller = ot.tensor("smaller", shape=(64 if static_shape else None,), dtype="float64")
    grad = opweave.grad(convolve1d(larger, smaller, mode="valid").sum(), smaller)
    g: Any = opweave.graph.rewrite_graph(
        grad, include=("ShapeOpt", "canonicalize", "stabilize", "local_useless_unbatched_blockwise")
    )
    [node] = [
        n
        for n in opweave.graph.traversal.io_toposort([larger, smaller], [g])
        if isinstance(getattr(n.op, "core_op", n.op), Convolve1d) and n.inputs[0] is not larger
    ]  # the gradient's convolution (the forward one may remain for the output's shape)
    flag = node.inputs[-1]
    f = opweave.function([larger, smaller], flag, mode=Mode(linker="py"), on_unused_input="ignore")
    assert not f(np.zeros(128), np.zeros(64))
    if not static_shape:
        assert f(np.zeros(64), np.zeros(128))


# ------------------------------------------------------------------------ vectorize


def test_vectorize_graph_batches_the_convolution() -> None:
    a, b = ot.dvector("a"), ot.dvector("b")
    out = convolve1d(a, b, mode="valid")
    ab = ot.dmatrix("ab")
    batched = vectorize_graph(out, {a: ab})
    assert isinstance(op_of(batched), Blockwise)
    assert isinstance(op_of(batched).core_op, Convolve1d)
    abv, bv = values((3, 7), "float64"), values((2,), "float64")
    got = run([ab, b], batched, abv, bv, linker="py")
    np.testing.assert_allclose(got, np.array([np.convolve(r, bv, "valid") for r in abv]))
    core: Any = Convolve1d()(a, b, np.bool_(True))
    assert isinstance(op_of(vectorize_graph(core, {b: b})), Convolve1d)
    batched_core = vectorize_graph(core, {a: ab})
    assert isinstance(op_of(batched_core), Blockwise)


# ------------------------------------------------------------------------ 2-d


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("boundary", "fillvalue"), [("fill", 0), ("fill", 0.5), ("wrap", 0), ("symm", 0)]
)
@pytest.mark.parametrize(("data_shape", "kernel_shape"), [((5, 5), (3, 3)), ((8, 8), (5, 3))])
def test_convolve2d_values(
    linker: str,
    mode: Mode1d,
    boundary: Any,
    fillvalue: float,
    data_shape: tuple[int, int],
    kernel_shape: tuple[int, int],
) -> None:
    data, kernel = ot.dmatrix("data"), ot.dmatrix("kernel")
    out = convolve2d(data, kernel, mode=mode, boundary=boundary, fillvalue=fillvalue)
    dv, kv = values(data_shape, "float64"), values(kernel_shape, "float64")
    got = run([data, kernel], out, dv, kv, linker=linker)
    want = scipy_convolve2d(dv, kv, mode=mode, boundary=boundary, fillvalue=fillvalue)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("method", ["direct", "fft", "auto"])
@pytest.mark.parametrize("mode", MODES)
def test_convolve2d_methods_batches_and_gradient(method: Any, mode: Mode1d) -> None:
    data = ot.dtensor3("data")
    kernel = ot.dmatrix("kernel")
    out = convolve2d(data, kernel, mode=mode, method=method)
    assert op_of(out).core_op == Convolve2d(method)
    dv, kv = values((2, 6, 7), "float64"), values((3, 2), "float64")
    got = run([data, kernel], out, dv, kv, linker="py")
    want = np.array([scipy_convolve2d(d, kv, mode=mode) for d in dv])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    rng = np.random.default_rng(3)
    verify_grad(
        lambda k: convolve2d(dv[0], k, mode=mode, method=method),
        [kv],
        rng=rng,
        mode=Mode(linker="py"),
    )


def test_convolve2d_refuses_an_unknown_boundary() -> None:
    with pytest.raises(ValueError, match="Unsupported boundary mode: mirror"):
        convolve2d(ot.dmatrix("a"), ot.dmatrix("b"), mode="same", boundary="mirror")  # type: ignore[arg-type]


def test_pytensor_names() -> None:
    assert ot.signal.convolve1d is convolve1d and ot.signal.convolve2d is convolve2d
    assert tuple(ot.signal.__all__) == ("convolve1d", "convolve2d")
    assert conv._blockwise_convolve_1d.core_op is conv._convolve_1d
