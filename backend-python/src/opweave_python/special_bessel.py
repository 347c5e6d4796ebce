"""Bessel functions of real order in double precision, for :mod:`opweave.scalar.bessel`.

Pure Python on :mod:`math`, one element at a time (like :mod:`opweave_python.special_math`):

* ``jv(v, x)``: the power series where it has no cancellation (``x**2 / 4 <= (v + 1) / 2``,
  or ``x <= 2``), Hankel's asymptotic expansion for ``x >= max(25, v**2 / 2)``, otherwise
  Steed's method (the continued fractions CF1 and CF2 of Numerical Recipes' ``bessjy``,
  which also give ``Y_v``); orders 0 and ``+-1`` are ``j0`` and ``+-j1`` of
  :mod:`opweave_python.special_math_extra`. Negative orders use
  ``J_{-v} = cos(v pi) J_v - sin(v pi) Y_v`` (``(-1)**n J_n`` for integers) and negative
  ``x`` the parity of integer orders (NaN for other orders, as SciPy gives);
* ``kve(v, x) = exp(x) K_v(x)``: Temme's series below ``x = 2`` and Steed's continued
  fraction CF2 above, for the order ``mu`` in ``[-1/2, 1/2]``, then the (stable) forward
  recurrence up to ``v``; ``K_{-v} = K_v``.

The values at the edges are SciPy's: ``jv(v, 0)`` is 1, 0 or ``+-inf``, ``kve(v, 0)`` is
``inf`` and ``kve(v, x < 0)`` NaN; ``kve(v, inf)`` is 0 (the limit; SciPy answers NaN but
``kv(v, inf) = 0``).
"""

from __future__ import annotations

import math

from opweave_python.special_math_extra import j0, j1

__all__ = ["jv", "jy", "kve"]

_EPS = 1e-16
_LN2 = math.log(2.0)
_FPMIN = 1e-300
_BIG = 1e250
_MAXIT = 1_000_000
#: The longest recurrence over the order that is run (longer ones give NaN).
_MAX_COUNT = 10_000_000

# 1/Gamma(z) = sum_k C[k] z**k (Abramowitz and Stegun 6.1.34), C[0] = 0.
_RGAMMA = (
    0.0,
    1.0,
    0.5772156649015329,
    -0.6558780715202538,
    -0.0420026350340952,
    0.1665386113822915,
    -0.0421977345555443,
    -0.0096219715278770,
    0.0072189432466630,
    -0.0011651675918591,
    -0.0002152416741149,
    0.0001280502823882,
    -0.0000201348547807,
    -0.0000012504934821,
    0.0000011330272320,
    -0.0000002056338417,
    0.0000000061160950,
    0.0000000050020075,
    -0.0000000011812746,
    0.0000000001043427,
    0.0000000000077823,
    -0.0000000000036968,
    0.0000000000005100,
    -0.0000000000000206,
    -0.0000000000000054,
    0.0000000000000014,
    0.0000000000000001,
)


def _is_int(v: float) -> bool:
    return math.isfinite(v) and v == math.floor(v)


def _temme_gammas(mu: float) -> tuple[float, float, float, float]:
    """``(gam1, gam2, 1/Gamma(1 + mu), 1/Gamma(1 - mu))`` for ``|mu| <= 1/2`` (Temme)."""
    gampl = 1.0 / math.gamma(1.0 + mu)
    gammi = 1.0 / math.gamma(1.0 - mu)
    if abs(mu) > 0.1:
        gam1 = (gammi - gampl) / (2.0 * mu)
    else:  # -(C[2] + C[4] mu**2 + ...): no cancellation
        mu2 = mu * mu
        gam1, power = 0.0, 1.0
        for k in range(2, len(_RGAMMA), 2):
            gam1 -= _RGAMMA[k] * power
            power *= mu2
    return gam1, 0.5 * (gammi + gampl), gampl, gammi


# ====================================================================== J and Y


