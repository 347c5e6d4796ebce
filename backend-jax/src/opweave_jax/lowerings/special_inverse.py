"""Lowerings of the inverses of ``gammaincc`` (:mod:`opweave.scalar.special`) and of
``betainc`` (:mod:`opweave.scalar.probability`), which JAX lacks, and of ``gammaincc``
itself (summed directly at small shapes, where XLA's ``1 - P`` cancels).

They follow the ``py`` backend's kernels (:mod:`opweave_python.special_math_extra`,
:mod:`opweave_python.special_probability`) in float64:

* ``gammainccinv``: as ``gammaincinv`` (:mod:`opweave_jax.lowerings.special_more`), with
  ``log(Q)`` from its continued fraction for ``x >= a + 1`` (XLA's ``igammac`` is 0 where
  its factor ``x**a exp(-x) / gamma(a)`` underflows, below about ``1e-308``) and from its
  series for ``x < a + 1`` at shapes below ``1e-3``, up to the ``py`` kernel's 300 Newton
  steps;
* ``betaincinv``: Numerical Recipes' first guess, then Newton's method on
  ``log(betainc) = log(y)`` kept inside a bisection bracket, with ``betainc`` from its
  continued fraction (modified Lentz, as the ``py`` kernel); ``y > 1/2`` is solved as
  ``1 - betaincinv(b, a, 1 - y)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.special as jss
from jax import lax

from opweave.graph.basic import Apply
from opweave.scalar import math as sm
from opweave.scalar import probability as sprob
from opweave.scalar import special as ssp
from opweave_jax.lowerings import special_more as more
from opweave_jax.lowerings.scalar import in_output_dtype
from opweave_jax.lowerings.special import _regularized_gamma, in_float64

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]

#: XLA's ``gammaincc`` (with :mod:`~opweave_jax.lowerings.special`'s edges and large shapes).
_UPPER = _regularized_gamma(False)
_EPS = 2.220446049250313e-16
_TINY = 1e-300
#: The most terms a continued fraction is given.
_MAX_TERMS = 100_000


def _upper_fraction(a: Any, x: Any) -> Any:
    """``Q(a, x)`` by its continued fraction (Lentz's method, ``x >= a + 1``), less the
    factor ``x**a exp(-x) / gamma(a)``."""
    b = x + 1.0 - a
    d = jnp.where(b != 0, 1.0 / jnp.where(b != 0, b, 1.0), jnp.inf)

    def cond(carry: tuple[Any, ...]) -> Any:
        return ~jnp.all(carry[-1])

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, b, c, d, h, done = carry
        an = -i * (i - a)
        n_b = b + 2.0
        n_d = an * d + n_b
        n_d = jnp.where(jnp.abs(n_d) < _TINY, _TINY, n_d)
        n_c = n_b + an / c
        n_c = jnp.where(jnp.abs(n_c) < _TINY, _TINY, n_c)
        n_d = 1.0 / n_d
        delta = n_d * n_c
        n_h = h * delta
        stop = (jnp.abs(delta - 1.0) < _EPS) | (i >= _MAX_TERMS)
        new = (n_b, n_c, n_d, n_h)
        kept = tuple(jnp.where(done, o, n) for o, n in zip((b, c, d, h), new, strict=True))
        return (i + 1.0, *kept, done | stop)

    start = (jnp.ones((), x.dtype), b, jnp.full_like(x, 1.0 / _TINY), d, d)
    return lax.while_loop(cond, body, (*start, jnp.zeros(jnp.shape(x), bool)))[4]


#: Below this shape, ``Q(a, x)`` for ``x < a + 1`` is summed directly (XLA's ``1 - P``
#: loses the digits of ``Q``, about ``a E1(x)`` there).
_SMALL_A = 1e-3
#: Euler's constant and ``zeta(2..6)``: the series of ``log(gamma(1 + a))`` for small ``a``.
_EULER = 0.5772156649015329
_ZETAS = (
    1.6449340668482264,
    1.2020569031595942,
    1.0823232337111382,
    1.0369277551433699,
    1.0173430619844491,
)


def _upper_small_a(a: Any, x: Any) -> Any:
    """``Q(a, x)`` for ``0 < a < 1e-3`` and ``x < a + 1``: ``1 - x**a / gamma(a + 1)`` (by
    ``expm1``) less ``x**a / gamma(a) * sum((-x)**n / (n! (a + n)), n >= 1)``."""
    total = jnp.zeros_like(a)
    for n in range(len(_ZETAS) + 1, 1, -1):
        total = total * -a + _ZETAS[n - 2] / n
    log_xa = a * jnp.log(x)
    head = -jnp.expm1(log_xa - a * (-_EULER + a * total))
    term, series = jnp.ones_like(x), jnp.zeros_like(x)
    done = jnp.zeros(jnp.shape(x), bool)
    for n in range(1, 40):
        term = term * -x / n
        piece = term / (a + n)
        series = jnp.where(done, series, series + piece)
        done = done | (jnp.abs(piece) < jnp.abs(series) * _EPS)
    return head - jnp.exp(log_xa - jss.gammaln(a)) * series


def _gammaincc(a: Any, x: Any) -> Any:
    """``gammaincc``: as ``gammainc``'s lowering (:mod:`opweave_jax.lowerings.special`),
    but summed directly (:func:`_upper_small_a`) for shapes below ``1e-3`` and ``x < a + 1``,
    where XLA's ``1 - P`` cancels: ``Q(1e-300, 0.5)`` is ``5.6e-301``, XLA gives
    ``-2.4e-14``."""
    a, x = jnp.broadcast_arrays(a, x)
    near = (a > 0) & (a < _SMALL_A) & (x > 0) & (x < a + 1.0)
    small = _upper_small_a(jnp.where(near, a, 1e-4), jnp.where(near, x, 0.5))
    return jnp.where(near, small, _UPPER(a, x))


def _log_upper(a: Any, x: Any) -> Any:
    """``log(Q(a, x))``, finite where ``Q`` underflows: from the continued fraction for
    ``x >= a + 1``, from its series below for ``a < 1e-3``, from XLA's ``igammac``
    elsewhere."""
    near = (x < a + 1.0) & (a < _SMALL_A)
    q_small = _upper_small_a(jnp.where(near, a, 1e-4), jnp.where(near, x, 0.5))
    far = x >= a + 1.0
    fa, fx = jnp.where(far, a, 1.0), jnp.where(far, x, 3.0)
    h = _upper_fraction(fa, fx)
    log_cf = jnp.where(h > 0, jnp.log(jnp.where(h > 0, h, 1.0)), -jnp.inf)
    log_cf = log_cf + fa * jnp.log(fx) - fx - jss.gammaln(fa)
    value = jnp.where(near, q_small, jss.gammaincc(a, x))
    direct = jnp.where(value > 0, jnp.log(jnp.where(value > 0, value, 1.0)), -jnp.inf)
    return jnp.where(far, log_cf, direct)


def _log_lower(a: Any, x: Any) -> Any:
    """``log(P(a, x))``: from its series below ``x = 0.7 a`` (as ``gammaincinv``'s
    lowering), from XLA's ``igamma`` above."""
    series = x < more._SERIES_RATIO * a
    value = jss.gammainc(a, x)
    direct = jnp.where(value > 0, jnp.log(jnp.where(value > 0, value, 1.0)), -jnp.inf)
    return jnp.where(series, more._log_lower_series(a, jnp.where(series, x, 0.5 * a)), direct)


def _log_regularized(a: Any, x: Any, lower: Any) -> Any:
    return jnp.where(lower, _log_lower(a, x), _log_upper(a, x))


#: The most Newton steps (the ``py`` kernel's; from the start ``1e-300`` of tiny shapes,
#: ``log(Q)`` is flat and the steps grow ``x`` slowly).
_NEWTON_STEPS = 300


def _gamma_inverse(a: Any, p: Any, q: Any, upper: Any) -> Any:
    """``x`` with ``gammainc(a, x) = p`` (``q = 1 - p``), by Newton's method on
    ``log(P(a, x)) = log(p)``, or on ``log(Q(a, x)) = log(q)`` where ``upper`` (the ``py``
    kernel's steps, each frozen once converged; ``log(Q)`` from its continued fraction)."""
    return more._gamma_inverse(a, p, q, upper, _log_regularized, _NEWTON_STEPS, until_done=True)


#: Above this shape the inverse is ``a`` itself (the ``py`` kernel's rule).
_HUGE_A = 1e40


def _gammainccinv(a: Any, y: Any) -> Any:
    """The inverse of ``gammaincc(a, .)``, with the ``py`` kernel's values outside the open
    domain (NaN outside ``a >= 0``, ``0 <= y <= 1``; ``inf`` at ``y = 0``, 0 at ``y = 1``;
    NaN for ``0 < y < 1`` where ``a`` is 0 or ``inf``)."""
    a, y = jnp.broadcast_arrays(a, y)
    inside = (a > 0) & jnp.isfinite(a) & (y > 0) & (y < 1)
    sa, sy = jnp.where(inside, a, 1.0), jnp.where(inside, y, 0.5)
    p, q = 1.0 - sy, sy
    upper = sy < 0.5
    large = sa >= more._ASYMPTOTIC_A
    x_large = more._gamma_inverse_large(jnp.where(large, sa, more._ASYMPTOTIC_A), p, q, upper)
    x = jnp.where(large, x_large, _gamma_inverse(jnp.where(large, 1.0, sa), p, q, upper))
    x = jnp.where(sa > _HUGE_A, sa, x)
    bad = jnp.isnan(a) | jnp.isnan(y) | (a < 0) | (y < 0) | (y > 1)
    ends = jnp.where(y == 0, jnp.inf, 0.0)
    edge = jnp.where(bad | ((y > 0) & (y < 1)), jnp.nan, ends)
    return jnp.where(inside, x, edge)


# ====================================================================== inverse beta


def _beta_fraction(a: Any, b: Any, x: Any) -> Any:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0

    def tidy(t: Any) -> Any:
        return jnp.where(jnp.abs(t) > _TINY, t, _TINY)

    d = 1.0 / tidy(1.0 - qab * x / qap)

    def cond(carry: tuple[Any, ...]) -> Any:
        return ~jnp.all(carry[-1])

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        m, c, d, h, done = carry
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        n_d = 1.0 / tidy(1.0 + aa * d)
        n_c = tidy(1.0 + aa / c)
        n_h = h * n_d * n_c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        n_d = 1.0 / tidy(1.0 + aa * n_d)
        n_c = tidy(1.0 + aa / n_c)
        delta = n_d * n_c
        n_h = n_h * delta
        stop = (jnp.abs(delta - 1.0) < _EPS) | (m >= _MAX_TERMS)
        new = (n_c, n_d, n_h)
        kept = tuple(jnp.where(done, o, n) for o, n in zip((c, d, h), new, strict=True))
        return (m + 1.0, *kept, done | stop)

    start = (jnp.ones((), x.dtype), jnp.ones_like(x), d, d, jnp.zeros(jnp.shape(x), bool))
    return lax.while_loop(cond, body, start)[3]


def _log_beta(a: Any, b: Any) -> Any:
    """``log(B(a, b))`` as the ``py`` kernel forms it (XLA's ``betaln`` is off by 1e-8)."""
    return jss.gammaln(a) + jss.gammaln(b) - jss.gammaln(a + b)


def _betainc(a: Any, b: Any, x: Any) -> Any:
    """``I_x(a, b)`` for finite ``a, b > 0`` and ``0 < x < 1`` (the ``py`` kernel's)."""
    log_front = a * jnp.log(x) + b * jnp.log1p(-x) - _log_beta(a, b)
    lower = x < (a + 1.0) / (a + b + 2.0)
    fa, fb = jnp.where(lower, a, b), jnp.where(lower, b, a)
    fx = jnp.where(lower, x, 1.0 - x)
    part = jnp.exp(log_front) * _beta_fraction(fa, fb, fx) / fa
    return jnp.where(lower, part, 1.0 - part)


def _beta_guess(a: Any, b: Any, y: Any) -> Any:
    """Numerical Recipes' first guess of ``x`` with ``betainc(a, b, x) = y``."""
    pp = jnp.where(y < 0.5, y, 1.0 - y)
    t = jnp.sqrt(-2.0 * jnp.log(pp))
    z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
    z = jnp.where(y < 0.5, -z, z)
    al = (z * z - 3.0) / 6.0
    h = 2.0 / (1.0 / (2.0 * a - 1.0) + 1.0 / (2.0 * b - 1.0))
    w = z * jnp.sqrt(al + h) / h - (1.0 / (2.0 * b - 1.0) - 1.0 / (2.0 * a - 1.0)) * (
        al + 5.0 / 6.0 - 2.0 / (3.0 * h)
    )
    big = a / (a + b * jnp.exp(jnp.minimum(2.0 * w, 700.0)))
    tt = jnp.exp(a * _log(a / (a + b))) / a
    u = jnp.exp(b * _log(b / (a + b))) / b
    ww = tt + u
    small = jnp.where(
        y < tt / ww, jnp.power(a * ww * y, 1.0 / a), 1.0 - jnp.power(b * ww * (1.0 - y), 1.0 / b)
    )
    return jnp.where((a >= 1.0) & (b >= 1.0), big, small)


def _log(x: Any) -> Any:
    """``log`` of ``x >= 0``, ``-inf`` at 0."""
    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), -jnp.inf)


