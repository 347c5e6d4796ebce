"""``opweave.tensor.fft`` and ``opweave.tensor.fourier``: PyTensor's names, signatures and
types, NumPy's values.

The real transforms (``rfft``, ``irfft``, every ``norm``, odd and even lengths, batches of
1-d and 2-d transforms, float32 and float64) and ``Fourier`` are compared with
``numpy.fft`` on every linker that runs them (``py``, ``vm``, ``cvm``, and ``jax`` when
installed); the whole-graph ``c`` linker refuses them (they have no C code). Gradients are
checked with finite differences (``verify_grad``) and, for ``Fourier``'s complex gradient,
against the transposed Jacobian that ``numpy.fft.fft`` gives; ``infer_shape`` against the
computed shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.gradient import verify_grad
from opweave.graph.basic import Variable
from opweave.link.lookup import available_linkers, unusable_linkers
from opweave.tensor import fft, fourier
from opweave.tensor.fft import IRFFTOp, RFFTOp, irfft, irfft_op, rfft, rfft_op
from opweave.tensor.fourier import Fourier

RNG = np.random.default_rng(7)


#: ``py`` and ``vm``; ``cvm`` with the C backend; ``jax`` with the JAX backend.
LINKERS = [n for n in ("py", "vm", "cvm", "jax") if n in available_linkers()]
LINKERS = [n for n in LINKERS if n not in unusable_linkers()]
NORMS: tuple[Any, ...] = (None, "ortho", "no_norm")
#: Batch-first input shapes: 1-d transforms of even and odd lengths, 2-d transforms.
SHAPES = [(1, 16), (3, 7), (2, 4, 6), (2, 3, 5)]


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, linker: str) -> Any:
    fn = opweave.function(list(inputs), outputs, mode=Mode(linker=linker))
    return fn(*values)


def tolerance(dtype: str) -> float:
    """The relative and absolute tolerance of results in ``dtype``."""
    return 1e-4 if dtype == "float32" else 1e-10


def as_pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1)


def scale(shape: Sequence[int], norm: str | None, inverse: bool) -> float:
    """What numpy's ``norm=None`` result is multiplied by to give ``norm``'s."""
    n = float(np.prod(shape[1:]))
    if norm == "ortho":
        return float(np.sqrt(n) if inverse else 1 / np.sqrt(n))
    if norm == "no_norm":
        return n if inverse else 1.0
    return 1.0


# ------------------------------------------------------------------------ values


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rfft_and_irfft_match_numpy(linker: str, dtype: str, shape: tuple[int, ...]) -> None:
    x = ot.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    spec = ot.tensor("spec", dtype=dtype, shape=(None,) * (len(shape) + 1))
    is_odd = shape[-1] % 2 == 1
    outputs = [rfft(x, norm=n) for n in NORMS] + [irfft(spec, norm=n, is_odd=is_odd) for n in NORMS]
    xv = RNG.random(shape).astype(dtype)
    axes = tuple(range(1, len(shape)))
    spec_c = np.fft.rfftn(RNG.random(shape), axes=axes)
    specv = as_pairs(spec_c).astype(dtype)
    results = run([x, spec], outputs, xv, specv, linker=linker)
    forward = np.fft.rfftn(xv.astype(np.float64), axes=axes)
    inverse = np.fft.irfftn(specv[..., 0] + 1j * specv[..., 1], s=shape[1:], axes=axes)
    for got, norm in zip(results[:3], NORMS, strict=True):
        assert got.dtype == dtype and got.shape == (*forward.shape, 2)
        want = as_pairs(forward * scale(shape, norm, inverse=False))
        np.testing.assert_allclose(got, want, rtol=tolerance(dtype), atol=tolerance(dtype))
    for got, norm in zip(results[3:], NORMS, strict=True):
        assert got.dtype == dtype and got.shape == shape
        np.testing.assert_allclose(
            got,
            inverse * scale(shape, norm, inverse=True),
            rtol=tolerance(dtype),
            atol=tolerance(dtype),
        )


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_irfft_inverts_rfft(linker: str, norm: Any) -> None:
    x = ot.dtensor3("x")
    xv = RNG.random((2, 3, 5))
    got = run([x], irfft(rfft(x, norm=norm), norm=norm, is_odd=True), xv, linker=linker)
    np.testing.assert_allclose(got, xv, rtol=1e-10, atol=1e-12)


def test_the_ops_take_explicit_lengths_cropping_and_padding() -> None:
    x = ot.dmatrix("x")
    xv = RNG.random((2, 6))
    got = run([x], [rfft_op(x, [4]), rfft_op(x, [9])], xv, linker="py")
    for out, n in zip(got, (4, 9), strict=True):
        np.testing.assert_allclose(out, as_pairs(np.fft.rfft(xv, n, axis=1)), atol=1e-12)
    spec = ot.dtensor3("spec")
    specv = as_pairs(np.fft.rfft(xv, axis=1))
    (back,) = run([spec], [irfft_op(spec, [7])], specv, linker="py")
    want = np.fft.irfft(specv[..., 0] + 1j * specv[..., 1], 7, axis=1) * 7
    np.testing.assert_allclose(back, want, atol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_fourier_matches_numpy_fft(linker: str) -> None:
    a = ot.dmatrix("a")
    z = ot.zmatrix("z")
    v = ot.dvector("v")
    outputs = [
        fourier.fft(a, None, None),
        fourier.fft(a, 10, 0),  # padded
        fourier.fft(a, 3, 1),  # cropped
        fourier.fft(z, 5, 0),
        fourier.fft(v, 7, None),
    ]
    av = RNG.random((8, 6))
    zv = RNG.random((4, 3)) + 1j * RNG.random((4, 3))
    vv = RNG.random(5)
    got = run([a, z, v], outputs, av, zv, vv, linker=linker)
    wants = [
        np.fft.fft(av),
        np.fft.fft(av, 10, 0),
        np.fft.fft(av, 3, 1),
        np.fft.fft(zv, 5, 0),
        np.fft.fft(vv, 7),
    ]
    for out, want in zip(got, wants, strict=True):
        assert out.dtype == np.complex128
        np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("linker", [name for name in LINKERS if name != "jax"])
def test_fourier_takes_an_axis_known_when_called(linker: str) -> None:
    a = ot.dmatrix("a")
    b = ot.iscalar("b")
    av = RNG.random((4, 6))
    f = opweave.function([a, b], fourier.fft(a, 8, b), mode=Mode(linker=linker))
    for axis in (0, 1):
        np.testing.assert_allclose(f(av, axis), np.fft.fft(av, 8, axis), atol=1e-10)


def test_jax_takes_an_axis_given_when_called_as_a_static_argument() -> None:
    if "jax" not in LINKERS:
        pytest.skip("opweave-jax is not installed")
    a = ot.dmatrix("a")
    b = ot.iscalar("b")
    f = opweave.function([a, b], fourier.fft(a, 8, b), mode=Mode(linker="jax"))
    g = opweave.function([a, b], fourier.fft(a, 8, b), mode=Mode(linker="py"))
    value = RNG.random((2, 3))
    for axis in (1, 0, 1):
        np.testing.assert_allclose(f(value, axis), g(value, axis), rtol=1e-13, atol=1e-15)
    # An axis computed from floats stays unknown while tracing: refused.
    c = ot.dscalar("c")
    h = opweave.function(
        [a, c], fourier.fft(a, 8, ot.cast(c, "int32")), mode=Mode(linker="jax", optimizer=None)
    )
    with pytest.raises(NotImplementedError, match="the axis of Fourier must be known"):
        h(value, 1.0)


def test_the_whole_graph_c_linker_refuses_them_by_name() -> None:
    pytest.importorskip("opweave_c")
    from opweave_c.linkers.c_linker import MissingCCodeError

    x = ot.dmatrix("x")
    for out, name in ((rfft(x), "RFFTOp"), (fourier.fft(x, 4, 1), "Fourier")):
        with pytest.raises(MissingCCodeError, match=f"{name} has no C implementation"):
            opweave.function([x], out, mode=Mode(linker="c"))
    spec = ot.dtensor3("spec")
    with pytest.raises(MissingCCodeError, match="IRFFTOp has no C implementation"):
        opweave.function([spec], irfft(spec), mode=Mode(linker="c"))


# ------------------------------------------------------------------------ types, shapes


def test_output_types_are_pytensors() -> None:
    x = ot.fmatrix("x")
    assert rfft(x).type == ot.TensorType("float32", shape=(None, None, 2))
    assert irfft(rfft(x)).type == ot.TensorType("float32", shape=(None, None))
    spectrum: Any = rfft_op(ot.dtensor3("y"))
    assert spectrum.type.shape == (None, None, None, 2)
    a = ot.tensor("a", shape=(3, 1))
    outs: list[Any] = [
        fourier.fft(a, 4, 1),
        fourier.fft(a, ot.iscalar(), 1),
        fourier.fft(a, 4, ot.iscalar()),
        fourier.fft(a, None, None),
    ]
    assert outs[0].type == ot.TensorType("complex128", shape=(3, 4))
    assert [out.type.shape for out in outs[1:]] == [(3, None), (None, None), (3, 1)]


@pytest.mark.parametrize(
    "build",
    [
        lambda x: rfft(x),
        lambda x: irfft(rfft(x), is_odd=True),
        lambda x: rfft_op(x, [4, 9]),
        lambda x: irfft_op(rfft_op(x), [3, 8]),
        lambda x: fourier.fft(x, 11, 1),
        lambda x: fourier.fft(x, None, 2),
    ],
    ids=["rfft", "irfft", "rfft_op_lengths", "irfft_op_lengths", "fourier", "fourier_last"],
)
def test_infer_shape_gives_the_computed_shape_without_the_transform(build: Any) -> None:
    x = ot.dtensor3("x")
    out = build(x)
    xv = RNG.random((2, 5, 7))
    f = opweave.function([x], out.shape, mode=Mode(linker="py"))
    ops = {type(node.op) for node in f.maker.fgraph.toposort()}
    assert not ops & {RFFTOp, IRFFTOp, Fourier}
    want = opweave.function([x], out, mode=Mode(linker="py"))(xv).shape
    assert tuple(f(xv)) == want


def test_infer_shape_with_a_symbolic_axis() -> None:
    a = ot.dmatrix("a")
    b = ot.iscalar("b")
    out: Any = fourier.fft(a, 16, b)
    f = opweave.function([a, b], out.shape, mode=Mode(linker="py"))
    assert not any(isinstance(node.op, Fourier) for node in f.maker.fgraph.toposort())
    av = RNG.random((12, 4))
    assert tuple(f(av, 0)) == (16, 4) and tuple(f(av, 1)) == (12, 16)


# ------------------------------------------------------------------------ gradients


def verify(fun: Any, pt: np.ndarray, eps: float | None = None) -> None:
    verify_grad(fun, [pt], rng=np.random.default_rng(3), eps=eps, mode=Mode(linker="py"))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rfft_gradient(norm: Any, shape: tuple[int, ...]) -> None:
    verify(lambda x: rfft(x, norm=norm), RNG.random(shape))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_irfft_gradient(norm: Any, shape: tuple[int, ...]) -> None:
    is_odd = shape[-1] % 2 == 1
    spec_shape = (*shape[:-1], shape[-1] // 2 + 1, 2)
    verify(lambda s: irfft(s, norm=norm, is_odd=is_odd), RNG.random(spec_shape))


def test_float32_gradients() -> None:
    verify(lambda x: rfft(x), RNG.random((1, 16)).astype("float32"), eps=1e-1)
    verify(lambda s: irfft(s), RNG.random((1, 9, 2)).astype("float32"), eps=1e-1)


def test_gradient_through_an_added_batch_axis() -> None:
    verify(lambda x: rfft(x[None, :]), RNG.random(16))


@pytest.mark.parametrize(
    ("n", "axis", "shape"), [(None, 1, (3, 5)), (8, 0, (3, 5)), (3, 1, (3, 5)), (6, 0, (4,))]
)
def test_fourier_gradient_is_the_transposed_jacobian(
    n: int | None, axis: int, shape: tuple[int, ...]
) -> None:
    a = ot.tensor("a", dtype="float64", shape=(None,) * len(shape))
    out: Any = fourier.fft(a, n, axis)
    length = shape[axis] if n is None else n
    gz = ot.tensor("gz", dtype="complex128", shape=(None,) * len(shape))
    (ga, *rest) = out.owner.op.grad(out.owner.inputs, [gz])
    assert rest == [None, None]
    av = RNG.random(shape)
    out_shape = list(shape)
    out_shape[axis] = length
    gv = RNG.random(out_shape) + 1j * RNG.random(out_shape)
    got = opweave.function([a, gz], ga, mode=Mode(linker="py"))(av, gv)
    # jacobian[k, j] = d fft(a, length)[k] / d a[j] along the axis.
    jacobian = np.fft.fft(np.eye(shape[axis]), length, axis=0)
    want = np.moveaxis(np.tensordot(gv, jacobian, axes=(axis, 0)), -1, axis)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_fourier_gradient_needs_a_constant_axis() -> None:
    a = ot.dmatrix("a")
    out: Any = fourier.fft(a, 4, ot.iscalar("b"))
    with pytest.raises(NotImplementedError, match="only for axis being an opweave constant"):
        out.owner.op.grad(out.owner.inputs, [out.type()])


def test_the_lengths_are_disconnected_from_the_gradient() -> None:
    x = ot.dmatrix("x")
    out: Any = rfft_op(x)
    assert out.owner.op.connection_pattern(out.owner) == [[True], [False]]
    spec = ot.dtensor3("spec")
    back: Any = irfft_op(spec)
    assert back.owner.op.connection_pattern(back.owner) == [[True], [False]]


# ------------------------------------------------------------------------ errors


def test_arguments_are_checked_as_in_pytensor() -> None:
    x = ot.dmatrix("x")
    spec = ot.dtensor3("spec")
    with pytest.raises(ValueError, match="Invalid value 123 for norm"):
        rfft(x, norm=123)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Invalid value 123 for norm"):
        irfft(spec, norm=123)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Invalid value 123 for id_odd"):
        irfft(spec, is_odd=123)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="input must have dimension >= 2"):
        rfft_op(ot.dvector("v"))
    with pytest.raises(TypeError, match="input must have dimension >= 3"):
        irfft_op(x)
    with pytest.raises(TypeError, match="must be of type integer"):
        rfft_op(x, ot.dvector("s"))
    with pytest.raises(TypeError, match="Input must be an array, not a scalar"):
        fourier.fft(ot.dscalar("c"), None, None)
    with pytest.raises(TypeError, match="Index of the transformed axis must be a scalar"):
        fourier.fft(x, None, 2)
    with pytest.raises(TypeError, match="Index of the transformed axis must be of type integer"):
        fourier.fft(x, None, ot.dscalar("d"))
    with pytest.raises(TypeError, match="strictly positive scalar"):
        fourier.fft(x, 0, 1)
    with pytest.raises(TypeError, match="Length of the transformed axis must be of type integer"):
        fourier.fft(x, ot.dscalar("n"), 1)


def test_pytensor_names() -> None:
    assert fft.rfft_op is rfft_op and isinstance(rfft_op, RFFTOp)
    assert fft.irfft_op is irfft_op and isinstance(irfft_op, IRFFTOp)
    assert isinstance(fourier.fft, Fourier)
    assert set(fft.__all__) == {"RFFTOp", "IRFFTOp", "rfft_op", "irfft_op", "rfft", "irfft"}
    assert set(fourier.__all__) == {"Fourier", "fft"}