def _j_series_first_term(v: float, x: float) -> float | None:
    """``(x / 2)**v / Gamma(v + 1)`` for ``0 < v + 1 <= 170`` where the power neither
    overflows nor underflows, else ``None``. Taken directly, not as the exponential of its
    logarithm, which would scale the logarithm's rounding error by its magnitude."""
    if not 0.0 < v + 1.0 <= 170.0:
        return None
    log_x_power = v * math.log(x)
    if not (-700.0 < log_x_power < 700.0 and -700.0 < log_x_power - v * _LN2 < 700.0):
        return None
    # x**v and 2**-v apart: x / 2 loses digits (or all) when it is subnormal
    return math.pow(x, v) * math.pow(0.5, v) / math.gamma(v + 1.0)


def _j_series(v: float, x: float) -> float:
    """``J_v(x)`` by its power series (``x > 0``, ``v`` not a negative integer)."""
    lg = math.lgamma(v + 1.0)
    sign = 1.0
    if v + 1.0 < 0.0 and math.floor(v + 1.0) % 2 == 1:
        sign = -1.0
    term = _j_series_first_term(v, x)
    if term is None:
        log_t0 = v * (math.log(x) - _LN2) - lg  # x / 2 underflows for the smallest x
        if log_t0 > 709.78:
            return sign * math.inf
        term = sign * math.exp(log_t0) if log_t0 > -745.2 else 0.0
    if term == 0.0:
        return 0.0
    q = -0.25 * x * x
    total = term
    for k in range(1, 10_000):
        term *= q / (k * (v + k))
        total += term
        if abs(term) <= _EPS * abs(total) and k > -v:
            break
    return total