def _bisect(lo: Any, hi: Any) -> Any:
    """The middle of ``[lo, hi]``: geometric where the bracket spans orders of magnitude."""
    geometric = jnp.sqrt(jnp.maximum(lo, 0.0)) * jnp.sqrt(hi)
    middle = jnp.where((lo == 0.0) & (hi > 1e-300), hi * 1e-3, 0.5 * (lo + hi))
    return jnp.where((lo > 0.0) & (hi > 4.0 * lo), geometric, middle)


#: The most steps of the inverse (the ``py`` kernel's).
_BETA_STEPS = 400


def _beta_solve(a: Any, b: Any, y: Any) -> Any:
    """``x`` with ``betainc(a, b, x) = y`` for ``0 < y <= 1/2``: Newton's method on
    ``log(betainc)``, kept inside a bisection bracket, each lane frozen once it stops."""
    log_beta = _log_beta(a, b)
    log_y = jnp.log(y)
    x = jnp.minimum(jnp.maximum(_beta_guess(a, b, y), 1e-300), 1.0 - 1e-16)
    zero = jnp.zeros_like(x)

    def cond(carry: tuple[Any, ...]) -> Any:
        return (carry[0] < _BETA_STEPS) & ~jnp.all(carry[-1])

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, x, lo, hi, done = carry
        value = _betainc(a, b, jnp.where(done, 0.5, x))
        n_hi = jnp.where(value > y, x, hi)
        n_lo = jnp.where(value > y, lo, x)
        empty = value <= 0.0
        log_value = _log(value)
        log_pdf = (a - 1.0) * _log(x) + (b - 1.0) * jnp.log1p(-x) - log_beta
        step = (log_value - log_y) * jnp.exp(jnp.minimum(log_value - log_pdf, 709.0))
        step = jnp.where(log_value - log_pdf > 709.0, jnp.inf * jnp.sign(step), step)
        tiny = ~empty & (jnp.abs(step) <= 2.0 * _EPS * x)
        new = x - step
        outside = ~((n_lo < new) & (new < n_hi))
        new = jnp.where(empty | outside, _bisect(n_lo, n_hi), new)
        narrow = ~empty & ~tiny & (n_hi - n_lo <= 2.0 * _EPS * n_hi)
        new = jnp.where(tiny, x - step, new)
        keep = jnp.where(done, x, new)
        return (
            i + 1,
            keep,
            jnp.where(done, lo, n_lo),
            jnp.where(done, hi, n_hi),
            done | tiny | narrow,
        )

    start = (jnp.zeros((), "int32"), x, zero, zero + 1.0, jnp.zeros(jnp.shape(x), bool))
    return lax.while_loop(cond, body, start)[1]


