"""Lowerings fixed after the differential reliability harness compared the ``jax`` linker
with NumPy: each test holds the edge input that showed the difference."""

from __future__ import annotations

from typing import Any

import numpy as np

import opweave.tensor as pt


def test_cumsum_of_negative_zeros_stays_negative_zero(same_as_py: Any) -> None:
    # XLA starts a running sum from +0.0; NumPy's running sum of -0.0 is -0.0 until a
    # term of another sign or magnitude comes.
    x = pt.dmatrix("x")
    value = np.array([[-0.0, -0.0, 1.0, -1.0], [-0.0, 0.0, -0.0, -0.0], [2.0, -0.0, -2.0, -0.0]])
    got = same_as_py([x], [pt.cumsum(x, axis=1), pt.cumsum(x, axis=0)], [value])
    assert np.signbit(got[0][:, :2]).tolist() == [[True, True], [True, False], [False, False]]
    assert np.signbit(got[1][0]).tolist() == [True, True, False, True]


def test_cumsum_of_integers_and_empty_inputs(same_as_py: Any) -> None:
    x, e = pt.lmatrix("x"), pt.dmatrix("e")
    outs = [pt.cumsum(x, axis=1), pt.cumsum(e, axis=0), pt.cumprod(e, axis=1)]
    same_as_py([x, e], outs, [np.array([[3, -1], [0, 5]]), np.zeros((0, 3))])


def test_mixed_dtype_arithmetic_computes_in_the_output_dtype(same_as_py: Any) -> None:
    # JAX's own promotion computes int16 + float16 in float16; NumPy (and opweave's
    # output dtype) in float32: 1 + 0.1 is 1.0999756 there, 1.0996094 in float16.
    i, h = pt.matrix(dtype="int16"), pt.matrix(dtype="float16")
    outs = [i + h, i * h, i - h, pt.maximum(i, h)]
    args = [np.array([[1, 2049]], np.int16), np.array([[0.1, 65504.0]], np.float16)]
    got = same_as_py([i, h], outs, args)
    assert got[0].dtype == np.float32
    assert got[0][0, 0] == np.float32(1) + np.float32(np.float16(0.1))


def test_float_mod_and_floor_division_give_numpys_signed_zeros(same_as_py: Any) -> None:
    # A zero remainder takes the divisor's sign, a zero quotient that of x / y.
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    xs = np.array([[0.0, -0.0, 0.0, -0.0, 4.0, -4.0, 0.0]])
    ys = np.array([[-1.0, 1.0, -np.inf, np.inf, -2.0, 2.0, 3.0]])
    mod, quotient = same_as_py([x, y], [x % y, x // y], [xs, ys])
    assert np.signbit(mod).tolist() == [[True, False, True, False, True, False, False]]
    assert np.signbit(quotient[0, :4]).tolist() == [True, True, True, True]


def test_complex_keeps_signed_zero_and_infinite_parts(same_as_py: Any) -> None:
    # Built as re + 1j * im, -0.0 became +0.0 and inf * 0 a NaN real part.
    r, t = pt.dmatrix("r"), pt.dmatrix("t")
    rs = np.array([[np.nan, np.inf, -np.inf, 1.0]])
    ts = np.array([[-0.0, 0.0, -0.0, -0.0]])
    made, polar = same_as_py([r, t], [pt.complex(r, t), pt.complex_from_polar(r, t)], [rs, ts])
    assert np.signbit(made.imag).tolist() == [[True, False, True, True]]
    assert polar[0, 1].real == np.inf and np.isnan(polar[0, 1].imag)


def test_complex_tanh_of_imaginary_numbers(same_as_py: Any) -> None:
    # C99: tanh(+-0 + i y) = +-0 + i tan(y), +-0 + i NaN for an infinite or NaN y.
    z = pt.matrix(dtype="complex128")
    value = np.array([[complex(0, -0.0), complex(-0.0, -0.0), complex(0, np.inf), 1 + 2j]])
    (got,) = same_as_py([z], [pt.tanh(z)], [value], rtol=1e-15)
    assert got[0, 2].real == 0 and np.isnan(got[0, 2].imag)
    assert np.signbit(got[0, :2].imag).tolist() == [True, True]


def test_complex_tanh_of_real_numbers_keeps_the_zero_imaginary_sign(same_as_py: Any) -> None:
    z = pt.matrix(dtype="complex64")
    value = np.array([[complex(1, -0.0), complex(-2.5, -0.0), complex(0.5, 0.0)]], np.complex64)
    (got,) = same_as_py([z], [pt.tanh(z)], [value], rtol=1e-6)
    assert np.signbit(got.imag).tolist() == [[True, True, False]]


def test_special_function_edges_are_the_py_kernels(same_as_py: Any) -> None:
    # XLA's igamma is NaN at the shapes 0 and inf, its betainc NaN at x = 0 and 1 for a
    # huge a or b, and the start of ndtri_exp's tail overflowed below -max/2 (and its
    # Newton steps from -1e8 on).
    from opweave.tensor.special_extra import ndtri_exp

    k, x, a, b, y = (pt.dvector(n) for n in "kxaby")
    big = float(np.finfo(np.float64).max)
    shapes = np.array([0.0, 0.0, 0.0, np.inf, np.inf, np.inf, 2.0])
    points = np.array([0.0, 1.0, np.inf, 0.0, 1.0, np.inf, 3.0])
    ends = np.array([0.0, 0.0, 1.0, 1.0])
    outs = [pt.gammainc(k, x), pt.gammaincc(k, x), pt.betainc(a, b, ends), ndtri_exp(y)]
    args = [
        shapes,
        points,
        np.array([1e308, 2.0, 1e308, 0.5]),
        np.array([2.0, 1e308, 2.0, 0.5]),
        np.array([-big, -0.75 * big, -1e300, -1e29, -1e20, -1e9, -1e5, -800.0]),
    ]
    got = same_as_py([k, x, a, b, y], outs, args, rtol=2e-14)
    assert np.all(np.isfinite(got[3]))