def _hankel(v: float, x: float) -> tuple[float, float]:
    """``(J_v(x), Y_v(x))`` by Hankel's asymptotic expansion (``x`` large)."""
    mu = 4.0 * v * v
    p, q, term = 1.0, 0.0, 1.0
    for k in range(1, 400):
        new = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if abs(new) >= abs(term) and (2 * k - 1) ** 2 > mu:
            break
        term = new
        sign = 1.0 if (k // 2) % 2 == 0 else -1.0
        if k % 2:
            q += sign * term
        else:
            p += sign * term
        if abs(term) < _EPS * 0.25 * max(abs(p), abs(q)):
            break
    # cos and sin of x - phase by the addition formulas: x itself is exact, where the
    # rounded difference would be up to half an ulp of x off (1e-12 relative near 65535).
    phase = (0.5 * v + 0.25) * math.pi
    c = math.cos(x) * math.cos(phase) + math.sin(x) * math.sin(phase)
    s = math.sin(x) * math.cos(phase) - math.cos(x) * math.sin(phase)
    scaled = math.pi * x  # overflows near the largest float: the amplitude does not
    amp = math.sqrt(2.0 / math.pi) / math.sqrt(x) if math.isinf(scaled) else math.sqrt(2.0 / scaled)
    return amp * (p * c - q * s), amp * (p * s + q * c)


def _steed(v: float, x: float) -> tuple[float, float]:
    """``(J_v(x), Y_v(x))`` for ``v >= 0`` and ``x >= 2`` (Steed's method: CF1 for
    ``J'_v / J_v``, CF2 for ``p + iq`` at the order ``mu = v - nl`` near ``x``)."""
    nl = max(0, int(v - x + 1.5))
    mu = v - nl
    xi = 1.0 / x
    xi2 = 2.0 * xi
    w = xi2 / math.pi
    # CF1: f = J'_v / J_v by the modified Lentz method
    isign = 1.0
    h = max(v * xi, _FPMIN)
    b, d, c = xi2 * v, 0.0, h
    for _ in range(_MAXIT):
        b += xi2
        d = b - d
        if abs(d) < _FPMIN:
            d = _FPMIN
        c = b - 1.0 / c
        if abs(c) < _FPMIN:
            c = _FPMIN
        d = 1.0 / d
        delta = c * d
        h *= delta
        if d < 0.0:
            isign = -isign
        if abs(delta - 1.0) < _EPS:
            break
    # downward recurrence of J (unnormalized) from v to mu, rescaled against overflow
    rjl = isign * 1e-30
    rjpl = h * rjl
    rjl1 = rjl
    fact = v * xi
    for _ in range(nl):
        rjtemp = fact * rjl + rjpl
        fact -= xi
        rjpl = fact * rjtemp - rjl
        rjl = rjtemp
        if abs(rjl) > _BIG:
            rjl /= _BIG
            rjpl /= _BIG
            rjl1 /= _BIG
    if rjl == 0.0:
        rjl = _EPS
    f = rjpl / rjl
    # CF2: p + iq
    mu2 = mu * mu
    a = 0.25 - mu2
    p, q = -0.5 * xi, 1.0
    br, bi = 2.0 * x, 2.0
    fact = a * xi / (p * p + q * q)
    cr, ci = br + q * fact, bi + p * fact
    den = br * br + bi * bi
    dr, di = br / den, -bi / den
    dlr, dli = cr * dr - ci * di, cr * di + ci * dr
    p, q = p * dlr - q * dli, p * dli + q * dlr
    for i in range(2, _MAXIT):
        a += 2 * (i - 1)
        bi += 2.0
        dr, di = a * dr + br, a * di + bi
        if abs(dr) + abs(di) < _FPMIN:
            dr = _FPMIN
        fact = a / (cr * cr + ci * ci)
        cr, ci = br + cr * fact, bi - ci * fact
        if abs(cr) + abs(ci) < _FPMIN:
            cr = _FPMIN
        den = dr * dr + di * di
        dr, di = dr / den, -di / den
        dlr, dli = cr * dr - ci * di, cr * di + ci * dr
        p, q = p * dlr - q * dli, p * dli + q * dlr
        if abs(dlr - 1.0) + abs(dli) < _EPS:
            break
    gam = (p - f) / q
    rjmu = math.copysign(math.sqrt(w / ((p - f) * gam + q)), rjl)
    rymu = rjmu * gam
    rymup = rymu * (p + q / gam)
    ry1 = mu * xi * rymu - rymup
    rj = rjl1 * (rjmu / rjl)
    for i in range(1, nl + 1):  # forward recurrence of Y (stable)
        rymu, ry1 = ry1, (mu + i) * xi2 * ry1 - rymu
        if math.isinf(rymu):
            break
    return rj, rymu


def jy(v: float, x: float) -> tuple[float, float]:
    """``(J_v(x), Y_v(x))`` for ``v >= 0`` and ``x >= 2``."""
    if x >= max(25.0, 0.5 * v * v):
        return _hankel(v, x)
    return _steed(v, x)


def _jv_positive_x(v: float, x: float) -> float:
    if v >= 0.0:
        if x <= 2.0 or 0.25 * x * x <= 0.5 * (v + 1.0):
            return _j_series(v, x)
        return jy(v, x)[0]
    if x <= 2.0:
        return _j_series(v, x)
    j, y = jy(-v, x)
    s, c = math.sin(-v * math.pi), math.cos(-v * math.pi)
    return c * j - s * y if math.isfinite(y) else -s * y


def jv(v: float, x: float) -> float:
    """The Bessel function of the first kind of real order ``v``."""
    v, x = float(v), float(x)
    if math.isnan(v) or math.isnan(x) or math.isinf(x):
        return math.nan
    if math.isinf(v):  # SciPy's values: the limit 0 for 0 <= x <= 2, NaN elsewhere
        return 0.0 if 0.0 <= x <= 2.0 else math.nan
    # Orders 0 and +-1 are j0 and +-j1 (as in Cephes' jv): Miller's recurrence is more
    # accurate than Steed's method over most of (2, 25) (jv(1, 7): 6 ulps for 448).
    if v == 0.0:
        return j0(x)
    if abs(v) == 1.0:
        return j1(x) if v > 0.0 else -j1(x)
    if _is_int(v):
        n = int(v)
        sign = -1.0 if n < 0 and n % 2 else 1.0
        if x < 0.0 and n % 2:
            sign = -sign
        if x == 0.0:
            return 1.0 if n == 0 else 0.0
        return sign * _jv_positive_x(abs(v), abs(x))
    if x < 0.0:
        return math.nan
    if x == 0.0:
        if v > 0.0:
            return 0.0
        return math.inf if math.floor(v) % 2 else -math.inf
    return _jv_positive_x(v, x)


# ====================================================================== K


def _k_temme(mu: float, x: float) -> tuple[float, float]:
    """``(K_mu(x), K_{mu+1}(x))`` for ``|mu| <= 1/2`` and ``0 < x < 2`` (Temme's series)."""
    x2 = 0.5 * x
    pimu = math.pi * mu
    fact = 1.0 if abs(pimu) < _EPS else pimu / math.sin(pimu)
    d = _LN2 - math.log(x)  # -log(x / 2); x / 2 underflows for the smallest x
    e = mu * d
    fact2 = 1.0 if abs(e) < _EPS else math.sinh(e) / e
    gam1, gam2, gampl, gammi = _temme_gammas(mu)
    ff = fact * (gam1 * math.cosh(e) + gam2 * fact2 * d)
    total = ff
    e = math.exp(e)
    p = 0.5 * e / gampl
    q = 0.5 / (e * gammi)
    c = 1.0
    d = x2 * x2
    total1 = p
    mu2 = mu * mu
    for i in range(1, _MAXIT):
        ff = (i * ff + p + q) / (i * i - mu2)
        c *= d / i
        p /= i - mu
        q /= i + mu
        delta = c * ff
        total += delta
        total1 += c * (p - i * ff)
        if abs(delta) < abs(total) * _EPS:
            break
    return total, total1 * 2.0 / x


def _k_steed_scaled(mu: float, x: float) -> tuple[float, float]:
    """``exp(x) (K_mu(x), K_{mu+1}(x))`` for ``|mu| <= 1/2`` and ``x >= 2`` (CF2)."""
    b = 2.0 * (1.0 + x)
    d = 1.0 / b
    h = delh = d
    q1, q2 = 0.0, 1.0
    a1 = 0.25 - mu * mu
    q = c = a1
    a = -a1
    s = 1.0 + q * delh
    for i in range(2, _MAXIT):
        a -= 2 * (i - 1)
        c = -a * c / i
        qnew = (q1 - b * q2) / a
        q1, q2 = q2, qnew
        q += c * qnew
        b += 2.0
        d = 1.0 / (b + a * d)
        delh = (b * d - 1.0) * delh
        h += delh
        dels = q * delh
        s += dels
        if abs(dels / s) < _EPS:
            break
    h = a1 * h
    kmu = math.sqrt(math.pi / (2.0 * x)) / s
    return kmu, kmu * (mu + x + 0.5 - h) / x


def kve(v: float, x: float) -> float:
    """``exp(x) K_v(x)``: the exponentially scaled modified Bessel function of the second
    kind of real order ``v``."""
    v, x = float(v), float(x)
    if x == 0.0:  # SciPy: inf at 0 whatever the order, NaN included
        return math.inf
    if math.isnan(v) or math.isnan(x) or x < 0.0 or math.isinf(v):
        return math.nan
    if math.isinf(x):  # the limit, so that kv = kve * exp(-x) is SciPy's kv (0) there
        return 0.0
    v = abs(v)
    nl = int(v + 0.5)
    if nl > _MAX_COUNT:
        return math.nan
    mu = v - nl
    if x < 2.0:
        kmu, k1 = _k_temme(mu, x)
        scale = math.exp(x)
        kmu, k1 = kmu * scale, k1 * scale
    else:
        kmu, k1 = _k_steed_scaled(mu, x)
    xi2 = 2.0 / x
    for i in range(1, nl + 1):  # forward recurrence (stable for K)
        kmu, k1 = k1, (mu + i) * xi2 * k1 + kmu
        if math.isinf(kmu):
            return math.inf
    return kmu
