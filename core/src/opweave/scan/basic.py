"""``scan``: loops over sequences with states, as PyTensor's ``pytensor.scan``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.scan.builder import build_scan
from opweave.scan.op import Scan
from opweave.scan.utils import get_updates_and_outputs

__all__ = ["get_updates_and_outputs", "scan"]


def scan(
    fn: Callable[..., Any],
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    n_steps: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    profile: bool = False,
    allow_gc: bool | None = None,
    strict: bool = False,
    return_list: bool = False,
    return_updates: bool = True,
) -> Any:
    """Repeat ``fn`` over sequences, feeding some of its outputs back (PyTensor's ``scan``).

    Parameters
    ----------
    fn
        Called once, when the graph is built, with placeholder variables: first one per
        sequence tap (sequences in order, each sequence's taps in the given order), then
        one per tap of each output fed back (``outputs_info`` entries that are not
        ``None``), then the ``non_sequences`` themselves. It returns the step's outputs
        (a variable or a list), optionally with a dict of shared-variable updates and/or
        :class:`~opweave.scan.utils.until` (see
        :func:`~opweave.scan.utils.get_updates_and_outputs`).
    sequences
        Variables iterated over their first dimension, or ``dict(input=x, taps=[...])``:
        tap ``k`` gives, at step ``t``, ``x[t + k - min(taps, 0)]``.
    outputs_info
        One entry per output of ``fn``: an initial value (tap ``-1``: the previous step's
        value), ``dict(initial=x0, taps=[-2, -1])`` (``x0[0]`` is the value two steps
        before the first, ``x0[1]`` one step before), or ``None`` for an output that is
        not fed back. ``None`` altogether, or an empty list: no output is fed back. As in
        PyTensor, only the list ``[-1]`` (the default) takes a one-step initial value;
        other taps, ``(-1,)`` and ``range(-1, 0)`` included, take the values before the
        first step stacked along a first dimension. A value without a shape, such as a random
        generator, can be carried from step to step (tap ``-1`` only): its output is its
        last value, not a stack.
    non_sequences
        Variables given unchanged to every step. Other outer variables and shared
        variables the body reads become implicit non-sequences (shared ones only
        without ``strict``).
    n_steps
        Number of steps (an integer or an integer scalar variable). Default: the length
        of the shortest sequence (after taps).
    truncate_gradient
        Number of steps the gradient flows back through (``-1``: all).
    go_backwards
        Iterate over the sequences from their end.
    mode
        The mode the inner function is compiled with (a :class:`~opweave.compile.Mode` or
        its name); ``None``: the default mode (``opweave.config.mode`` and
        ``opweave.config.linker``). The inner function is compiled once, the first time
        the loop runs.
    name
        A name for the Scan node.
    profile
        Profile the inner function (``True``, or a
        :class:`~opweave.compile.profiling.ProfileStats` to record into): each step's
        nodes are timed there; the inner function's ``profile`` attribute holds it.
    allow_gc
        Whether the inner function frees its intermediates after their last use in a step.
        ``None`` (the default, as PyTensor's ``scan__allow_gc``): it keeps them from one
        step to the next, so that each step reuses the previous step's memory, and they
        are freed when the loop ends.
    strict
        Require every shared variable the body reads to be passed in ``sequences`` or
        ``non_sequences`` (PyTensor's contract); other outer variables are added as
        implicit non-sequences either way.
    return_list
        Return a list of outputs even when there is one.
    return_updates
        Return ``(outputs, updates)`` (the default) or, with ``False``, the outputs alone;
        a loop that updates shared variables then raises (carry such values as states
        through ``outputs_info`` instead).

    Returns
    -------
    outputs
        One variable per output of ``fn`` (the steps stacked along a new first dimension,
        initial values left out), a list of them, or ``None`` when ``fn`` has none.
    updates
        An ``OrderedDict`` of shared-variable updates to pass to
        ``opweave.function(..., updates=updates)``: the last values of the shared
        variables the body updates (explicitly or through their ``default_update``, as
        random streams do).

    Raises
    ------
    ValueError
        For malformed sequences/outputs_info, a body whose outputs do not match
        ``outputs_info`` (count, dtype or rank), a loop with neither sequences nor
        ``n_steps``, or (without ``return_updates``) a loop that updates shared variables.
    opweave.scan.builder.StrictScanInputError
        (a ``MissingInputError`` and a ``ValueError``) With ``strict``, for a shared
        variable the body reads that is not passed.
    """
    outputs, updates = build_scan(
        Scan,
        fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        n_steps=n_steps,
        truncate_gradient=truncate_gradient,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        profile=profile,
        allow_gc=allow_gc,
        strict=strict,
        return_list=return_list,
    )
    if return_updates:
        return outputs, updates
    if updates:
        names = ", ".join(str(v) for v in updates)
        raise ValueError(
            f"scan: return_updates=False, but the loop updates the shared variable(s) {names}; "
            "carry them as states through outputs_info, or pass return_updates=True and give "
            "the updates to opweave.function"
        )
    return outputs
