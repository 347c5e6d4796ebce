"""``jax.random`` samplers of the distributions ``jax.random`` does not draw itself: von
Mises, hypergeometric and truncated exponential draws.

Each sampler has the signature of :data:`opweave_jax.lowerings.random.Sampler`
(``sampler(key, batch_shape, dtype, *params)``) and is listed in :data:`SAMPLERS`, which
:mod:`opweave_jax.lowerings.random` joins to its own table: the key is the one the random
variable's node receives, so the generator's stream advances as for every other draw.

* ``vonmises(mu, kappa)``: Best and Fisher's rejection method as NumPy draws it, every
  batch entry drawing again until it is accepted (a ``lax.while_loop``); ``kappa < 1e-8``
  draws uniformly on ``[-pi, pi]`` and ``kappa > 1e6`` from the normal approximation, as
  NumPy does. The draws lie in ``[-pi, pi]``.
* ``hypergeometric(ngood, nbad, nsample)``: ``min(nsample, ngood + nbad - nsample, ngood,
  nbad)`` sequential draws without replacement (the good items among the items sampled,
  or among those left, or the roles of the good and sampled items swapped), exact for any
  parameters; the loop runs as long as the batch's largest count.
* ``truncexpon(b, loc, scale)``: the inverse of SciPy's ``truncexpon(b, loc, scale)``
  distribution function, ``loc - scale * log1p(u * expm1(-b))``.

Parameters NumPy or SciPy refuse (a negative ``kappa``, ``nsample > ngood + nbad``) are not
checked when the function runs: their draws are NaN (von Mises) or unspecified
(hypergeometric).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.tensor.random import basic as rb

__all__ = ["SAMPLERS"]

#: What the draws are computed in (NumPy and SciPy compute them in double precision).
_F64 = np.dtype("float64")
_I64 = np.dtype("int64")

#: NumPy's bounds of the von Mises concentration: below, uniform draws; above, normal ones.
_KAPPA_TINY = 1e-8
_KAPPA_HUGE = 1e6


def _float(dtype: Any) -> Any:
    """``dtype`` when it is a float dtype, else float64."""
    return dtype if dtype is not None and np.dtype(dtype).kind == "f" else _F64


def _best_fisher_s(kappa: Any) -> Any:
    """Best and Fisher's ``s`` of ``kappa`` (its second-order expansion below 1e-5)."""
    r = 1 + jnp.sqrt(1 + 4 * kappa * kappa)
    rho = (r - jnp.sqrt(2 * r)) / (2 * kappa)
    return jnp.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho * rho) / (2 * rho))


