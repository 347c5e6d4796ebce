"""The gradient-shaping Ops of :mod:`opweave.gradient`: identities in the forward pass that
change what flows backwards.

:class:`ZeroGrad` (the gradient through it is zero), :class:`DisconnectedGrad` (nothing flows
through it: the input is disconnected), :class:`UndefinedGrad` (asking for the gradient
through it is an error), :class:`GradClip` (the gradient is clipped to bounds) and
:class:`GradScale` (the gradient is multiplied by a constant), with PyTensor's names and
contract (``pytensor.gradient.ZeroGrad``, ``zero_grad``, ...).

Each is a :class:`~opweave.compile.ops.ViewOp`: its output is its input, a view, so every
backend runs it as it runs ``ViewOp`` (the Python backend returns the input, the C backend
uses the ``ViewOp`` code registered for the input's Type). They live here, on the floor of
``ViewOp``, and :mod:`opweave.gradient` re-exports them (it sits below ``compile``), with
:func:`mode_not_slow`, which needs the modes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.compile.debug.debugmode import DebugMode
from opweave.compile.mode import Mode, get_mode
from opweave.compile.ops import ViewOp
from opweave.gradient.opsupport import grad_undefined
from opweave.graph.basic import Apply, Variable
from opweave.graph.type import disconnected_type

__all__ = [
    "DisconnectedGrad",
    "GradClip",
    "GradScale",
    "UndefinedGrad",
    "ZeroGrad",
    "disconnected_grad",
    "disconnected_grad_",
    "grad_clip",
    "grad_scale",
    "mode_not_slow",
    "undefined_grad",
    "undefined_grad_",
    "zero_grad",
    "zero_grad_",
]


class _GradientViewOp(ViewOp):
    """A ``ViewOp`` with its own gradient rule; the forward pass is the identity."""

    # Subclasses add their parameters (ViewOp itself has none).
    __props__: tuple[str, ...] = ()  # type: ignore[assignment]

    def make_node(self, x: Variable) -> Apply:
        """One Variable in, one of the same Type out.

        Raises
        ------
        TypeError
            If ``x`` is not a Variable.
        """
        if not isinstance(x, Variable):
            raise TypeError(
                f"{type(self).__name__} expects a symbolic Variable, got {type(x).__name__} "
                f"{x!r} (wrap constants with opweave.tensor.as_tensor_variable)"
            )
        return Apply(self, [x], [x.type()])

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The identity's: the eval point passes through."""
        return list(eval_points)


class ZeroGrad(_GradientViewOp):
    """The identity whose gradient is zero (the input is treated as a constant)."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zeros like the output gradient."""
        return [g.zeros_like() for g in output_grads]  # type: ignore[attr-defined]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """Zeros like the input (the output does not move with it)."""
        return [inputs[0].zeros_like()]  # type: ignore[attr-defined]


class DisconnectedGrad(_GradientViewOp):
    """The identity through which no gradient flows: its input is disconnected."""

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The output does not depend (differentiably) on the input."""
        return [[False]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """A disconnected gradient."""
        return [disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """Disconnected."""
        return [disconnected_type()]


class UndefinedGrad(_GradientViewOp):
    """The identity whose gradient is undefined: taking a gradient through it is an error."""

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Connected (so the undefined gradient is reported)."""
        return [[True]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """An undefined gradient (a ``NullType`` variable)."""
        return [grad_undefined(self, i, x) for i, x in enumerate(inputs)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """Disconnected."""
        return [disconnected_type()]


class GradClip(_GradientViewOp):
    """The identity whose gradient is clipped to ``[clip_lower_bound, clip_upper_bound]``.

    Parameters
    ----------
    clip_lower_bound, clip_upper_bound
        The bounds (numbers, ``clip_lower_bound <= clip_upper_bound``).
    """

    __props__ = ("clip_lower_bound", "clip_upper_bound")

    def __init__(self, clip_lower_bound: Any, clip_upper_bound: Any) -> None:
        self.clip_lower_bound = clip_lower_bound
        self.clip_upper_bound = clip_upper_bound
        if not clip_upper_bound >= clip_lower_bound:
            raise ValueError(
                f"GradClip: clip_upper_bound ({clip_upper_bound!r}) must be >= "
                f"clip_lower_bound ({clip_lower_bound!r})"
            )

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient clipped to the bounds."""
        return [g.clip(self.clip_lower_bound, self.clip_upper_bound) for g in output_grads]  # type: ignore[attr-defined]


class GradScale(_GradientViewOp):
    """The identity whose gradient is multiplied by ``multiplier``.

    Parameters
    ----------
    multiplier
        A number or a scalar variable (``-1`` reverses the gradient).
    """

    __props__ = ("multiplier",)

    def __init__(self, multiplier: Any) -> None:
        self.multiplier = multiplier

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``multiplier * g``."""
        return [g * self.multiplier for g in output_grads]


zero_grad_ = ZeroGrad()
undefined_grad_ = UndefinedGrad()
disconnected_grad_ = DisconnectedGrad()


def zero_grad(x: Variable) -> Variable:
    """``x``, with a zero gradient: the expression is a constant for differentiation.

    Parameters
    ----------
    x
        A symbolic Variable.
    """
    return zero_grad_(x)


def undefined_grad(x: Variable) -> Variable:
    """``x``, whose gradient is undefined: ``grad`` through it raises an error.

    Parameters
    ----------
    x
        A symbolic Variable.
    """
    return undefined_grad_(x)


def disconnected_grad(x: Variable) -> Variable:
    """``x``, disconnected from the gradient: nothing is backpropagated through it.

    Cheaper than :func:`zero_grad`, whose zeros still flow through the graph below.

    Parameters
    ----------
    x
        A symbolic Variable.
    """
    return disconnected_grad_(x)


def grad_clip(x: Variable, lower_bound: Any, upper_bound: Any) -> Variable:
    """``x``, whose gradient is clipped elementwise to ``[lower_bound, upper_bound]``.

    Parameters
    ----------
    x
        A symbolic tensor.
    lower_bound, upper_bound
        The bounds of the gradient (``lower_bound <= upper_bound``).

    Raises
    ------
    ValueError
        If ``upper_bound < lower_bound``.
    """
    return GradClip(lower_bound, upper_bound)(x)


def grad_scale(x: Variable, multiplier: Any) -> Variable:
    """``x``, whose gradient is multiplied by ``multiplier``.

    Parameters
    ----------
    x
        A symbolic Variable.
    multiplier
        The factor (``-1`` reverses the gradient).
    """
    return GradScale(multiplier)(x)


def mode_not_slow(mode: Any) -> Any:
    """A mode fit to evaluate gradients numerically: ``FAST_RUN`` for ``"FAST_COMPILE"``,
    ``FAST_RUN``'s linker with the rewrites of a ``DebugMode``, else ``mode`` itself.

    Parameters
    ----------
    mode
        A mode name, a :class:`~opweave.compile.mode.Mode` or ``None``.
    """
    if mode == "FAST_COMPILE":
        return get_mode("FAST_RUN")
    mode = get_mode(mode)
    if isinstance(mode, DebugMode):
        return Mode(linker=get_mode("FAST_RUN").linker, optimizer=mode.optimizer)
    return mode
