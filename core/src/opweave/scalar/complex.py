"""Scalar Ops on complex numbers: ``real``, ``imag``, ``conj``, ``angle``, ``complex`` and
``complex_from_polar``.

The Ops are symbolic only; the backends compute them (the Python backend with NumPy's
``real``, ``imag``, ``conj`` and ``angle``). The C backend has no complex types, so nodes of
these Ops run in Python under ``cvm``.

Gradients follow PyTensor's convention for complex numbers: the gradient of a real cost
``C`` with respect to a complex ``z = x + iy`` is the complex number ``dC/dx + i dC/dy``.
Hence ``real(z)`` sends ``gz`` back as ``complex(gz, 0)``, ``imag(z)`` as ``complex(0, gz)``,
and ``complex(x, y)`` splits its gradient into ``real(gz)`` and ``imag(gz)``. A discrete
input gets a zero gradient (of ``config.floatX``), as for every other scalar Op.
:func:`scalar_l_op` extends the same convention to the arithmetic Ops, ``exp``, ``log``,
``sqrt``, ``sin``, ``cos``, ``abs`` and real-to-complex casts; ``Elemwise`` takes its
gradients through it.
"""

from __future__ import annotations

from collections.abc import Sequence

from opweave.graph.basic import Variable
from opweave.scalar._typing import scalar_out, scalar_var
from opweave.scalar.basic import (
    Abs,
    Add,
    BinaryScalarOp,
    Cast,
    Mul,
    Neg,
    Pow,
    Reciprocal,
    ScalarOp,
    ScalarVariable,
    Sqr,
    Sub,
    TrueDiv,
    UnaryScalarOp,
    cast,
    neg,
    zero_grad,
    zeros_like,
)
from opweave.scalar.math import Cos, Exp, Log, Sin, Sqrt, cos, sin
from opweave.scalar.rules import (
    complex_out,
    real_out,
    same_out_min8,
    upgrade_to_float,
)
from opweave.scalar.type import ScalarType, complex_types, discrete_types, float_types

__all__ = [
    "Angle",
    "Complex",
    "ComplexFromPolar",
    "Conj",
    "Imag",
    "Real",
    "angle",
    "angle_out",
    "complex",
    "complex_from_polar",
    "conj",
    "imag",
    "real",
    "scalar_l_op",
]


def angle_out(type: ScalarType) -> tuple[ScalarType, ...]:
    """The Type of the angle of a value of ``type``: the real part's float Type for a
    complex number, the float Type :func:`~opweave.scalar.rules.upgrade_to_float` gives
    otherwise (as ``arctan2(imag(x), real(x))`` would)."""
    if type in complex_types:
        return real_out(type)
    return upgrade_to_float(type)


def _to_input(g: Variable, x: Variable) -> Variable:
    """The gradient term ``g`` for the real input ``x``: cast to ``x``'s float dtype, or a
    zero (``floatX``) when ``x`` is discrete."""
    if x.type in discrete_types:
        return zero_grad(x)
    return cast(g, scalar_var(x).type.dtype)


class Real(UnaryScalarOp):
    """The real part of a complex number (a real number is its own real part)."""

    nfunc_spec = ("real", 1, 1)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``complex(gz, 0)`` for a complex input, ``gz`` for a float one."""
        (x,) = inputs
        (gz,) = output_grads
        if x.type in complex_types:
            return [scalar_out(complex(gz, zeros_like(gz)))]
        if x.type in float_types:
            return [gz]
        return [zero_grad(x)]


class Imag(UnaryScalarOp):
    """The imaginary part of a complex number (0 for a real number)."""

    nfunc_spec = ("imag", 1, 1)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``complex(0, gz)`` for a complex input, a zero for a real one."""
        (x,) = inputs
        (gz,) = output_grads
        if x.type in complex_types:
            return [scalar_out(complex(zeros_like(gz), gz))]
        return [zero_grad(x)]


