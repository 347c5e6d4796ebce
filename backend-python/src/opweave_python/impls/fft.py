"""NumPy implementations of :mod:`opweave.tensor.fft`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.fft import IRFFTOp, RFFTOp


def _axes(ndim: int, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """The last ``len(lengths)`` axes of an ``ndim``-d array."""
    return tuple(range(ndim - len(lengths), ndim))


def rfft_perform(op: RFFTOp, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.fft.rfftn`` over the last ``len(s)`` axes, real and imaginary parts on a
    trailing axis, in the input's dtype."""
    a, s = inputs
    lengths = tuple(int(v) for v in s)
    spectrum = np.fft.rfftn(a, s=lengths, axes=_axes(a.ndim, lengths))
    result = np.empty((*spectrum.shape, 2), dtype=a.dtype)
    result[..., 0] = spectrum.real
    result[..., 1] = spectrum.imag
    out[0][0] = result


def irfft_perform(op: IRFFTOp, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.fft.irfftn`` over the last ``len(s)`` axes of the complex numbers stored
    as pairs, times ``prod(s)`` (unnormalized), in the input's dtype."""
    a, s = inputs
    lengths = tuple(int(v) for v in s)
    spectrum = a[..., 0] + 1j * a[..., 1]
    signal = np.fft.irfftn(spectrum, s=lengths, axes=_axes(spectrum.ndim, lengths))
    out[0][0] = (signal * np.prod(lengths, dtype=np.int64)).astype(a.dtype)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {RFFTOp: rfft_perform, IRFFTOp: irfft_perform}
)
