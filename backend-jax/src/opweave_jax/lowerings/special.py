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
from opweave.scalar import probability as sprob
from opweave.scalar import special as ssp
from opweave_jax.lowerings.scalar import in_output_dtype, out_dtype

__all__ = ["LOWERINGS", "in_float64"]

Fn = Callable[..., Any]


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


def _gammaln(x: Any) -> Any:
    """``gammaln``, ``-inf`` at ``-inf`` as SciPy and the other backends give (XLA: ``inf``)."""
    return jnp.where(x == -jnp.inf, x, jss.gammaln(x))


def _xlogx(x: Any) -> Any:
    """``x * log(x)``, ``+0.0`` at both zeros."""
    return jnp.where(x == 0, jnp.zeros((), x.dtype), jss.xlogy(x, x))


def in_float64(fn: Fn) -> Callable[[Any, Apply], Fn]:
    """A factory computing ``fn`` in float64 and casting to the output dtype, as the ``py``
    backend computes these functions."""

    def factory(op: Any, node: Apply) -> Fn:
        dtype = out_dtype(node)

        def run(*xs: Any) -> Any:
            return fn(*[jnp.asarray(x).astype(np.float64) for x in xs]).astype(dtype)

        return run

    return factory


def _erfcinv(y: Any) -> Any:
    """``erfcinv(y) = -ndtri(y / 2) / sqrt(2)``."""
    return -jss.ndtri(y / 2) * np.sqrt(0.5)


#: Below this, ``exp(y)`` underflows: ``ndtri_exp`` is found by Newton's method instead.
_NDTRI_EXP_TAIL = -700.0
#: Below this, the asymptotic start of that method is the answer to the last bit (its
#: relative error is about ``log(-y) / y``), and Newton's steps would overflow further on.
_NDTRI_EXP_NO_NEWTON = -1e8


def _ndtri_exp(y: Any) -> Any:
    """``ndtri(exp(y))``: through ``exp`` below ``-log(2)``, ``-ndtri(-expm1(y))`` above it,
    and, where ``exp(y)`` underflows, Newton's method on ``log_ndtr(x) = y`` from the
    asymptotic ``x = -sqrt(t - log(2 pi t))``, ``t = -2 y``."""
    direct = jnp.where(y < -np.log(2.0), jss.ndtri(jnp.exp(y)), -jss.ndtri(-jnp.expm1(y)))
    tail = y < _NDTRI_EXP_TAIL
    yt = jnp.where(tail & jnp.isfinite(y), y, 2 * _NDTRI_EXP_TAIL)
    # sqrt(t - log(2 pi t)) with t = -2 y, written so that t itself (which overflows below
    # -max/2) is never formed.
    start = -np.sqrt(2.0) * jnp.sqrt(-yt - 0.5 * (np.log(4 * np.pi) + jnp.log(-yt)))
    # Newton's steps square x: beyond this the start is exact to the last bit anyway.
    newton = yt > _NDTRI_EXP_NO_NEWTON
    x = jnp.where(newton, start, -np.sqrt(-2 * _NDTRI_EXP_TAIL))
    y_newton = jnp.where(newton, yt, _NDTRI_EXP_TAIL)
    for _ in range(4):
        log_cdf = jss.log_ndtr(x)
        x = x - (log_cdf - y_newton) * jnp.exp(log_cdf + x * x / 2 + 0.5 * np.log(2 * np.pi))
    x = jnp.where(newton, x, start)
    return jnp.where(y == -jnp.inf, y, jnp.where(tail, x, direct))


#: Gauss-Legendre nodes and weights on [-1, 1] of :func:`_owens_t_far`.
_OWENS_NODES, _OWENS_WEIGHTS = np.polynomial.legendre.leggauss(64)
#: Where :func:`_owens_t_far` replaces JAX's ``owens_t`` (``|h| > 5``, ``|a| <= 1.2``).
_OWENS_H, _OWENS_A = 5.0, 1.2


def _owens_t_far(h: Any, a: Any) -> Any:
    """``T(h, a)`` for ``h > 5``, ``|a| <= 1.2``: ``exp(-h**2 / 2) / (2 pi h)`` times the
    integral of ``exp(-t**2 / 2) / (1 + t**2 / h**2)`` over ``t`` in ``[0, |a| h]`` (cut at
    40, where the integrand underflows), by 64-point Gauss-Legendre quadrature (2.5e-13
    relative to SciPy there)."""
    top = jnp.minimum(jnp.abs(a) * h, 40.0)
    t = 0.5 * top[..., None] * (_OWENS_NODES + 1.0)
    f = jnp.exp(-0.5 * t * t) / (1.0 + (t / h[..., None]) ** 2)
    integral = 0.5 * top * jnp.sum(_OWENS_WEIGHTS * f, axis=-1)
    return jnp.sign(a) * jnp.exp(-0.5 * h * h) / (2.0 * np.pi * h) * integral


def _owens_t(h: Any, a: Any) -> Any:
    """``owens_t``, with ``T(0, +-inf) = +-1/4`` (XLA gives NaN there); for ``|h| > 5`` and
    ``|a| <= 1.2`` by quadrature (:func:`_owens_t_far`): JAX's loses up to 66% of the
    (small) value for ``h`` in ``[7, 37]``, ``a`` in ``[0.2, 1.08]``."""
    h, a = jnp.broadcast_arrays(h, a)
    quarter = jnp.where(a > 0, 0.25, -0.25).astype(a.dtype)
    far = (jnp.abs(h) > _OWENS_H) & jnp.isfinite(h) & (jnp.abs(a) <= _OWENS_A)
    quadrature = _owens_t_far(jnp.where(far, jnp.abs(h), 10.0), jnp.where(far, a, 0.5))
    value = jnp.where(far, quadrature, jss.owens_t(h, a))
    return jnp.where((h == 0) & jnp.isinf(a), quarter, value)


