"""Large outputs handed to the caller without a copy, on the CPU.

A ``jax``-linker function returns NumPy arrays the caller owns: writable, and aliasing
nothing else. On the CPU, XLA writes each output into a buffer of its own that nothing
else holds once the call has returned, so for a large output the copy into a new NumPy
array (a pass over the data, and page faults on fresh memory) is not needed: the NumPy
array can be a writable view of that buffer, which it keeps alive (:func:`adopt`).

That holds only for a buffer no other value uses. JAX may give an output the buffer of an
input (an input returned unchanged is forwarded, a NumPy input whose buffer XLA could use
in place then shares the caller's memory) or one buffer for two outputs; such outputs are
copied (:func:`adoptable`). Small outputs are always copied: below :data:`MIN_BYTES` the
copy costs less than the checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["MIN_BYTES", "adopt", "adoptable", "spans_of"]

#: Outputs of at least this many bytes are adopted rather than copied.
MIN_BYTES = 256 * 1024


class _Buffer:
    """What a NumPy array adopting a device buffer keeps as its base: the JAX array (so
    the buffer lives as long as the NumPy array) and the buffer's array interface."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner: Any, pointer: int) -> None:
        self.owner = owner
        self.__array_interface__ = {
            "version": 3,
            "shape": tuple(owner.shape),
            "typestr": np.dtype(owner.dtype).str,
            "data": (pointer, False),
            "strides": None,
        }


def spans_of(values: Sequence[Any]) -> list[tuple[int, int]]:
    """The memory ``[start, end)`` of each NumPy or live JAX array of ``values``.

    Parameters
    ----------
    values
        A call's input values (other kinds of values are skipped).

    Returns
    -------
    list of tuple of int
        The byte ranges their data spans.
    """
    spans = []
    for value in values:
        if isinstance(value, np.ndarray):
            if value.size:
                spans.append(np.lib.array_utils.byte_bounds(value))
        elif hasattr(value, "unsafe_buffer_pointer") and not value.is_deleted():
            try:
                start = value.unsafe_buffer_pointer()
            except (RuntimeError, ValueError):  # not one buffer on one device
                continue
            spans.append((start, start + value.nbytes))
    return spans


def adoptable(
    results: Sequence[Any], candidates: Sequence[int], inputs: Sequence[Any]
) -> dict[int, int]:
    """The outputs among ``candidates`` that may be adopted, with their buffers' addresses.

    Parameters
    ----------
    results
        The jitted function's outputs (JAX arrays on the CPU).
    candidates
        The indices of the outputs that would otherwise be copied into owned arrays.
    inputs
        The values the function was called with.

    Returns
    -------
    dict of int to int
        Output index -> buffer address, for the outputs of at least :data:`MIN_BYTES`
        whose buffer no input and no other output shares.
    """
    big = [o for o in candidates if _nbytes(results[o]) >= MIN_BYTES]
    if not big:
        return {}
    addresses: dict[int, int] = {}
    counts: dict[int, int] = {}
    for o, value in enumerate(results):
        if not hasattr(value, "unsafe_buffer_pointer"):
            continue
        try:
            value.block_until_ready()
            address = value.unsafe_buffer_pointer()
        except (RuntimeError, ValueError):  # not one buffer on one device
            continue
        addresses[o] = address
        counts[address] = counts.get(address, 0) + 1
    spans = spans_of(inputs)
    chosen = {}
    for o in big:
        start = addresses.get(o)
        if start is None or counts[start] != 1:
            continue
        end = start + _nbytes(results[o])
        if all(end <= lo or hi <= start for lo, hi in spans):
            chosen[o] = start
    return chosen


def _nbytes(value: Any) -> int:
    """The bytes of a JAX array's data (cheaper than its ``nbytes`` property)."""
    return int(math.prod(value.shape) * value.dtype.itemsize)


def adopt(value: Any, address: int, dtype: np.dtype[Any]) -> np.ndarray:
    """A writable NumPy array over ``value``'s buffer (at ``address``), keeping it alive.

    Parameters
    ----------
    value
        A JAX array on the CPU, C-contiguous, that nothing else uses.
    address
        Its buffer's address.
    dtype
        The dtype the output must have (another one is converted, with a copy).

    Returns
    -------
    numpy.ndarray
        The caller's array.
    """
    out = np.asarray(_Buffer(value, address))
    return out if out.dtype == dtype else out.astype(dtype)
