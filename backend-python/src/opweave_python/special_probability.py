"""Distribution functions in double precision, for :mod:`opweave.scalar.probability`
(pure Python on :mod:`math`, one element at a time):

* ``betaincinv(a, b, y)``: the ``x`` in ``[0, 1]`` with ``betainc(a, b, x) = y``: Numerical
  Recipes' first guess (``invbetai``), then Newton's method on ``log(betainc) = log(y)``
  kept inside a bisection bracket; ``y > 1/2`` is solved as ``1 - betaincinv(b, a, 1 - y)``
  so that ``x`` near 1 keeps its accuracy;
* ``owens_t(h, a)``: Owen's T function
  ``(1 / 2 pi) int_0^a exp(-h**2 (1 + t**2) / 2) / (1 + t**2) dt``, by Gauss-Legendre
  quadrature (20 fixed nodes a panel, panels at most ``2 / h`` wide, the integrand cut
  where it is below ``exp(-72)`` of its value at 0) for ``|a| <= 1``, and by the identity
  ``T(h, a) = (Phi(h) Q(ah) + Phi(ah) Q(h)) / 2 - T(ah, 1 / a)`` (``Q = 1 - Phi``) beyond.

Edges are SciPy's: ``betaincinv`` is NaN outside ``a, b > 0``, ``0 <= y <= 1``;
``owens_t(h, +-inf) = +-Q(|h|) / 2`` and ``owens_t(+-inf, a) = 0``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from opweave_python.special_math import _exp, _pow
from opweave_python.special_math_extra import betainc

__all__ = ["betaincinv", "owens_t"]

_EPS = 2.220446049250313e-16


@functools.cache
def _gauss_legendre() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The 20-point Gauss-Legendre nodes and weights (computed on first use: NumPy's
    polynomial package costs milliseconds to import, at every plugin load otherwise)."""
    nodes, weights = np.polynomial.legendre.leggauss(20)
    return tuple(float(t) for t in nodes), tuple(float(w) for w in weights)


_SQRT1_2 = math.sqrt(0.5)


# ====================================================================== inverse beta


def _beta_guess(a: float, b: float, y: float) -> float:
    """Numerical Recipes' first guess of ``x`` with ``betainc(a, b, x) = y``."""
    if a >= 1.0 and b >= 1.0:
        pp = y if y < 0.5 else 1.0 - y
        t = math.sqrt(-2.0 * math.log(pp))
        x = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
        if y < 0.5:
            x = -x
        al = (x * x - 3.0) / 6.0
        h = 2.0 / (1.0 / (2.0 * a - 1.0) + 1.0 / (2.0 * b - 1.0))
        w = x * math.sqrt(al + h) / h - (1.0 / (2.0 * b - 1.0) - 1.0 / (2.0 * a - 1.0)) * (
            al + 5.0 / 6.0 - 2.0 / (3.0 * h)
        )
        return a / (a + b * math.exp(min(2.0 * w, 700.0)))
    t = math.exp(a * _log(a / (a + b))) / a
    u = math.exp(b * _log(b / (a + b))) / b
    w = t + u
    if y < t / w:
        return _pow(a * w * y, 1.0 / a)
    return 1.0 - _pow(b * w * (1.0 - y), 1.0 / b)


def _log(x: float) -> float:
    """``math.log`` of ``x >= 0``, ``-inf`` at 0 (as C's ``log``)."""
    return math.log(x) if x > 0.0 else -math.inf


def _log1p(x: float) -> float:
    """``math.log1p`` of ``x >= -1``, ``-inf`` at -1 (as C's ``log1p``)."""
    return math.log1p(x) if x > -1.0 else -math.inf


def _bisect(lo: float, hi: float) -> float:
    """The middle of ``[lo, hi]``: geometric where the bracket spans orders of magnitude."""
    if lo > 0.0 and hi > 4.0 * lo:
        return math.sqrt(lo) * math.sqrt(hi)
    if lo == 0.0 and hi > 1e-300:
        return hi * 1e-3
    return 0.5 * (lo + hi)


def _beta_solve(a: float, b: float, y: float) -> float:
    """``x`` with ``betainc(a, b, x) = y`` for ``0 < y <= 1/2``."""
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    log_y = math.log(y)
    lo, hi = 0.0, 1.0
    x = min(max(_beta_guess(a, b, y), 1e-300), 1.0 - 1e-16)
    for _ in range(400):
        value = betainc(a, b, x)
        if value > y:
            hi = x
        else:
            lo = x
        if value <= 0.0:
            x = _bisect(lo, hi)
            continue
        log_pdf = (a - 1.0) * _log(x) + (b - 1.0) * _log1p(-x) - log_beta
        step = (math.log(value) - log_y) * _exp(math.log(value) - log_pdf)
        if abs(step) <= 2.0 * _EPS * x:
            return x - step
        new = x - step
        if not (lo < new < hi):
            new = _bisect(lo, hi)
        if hi - lo <= 2.0 * _EPS * hi:
            return new
        x = new
    return x


def betaincinv(a: float, b: float, y: float) -> float:
    """The inverse of the regularized incomplete beta function in its last argument."""
    a, b, y = float(a), float(b), float(y)
    if math.isnan(a) or math.isnan(b) or math.isnan(y):
        return math.nan
    if a <= 0.0 or b <= 0.0 or y < 0.0 or y > 1.0:
        return math.nan
    if y == 0.0 or y == 1.0:
        return y
    if math.isinf(a) or math.isinf(b):
        return 1.0 if math.isinf(a) and not math.isinf(b) else math.nan
    if y > 0.5:
        return 1.0 - _beta_solve(b, a, 1.0 - y)
    return _beta_solve(a, b, y)


# ====================================================================== Owen's T


def _upper_normal(x: float) -> float:
    """``Q(x) = 1 - Phi(x)``."""
    return 0.5 * math.erfc(x * _SQRT1_2)


def _owens_t_quadrature(h: float, a: float) -> float:
    """``T(h, a)`` for ``h >= 0`` and ``0 < a <= 1``."""
    half_h2 = 0.5 * h * h
    if half_h2 > 745.0:
        return 0.0
    upper = a if h <= 0.0 else min(a, 12.0 / h)
    panels = max(1, math.ceil(upper * h / 2.0))
    width = upper / panels
    total = 0.0
    for p in range(panels):
        mid = (p + 0.5) * width
        for node, weight in zip(*_gauss_legendre(), strict=True):
            t = mid + 0.5 * width * node
            total += weight * math.exp(-half_h2 * t * t) / (1.0 + t * t)
    return total * 0.5 * width * math.exp(-half_h2) / (2.0 * math.pi)


def owens_t(h: float, a: float) -> float:
    """Owen's T function ``T(h, a)``."""
    h, a = float(h), float(a)
    if math.isnan(h) or math.isnan(a):
        return math.nan
    sign = -1.0 if a < 0.0 else 1.0
    h, a = abs(h), abs(a)
    if math.isinf(h) or a == 0.0:
        return 0.0
    if math.isinf(a):
        return sign * 0.5 * _upper_normal(h)
    if h == 0.0:
        return sign * math.atan(a) / (2.0 * math.pi)
    if a <= 1.0:
        return sign * _owens_t_quadrature(h, a)
    ah = a * h
    q_h, q_ah = _upper_normal(h), _upper_normal(ah)
    value = 0.5 * ((1.0 - q_h) * q_ah + (1.0 - q_ah) * q_h)
    return sign * (value - _owens_t_quadrature(ah, 1.0 / a))
