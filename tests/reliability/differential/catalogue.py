"""What the differential harness checks: one entry per elementwise scalar Op (and per
reduction and shape Op family), with the NumPy/SciPy function that gives its reference
values and the dtypes each argument may take.

A case's *signatures* are the combinations of its arguments' dtypes that the Op accepts
(its ``make_node`` builds them). Reference values are computed from the same input values,
widened to float64 (complex128) when the Op's output is a float (complex) and the case asks
for it, then converted to the output dtype (integers wrap as in NumPy's ``astype``).
Where SciPy is known to be wrong (a case's ``scipy_wrong``, each with its reason), the
expected values are mpmath's high-precision ones instead (:mod:`.exact`). A fused
expression is checked in ulps of the magnitude of its terms (its ``magnitude``), which is
what the rounding of its elementary functions is relative to when the terms cancel.

``KNOWN_DISAGREEMENTS`` lists the cases where a linker is known to give another value than
the reference: those cases are expected to fail (strictly, so a fix shows up as a failure
until its entry is removed). ``LINKER_DISAGREEMENTS`` names the one linker that disagrees
on a case: the others are still compared there. ``EXCLUDED_SCALAR_OPS`` lists the scalar
Op classes of the backends' implementation tables that have no case here, each with the
reason.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special as sps

import opweave.scalar.basic as sb
import opweave.scalar.bessel as sbes
import opweave.scalar.complex as scx
import opweave.scalar.composite as scomp
import opweave.scalar.hyp2f1 as shyp
import opweave.scalar.math as sm
import opweave.scalar.probability as sprob
import opweave.scalar.shape_gradients as ssg
import opweave.scalar.special as ssp
import opweave.tensor as pt
from opweave.tensor.elemwise import Elemwise

from . import exact as mpx
from .values import ALL_DTYPES

__all__ = [
    "ELEMWISE_CASES",
    "EXCLUDED_SCALAR_OPS",
    "FUSED_CASES",
    "KNOWN_DISAGREEMENTS",
    "LINKER_DISAGREEMENTS",
    "LINKER_ULPS",
    "PRODUCT_CASES",
    "REDUCTION_CASES",
    "SHAPE_CASES",
    "ElemwiseCase",
    "LinkerDisagreement",
    "MatrixCase",
    "flushed",
    "known_disagreement",
    "linker_disagreement",
]

BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INT = SIGNED + UNSIGNED
FLOAT = ("float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
DISCRETE = BOOL + INT
REAL = DISCRETE + FLOAT
ALL = ALL_DTYPES

#: Tolerance, in units in the last place of the output dtype, of the elementary functions
#: (the C library and NumPy round them within a few ulps).
ELEMENTARY_ULPS = 4
#: Tolerance of the special functions, whose implementations (series, continued fractions,
#: asymptotic expansions) differ between SciPy's Cephes and the backends: about 6e-14
#: relative in float64, 2e-5 in float32.
SPECIAL_ULPS = 256
#: Wider tolerances of one linker for one function, as measured on the edge values:
#: (case name, linker) -> ulps. XLA computes ``exp2(x)`` as ``exp(x * log(2))`` and
#: ``sinh``/``cosh`` from ``exp``, whose error grows with ``|x|`` (18 ulps at
#: ``exp2(-100)`` in float32, 10 at ``cosh(-100)`` in float64; several hundred near the
#: overflow threshold, which the edge values do not reach).
LINKER_ULPS: dict[tuple[str, str], float] = {
    ("exp2", "jax"): 18,
    ("sinh", "jax"): 10,
    ("cosh", "jax"): 10,
}


@dataclass(frozen=True)
class ElemwiseCase:
    """An elementwise Op checked against a NumPy/SciPy function.

    Parameters
    ----------
    name
        Names the case in test ids (the public function's name).
    op_class
        The scalar Op class the built graph applies.
    build
        Builds the output from one tensor variable per argument.
    reference
        Gives the expected values from the input arrays.
    args
        The dtypes each argument may take.
    ulps
        Float tolerance in units in the last place of the output dtype.
    widen
        Whether float and integer inputs reach the reference as float64 (complex128) when
        the output is a float (complex): the reference is then as exact as it can be.
    defined
        Where the reference gives the contract's value (elementwise mask from the inputs);
        elsewhere nothing is compared. ``None``: everywhere.
    edge_limit
        How many edge values each argument takes (the combinations grow as the power of
        the arity); ``None``: all.
    drop
        Combinations of input values left out (elementwise mask from the inputs), each
        with its reason at the case.
    signed_zero
        Whether a zero result must have the reference's sign (SciPy's special functions
        and IEEE ``minimum``/``maximum`` of two zeros do not promise one).
    exact
        The function of :mod:`mpmath` numbers whose high-precision value is expected where
        ``scipy_wrong`` holds (see :mod:`.exact`).
    scipy_wrong
        Where the reference is known to be wrong (elementwise mask from the inputs, widened
        to float64), each with its reason at the case: there ``exact`` gives the expected
        value. ``None``: nowhere.
    checked
        Dtype combinations checked in every run, besides those drawn (their edge values
        reach points that the float64 ones do not: integers near a zero of J1, the largest
        int16 as a shape).
    magnitude
        The magnitude of the terms of a fused expression (elementwise, from the inputs):
        its rounding errors are ulps of that magnitude, not of a result that cancels, so
        the tolerance is ``ulps`` units in the last place of the larger of the two.
        ``None``: the result's.
    """

    name: str
    op_class: type
    build: Callable[..., Any]
    reference: Callable[..., np.ndarray]
    args: tuple[tuple[str, ...], ...]
    ulps: float = ELEMENTARY_ULPS
    widen: bool = True
    defined: Callable[..., np.ndarray] | None = None
    edge_limit: int | None = None
    drop: Callable[..., np.ndarray] | None = None
    signed_zero: bool = True
    exact: Callable[..., Any] | None = None
    scipy_wrong: Callable[..., np.ndarray] | None = None
    checked: tuple[tuple[str, ...], ...] = ()
    magnitude: Callable[..., np.ndarray] | None = None

    @property
    def arity(self) -> int:
        return len(self.args)

    def accepts(self, signature: tuple[str, ...]) -> bool:
        """Whether the Op builds on inputs of these dtypes."""
        try:
            self.build(*(pt.matrix(dtype=dtype) for dtype in signature))
        except TypeError:
            return False
        return True

    def signatures(self) -> list[tuple[str, ...]]:
        """The dtype combinations of ``args`` the Op accepts."""
        return [sig for sig in itertools.product(*self.args) if self.accepts(sig)]

    def expected(self, inputs: list[np.ndarray], out_dtype: str) -> np.ndarray:
        """The reference values of ``inputs``, in ``out_dtype``."""
        if self.widen and np.dtype(out_dtype).kind in "fc":
            inputs = [
                x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in inputs
            ]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = np.asarray(self.reference(*inputs)).astype(out_dtype)
        if self.scipy_wrong is None or self.exact is None:
            return expected
        return self._exact_where_scipy_wrong(inputs, expected)

    def _exact_where_scipy_wrong(
        self, inputs: list[np.ndarray], expected: np.ndarray
    ) -> np.ndarray:
        """``expected`` with the high-precision values where the reference is wrong."""
        assert self.scipy_wrong is not None and self.exact is not None
        wide = [np.asarray(x).astype(np.float64) for x in inputs]
        with np.errstate(all="ignore"):
            wrong = np.asarray(self.scipy_wrong(*wide), bool)
        shape = np.broadcast_shapes(expected.shape, wrong.shape, *(x.shape for x in wide))
        out = np.array(np.broadcast_to(expected, shape))
        wrong = np.broadcast_to(wrong, shape)
        wide = [np.broadcast_to(x, shape) for x in wide]
        for index in map(tuple, np.argwhere(wrong)):
            args = tuple(float(x[index]) for x in wide)
            out[index] = mpx.exact_value(self.exact, args)
        return out

    def tolerance(self, inputs: list[np.ndarray], out_dtype: str) -> np.ndarray | None:
        """The absolute tolerance from :attr:`magnitude` (``None`` without one)."""
        if self.magnitude is None or np.dtype(out_dtype).kind != "f":
            return None
        with np.errstate(all="ignore"):
            wide = [np.asarray(x).astype(np.float64) for x in inputs]
            scale = np.abs(np.asarray(self.magnitude(*wide))).astype(out_dtype)
            tol = self.ulps * np.spacing(scale).astype(np.float64)
        return np.where(np.isfinite(tol), tol, 0.0)

    def mask(self, inputs: list[np.ndarray]) -> np.ndarray:
        """Where the reference applies."""
        if self.defined is None:
            return np.ones(np.broadcast_shapes(*(x.shape for x in inputs)), bool)
        with np.errstate(all="ignore"):
            return np.asarray(self.defined(*inputs), bool)


def _e(
    name: str, op_class: type, reference: Callable[..., np.ndarray], *args: Any, **kwargs: Any
) -> ElemwiseCase:
    """A case whose graph is the function ``opweave.tensor.<name>``."""
    fn = getattr(pt, name)
    return ElemwiseCase(name, op_class, fn, reference, tuple(args), **kwargs)


# -- references where NumPy and SciPy have no direct function -----------------------------


def _round_half_away(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    whole = np.floor(a)
    return np.copysign(np.where(a - whole >= 0.5, whole + 1, whole), x)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    return np.where(x < -np.log(2.0), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def _xlogx(x: np.ndarray) -> np.ndarray:
    return sps.xlogy(x, x)


def _int_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Integer power computed in the result dtype (both operands converted to it, as
    NumPy's two arrays): wrapping around there, or a float power where the result is a
    float (``int64 ** uint64``); a negative integer exponent gives the truncated quotient
    ``1 / base**-exponent`` (1, -1 or 0)."""
    out_dtype = np.result_type(base, exponent)
    if out_dtype.kind == "f":
        return np.power(base.astype(out_dtype), exponent.astype(out_dtype))
    base, exponent = np.broadcast_arrays(base.astype(out_dtype), exponent.astype(out_dtype))
    result = np.power(base, np.where(exponent < 0, 0, exponent))
    odd = (exponent % 2) != 0
    negative = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(exponent < 0, negative.astype(out_dtype), result)


