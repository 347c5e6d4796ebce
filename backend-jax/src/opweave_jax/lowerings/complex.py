"""Lowerings of the complex-number scalar Ops (:mod:`opweave.scalar.complex`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from opweave.graph.basic import Apply
from opweave.scalar import complex as scx

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _plain(fn: Fn) -> Callable[[Any, Apply], Fn]:
    def factory(op: Any, node: Apply) -> Fn:
        return fn

    return factory


def _complex(x: Any, y: Any) -> Any:
    return jnp.asarray(x) + 1j * jnp.asarray(y)


def _from_polar(r: Any, theta: Any) -> Any:
    return r * jnp.cos(theta) + 1j * (r * jnp.sin(theta))


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    scx.Real: _plain(jnp.real),
    scx.Imag: _plain(jnp.imag),
    scx.Conj: _plain(jnp.conj),
    scx.Angle: _plain(jnp.angle),
    scx.Complex: _plain(_complex),
    scx.ComplexFromPolar: _plain(_from_polar),
}
