""":func:`scan_checkpoints`: a ``scan`` that keeps only every N-th state for the
gradient, as PyTensor's ``pytensor.scan.scan_checkpoints``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.scan.basic import scan
from opweave.tensor.basic import cast, join, ones, switch, zeros
from opweave.tensor.math import ceil, eq, neq
from opweave.tensor.subtensor import set_subtensor

__all__ = ["scan_checkpoints"]


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _pad_to_multiple(seq: Any, every: int) -> Any:
    """``seq`` followed by zero rows up to a multiple of ``every`` rows."""
    overshoot = seq.shape[0] % every
    n_pad = (every - overshoot) * neq(overshoot, 0)
    return join(0, seq, zeros((n_pad, *seq.shape[1:]), dtype=seq.dtype))


def scan_checkpoints(
    fn: Callable[..., Any],
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    name: str = "checkpointscan_fn",
    n_steps: Any = None,
    save_every_N: int = 10,
    padding: bool = True,
    return_updates: bool = True,
) -> Any:
    """Run ``fn`` as :func:`~opweave.scan.scan` does, as an outer loop of
    ``ceil(n_steps / save_every_N)`` steps each running an inner loop of (at most)
    ``save_every_N`` steps: only the states at the end of each inner loop are kept,
    which saves memory in the gradient at the cost of recomputing the inner loops.

    Parameters
    ----------
    fn, sequences, outputs_info, non_sequences, n_steps, return_updates
        As for :func:`~opweave.scan.scan`; states take only the previous step (no
        ``taps``).
    name
        The base of the two loops' names (``_outer`` and ``_inner`` are appended).
    save_every_N
        The number of steps of each inner loop.
    padding
        Pad the sequences with zeros to a multiple of ``save_every_N`` (needed unless
        their length is such a multiple already).

    Returns
    -------
    As :func:`~opweave.scan.scan`, except that each output holds the states at the end
    of each inner loop (one every ``save_every_N`` steps, and the last).

    Raises
    ------
    RuntimeError
        If an ``outputs_info`` entry gives ``taps``.
    """
    sequences = _as_list(sequences)
    outputs_info = outputs_info if isinstance(outputs_info, list) else [outputs_info]
    non_sequences = _as_list(non_sequences)
    for entry in outputs_info:
        if isinstance(entry, dict) and "taps" in entry:
            raise RuntimeError("scan_checkpoints doesn't work with taps.")
    if n_steps is None:
        n_steps = sequences[0].shape[0]
    outer_steps = cast(ceil(n_steps / save_every_N), "int64")
    remainder = n_steps % save_every_N
    last_steps = switch(eq(remainder, 0), save_every_N, remainder)
    inner_steps = set_subtensor(
        (save_every_N * ones((outer_steps,), "int64"))[-1], cast(last_steps, "int64")
    )
    if padding:
        sequences = [_pad_to_multiple(s, save_every_N) for s in sequences]
    outer_sequences = [
        s.reshape(
            [s.shape[0] // save_every_N, save_every_N, *(s.shape[i] for i in range(1, s.ndim))],
            ndim=s.ndim + 1,
        )
        for s in sequences
    ]
    outer_sequences.append(inner_steps)
    n_seqs = len(outer_sequences)
    n_nits = sum(1 for entry in outputs_info if entry is None)
    n_non_seqs = len(non_sequences)

    def outer_step(*args: Any) -> Any:
        inner_seqs = list(args[: n_seqs - 1])
        steps = args[n_seqs - 1]
        prev = list(args[n_seqs : len(args) - n_non_seqs])
        inner_non_seqs = list(args[len(args) - n_non_seqs :])
        found = scan(
            fn=fn,
            sequences=inner_seqs,
            outputs_info=prev + [None] * n_nits,
            non_sequences=inner_non_seqs,
            name=name + "_inner",
            n_steps=steps,
            return_updates=return_updates,
        )
        results, updates = found if return_updates else (found, {})
        results = results if isinstance(results, list | tuple) else [results]
        return [r[-1] for r in results], updates

    return scan(
        fn=outer_step,
        sequences=outer_sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        name=name + "_outer",
        n_steps=outer_steps,
        allow_gc=True,
        return_updates=return_updates,
    )