def _vonmises_w(key: Any, shape: tuple[int, ...], kappa: Any, done: Any) -> Any:
    """The accepted ``W = cos(angle)`` of each entry not ``done`` (rejection until every
    entry is accepted)."""
    s = _best_fisher_s(kappa)

    def again(state: tuple[Any, Any, Any]) -> Any:
        return ~jnp.all(state[2])

    def draw(state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        loop_key, w, accepted = state
        loop_key, u_key, v_key = jax.random.split(loop_key, 3)
        u = jax.random.uniform(u_key, shape, _F64)
        v = jax.random.uniform(v_key, shape, _F64)
        z = jnp.cos(jnp.pi * u)
        w_new = (1 + s * z) / (s + z)
        y = kappa * (s - w_new)
        ok = (y * (2 - y) - v >= 0) | (jnp.log(y / v) + 1 - y >= 0)
        return loop_key, jnp.where(accepted, w, w_new), accepted | ok

    _, w, _ = jax.lax.while_loop(again, draw, (key, jnp.zeros(shape, _F64), done))
    return w


def _wrap(angle: Any) -> Any:
    """``angle`` in ``[-pi, pi]``, as NumPy wraps the von Mises draws."""
    folded = jnp.fmod(jnp.abs(angle) + jnp.pi, 2 * jnp.pi) - jnp.pi
    return jnp.where(angle < 0, -folded, folded)


def _vonmises(key: Any, shape: tuple[int, ...], dtype: Any, mu: Any, kappa: Any) -> Any:
    """Von Mises draws of mode ``mu`` and concentration ``kappa`` in ``[-pi, pi]``."""
    mu = jnp.broadcast_to(jnp.asarray(mu, _F64), shape)
    kappa = jnp.broadcast_to(jnp.asarray(kappa, _F64), shape)
    loop_key, sign_key, uniform_key, normal_key = jax.random.split(key, 4)
    tiny = (kappa >= 0) & (kappa < _KAPPA_TINY)
    huge = kappa > _KAPPA_HUGE
    # Entries that do not go through the rejection (NaN and negative kappa included, whose
    # draws are NaN): accepted from the start, so that the loop ends.
    direct = ~(kappa >= _KAPPA_TINY) | huge
    middle = jnp.where(direct, 1.0, kappa)
    w = _vonmises_w(loop_key, shape, middle, direct)
    angle = jnp.arccos(jnp.clip(w, -1.0, 1.0))
    negative = jax.random.uniform(sign_key, shape, _F64) < 0.5
    rejection = _wrap(mu + jnp.where(negative, -angle, angle))
    uniform = jnp.pi * (2 * jax.random.uniform(uniform_key, shape, _F64) - 1)
    normal = mu + jax.random.normal(normal_key, shape, _F64) / jnp.sqrt(jnp.where(huge, kappa, 1))
    normal = jnp.where(normal < -jnp.pi, normal + 2 * jnp.pi, normal)
    normal = jnp.where(normal > jnp.pi, normal - 2 * jnp.pi, normal)
    nan = jnp.asarray(np.nan, _F64)
    draws = jnp.where(tiny, uniform, jnp.where(huge, normal, jnp.where(direct, nan, rejection)))
    return draws.astype(_float(dtype))


def _hypergeometric(
    key: Any, shape: tuple[int, ...], dtype: Any, ngood: Any, nbad: Any, nsample: Any
) -> Any:
    """The good items among ``nsample`` drawn without replacement from ``ngood`` good and
    ``nbad`` bad ones, drawn one item at a time: ``min(nsample, ngood + nbad - nsample,
    ngood, nbad)`` items.

    The count has the same distribution when the ``ngood`` good items are the ones drawn
    and the ``nsample`` sampled ones the good ones (the roles are swapped when the good or
    the bad items are the fewer), and is ``ngood`` less the good items among those not
    sampled (drawn instead when they are fewer than the sampled ones).
    """
    good = jnp.broadcast_to(jnp.asarray(ngood, _I64), shape)
    bad = jnp.broadcast_to(jnp.asarray(nbad, _I64), shape)
    sample = jnp.broadcast_to(jnp.asarray(nsample, _I64), shape)
    total = good + bad
    valid = (good >= 0) & (bad >= 0) & (sample >= 0) & (sample <= total)
    swap = jnp.minimum(good, bad) < jnp.minimum(sample, total - sample)
    good, sample = jnp.where(swap, sample, good), jnp.where(swap, good, sample)
    left_out = total - sample < sample
    steps = jnp.where(valid, jnp.where(left_out, total - sample, sample), 0)

    def one_item(i: Any, state: tuple[Any, Any, Any, Any]) -> tuple[Any, Any, Any, Any]:
        loop_key, good_left, total_left, picked = state
        loop_key, u_key = jax.random.split(loop_key)
        u = jax.random.uniform(u_key, shape, _F64)
        active = i < steps
        is_good = active & (u * total_left.astype(_F64) < good_left.astype(_F64))
        return (
            loop_key,
            good_left - is_good,
            total_left - active,
            picked + is_good,
        )

    zero = jnp.zeros(shape, _I64)
    n_steps = jnp.max(steps, initial=0)
    _, _, _, picked = jax.lax.fori_loop(0, n_steps, one_item, (key, good, total, zero))
    draws = jnp.where(left_out, good - picked, picked)
    return draws.astype(_I64 if dtype is None else dtype)


def _truncexpon(key: Any, shape: tuple[int, ...], dtype: Any, b: Any, loc: Any, scale: Any) -> Any:
    """SciPy's ``truncexpon(b, loc, scale)`` by the inverse of its distribution function."""
    u = jax.random.uniform(key, shape, _F64)
    b = jnp.asarray(b, _F64)
    draws = jnp.asarray(loc, _F64) - jnp.asarray(scale, _F64) * jnp.log1p(u * jnp.expm1(-b))
    return draws.astype(_float(dtype))


#: RandomVariable class -> its sampler.
SAMPLERS: dict[type, Callable[..., Any]] = {
    rb.VonMisesRV: _vonmises,
    rb.HyperGeometricRV: _hypergeometric,
    rb.TruncExponentialRV: _truncexpon,
}
