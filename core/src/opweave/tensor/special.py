"""Softmax and friends (:class:`Softmax`, :class:`LogSoftmax`, :class:`SoftmaxGrad`,
:func:`logsumexp`) and the special functions.

The Ops are symbolic; backends implement them stably (subtracting the maximum
before exponentiating). :func:`logsumexp` is built from ``max``, ``exp``,
``sum`` and ``log`` of :mod:`opweave.tensor.math`, also with the maximum
subtracted, so it neither overflows nor loses the largest terms.

The special functions that PyTensor keeps in ``pytensor.tensor.math`` (``gamma``,
``gammaln``, ``psi``/``digamma``, ``tri_gamma``, ``polygamma``, ``log1mexp``,
``log1pexp``, ``erfinv``, ``erfcx``, ``gammainc``, ``gammaincc``, ``gammau``, ``gammal``)
are defined in :mod:`opweave.tensor.math` and re-exported here. The others are an
:class:`~opweave.tensor.elemwise.Elemwise` of the scalar Op of the same name in
:mod:`opweave.scalar.math` (``xlogx``, ``xlogy0``), so they fuse into elementwise loops
(with C code there), or, as in PyTensor, a formula of those (``logit``, ``beta``,
``betaln``, ``factorial``, ``poch``, ``xlog1py``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from opweave.compile.builders import OpFromGraph
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.scalar import math as sm
from opweave.scalar.type import floatX
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out
from opweave.tensor.basic import cast, second, where
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.math import (  # defined there, as in PyTensor; re-exported here
    digamma,
    erfcx,
    erfinv,
    gamma,
    gammainc,
    gammaincc,
    gammal,
    gammaln,
    gammau,
    log1mexp,
    log1pexp,
    polygamma,
    psi,
    tri_gamma,
)
from opweave.tensor.shape import _dimshuffle
from opweave.tensor.type import float_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "LogSoftmax",
    "Softmax",
    "SoftmaxGrad",
    "beta",
    "betaln",
    "digamma",
    "erfcx",
    "erfinv",
    "factorial",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammal",
    "gammaln",
    "gammau",
    "log1mexp",
    "log1pexp",
    "log_softmax",
    "logaddexp",
    "logit",
    "logsumexp",
    "poch",
    "polygamma",
    "psi",
    "softmax",
    "tri_gamma",
    "xlog1py",
    "xlogx",
    "xlogy",
    "xlogy0",
]


def _check_axis(axis: int | None, who: str) -> int | None:
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{who}: axis must be an int or None, got {axis!r}")
    return axis


def _float_input(x: Any, who: str, axis: int | None) -> TensorVariable:
    x = as_tensor_variable(x)
    if x.dtype not in float_dtypes:
        raise TypeError(
            f"{who}: the input must have a floating-point dtype, got {x} of dtype {x.dtype} "
            "(cast it, or call softmax()/log_softmax(), which cast integers to floatX)"
        )
    if axis is not None and not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"{who}: axis {axis} is out of range for the {x.ndim}-d input {x}")
    return x


def _sum(x: Any, axis: int | None) -> Any:
    return tm.sum(x, axis=axis, keepdims=True)


class _AxisOp(Op):
    """An Op parametrized by the softmax axis (``None``: all axes together)."""

    __props__ = ("axis",)

    def __init__(self, axis: int | None) -> None:
        self.axis = _check_axis(axis, type(self).__name__)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The shape of the (first) input."""
        return [shapes[0]]


class Softmax(_AxisOp):
    """``exp(x) / sum(exp(x), axis)``, computed stably.

    Parameters
    ----------
    axis
        The axis normalized over, or ``None`` for all elements together.
    """

    __props__ = ("axis",)

    def make_node(self, x: Any) -> Apply:
        """A floating-point tensor; the output has its Type."""
        x = _float_input(x, str(self), self.axis)
        return Apply(self, [x], [x.type()])

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """``SoftmaxGrad(axis)(gz, softmax(x))``."""
        (gz,) = output_grads
        return [SoftmaxGrad(self.axis)(gz, outputs[0])]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``sm * (v - sum(sm * v, axis))``."""
        (v,) = eval_points
        if v is None:
            return [None]
        sm = self(inputs[0])
        return [SoftmaxGrad(self.axis)(v, sm)]


class SoftmaxGrad(_AxisOp):
    """The gradient of :class:`Softmax`: ``(dy - sum(dy * sm, axis)) * sm``.

    Inputs: ``dy`` (the output gradient) and ``sm`` (the softmax output).
    """

    __props__ = ("axis",)

    def make_node(self, dy: Any, sm: Any) -> Apply:
        """Two floating-point tensors of one rank."""
        dy = _float_input(dy, str(self), self.axis)
        sm = _float_input(sm, str(self), self.axis)
        if dy.ndim != sm.ndim:
            raise TypeError(f"{self}: dy has {dy.ndim} dims but sm has {sm.ndim}")
        return Apply(self, [dy, sm], [sm.type()])

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Second derivatives of softmax."""
        dy, sm = inputs
        (g,) = output_grads
        tmp = tm.sub(g, _sum(tm.mul(g, sm), self.axis))
        g_dy = tm.mul(tmp, sm)
        g_sm = tm.sub(tm.mul(tmp, dy), tm.mul(g, _sum(tm.mul(dy, sm), self.axis)))
        return [g_dy, g_sm]


