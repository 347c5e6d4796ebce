"""Lowerings of the Bessel functions of real order: ``iv``, ``ive``
(:mod:`opweave.scalar.special`), ``jv`` and ``kve`` (:mod:`opweave.scalar.bessel`).

JAX has ``i0``/``i1`` (and their scaled forms) and integer-order ``bessel_jn`` only. These
follow the ``py`` backend's kernels (:mod:`opweave_python.special_math_extra`,
:mod:`opweave_python.special_bessel`) in float64, elementwise, with the same stopping rules
(each ``lax.while_loop`` runs until every element has stopped, stopped elements frozen):

* ``iv``/``ive``: the power series (scaled by ``exp(-|x|)`` for ``ive``; for integer
  orders up to 170 its first term from ``pow`` and the factorial), and the asymptotic
  expansion in ``1/x`` where ``x > max(40, v**2)``;
* ``jv``: the power series where it does not cancel (``x**2 / 4 <= (v + 1) / 2`` or ``x <=
  2``), Hankel's expansion for ``x >= max(25, v**2 / 2)``, Steed's method (the continued
  fractions CF1 and CF2, which give ``Y_v`` too) elsewhere; ``J_{-v} = cos(v pi) J_v -
  sin(v pi) Y_v``; orders 0 and ``+-1`` are the ``j0``/``j1`` lowerings;
* ``kve``: Temme's series below ``x = 2`` and Steed's continued fraction CF2 above, for
  the order ``mu`` in ``[-1/2, 1/2]``, then the forward recurrence up to ``|v|``.

Edges are the ``py`` kernels' (SciPy's). XLA on the CPU flushes subnormal numbers to zero:
values (or terms of a series) below 2.2e-308 are lost.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

from opweave.graph.basic import Apply
from opweave.scalar import bessel as sbes
from opweave.scalar import special as ssp
from opweave_jax.lowerings import special_more
from opweave_jax.lowerings.special import in_float64
from opweave_jax.lowerings.special_loops import FACTORIALS, masked_loop

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]

_EPS = 2.220446049250313e-16
_LOG2 = math.log(2.0)


def _is_int(v: Any) -> Any:
    return jnp.isfinite(v) & (v == jnp.floor(v))


def _gamma_sign(z: Any) -> Any:
    """The sign of ``gamma(z)`` (``-1`` where ``z < 0`` and ``floor(z)`` is odd)."""
    return jnp.where((z < 0) & (jnp.floor(z) % 2 == 1), -1.0, 1.0)


# ====================================================================== iv, ive


def _iv_series(v: Any, x: Any, scale: Any) -> Any:
    """``exp(-scale) * sum((x/2)**(2k+v) / (k! gamma(v+k+1)))`` for ``x > 0``."""
    half = 0.5 * x
    log_half = jnp.where(half > 0, jnp.log(jnp.where(half > 0, half, 1.0)), jnp.log(x) - _LOG2)
    log_t0 = v * log_half - jss.gammaln(v + 1.0) - scale
    direct = (v >= 0) & (v <= 170.0) & (v == jnp.floor(v)) & (half > 0)
    direct = direct & (jnp.abs(v * log_half) < 700.0) & (scale < 700.0) & (log_t0 > -700.0)
    n = jnp.clip(jnp.where(direct, v, 0.0), 0, 170).astype(np.int32)
    exact = jnp.power(half, v) / jnp.asarray(FACTORIALS)[n] * jnp.exp(-scale)
    first = jnp.where(direct, exact, _gamma_sign(v + 1.0) * jnp.exp(jnp.minimum(log_t0, 709.0)))
    q = 0.25 * x * x

    def cond(carry: tuple[Any, ...]) -> Any:
        return ~jnp.all(carry[3])

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        k, term, total, done = carry
        k = k + 1.0
        new_term = term * (q / (k * (v + k)))
        new_total = total + new_term
        stop = (jnp.abs(new_term) <= _EPS * jnp.abs(new_total) * 0.5) & (k > v)
        stop = stop | ~jnp.isfinite(new_total) | (k > 100000)
        return (
            k,
            jnp.where(done, term, new_term),
            jnp.where(done, total, new_total),
            done | stop,
        )

    start = (jnp.zeros((), x.dtype), first, first, jnp.zeros(jnp.shape(x), bool))
    total = lax.while_loop(cond, body, start)[2]
    return jnp.where(log_t0 > 709.0, jnp.inf, total)


def _iv_asymptotic_scaled(v: Any, x: Any) -> Any:
    """``exp(-x) iv(v, x)`` by the asymptotic expansion (``x`` large, ``x > v**2``)."""
    mu = 4.0 * v * v

    def step(k: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        term, total, done = carry
        kf = k.astype(x.dtype)
        new = -term * (mu - (2 * kf - 1) ** 2) / (kf * 8.0 * x)
        done = done | ((jnp.abs(new) >= jnp.abs(term)) & (k > 2))
        term = jnp.where(done, term, new)
        total = jnp.where(done, total, total + new)
        return term, total, done | (jnp.abs(term) <= _EPS * jnp.abs(total) * 0.5)

    one = jnp.ones_like(x)
    _, total, _ = lax.fori_loop(1, 200, step, (one, one, jnp.zeros(jnp.shape(x), bool)))
    return total / jnp.sqrt(2.0 * np.pi * x)


def _iv_of(scaled: bool) -> Fn:
    """``iv`` or ``ive`` (``scaled``)."""

    def run(v: Any, x: Any) -> Any:
        v, x = jnp.broadcast_arrays(v, x)
        odd = _is_int(v) & (jnp.abs(v) % 2 == 1)
        sign = jnp.where((x < 0) & odd, -1.0, 1.0)
        order = jnp.where(_is_int(v), jnp.abs(v), v)
        ax = jnp.abs(x)
        usual = jnp.isfinite(order) & jnp.isfinite(ax) & (ax > 0)
        sv = jnp.where(usual, order, 0.0)
        sx = jnp.where(usual, ax, 1.0)
        asymptotic = (sx > 40.0) & (sx > sv * sv)
        ra = _iv_asymptotic_scaled(jnp.where(asymptotic, sv, 0.0), jnp.where(asymptotic, sx, 50.0))
        if not scaled:
            ra = jnp.where(sx > 709.0, jnp.where(ra < 0, -jnp.inf, jnp.inf), ra * jnp.exp(sx))
        rs = _iv_series(
            jnp.where(asymptotic, 0.0, sv),
            jnp.where(asymptotic, 1.0, sx),
            jnp.where(asymptotic, 1.0, sx) if scaled else 0.0,
        )
        value = sign * jnp.where(asymptotic, ra, rs)
        # x == 0 (v finite): 1 for v = 0, 0 for v > 0, inf (iv) or NaN (ive) for v < 0.
        at_zero = jnp.where(
            order == 0, 1.0, jnp.where(order > 0, 0.0, np.nan if scaled else np.inf)
        )
        value = jnp.where((ax == 0) & jnp.isfinite(order), at_zero, value)
        value = jnp.where((x < 0) & ~_is_int(v), jnp.nan, value)
        value = jnp.where(jnp.isinf(v), np.nan if scaled else 0.0, value)
        return jnp.where(jnp.isnan(v) | jnp.isnan(x) | jnp.isinf(x), jnp.nan, value)

    return run


# ====================================================================== kve

# 1/Gamma(z) = sum_k C[k] z**k (Abramowitz and Stegun 6.1.34): the even coefficients.
_RGAMMA_EVEN = (
    0.5772156649015329,
    -0.0420026350340952,
    -0.0421977345555443,
    0.0072189432466630,
    -0.0002152416741149,
    -0.0000201348547807,
    0.0000011330272320,
    0.0000000061160950,
    -0.0000000011812746,
    0.0000000000077823,
    0.0000000000005100,
    -0.0000000000000054,
    0.0000000000000001,
)


def _temme_gammas(mu: Any) -> tuple[Any, Any, Any, Any]:
    """``(gam1, gam2, 1/Gamma(1 + mu), 1/Gamma(1 - mu))`` for ``|mu| <= 1/2`` (Temme)."""
    gampl = 1.0 / jss.gamma(1.0 + mu)
    gammi = 1.0 / jss.gamma(1.0 - mu)
    mu2 = mu * mu
    series = jnp.zeros_like(mu)
    power = jnp.ones_like(mu)
    for c in _RGAMMA_EVEN:
        series = series - c * power
        power = power * mu2
    wide = jnp.abs(mu) > 0.1
    gam1 = jnp.where(wide, (gammi - gampl) / (2.0 * jnp.where(wide, mu, 1.0)), series)
    return gam1, 0.5 * (gammi + gampl), gampl, gammi


def _k_temme(mu: Any, x: Any) -> tuple[Any, Any]:
    """``(K_mu(x), K_{mu+1}(x))`` for ``|mu| <= 1/2`` and ``0 < x < 2`` (Temme's series)."""
    x2 = 0.5 * x
    pimu = np.pi * mu
    tiny = jnp.abs(pimu) < 1e-16
    fact = jnp.where(tiny, 1.0, pimu / jnp.sin(jnp.where(tiny, 1.0, pimu)))
    d = _LOG2 - jnp.log(x)
    e = mu * d
    tiny_e = jnp.abs(e) < 1e-16
    fact2 = jnp.where(tiny_e, 1.0, jnp.sinh(e) / jnp.where(tiny_e, 1.0, e))
    gam1, gam2, gampl, gammi = _temme_gammas(mu)
    ff = fact * (gam1 * jnp.cosh(e) + gam2 * fact2 * d)
    ee = jnp.exp(e)
    p = 0.5 * ee / gampl
    q = 0.5 / (ee * gammi)
    dd = x2 * x2
    mu2 = mu * mu

    def cond(carry: tuple[Any, ...]) -> Any:
        return ~jnp.all(carry[-1])

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, ff, c, p, q, total, total1, done = carry
        i = i + 1.0
        n_ff = (i * ff + p + q) / (i * i - mu2)
        n_c = c * (dd / i)
        n_p = p / (i - mu)
        n_q = q / (i + mu)
        delta = n_c * n_ff
        n_total = total + delta
        n_total1 = total1 + n_c * (n_p - i * n_ff)
        keep = ~done
        stop = (jnp.abs(delta) < jnp.abs(n_total) * 1e-16) | (i > 1e6)
        return (
            i,
            jnp.where(keep, n_ff, ff),
            jnp.where(keep, n_c, c),
            jnp.where(keep, n_p, p),
            jnp.where(keep, n_q, q),
            jnp.where(keep, n_total, total),
            jnp.where(keep, n_total1, total1),
            done | stop,
        )

    start = (jnp.zeros((), x.dtype), ff, jnp.ones_like(x), p, q, ff, p, jnp.zeros(x.shape, bool))
    out = lax.while_loop(cond, body, start)
    return out[5], out[6] * 2.0 / x


def _k_steed_scaled(mu: Any, x: Any) -> tuple[Any, Any]:
    """``exp(x) (K_mu(x), K_{mu+1}(x))`` for ``|mu| <= 1/2`` and ``x >= 2`` (CF2)."""
    b = 2.0 * (1.0 + x)
    d = 1.0 / b
    a1 = 0.25 - mu * mu
    zero = jnp.zeros_like(x)

    def cond(carry: tuple[Any, ...]) -> Any:
        return ~jnp.all(carry[-1])

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, a, c, q1, q2, q, b, d, delh, h, s, done = carry
        n_a = a - 2 * (i - 1.0)
        n_c = -n_a * c / i
        qnew = (q1 - b * q2) / n_a
        n_q = q + n_c * qnew
        n_b = b + 2.0
        n_d = 1.0 / (n_b + n_a * d)
        n_delh = (n_b * n_d - 1.0) * delh
        n_h = h + n_delh
        dels = n_q * n_delh
        n_s = s + dels
        stop = (jnp.abs(dels / n_s) < 1e-16) | (i > 1e6)
        new = (n_a, n_c, q2, qnew, n_q, n_b, n_d, n_delh, n_h, n_s)
        old = (a, c, q1, q2, q, b, d, delh, h, s)
        kept = tuple(jnp.where(done, o, n) for o, n in zip(old, new, strict=True))
        return (i + 1.0, *kept, done | stop)

    start = (
        jnp.full((), 2.0, x.dtype),
        -a1,
        a1,
        zero,
        jnp.ones_like(x),
        a1,
        b,
        d,
        d,
        d,
        1.0 + a1 * d,
        jnp.zeros(x.shape, bool),
    )
    out = lax.while_loop(cond, body, start)
    h = a1 * out[9]
    s = out[10]
    kmu = jnp.sqrt(np.pi / (2.0 * x)) / s
    return kmu, kmu * (mu + x + 0.5 - h) / x


#: The longest recurrence over the order that is run (longer ones give NaN).
_MAX_COUNT = 10_000_000


def _kve(v: Any, x: Any) -> Any:
    """``exp(x) K_v(x)`` of real order ``v``."""
    v, x = jnp.broadcast_arrays(v, x)
    av = jnp.abs(v)
    usual = (x > 0) & jnp.isfinite(x) & jnp.isfinite(av) & (jnp.floor(av + 0.5) <= _MAX_COUNT)
    sv = jnp.where(usual, av, 0.0)
    sx = jnp.where(usual, x, 1.0)
    nl = jnp.floor(sv + 0.5)
    mu = sv - nl
    small = sx < 2.0
    tk, tk1 = _k_temme(mu, jnp.where(small, sx, 1.0))
    scale = jnp.exp(sx)
    ck, ck1 = _k_steed_scaled(mu, jnp.where(small, 2.0, sx))
    kmu = jnp.where(small, tk * scale, ck)
    k1 = jnp.where(small, tk1 * scale, ck1)
    xi2 = 2.0 / sx

    def cond(carry: tuple[Any, ...]) -> Any:
        i, kmu, _ = carry
        return jnp.any((i <= nl) & jnp.isfinite(kmu))

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, kmu, k1 = carry
        on = (i <= nl) & jnp.isfinite(kmu)
        n_k1 = (mu + i) * xi2 * k1 + kmu
        return i + 1.0, jnp.where(on, k1, kmu), jnp.where(on, n_k1, k1)

    _, kmu, _ = lax.while_loop(cond, body, (jnp.ones((), x.dtype), kmu, k1))
    value = jnp.where(jnp.isinf(kmu), jnp.inf, kmu)
    value = jnp.where(usual, value, jnp.nan)
    value = jnp.where(jnp.isinf(x) & (x > 0) & jnp.isfinite(v), 0.0, value)
    return jnp.where(x == 0, jnp.inf, value)


# ====================================================================== jv

#: The relative precision the ``py`` kernel's J series and fractions stop at.
_J_EPS = 1e-16
_FPMIN = 1e-300
_BIG = 1e250
_MAXIT = 1_000_000


def _j_series(v: Any, x: Any) -> Any:
    """``J_v(x)`` by its power series (``x > 0``, ``v`` not a negative integer)."""
    lg = jss.gammaln(v + 1.0)
    sign = jnp.where((v + 1.0 < 0) & (jnp.floor(v + 1.0) % 2 == 1), -1.0, 1.0)
    log_power = v * jnp.log(x)
    direct = (v + 1.0 > 0) & (v + 1.0 <= 170.0) & (jnp.abs(log_power) < 700.0)
    direct = direct & (jnp.abs(log_power - v * _LOG2) < 700.0)
    exact = jnp.power(x, v) * jnp.power(0.5, v) / jss.gamma(jnp.where(direct, v + 1.0, 1.0))
    log_t0 = v * (jnp.log(x) - _LOG2) - lg
    via_log = jnp.where(log_t0 > -745.2, sign * jnp.exp(jnp.minimum(log_t0, 709.0)), 0.0)
    first = jnp.where(direct, exact, via_log)
    q = -0.25 * x * x

    def body(k: Any, term: Any, total: Any) -> tuple[tuple[Any, Any], Any]:
        term = term * (q / (k * (v + k)))
        total = total + term
        return (term, total), (jnp.abs(term) <= _J_EPS * jnp.abs(total)) & (k > -v)

    done = first == 0
    _, total = masked_loop(lambda k: k < 9999, body, (jnp.ones((), x.dtype), first, first, done))
    overflow = ~direct & (log_t0 > 709.78)
    return jnp.where(overflow, sign * jnp.inf, jnp.where(first == 0, 0.0, total))


def _hankel(v: Any, x: Any) -> tuple[Any, Any]:
    """``(J_v(x), Y_v(x))`` by Hankel's asymptotic expansion (``x`` large)."""
    mu = 4.0 * v * v

    def step(k: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        term, p, q, done = carry
        kf = k.astype(x.dtype)
        odd2 = (2 * kf - 1) ** 2
        new = term * (mu - odd2) / (kf * 8.0 * x)
        done = done | ((jnp.abs(new) >= jnp.abs(term)) & (odd2 > mu))
        signed = jnp.where((k // 2) % 2 == 0, new, -new)
        odd = k % 2 == 1
        q = jnp.where(~done & odd, q + signed, q)
        p = jnp.where(~done & ~odd, p + signed, p)
        term = jnp.where(done, term, new)
        small = jnp.abs(term) < _J_EPS * 0.25 * jnp.maximum(jnp.abs(p), jnp.abs(q))
        return term, p, q, done | small

    one, zero = jnp.ones_like(x), jnp.zeros_like(x)
    _, p, q, _ = lax.fori_loop(1, 400, step, (one, one, zero, jnp.zeros(x.shape, bool)))
    phase = (0.5 * v + 0.25) * np.pi
    c = jnp.cos(x) * jnp.cos(phase) + jnp.sin(x) * jnp.sin(phase)
    s = jnp.sin(x) * jnp.cos(phase) - jnp.cos(x) * jnp.sin(phase)
    scaled = np.pi * x
    amp = jnp.where(jnp.isinf(scaled), np.sqrt(2.0 / np.pi) / jnp.sqrt(x), jnp.sqrt(2.0 / scaled))
    return amp * (p * c - q * s), amp * (p * s + q * c)


def _steed(v: Any, x: Any) -> tuple[Any, Any]:
    """``(J_v(x), Y_v(x))`` for ``v >= 0`` and ``x >= 2`` (Steed's method: CF1 for
    ``J'_v / J_v``, CF2 for ``p + iq`` at the order ``mu = v - nl`` near ``x``)."""
    nl = jnp.maximum(0.0, jnp.trunc(v - x + 1.5))
    mu = v - nl
    xi = 1.0 / x
    xi2 = 2.0 * xi
    w = xi2 / np.pi
    h0 = jnp.maximum(v * xi, _FPMIN)
    no = jnp.zeros(x.shape, bool)
    one = jnp.ones((), x.dtype)

    def cf1(_: Any, b: Any, d: Any, c: Any, h: Any, isign: Any) -> tuple[tuple[Any, ...], Any]:
        b = b + xi2
        d = b - d
        d = jnp.where(jnp.abs(d) < _FPMIN, _FPMIN, d)
        c = b - 1.0 / c
        c = jnp.where(jnp.abs(c) < _FPMIN, _FPMIN, c)
        d = 1.0 / d
        delta = c * d
        h = h * delta
        isign = jnp.where(d < 0, -isign, isign)
        return (b, d, c, h, isign), jnp.abs(delta - 1.0) < _J_EPS

    start: tuple[Any, ...] = (one, xi2 * v, jnp.zeros_like(x), h0, h0, jnp.ones_like(x), no)
    _, _, _, h, isign = masked_loop(lambda i: i < _MAXIT, cf1, start)
    rjl = isign * 1e-30

    def down(i: Any, rjl: Any, rjpl: Any, rjl1: Any, fact: Any) -> tuple[tuple[Any, ...], Any]:
        rjtemp = fact * rjl + rjpl
        fact = fact - xi
        rjpl = fact * rjtemp - rjl
        rjl = rjtemp
        big = jnp.abs(rjl) > _BIG
        rjl = jnp.where(big, rjl / _BIG, rjl)
        rjpl = jnp.where(big, rjpl / _BIG, rjpl)
        rjl1 = jnp.where(big, rjl1 / _BIG, rjl1)
        return (rjl, rjpl, rjl1, fact), i >= nl

    start = (one, rjl, h * rjl, rjl, v * xi, nl < 1)
    rjl, rjpl, rjl1, _ = masked_loop(lambda i: True, down, start)
    rjl = jnp.where(rjl == 0, _J_EPS, rjl)
    f = rjpl / rjl
    # CF2: p + iq
    a = 0.25 - mu * mu
    p, q = -0.5 * xi, jnp.ones_like(x)
    br, bi = 2.0 * x, jnp.full_like(x, 2.0)
    fact = a * xi / (p * p + q * q)
    cr, ci = br + q * fact, bi + p * fact
    den = br * br + bi * bi
    dr, di = br / den, -bi / den
    dlr, dli = cr * dr - ci * di, cr * di + ci * dr
    p, q = p * dlr - q * dli, p * dli + q * dlr

    def cf2(i: Any, *vals: Any) -> tuple[tuple[Any, ...], Any]:
        a, bi, dr, di, cr, ci, p, q = vals
        a = a + 2 * (i - 1.0)
        bi = bi + 2.0
        dr, di = a * dr + br, a * di + bi
        dr = jnp.where(jnp.abs(dr) + jnp.abs(di) < _FPMIN, _FPMIN, dr)
        fact = a / (cr * cr + ci * ci)
        cr, ci = br + cr * fact, bi - ci * fact
        cr = jnp.where(jnp.abs(cr) + jnp.abs(ci) < _FPMIN, _FPMIN, cr)
        den = dr * dr + di * di
        dr, di = dr / den, -di / den
        dlr, dli = cr * dr - ci * di, cr * di + ci * dr
        p, q = p * dlr - q * dli, p * dli + q * dlr
        return (a, bi, dr, di, cr, ci, p, q), jnp.abs(dlr - 1.0) + jnp.abs(dli) < _J_EPS

    start = (jnp.full((), 2.0, x.dtype), a, bi, dr, di, cr, ci, p, q, no)
    p, q = masked_loop(lambda i: i < _MAXIT, cf2, start)[-2:]
    gam = (p - f) / q
    rjmu = jnp.sqrt(w / ((p - f) * gam + q))
    rjmu = jnp.where(jnp.signbit(rjl), -rjmu, rjmu)
    rymu = rjmu * gam
    rymup = rymu * (p + q / gam)
    ry1 = mu * xi * rymu - rymup
    rj = rjl1 * (rjmu / rjl)

    def up(i: Any, rymu: Any, ry1: Any) -> tuple[tuple[Any, Any], Any]:
        rymu, ry1 = ry1, (mu + i) * xi2 * ry1 - rymu
        return (rymu, ry1), (i >= nl) | jnp.isinf(rymu)

    rymu, _ = masked_loop(lambda i: True, up, (one, rymu, ry1, nl < 1))
    return rj, rymu


def _jy(v: Any, x: Any) -> tuple[Any, Any]:
    """``(J_v(x), Y_v(x))`` for ``v >= 0`` and ``x >= 2``."""
    far = x >= jnp.maximum(25.0, 0.5 * v * v)
    hj, hy = _hankel(jnp.where(far, v, 0.0), jnp.where(far, x, 30.0))
    sj, sy = _steed(jnp.where(far, 0.5, v), jnp.where(far, 2.5, x))
    return jnp.where(far, hj, sj), jnp.where(far, hy, sy)


def _jv(v: Any, x: Any) -> Any:
    """The Bessel function of the first kind of real order ``v`` (the ``py`` kernel's
    branches and edges; orders 0 and ``+-1`` are ``j0`` and ``+-j1``)."""
    v, x = jnp.broadcast_arrays(v, x)
    integer = _is_int(v)
    w = jnp.where(integer, jnp.abs(v), v)
    ax = jnp.where(integer, jnp.abs(x), x)
    usual = jnp.isfinite(w) & (ax > 0) & jnp.isfinite(ax) & (jnp.abs(v) != 1) & (v != 0)
    sw = jnp.where(usual, w, 0.5)
    sx = jnp.where(usual, ax, 1.0)
    positive = sw >= 0
    by_series = (sx <= 2.0) | (positive & (0.25 * sx * sx <= 0.5 * (sw + 1.0)))
    series = _j_series(jnp.where(by_series, sw, 0.5), jnp.where(by_series, sx, 1.0))
    order = jnp.where(by_series, 0.5, jnp.abs(sw))
    j, y = _jy(order, jnp.where(by_series, 3.0, sx))
    s, c = jnp.sin(order * np.pi), jnp.cos(order * np.pi)
    reflected = jnp.where(jnp.isfinite(y), c * j - s * y, -s * y)
    value = jnp.where(by_series, series, jnp.where(positive, j, reflected))
    n_odd = integer & (jnp.abs(v) % 2 == 1)
    sign = jnp.where((v < 0) & n_odd, -1.0, 1.0) * jnp.where((x < 0) & n_odd, -1.0, 1.0)
    value = sign * value
    # x = 0: 1 or 0 for integer orders; 0 or +-inf for the others (NaN for x < 0)
    pole = jnp.where(jnp.floor(v) % 2 == 1, jnp.inf, -jnp.inf)
    at_zero = jnp.where(integer, jnp.where(v == 0, 1.0, 0.0), jnp.where(v > 0, 0.0, pole))
    value = jnp.where(x == 0, at_zero, value)
    value = jnp.where(~integer & (x < 0), jnp.nan, value)
    value = jnp.where(jnp.abs(v) == 1, jnp.sign(v) * special_more._j1(x), value)
    value = jnp.where(v == 0, special_more._j0(x), value)
    value = jnp.where(jnp.isinf(v), jnp.where((x >= 0) & (x <= 2), 0.0, jnp.nan), value)
    return jnp.where(jnp.isnan(v) | jnp.isnan(x) | jnp.isinf(x), jnp.nan, value)


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    ssp.Iv: in_float64(_iv_of(False)),
    ssp.Ive: in_float64(_iv_of(True)),
    sbes.Kve: in_float64(_kve),
    sbes.Jv: in_float64(_jv),
}
