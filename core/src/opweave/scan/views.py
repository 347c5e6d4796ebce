"""``map``, ``reduce``, ``foldl`` and ``foldr``: common uses of :func:`~opweave.scan.scan`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    return_updates: bool = True,
) -> Any:
    """Apply ``fn`` to every step of ``sequences``: ``scan`` with no output fed back.

    Parameters
    ----------
    return_updates
        As :func:`~opweave.scan.scan`'s: ``False`` returns the outputs alone.

    Returns
    -------
    outputs, updates
        As :func:`~opweave.scan.scan` (the outputs alone without ``return_updates``).
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
        return_updates=return_updates,
    )


def _last_steps(outs: Any) -> Any:
    """The last step of each output (one variable or a list)."""
    if isinstance(outs, (list, tuple)):
        return [o[-1] for o in outs]
    return outs[-1]


def reduce(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """Fold ``fn`` over ``sequences``: ``scan``, keeping only each output's last step.

    ``fn`` is called as by :func:`~opweave.scan.scan` (sequence steps, accumulators,
    non-sequences).

    Parameters
    ----------
    return_updates
        As :func:`~opweave.scan.scan`'s: ``False`` returns the last values alone.

    Returns
    -------
    outputs, updates
        The last value of each output (one variable or a list), and the updates (the
        last values alone without ``return_updates``).
    """
    result = scan(
        fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )
    if not return_updates:
        return _last_steps(result)
    outs, updates = result
    return _last_steps(outs), updates


def foldl(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """:func:`reduce` from the first step to the last (``return_updates`` as :func:`reduce`'s)."""
    return reduce(
        fn, sequences, outputs_info, non_sequences, False, mode, name, return_updates=return_updates
    )


def foldr(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """:func:`reduce` from the last step to the first (``return_updates`` as :func:`reduce`'s)."""
    return reduce(
        fn, sequences, outputs_info, non_sequences, True, mode, name, return_updates=return_updates
    )
