"""Special functions in double precision, for the special scalar Ops of ``opweave.scalar.math``.

SciPy is optional, so each function is computed here from the :mod:`math` module, one
element at a time (``numpy.vectorize`` applies it to arrays). The algorithms and the
order of their operations are those of the C backend's helpers (``opw_sm_*`` in
``opweave_c/impls/c/scalar_math.c``), so both backends give the same values up to the
last bits of the C library's ``lgamma``/``tgamma`` (CPython computes those itself).
The values at the edges (poles, infinities, NaN, arguments outside the domain) are
SciPy's, apart from ``xlogy0(0, nan)``, which is 0 as in PyTensor.

* ``gammaln``/``gamma``: the C library's functions (``inf`` at the poles of ``gammaln``,
  ``+-inf`` at ``+-0`` and NaN at negative integers for ``gamma``);
* ``digamma``/``trigamma``: the recurrence ``f(x) = f(x + 1) -+ ...`` up to ``x >= 12``,
  then the asymptotic series in Bernoulli numbers; the reflection formula below 0;
* ``polygamma(n, x)`` for ``n >= 2``: ``(-1)**(n + 1) n! zeta(n + 1, x)`` with the Hurwitz
  zeta function by Euler-Maclaurin summation;
* ``erfinv``: an initial guess from Winitzki's approximation refined by Newton steps on
  ``erf`` (on ``erfc`` above 0.5, where ``1 - x`` is exact);
* ``erfcx``: ``exp(x**2) * erfc(x)`` with ``x**2`` split into two exact parts, the
  asymptotic series beyond 26, and ``2 exp(x**2) - erfcx(-x)`` below 0;
* ``gammainc``/``gammaincc``: the power series of the lower function below ``k + 1``,
  Lentz's continued fraction of the upper one above.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "digamma",
    "erfcx",
    "erfinv",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "polygamma",
    "trigamma",
    "vectorized",
]

_EPS = 2.220446049250313e-16
_TINY = 1e-300
_MAX_ITER = 100000
#: ``B_2j / (2j)!`` for ``j = 1 .. 12``: the Euler-Maclaurin coefficients.
_EULER_MACLAURIN = (
    0.08333333333333333,
    -0.001388888888888889,
    3.306878306878307e-05,
    -8.267195767195768e-07,
    2.08767569878681e-08,
    -5.284190138687493e-10,
    1.3382536530684679e-11,
    -3.3896802963225827e-13,
    8.586062056277845e-15,
    -2.174868698558062e-16,
    5.5090028283602295e-18,
    -1.3954464685812522e-19,
)


def _exp(x: float) -> float:
    """``math.exp``, ``inf`` on overflow (as C's ``exp``)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _pow(x: float, y: float) -> float:
    """``math.pow``, ``inf`` on overflow (as C's ``pow``)."""
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf


def gammaln(x: float) -> float:
    """``log(abs(gamma(x)))``; ``inf`` at the poles."""
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def gamma(x: float) -> float:
    """The gamma function: ``+-inf`` at ``+-0``, NaN at negative integers and ``-inf``."""
    try:
        return math.gamma(x)
    except OverflowError:
        return math.copysign(math.inf, x)
    except ValueError:
        return math.copysign(math.inf, x) if x == 0 else math.nan


def digamma(x: float) -> float:
    """The digamma function (SciPy's ``psi``)."""
    if math.isnan(x):
        return x
    if x <= 0:
        if math.isinf(x) or x == math.floor(x):  # a pole, or -inf
            return -math.copysign(math.inf, x) if x == 0 else math.nan
        r = x - round(x)
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * r)
    if math.isinf(x):
        return x
    acc = 0.0
    while x < 12.0:
        acc -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    inner = 1 / 132 - z * (691 / 32760 - z / 12)
    tail = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z * inner))))
    return acc + math.log(x) - 0.5 / x - tail


def trigamma(x: float) -> float:
    """The trigamma function (``polygamma(1, x)``; ``inf`` at 0 and negative integers)."""
    if math.isnan(x):
        return x
    if x <= 0:
        if math.isinf(x) or x == math.floor(x):
            return math.inf
        s = math.sin(math.pi * (x - round(x)))
        return math.pi * math.pi / (s * s) - trigamma(1.0 - x)
    if math.isinf(x):
        return 0.0
    if x * x == 0.0:
        return math.inf
    acc = 0.0
    while x < 12.0:
        acc += 1.0 / (x * x)
        x += 1.0
    z = 1.0 / (x * x)
    inner = 5 / 66 - z * (691 / 2730 - z * 7 / 6)
    series = (1.0 + z * (1 / 6 - z * (1 / 30 - z * (1 / 42 - z * (1 / 30 - z * inner))))) / x
    return acc + 0.5 * z + series


def _hurwitz_zeta(s: float, q: float) -> float:
    """``sum((q + k) ** -s for k >= 0)`` for ``s > 1`` (an integer where ``q < 0``)."""
    if q <= 0 and (math.isinf(q) or q == math.floor(q)):
        return math.inf
    if q > 1e8:
        return (1.0 / (s - 1.0) + 0.5 / q) * _pow(q, 1.0 - s)
    total = _pow(q, -s)
    a, b, i = q, 0.0, 0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = _pow(a, -s)
        total += b
        if abs(b) < abs(total) * _EPS:
            return total
    total += b * a / (s - 1.0) - 0.5 * b
    rising, k = 1.0, 0.0
    for coef in _EULER_MACLAURIN:
        rising *= s + k
        b /= a
        t = coef * rising * b
        total += t
        if abs(t) < abs(total) * _EPS:
            break
        k += 1.0
        rising *= s + k
        b /= a
        k += 1.0
    return total


