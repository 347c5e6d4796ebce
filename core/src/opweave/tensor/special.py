"""Softmax and friends: :class:`Softmax`, :class:`LogSoftmax`, :class:`SoftmaxGrad`,
:func:`logsumexp`.

The Ops are symbolic; backends implement them stably (subtracting the maximum
before exponentiating). :func:`logsumexp` is built from ``max``, ``exp``,
``sum`` and ``log`` of :mod:`opweave.tensor.math`, also with the maximum
subtracted, so it neither overflows nor loses the largest terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.scalar.type import floatX
from opweave.tensor import math as tm
from opweave.tensor.basic import cast, where
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.shape import _dimshuffle
from opweave.tensor.type import float_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "LogSoftmax",
    "Softmax",
    "SoftmaxGrad",
    "log_softmax",
    "logsumexp",
    "softmax",
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
    shift = where(tm.isinf(xmax), 0, xmax)
    zero_grad = _zero_grad()
    if zero_grad is not None:
        shift = zero_grad(shift)
    total = tm.log(tm.sum(tm.exp(tm.sub(x, shift)), axis=axis, keepdims=keepdims))
    if not keepdims:
        shift = _drop_reduced(shift, x.ndim, axis)
    return tm.add(total, shift)  # type: ignore[no-any-return]


def _zero_grad() -> Any:
    """``opweave.gradient``'s gradient stopper, when that module provides one."""
    try:
        import opweave.gradient as g  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return getattr(g, "zero_grad", None) or getattr(g, "disconnected_grad", None)


def _drop_reduced(t: TensorVariable, ndim: int, axis: Any) -> TensorVariable:
    if axis is None:
        axes = set(range(ndim))
    elif isinstance(axis, int):
        axes = {axis % ndim}
    else:
        axes = {a % ndim for a in axis}
    return _dimshuffle(t, [d for d in range(ndim) if d not in axes])
