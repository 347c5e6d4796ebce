"""Lowerings of the special functions (:mod:`opweave.scalar.math`,
:mod:`opweave.scalar.special`) through :mod:`jax.scipy.special`.

XLA's special functions are not NumPy's or SciPy's: their results differ from the ``py``
backend's in the last bits (see the tolerances in the backend's documentation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from opweave.graph.basic import Apply
from opweave.scalar import math as sm
from opweave.scalar import special as ssp
from opweave_jax.lowerings.scalar import out_dtype

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _floats(fn: Fn) -> Callable[[Any, Apply], Fn]:
    """``fn`` of its inputs converted to the output's float dtype."""

    def factory(op: Any, node: Apply) -> Fn:
        dtype = out_dtype(node)

        def run(*xs: Any) -> Any:
            return fn(*[jnp.asarray(x).astype(dtype) for x in xs])

        return run

    return factory


def _polygamma(op: Any, node: Apply) -> Fn:
    dtype = out_dtype(node)

    def run(n: Any, x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        return jss.polygamma(jnp.broadcast_to(jnp.asarray(n).astype(np.int64), x.shape), x)

    return run


def _trigamma(x: Any) -> Any:
    """``polygamma(1, x)``, 0 at ``inf`` (XLA gives NaN there)."""
    value = jss.polygamma(jnp.ones(jnp.shape(x), np.int64), x)
    return jnp.where(x == jnp.inf, jnp.zeros((), x.dtype), value)


def _digamma(x: Any) -> Any:
    """``digamma``, with the poles at zero signed as SciPy's (``-inf`` at ``0.0``, ``inf``
    at ``-0.0``; XLA gives NaN there)."""
    pole = jnp.where(jnp.signbit(x), jnp.inf, -jnp.inf).astype(x.dtype)
    return jnp.where(x == 0, pole, jss.digamma(x))


def _xlogx(x: Any) -> Any:
    """``x * log(x)``, ``+0.0`` at both zeros."""
    return jnp.where(x == 0, jnp.zeros((), x.dtype), jss.xlogy(x, x))


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    sm.Erf: _floats(jss.erf),
    sm.Erfc: _floats(jss.erfc),
    sm.Erfinv: _floats(jss.erfinv),
    sm.Erfcx: _floats(jss.erfcx),
    sm.Gamma: _floats(jss.gamma),
    sm.GammaLn: _floats(jss.gammaln),
    sm.Psi: _floats(_digamma),
    sm.TriGamma: _floats(_trigamma),
    sm.PolyGamma: _polygamma,
    sm.GammaInc: _floats(jss.gammainc),
    sm.GammaIncC: _floats(jss.gammaincc),
    sm.XlogX: _floats(_xlogx),
    sm.XlogY0: _floats(jss.xlogy),
    ssp.I0: _floats(jss.i0),
    ssp.I1: _floats(jss.i1),
    ssp.BetaInc: _floats(jss.betainc),
}
