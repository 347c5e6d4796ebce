"""Ops that check conditions at run time and raise an exception when one is false.

``CheckAndRaise(exc_type, msg)(value, *conditions)`` returns ``value`` (a view of it, no
copy) when every condition holds and raises ``exc_type(msg)`` otherwise; :class:`Assert`
is the variant raising :class:`AssertionError`, and :data:`assert_op` its instance with
the default message. The names and contract are PyTensor's (``pytensor.raise_op``).

The conditions are 0-d boolean tensors: a condition of another dtype is cast to ``bool``
(non-zero is true), and a scalar-Type variable is first turned into a 0-d tensor. The
output has the Type of ``value``; gradients flow to ``value`` only (the conditions are
disconnected). A node is constant-folded only when every condition is a constant that
holds, so a failing check is never folded away.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import disconnected_type
from opweave.scalar.type import ScalarType
from opweave.tensor._typing import tensor_out
from opweave.tensor.basic import tensor_from_scalar
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.variable import TensorVariable

__all__ = ["Assert", "CheckAndRaise", "assert_op"]

#: Longest message shown whole in an Op's printed form; longer ones are cut with "...".
_SHOWN_MESSAGE = 30


def _short(msg: str) -> str:
    """``msg`` cut to :data:`_SHOWN_MESSAGE` characters for printing."""
    return msg if len(msg) <= _SHOWN_MESSAGE else msg[: _SHOWN_MESSAGE - 3] + "..."


def _as_condition(cond: Any, position: int) -> TensorVariable:
    """``cond`` as a 0-d ``bool`` tensor.

    Raises
    ------
    TypeError
        If ``cond`` is not convertible to a tensor, or has one or more dimensions.
    """
    if isinstance(cond, Variable) and isinstance(cond.type, ScalarType):
        cond = tensor_from_scalar(cond)
    try:
        tensor = as_tensor_variable(cond)
    except TypeError as exc:
        raise TypeError(f"CheckAndRaise: condition {position} ({cond!r:.60}): {exc}") from None
    if tensor.type.ndim != 0:
        raise TypeError(
            f"CheckAndRaise: condition {position} ({tensor}) must be a scalar (a 0-d tensor), "
            f"got {tensor.type}; reduce it first, e.g. with opweave.tensor.all"
        )
    if tensor.type.dtype == "bool":
        return tensor
    if isinstance(tensor, Constant):  # stays a constant, so that a check known to hold folds
        return as_tensor_variable(np.asarray(tensor.data).astype(bool))
    return tensor_out(tensor.astype("bool"))


class CheckAndRaise(Op):
    """Return the first input when all the other inputs (conditions) are true; otherwise
    raise ``exc_type(msg)``.

    Parameters
    ----------
    exc_type
        The exception class to raise; must derive from :class:`Exception`.
    msg
        The exception's message.

    Raises
    ------
    ValueError
        If ``exc_type`` is not an :class:`Exception` subclass.
    """

    __props__ = ("msg", "exc_type")
    view_map = {0: [0]}

    def __init__(self, exc_type: type[Exception], msg: str = "") -> None:
        if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
            raise ValueError(f"`exc_type` must be an Exception subclass, got {exc_type!r}")
        if not isinstance(msg, str):
            raise TypeError(f"CheckAndRaise: msg must be a str, got {type(msg).__name__}")
        self.exc_type = exc_type
        self.msg = msg

    def __str__(self) -> str:
        return f"{type(self).__name__}{{raises={self.exc_type.__name__}, msg='{_short(self.msg)}'}}"

    def make_node(self, value: Any, *conds: Any) -> Apply:
        """The checked ``value`` (any Variable, or what ``as_tensor_variable`` accepts) and
        the conditions (0-d tensors or scalars, cast to ``bool``).

        Raises
        ------
        TypeError
            If a condition is not a scalar.
        """
        if not isinstance(value, Variable):
            value = as_tensor_variable(value)
        checks = [_as_condition(c, i) for i, c in enumerate(conds)]
        return Apply(self, [value, *checks], [value.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The shape of ``value``."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Only ``value`` is connected to the output."""
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient for ``value``; the conditions are disconnected."""
        return [output_grads[0], *(disconnected_type() for _ in inputs[1:])]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The evaluation point of ``value``, unchanged."""
        return [eval_points[0]]

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Fold only when every condition is a constant that holds."""
        return all(isinstance(c, Constant) and bool(c.data) for c in node.inputs[1:])


class Assert(CheckAndRaise):
    """:class:`CheckAndRaise` raising :class:`AssertionError` with ``msg``.

    Parameters
    ----------
    msg
        The assertion's message.
    """

    def __init__(self, msg: str = "opweave Assert failed!") -> None:
        super().__init__(AssertionError, msg)

    def __str__(self) -> str:
        return f"Assert{{msg='{_short(self.msg)}'}}"


#: :class:`Assert` with the default message.
assert_op = Assert()