def polygamma(n: float, x: float) -> float:
    """The ``n``-th derivative of the digamma function (NaN for a negative ``n``)."""
    if math.isnan(n) or math.isnan(x) or n < 0 or math.isinf(n) or n != math.floor(n):
        return math.nan
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    if x == math.inf:
        return -0.0 if n % 2 == 0 else 0.0
    sign = 1.0 if n % 2 == 1 else -1.0
    return sign * gamma(n + 1.0) * _hurwitz_zeta(n + 1.0, x)


def log1mexp(x: Any) -> Any:
    """``log(1 - exp(x))`` of a float64 array."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x < -0.6931471805599453, np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def xlogx(x: Any) -> Any:
    """``x * log(x)`` of a float64 array, 0 where ``x`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, x * np.log(x))


def xlogy0(x: Any, y: Any) -> Any:
    """``x * log(y)`` of float64 arrays, 0 where ``x`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, x * np.log(y))


def erfinv(x: float) -> float:
    """The inverse error function (``+-inf`` at ``+-1``, NaN outside ``[-1, 1]``)."""
    if math.isnan(x) or x < -1.0 or x > 1.0:
        return math.nan
    if x == 0.0:
        return x
    a = abs(x)
    if a == 1.0:
        return math.copysign(math.inf, x)
    # Winitzki's approximation (relative error below 2e-3), then Newton's method.
    log_1ma2 = math.log1p(-a) + math.log1p(a)
    t = 4.330746750799873 + 0.5 * log_1ma2  # 2 / (pi * 0.147) + log(1 - a**2) / 2
    y = math.sqrt(math.sqrt(t * t - log_1ma2 / 0.147) - t)
    for _ in range(4):
        if a <= 0.5:
            f = math.erf(y) - a
        else:
            f = (1.0 - a) - math.erfc(y)
        y -= f / (1.1283791670955126 * math.exp(-y * y))
    return math.copysign(y, x)


def _exp_x2(x: float) -> float:
    """``exp(x * x)`` with ``x * x`` split into an exact sum ``hi + lo`` (Dekker)."""
    c = 134217729.0 * x
    xh = c - (c - x)
    xl = x - xh
    hi = x * x
    lo = ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl
    return _exp(hi) * (1.0 + lo)


def erfcx(x: float) -> float:
    """``exp(x**2) * erfc(x)`` without overflow for large ``x``."""
    if math.isnan(x):
        return x
    if x < 0.0:
        if x < -26.7:
            return math.inf
        return 2.0 * _exp_x2(x) - erfcx(-x)
    if x < 26.0:
        return _exp_x2(x) * math.erfc(x)
    if math.isinf(x):
        return 0.0
    # 1/(x sqrt(pi)) * sum((-1)**k (2k-1)!! / (2 x**2)**k)
    w = 1.0 / (2.0 * x * x)
    total, term = 1.0, 1.0
    for k in range(1, 12):
        term *= -(2 * k - 1) * w
        total += term
    return total * 0.5641895835477563 / x


def _igam_factor(k: float, x: float) -> float:
    """``x**k exp(-x) / gamma(k)``."""
    return _exp(k * math.log(x) - x - gammaln(k))


def _lower_series(k: float, x: float) -> float:
    """``P(k, x)`` by its power series (for ``x < k + 1``)."""
    term = 1.0 / k
    total = term
    a = k
    for _ in range(_MAX_ITER):
        a += 1.0
        term *= x / a
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * _igam_factor(k, x)


def _upper_fraction(k: float, x: float) -> float:
    """``Q(k, x)`` by its continued fraction (Lentz's method, for ``x >= k + 1``)."""
    b = x + 1.0 - k
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - k)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h * _igam_factor(k, x)


def _igam_edge(k: float, x: float, lower: bool) -> float | None:
    """The value of ``P`` (``lower``) or ``Q`` at the edges of the domain, else ``None``."""
    if math.isnan(k) or math.isnan(x) or k < 0 or x < 0:
        return math.nan
    if k == 0:
        if x == 0:
            return math.nan
        return 1.0 if lower else 0.0
    if x == 0:
        return 0.0 if lower else 1.0
    if math.isinf(k):
        if math.isinf(x):
            return math.nan
        return 0.0 if lower else 1.0
    if math.isinf(x):
        return 1.0 if lower else 0.0
    return None


def gammainc(k: float, x: float) -> float:
    """The regularized lower incomplete gamma function ``P(k, x)``."""
    edge = _igam_edge(k, x, True)
    if edge is not None:
        return edge
    if x < k + 1.0:
        return _lower_series(k, x)
    return 1.0 - _upper_fraction(k, x)


def gammaincc(k: float, x: float) -> float:
    """The regularized upper incomplete gamma function ``Q(k, x) = 1 - P(k, x)``."""
    edge = _igam_edge(k, x, False)
    if edge is not None:
        return edge
    if x < k + 1.0:
        return 1.0 - _lower_series(k, x)
    return _upper_fraction(k, x)


def vectorized(fn: Callable[..., float]) -> Callable[..., Any]:
    """``fn`` of floats applied elementwise to float64 arrays (broadcasting them)."""
    vec = np.vectorize(fn, otypes=[np.float64])
    vec.__name__ = fn.__name__  # type: ignore[attr-defined]
    return vec  # type: ignore[no-any-return]
