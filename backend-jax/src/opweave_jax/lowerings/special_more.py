"""Lowerings of more special functions: the Bessel functions ``j0``/``j1`` and the inverse
of the lower incomplete gamma function (:mod:`opweave.scalar.special`), and the derivatives
of the incomplete gamma functions in their shape (:mod:`opweave.scalar.shape_gradients`).

They follow the ``py`` backend's kernels (:mod:`opweave_python.special_math_extra`) with
fixed iteration counts, computed in float64 and rounded to the output dtype as the ``py``
backend does:

* ``j0``/``j1``: the power series for ``|x| <= 2``, Miller's backward recurrence up to 25
  (from the same starting order as the ``py`` kernel), Hankel's asymptotic expansion beyond;
* ``gammaincinv``: below the shape 1e4, Newton's method on ``log(gammainc)`` (on
  ``log(gammaincc)`` in the upper tail; ``log(P)`` from its series below ``x = 0.7 a``) from
  the ``py`` kernel's initial guesses, with a fixed number of steps, each frozen once
  converged; from 1e4 on, Newton's method on Temme's uniform asymptotic expansion;
* ``d/dk gammainc(k, x)``: XLA's ``igamma_grad_a`` (``-E1(x)`` below ``k = 1e-14``, from its
  series and continued fraction).

``jv``, ``kve``, ``iv``, ``ive`` (real orders), ``hyp2f1`` and its derivatives, the
inverses of ``gammaincc`` and ``betainc`` and the shape derivatives of ``betainc``, which
JAX lacks or computes far less accurately than the ``py`` backend, are lowered from the
``py`` kernels' algorithms in :mod:`~opweave_jax.lowerings.special_bessel`,
:mod:`~opweave_jax.lowerings.special_inverse`, :mod:`~opweave_jax.lowerings.special_hyp2f1`
and :mod:`~opweave_jax.lowerings.special_grads`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

from opweave.graph.basic import Apply
from opweave.scalar import shape_gradients as sgrad
from opweave.scalar import special as ssp
from opweave_jax.lowerings.special import in_float64

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]

_EPS = 2.220446049250313e-16
_TINY = 1e-300
#: The log of the smallest positive double (below it, ``exp`` gives 0).
_LOG_SMALLEST = -745.2


# ====================================================================== Bessel j0, j1


def _j_series(n: int, x: Any) -> Any:
    """The power series of ``J_n`` (for ``|x| <= 2``)."""
    q = -0.25 * x * x
    term = (0.5 * x) ** n / float(np.prod(np.arange(1, n + 1)))
    total = term
    done = jnp.zeros(jnp.shape(x), bool)
    for k in range(1, 60):
        term = term * q / (k * (n + k))
        total = jnp.where(done, total, total + term)
        done = done | (jnp.abs(term) <= _EPS * jnp.abs(total) * 0.25)
    return total


#: The highest starting order of the backward recurrence (the ``py`` kernel's at 25).
_MILLER_TOP = 2 * ((25 + 40) // 2)


def _j_miller(x: Any) -> tuple[Any, Any]:
    """``(J0(x), J1(x))`` for ``0 < x <= 25`` by backward recurrence, started at the ``py``
    kernel's order ``2 ((floor(x) + 40) // 2)`` (the steps above it leave the start alone)."""
    top = 2 * ((jnp.floor(x) + 40) // 2)

    def step(i: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        j_next, j, norm, j1 = carry
        k = (_MILLER_TOP - i).astype(x.dtype)
        on = k <= top
        norm = jnp.where(on & (k % 2 == 0), norm + 2.0 * j, norm)
        j_prev = 2.0 * k / x * j - j_next
        new_next, new_j = j, j_prev
        new_j1 = jnp.where(k == 1, new_next, j1)
        big = jnp.abs(new_j) > 1e250
        scale = jnp.where(big, 1e-250, 1.0)
        return (
            jnp.where(on, new_next * scale, j_next),
            jnp.where(on, new_j * scale, j),
            jnp.where(on, norm * scale, norm),
            jnp.where(on, new_j1 * scale, j1),
        )

    zero = jnp.zeros_like(x)
    start = (zero, jnp.full_like(x, 1e-30), zero, zero)
    _, j0, norm, j1 = lax.fori_loop(0, _MILLER_TOP, step, start)
    norm = norm + j0
    return j0 / norm, j1 / norm


def _j_hankel(n: int, x: Any) -> Any:
    """Hankel's asymptotic expansion of ``J_n`` (for ``x > 25``)."""
    mu = 4.0 * n * n

    def step(k: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        term, p, q, done = carry
        kf = k.astype(x.dtype)
        new = term * (mu - (2 * kf - 1) ** 2) / (kf * 8.0 * x)
        done = done | ((jnp.abs(new) >= jnp.abs(term)) & (k > 2))
        signed = jnp.where((k // 2) % 2 == 0, new, -new)
        odd = k % 2 == 1
        q = jnp.where(~done & odd, q + signed, q)
        p = jnp.where(~done & ~odd, p + signed, p)
        term = jnp.where(done, term, new)
        done = done | (jnp.abs(term) < _EPS * 0.25)
        return term, p, q, done

    one, zero = jnp.ones_like(x), jnp.zeros_like(x)
    _, p, q, _ = lax.fori_loop(1, 100, step, (one, one, zero, jnp.zeros(x.shape, bool)))
    c = (0.5 * n + 0.25) * np.pi
    cos_chi = jnp.cos(x) * np.cos(c) + jnp.sin(x) * np.sin(c)
    sin_chi = jnp.sin(x) * np.cos(c) - jnp.cos(x) * np.sin(c)
    scaled = np.pi * x
    amplitude = jnp.where(
        jnp.isinf(scaled), np.sqrt(2.0 / np.pi) / jnp.sqrt(x), jnp.sqrt(2.0 / scaled)
    )
    return amplitude * (p * cos_chi - q * sin_chi)


def _jn(n: int, x: Any) -> Any:
    """``J_n(x)`` for ``n`` 0 or 1: NaN at ``+-inf`` and for NaN, as SciPy."""
    sign = jnp.where(x < 0, -1.0, 1.0) if n % 2 else 1.0
    ax = jnp.abs(x)
    small = ax <= 2.0
    middle = ~small & (ax <= 25.0)
    series = _j_series(n, jnp.where(small, ax, 1.0))
    miller = _j_miller(jnp.where(middle, ax, 10.0))[n]
    hankel = _j_hankel(n, jnp.where(ax > 25.0, ax, 30.0))
    value = jnp.where(small, series, jnp.where(middle, miller, hankel))
    return jnp.where(jnp.isfinite(x), sign * value, jnp.nan)


def _j0(x: Any) -> Any:
    return _jn(0, x)


def _j1(x: Any) -> Any:
    return _jn(1, x)


# ====================================================================== gamma inverses


def _gamma_guess(a: Any, p: Any, q: Any) -> Any:
    """Numerical Recipes' first guess of ``x`` with ``gammainc(a, x) = p = 1 - q``."""
    pp = jnp.where(p < 0.5, p, q)
    t = jnp.sqrt(-2.0 * jnp.log(pp))
    z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
    z = jnp.where(p < 0.5, -z, z)
    big = jnp.maximum(1e-3, a * (1.0 - 1.0 / (9.0 * a) - z / (3.0 * jnp.sqrt(a))) ** 3)
    t = 1.0 - a * (0.253 + a * 0.12)
    small = jnp.where(p < t, (p / t) ** (1.0 / a), 1.0 - jnp.log(q / jnp.maximum(1.0 - t, _TINY)))
    return jnp.where(a > 1.0, big, small)


#: Newton steps of the gamma inverses (the ``py`` kernel stops within 20 on its domain).
_NEWTON_STEPS = 60


#: Below ``x = _SERIES_RATIO * a``, ``log(P)`` from 120 terms of its series (XLA's
#: ``igamma`` gives 0 where its factor ``x**a exp(-x) / gamma(a)`` is below ``1e-308``).
_SERIES_RATIO = 0.7


def _log_lower_series(a: Any, x: Any) -> Any:
    """``log(P(a, x))`` for ``x < 0.7 a`` from ``P = x**a exp(-x) / gamma(a + 1) S``,
    ``S = sum(x**n / ((a + 1) ... (a + n)))``."""
    term, total = jnp.ones_like(x), jnp.ones_like(x)
    for n in range(1, 121):
        term = term * x / (a + n)
        total = total + term
    return a * jnp.log(x) - x - jss.gammaln(a + 1.0) + jnp.log(total)


def _log_regularized_gamma(a: Any, x: Any, lower: Any) -> Any:
    value = jnp.where(lower, jss.gammainc(a, x), jss.gammaincc(a, x))
    direct = jnp.where(value > 0, jnp.log(jnp.where(value > 0, value, 1.0)), -jnp.inf)
    series = lower & (x < _SERIES_RATIO * a)
    return jnp.where(series, _log_lower_series(a, jnp.where(series, x, 0.5 * a)), direct)


def _gamma_inverse(
    a: Any,
    p: Any,
    q: Any,
    upper: Any,
    log_regularized: Callable[[Any, Any, Any], Any] = _log_regularized_gamma,
    steps: int = _NEWTON_STEPS,
    until_done: bool = False,
) -> Any:
    """``x`` with ``gammainc(a, x) = p`` (``q = 1 - p``), by Newton's method on
    ``log(P(a, x)) = log(p)``, or on ``log(Q(a, x)) = log(q)`` where ``upper``, each
    element frozen once converged: ``steps`` steps, or (``until_done``) at most ``steps``
    until every element converged. ``log_regularized(a, x, lower)`` is ``log(P)`` where
    ``lower``, else ``log(Q)``."""
    log_p = jnp.where(p < 0.5, jnp.log(p), jnp.log1p(-q))
    underflow = (log_p + jss.gammaln(a + 1.0)) / a < _LOG_SMALLEST
    x = jnp.maximum(_gamma_guess(a, p, q), _TINY)
    small = jnp.exp((jnp.log(p) + jss.gammaln(a + 1.0)) / a)
    x = jnp.where((p < 0.5) & (small < 0.2 * a), small, x)
    lg = jss.gammaln(a)
    log_target = jnp.log(jnp.where(upper, q, p))

    def step(x: Any, done: Any) -> tuple[Any, Any]:
        finite = jnp.isfinite(x)
        safe = jnp.where(finite & (x > 0), x, 1.0)
        log_val = jnp.where(finite, log_regularized(a, safe, ~upper), -jnp.inf)
        dead = log_val == -jnp.inf
        log_ratio = log_val - (-safe + (a - 1.0) * jnp.log(safe) - lg)
        r = log_val - log_target
        change = r * jnp.exp(jnp.minimum(log_ratio, 700.0))
        new = jnp.where(upper, x + change, x - change)
        new = jnp.where(new <= 0.0, 0.1 * x, new)
        new = jnp.where(dead, jnp.where(upper, x * 0.5, x * 2.0), new)
        converged = ~dead & (jnp.abs(new - x) <= 4 * _EPS * new)
        new = jnp.where(x <= 0.0, 0.0, new)
        return jnp.where(done, x, new), done | converged | (x <= 0.0)

    done = jnp.zeros(jnp.shape(x), bool)
    if until_done:
        start = (jnp.zeros((), "int32"), x, done)
        x = lax.while_loop(
            lambda c: (c[0] < steps) & ~jnp.all(c[2]),
            lambda c: (c[0] + 1, *step(c[1], c[2])),
            start,
        )[1]
    else:
        x, _ = lax.fori_loop(0, steps, lambda _, c: step(*c), (x, done))
    return jnp.where(underflow, 0.0, x)


#: From this shape on, the inverses use Temme's uniform asymptotic expansion (XLA's
#: ``igamma`` loses accuracy and time with the shape: 1e-9 relative at 1e6, 1e-8 at 1e7).
_ASYMPTOTIC_A = 1e4

#: The series in ``eta`` of the first two coefficients ``C0``, ``C1`` of Temme's expansion
#: ``Q(a, x) = erfc(eta sqrt(a/2)) / 2 + exp(-a eta**2 / 2) / sqrt(2 pi a) (C0 + C1 / a +
#: ...)`` (DiDonato and Morris; ``|eta| < 0.04`` from the shape 1e6 on).
_C0 = (
    -1.0 / 3.0,
    1.0 / 12.0,
    -2.0 / 135.0,
    1.0 / 864.0,
    1.0 / 2835.0,
    -139.0 / 777600.0,
    3.9192631785224378e-5,
)
_C1 = (
    -1.0 / 540.0,
    -1.0 / 288.0,
    1.0 / 378.0,
    -9.9022633744855967e-4,
    2.0576131687242798e-4,
)


def _series(coefs: tuple[float, ...], x: Any) -> Any:
    total = jnp.zeros_like(x) + coefs[-1]
    for c in coefs[-2::-1]:
        total = total * x + c
    return total


#: Below this ``|eta|``, ``C0`` and ``C1`` from their series; above, from their closed forms.
_ETA_SERIES = 0.05


def _lambda_minus_one(eta: Any) -> Any:
    """``mu = lambda - 1`` with ``mu - log1p(mu) = eta**2 / 2`` and the sign of ``eta``."""
    mu = eta + eta * eta / 3.0 + eta**3 / 36.0 - eta**4 / 270.0
    mu = jnp.where(eta < -0.5, jnp.expm1(-0.5 * eta * eta - 1.0) - 1.0 + 1e-300, mu)
    mu = jnp.maximum(mu, -1.0 + 1e-300)
    half = 0.5 * eta * eta
    for _ in range(8):
        slope = jnp.where(mu == 0, 1.0, mu / (1.0 + mu))
        mu = jnp.maximum(mu - (mu - jnp.log1p(mu) - half) / slope, -1.0 + 1e-300)
    return jnp.where(eta == 0, 0.0, mu)


def _temme_c0(eta: Any) -> Any:
    near = jnp.abs(eta) < _ETA_SERIES
    safe = jnp.where(near, 1.0, eta)
    return jnp.where(near, _series(_C0, eta), 1.0 / _lambda_minus_one(safe) - 1.0 / safe)


def _temme_c1(eta: Any) -> Any:
    near = jnp.abs(eta) < _ETA_SERIES
    safe = jnp.where(near, 1.0, eta)
    mu = _lambda_minus_one(safe)
    closed = 1.0 / safe**3 - 1.0 / mu**3 - 1.0 / mu**2 - 1.0 / (12.0 * mu)
    return jnp.where(near, _series(_C1, eta), closed)


def _gamma_inverse_large(a: Any, p: Any, q: Any, upper: Any) -> Any:
    """The inverse for large shapes: Newton's method in ``t = eta sqrt(a)`` on the log of
    Temme's expansion of ``P`` (of ``Q`` where ``upper``), from ``t = ndtri(p)``; then
    ``x = a lambda`` with ``lambda - 1 - log(lambda) = eta**2 / 2``."""
    root = jnp.sqrt(a)
    log_target = jnp.log(jnp.where(upper, q, p))
    sign = jnp.where(upper, -1.0, 1.0)
    t = jnp.where(upper, -jss.ndtri(q), jss.ndtri(p))
    for _ in range(8):
        c = _temme_c0(t / root) + _temme_c1(t / root) / a
        log_tail = jss.log_ndtr(sign * t)  # log(Phi(t)) or log(Phi(-t))
        hazard = jnp.exp(-0.5 * t * t - 0.5 * np.log(2 * np.pi) - log_tail)
        log_val = log_tail + jnp.log1p(-sign * hazard * c / root)
        t = t - (log_val - log_target) / (sign * hazard)
    return a * (1.0 + _lambda_minus_one(t / root))


def _gamma_inverse_of(a: Any, y: Any, lower: bool) -> Any:
    """The inverse of ``gammainc(a, .)`` (``lower``) or ``gammaincc(a, .)`` at ``y``, with
    SciPy's values outside the open domain: NaN outside ``a >= 0``, ``0 <= y <= 1``; 0 and
    ``inf`` at ``y = 0`` and ``y = 1``; NaN for ``0 < y < 1`` where ``a`` is 0 or ``inf``."""
    a, y = jnp.broadcast_arrays(a, y)
    inside = (a > 0) & jnp.isfinite(a) & (y > 0) & (y < 1)
    sa, sy = jnp.where(inside, a, 1.0), jnp.where(inside, y, 0.5)
    p, q = (sy, 1.0 - sy) if lower else (1.0 - sy, sy)
    upper = sy > 0.5 if lower else sy < 0.5
    large = sa >= _ASYMPTOTIC_A
    small_a = jnp.where(large, 1.0, sa)
    x = jnp.where(
        large,
        _gamma_inverse_large(jnp.where(large, sa, _ASYMPTOTIC_A), p, q, upper),
        _gamma_inverse(small_a, p, q, upper),
    )
    bad = jnp.isnan(a) | jnp.isnan(y) | (a < 0) | (y < 0) | (y > 1)
    ends = jnp.where((y == 0) == lower, 0.0, jnp.inf)
    edge = jnp.where(bad | ((y > 0) & (y < 1)), jnp.nan, ends)
    return jnp.where(inside, x, edge)


def _gammaincinv(a: Any, y: Any) -> Any:
    return _gamma_inverse_of(a, y, True)


# ====================================================================== shape derivatives


#: Euler's constant.
_EULER = 0.5772156649015329


def _exp1(x: Any) -> Any:
    """``E1(x)`` for ``x > 0``: its series up to 1, Lentz's continued fraction beyond (with
    fixed term counts: ``jax.scipy.special.exp1`` of an array holding both ``1e-300`` and
    ``1e4`` does not return)."""
    small = x <= 1.0
    xs = jnp.where(small, x, 1.0)
    term, total = jnp.ones_like(x), jnp.zeros_like(x)
    for n in range(1, 41):
        term = term * -xs / n
        total = total + term / n
    series = -_EULER - jnp.log(xs) - total
    xl = jnp.where(small, 2.0, x)
    b = xl + 1.0
    c = jnp.full_like(x, 1.0 / _TINY)
    d = 1.0 / b
    h = d
    for i in range(1, 151):
        an = -float(i * i)
        b = b + 2.0
        d = 1.0 / (an * d + b)
        c = b + an / c
        h = h * d * c
    return jnp.where(small, series, jnp.exp(-xl) * h)


#: Below this shape, ``d/dk gammainc(k, x)`` is ``-E1(x)`` to double precision (XLA's
#: ``igamma_grad_a`` underflows to 0 there where ``x`` is large).
_TINY_K = 1e-14


def _gammainc_grad(k: Any, x: Any) -> Any:
    """``d/dk gammainc(k, x)``: NaN for NaN, ``k < 0``, ``x < 0`` and ``k = inf``; 0 at
    ``x = 0`` and ``x = inf``; ``-E1(x)`` for ``k < 1e-14`` (the one-sided one at 0)."""
    k, x = jnp.broadcast_arrays(k, x)
    usual = (x > 0) & jnp.isfinite(x) & (k >= 0)
    inside = usual & (k >= _TINY_K) & jnp.isfinite(k)
    value = lax.igamma_grad_a(jnp.where(inside, k, 1.0), jnp.where(inside, x, 1.0))
    tiny = usual & (k < _TINY_K)
    at_zero = -_exp1(jnp.where(tiny, x, 1.0))
    bad = jnp.isnan(k) | jnp.isnan(x) | (k < 0) | (x < 0) | jnp.isinf(k)
    edge = jnp.where(bad, jnp.nan, jnp.where(tiny, at_zero, 0.0))
    return jnp.where(inside, value, edge)


def _gammaincc_grad(k: Any, x: Any) -> Any:
    return -_gammainc_grad(k, x)


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    ssp.J0: in_float64(_j0),
    ssp.J1: in_float64(_j1),
    ssp.GammaIncInv: in_float64(_gammaincinv),
    sgrad.GammaIncGrad: in_float64(_gammainc_grad),
    sgrad.GammaIncCGrad: in_float64(_gammaincc_grad),
}
