"""NumPy and SciPy implementations of :mod:`opweave.tensor.signal.conv`.

``Convolve1d`` is :func:`numpy.convolve`; ``Convolve2d`` is :func:`scipy.signal.convolve`
with the Op's method, SciPy being imported when such a node runs (:func:`scipy_signal`),
never when opweave or this backend is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType, ModuleType
from typing import Any, Literal

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.signal.conv import Convolve1d, Convolve2d
from opweave_python.impls.lapack import required_scipy

__all__ = ["PERFORMS", "convolve1d_perform", "convolve2d_perform", "scipy_signal"]


def scipy_signal() -> ModuleType:
    """``scipy.signal``, imported now (:func:`~opweave_python.impls.lapack.required_scipy`)."""
    return required_scipy(
        "scipy.signal",
        "the two-dimensional convolution (opweave.tensor.signal.convolve2d) is",
    )


def _mode(full_mode: Any) -> Literal["full", "valid"]:
    return "full" if full_mode else "valid"


def _typed(value: Any, node: Apply) -> np.ndarray:
    return np.asarray(value, dtype=node.outputs[0].type.dtype)  # type: ignore[attr-defined]


def convolve1d_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.convolve`` in the full or valid mode (what SciPy's direct method computes).

    Raises
    ------
    ValueError
        If an input is empty (NumPy's message).
    """
    in1, in2, full_mode = inputs
    out[0][0] = _typed(np.convolve(np.asarray(in1), np.asarray(in2), mode=_mode(full_mode)), node)


def convolve2d_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``scipy.signal.convolve`` in the full or valid mode, with the Op's method."""
    in1, in2, full_mode = inputs
    result = scipy_signal().convolve(in1, in2, mode=_mode(full_mode), method=op.method)
    out[0][0] = _typed(result, node)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {Convolve1d: convolve1d_perform, Convolve2d: convolve2d_perform}
)
