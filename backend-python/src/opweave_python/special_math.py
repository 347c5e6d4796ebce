"""Special functions in double precision, for the special scalar Ops of ``opweave.scalar.math``.

SciPy is optional, so each function is computed here from the :mod:`math` module, one
element at a time (``numpy.vectorize`` applies it to arrays). The algorithms and the
order of their operations are those of the C backend's helpers (``opw_sm_*`` in
``opweave_c/impls/c/scalar_math.c``), so both backends give the same values up to the
last bits of the C library's ``lgamma``/``tgamma`` (CPython computes those itself).
The values at the edges (poles, infinities, NaN, arguments outside the domain) are
SciPy's, apart from ``xlogy0(0, nan)``, which is 0 as in PyTensor.

* ``gammaln``/``gamma``: the C library's functions (``inf`` at the poles of ``gammaln``,
  ``+-inf`` at ``+-0`` and NaN at negative integers for ``gamma``), except ``gammaln`` of
  an integer from 3 to 1024, ``log((n - 1)!)`` rounded once from the factorial;
* ``digamma``/``trigamma``: the recurrence ``f(x) = f(x + 1) -+ ...`` up to ``x >= 12``,
  then the asymptotic series in Bernoulli numbers; the reflection formula below 0;
* ``polygamma(n, x)`` for ``n >= 2``: ``(-1)**(n + 1) n! zeta(n + 1, x)`` with the Hurwitz
  zeta function by Euler-Maclaurin summation;
* ``erfinv``: an initial guess from Winitzki's approximation refined by Newton steps on
  ``erf`` (on ``erfc`` above 0.5, where ``1 - x`` is exact);
* ``erfcx``: ``exp(x**2) * erfc(x)`` with ``x**2`` split into two exact parts, the
  asymptotic series beyond 26, and ``2 exp(x**2) - erfcx(-x)`` below 0;
* ``gammainc``/``gammaincc``: the power series of the lower function below ``k + 1``,
  Lentz's continued fraction of the upper one above, times ``x**k exp(-x) / gamma(k)``
  (its logarithm near the mean of a shape from 100 on: ``k log1pmx(x / k - 1)`` and
  Stirling's series).
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
    "log_regularized_gamma",
    "polygamma",
    "regularized_gamma",
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


#: ln 2 in two parts: ``e * _LN2_HI`` is exact for ``|e| < 2**20``.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
#: The largest integer whose ``gammaln`` is computed from the exact factorial.
_EXACT_LGAMMA_MAX = 1024.0


def _lgamma_integer(n: int) -> float:
    """``log((n - 1)!)`` rounded once: the factorial as ``m * 2**e`` (``m`` in
    ``[0.5, 1)``), then ``e * ln 2 + log(m)`` with ``ln 2`` in two parts. The library's
    ``lgamma`` is up to an ulp off at integers (CPython's at 255, the C library's at 101),
    which ``exp(a log x - x - gammaln(a))`` amplifies a thousandfold."""
    factorial = math.factorial(n - 1)
    e = factorial.bit_length()
    m = factorial / (1 << e)
    if m == 1.0:  # rounded up to the next binade (as frexp would see it)
        m, e = 0.5, e + 1
    return e * _LN2_HI + (math.log(m) + e * _LN2_LO)


def gammaln(x: float) -> float:
    """``log(abs(gamma(x)))``; ``inf`` at the poles, ``-inf`` at ``-inf`` (as SciPy)."""
    if 3.0 <= x <= _EXACT_LGAMMA_MAX and x == math.floor(x):
        return _lgamma_integer(int(x))
    if x == -math.inf:
        return x
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
        if s * s == 0.0:  # a tiny distance to the pole: the reflection term overflows
            return math.inf
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
    """``x * log(y)`` of float64 arrays, 0 where ``x`` is 0 and ``y`` is not NaN (SciPy's
    ``xlogy``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


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


#: ``log`` of the largest float64: below ``-_MAX_LOG`` the factor ``x**k exp(-x) / gamma(k)``
#: is taken as 0 (the result underflows; SciPy flushes it the same way).
_MAX_LOG = 709.782712893384
#: Above this shape ``P`` and ``Q`` are the leading term of Temme's uniform expansion (the
#: series and the continued fraction overflow or cancel there; the next terms are below an
#: ulp wherever the result is neither 0 nor 1 in float64).
_HUGE_K = 1e40


#: From this shape on, and for ``|x / k - 1| < _LOG1PMX_SERIES`` (near the mean, where the
#: factor is not tiny), the logarithm of the factor ``x**k exp(-x) / gamma(k)`` is
#: ``k log1pmx(x / k - 1)`` plus Stirling's series: ``k log x - x - gammaln(k)`` would keep
#: the rounding of its terms, ``|k log x|`` ulps (3.6e-13 relative at k = 32767), there
#: much larger than the result's logarithm.
_STIRLING_K = 100.0
_LOG_SQRT_2PI = 0.9189385332046728
_LOG1PMX_SERIES = 0.3


def _log1pmx(t: float) -> float:
    """``log(1 + t) - t`` for ``|t| < _LOG1PMX_SERIES``: ``-t**2/2 + t**3/3 - ...``."""
    power, total, n = t, 0.0, 2.0
    while True:
        power *= -t
        term = power / n
        total += term
        if abs(term) <= 1e-17 * abs(total):
            return total
        n += 1.0


def _stirling_correction(k: float) -> float:
    """``gammaln(k) - ((k - 1/2) log k - k + log(2 pi) / 2)`` for ``k >= _STIRLING_K``."""
    r = 1.0 / (k * k)
    return (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r / 1188)))) / k