def _power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "biu" and y.dtype.kind in "biu":
        return _int_power(x, y)
    return np.power(x, y)


def _power_defined(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer ``0 ** negative`` divides by zero: no value is promised."""
    if x.dtype.kind in "biu" and y.dtype.kind in "biu":
        return ~((x == 0) & (y < 0))
    return np.ones(np.broadcast_shapes(x.shape, y.shape), bool)


def _mul_without_zeros(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(x == 0, y, np.where(y == 0, x, x * y))


def _complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.complex128)
    out.real, out.imag = x, y
    return out


def _complex_from_polar(r: np.ndarray, theta: np.ndarray) -> np.ndarray:
    return _complex(r * np.cos(theta), r * np.sin(theta))


def _not_subnormal(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind != "f":
        return np.ones(x.shape, bool)
    return ~((x != 0) & (np.abs(x) < np.finfo(x.dtype).smallest_normal))


def _scipy_bessel_defined(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """SciPy's iv, ive and kve give NaN, 0 or inf at tiny, huge and infinite arguments
    whose true values are finite (iv(0, 5e-324) = 1, kve(0, inf) = 0), and NaN at
    subnormal orders."""
    magnitude = np.abs(x.astype(np.float64))
    order = np.abs(v.astype(np.float64))
    good_x = np.isfinite(magnitude) & (magnitude < 1e300)
    good_x &= (magnitude == 0) | (magnitude > 1e-300)
    return good_x & ((order == 0) | (order > 1e-300))


def _owens_t_defined(h: np.ndarray, a: np.ndarray) -> np.ndarray:
    """SciPy's owens_t loses the result when ``a`` is below the smallest normal number
    (owens_t(7.25, 2.2e-308) is 1.37e-320; SciPy gives 2.5e-322)."""
    magnitude = np.abs(a.astype(np.float64))
    return (magnitude == 0) | (magnitude >= np.finfo(a.dtype).smallest_normal * 1e10)


def _hyp2f1_defined(a: np.ndarray, b: np.ndarray, c: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Real hyp2f1 has a branch cut beyond z = 1, where SciPy gives inf even for NaN
    parameters, and SciPy gives 1 or inf for NaN parameters or a subnormal ``c``: no
    reference there."""
    params = np.stack(np.broadcast_arrays(*(p.astype(np.float64) for p in (a, b, c))))
    tiny_c = (c != 0) & (np.abs(c.astype(np.float64)) < 1e-300)
    return (z.astype(np.float64) <= 1) & np.isfinite(params).all(axis=0) & ~tiny_c


def _gamma_finite(k: np.ndarray, x: np.ndarray) -> np.ndarray:
    """gamma(k) overflows beyond 171.6 and below 1e-300 (SciPy's incomplete gamma loses
    tiny ``k`` too), where the product reference is inf, NaN or inaccurate."""
    magnitude = np.abs(k.astype(np.float64))
    finite = (magnitude < 171) & ((magnitude == 0) | (magnitude > 1e-300))
    return np.broadcast_to(finite, np.broadcast_shapes(k.shape, x.shape))


def _tiny_first(a: np.ndarray, *others: np.ndarray) -> np.ndarray:
    if a.dtype.kind != "f":
        return np.zeros(a.shape, bool)
    return (a != 0) & (np.abs(a) <= np.finfo(a.dtype).smallest_normal)


def _huge_first(v: np.ndarray, *others: np.ndarray) -> np.ndarray:
    magnitude = np.abs(v.astype(np.float64))
    return np.isfinite(magnitude) & (magnitude > 1000)


# -- where SciPy is wrong (the expected values are then mpmath's; see .exact) --------------

#: Beyond this magnitude ``x - pi/4`` rounds to ``x`` in double precision.
_PHASE_LOST = 2.0**52


def _phase_lost(x: np.ndarray) -> np.ndarray:
    """SciPy's Cephes j0 and j1 subtract the phase (pi/4, 3pi/4) from ``x`` in double
    precision: beyond 2**52 nothing of it is left (and from 2**30 on it is inaccurate),
    j0(max float) is -5.95e-155 there for -4.19e-155."""
    return np.asarray(np.isfinite(x) & (np.abs(x) >= _PHASE_LOST), dtype=bool)


def _high_order(v: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """SciPy's (AMOS) error in jv, iv, ive and kve grows with the order: 100 ulps and more
    from the order 50 on (jv, kve), 279, 292 and 341 ulps at the order 100 (jv(-100, 1.5),
    iv(100, 3), kve(-100, 0.5))."""
    high = np.isfinite(v) & (np.abs(v) >= 50)
    return np.broadcast_to(high, np.broadcast_shapes(v.shape, *(x.shape for x in others)))


def _jv_scipy_wrong(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """SciPy's jv gives 0, inf or NaN at a nonzero ``|x| < 1e-300`` whose value is finite
    and nonzero (jv(0.5, 2.2e-308) is 1.19e-154, jv(-0.5, 5e-324) 3.59e161, jv(2.2e-308,
    5e-324) 1), 0 at huge ``x`` (jv(3, max float) is -4.23e-155), and loses accuracy at high
    orders (:func:`_high_order`)."""
    finite = np.isfinite(v) & np.isfinite(x)
    tiny = (x != 0) & (np.abs(x) < 1e-300)
    return np.asarray(finite & (tiny | _phase_lost(x) | _high_order(v)), dtype=bool)


def _kve_scipy_wrong(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.asarray(_high_order(v) & np.isfinite(x) & (x > 0), dtype=bool)


def _subnormal_shape(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """SciPy's gammainc gives 0 for a subnormal ``a`` and ``x <= 1`` (its series factor
    underflows; the value rounds to 1)."""
    subnormal = (a > 0) & (a < np.finfo(np.float64).smallest_normal)
    return np.asarray(subnormal & np.isfinite(x) & (x >= 0), dtype=bool)


def _gamma_inverse_scipy_wrong(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """SciPy's gammaincinv and gammainccinv give numbers outside their domain (``a > 0``,
    ``0 <= y <= 1``) where their Cephes code falls through after its domain error: 0 at
    ``a = -0.0`` for ``y > 1`` (NaN at ``a = +0.0`` and at ``a = 1``), at ``a = 0`` for a
    tiny ``y`` (``Q(0, x)`` is 0 for every ``x > 0``: no solution), at ``y = -5e-324``
    (NaN at ``y = -1``), 733 for gammainccinv(-0.5, -5e-324); the inverse is NaN there.
    At a subnormal ``y`` SciPy stops at any ``x`` whose ``P`` (``Q``) rounds to ``y``, up
    to 5% of ``P`` away (gammaincinv(32767, 5e-324) is 26287.51 for 26287.73,
    gammainccinv(0.5, 5e-324) 740.443 for 740.563); mpmath's inverse is computed for
    ``a`` below 1e10 (a bracket of ``log x`` bisected)."""
    defined = ~np.isnan(a) & ~np.isnan(y) & (y != 0) & (y != 1)  # the edges: 0 and inf
    outside = (a <= 0) | (y < 0) | (y > 1)
    subnormal = (y > 0) & (y < np.finfo(np.float64).smallest_normal) & (a > 0) & (a < 1e10)
    return np.asarray(defined & (outside | subnormal), dtype=bool)


def _cast_to(dtype: str) -> ElemwiseCase:
    return ElemwiseCase(
        f"cast_to_{dtype}",
        sb.Cast,
        lambda x: pt.cast(x, dtype),
        _uint32_cast if dtype == "uint32" else (lambda x: x.astype(dtype)),
        (ALL,),
        widen=False,
    )


def _uint32_cast(x: np.ndarray) -> np.ndarray:
    """NumPy's cast to ``uint32`` of every element through its vectorized loop's rule.

    NumPy converts NaN and out-of-range floats to ``uint32`` differently in its vectorized
    loop and in the scalar loop that finishes an array's tail (2147483648 or 0), so the
    reference converts each value in a block of 16 copies of it (which the vectorized loop
    converts whole) and keeps the first.
    """
    if x.dtype.kind not in "fc":
        return x.astype(np.uint32)
    flat = np.real(x).ravel() if x.dtype.kind == "c" else x.ravel()
    with np.errstate(invalid="ignore", over="ignore"):
        converted = np.repeat(flat, 16).astype(np.uint32)
    return converted[::16].reshape(x.shape)


def _elementwise(scalar_op: Any) -> Callable[..., Any]:
    return Elemwise(scalar_op)


_B = SPECIAL_ULPS

ELEMWISE_CASES: tuple[ElemwiseCase, ...] = (
    # -- unary, elementary --------------------------------------------------------------
    _e("abs", sb.Abs, np.abs, ALL),
    _e("neg", sb.Neg, np.negative, ALL),
    _e("exp", sm.Exp, np.exp, ALL),
    _e("exp2", sm.Exp2, np.exp2, ALL),
    _e("expm1", sm.Expm1, np.expm1, ALL),
    _e("log", sm.Log, np.log, ALL),
    _e("log2", sm.Log2, np.log2, ALL),
    _e("log10", sm.Log10, np.log10, ALL),
    _e("log1p", sm.Log1p, np.log1p, ALL),
    _e("sqrt", sm.Sqrt, np.sqrt, ALL),
    _e("sin", sm.Sin, np.sin, ALL),
    _e("cos", sm.Cos, np.cos, ALL),
    _e("tan", sm.Tan, np.tan, ALL),
    _e("sinh", sm.Sinh, np.sinh, ALL),
    _e("cosh", sm.Cosh, np.cosh, ALL),
    _e("tanh", sm.Tanh, np.tanh, ALL),
    _e("arcsin", sm.ArcSin, np.arcsin, ALL),
    _e("arccos", sm.ArcCos, np.arccos, ALL),
    _e("arctan", sm.ArcTan, np.arctan, ALL),
    _e("arcsinh", sm.ArcSinh, np.arcsinh, ALL),
    _e("arccosh", sm.ArcCosh, np.arccosh, ALL),
    _e("arctanh", sm.ArcTanh, np.arctanh, ALL),
    _e("floor", sb.Floor, np.floor, REAL),
    _e("ceil", sb.Ceil, np.ceil, REAL),
    _e("trunc", sb.Trunc, np.trunc, REAL),
    _e("sign", sb.Sign, np.sign, REAL),
    _e("isnan", sb.IsNan, np.isnan, ALL),
    _e("isinf", sb.IsInf, np.isinf, ALL),
    _e("reciprocal", sb.Reciprocal, np.reciprocal, REAL),
    _e("sqr", sb.Sqr, np.square, ALL, widen=False),
    _e("round_half_to_even", sb.RoundHalfToEven, np.round, FLOAT),
    _e("round_half_away_from_zero", sb.RoundHalfAwayFromZero, _round_half_away, FLOAT),
    _e("invert", sb.Invert, np.invert, DISCRETE),
    _e("deg2rad", sb.Mul, lambda x: x * (np.pi / 180), ALL),
    _e("rad2deg", sb.Mul, lambda x: x * (180 / np.pi), ALL),
    _e("angle", scx.Angle, np.angle, ALL),
    _e("conj", scx.Conj, np.conj, ALL, widen=False),
    _e("real", scx.Real, np.real, ALL, widen=False),
    _e("imag", scx.Imag, np.imag, ALL, widen=False),
    _e("tensor_copy", sb.Identity, lambda x: x, ALL, widen=False),
    # -- unary, special functions --------------------------------------------------------
    _e("erf", sm.Erf, sps.erf, REAL, ulps=_B, signed_zero=False),
    _e("erfc", sm.Erfc, sps.erfc, REAL, ulps=_B, signed_zero=False),
    _e("erfcx", sm.Erfcx, sps.erfcx, REAL, ulps=_B, signed_zero=False),
    _e("erfinv", sm.Erfinv, sps.erfinv, REAL, ulps=_B, signed_zero=False),
    # SciPy's erfcinv and gammaln overflow to inf at subnormal inputs, whose true values
    # are finite (erfcinv(5e-324) = 27.2, gammaln(5e-324) = 744.4): no reference there.
    _e(
        "erfcinv",
        ssp.Erfcinv,
        sps.erfcinv,
        REAL,
        ulps=_B,
        signed_zero=False,
        defined=_not_subnormal,
    ),
    _e("gamma", sm.Gamma, sps.gamma, REAL, ulps=_B, signed_zero=False),
    _e(
        "gammaln", sm.GammaLn, sps.gammaln, REAL, ulps=_B, signed_zero=False, defined=_not_subnormal
    ),
    _e("psi", sm.Psi, sps.psi, REAL, ulps=_B, signed_zero=False),
    _e("tri_gamma", sm.TriGamma, lambda x: sps.polygamma(1, x), REAL, ulps=_B, signed_zero=False),
    _e("sigmoid", sm.Sigmoid, sps.expit, REAL, ulps=_B, signed_zero=False),
    _e("softplus", sm.Softplus, _softplus, REAL, ulps=_B, signed_zero=False),
    _e("log1mexp", sm.Log1mexp, _log1mexp, REAL, ulps=_B, signed_zero=False),
    _e("xlogx", sm.XlogX, _xlogx, REAL, ulps=_B, signed_zero=False),
    _e("ndtri_exp", ssp.NdtriExp, sps.ndtri_exp, REAL, ulps=_B, signed_zero=False),
    _e(
        "j0",
        ssp.J0,
        sps.j0,
        REAL,
        ulps=_B,
        signed_zero=False,
        exact=mpx.bessel_j0,
        scipy_wrong=_phase_lost,
    ),
    _e(
        "j1",
        ssp.J1,
        sps.j1,
        REAL,
        ulps=_B,
        signed_zero=False,
        exact=mpx.bessel_j1,
        scipy_wrong=_phase_lost,
    ),
    _e("i0", ssp.I0, sps.i0, REAL, ulps=_B, signed_zero=False),
    _e("i1", ssp.I1, sps.i1, REAL, ulps=_B, signed_zero=False),
    # -- binary ----------------------------------------------------------------------------
    _e("add", sb.Add, np.add, ALL, ALL),
    _e("sub", sb.Sub, np.subtract, ALL, ALL),
    _e("mul", sb.Mul, np.multiply, ALL, ALL),
    _e("true_div", sb.TrueDiv, np.true_divide, ALL, ALL),
    # Integer division by zero gives NumPy's 0 (and no error) on every linker.
    _e("int_div", sb.IntDiv, np.floor_divide, REAL, REAL),
    _e("mod", sb.Mod, np.mod, REAL, REAL),
    _e("maximum", sb.Maximum, np.maximum, REAL, REAL, signed_zero=False),
    _e("minimum", sb.Minimum, np.minimum, REAL, REAL, signed_zero=False),
    _e("lt", sb.LT, np.less, REAL, REAL),
    _e("gt", sb.GT, np.greater, REAL, REAL),
    _e("le", sb.LE, np.less_equal, REAL, REAL),
    _e("ge", sb.GE, np.greater_equal, REAL, REAL),
    _e("eq", sb.EQ, np.equal, ALL, ALL),
    _e("neq", sb.NEQ, np.not_equal, ALL, ALL),
    # Powers are compared with NumPy's own, computed in the output's precision: a complex64
    # power goes through float32 exp and log, whose rounding the exponent amplifies.
    _e("pow", sb.Pow, _power, ALL, ALL, defined=_power_defined, widen=False),
    _e("arctan2", sm.ArcTan2, np.arctan2, REAL, REAL),
    _e("and_", sb.AND, np.bitwise_and, DISCRETE, DISCRETE),
    _e("or_", sb.OR, np.bitwise_or, DISCRETE, DISCRETE),
    _e("xor", sb.XOR, np.bitwise_xor, DISCRETE, DISCRETE),
    _e("second", sb.Second, lambda x, y: np.broadcast_to(y, x.shape), ALL, ALL, widen=False),
    _e("complex", scx.Complex, _complex, REAL, REAL),
    _e(
        "complex_from_polar",
        scx.ComplexFromPolar,
        _complex_from_polar,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
    ),
    ElemwiseCase(
        "mul_without_zeros",
        sb.MulWithoutZeros,
        _elementwise(sb.mul_without_zeros),
        _mul_without_zeros,
        (ALL, ALL),
    ),
    _e(
        "gammainc",
        sm.GammaInc,
        sps.gammainc,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        exact=mpx.gammainc,
        scipy_wrong=_subnormal_shape,
    ),
    _e("gammaincc", sm.GammaIncC, sps.gammaincc, REAL, REAL, ulps=_B, signed_zero=False),
    # A shape parameter at or below the smallest normal number costs about a second per
    # element in the Python backend's root finder: left out so that the run stays bounded.
    _e(
        "gammaincinv",
        ssp.GammaIncInv,
        sps.gammaincinv,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        drop=_tiny_first,
        exact=mpx.gammaincinv,
        scipy_wrong=_gamma_inverse_scipy_wrong,
        checked=(("int16", "float64"),),
    ),
    _e(
        "gammainccinv",
        ssp.GammaIncCInv,
        sps.gammainccinv,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        drop=_tiny_first,
        exact=mpx.gammainccinv,
        scipy_wrong=_gamma_inverse_scipy_wrong,
    ),
    # A huge finite order costs up to seconds per element in the Python backend's series:
    # orders beyond 1000 in magnitude (infinite ones stay) are left out.
    _e(
        "jv",
        sbes.Jv,
        sps.jv,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        drop=_huge_first,
        exact=mpx.bessel_j,
        scipy_wrong=_jv_scipy_wrong,
        checked=(("float64", "uint16"),),
    ),
    _e(
        "iv",
        ssp.Iv,
        sps.iv,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        drop=_huge_first,
        defined=_scipy_bessel_defined,
        exact=mpx.bessel_i,
        scipy_wrong=_high_order,
    ),
    _e(
        "ive",
        ssp.Ive,
        sps.ive,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        drop=_huge_first,
        defined=_scipy_bessel_defined,
        exact=mpx.bessel_ive,
        scipy_wrong=_high_order,
    ),
    _e(
        "kve",
        sbes.Kve,
        sps.kve,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        drop=_huge_first,
        defined=_scipy_bessel_defined,
        exact=mpx.bessel_kve,
        scipy_wrong=_kve_scipy_wrong,
    ),
    _e(
        "gammal",
        sm.GammaInc,
        lambda k, x: sps.gamma(k) * sps.gammainc(k, x),
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        defined=_gamma_finite,
    ),
    _e(
        "gammau",
        sm.GammaIncC,
        lambda k, x: sps.gamma(k) * sps.gammaincc(k, x),
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        defined=_gamma_finite,
    ),
    _e("polygamma", sm.PolyGamma, sps.polygamma, INT, REAL, ulps=_B, signed_zero=False),
    _e(
        "owens_t",
        sprob.OwensT,
        sps.owens_t,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        defined=_owens_t_defined,
    ),
    _e("xlogy0", sm.XlogY0, sps.xlogy, REAL, REAL, ulps=_B, signed_zero=False),
    # -- constant operands (NumPy's value, whatever dtype the output takes) ----------------
    ElemwiseCase("pow_const2", sb.Pow, lambda x: x**2, lambda x: x**2, (REAL,), widen=False),
    ElemwiseCase("pow_const3", sb.Pow, lambda x: x**3, lambda x: x**3, (REAL,), widen=False),
    # -- ternary and more ----------------------------------------------------------------
    _e("clip", sb.Clip, np.clip, REAL, REAL, REAL, edge_limit=7, signed_zero=False),
    _e("switch", sb.Switch, np.where, DISCRETE, ALL, ALL, edge_limit=7, widen=False),
    _e(
        "betainc",
        ssp.BetaInc,
        sps.betainc,
        REAL,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        edge_limit=7,
    ),
    _e(
        "betaincinv",
        sprob.BetaIncInv,
        sps.betaincinv,
        REAL,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        edge_limit=7,
    ),
    _e(
        "hyp2f1",
        shyp.Hyp2F1,
        sps.hyp2f1,
        REAL,
        REAL,
        REAL,
        REAL,
        ulps=_B,
        signed_zero=False,
        edge_limit=4,
        defined=_hyp2f1_defined,
    ),
    # -- casts to every dtype ------------------------------------------------------------
    *(_cast_to(dtype) for dtype in ALL),
)


def _sum_of_products(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (x * y + x) // (y | 1)


#: Chains of elementwise Ops that the fusion rewrite turns into one ``Composite`` node (the
#: C linkers compile it to one loop; the Python backend runs its scalar graph).
FUSED_CASES: tuple[ElemwiseCase, ...] = (
    ElemwiseCase(
        "fused_exp_mul_add",
        scomp.Composite,
        lambda x, y: pt.exp(x) * y + x,
        lambda x, y: np.exp(x) * y + x,
        (FLOAT, FLOAT),
        ulps=8,
        magnitude=lambda x, y: np.abs(np.exp(x) * y) + np.abs(x),
    ),
    ElemwiseCase(
        "fused_softplus",
        scomp.Composite,
        lambda x, y: pt.log1p(pt.exp(-pt.abs(x))) + pt.maximum(x, y) * y,
        lambda x, y: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, y) * y,
        (FLOAT, FLOAT),
        ulps=8,
        magnitude=lambda x, y: np.log1p(np.exp(-np.abs(x))) + np.abs(np.maximum(x, y) * y),
    ),
    ElemwiseCase(
        "fused_switch",
        scomp.Composite,
        lambda x, y: pt.switch(pt.gt(x, y), pt.sin(x), pt.cos(y) * y),
        lambda x, y: np.where(x > y, np.sin(x), np.cos(y) * y),
        (REAL, REAL),
        ulps=8,
    ),
    ElemwiseCase(
        "fused_integer",
        scomp.Composite,
        lambda x, y: pt.int_div(x * y + x, pt.or_(y, pt.ones_like(y))),
        _sum_of_products,
        (SIGNED, SIGNED),
        widen=False,
    ),
)

#: Scalar Op classes of the implementation tables without a case, and why.
EXCLUDED_SCALAR_OPS: dict[type, str] = {
    # Abstract bases: no graph applies them directly.
    sb.ScalarOp: "abstract base of every scalar Op",
    sb.UnaryScalarOp: "abstract base of the unary scalar Ops",
    sb.BinaryScalarOp: "abstract base of the binary scalar Ops",
    sb.LogicalComparison: "abstract base of lt, gt, le, ge, eq, neq",
    sb.BinaryBitOp: "abstract base of and_, or_, xor",
    sb.FixedLogicalComparison: "abstract base of isnan, isinf",
    sb.UnaryBitOp: "abstract base of invert",
    sb.ScalarInnerGraphOp: "abstract base of Composite",
    # Derivatives in a shape parameter: SciPy has no reference function; one Python
    # implementation serves every linker (no C), checked against numerical integrals and
    # finite differences in tests/core/test_special_shape_gradients.py.
    **dict.fromkeys(
        (
            ssg.GammaIncGrad,
            ssg.GammaIncCGrad,
            ssg.BetaIncGradA,
            ssg.BetaIncGradB,
            ssg.Hyp2F1GradA,
            ssg.Hyp2F1GradB,
            ssg.Hyp2F1GradC,
        ),
        "shape-parameter derivative without a SciPy reference",
    ),
}


@dataclass(frozen=True)
class MatrixCase:
    """A function of one matrix (a reduction, a shape or indexing Op) checked against
    NumPy.

    Parameters
    ----------
    name
        Names the case in test ids.
    build
        Builds the output from a matrix variable.
    reference
        Gives the expected value from the input array.
    dtypes
        The input dtypes the case takes.
    needs_elements
        Whether empty inputs are left out (a reduction without identity, a fixed reshape).
    error_bound
        How far a float result may be from the reference: ``"exact"`` (a few ulps),
        ``"sum"`` (``terms * eps * reference(|x|)``: any summation order is within it) or
        ``"prod"`` (``terms * eps * |result|``).
    """

    name: str
    build: Callable[[Any], Any]
    reference: Callable[[np.ndarray], np.ndarray]
    dtypes: tuple[str, ...] = REAL
    needs_elements: bool = False
    error_bound: str = "exact"


def _reduction(name: str, axis: Any, dtypes: tuple[str, ...] = REAL, **kwargs: Any) -> MatrixCase:
    fn = getattr(pt, name)
    np_fn = getattr(np, name)
    label = f"{name}(axis={axis}{''.join(f', {k}={v}' for k, v in kwargs.items())})"
    return MatrixCase(
        label,
        lambda x: fn(x, axis=axis, **kwargs),
        lambda x: np_fn(x, axis=axis, **kwargs),
        dtypes,
        needs_elements=name in ("max", "min", "argmax", "argmin"),
        error_bound={"sum": "sum", "mean": "sum", "prod": "prod"}.get(name, "exact"),
    )


REDUCTION_CASES: tuple[MatrixCase, ...] = (
    *(
        _reduction(name, axis)
        for name in ("sum", "prod", "max", "min", "mean", "all", "any")
        for axis in (None, 0, 1)
    ),
    _reduction("sum", (0, 1)),
    *(_reduction(name, axis) for name in ("argmax", "argmin") for axis in (None, 0, 1)),
    # An integer dtype= of a float input: NumPy converts every element, opweave the
    # result (sum(x, dtype="int8") of [0.5, -1.5, 2.0, 3.25, -0.75, 1.0] is 5 in NumPy, 4
    # here); checked on integer and boolean inputs only.
    *(
        _reduction(name, 1, DISCRETE, dtype=dtype)
        for name in ("sum", "prod")
        for dtype in ("int8", "uint8", "int32", "uint16", "uint32", "int64", "uint64")
    ),
    *(_reduction(name, 1, dtype=dtype) for name in ("sum", "prod") for dtype in FLOAT[1:]),
    _reduction("sum", 0, keepdims=True),
    _reduction("max", 1, keepdims=True),
    _reduction("mean", 1, dtype="float32"),
)


def _shape(
    name: str, build: Callable[[Any], Any], reference: Callable[[np.ndarray], Any], **kwargs: Any
) -> MatrixCase:
    return MatrixCase(name, build, reference, ALL, **kwargs)


def _set_rows(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[[0, 2]] = x[[5, 6]]
    return out


def _inc_repeated(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.add.at(out, [1, 1, -1], x[[0, 0, 0]])
    return out


def _inc_slice(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[1:3, ::2] += x[4:6, 1::2]
    return out


_INDEX = np.array([0, 2, -1, 2])

#: Shape and indexing Ops on an ``(8, 6)`` matrix (the reduction inputs).
SHAPE_CASES: tuple[MatrixCase, ...] = (
    _shape("reshape", lambda x: x.reshape((6, 8)), lambda x: x.reshape(6, 8), needs_elements=True),
    _shape("reshape_infer", lambda x: x.reshape((-1, 3, 2)), lambda x: x.reshape(-1, 3, 2)),
    _shape("flatten", lambda x: x.flatten(), lambda x: x.ravel()),
    _shape("transpose", lambda x: x.T, lambda x: x.T),
    _shape(
        "expand_squeeze",
        lambda x: pt.squeeze(pt.expand_dims(x, 1)),
        lambda x: np.squeeze(np.expand_dims(x, 1), 1),
    ),
    _shape("slice_reversed", lambda x: x[::-1, 1:5:2], lambda x: x[::-1, 1:5:2]),
    _shape("slice_negative", lambda x: x[-3:, -1], lambda x: x[-3:, -1], needs_elements=True),
    _shape("take_rows", lambda x: x[_INDEX], lambda x: x[_INDEX], needs_elements=True),
    _shape("take_columns", lambda x: x[:, _INDEX], lambda x: x[:, _INDEX], needs_elements=True),
    _shape(
        "take_points",
        lambda x: x[_INDEX, _INDEX[::-1]],
        lambda x: x[_INDEX, _INDEX[::-1]],
        needs_elements=True,
    ),
    _shape(
        "take_mask",
        lambda x: x[pt.constant(np.arange(8) % 3 == 0)],
        lambda x: x[np.arange(8) % 3 == 0],
        needs_elements=True,
    ),
    _shape(
        "set_rows", lambda x: pt.set_subtensor(x[[0, 2]], x[[5, 6]]), _set_rows, needs_elements=True
    ),
    _shape(
        "inc_repeated_rows",
        lambda x: pt.inc_subtensor(x[[1, 1, -1]], x[[0, 0, 0]]),
        _inc_repeated,
        needs_elements=True,
    ),
    _shape(
        "inc_slice",
        lambda x: pt.inc_subtensor(x[1:3, ::2], x[4:6, 1::2]),
        _inc_slice,
        needs_elements=True,
    ),
    _shape(
        "concatenate",
        lambda x: pt.concatenate([x, x[::-1]], axis=1),
        lambda x: np.concatenate([x, x[::-1]], axis=1),
    ),
    _shape("stack", lambda x: pt.stack([x, x.T.T]), lambda x: np.stack([x, x])),
    _shape("repeat", lambda x: pt.repeat(x, 2, axis=0), lambda x: np.repeat(x, 2, axis=0)),
    _shape("tile", lambda x: pt.tile(x, (2, 1)), lambda x: np.tile(x, (2, 1))),
    _shape("roll", lambda x: pt.roll(x, -2, axis=1), lambda x: np.roll(x, -2, axis=1)),
    _shape("flip", lambda x: pt.flip(x, axis=0), lambda x: np.flip(x, axis=0)),
    _shape("diagonal", lambda x: pt.diagonal(x, 1), lambda x: np.diagonal(x, 1)),
    _shape("tril", lambda x: pt.tril(x, -1), lambda x: np.tril(x, -1)),
    _shape(
        "broadcast_to",
        lambda x: pt.broadcast_to(x[0], (3, x.shape[1])),
        lambda x: np.broadcast_to(x[0], (3, x.shape[1])),
        needs_elements=True,
    ),
    MatrixCase(
        "cumsum",
        lambda x: pt.cumsum(x, axis=1),
        lambda x: np.cumsum(x, axis=1),
        REAL,
        error_bound="sum",
    ),
    MatrixCase(
        "cumprod",
        lambda x: pt.cumprod(x, axis=0),
        lambda x: np.cumprod(x, axis=0),
        REAL,
        error_bound="prod",
    ),
    MatrixCase("sort", lambda x: pt.sort(x, axis=1), lambda x: np.sort(x, axis=1), REAL),
    MatrixCase(
        "argsort",
        lambda x: pt.argsort(x, axis=0, kind="stable"),
        lambda x: np.argsort(x, axis=0, kind="stable"),
        REAL,
    ),
)


#: Products (``@``, ``dot``) of the ``(8, 6)`` matrix with itself, for every rank pair
#: NumPy's ``matmul`` takes: unbatched ones compile to ``Dot``, the batched one stays
#: ``MatMul``. A float result may differ from NumPy's by any summation order's rounding.
PRODUCT_CASES: tuple[MatrixCase, ...] = (
    MatrixCase("matmul_gram", lambda x: x @ x.T, lambda x: x @ x.T, ALL, error_bound="sum"),
    MatrixCase("matmul_matvec", lambda x: x @ x[1], lambda x: x @ x[1], ALL, True, "sum"),
    MatrixCase("matmul_vecmat", lambda x: x[:, 2] @ x, lambda x: x[:, 2] @ x, ALL, True, "sum"),
    MatrixCase("matmul_vecdot", lambda x: x[0] @ x[-1], lambda x: x[0] @ x[-1], ALL, True, "sum"),
    MatrixCase(
        "matmul_batched",
        lambda x: pt.stack([x, x[::-1]]) @ x.T,
        lambda x: np.stack([x, x[::-1]]) @ x.T,
        ALL,
        error_bound="sum",
    ),
    MatrixCase(
        "dot_gram", lambda x: pt.dot(x.T, x), lambda x: np.dot(x.T, x), ALL, error_bound="sum"
    ),
)


#: Cases where a linker is known to disagree with the reference: (case name, input
#: dtypes) -> what is wrong. The cases are expected to fail; an entry must go as soon as
#: its fix lands (the case then passes, which a strict expected failure reports).
KNOWN_DISAGREEMENTS: dict[tuple[str, tuple[str, ...]], str] = {}


@dataclass(frozen=True)
class LinkerDisagreement:
    """How one linker is known to give other values than the reference and ``py``.

    Parameters
    ----------
    why
        The cause, in words.
    where
        The positions that differ (an elementwise mask from the input arrays and the
        reference values); ``None``: the whole case.
    """

    why: str
    where: Callable[[list[np.ndarray], np.ndarray], np.ndarray] | None = None


def _tiny(x: np.ndarray) -> np.ndarray:
    """Where a float (or a complex part) is nonzero and below twice the smallest normal
    number of its dtype: a subnormal, or a number whose half is one."""
    if x.dtype.kind not in "fc":
        return np.zeros(x.shape, bool)
    parts = (x.real, x.imag) if x.dtype.kind == "c" else (x,)
    smallest = np.finfo(x.dtype).smallest_normal
    tiny = [(p != 0) & (np.abs(p) < 2 * smallest) for p in parts]
    return np.asarray(np.logical_or.reduce(tiny), bool)


def flushed(inputs: list[np.ndarray], expected: np.ndarray) -> np.ndarray:
    """Where XLA on the CPU flushes a subnormal to zero: an input, the result or an
    intermediate value (half the input) is one."""
    masks = [_tiny(np.asarray(x)) for x in [*inputs, expected]]
    return np.asarray(np.logical_or.reduce(np.broadcast_arrays(*masks)), bool)


#: Why the ``jax`` linker's values differ where :func:`flushed` holds.
FLUSHES_SUBNORMALS = (
    "XLA on the CPU flushes subnormal arguments and results to zero (and compares "
    "subnormals as zeros)"
)


def _flushes(*cases: tuple[str, tuple[str, ...]]) -> dict[tuple, LinkerDisagreement]:
    """:data:`FLUSHES_SUBNORMALS` entries of the ``jax`` linker for ``cases``."""
    return {
        (name, sig, "jax"): LinkerDisagreement(FLUSHES_SUBNORMALS, flushed) for name, sig in cases
    }


_F64 = ("float64",)
_MAX = float(np.finfo(np.float64).max)
_F64_2 = ("float64", "float64")

#: Cases where one linker is known to give other values than the reference and ``py``:
#: (case name, input dtypes, linker) -> how. The case still compares every other linker,
#: and the named one everywhere else; it must still disagree there: an entry goes as soon
#: as its fix lands (the case then reports that the linker agrees).
LINKER_DISAGREEMENTS: dict[tuple[str, tuple[str, ...], str], LinkerDisagreement] = {
    **_flushes(
        ("exp", ("int16",)),
        *((name, _F64) for name in ("log", "log2", "log10", "sqrt", "arcsin", "floor", "ceil")),
        *((name, _F64) for name in ("sign", "reciprocal", "deg2rad", "rad2deg", "erfcx")),
        *((name, _F64) for name in ("erfinv", "erfcinv", "tri_gamma", "log1mexp", "xlogx")),
        *((name, _F64) for name in ("j1", "i1", "cast_to_bool")),
        *((name, _F64_2) for name in ("mul", "true_div", "int_div", "lt", "gt", "le", "ge")),
        *((name, _F64_2) for name in ("eq", "neq", "pow", "arctan2", "complex_from_polar")),
        *((name, _F64_2) for name in ("mul_without_zeros", "gammaincinv", "gammau", "mod")),
        *((name, _F64_2) for name in ("xlogy0", "owens_t")),
        ("mod", ("int16", "float32")),
        ("gammaincinv", ("int16", "float64")),
        ("switch", ("float64",) * 3),
        *((name, _F64_2) for name in ("fused_exp_mul_add", "fused_softplus", "fused_switch")),
        ("gammainccinv", _F64_2),
        ("jv", _F64_2),
        ("jv", ("float64", "uint16")),
        ("betaincinv", ("float64",) * 3),
    ),
    **_flushes(("ndtri_exp", _F64)),
    **{
        (name, _F64_2, "jax"): LinkerDisagreement(
            f"{FLUSHES_SUBNORMALS}; at the largest float as the shape, SciPy gives NaN and "
            "the lowering 0 or 1 (the limit)",
            lambda ins, out: flushed(ins, out) | ((ins[0] >= _MAX / 2) & np.isfinite(ins[0])),
        )
        for name in ("gammainc", "gammaincc")
    },
    **_flushes(("gammal", _F64_2)),
    ("gammainc", ("uint8", "uint32"), "jax"): LinkerDisagreement(
        "XLA's igamma loses digits at large shapes: 1.6e3 ulps (2.3e-13 relative) at "
        "gammainc(255, 7), beyond SPECIAL_ULPS",
        lambda ins, out: ins[0] >= 255,
    ),
    ("polygamma", ("uint8", "int16"), "jax"): LinkerDisagreement(
        "jax.scipy.special.polygamma gives NaN at the poles x = 0, -1, -2, ..., where "
        "SciPy gives -inf, and computes in float32 here, where n! overflows from the order "
        "35 on (NaN; SciPy computes in float64)",
        lambda ins, out: ((ins[1] <= 0) & (ins[1] == np.round(ins[1]))) | (ins[0] >= 35),
    ),
    ("betainc", ("float64",) * 3, "jax"): LinkerDisagreement(
        f"{FLUSHES_SUBNORMALS}; XLA's betainc is NaN where a or b is near the largest "
        "float (1e308) and 0 < x < 1",
        lambda ins, out: (
            flushed(ins, out)
            | ((np.maximum(ins[0], ins[1]) >= _MAX / 2) & (ins[2] > 0) & (ins[2] < 1))
        ),
    ),
    # The row of subnormals of the reduction matrix: [5e-324, -5e-324, 2.2e-308, 0, 0, 0].
    ("mean(axis=1)", _F64, "jax"): LinkerDisagreement(
        f"{FLUSHES_SUBNORMALS}: the mean of the subnormal row, 3.7e-309, is 0"
    ),
    ("argmin(axis=1)", _F64, "jax"): LinkerDisagreement(
        f"{FLUSHES_SUBNORMALS}: -5e-324 ties with the zeros of the subnormal row (0, not 1)"
    ),
    ("sort", _F64, "jax"): LinkerDisagreement(
        f"{FLUSHES_SUBNORMALS}: the subnormals of their row sort as zeros, in place"
    ),
    ("argsort", _F64, "jax"): LinkerDisagreement(
        f"{FLUSHES_SUBNORMALS}: -5e-324 sorts as -0.0, after the -0.0 above it"
    ),
    **{
        (name, _F64, "jax"): LinkerDisagreement(
            f"{FLUSHES_SUBNORMALS}: inf times 5e-324 is NaN (inf times 0), not inf"
        )
        for name in ("matmul_gram", "matmul_batched")
    },
    **{
        (name, (dtype,), "jax"): LinkerDisagreement(
            "XLA's dot multiplies and adds in two roundings where NumPy's BLAS fuses them: "
            "0.5 * max - 1.5 * max overflows to -inf in float32 (NumPy: -max), and complex "
            "products with an infinite part give inf+nanj where NumPy gives nan+nanj"
        )
        for name in ("matmul_gram", "matmul_batched")
        for dtype in ("float32", "complex64", "complex128")
    },
}


def known_disagreement(name: str, signature: tuple[str, ...]) -> str | None:
    """Why the case is known to disagree, or ``None``."""
    return KNOWN_DISAGREEMENTS.get((name, signature))


def linker_disagreement(name: str, signature: tuple[str, ...], linker: str) -> str | None:
    """Why ``linker`` is known to disagree on the whole case, or ``None``.

    Parameters
    ----------
    name
        The case's name.
    signature
        The dtypes of its inputs.
    linker
        The linker's name.

    Returns
    -------
    str or None
        The reason of the entry of :data:`LINKER_DISAGREEMENTS`, if it has no positions.
    """
    entry = LINKER_DISAGREEMENTS.get((name, signature, linker))
    return None if entry is None or entry.where is not None else entry.why
