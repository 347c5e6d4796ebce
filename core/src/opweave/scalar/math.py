"""Transcendental and special scalar functions: exponentials, logarithms, trigonometry,
hyperbolic functions, ``sigmoid``, ``softplus``, ``erf`` and ``erfc``, and the special
functions of PyTensor's ``scalar.math``: ``gamma``, ``gammaln``, ``psi`` (digamma),
``tri_gamma``, ``polygamma``, ``log1mexp``, ``xlogx``, ``xlogy0``, ``erfinv``, ``erfcx``,
``gammainc`` and ``gammaincc``, and (from :mod:`opweave.scalar.shape_gradients`) the
derivatives ``gammainc_grad``, ``gammaincc_grad``, ``betainc_grad`` and ``hyp2f1_grad`` of
the special functions in their shape parameters.

Each maps discrete inputs to a float output (:func:`~opweave.scalar.rules.upgrade_to_float`)
and defines its derivative with ``grad_formula`` (see :class:`~opweave.scalar.basic.ScalarOp`).
The special functions take the values of SciPy's functions of the same names (the backends
compute them in double precision and round to the output dtype).
"""

from __future__ import annotations

import math as _math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from opweave.gradient.opsupport import grad_undefined
from opweave.graph.basic import Variable
from opweave.scalar._typing import scalar_out, scalar_vars
from opweave.scalar.basic import (
    BinaryScalarOp,
    ScalarVariable,
    UnaryScalarOp,
    _const,
    add,
    constant,
    isinf,
    neg,
    sqr,
    switch,
    true_div,
)
from opweave.scalar.basic import Log as Log
from opweave.scalar.basic import log as log
from opweave.scalar.rules import upgrade_to_float, upgrade_to_float_no_complex
from opweave.scalar.shape_gradients import betainc_grad as betainc_grad
from opweave.scalar.shape_gradients import gammainc_grad, gammaincc_grad
from opweave.scalar.shape_gradients import hyp2f1_grad as hyp2f1_grad
from opweave.scalar.type import ScalarType, complex_types, discrete_types

if TYPE_CHECKING:
    # PyTensor's names for the special-function Ops that live in the modules of this package
    # which build on this one: ``opweave.scalar``, which sits above them all, sets them here.
    from opweave.scalar.bessel import Jv as Jv
    from opweave.scalar.bessel import Kve as Kve
    from opweave.scalar.bessel import jv as jv
    from opweave.scalar.bessel import kve as kve
    from opweave.scalar.hyp2f1 import Hyp2F1 as Hyp2F1
    from opweave.scalar.hyp2f1 import hyp2f1 as hyp2f1
    from opweave.scalar.probability import BetaIncInv as BetaIncInv
    from opweave.scalar.probability import Owens_t as Owens_t
    from opweave.scalar.probability import betaincinv as betaincinv
    from opweave.scalar.probability import owens_t as owens_t
    from opweave.scalar.special import I0 as I0
    from opweave.scalar.special import I1 as I1
    from opweave.scalar.special import J0 as J0
    from opweave.scalar.special import J1 as J1
    from opweave.scalar.special import BetaInc as BetaInc
    from opweave.scalar.special import Erfcinv as Erfcinv
    from opweave.scalar.special import GammaIncCInv as GammaIncCInv
    from opweave.scalar.special import GammaIncInv as GammaIncInv
    from opweave.scalar.special import Ive as Ive
    from opweave.scalar.special import NdtriExp as NdtriExp
    from opweave.scalar.special import betainc as betainc
    from opweave.scalar.special import erfcinv as erfcinv
    from opweave.scalar.special import gammainccinv as gammainccinv
    from opweave.scalar.special import gammaincinv as gammaincinv
    from opweave.scalar.special import i0 as i0
    from opweave.scalar.special import i1 as i1
    from opweave.scalar.special import ive as ive
    from opweave.scalar.special import j0 as j0
    from opweave.scalar.special import j1 as j1
    from opweave.scalar.special import ndtri_exp as ndtri_exp

