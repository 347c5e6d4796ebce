"""More special functions in double precision, for the scalar Ops of ``opweave.scalar.special``.

Pure Python on :mod:`math` (SciPy is optional), one element at a time like
:mod:`opweave_python.special_math`:

* ``erfcinv``: ``erfinv(1 - z)`` on ``[0.5, 1.5]`` (where ``1 - z`` is exact), else Newton's
  method on ``log(erfc(x)) = log(erfcx(x)) - x**2``, which neither underflows nor loses the
  relative accuracy of tiny ``z``; ``ndtri_exp`` solves the same equation for
  ``log(z) = y + log(2)``, so it works down to ``y = -1e300``;
* ``iv``/``ive`` (``i0``, ``i1``): the power series (positive terms, scaled by ``exp(-|x|)``
  for ``ive``; for integer orders up to 170 its first term from ``pow`` and the factorial)
  and the asymptotic expansion in ``1/x`` where ``x > max(40, v**2)``;
* ``j0``/``j1``: the power series for ``|x| <= 2``, Miller's backward recurrence normalized
  by ``J0 + 2 (J2 + J4 + ...) = 1`` up to 25, Hankel's asymptotic expansion beyond;
* ``betainc``: the continued fraction of the incomplete beta function (modified Lentz);
* ``gammaincinv``/``gammainccinv``: Newton's method on ``log(gammainc)`` (or on
  ``log(gammaincc)`` in the upper tail) from the initial guesses of Numerical Recipes
  (``invgammp``) or the leading term of the series, safeguarded to stay positive.
"""

from __future__ import annotations

import math

from opweave_python.special_math import erfcx, erfinv, gammaln, log_regularized_gamma

__all__ = [
    "betainc",
    "erfcinv",
    "gammainccinv",
    "gammaincinv",
    "i0",
    "i1",
    "iv",
    "ive",
    "j0",
    "j1",
    "ndtri_exp",
]

_EPS = 2.220446049250313e-16
_TINY = 1e-300
_SQRT_PI = math.sqrt(math.pi)
_LOG2 = math.log(2.0)
#: The log of the smallest positive double (below it, ``exp`` gives 0).
_LOG_SMALLEST = -745.2


# ====================================================================== inverse error functions


def _log_erfc_inverse(logz: float) -> float:
    """``x >= 0`` with ``log(erfc(x)) = logz`` (for ``logz <= log(0.5)``)."""
    x = math.sqrt(max(-logz, 0.0))
    for _ in range(100):
        e = erfcx(x)
        g = math.log(e) - x * x - logz
        step = g / (-2.0 / (_SQRT_PI * e))
        x -= step
        if abs(step) <= 4 * _EPS * abs(x):
            break
    return x


def erfcinv(z: float) -> float:
    """The inverse of ``erfc`` on ``[0, 2]`` (``inf`` at 0, ``-inf`` at 2, NaN outside)."""
    if math.isnan(z) or z < 0.0 or z > 2.0:
        return math.nan
    if z == 0.0:
        return math.inf
    if z == 2.0:
        return -math.inf
    if 0.5 <= z <= 1.5:
        return erfinv(1.0 - z)
    if z > 1.5:
        return -_log_erfc_inverse(math.log(2.0 - z))
    return _log_erfc_inverse(math.log(z))


def ndtri_exp(y: float) -> float:
    """``ndtri(exp(y))``: the standard normal quantile of the probability ``exp(y)``."""
    if math.isnan(y) or y > 0.0:
        return math.nan
    if y == 0.0:
        return math.inf
    if y == -math.inf:
        return -math.inf
    if y > -_LOG2:  # p > 0.5: x = sqrt(2) erfcinv(2 (1 - p))
        return math.sqrt(2.0) * erfcinv(-2.0 * math.expm1(y))
    if y > -2.0 * _LOG2:  # 2p in [0.5, 1]
        return -math.sqrt(2.0) * erfinv(1.0 - 2.0 * math.exp(y))
    return -math.sqrt(2.0) * _log_erfc_inverse(y + _LOG2)


# ====================================================================== modified Bessel functions


def _is_int(v: float) -> bool:
    return math.isfinite(v) and v == math.floor(v)


def _gamma_sign(z: float) -> float:
    return -1.0 if z < 0 and math.floor(z) % 2 == 1 else 1.0


#: The largest integer order whose factorial is a finite double.
_FACTORIAL_MAX = 170.0


