"""Lowerings of the Fourier transforms: ``RFFTOp`` and ``IRFFTOp``
(:mod:`opweave.tensor.fft`, ``jnp.fft.rfftn`` / ``jnp.fft.irfftn``) and ``Fourier``
(:mod:`opweave.tensor.fourier`, ``jnp.fft.fft``).

The transform lengths and the axis must be static (constants, or computed from shapes
only): XLA compiles for fixed shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from opweave.graph.basic import Apply
from opweave.tensor.fft import IRFFTOp, RFFTOp
from opweave.tensor.fourier import Fourier
from opweave_jax.values import static_int, static_ints

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _axes(ndim: int, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """The last ``len(lengths)`` axes of an ``ndim``-d array."""
    return tuple(range(ndim - len(lengths), ndim))


def rfft(op: RFFTOp, node: Apply) -> Fn:
    """``jnp.fft.rfftn`` over the last ``len(s)`` axes, real and imaginary parts stacked on
    a trailing axis, in the output dtype."""
    dtype = np.dtype(node.outputs[0].type.dtype)  # type: ignore[attr-defined]

    def run(a: Any, s: Any) -> Any:
        lengths = static_ints(s, f"the transform lengths of {op}")
        spectrum = jnp.fft.rfftn(a, s=lengths, axes=_axes(jnp.ndim(a), lengths))
        return jnp.stack([jnp.real(spectrum), jnp.imag(spectrum)], axis=-1).astype(dtype)

    return run


def irfft(op: IRFFTOp, node: Apply) -> Fn:
    """``jnp.fft.irfftn`` over the last ``len(s)`` axes of the stored complex numbers, times
    ``prod(s)``, in the output dtype."""
    dtype = np.dtype(node.outputs[0].type.dtype)  # type: ignore[attr-defined]

    def run(a: Any, s: Any) -> Any:
        lengths = static_ints(s, f"the transform lengths of {op}")
        a = jnp.asarray(a)
        if not jnp.issubdtype(a.dtype, jnp.floating):
            a = a.astype(jnp.float64)
        spectrum = lax.complex(a[..., 0], a[..., 1])
        signal = jnp.fft.irfftn(spectrum, s=lengths, axes=_axes(spectrum.ndim, lengths))
        return (signal * int(np.prod(lengths, dtype=np.int64))).astype(dtype)

    return run


def fourier(op: Fourier, node: Apply) -> Fn:
    """``jnp.fft.fft(a, n, axis)`` as complex128."""

    def run(a: Any, n: Any, axis: Any) -> Any:
        length = static_int(n, f"the transform length of {op}")
        axis_ = static_int(axis, f"the axis of {op}")
        return jnp.fft.fft(a, n=length, axis=axis_).astype(jnp.complex128)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    RFFTOp: rfft,
    IRFFTOp: irfft,
    Fourier: fourier,
}
