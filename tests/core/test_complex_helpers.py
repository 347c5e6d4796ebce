"""The complex-number helpers ``real``, ``imag``, ``conj``/``conjugate``, ``angle``,
``complex`` and ``complex_from_polar`` of ``opweave.tensor``: values against NumPy on the
``py``, ``vm`` and ``cvm`` linkers, dtype rules, gradients (PyTensor's convention for complex
numbers), shapes, bad inputs, and the ``c`` linker's clean refusal."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.gradient import grad, verify_grad
from opweave.graph.type import NullType
from opweave.scalar import complex as psc
from opweave.scalar.type import get_scalar_type
from opweave.tensor.elemwise import Elemwise

LINKERS = ("py", "vm", "cvm")
COMPLEX = ("complex64", "complex128")

Z_VALUES = np.array([1 + 2j, -3 - 0.5j, 0j, -2 + 0j, -0.0 - 1j, 4.5 + 1e-3j])


def run(inputs, outputs, *values, linker="vm"):
    mode = opweave.Mode(linker=linker)
    f = opweave.function(inputs, outputs, mode=mode, on_unused_input="ignore")
    return f(*values)


def scalar_op_of(var):
    assert isinstance(var.owner.op, Elemwise)
    return var.owner.op.scalar_op


# ---------------------------------------------------------------------- values


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_parts_conjugate_and_angle_match_numpy(linker: str, dtype: str) -> None:
    z = ot.vector("z", dtype=dtype)
    zv = Z_VALUES.astype(dtype)
    outs = [ot.real(z), ot.imag(z), ot.conj(z), ot.conjugate(z), ot.angle(z)]
    outs += [z.real, z.imag, z.conj(), z.conjugate()]
    want = [np.real(zv), np.imag(zv), np.conj(zv), np.conj(zv), np.angle(zv)]
    want += [np.real(zv), np.imag(zv), np.conj(zv), np.conj(zv)]
    got = run([z], outs, zv, linker=linker)
    for out, g, w in zip(outs, got, want, strict=True):
        assert g.dtype == w.dtype == np.dtype(out.type.dtype)
        np.testing.assert_array_equal(g, w)


def test_output_dtypes_are_the_real_parts() -> None:
    for cdtype, fdtype in (("complex64", "float32"), ("complex128", "float64")):
        z = ot.matrix("z", dtype=cdtype)
        for fn in (ot.real, ot.imag, ot.angle):
            out = fn(z)
            assert out.type.dtype == fdtype and out.type.ndim == 2
        assert ot.conj(z).type == z.type


@pytest.mark.parametrize("linker", LINKERS)
def test_real_inputs_keep_their_behaviour(linker: str) -> None:
    x = ot.dvector("x")
    assert ot.real(x) is x and x.real is x
    assert ot.conj(x) is x and ot.conjugate(x) is x and x.conj() is x
    i = ot.vector("i", dtype="int8")
    assert ot.imag(i).type.dtype == "int8"
    xv = np.array([1.5, -2.0, 0.0, -0.0, np.inf, -np.inf])
    iv = np.array([3, -4, 0], dtype="int8")
    im_x, ang_x, im_i, ang_i = run(
        [x, i], [ot.imag(x), ot.angle(x), ot.imag(i), ot.angle(i)], xv, iv, linker=linker
    )
    np.testing.assert_array_equal(im_x, np.zeros(6))
    np.testing.assert_array_equal(im_i, np.zeros(3, dtype="int8"))
    assert im_i.dtype == np.int8
    np.testing.assert_array_equal(ang_x, np.angle(xv))  # 0 or pi, pi for -0.0 as NumPy
    assert ang_i.dtype == np.float32  # as arctan2 of int8 (NumPy's angle gives float16)
    np.testing.assert_array_equal(ang_i, np.angle(iv.astype("float32")))


def test_graph_structure() -> None:
    z = ot.zvector("z")
    assert scalar_op_of(ot.real(z)) == psc.real
    assert scalar_op_of(z.imag) == psc.imag
    assert scalar_op_of(ot.conj(z)) == psc.conj
    assert scalar_op_of(ot.angle(z)) == psc.angle
    x, y = ot.dvector("x"), ot.dvector("y")
    assert scalar_op_of(ot.complex(x, y)) == psc.complex
    assert scalar_op_of(ot.complex_from_polar(x, y)) == psc.complex_from_polar
    assert ot.real(z).owner.op == ot.real(ot.zvector("w")).owner.op
    assert str(psc.real) == "real" and psc.real != psc.imag


# ---------------------------------------------------------------------- complex()


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("float32", "float32", "complex64"),
        ("float64", "float64", "complex128"),
        ("float32", "float64", "complex128"),
        ("float16", "float16", "complex64"),
        ("int8", "int8", "complex64"),
        ("int16", "float32", "complex64"),
        ("int32", "int16", "complex128"),
        ("int64", "float32", "complex128"),
        ("uint32", "uint8", "complex128"),
        ("bool", "bool", "complex64"),
    ],
)
def test_complex_dtype_rules(a: str, b: str, expected: str) -> None:
    x, y = ot.vector("x", dtype=a), ot.vector("y", dtype=b)
    assert ot.complex(x, y).type.dtype == expected
    assert ot.complex_from_polar(x, y).type.dtype == expected
    xv, yv = np.array([1, 0], dtype=a), np.array([0, 1], dtype=b)
    got, polar = run([x, y], [ot.complex(x, y), ot.complex_from_polar(x, y)], xv, yv)
    assert got.dtype == polar.dtype == np.dtype(expected)
    np.testing.assert_array_equal(got, xv + 1j * yv.astype("float64"))


@pytest.mark.parametrize("linker", LINKERS)
def test_complex_broadcasts_and_keeps_infinite_parts(linker: str) -> None:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    xv = np.array([[1.0, -2.0, 0.0], [np.inf, 3.0, -0.0]])
    yv = np.array([0.5, np.inf, -1.0])
    got = run([x, y], ot.complex(x, y), xv, yv, linker=linker)
    assert got.shape == (2, 3) and got.dtype == np.complex128
    np.testing.assert_array_equal(got.real, np.broadcast_to(xv, (2, 3)))
    np.testing.assert_array_equal(got.imag, np.broadcast_to(yv, (2, 3)))
    assert np.signbit(got.real[1, 2])  # -0.0 stays -0.0
    # Python numbers are accepted.
    got = run([y], ot.complex(2, y), yv, linker=linker)
    np.testing.assert_array_equal(got.real, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(got.imag, yv)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(("dtype", "rtol"), [("float32", 1e-6), ("float64", 1e-15)])
def test_complex_from_polar_matches_numpy(linker: str, dtype: str, rtol: float) -> None:
    r, t = ot.vector("r", dtype=dtype), ot.matrix("t", dtype=dtype)
    rv = np.array([1.0, 2.5, 0.0], dtype=dtype)
    tv = np.array([[0.0, np.pi / 3, -2.0], [1.0, -np.pi, 7.0]], dtype=dtype)
    got = run([r, t], ot.complex_from_polar(r, t), rv, tv, linker=linker)
    want = rv * np.exp(1j * tv)
    assert got.dtype == want.dtype == np.dtype(ot.complex_from_polar(r, t).type.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_round_trip_through_parts() -> None:
    z = ot.cvector("z")
    zv = Z_VALUES.astype("complex64")
    back = ot.complex(ot.real(z), ot.imag(z))
    polar = ot.complex_from_polar(ot.abs(z), ot.angle(z))
    got_back, got_polar = run([z], [back, polar], zv, linker="cvm")
    assert got_back.dtype == got_polar.dtype == np.complex64
    np.testing.assert_array_equal(got_back, zv)
    np.testing.assert_allclose(got_polar, zv, atol=1e-6)


# ---------------------------------------------------------------------- bad input


def test_complex_of_complex_inputs_is_a_type_error_naming_the_input() -> None:
    z, x = ot.zvector("z"), ot.dvector("x")
    with pytest.raises(TypeError, match=r"complex: real \(z\) has the complex dtype complex128"):
        ot.complex(z, x)
    with pytest.raises(TypeError, match=r"complex: imag has the complex dtype complex128"):
        ot.complex(x, np.array([1j]))
    with pytest.raises(TypeError, match=r"complex_from_polar: angle \(z\) has the complex"):
        ot.complex_from_polar(x, z)
    with pytest.raises(TypeError, match="complex"):
        psc.complex(get_scalar_type("complex64")(), get_scalar_type("float32")())


# ---------------------------------------------------------------------- shapes


def test_infer_shape() -> None:
    z, x, y = ot.zmatrix("z"), ot.dmatrix("x"), ot.drow("y")
    zv = np.ones((3, 4), dtype="complex128")
    xv, yv = np.ones((3, 4)), np.ones((1, 4))
    for out in (ot.real(z), ot.imag(z), ot.conj(z), ot.angle(z)):
        node = out.owner
        (inferred,) = node.op.infer_shape(None, node, [(z.shape[0], z.shape[1])])
        assert tuple(run([z], list(inferred), zv)) == (3, 4)
        assert run([z], out, zv).shape == (3, 4)
    for out in (ot.complex(x, y), ot.complex_from_polar(x, y)):
        node = out.owner
        shapes = [(x.shape[0], x.shape[1]), (1, y.shape[1])]
        (inferred,) = node.op.infer_shape(None, node, shapes)
        assert tuple(run([x, y], list(inferred), xv, yv)) == (3, 4)
    # The shape of the result needs no complex computation.
    f = opweave.function([x, y], ot.complex(x, y).shape, mode=opweave.Mode(linker="vm"))
    assert not any(isinstance(n.op, Elemwise) for n in f.maker.fgraph.apply_nodes)


# ---------------------------------------------------------------------- gradients

RNG = np.random.default_rng(2024)
XV = RNG.uniform(0.5, 1.5, size=5)
YV = RNG.uniform(-1.5, -0.5, size=5)

LOSSES = {
    "abs_squared": lambda x, y: ot.abs(ot.complex(x, y)) ** 2,
    "z_times_conj_z": lambda x, y: ot.real(ot.complex(x, y) * ot.conj(ot.complex(x, y))),
    "angle": lambda x, y: ot.angle(ot.complex(x, y)),
    "parts": lambda x, y: 2 * ot.real(ot.complex(x, y)) - ot.imag(ot.complex(y, x)),
    "polar": lambda x, y: (
        ot.real(ot.complex_from_polar(x, y)) * ot.imag(ot.complex_from_polar(y, x))
    ),
    "exp_div": lambda x, y: ot.imag(ot.exp(ot.complex(x, y)) / ot.complex(y, x)),
    "mixed": lambda x, y: ot.angle(x * ot.complex(y, x) + ot.sqrt(ot.complex(x, y)) ** 2),
    "cast": lambda x, y: ot.imag(x.astype("complex128") * ot.complex(x, y)),
}


@pytest.mark.parametrize("linker", ["vm", "cvm"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_of_real_losses_through_complex_values(linker: str, name: str) -> None:
    verify_grad(LOSSES[name], [XV, YV], rng=0, mode=opweave.Mode(linker=linker))


def test_gradients_in_single_precision() -> None:
    for name in ("abs_squared", "angle", "polar"):
        verify_grad(
            LOSSES[name],
            [XV.astype("float32"), YV.astype("float32")],
            rng=1,
            mode=opweave.Mode(linker="cvm"),
        )


def test_gradient_values_follow_the_complex_convention() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    z = ot.complex(x, y)
    gx, gy = grad(ot.real(z * ot.conj(z)).sum(), [x, y])
    got = run([x, y], [gx, gy], XV, YV)
    np.testing.assert_allclose(got[0], 2 * XV)
    np.testing.assert_allclose(got[1], 2 * YV)
    # With respect to a complex variable: d/dx + i d/dy.
    w = ot.zvector("w")
    wv = XV + 1j * YV
    g_real, g_imag, g_angle, g_conj = (
        grad(ot.real(w).sum(), w),
        grad(ot.imag(w).sum(), w),
        grad(ot.angle(w).sum(), w),
        grad(ot.imag(ot.conj(w)).sum(), w),
    )
    assert g_real.type.dtype == "complex128"
    values = run([w], [g_real, g_imag, g_angle, g_conj], wv)
    np.testing.assert_array_equal(values[0], np.ones(5, dtype=complex))
    np.testing.assert_array_equal(values[1], np.full(5, 1j))
    np.testing.assert_allclose(values[2], (-YV + 1j * XV) / (XV**2 + YV**2))
    np.testing.assert_array_equal(values[3], np.full(5, -1j))


def test_gradients_of_real_and_discrete_inputs() -> None:
    x, i = ot.dvector("x"), ot.vector("i", dtype="int32")
    g_angle, g_imag = grad((ot.angle(x) + ot.imag(x)).sum(), [x, x])
    np.testing.assert_array_equal(run([x], [g_angle + g_imag], XV)[0], np.zeros(5))
    (g_i,) = grad(ot.real(ot.complex(i, x)).sum(), [i], disconnected_inputs="ignore")
    assert g_i.type.dtype == opweave.config.floatX
    np.testing.assert_array_equal(run([i, x], g_i, np.arange(5, dtype="int32"), XV), 0)


def test_complex_gradients_of_other_ops_stay_undefined() -> None:
    z = ot.zvector("z")
    out = ot.tanh(z)
    (g,) = out.owner.op.L_op(out.owner.inputs, out.owner.outputs, [out.type("gz")])
    assert isinstance(g.type, NullType) and "complex" in g.type.why_null


# ---------------------------------------------------------------------- C backends


def test_cvm_runs_them_in_python_and_c_refuses_cleanly() -> None:
    pytest.importorskip("opweave_c")
    from opweave_c.linkers.c_linker import MissingCCodeError

    x, y = ot.dvector("x"), ot.dvector("y")
    out = ot.angle(ot.complex(x, y) * 2) + ot.real(ot.complex_from_polar(x, y))
    want = np.angle((XV + 1j * YV) * 2) + XV * np.cos(YV)
    np.testing.assert_allclose(run([x, y], out, XV, YV, linker="cvm"), want)
    with pytest.raises(MissingCCodeError, match="cvm"):
        opweave.function([x, y], out, mode=opweave.Mode(linker="c"))
