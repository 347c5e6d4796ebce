"""Lowerings of the derivatives of ``betainc`` and ``hyp2f1`` in their shape parameters
(:mod:`opweave.scalar.shape_gradients`).

They follow the ``py`` backend's kernels (:mod:`opweave_python.special_shape_gradients`)
in float64, elementwise, with the same stopping rules:

* ``d/da``, ``d/db betainc(a, b, x)``: the continued fraction of the incomplete beta
  function with its derivative carried through the three-term recurrence of its
  convergents, after the reflection ``I_x(a, b) = 1 - I_{1-x}(b, a)`` where
  ``x > (a + 1) / (a + b + 2)``;
* ``d/da``, ``d/db``, ``d/dc hyp2f1(a, b, c, z)``: the hypergeometric series with its
  derivatives carried term by term, after Pfaff's transformation for ``z < 0``; at
  ``z = 1`` where ``c - a - b > 0``, those of Gauss's closed form; for other ``z >= 1``
  those of the polynomial where ``a`` or ``b`` is a non-positive integer.

NaN outside the domains and where an expansion does not converge, 0 at ``x = 0``, ``x =
1`` and ``z = 0``, as the ``py`` kernels give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.special as jss

from opweave.graph.basic import Apply
from opweave.scalar import shape_gradients as sgrad
from opweave_jax.lowerings.special import in_float64
from opweave_jax.lowerings.special_loops import masked_loop

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]

_EPS = 2.220446049250313e-16
_MAX_ITER = 1_000_000
#: Rescale the convergents when they leave ``[1/_BIG, _BIG]``.
_BIG = 1e150


# ====================================================================== betainc


def _beta_term(n: Any, a: Any, b: Any, x: Any, wrt_a: Any) -> tuple[Any, Any]:
    """``(d_n, d d_n)``: the ``n``-th partial numerator (``n >= 2``) of ``1 / (1 + d_1 /
    (1 + d_2 / ...))`` and its derivative in ``a`` (``wrt_a``) or ``b``."""
    j = n - 2.0
    m = jnp.floor(j / 2.0)
    odd = j - 2.0 * m == 0  # d_{2m+1}
    d_odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
    dd_odd_a = d_odd * (1 / (a + m) + 1 / (a + b + m) - 1 / (a + 2 * m) - 1 / (a + 2 * m + 1))
    dd_odd = jnp.where(wrt_a, dd_odd_a, d_odd / (a + b + m))
    mm = m + 1.0
    den = (a + 2 * mm - 1) * (a + 2 * mm)
    d_even = mm * (b - mm) * x / den
    dd_even_a = d_even * (-1 / (a + 2 * mm - 1) - 1 / (a + 2 * mm))
    dd_even = jnp.where(wrt_a, dd_even_a, mm * x / den)
    return jnp.where(odd, d_odd, d_even), jnp.where(odd, dd_odd, dd_even)


def _beta_fraction_value(a: Any, b: Any, x: Any, wrt_a: Any) -> tuple[Any, Any]:
    """The value and derivative of the incomplete beta function's continued fraction,
    built from its convergents ``A_n / B_n`` (NaN where it does not converge)."""
    zero, one = jnp.zeros_like(x), jnp.ones_like(x)
    nan = jnp.full_like(x, jnp.nan)

    def body(n: Any, *s: Any) -> tuple[tuple[Any, ...], Any]:
        a2, da2, a1, da1, b2, db2, b1, db1, f_old, df_old = s
        d, dd = _beta_term(jnp.maximum(n, 2.0), a, b, x, wrt_a)
        an = jnp.where(n == 1, 1.0, d)
        dan = jnp.where(n == 1, 0.0, dd)
        a0 = a1 + an * a2
        da0 = da1 + dan * a2 + an * da2
        b0 = b1 + an * b2
        db0 = db1 + dan * b2 + an * db2
        a2, da2, a1, da1 = a1, da1, a0, da0
        b2, db2, b1, db1 = b1, db1, b0, db0
        scale = jnp.abs(b1)
        rescale = (scale > _BIG) | ((scale > 0) & (scale < 1.0 / _BIG))
        r = jnp.where(rescale, 1.0 / jnp.where(rescale, scale, 1.0), 1.0)
        a2, da2, a1, da1 = a2 * r, da2 * r, a1 * r, da1 * r
        b2, db2, b1, db1 = b2 * r, db2 * r, b1 * r, db1 * r
        live = b1 != 0
        safe = jnp.where(live, b1, 1.0)
        f = a1 / safe
        df = (da1 - f * db1) / safe
        close = (jnp.abs(f - f_old) <= _EPS * jnp.abs(f)) & (
            jnp.abs(df - df_old) <= 4 * _EPS * jnp.maximum(jnp.abs(df), _EPS * jnp.abs(f))
        )
        converged = live & (n > 2) & close
        over = live & ~converged & (n > _MAX_ITER)
        f_new = jnp.where(over, jnp.nan, jnp.where(live, f, f_old))
        df_new = jnp.where(over, jnp.nan, jnp.where(live, df, df_old))
        return (a2, da2, a1, da1, b2, db2, b1, db1, f_new, df_new), converged | over

    start = (jnp.ones((), x.dtype), one, zero, zero, zero, zero, zero, one, zero, nan, nan)
    out = masked_loop(lambda n: True, body, (*start, jnp.zeros(jnp.shape(x), bool)))
    return out[-2], out[-1]


def _beta_side(a: Any, b: Any, x: Any, wrt_a: Any) -> Any:
    """The derivative of ``I_x(a, b)`` in ``a`` (``wrt_a``) or ``b`` for ``0 < x < 1``
    where the continued fraction converges fast."""
    h, dh = _beta_fraction_value(a, b, x, wrt_a)
    log_x, log_1mx = jnp.log(x), jnp.log1p(-x)
    lbeta = jss.gammaln(a) + jss.gammaln(b) - jss.gammaln(a + b)
    good = h > 0
    log_i = a * log_x + b * log_1mx - jnp.log(a) - lbeta + jnp.log(jnp.where(good, h, 1.0))
    slope_a = log_x - 1.0 / a - jss.digamma(a) + jss.digamma(a + b)
    slope_b = log_1mx - jss.digamma(b) + jss.digamma(a + b)
    slope = jnp.where(wrt_a, slope_a, slope_b)
    return jnp.where(good, jnp.exp(log_i) * (slope + dh / jnp.where(good, h, 1.0)), jnp.nan)


def _betainc_grad(wrt_a: bool) -> Fn:
    """``d/da`` (``wrt_a``) or ``d/db`` of ``betainc(a, b, x)``."""

    def run(a: Any, b: Any, x: Any) -> Any:
        a, b, x = jnp.broadcast_arrays(a, b, x)
        inside = jnp.isfinite(a) & jnp.isfinite(b) & (a > 0) & (b > 0) & (x > 0) & (x < 1)
        sa, sb = jnp.where(inside, a, 1.0), jnp.where(inside, b, 1.0)
        sx = jnp.where(inside, x, 0.25)
        flip = sx > (sa + 1.0) / (sa + sb + 2.0)
        value = _beta_side(
            jnp.where(flip, sb, sa),
            jnp.where(flip, sa, sb),
            jnp.where(flip, 1.0 - sx, sx),
            flip != wrt_a,
        )
        value = jnp.where(flip, -value, value)
        edge = (a > 0) & (b > 0) & jnp.isfinite(a) & jnp.isfinite(b) & ((x == 0) | (x == 1))
        return jnp.where(inside, value, jnp.where(edge, 0.0, jnp.nan))

    return run


# ====================================================================== hyp2f1


def _nonpositive_int(x: Any) -> Any:
    return (x <= 0) & (x == jnp.floor(x))


def _series_grads(a: Any, b: Any, c: Any, z: Any, polynomial: Any) -> tuple[Any, ...]:
    """``2F1(a, b; c; z)`` and its derivatives in ``a``, ``b``, ``c`` from the series; NaN
    where it does not converge. Where ``polynomial``, the sum stops before the first zero
    term."""
    bound = jnp.abs(a) + jnp.abs(b) + jnp.abs(c) + 10.0
    zero, one = jnp.zeros_like(z), jnp.ones_like(z)

    def body(i: Any, *s: Any) -> tuple[tuple[Any, ...], Any]:
        t, ta, tb, tc, f, fa, fb, fc = s
        k = i - 1.0
        ak, bk, ck = a + k, b + k, c + k
        r = ak * bk / (ck * (k + 1.0)) * z
        ra = bk / (ck * (k + 1.0)) * z
        rb = ak / (ck * (k + 1.0)) * z
        rc = -r / ck
        end = polynomial & (r == 0)
        t, ta, tb, tc = t * r, ta * r + t * ra, tb * r + t * rb, tc * r + t * rc
        n_f, n_fa, n_fb, n_fc = f + t, fa + ta, fb + tb, fc + tc
        small = jnp.maximum(
            jnp.maximum(jnp.abs(t), jnp.abs(ta)), jnp.maximum(jnp.abs(tb), jnp.abs(tc))
        )
        scale = jnp.maximum(
            jnp.maximum(jnp.abs(n_f), jnp.abs(n_fa)), jnp.maximum(jnp.abs(n_fb), jnp.abs(n_fc))
        )
        stop = ((k > bound) & (small <= _EPS * scale)) | (
            (t == 0) & (ta == 0) & (tb == 0) & (tc == 0)
        )
        over = ~end & ~stop & (k >= _MAX_ITER - 1)
        sums = tuple(
            jnp.where(end, old, jnp.where(over, jnp.nan, new))
            for old, new in zip((f, fa, fb, fc), (n_f, n_fa, n_fb, n_fc), strict=True)
        )
        return (t, ta, tb, tc, *sums), end | stop | over

    start = (jnp.ones((), z.dtype), one, zero, zero, zero, one, zero, zero, zero)
    return masked_loop(lambda i: True, body, (*start, jnp.zeros(jnp.shape(z), bool)))[4:]


def _gamma_sign(x: Any) -> Any:
    """The sign of ``Gamma(x)`` away from its poles."""
    return jnp.where((x > 0) | (jnp.mod(jnp.ceil(-x), 2.0) == 0), 1.0, -1.0)


def _psi_over_gamma_at_pole(x: Any) -> Any:
    """``psi(x) / Gamma(x)`` at a pole ``x = -n``: its limit ``(-1)**(n + 1) n!``."""
    n = -x
    return jnp.where(jnp.mod(n, 2.0) == 0, -1.0, 1.0) * jnp.exp(jss.gammaln(n + 1.0))


def _gauss_grads(a: Any, b: Any, c: Any) -> tuple[Any, Any, Any]:
    """The derivatives of Gauss's ``2F1(a, b; c; 1) = Gamma(c) Gamma(s) / (Gamma(c - a)
    Gamma(c - b))``, ``s = c - a - b > 0``; at a pole of ``c - a`` (or ``c - b``) only
    the term with ``psi(c - a) / Gamma(c - a)`` is left, at both the derivatives are 0."""
    s = c - a - b
    pole_a, pole_b = _nonpositive_int(c - a), _nonpositive_int(c - b)
    sign = _gamma_sign(c)
    log_k = jss.gammaln(c) + jss.gammaln(s)
    both = sign * _gamma_sign(c - a) * _gamma_sign(c - b)
    f = both * jnp.exp(log_k - jss.gammaln(c - a) - jss.gammaln(c - b))
    psi_s, psi_ca, psi_cb = jss.digamma(s), jss.digamma(c - a), jss.digamma(c - b)
    da, db = f * (psi_ca - psi_s), f * (psi_cb - psi_s)
    dc = f * (jss.digamma(c) + psi_s - psi_ca - psi_cb)
    pole, other = jnp.where(pole_a, c - a, c - b), jnp.where(pole_a, c - b, c - a)
    g = sign * _gamma_sign(other) * jnp.exp(log_k - jss.gammaln(other))
    edge = g * _psi_over_gamma_at_pole(pole)
    one = pole_a != pole_b
    da = jnp.where(pole_a & pole_b, 0.0, jnp.where(one, jnp.where(pole_a, edge, 0.0), da))
    db = jnp.where(pole_a & pole_b, 0.0, jnp.where(one, jnp.where(pole_b, edge, 0.0), db))
    dc = jnp.where(pole_a & pole_b, 0.0, jnp.where(one, -edge, dc))
    return da, db, dc


def _hyp2f1_grads(a: Any, b: Any, c: Any, z: Any) -> tuple[Any, Any, Any]:
    """``d/da``, ``d/db``, ``d/dc`` of ``hyp2f1(a, b, c, z)``."""
    a, b, c, z = jnp.broadcast_arrays(a, b, c, z)
    finite = jnp.isfinite(a) & jnp.isfinite(b) & jnp.isfinite(c) & jnp.isfinite(z)
    valid = finite & ~_nonpositive_int(c) & (z != 0)
    ends = _nonpositive_int(a) | _nonpositive_int(b)
    # at z = 1 where c - a - b > 0: Gauss's closed form (the series converges there,
    # too slowly to sum where c - a - b is small)
    gauss = valid & (z == 1) & (c - a - b > 0) & ~ends
    inside = valid & (z < 1)
    poly = valid & (z >= 1) & ends
    pfaff = z < 0
    run = inside | poly
    sb = jnp.where(run, jnp.where(pfaff, c - b, b), 0.5)
    sa, sc = jnp.where(run, a, 0.5), jnp.where(run, c, 1.5)
    sz = jnp.where(run, jnp.where(pfaff, z / (z - 1.0), z), 0.5)
    g, ga, gb, gc = _series_grads(sa, sb, sc, sz, poly)
    scale = jnp.power(1.0 - z, -a)
    pa = scale * (ga - jnp.log1p(-jnp.where(pfaff, z, 0.0)) * g)
    da = jnp.where(pfaff, pa, ga)
    db = jnp.where(pfaff, -scale * gb, gb)
    dc = jnp.where(pfaff, scale * (gc + gb), gc)
    zero_edge = finite & ~_nonpositive_int(c) & (z == 0)
    ga_, gb_, gc_ = _gauss_grads(
        jnp.where(gauss, a, 0.5), jnp.where(gauss, b, 0.5), jnp.where(gauss, c, 3.0)
    )
    return tuple(  # type: ignore[return-value]
        jnp.where(gauss, e, jnp.where(run, d, jnp.where(zero_edge, 0.0, jnp.nan)))
        for d, e in zip((da, db, dc), (ga_, gb_, gc_), strict=True)
    )


def _hyp2f1_component(index: int) -> Fn:
    def run(a: Any, b: Any, c: Any, z: Any) -> Any:
        return _hyp2f1_grads(a, b, c, z)[index]

    return run


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    sgrad.BetaIncGradA: in_float64(_betainc_grad(True)),
    sgrad.BetaIncGradB: in_float64(_betainc_grad(False)),
    sgrad.Hyp2F1GradA: in_float64(_hyp2f1_component(0)),
    sgrad.Hyp2F1GradB: in_float64(_hyp2f1_component(1)),
    sgrad.Hyp2F1GradC: in_float64(_hyp2f1_component(2)),
}