Grads = list[Any]

_TWO_OVER_SQRT_PI = 2.0 / _math.sqrt(_math.pi)


class Exp(UnaryScalarOp):
    """``e ** x``."""

    nfunc_spec = ("exp", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * exp(x)``."""
        return [gz * out]


class Exp2(UnaryScalarOp):
    """``2 ** x``."""

    nfunc_spec = ("exp2", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * 2**x * log(2)``."""
        return [gz * out * _const(_math.log(2.0), out)]


class Expm1(UnaryScalarOp):
    """``exp(x) - 1``, accurate near 0."""

    nfunc_spec = ("expm1", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * exp(x)``."""
        (x,) = inputs
        return [gz * exp(x)]


class Log2(UnaryScalarOp):
    """Base-2 logarithm."""

    nfunc_spec = ("log2", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / (x * log(2))``."""
        (x,) = inputs
        return [gz / (x * _const(_math.log(2.0), x))]


class Log10(UnaryScalarOp):
    """Base-10 logarithm."""

    nfunc_spec = ("log10", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / (x * log(10))``."""
        (x,) = inputs
        return [gz / (x * _const(_math.log(10.0), x))]


class Log1p(UnaryScalarOp):
    """``log(1 + x)``, accurate near 0."""

    nfunc_spec = ("log1p", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / (1 + x)``."""
        (x,) = inputs
        return [gz / (_const(1, x) + x)]


class Sqrt(UnaryScalarOp):
    """Square root."""

    nfunc_spec = ("sqrt", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / (2 * sqrt(x))``."""
        return [gz / (_const(2, out) * out)]


class Sin(UnaryScalarOp):
    """Sine."""

    nfunc_spec = ("sin", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * cos(x)``."""
        (x,) = inputs
        return [gz * cos(x)]


class Cos(UnaryScalarOp):
    """Cosine."""

    nfunc_spec = ("cos", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``-gz * sin(x)``."""
        (x,) = inputs
        return [scalar_out(neg(gz)) * sin(x)]


class Tan(UnaryScalarOp):
    """Tangent."""

    nfunc_spec = ("tan", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / cos(x)**2``."""
        (x,) = inputs
        return [gz / sqr(cos(x))]


class ArcSin(UnaryScalarOp):
    """Inverse sine."""

    nfunc_spec = ("arcsin", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / sqrt(1 - x**2)``."""
        (x,) = inputs
        return [gz / sqrt(_const(1, x) - sqr(x))]


class ArcCos(UnaryScalarOp):
    """Inverse cosine."""

    nfunc_spec = ("arccos", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``-gz / sqrt(1 - x**2)``."""
        (x,) = inputs
        return [scalar_out(neg(gz)) / sqrt(_const(1, x) - sqr(x))]


class ArcTan(UnaryScalarOp):
    """Inverse tangent."""

    nfunc_spec = ("arctan", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / (1 + x**2)``."""
        (x,) = inputs
        return [gz / (_const(1, x) + sqr(x))]


class ArcTan2(BinaryScalarOp):
    """``arctan2(y, x)``: the angle of the point ``(x, y)``."""

    nfunc_spec = ("arctan2", 2, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * x / (x**2 + y**2)`` for ``y`` and ``-gz * y / (x**2 + y**2)`` for ``x``."""
        y, x = inputs
        r2 = scalar_out(sqr(x)) + sqr(y)
        return [gz * x / r2, scalar_out(neg(gz)) * y / r2]


class Sinh(UnaryScalarOp):
    """Hyperbolic sine."""

    nfunc_spec = ("sinh", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * cosh(x)``."""
        (x,) = inputs
        return [gz * cosh(x)]


class Cosh(UnaryScalarOp):
    """Hyperbolic cosine."""

    nfunc_spec = ("cosh", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * sinh(x)``."""
        (x,) = inputs
        return [gz * sinh(x)]


class Tanh(UnaryScalarOp):
    """Hyperbolic tangent."""

    nfunc_spec = ("tanh", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * (1 - tanh(x)**2)``."""
        return [gz * (_const(1, out) - sqr(out))]


class ArcSinh(UnaryScalarOp):
    """Inverse hyperbolic sine."""

    nfunc_spec = ("arcsinh", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / sqrt(x**2 + 1)``."""
        (x,) = inputs
        return [gz / sqrt(sqr(x) + _const(1, x))]


class ArcCosh(UnaryScalarOp):
    """Inverse hyperbolic cosine."""

    nfunc_spec = ("arccosh", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / sqrt(x**2 - 1)``."""
        (x,) = inputs
        return [gz / sqrt(sqr(x) - _const(1, x))]


class ArcTanh(UnaryScalarOp):
    """Inverse hyperbolic tangent."""

    nfunc_spec = ("arctanh", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz / (1 - x**2)``."""
        (x,) = inputs
        return [gz / (_const(1, x) - sqr(x))]


class Sigmoid(UnaryScalarOp):
    """The logistic function ``1 / (1 + exp(-x))``."""

    nfunc_spec = ("scipy.special.expit", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * sigmoid(x) * (1 - sigmoid(x))``."""
        return [gz * out * (_const(1, out) - out)]


class Softplus(UnaryScalarOp):
    """``log(1 + exp(x))``, computed without overflow."""

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * sigmoid(x)``."""
        (x,) = inputs
        return [gz * sigmoid(x)]


class Erf(UnaryScalarOp):
    """The error function."""

    nfunc_spec = ("scipy.special.erf", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * 2 / sqrt(pi) * exp(-x**2)``."""
        (x,) = inputs
        return [gz * _const(_TWO_OVER_SQRT_PI, x) * exp(neg(sqr(x)))]


class Erfc(UnaryScalarOp):
    """The complementary error function ``1 - erf(x)``."""

    nfunc_spec = ("scipy.special.erfc", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``-gz * 2 / sqrt(pi) * exp(-x**2)``."""
        (x,) = inputs
        return [scalar_out(neg(gz)) * _const(_TWO_OVER_SQRT_PI, x) * exp(neg(sqr(x)))]


# ====================================================================== special functions

_SQRT_PI_OVER_2 = _math.sqrt(_math.pi) / 2.0


class Gamma(UnaryScalarOp):
    """The gamma function (``inf`` with the sign of zero at 0, NaN at negative integers)."""

    nfunc_spec = ("scipy.special.gamma", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * gamma(x) * psi(x)``."""
        (x,) = inputs
        return [gz * out * psi(x)]


class GammaLn(UnaryScalarOp):
    """``log(abs(gamma(x)))`` (``inf`` at the poles 0, -1, -2, ..., ``-inf`` at ``-inf``,
    as SciPy)."""

    nfunc_spec = ("scipy.special.gammaln", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * psi(x)``."""
        (x,) = inputs
        return [gz * psi(x)]


class Psi(UnaryScalarOp):
    """The digamma function, the derivative of :class:`GammaLn`.

    As SciPy's ``psi``: ``-inf`` at ``+0``, ``inf`` at ``-0``, NaN at negative integers.
    """

    nfunc_spec = ("scipy.special.psi", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * tri_gamma(x)``."""
        (x,) = inputs
        return [gz * tri_gamma(x)]


class TriGamma(UnaryScalarOp):
    """The trigamma function, the second derivative of :class:`GammaLn`
    (``polygamma(1, x)``; ``inf`` at 0 and the negative integers)."""

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * polygamma(2, x)``."""
        (x,) = inputs
        return [gz * polygamma(constant(2, dtype="int64"), x)]


def _polygamma_out(n_type: ScalarType, x_type: ScalarType) -> tuple[ScalarType, ...]:
    """The order must be an integer; the output is ``x``'s float type."""
    if n_type not in discrete_types or n_type.dtype == "bool":
        raise TypeError(
            f"the order n of polygamma must be an integer (it must be discrete), got dtype "
            f"{n_type.dtype}"
        )
    if x_type in complex_types:
        raise TypeError(f"polygamma: complex argument not supported (x has dtype {x_type.dtype})")
    return upgrade_to_float_no_complex(x_type)


class PolyGamma(BinaryScalarOp):
    """``polygamma(n, x)``: the ``n``-th derivative of :class:`Psi` (``psi`` for ``n = 0``).

    The order ``n`` is an integer input (NaN for a negative one); the output has ``x``'s
    float type. The gradient with respect to ``n`` is undefined.
    """

    nfunc_spec = ("scipy.special.polygamma", 2, 1)

    def __init__(self, output_types_preference: Any = None, name: str | None = None) -> None:
        super().__init__(output_types_preference or _polygamma_out, name)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> Grads:
        """Undefined for ``n``; ``gz * polygamma(n + 1, x)`` for ``x``."""
        n, x = scalar_vars(inputs)
        (gz,) = scalar_vars(output_grads)
        g_n = grad_undefined(self, 0, n, "the order of polygamma is an integer")
        if outputs[0].type in discrete_types:  # pragma: no cover - the output is a float
            return [g_n, x.zeros_like()]
        return [g_n, gz * self(add(n, _const(1, n)), x)]


class Log1mexp(UnaryScalarOp):
    """``log(1 - exp(x))``, accurate for ``x`` near 0 and very negative ``x`` (NaN for
    ``x > 0``, ``-inf`` at 0)."""

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * -1 / expm1(-x)`` (``-inf`` at 0)."""
        (x,) = inputs
        slope = true_div(_const(-1, x), expm1(neg(x)))
        slope = switch(isinf(slope), _const(-_math.inf, x), slope)
        return [gz * slope]


class XlogX(UnaryScalarOp):
    """``x * log(x)``, 0 where ``x`` is 0."""

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * (1 + log(x))``."""
        (x,) = inputs
        return [gz * (_const(1, x) + log(x))]


class XlogY0(BinaryScalarOp):
    """``x * log(y)``, 0 where ``x`` is 0 and ``y`` is not NaN (SciPy's ``xlogy``)."""

    nfunc_spec = ("scipy.special.xlogy", 2, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * log(y)`` for ``x``, ``gz * x / y`` for ``y`` (not masked at ``x = 0``)."""
        x, y = inputs
        return [gz * log(y), gz * x / y]


class Erfinv(UnaryScalarOp):
    """The inverse of :class:`Erf` on ``[-1, 1]`` (``+-inf`` at ``+-1``, NaN outside)."""

    nfunc_spec = ("scipy.special.erfinv", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * sqrt(pi) / 2 * exp(erfinv(x)**2)``."""
        return [gz * _const(_SQRT_PI_OVER_2, out) * exp(sqr(out))]


class Erfcx(UnaryScalarOp):
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, computed without
    overflow or underflow for large positive ``x``."""

    nfunc_spec = ("scipy.special.erfcx", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * (2 * x * erfcx(x) - 2 / sqrt(pi))``."""
        (x,) = inputs
        return [gz * (_const(2, x) * x * out - _const(_TWO_OVER_SQRT_PI, x))]


def _incomplete_gamma_slope(k: ScalarVariable, x: ScalarVariable) -> ScalarVariable:
    """``d/dx gammainc(k, x) = exp(-x + (k - 1) * log(x) - gammaln(k))``."""
    return scalar_out(exp(scalar_out(neg(x)) + (k - _const(1, k)) * log(x) - gammaln(k)))


class GammaInc(BinaryScalarOp):
    """The regularized lower incomplete gamma function ``P(k, x)``.

    NaN for negative ``k`` or ``x``; ``P(0, x) = 1`` for ``x > 0``. The gradient with
    respect to ``k`` is :func:`~opweave.scalar.shape_gradients.gammainc_grad`.
    """

    nfunc_spec = ("scipy.special.gammainc", 2, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * gammainc_grad(k, x)`` for ``k``; ``gz * exp(-x + (k - 1) * log(x) -
        gammaln(k))`` for ``x``."""
        k, x = inputs
        return [gz * gammainc_grad(k, x), gz * _incomplete_gamma_slope(k, x)]


class GammaIncC(BinaryScalarOp):
    """The regularized upper incomplete gamma function ``Q(k, x) = 1 - P(k, x)``."""

    nfunc_spec = ("scipy.special.gammaincc", 2, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> Grads:
        """``gz * gammaincc_grad(k, x)`` for ``k``; minus :class:`GammaInc`'s for ``x``."""
        k, x = inputs
        return [
            gz * gammaincc_grad(k, x),
            scalar_out(neg(gz)) * _incomplete_gamma_slope(k, x),
        ]


exp = Exp(upgrade_to_float, name="exp")
exp2 = Exp2(upgrade_to_float, name="exp2")
expm1 = Expm1(upgrade_to_float, name="expm1")
log2 = Log2(upgrade_to_float, name="log2")
log10 = Log10(upgrade_to_float, name="log10")
log1p = Log1p(upgrade_to_float, name="log1p")
sqrt = Sqrt(upgrade_to_float, name="sqrt")
sin = Sin(upgrade_to_float, name="sin")
cos = Cos(upgrade_to_float, name="cos")
tan = Tan(upgrade_to_float, name="tan")
arcsin = ArcSin(upgrade_to_float, name="arcsin")
arccos = ArcCos(upgrade_to_float, name="arccos")
arctan = ArcTan(upgrade_to_float, name="arctan")
arctan2 = ArcTan2(upgrade_to_float_no_complex, name="arctan2")
sinh = Sinh(upgrade_to_float, name="sinh")
cosh = Cosh(upgrade_to_float, name="cosh")
tanh = Tanh(upgrade_to_float, name="tanh")
arcsinh = ArcSinh(upgrade_to_float, name="arcsinh")
arccosh = ArcCosh(upgrade_to_float, name="arccosh")
arctanh = ArcTanh(upgrade_to_float, name="arctanh")
sigmoid = Sigmoid(upgrade_to_float_no_complex, name="sigmoid")
softplus = Softplus(upgrade_to_float_no_complex, name="softplus")
erf = Erf(upgrade_to_float_no_complex, name="erf")
erfc = Erfc(upgrade_to_float_no_complex, name="erfc")
gamma = Gamma(upgrade_to_float_no_complex, name="gamma")
gammaln = GammaLn(upgrade_to_float_no_complex, name="gammaln")
psi = Psi(upgrade_to_float_no_complex, name="psi")
tri_gamma = TriGamma(upgrade_to_float_no_complex, name="tri_gamma")
polygamma = PolyGamma(name="polygamma")
log1mexp = Log1mexp(upgrade_to_float_no_complex, name="log1mexp")
xlogx = XlogX(upgrade_to_float_no_complex, name="xlogx")
xlogy0 = XlogY0(upgrade_to_float_no_complex, name="xlogy0")
erfinv = Erfinv(upgrade_to_float_no_complex, name="erfinv")
erfcx = Erfcx(upgrade_to_float_no_complex, name="erfcx")
gammainc = GammaInc(upgrade_to_float_no_complex, name="gammainc")
gammaincc = GammaIncC(upgrade_to_float_no_complex, name="gammaincc")


def betaln(a: Any, b: Any) -> ScalarVariable:
    """The log of the beta function, ``gammaln(a) + gammaln(b) - gammaln(a + b)``.

    Parameters
    ----------
    a, b
        Scalars (variables or numbers).
    """
    return scalar_out(scalar_out(gammaln(a)) + gammaln(b) - gammaln(add(a, b)))