#: From this shape on, near the mean (``|x / k - 1| < _TEMME_BAND``), the regularized
#: incomplete gamma functions follow Temme's uniform expansion, as the ``py`` kernels do:
#: XLA's ``igamma`` loses digits there (1e-9 relative at 1e6) and runs for minutes from
#: about 1e15. Farther from the mean, the result is 0 or 1 in float64.
_LARGE_K = 1e6
_TEMME_BAND = 0.3
#: Terms of the series of ``h`` (``|d| < 0.3``: the last is below 1e-21).
_H_TERMS = 40


def _igam_temme(k: Any, d: Any, lower: bool) -> Any:
    """``P`` (``lower``) or ``Q`` at ``k``, ``x = k (1 + d)``: ``erfc(-+eta sqrt(k/2)) / 2
    -+ exp(-k eta**2 / 2) / sqrt(2 pi k) (c0 + c1 / k)`` (the ``py`` kernel's
    ``_igam_temme``; ``h = (g - 1) / d`` by Horner's rule on its series)."""
    h = jnp.zeros_like(d)
    for n in range(3 + _H_TERMS - 1, 2, -1):
        h = h * d + (2.0 if n % 2 == 0 else -2.0) / n
    root = jnp.sqrt(1.0 + d * h)
    eta = d * root
    c0 = h / (root * (root + 1.0))
    c1 = -1.0 / 540.0 - eta / 288.0 + eta * eta / 378.0
    z = eta * jnp.sqrt(0.5 * k)
    # k (log(1 + d) - d) = -k d**2 g / 2, with g = 1 + d h.
    r = jnp.exp(-0.5 * k * d * d * (1.0 + d * h)) / jnp.sqrt(2.0 * np.pi * k) * (c0 + c1 / k)
    return 0.5 * jss.erfc(-z) - r if lower else 0.5 * jss.erfc(z) + r


def _regularized_gamma(lower: bool) -> Fn:
    """``gammainc`` (``lower``) or ``gammaincc``: XLA's, except at large shapes (see
    :data:`_LARGE_K`), where XLA is given harmless arguments in the lanes it does not
    compute."""
    xla = jss.gammainc if lower else jss.gammaincc

    def run(k: Any, x: Any) -> Any:
        k, x = jnp.broadcast_arrays(k, x)
        large = (k > _LARGE_K) & jnp.isfinite(k) & jnp.isfinite(x) & (x > 0)
        d = (x - k) / jnp.where(large, k, 1.0)
        near = large & (jnp.abs(d) < _TEMME_BAND)
        one = jnp.ones((), k.dtype)
        plain = xla(jnp.where(large, one, k), jnp.where(large, one, x))
        temme = _igam_temme(jnp.where(near, k, 2.0 * _LARGE_K), jnp.where(near, d, 0.0), lower)
        above = (x > k) if lower else (x <= k)
        zero = jnp.zeros((), k.dtype)
        saturated = jnp.where(above, one, zero)
        value = jnp.where(near, temme, jnp.where(large, saturated, plain))
        # The edges of the domain as the py kernel (and SciPy) give them, where XLA's
        # igamma is NaN: all the mass at 0 for the shape 0, at infinity for an infinite one.
        at_zero = jnp.where(x == 0, jnp.nan, one if lower else zero)
        at_inf = jnp.where(x == jnp.inf, jnp.nan, zero if lower else one)
        valid = (x >= 0) & ~jnp.isnan(x)
        value = jnp.where(valid & (k == 0), at_zero, value)
        return jnp.where(valid & (k == jnp.inf), at_inf, value)

    return run


def _betainc(a: Any, b: Any, x: Any) -> Any:
    """``betainc``, ``x`` itself at ``x = 0`` and ``x = 1`` for finite positive ``a, b`` (as
    the py kernel; XLA gives NaN there when ``a`` or ``b`` is near the largest float)."""
    value = jss.betainc(a, b, x)
    ends = (x == 0) | (x == 1)
    finite = (a > 0) & (b > 0) & jnp.isfinite(a) & jnp.isfinite(b)
    return jnp.where(ends & finite, x, value)


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    sm.Erf: in_output_dtype(jss.erf),
    sm.Erfc: in_output_dtype(jss.erfc),
    sm.Erfinv: in_output_dtype(jss.erfinv),
    sm.Erfcx: in_output_dtype(jss.erfcx),
    sm.Gamma: in_output_dtype(jss.gamma),
    sm.GammaLn: in_output_dtype(_gammaln),
    sm.Psi: in_output_dtype(_digamma),
    sm.TriGamma: in_output_dtype(_trigamma),
    sm.PolyGamma: _polygamma,
    sm.GammaInc: in_output_dtype(_regularized_gamma(True)),
    sm.XlogX: in_output_dtype(_xlogx),
    sm.XlogY0: in_output_dtype(jss.xlogy),
    ssp.I0: in_output_dtype(jss.i0),
    ssp.I1: in_output_dtype(jss.i1),
    ssp.BetaInc: in_output_dtype(_betainc),
    ssp.Erfcinv: in_float64(_erfcinv),
    ssp.NdtriExp: in_float64(_ndtri_exp),
    sprob.OwensT: in_float64(_owens_t),
}
