"""NumPy implementations of :mod:`opweave.tensor.fourier`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.fourier import Fourier


def fourier_perform(op: Fourier, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.fft.fft(a, n, axis)`` as complex128."""
    a, n, axis = inputs
    out[0][0] = np.asarray(np.fft.fft(a, n=int(n), axis=int(axis)), dtype=np.complex128)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType({Fourier: fourier_perform})
