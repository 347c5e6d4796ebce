"""The Gauss hypergeometric function ``2F1(a, b; c; z)`` of real arguments, in double
precision, for :mod:`opweave.scalar.hyp2f1` (pure Python on :mod:`math`).

* a terminating series (``a`` or ``b`` a non-positive integer) is summed as the polynomial
  it is, for any ``z``;
* ``0 <= z <= 0.9``: the hypergeometric series;
* ``0.9 < z < 1``: the connection formula to ``1 - z`` (Abramowitz and Stegun 15.3.6), or,
  where ``c - a - b`` is an integer, its logarithmic limit (15.3.10, 15.3.11, after Euler's
  transformation when ``c - a - b < 0``);
* ``z < 0``: Pfaff's transformation to ``w = z / (z - 1)`` in ``[0, 1)``, then as above;
* ``z = 1``: Gauss's formula where ``c - a - b > 0``.

The values at the edges are SciPy's: ``inf`` for ``z > 1``, at ``z = 1`` with
``c - a - b <= 0`` and where ``c`` is a non-positive integer (unless the series ends
first), NaN for infinite or NaN arguments. Close to (but not at) an integer ``c - a - b``,
the connection formula loses about as many digits as ``c - a - b`` has zeros after the
point before it differs from that integer.
"""

from __future__ import annotations

import math

from opweave_python.special_math import digamma

__all__ = ["hyp2f1"]

_EPS = 1e-16
_MAXTERMS = 200_000


def _nonpositive_int(x: float) -> bool:
    return x <= 0.0 and x == math.floor(x)


def _lgamma_sign(x: float) -> tuple[float, float]:
    """``(log|Gamma(x)|, sign(Gamma(x)))``; ``(inf, 0)`` at the poles."""
    if _nonpositive_int(x):
        return math.inf, 0.0
    sign = -1.0 if x < 0.0 and math.floor(x) % 2 == 1 else 1.0
    return math.lgamma(x), sign


def _gamma_ratio(num: tuple[float, ...], den: tuple[float, ...]) -> float:
    """``prod(Gamma(num)) / prod(Gamma(den))`` (0 when a denominator is at a pole)."""
    log, sign = 0.0, 1.0
    for x in den:
        lg, s = _lgamma_sign(x)
        if s == 0.0:
            return 0.0
        log -= lg
        sign *= s
    for x in num:
        lg, s = _lgamma_sign(x)
        if s == 0.0:
            return math.inf
        log += lg
        sign *= s
    return sign * math.exp(min(log, 709.78)) if log < 709.78 else sign * math.inf


def _series(a: float, b: float, c: float, z: float) -> float:
    """The hypergeometric series (terminating, or ``|z| < 1``)."""
    term, total = 1.0, 1.0
    bound = abs(a) + abs(b) + abs(c) + 2.0
    for k in range(_MAXTERMS):
        term *= (a + k) * (b + k) / ((c + k) * (k + 1.0)) * z
        total += term
        if term == 0.0 or (abs(term) <= _EPS * abs(total) and k > bound):
            break
    return total


def _near_one_generic(a: float, b: float, c: float, z: float) -> float:
    """A&S 15.3.6, for ``c - a - b`` not an integer."""
    m = c - a - b
    y = 1.0 - z
    first = _gamma_ratio((c, m), (c - a, c - b))
    second = _gamma_ratio((c, -m), (a, b))
    total = 0.0
    if first != 0.0:
        total += first * _series(a, b, 1.0 - m, y)
    if second != 0.0:
        total += second * y**m * _series(c - a, c - b, m + 1.0, y)
    return total


def _near_one_log(a: float, b: float, m: int, z: float) -> float:
    """A&S 15.3.10/15.3.11: ``2F1(a, b; a + b + m; z)`` for an integer ``m >= 0``."""
    y = 1.0 - z
    c = a + b + m
    total = 0.0
    if m > 0:
        coef = _gamma_ratio((float(m), c), (a + m, b + m))
        term, part = 1.0, 1.0
        for n in range(1, m):
            term *= (a + n - 1) * (b + n - 1) / (n * (n - m)) * y
            part += term
        total += coef * part
    coef = _gamma_ratio((c,), (a, b))
    if coef == 0.0:
        return total
    log_y = math.log(y)
    term = 1.0 / math.factorial(m)  # (a+m)_n (b+m)_n / (n! (n+m)!) at n = 0
    part = 0.0
    bound = abs(a) + abs(b) + m + 2.0
    for n in range(_MAXTERMS):
        if n > 0:
            term *= (a + m + n - 1) * (b + m + n - 1) / (n * (n + m)) * y
        bracket = (
            log_y
            - digamma(n + 1.0)
            - digamma(n + m + 1.0)
            + digamma(a + n + m)
            + digamma(b + n + m)
        )
        delta = term * bracket
        part += delta
        if abs(delta) <= _EPS * abs(part) and n > bound:
            break
    return total - coef * (-y) ** m * part


def _unit_interval(a: float, b: float, c: float, z: float) -> float:
    """``2F1(a, b; c; z)`` for ``0 <= z < 1``."""
    if z <= 0.9 or _nonpositive_int(a) or _nonpositive_int(b):
        return _series(a, b, c, z)
    m = c - a - b
    nearest = round(m)
    if abs(m - nearest) > 64 * _EPS * (abs(a) + abs(b) + abs(c) + 1.0):
        return _near_one_generic(a, b, c, z)
    m = nearest  # an integer up to the rounding of ``c - a - b``
    if m >= 0:
        return _near_one_log(a, b, m, z)
    return (1.0 - z) ** m * _near_one_log(c - a, c - b, -m, z)  # Euler


def hyp2f1(a: float, b: float, c: float, z: float) -> float:
    """The Gauss hypergeometric function ``2F1(a, b; c; z)`` of real arguments."""
    a, b, c, z = float(a), float(b), float(c), float(z)
    if any(math.isnan(t) or math.isinf(t) for t in (a, b, c, z)):
        return math.nan
    ends = [-t for t in (a, b) if _nonpositive_int(t)]
    if ends:
        n = min(ends)
        if _nonpositive_int(c) and -c < n:
            return math.inf
        term, total = 1.0, 1.0
        for k in range(int(n)):
            term *= (a + k) * (b + k) / ((c + k) * (k + 1.0)) * z
            total += term
        return total
    if _nonpositive_int(c) or z > 1.0:
        return math.inf
    if z == 0.0:
        return 1.0
    if z == 1.0:
        if c - a - b <= 0.0:
            return math.inf
        return _gamma_ratio((c, c - a - b), (c - a, c - b))
    if c == a:
        return (1.0 - z) ** (-b)
    if c == b:
        return (1.0 - z) ** (-a)
    if z < 0.0:  # Pfaff
        return (1.0 - z) ** (-a) * _unit_interval(a, c - b, c, z / (z - 1.0))
    return _unit_interval(a, b, c, z)
