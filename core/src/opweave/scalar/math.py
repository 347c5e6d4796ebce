"""Transcendental and special scalar functions: exponentials, logarithms, trigonometry,
hyperbolic functions, ``sigmoid``, ``softplus``, ``erf`` and ``erfc``.

Each maps discrete inputs to a float output (:func:`~opweave.scalar.rules.upgrade_to_float`)
and defines its derivative with ``grad_formula`` (see :class:`~opweave.scalar.basic.ScalarOp`).
"""

from __future__ import annotations

import math as _math
from collections.abc import Sequence
from typing import Any

from opweave.graph.basic import Variable
from opweave.scalar.basic import BinaryScalarOp, UnaryScalarOp, _const, neg, sqr
from opweave.scalar.rules import upgrade_to_float, upgrade_to_float_no_complex

Grads = list[Any]

_TWO_OVER_SQRT_PI = 2.0 / _math.sqrt(_math.pi)


class Exp(UnaryScalarOp):
    """``e ** x``."""

    nfunc_spec = ("exp", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * exp(x)``."""
        return [gz * out]


class Exp2(UnaryScalarOp):
    """``2 ** x``."""

    nfunc_spec = ("exp2", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * 2**x * log(2)``."""
        return [gz * out * _const(_math.log(2.0), out)]


class Expm1(UnaryScalarOp):
    """``exp(x) - 1``, accurate near 0."""

    nfunc_spec = ("expm1", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * exp(x)``."""
        (x,) = inputs
        return [gz * exp(x)]


class Log(UnaryScalarOp):
    """Natural logarithm."""

    nfunc_spec = ("log", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / x``."""
        (x,) = inputs
        return [gz / x]


class Log2(UnaryScalarOp):
    """Base-2 logarithm."""

    nfunc_spec = ("log2", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / (x * log(2))``."""
        (x,) = inputs
        return [gz / (x * _const(_math.log(2.0), x))]


class Log10(UnaryScalarOp):
    """Base-10 logarithm."""

    nfunc_spec = ("log10", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / (x * log(10))``."""
        (x,) = inputs
        return [gz / (x * _const(_math.log(10.0), x))]


class Log1p(UnaryScalarOp):
    """``log(1 + x)``, accurate near 0."""

    nfunc_spec = ("log1p", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / (1 + x)``."""
        (x,) = inputs
        return [gz / (_const(1, x) + x)]


class Sqrt(UnaryScalarOp):
    """Square root."""

    nfunc_spec = ("sqrt", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / (2 * sqrt(x))``."""
        return [gz / (_const(2, out) * out)]


class Sin(UnaryScalarOp):
    """Sine."""

    nfunc_spec = ("sin", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * cos(x)``."""
        (x,) = inputs
        return [gz * cos(x)]


class Cos(UnaryScalarOp):
    """Cosine."""

    nfunc_spec = ("cos", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``-gz * sin(x)``."""
        (x,) = inputs
        return [neg(gz) * sin(x)]


class Tan(UnaryScalarOp):
    """Tangent."""

    nfunc_spec = ("tan", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / cos(x)**2``."""
        (x,) = inputs
        return [gz / sqr(cos(x))]


class ArcSin(UnaryScalarOp):
    """Inverse sine."""

    nfunc_spec = ("arcsin", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / sqrt(1 - x**2)``."""
        (x,) = inputs
        return [gz / sqrt(_const(1, x) - sqr(x))]


class ArcCos(UnaryScalarOp):
    """Inverse cosine."""

    nfunc_spec = ("arccos", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``-gz / sqrt(1 - x**2)``."""
        (x,) = inputs
        return [neg(gz) / sqrt(_const(1, x) - sqr(x))]


class ArcTan(UnaryScalarOp):
    """Inverse tangent."""

    nfunc_spec = ("arctan", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / (1 + x**2)``."""
        (x,) = inputs
        return [gz / (_const(1, x) + sqr(x))]


class ArcTan2(BinaryScalarOp):
    """``arctan2(y, x)``: the angle of the point ``(x, y)``."""

    nfunc_spec = ("arctan2", 2, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * x / (x**2 + y**2)`` for ``y`` and ``-gz * y / (x**2 + y**2)`` for ``x``."""
        y, x = inputs
        r2 = sqr(x) + sqr(y)
        return [gz * x / r2, neg(gz) * y / r2]


class Sinh(UnaryScalarOp):
    """Hyperbolic sine."""

    nfunc_spec = ("sinh", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * cosh(x)``."""
        (x,) = inputs
        return [gz * cosh(x)]


class Cosh(UnaryScalarOp):
    """Hyperbolic cosine."""

    nfunc_spec = ("cosh", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * sinh(x)``."""
        (x,) = inputs
        return [gz * sinh(x)]


class Tanh(UnaryScalarOp):
    """Hyperbolic tangent."""

    nfunc_spec = ("tanh", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * (1 - tanh(x)**2)``."""
        return [gz * (_const(1, out) - sqr(out))]


class ArcSinh(UnaryScalarOp):
    """Inverse hyperbolic sine."""

    nfunc_spec = ("arcsinh", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / sqrt(x**2 + 1)``."""
        (x,) = inputs
        return [gz / sqrt(sqr(x) + _const(1, x))]


class ArcCosh(UnaryScalarOp):
    """Inverse hyperbolic cosine."""

    nfunc_spec = ("arccosh", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / sqrt(x**2 - 1)``."""
        (x,) = inputs
        return [gz / sqrt(sqr(x) - _const(1, x))]


class ArcTanh(UnaryScalarOp):
    """Inverse hyperbolic tangent."""

    nfunc_spec = ("arctanh", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz / (1 - x**2)``."""
        (x,) = inputs
        return [gz / (_const(1, x) - sqr(x))]


class Sigmoid(UnaryScalarOp):
    """The logistic function ``1 / (1 + exp(-x))``."""

    nfunc_spec = ("scipy.special.expit", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * sigmoid(x) * (1 - sigmoid(x))``."""
        return [gz * out * (_const(1, out) - out)]


class Softplus(UnaryScalarOp):
    """``log(1 + exp(x))``, computed without overflow."""

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * sigmoid(x)``."""
        (x,) = inputs
        return [gz * sigmoid(x)]


class Erf(UnaryScalarOp):
    """The error function."""

    nfunc_spec = ("scipy.special.erf", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``gz * 2 / sqrt(pi) * exp(-x**2)``."""
        (x,) = inputs
        return [gz * _const(_TWO_OVER_SQRT_PI, x) * exp(neg(sqr(x)))]


class Erfc(UnaryScalarOp):
    """The complementary error function ``1 - erf(x)``."""

    nfunc_spec = ("scipy.special.erfc", 1, 1)

    def grad_formula(self, inputs: Sequence[Variable], out: Variable, gz: Variable) -> Grads:
        """``-gz * 2 / sqrt(pi) * exp(-x**2)``."""
        (x,) = inputs
        return [neg(gz) * _const(_TWO_OVER_SQRT_PI, x) * exp(neg(sqr(x)))]


exp = Exp(upgrade_to_float, name="exp")
exp2 = Exp2(upgrade_to_float, name="exp2")
expm1 = Expm1(upgrade_to_float, name="expm1")
log = Log(upgrade_to_float, name="log")
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