class LogSoftmax(_AxisOp):
    """``x - logsumexp(x, axis)``, computed stably.

    Parameters
    ----------
    axis
        The axis normalized over, or ``None`` for all elements together.
    """

    __props__ = ("axis",)

    def make_node(self, x: Any) -> Apply:
        """A floating-point tensor; the output has its Type."""
        x = _float_input(x, str(self), self.axis)
        return Apply(self, [x], [x.type()])

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """``gz - exp(out) * sum(gz, axis)``."""
        (gz,) = output_grads
        return [tm.sub(gz, tm.mul(tm.exp(outputs[0]), _sum(gz, self.axis)))]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``v - sum(softmax(x) * v, axis)``."""
        (v,) = eval_points
        if v is None:
            return [None]
        sm = Softmax(self.axis)(inputs[0])
        return [tm.sub(v, _sum(tm.mul(sm, v), self.axis))]


def _prepare(x: Any, axis: int | None, who: str) -> tuple[TensorVariable, int | None]:
    x = as_tensor_variable(x)
    if x.dtype not in float_dtypes:
        if x.dtype.startswith("complex"):
            raise TypeError(f"{who}: complex inputs are not supported ({x})")
        x = cast(x, floatX())
    axis = _check_axis(axis, who)
    if axis is not None:
        if not -x.ndim <= axis < max(x.ndim, 1):
            raise ValueError(f"{who}: axis {axis} is out of range for the {x.ndim}-d input {x}")
        if x.ndim:
            axis %= x.ndim
    return x, axis


def softmax(x: Any, axis: int | None = -1) -> TensorVariable:
    """The softmax of ``x`` along ``axis``.

    Parameters
    ----------
    x
        A tensor; integers are cast to ``config.floatX``.
    axis
        The axis normalized over (default the last), or ``None`` for all elements.
    """
    x, axis = _prepare(x, axis, "softmax")
    return Softmax(axis)(x)  # type: ignore[return-value]


def log_softmax(x: Any, axis: int | None = -1) -> TensorVariable:
    """The log of the softmax of ``x`` along ``axis``, computed without overflow.

    Parameters
    ----------
    x
        A tensor; integers are cast to ``config.floatX``.
    axis
        The axis normalized over (default the last), or ``None`` for all elements.
    """
    x, axis = _prepare(x, axis, "log_softmax")
    return LogSoftmax(axis)(x)  # type: ignore[return-value]


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> TensorVariable:
    """``log(sum(exp(x), axis))``, computed stably.

    The maximum along ``axis`` is subtracted before exponentiating and added
    back after the logarithm (where the maximum is infinite, 0 is used, so
    ``-inf`` and ``inf`` inputs give ``-inf`` and ``inf``).

    Parameters
    ----------
    x
        A tensor.
    axis
        An int, a tuple of ints, or ``None`` for all axes.
    keepdims
        Keep the reduced axes with length 1.
    """
    x = as_tensor_variable(x)
    xmax = tm.max(x, axis=axis, keepdims=True)
    # The shift cancels out of the value, and so out of the gradient.
    shift = where(tm.isinf(xmax), 0, xmax)
    total = tm.log(tm.sum(tm.exp(tm.sub(x, shift)), axis=axis, keepdims=keepdims))
    if not keepdims:
        shift = _drop_reduced(shift, x.ndim, axis)
    return tm.add(total, shift)  # type: ignore[no-any-return]


def logaddexp(*xs: Any) -> TensorVariable:
    """``log(exp(x_1) + exp(x_2) + ...)`` of broadcast inputs, computed stably (NumPy's
    ``logaddexp`` for two).

    The elementwise maximum is subtracted before exponentiating and added back after the
    logarithm (0 where it is infinite), so neither the value nor the gradient overflows.

    Parameters
    ----------
    *xs
        One or more tensors (broadcast together).
    """
    if not xs:
        raise TypeError("logaddexp needs at least one input")
    tensors = [as_tensor_variable(x) for x in xs]
    largest = functools.reduce(tm.maximum, tensors)
    shift = where(tm.isinf(largest), 0.0, largest)
    total = functools.reduce(tm.add, [tm.exp(tm.sub(x, shift)) for x in tensors])
    return tm.add(tm.log(total), shift)  # type: ignore[no-any-return]


def _drop_reduced(t: TensorVariable, ndim: int, axis: Any) -> TensorVariable:
    if ndim == 0:  # a 0-d input keeps its (only) value whatever the axis, as in PyTensor
        return t
    if axis is None:
        axes = set(range(ndim))
    elif isinstance(axis, int):
        axes = {axis % ndim}
    else:
        axes = {a % ndim for a in axis}
    return _dimshuffle(t, [d for d in range(ndim) if d not in axes])


# ====================================================================== special functions


def _elemwise(scalar_op: Any, doc: str) -> Elemwise:
    op = Elemwise(scalar_op, name=scalar_op.name)
    op.__doc__ = doc
    return op


xlogx = _elemwise(sm.xlogx, "Elementwise ``x * log(x)``, 0 where ``x`` is 0.")
xlogy0 = _elemwise(sm.xlogy0, "Elementwise ``x * log(y)``, 0 where ``x`` is 0.")
xlogy = xlogy0


def logit(x: Any) -> TensorVariable:
    """The logit ``log(x / (1 - x))``, the inverse of ``expit`` (``sigmoid``).

    Parameters
    ----------
    x
        A tensor (probabilities).
    """
    x = as_tensor_variable(x)
    return tm.log(tm.true_div(x, tm.sub(1, x)))  # type: ignore[no-any-return]


def beta(a: Any, b: Any) -> TensorVariable:
    """The beta function ``gamma(a) * gamma(b) / gamma(a + b)``.

    Parameters
    ----------
    a, b
        Tensors (broadcast together).
    """
    return tm.true_div(tm.mul(gamma(a), gamma(b)), gamma(tm.add(a, b)))  # type: ignore[no-any-return]


def betaln(a: Any, b: Any) -> TensorVariable:
    """The log of the beta function, ``gammaln(a) + gammaln(b) - gammaln(a + b)``.

    Parameters
    ----------
    a, b
        Tensors (broadcast together).
    """
    return tm.sub(tm.add(gammaln(a), gammaln(b)), gammaln(tm.add(a, b)))  # type: ignore[no-any-return]


def factorial(n: Any) -> TensorVariable:
    """``n!`` as ``gamma(n + 1)`` (a float; defined for non-integers too).

    Parameters
    ----------
    n
        A tensor.
    """
    return gamma(tm.add(n, 1))  # type: ignore[no-any-return]


def poch(z: Any, m: Any) -> TensorVariable:
    """The Pochhammer symbol (rising factorial) ``gamma(z + m) / gamma(z)``.

    Parameters
    ----------
    z, m
        Tensors (broadcast together).
    """
    return tm.true_div(gamma(tm.add(z, m)), gamma(z))  # type: ignore[no-any-return]


def _xlog1py_pullback(
    inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
) -> list[Any]:
    """PyTensor's gradient of ``xlog1py``, not masked at ``x = 0``: ``gz * log1p(y)`` for
    ``x`` (the derivative of ``x * log1p(y)`` there) and ``gz * x / (1 + y)`` for ``y``."""
    x, y = inputs
    (gz,) = output_grads
    return [tm.mul(gz, tm.log1p(y)), tm.true_div(tm.mul(gz, x), tm.add(1, y))]


def xlog1py(x: Any, y: Any) -> TensorVariable:
    """``x * log1p(y)``, 0 where ``x`` is 0 (SciPy's ``xlog1py``).

    As in PyTensor, the gradient is that of ``x * log1p(y)`` (not masked at ``x = 0``,
    where the value is masked): ``log1p(y)`` for ``x`` and ``x / (1 + y)`` for ``y``.

    Parameters
    ----------
    x, y
        Tensors (broadcast together).
    """
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    # the inputs broadcast outside the inner graph, whose gradients then have their shapes
    xb, yb = tensor_out(second(y, x)), tensor_out(second(x, y))
    xi, yi = xb.type(), yb.type()
    inner = where(tm.eq(xi, 0), 0, tm.mul(xi, tm.log1p(yi)))
    op = OpFromGraph(
        [xi, yi], [inner], inline=True, lop_overrides=_xlog1py_pullback, name="xlog1py"
    )
    return tensor_out(op(xb, yb))
