"""``map``, ``reduce``, ``foldl`` and ``foldr``: common uses of :func:`~opweave.scan.scan`."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Variable
from opweave.scan.basic import scan

__all__ = ["foldl", "foldr", "map", "reduce"]


def map(  # PyTensor's name (shadows the builtin here only)
    fn: Callable[..., Any],
    sequences: Any,
    non_sequences: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Variable, Variable]]:
    """Apply ``fn`` to every step of ``sequences``: ``scan`` with no output fed back.

    Returns
    -------
    outputs, updates
        As :func:`~opweave.scan.scan`.
    """
    return scan(
        fn,
        sequences=sequences,
        outputs_info=None,
        non_sequences=non_sequences,
        truncate_gradient=truncate_gradient,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
    )


def reduce(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Variable, Variable]]:
    """Fold ``fn`` over ``sequences``: ``scan``, keeping only each output's last step.

    ``fn`` is called as by :func:`~opweave.scan.scan` (sequence steps, accumulators,
    non-sequences).

    Returns
    -------
    outputs, updates
        The last value of each output (one variable or a list), and the updates.
    """
    outs, updates = scan(
        fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
    )
    if isinstance(outs, (list, tuple)):
        return [o[-1] for o in outs], updates
    return outs[-1], updates


def foldl(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Variable, Variable]]:
    """:func:`reduce` from the first step to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name)


def foldr(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Variable, Variable]]:
    """:func:`reduce` from the last step to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name)