def _log_igam_factor(k: float, x: float) -> float:
    """``log(x**k exp(-x) / gamma(k))`` for finite ``k, x > 0``."""
    t = (x - k) / k
    if k < _STIRLING_K or not -_LOG1PMX_SERIES < t < _LOG1PMX_SERIES:
        return k * math.log(x) - x - gammaln(k)
    return k * _log1pmx(t) + (0.5 * math.log(k) - _LOG_SQRT_2PI) - _stirling_correction(k)


def _igam_factor(k: float, x: float, flush: bool) -> float:
    """``x**k exp(-x) / gamma(k)``; 0 where its logarithm is below ``-_MAX_LOG`` if
    ``flush``."""
    log_factor = _log_igam_factor(k, x)
    return 0.0 if flush and log_factor < -_MAX_LOG else _exp(log_factor)


def _igam_huge_k(k: float, x: float, lower: bool) -> float:
    """``P(k, x)`` (``lower``) or ``Q(k, x)`` for ``k > _HUGE_K`` and finite ``x > 0``:
    ``erfc(-+eta sqrt(k / 2)) / 2`` with ``eta**2 / 2 = d - log(1 + d)``, ``d = x / k - 1``.

    SciPy's value, NaN, where ``x`` is far from ``k`` (``|x - k| > 0.4 k``) and ``x**k``
    overflows as ``gamma(k)`` does (its factor ``x**k exp(-x) / gamma(k)`` is then
    ``inf / inf``)."""
    if abs(x - k) > 0.4 * k and math.isnan(k * math.log(x) - x - gammaln(k)):
        return math.nan
    d = (x - k) / k
    if d <= -1.0:  # x / k underflows: x is far below the bulk
        return 0.0 if lower else 1.0
    if abs(d) < 1e-3:  # d - log1p(d) by its series, free of cancellation
        half_eta2 = d * d * (0.5 - d * (1 / 3 - d * (0.25 - d * (0.2 - d / 6))))
    else:
        half_eta2 = d - math.log1p(d)
    z = math.copysign(math.sqrt(2.0 * half_eta2), d) * math.sqrt(0.5 * k)
    return 0.5 * math.erfc(-z if lower else z)


