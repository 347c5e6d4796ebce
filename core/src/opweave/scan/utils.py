"""Helpers of :func:`opweave.scan.scan`: ``until`` and reading what the body returns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opweave.graph.basic import Variable
from opweave.tensor.constructors import as_tensor_variable

__all__ = ["get_updates_and_outputs", "until"]


class until:  # noqa: N801 - PyTensor's name
    """The stopping condition of a while loop: the body returns ``outputs, until(cond)``.

    The loop stops after the first step whose ``condition`` is true (that step's outputs
    are kept).

    Parameters
    ----------
    condition
        A boolean (or integer) scalar.

    Raises
    ------
    TypeError
        If ``condition`` is not a scalar.
    """

    def __init__(self, condition: Any) -> None:
        cond = as_tensor_variable(condition)
        if cond.type.ndim != 0:
            raise TypeError(f"until: the condition must be a scalar, got {cond.type}")
        self.condition = cond


def _is_updates(x: Any) -> bool:
    return isinstance(x, Mapping) or (
        isinstance(x, (list, tuple))
        and len(x) > 0
        and all(isinstance(p, tuple) and len(p) == 2 for p in x)
        and all(not isinstance(p, Variable) for p in x)
    )


def _as_outputs(x: Any) -> list[Variable]:
    if x is None:
        return []
    items = list(x) if isinstance(x, (list, tuple)) else [x]
    return [as_tensor_variable(o) for o in items]


def get_updates_and_outputs(
    ls: Any,
) -> tuple[Variable | None, list[Variable], dict[Variable, Variable]]:
    """Read what a scan body returned: ``(condition, outputs, updates)``.

    Accepted forms (as PyTensor's): ``outputs``; ``updates``; ``(outputs, updates)`` or
    ``(updates, outputs)``; any of these followed by ``until(cond)``; ``until(cond)``
    alone; ``outputs`` may be one variable or a list/tuple of them.

    Raises
    ------
    ValueError
        If the value has none of these forms.
    """
    cond: Variable | None = None
    if isinstance(ls, until):
        return ls.condition, [], {}
    if isinstance(ls, tuple | list) and ls and isinstance(ls[-1], until):
        cond = ls[-1].condition
        ls = ls[:-1]
        if len(ls) == 1:
            ls = ls[0]
    if _is_updates(ls):
        return cond, [], dict(ls)
    if isinstance(ls, tuple | list) and len(ls) == 2:
        first, second = ls
        if _is_updates(second) and not _is_updates(first):
            return cond, _as_outputs(first), dict(second)
        if _is_updates(first) and not _is_updates(second):
            return cond, _as_outputs(second), dict(first)
    if isinstance(ls, tuple | list) and any(_is_updates(x) or isinstance(x, until) for x in ls):
        raise ValueError(
            "scan: the body must return outputs, updates (a dict), (outputs, updates), or "
            "any of these followed by until(condition); got "
            f"{type(ls).__name__} of {[type(x).__name__ for x in ls]}"
        )
    return cond, _as_outputs(ls), {}