def _iv_first_term(v: float, half: float, log_half: float, log_t0: float, scale: float) -> float:
    """``exp(-scale) (x/2)**v / gamma(v + 1)`` (its logarithm ``log_t0``): for an integer
    order up to 170 whose powers stay normal, ``pow`` and the factorial, rounded once each
    (``exp(log_t0)`` carries the rounding of the logarithm into the result: about
    ``|log_t0|`` ulps, 60 to 290 at the order 100)."""
    direct = 0.0 <= v <= _FACTORIAL_MAX and v == math.floor(v) and half > 0.0
    if direct and abs(v * log_half) < 700.0 and scale < 700.0 and log_t0 > -700.0:
        return math.pow(half, v) / float(math.factorial(int(v))) * math.exp(-scale)
    return _gamma_sign(v + 1.0) * math.exp(log_t0)


def _iv_series(v: float, x: float, scale: float) -> float:
    """``exp(-scale) * sum((x/2)**(2k+v) / (k! gamma(v+k+1)))`` for ``x > 0``."""
    half = 0.5 * x  # 0 for the smallest subnormal x: then log(x) - log(2)
    log_half = math.log(half) if half > 0.0 else math.log(x) - _LOG2
    log_t0 = v * log_half - gammaln(v + 1.0) - scale
    if log_t0 > 709.0:
        return math.inf
    term = _iv_first_term(v, half, log_half, log_t0, scale)
    total = term
    q = 0.25 * x * x
    k = 0
    while True:
        k += 1
        term *= q / (k * (v + k))
        total += term
        if abs(term) <= _EPS * abs(total) * 0.5 and k > v:
            return total
        if not math.isfinite(total) or k > 100000:
            return total


def _iv_asymptotic_scaled(v: float, x: float) -> float:
    """``exp(-x) iv(v, x)`` by the asymptotic expansion (``x`` large, ``x > v**2``)."""
    mu = 4.0 * v * v
    term, total = 1.0, 1.0
    for k in range(1, 200):
        new = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if abs(new) >= abs(term) and k > 2:
            break
        term = new
        total += term
        if abs(term) <= _EPS * abs(total) * 0.5:
            break
    return total / math.sqrt(2.0 * math.pi * x)


def _iv(v: float, x: float, scaled: bool) -> float:
    edge = _iv_edge(v, x, scaled)
    if edge is not None:
        return edge
    if x < 0.0:
        if not _is_int(v):
            return math.nan
        r = _iv(v, -x, scaled)
        return -r if int(v) % 2 else r
    if v < 0.0 and _is_int(v):
        v = -v
    if x == 0.0:
        if v == 0.0:
            return 1.0
        if v > 0.0:
            return 0.0
        return math.nan if scaled else math.inf  # SciPy's values at 0 for v < 0
    if x > 40.0 and x > v * v:
        r = _iv_asymptotic_scaled(v, x)
        if scaled:
            return r
        # past 709 exp(x) overflows; r may underflow to 0 where x is huge
        return math.copysign(math.inf, r) if x > 709.0 else r * math.exp(x)
    return _iv_series(v, x, x if scaled else 0.0)


def _iv_edge(v: float, x: float, scaled: bool) -> float | None:
    """SciPy's value where an argument is NaN or infinite (``None`` elsewhere): NaN for an
    infinite ``x``; for an infinite order, 0 (``iv``) or NaN (``ive``)."""
    if math.isnan(v) or math.isnan(x) or math.isinf(x):
        return math.nan
    if math.isinf(v):
        return math.nan if scaled else 0.0
    return None


def iv(v: float, x: float) -> float:
    """The modified Bessel function of the first kind of real order ``v``."""
    return _iv(v, x, False)


def ive(v: float, x: float) -> float:
    """``iv(v, x) * exp(-abs(x))``."""
    return _iv(v, x, True)


def i0(x: float) -> float:
    """The modified Bessel function of the first kind of order 0."""
    return _iv(0.0, x, False)


def i1(x: float) -> float:
    """The modified Bessel function of the first kind of order 1."""
    return _iv(1.0, x, False)


# ====================================================================== Bessel functions


def _j_series(n: int, x: float) -> float:
    q = -0.25 * x * x
    term = (0.5 * x) ** n / math.factorial(n)
    total = term
    for k in range(1, 60):
        term *= q / (k * (n + k))
        total += term
        if abs(term) <= _EPS * abs(total) * 0.25:
            break
    return total


