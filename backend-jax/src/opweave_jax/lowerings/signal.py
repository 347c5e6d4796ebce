"""Lowerings of :mod:`opweave.tensor.signal.conv`'s Ops: ``Convolve1d`` as
``jnp.convolve`` and ``Convolve2d`` as ``jax.scipy.signal.convolve2d``, full or valid by
the mode input, which must be static (a constant, or computed from shapes only: the
output's length depends on it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import jax.numpy as jnp
import jax.scipy.signal as jss
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.signal.conv import Convolve1d, Convolve2d
from opweave_jax.values import is_static

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _static_mode(op: Any, full_mode: Any) -> Literal["full", "valid"]:
    """``"full"`` or ``"valid"`` from the mode input.

    Raises
    ------
    NotImplementedError
        When the mode depends on the function's input values.
    """
    if not is_static(full_mode):
        raise NotImplementedError(
            f"jax linker: the mode of {op} must be known when the graph is compiled (a "
            "constant, or computed from shapes only), but it depends on the input values"
        )
    return "full" if bool(np.asarray(full_mode)) else "valid"


def convolve1d(op: Convolve1d, node: Apply) -> Fn:
    """``jnp.convolve`` in the full or valid mode, in the output's dtype."""
    dtype = node.outputs[0].type.dtype  # type: ignore[attr-defined]

    def run(in1: Any, in2: Any, full_mode: Any) -> Any:
        mode = _static_mode(op, full_mode)
        return jnp.convolve(in1, in2, mode=mode).astype(dtype)

    return run


def convolve2d(op: Convolve2d, node: Apply) -> Fn:
    """``jax.scipy.signal.convolve2d`` in the full or valid mode, in the output's dtype.

    The valid mode takes the larger input first, as SciPy's ``signal.convolve`` (the
    other backends' kernel) does.
    """
    dtype = node.outputs[0].type.dtype  # type: ignore[attr-defined]

    def run(in1: Any, in2: Any, full_mode: Any) -> Any:
        mode = _static_mode(op, full_mode)
        if mode == "valid" and in1.size < in2.size:
            in1, in2 = in2, in1
        return jss.convolve2d(in1, in2, mode=mode).astype(dtype)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Convolve1d: convolve1d,
    Convolve2d: convolve2d,
}