class Conj(UnaryScalarOp):
    """The complex conjugate ``x - iy`` of ``x + iy`` (a real number is its own)."""

    nfunc_spec = ("conj", 1, 1)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``conj(gz)`` for a complex input, ``gz`` for a float one."""
        (x,) = inputs
        (gz,) = output_grads
        if x.type in complex_types:
            return [scalar_out(conj(gz))]
        if x.type in float_types:
            return [gz]
        return [zero_grad(x)]


class Angle(UnaryScalarOp):
    """The argument ``arctan2(imag(z), real(z))`` of a complex number, in ``[-pi, pi]``
    (0 for a non-negative real number, ``pi`` for a negative one, as NumPy's ``angle``)."""

    nfunc_spec = ("angle", 1, 1)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``complex(-gz * y, gz * x) / (x**2 + y**2)`` for ``z = x + iy``; a zero for a
        real input (whose angle is piecewise constant)."""
        (z,) = inputs
        (gz,) = output_grads
        if z.type not in complex_types:
            return [zero_grad(z)]
        x = scalar_out(real(z))
        y = scalar_out(imag(z))
        r2 = x * x + y * y
        return [scalar_out(complex(scalar_out(neg(gz * y)) / r2, gz * x / r2))]


class Complex(BinaryScalarOp):
    """The complex number ``x + iy`` of two real numbers.

    Its Type is ``complex128`` when the promoted Type of ``x`` and ``y`` is ``float64`` or a
    32- or 64-bit integer, ``complex64`` otherwise; complex inputs are a ``TypeError``.
    """

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``real(gz)`` and ``imag(gz)``, in the inputs' dtypes."""
        x, y = inputs
        (gz,) = output_grads
        return [_to_input(scalar_out(real(gz)), x), _to_input(scalar_out(imag(gz)), y)]


class ComplexFromPolar(BinaryScalarOp):
    """The complex number ``r * (cos(theta) + i sin(theta))`` of polar coordinates
    ``(r, theta)``; its Type follows the rule of :class:`Complex`."""

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """With ``gz = gx + i gy``: ``gx cos(theta) + gy sin(theta)`` for ``r`` and
        ``r (gy cos(theta) - gx sin(theta))`` for ``theta``."""
        r, theta = inputs
        (gz,) = output_grads
        gx = scalar_out(real(gz))
        gy = scalar_out(imag(gz))
        c = scalar_out(cos(theta))
        s = scalar_out(sin(theta))
        g_r = gx * c + gy * s
        g_theta = scalar_var(r) * (gy * c - gx * s)
        return [_to_input(g_r, r), _to_input(g_theta, theta)]


real = Real(real_out, name="real")
imag = Imag(real_out, name="imag")
conj = Conj(same_out_min8, name="conj")
angle = Angle(angle_out, name="angle")
complex = Complex(complex_out, name="complex")
complex_from_polar = ComplexFromPolar(complex_out, name="complex_from_polar")


# ====================================================================== complex gradients

#: Ops whose ``grad_formula`` is a holomorphic expression with real coefficients: for them
#: the gradient ``gz * conj(f'(z))`` of PyTensor's convention is the formula applied to the
#: conjugated inputs and output.
_HOLOMORPHIC: tuple[type, ...] = (
    Add,
    Sub,
    Mul,
    Neg,
    TrueDiv,
    Sqr,
    Reciprocal,
    Pow,
    Exp,
    Log,
    Sqrt,
    Sin,
    Cos,
)


def _involves_complex(values: Sequence[Variable]) -> bool:
    return any(v.type in complex_types for v in values)


def _holomorphic_grads(
    op: ScalarOp, inputs: Sequence[Variable], out: Variable, gz: Variable
) -> list[Variable]:
    dtype = scalar_var(out).type.dtype
    conjugated = [
        scalar_out(conj(cast(x, dtype) if x.type in discrete_types else x)) for x in inputs
    ]
    terms = list(op.grad_formula(conjugated, scalar_out(conj(out)), scalar_var(gz)))
    grads: list[Variable] = []
    for x, g in zip(inputs, terms, strict=True):
        if x.type in discrete_types:
            grads.append(zero_grad(x))
        elif x.type in complex_types:
            grads.append(cast(g, scalar_var(x).type.dtype))
        else:
            grads.append(_to_input(scalar_out(real(g)) if g.type in complex_types else g, x))
    return grads


def scalar_l_op(
    op: ScalarOp,
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    output_grads: Sequence[Variable],
) -> list[Variable]:
    """``op.L_op(inputs, outputs, output_grads)``, extended to complex values.

    When a complex value is involved, the gradients of the arithmetic Ops (``add``,
    ``sub``, ``mul``, ``neg``, ``true_div``, ``sqr``, ``reciprocal``, ``pow``), of ``exp``,
    ``log``, ``sqrt``, ``sin`` and ``cos``, of ``abs`` and of casts from real to complex
    follow PyTensor's convention (see the module docstring): ``gz * conj(f'(z))`` for a
    holomorphic ``f``, its real part for a real input, ``gz * z / abs(z)`` for ``abs``.
    Everything else is the Op's own ``L_op``.

    Parameters
    ----------
    op
        The scalar Op.
    inputs, outputs, output_grads
        Scalar variables: the node's inputs and outputs and the gradients of the outputs.

    Returns
    -------
    list of Variable
        One gradient term per input.
    """
    values = [*inputs, *outputs, *output_grads]
    if not all(isinstance(v, ScalarVariable) for v in values) or not _involves_complex(values):
        return op.L_op(inputs, outputs, output_grads)
    if len(outputs) == 1 and outputs[0].type not in discrete_types:
        (out,) = outputs
        (gz,) = output_grads
        if isinstance(op, _HOLOMORPHIC) and type(op).L_op is ScalarOp.L_op:
            return _holomorphic_grads(op, inputs, out, gz)
        if isinstance(op, Abs) and inputs[0].type in complex_types:
            (z,) = inputs
            return [cast(gz * scalar_var(z) / out, scalar_var(z).type.dtype)]
        if isinstance(op, Cast) and out.type in complex_types and inputs[0].type in float_types:
            return [_to_input(scalar_out(real(gz)), inputs[0])]
    return op.L_op(inputs, outputs, output_grads)