def _betaincinv(a: Any, b: Any, y: Any) -> Any:
    """The inverse of ``betainc(a, b, .)``, with the ``py`` kernel's edges: NaN outside
    ``a, b > 0``, ``0 <= y <= 1``; ``y`` at ``y = 0`` and ``y = 1``; 1 where only ``a`` is
    infinite, NaN where ``b`` is."""
    a, b, y = jnp.broadcast_arrays(a, b, y)
    inside = jnp.isfinite(a) & jnp.isfinite(b) & (a > 0) & (b > 0) & (y > 0) & (y < 1)
    flip = y > 0.5
    sa = jnp.where(inside, jnp.where(flip, b, a), 1.0)
    sb = jnp.where(inside, jnp.where(flip, a, b), 1.0)
    sy = jnp.where(inside, jnp.where(flip, 1.0 - y, y), 0.5)
    x = _beta_solve(sa, sb, sy)
    x = jnp.where(flip, 1.0 - x, x)
    bad = jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(y) | (a <= 0) | (b <= 0) | (y < 0) | (y > 1)
    infinite = jnp.where(jnp.isinf(a) & ~jnp.isinf(b), 1.0, jnp.nan)
    edge = jnp.where((y == 0) | (y == 1), y, infinite)
    return jnp.where(inside, x, jnp.where(bad, jnp.nan, edge))


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    sm.GammaIncC: in_output_dtype(_gammaincc),
    ssp.GammaIncCInv: in_float64(_gammainccinv),
    sprob.BetaIncInv: in_float64(_betaincinv),
}