#: From this shape on, near the mean (``|x / k - 1| < _LOG1PMX_SERIES``), ``P`` and ``Q`` are
#: Temme's uniform expansion to its second term (DLMF 8.12.3): the power series and the
#: continued fraction need about ``8 sqrt(k)`` terms there (more than ``_MAX_ITER`` from
#: ``k`` near 1.5e8, where they stop short: ``P(1e12, 1e12)`` came out 0.04 instead of 0.5)
#: and lose about ``sqrt(k)`` ulps summing them; the third term is below an ulp here.
_LARGE_K = 1e6


def _igam_temme(k: float, x: float, lower: bool) -> float:
    """``P(k, x)`` (``lower``) or ``Q(k, x)`` for ``k > _LARGE_K`` and ``|x / k - 1| <
    _LOG1PMX_SERIES``: ``Q = erfc(eta sqrt(k / 2)) / 2 + R``, ``P = erfc(-eta sqrt(k / 2)) / 2
    - R``, ``R = exp(-k eta**2 / 2) / sqrt(2 pi k) (c0(eta) + c1(eta) / k)``, with ``eta =
    d sqrt(g)``, ``g = 2 (d - log(1 + d)) / d**2``, ``d = x / k - 1``.

    ``c0 = 1 / d - 1 / eta = h / (sqrt(g) (sqrt(g) + 1))`` with ``h = (g - 1) / d``, summed
    as its series (``sum 2 (-1)**n d**(n - 3) / n``, ``n >= 3``), free of cancellation;
    ``c1`` is its Taylor polynomial ``-1/540 - eta/288 + eta**2/378``, whose error is far
    below an ulp of the result once divided by ``k``."""
    d = (x - k) / k
    h, power, n, sign = 0.0, 1.0, 3.0, -1.0
    while True:
        term = sign * 2.0 * power / n
        h += term
        if abs(term) <= 1e-17 * abs(h):
            break
        power *= d
        sign = -sign
        n += 1.0
    root = math.sqrt(1.0 + d * h)
    eta = d * root
    c0 = h / (root * (root + 1.0))
    c1 = -1.0 / 540.0 - eta / 288.0 + eta * eta / 378.0
    z = eta * math.sqrt(0.5 * k)
    r = math.exp(k * _log1pmx(d)) / math.sqrt(2.0 * math.pi * k) * (c0 + c1 / k)
    return 0.5 * math.erfc(-z) - r if lower else 0.5 * math.erfc(z) + r


def _temme_applies(k: float, x: float) -> bool:
    """Whether :func:`_igam_temme` computes ``P(k, x)`` and ``Q(k, x)``."""
    return k > _LARGE_K and abs(x - k) < _LOG1PMX_SERIES * k


def _lower_series(k: float, x: float) -> float:
    """``P(k, x)`` by its power series (for ``x < k + 1``), less the factor
    ``x**k exp(-x) / gamma(k)``."""
    term = 1.0 / k
    total = term
    a = k
    for _ in range(_MAX_ITER):
        a += 1.0
        term *= x / a
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total


#: Below this ``k``, ``Q(k, x)`` for ``x < k + 1`` is summed directly (``1 - P`` would lose
#: the digits of ``Q``, which is about ``k * E1(x)`` there).
_SMALL_K = 1e-3
#: Euler's constant and ``zeta(2..6)``: the series of ``log(gamma(1 + k))`` for small ``k``.
_EULER = 0.5772156649015329
_ZETAS = (
    1.6449340668482264,
    1.2020569031595942,
    1.0823232337111382,
    1.0369277551433699,
    1.0173430619844491,
)


def _gammaln1p_small(k: float) -> float:
    """``log(gamma(1 + k))`` for ``|k| <= _SMALL_K`` (``-euler k + sum (-k)**n zeta(n) / n``)."""
    total = 0.0
    for n in range(len(_ZETAS) + 1, 1, -1):
        total = total * -k + _ZETAS[n - 2] / n
    return k * (-_EULER + k * total)