def _j_miller(x: float) -> tuple[float, float]:
    """``(J0(x), J1(x))`` for ``0 < x <= 25`` by backward recurrence."""
    top = 2 * ((int(x) + 40) // 2)
    j_next, j = 0.0, 1e-30
    norm = 0.0
    j0 = j1 = 0.0
    for k in range(top, 0, -1):  # j = J_k, j_next = J_{k+1}
        if k % 2 == 0:
            norm += 2.0 * j
        j_prev = 2.0 * k / x * j - j_next
        j_next, j = j, j_prev
        if k == 1:
            j1 = j_next
        if abs(j) > 1e250:
            j *= 1e-250
            j_next *= 1e-250
            norm *= 1e-250
            j1 *= 1e-250
    j0 = j
    norm += j0
    return j0 / norm, j1 / norm


def _hankel_amplitude(x: float) -> float:
    """``sqrt(2 / (pi x))``, also where ``pi x`` overflows (``x`` near the largest float)."""
    scaled = math.pi * x
    if math.isinf(scaled):
        return math.sqrt(2.0 / math.pi) / math.sqrt(x)
    return math.sqrt(2.0 / scaled)


def _j_hankel(n: int, x: float) -> float:
    mu = 4.0 * n * n
    p, q = 1.0, 0.0
    term = 1.0
    for k in range(1, 100):
        new = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if abs(new) >= abs(term) and k > 2:
            break
        term = new
        if k % 2:
            q += term if (k // 2) % 2 == 0 else -term
        else:
            p += term if (k // 2) % 2 == 0 else -term
        if abs(term) < _EPS * 0.25:
            break
    c = (0.5 * n + 0.25) * math.pi
    cos_chi = math.cos(x) * math.cos(c) + math.sin(x) * math.sin(c)
    sin_chi = math.sin(x) * math.cos(c) - math.cos(x) * math.sin(c)
    return _hankel_amplitude(x) * (p * cos_chi - q * sin_chi)


def _jn(n: int, x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x):  # SciPy's value (the limit would be 0)
        return math.nan
    sign = -1.0 if (x < 0 and n % 2) else 1.0
    x = abs(x)
    if x <= 2.0:
        return sign * _j_series(n, x)
    if x <= 25.0:
        return sign * _j_miller(x)[n]
    return sign * _j_hankel(n, x)


def j0(x: float) -> float:
    """The Bessel function of the first kind of order 0."""
    return _jn(0, x)


def j1(x: float) -> float:
    """The Bessel function of the first kind of order 1."""
    return _jn(1, x)


# ====================================================================== incomplete beta function


def _beta_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def _stirling_rest(z: float) -> float:
    """``gammaln(z) - ((z - 1/2) log(z) - z + log(2 pi) / 2)`` for ``z >= 1e5`` (Stirling's
    series; its first omitted term is below ``1e-48`` there)."""
    r = 1.0 / (z * z)
    return (1.0 / 12.0 - r * (1.0 / 360.0 - r * (1.0 / 1260.0 - r / 1680.0))) / z


def _log_beta(a: float, b: float) -> float:
    """``log(B(a, b))`` for ``a, b > 0``, to a few ulps: where the larger argument is
    ``1e5`` or more, ``gammaln(a + b) - gammaln(a)`` is taken from Stirling's series
    (``(a - 1/2) log1p(b / a) + b log(a + b) - b`` and the series' rests) rather than as a
    difference of two large ``gammaln`` values, which loses ``1e-16 * a log(a)``."""
    if a < b:
        a, b = b, a
    if a >= 1e5:
        rise = (a - 0.5) * math.log1p(b / a) + b * math.log(a + b) - b
        return gammaln(b) - (rise + _stirling_rest(a + b) - _stirling_rest(a))
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` (``a, b > 0``, ``0 <= x <= 1``;
    SciPy's limits where ``a`` or ``b`` is 0 or infinite; NaN elsewhere)."""
    if math.isnan(a) or math.isnan(b) or math.isnan(x):
        return math.nan
    if a < 0.0 or b < 0.0 or x < 0.0 or x > 1.0:
        return math.nan
    # SciPy's limits: all the mass at 0 (a = 0 or b = inf) or at 1 (b = 0 or a = inf)
    if (a == 0.0 and b == 0.0) or (math.isinf(a) and math.isinf(b)):
        return math.nan
    if a == 0.0 or math.isinf(b):
        return 1.0 if x > 0.0 else 0.0
    if b == 0.0 or math.isinf(a):
        return 0.0 if x < 1.0 else 1.0
    if x == 0.0 or x == 1.0:
        return x
    log_front = a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


# ====================================================================== inverse incomplete gamma


def _gamma_guess(a: float, p: float, q: float) -> float:
    """Numerical Recipes' first guess of ``x`` with ``gammainc(a, x) = p = 1 - q``."""
    if a > 1.0:
        pp = p if p < 0.5 else q
        t = math.sqrt(-2.0 * math.log(pp))
        x = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
        if p < 0.5:
            x = -x
        return max(1e-3, a * (1.0 - 1.0 / (9.0 * a) - x / (3.0 * math.sqrt(a))) ** 3)
    t = 1.0 - a * (0.253 + a * 0.12)
    if p < t:
        return (p / t) ** (1.0 / a)
    return 1.0 - math.log(q / max(1.0 - t, _TINY))


def _gamma_inverse(a: float, p: float, q: float, upper: bool) -> float:
    """``x`` with ``gammainc(a, x) = p`` (``q = 1 - p``), by Newton's method on
    ``log(P(a, x)) = log(p)``, or on ``log(Q(a, x)) = log(q)`` where ``upper``."""
    log_p = math.log(p) if p < 0.5 else math.log1p(-q)
    if (log_p + gammaln(a + 1.0)) / a < _LOG_SMALLEST:
        return 0.0  # P ~ x**a / gamma(a + 1) there: the solution underflows to 0
    x = max(_gamma_guess(a, p, q), _TINY)
    if p < 0.5:  # the leading term of the series: P ~ x**a / gamma(a + 1)
        small = math.exp((math.log(p) + gammaln(a + 1.0)) / a)
        if small < 0.2 * a:
            x = small
    lg = gammaln(a)
    log_target = math.log(q if upper else p)
    for _ in range(300):
        if x <= 0.0:
            return 0.0
        log_val = log_regularized_gamma(a, x, not upper) if math.isfinite(x) else -math.inf
        if log_val == -math.inf:
            x = x * 0.5 if upper else x * 2.0
            continue
        log_ratio = log_val - (-x + (a - 1.0) * math.log(x) - lg)  # log(val / dP/dx)
        r = log_val - log_target
        step = r * math.exp(min(log_ratio, 700.0))
        new = x + step if upper else x - step
        if new <= 0.0:
            new = 0.1 * x
        if abs(new - x) <= 4 * _EPS * new:
            return new
        x = new
    return x


def _gamma_inverse_edge(a: float, y: float, lower: bool) -> float | None:
    """SciPy's value outside the open domain (``None`` inside): NaN outside ``a >= 0``,
    ``0 <= y <= 1``; at ``y = 0`` and ``y = 1`` the ends 0 and ``inf`` of the range (for
    every ``a``, 0 and ``inf`` included); NaN for ``0 < y < 1`` where ``a`` is 0 or
    ``inf`` (the function of ``x`` is constant there)."""
    if math.isnan(a) or math.isnan(y) or a < 0.0 or y < 0.0 or y > 1.0:
        return math.nan
    if y in (0.0, 1.0):
        return 0.0 if (y == 0.0) == lower else math.inf
    if a == 0.0 or math.isinf(a):
        return math.nan
    return None


#: Above this shape both inverses are ``a`` itself: the solution is ``a + sqrt(a) z + O(1)``
#: with ``|z| < 39`` for every float ``y`` in ``(0, 1)``, within half an ulp of ``a``.
_HUGE_A = 1e40


def gammaincinv(a: float, y: float) -> float:
    """The inverse of ``gammainc(a, .)``: ``x`` with ``gammainc(a, x) = y`` (``0 <= y <= 1``)."""
    edge = _gamma_inverse_edge(a, y, True)
    if edge is not None:
        return edge
    if a > _HUGE_A:
        return a
    return _gamma_inverse(a, y, 1.0 - y, upper=y > 0.5)


def gammainccinv(a: float, y: float) -> float:
    """The inverse of ``gammaincc(a, .)``: ``x`` with ``gammaincc(a, x) = y``."""
    edge = _gamma_inverse_edge(a, y, False)
    if edge is not None:
        return edge
    if a > _HUGE_A:
        return a
    return _gamma_inverse(a, 1.0 - y, y, upper=y < 0.5)
