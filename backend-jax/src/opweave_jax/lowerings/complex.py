"""Lowerings of the complex-number scalar Ops (:mod:`opweave.scalar.complex`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from opweave.graph.basic import Apply
from opweave.scalar import complex as scx

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _plain(fn: Fn) -> Callable[[Any, Apply], Fn]:
    def factory(op: Any, node: Apply) -> Fn:
        return fn

    return factory


def _parts(fn: Fn) -> Callable[[Any, Apply], Fn]:
    """A factory giving the complex number of the real and imaginary parts ``fn`` makes of
    its inputs (in the output's real dtype): built with ``lax.complex``, not as
    ``re + 1j * im``, whose product turns an imaginary part -0.0 into +0.0 and
    ``inf * 0`` into a NaN real part."""

    def factory(op: Any, node: Apply) -> Fn:
        real = np.finfo(np.dtype(node.outputs[0].type.dtype)).dtype  # type: ignore[attr-defined]

        def run(*xs: Any) -> Any:
            re, im = fn(*(jnp.asarray(x).astype(real) for x in xs))
            return lax.complex(re, im)

        return run

    return factory


def _complex(x: Any, y: Any) -> tuple[Any, Any]:
    return x, y


def _from_polar(r: Any, theta: Any) -> tuple[Any, Any]:
    return r * jnp.cos(theta), r * jnp.sin(theta)


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    scx.Real: _plain(jnp.real),
    scx.Imag: _plain(jnp.imag),
    scx.Conj: _plain(jnp.conj),
    scx.Angle: _plain(jnp.angle),
    scx.Complex: _parts(_complex),
    scx.ComplexFromPolar: _parts(_from_polar),
}