def _upper_small_k(k: float, x: float) -> float:
    """``Q(k, x)`` for ``0 < k < _SMALL_K`` and ``x < k + 1``: ``1 - x**k / gamma(k + 1)``
    (by ``expm1``) less ``x**k / gamma(k) * sum((-x)**n / (n! (k + n)), n >= 1)``."""
    log_xk = k * math.log(x)
    head = -math.expm1(log_xk - _gammaln1p_small(k))
    term, total = 1.0, 0.0
    for n in range(1, _MAX_ITER):
        term *= -x / n
        piece = term / (k + n)
        total += piece
        if abs(piece) < abs(total) * _EPS:
            break
    return head - _exp(log_xk - gammaln(k)) * total


def _upper_fraction(k: float, x: float) -> float:
    """``Q(k, x)`` by its continued fraction (Lentz's method, for ``x >= k + 1``), less the
    factor ``x**k exp(-x) / gamma(k)``."""
    b = x + 1.0 - k
    c = 1.0 / _TINY
    d = 1.0 / b if b != 0.0 else math.inf  # C's division (x = k + 1 rounded)
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
    return h


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


def regularized_gamma(k: float, x: float, lower: bool, flush: bool = True) -> float:
    """``P(k, x)`` (``lower``) or ``Q(k, x) = 1 - P(k, x)``, the regularized incomplete
    gamma functions.

    Parameters
    ----------
    k, x
        The shape and the argument.
    lower
        Whether ``P`` (else ``Q``) is wanted.
    flush
        Whether the power series or continued fraction whose factor
        ``x**k exp(-x) / gamma(k)`` underflows (its logarithm below ``-709.78``) gives 0,
        as SciPy does; the inverses keep the subnormal values, which their root finding
        needs.

    Returns
    -------
    float
        The value.
    """
    edge = _igam_edge(k, x, lower)
    if edge is not None:
        return edge
    if k > _HUGE_K:
        return _igam_huge_k(k, x, lower)
    if _temme_applies(k, x):
        return _igam_temme(k, x, lower)
    if x < k + 1.0:
        if k < _SMALL_K:
            q = _upper_small_k(k, x)
            return 1.0 - q if lower else q
        p = _lower_series(k, x) * _igam_factor(k, x, flush)
        return p if lower else 1.0 - p
    q = _upper_fraction(k, x) * _igam_factor(k, x, flush)
    return 1.0 - q if lower else q


def log_regularized_gamma(k: float, x: float, lower: bool) -> float:
    """``log(P(k, x))`` (``lower``) or ``log(Q(k, x))``, finite where ``P`` or ``Q``
    underflows (``-inf`` where it is 0), for the root finding of the inverses.

    Parameters
    ----------
    k, x
        The shape and the argument.
    lower
        Whether ``log(P)`` (else ``log(Q)``) is wanted.

    Returns
    -------
    float
        The logarithm.
    """
    direct = x < k + 1.0  # the series gives P, the continued fraction Q
    if (
        _igam_edge(k, x, lower) is not None
        or k > _HUGE_K
        or _temme_applies(k, x)
        or (direct and k < _SMALL_K)
        or direct != lower
    ):
        value = regularized_gamma(k, x, lower, flush=False)
        return math.log(value) if value > 0.0 else -math.inf
    log_factor = _log_igam_factor(k, x)
    total = _lower_series(k, x) if direct else _upper_fraction(k, x)
    return math.log(total) + log_factor if total > 0.0 else -math.inf


def gammainc(k: float, x: float) -> float:
    """The regularized lower incomplete gamma function ``P(k, x)``."""
    return regularized_gamma(k, x, True)


def gammaincc(k: float, x: float) -> float:
    """The regularized upper incomplete gamma function ``Q(k, x) = 1 - P(k, x)``."""
    return regularized_gamma(k, x, False)


def vectorized(fn: Callable[..., float]) -> Callable[..., Any]:
    """``fn`` of floats applied elementwise to float64 arrays (broadcasting them)."""
    vec = np.vectorize(fn, otypes=[np.float64])
    vec.__name__ = fn.__name__  # type: ignore[attr-defined]
    return vec  # type: ignore[no-any-return]
