"""Derivatives of the incomplete gamma and beta functions and of ``hyp2f1`` with respect to
their shape parameters, in double precision, for :mod:`opweave.scalar.shape_gradients`.

Pure Python on :mod:`math`, one element at a time like :mod:`opweave_python.special_math`.
Each derivative is computed in forward mode alongside the expansion that gives the
function's value, so no difference of nearby values is ever taken:

* ``d/dk gammainc(k, x)`` (the one-sided ``-E1(x)`` at ``k = 0``): for ``x < k + 1`` the series
  ``P = x**k e**-x / Gamma(k + 1) * sum_n x**n / ((k + 1) ... (k + n))``, whose log-derivative
  is ``log(x) - digamma(k + 1) + S'/S``; elsewhere the continued fraction of the upper
  function ``Q`` (``d/dk Q = -d/dk P``), whose convergents are differentiated together with
  the recurrence that builds them;
* ``d/da``, ``d/db betainc(a, b, x)``: the continued fraction of the incomplete beta
  function, differentiated the same way, after the reflection
  ``I_x(a, b) = 1 - I_{1-x}(b, a)`` where ``x > (a + 1) / (a + b + 2)``;
* ``d/da``, ``d/db``, ``d/dc hyp2f1(a, b, c, z)``: the hypergeometric series with its
  derivative carried term by term (exact across zero terms, so the derivative in ``a`` at a
  non-positive integer ``a`` is that of the analytic function), after Pfaff's
  transformation to ``w = z / (z - 1)`` in ``[0, 1)`` for ``z < 0``.

Outside the domains (``k < 0``, ``x < 0``; ``a, b <= 0`` or ``x`` outside ``[0, 1]``;
``z >= 1`` for ``hyp2f1`` unless ``a`` or ``b`` is a non-positive integer, where the
derivatives are those of the polynomial the series ends as, or ``z = 1`` with
``c - a - b > 0``, where they are those of Gauss's closed form) the result is NaN, as it
is where an expansion fails to converge. At the edges ``x = 0`` and ``x = inf`` the
derivatives are 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from opweave_python.special_math import digamma

__all__ = [
    "betainc_grad_a",
    "betainc_grad_b",
    "gammainc_grad",
    "gammaincc_grad",
    "hyp2f1_grad_a",
    "hyp2f1_grad_b",
    "hyp2f1_grad_c",
]

_EPS = 2.220446049250313e-16
_MAX_ITER = 1_000_000
#: Rescale the convergents of a continued fraction when they leave ``[1/_BIG, _BIG]``.
_BIG = 1e150

#: ``(a_n, da_n, b_n, db_n)``: a term of ``b_0 + a_1 / (b_1 + a_2 / (b_2 + ...))`` and its
#: derivative in the parameter.
Term = tuple[float, float, float, float]


def _bad(*xs: float) -> bool:
    return any(math.isnan(t) for t in xs)


def _fraction(terms: Iterator[Term]) -> tuple[float, float]:
    """The value ``f`` and derivative ``f'`` of the continued fraction ``terms`` describes.

    The first item is ``(0, 0, b_0, b_0')``; each convergent ``A_n / B_n`` is built with the
    three-term recurrence ``A_n = b_n A_{n-1} + a_n A_{n-2}`` (likewise ``B_n``), whose
    derivative follows from the product rule. NaN if it does not converge.
    """
    _, _, b0, db0 = next(terms)
    a2, da2, a1, da1 = 1.0, 0.0, b0, db0  # A_{n-2}, A_{n-1} and their derivatives
    b2, db2, b1, db1 = 0.0, 0.0, 1.0, 0.0  # B_{n-2}, B_{n-1}
    f_old, df_old = math.nan, math.nan
    for n, (an, dan, bn, dbn) in enumerate(terms, start=1):
        a0 = bn * a1 + an * a2
        da0 = dbn * a1 + bn * da1 + dan * a2 + an * da2
        b0_ = bn * b1 + an * b2
        db0_ = dbn * b1 + bn * db1 + dan * b2 + an * db2
        a2, da2, a1, da1 = a1, da1, a0, da0
        b2, db2, b1, db1 = b1, db1, b0_, db0_
        scale = abs(b1)
        if scale > _BIG or 0.0 < scale < 1.0 / _BIG:
            s = 1.0 / scale
            a2, da2, a1, da1 = a2 * s, da2 * s, a1 * s, da1 * s
            b2, db2, b1, db1 = b2 * s, db2 * s, b1 * s, db1 * s
        if b1 == 0.0:
            continue
        f = a1 / b1
        df = (da1 - f * db1) / b1
        if (
            n > 2
            and abs(f - f_old) <= _EPS * abs(f)
            and abs(df - df_old) <= 4 * _EPS * max(abs(df), _EPS * abs(f))
        ):
            return f, df
        if n > _MAX_ITER:
            break
        f_old, df_old = f, df
    return math.nan, math.nan


# ====================================================================== incomplete gamma


def _scaled(log_value: float, slope: float) -> float:
    """``exp(log_value) * slope`` without the product's spurious underflow or overflow: at a
    tiny shape ``Q`` underflows while the slope (about ``1 / k``) overflows, and their
    product is about ``E1(x)``."""
    if slope == 0.0 or math.isnan(slope) or math.isinf(slope):
        return math.exp(log_value) * slope
    return math.copysign(math.exp(log_value + math.log(abs(slope))), slope)


def _lower_series(k: float, x: float) -> float:
    """``d/dk gammainc(k, x)`` from the series of ``P`` (for ``x < k + 1``)."""
    term, total = 1.0, 1.0
    recip, dtotal = 0.0, 0.0  # sum of 1 / (k + j), j = 1..n; sum of the terms' derivatives
    for n in range(1, _MAX_ITER):
        term *= x / (k + n)
        recip += 1.0 / (k + n)
        total += term
        dtotal -= term * recip
        if term <= _EPS * total and term * recip <= _EPS * abs(dtotal):
            break
    else:
        return math.nan
    log_p = k * math.log(x) - x - math.lgamma(k + 1.0) + math.log(total)
    slope = math.log(x) - digamma(k + 1.0) + dtotal / total
    return _scaled(log_p, slope)


def _gamma_fraction_terms(k: float, x: float) -> Iterator[Term]:
    """``Gamma(k, x) e**x x**-k = 1 / (x + 1 - k - 1 (1 - k) / (x + 3 - k - ...))``, in ``k``."""
    yield 0.0, 0.0, 0.0, 0.0
    yield 1.0, 0.0, x + 1.0 - k, -1.0
    n = 1
    while True:
        yield -n * (n - k), float(n), x + 2.0 * n + 1.0 - k, -1.0
        n += 1


def _upper_fraction(k: float, x: float) -> float:
    """``d/dk gammaincc(k, x)`` from the continued fraction of ``Q`` (for ``x >= k + 1``)."""
    h, dh = _fraction(_gamma_fraction_terms(k, x))
    if math.isnan(h) or h <= 0.0:
        return math.nan
    log_q = k * math.log(x) - x - math.lgamma(k) + math.log(h)
    slope = math.log(x) - digamma(k) + dh / h
    return _scaled(log_q, slope)


def _exp1(x: float) -> float:
    """The exponential integral ``E1(x) = Gamma(0, x)`` for ``x > 0``."""
    if x <= 1.0:
        term, total = 1.0, 0.0
        for n in range(1, 200):
            term *= -x / n
            total += term / n
            if abs(term) <= _EPS * abs(total) / n:
                break
        return -0.5772156649015329 - math.log(x) - total
    h, _ = _fraction(_gamma_fraction_terms(0.0, x))
    return math.exp(-x) * h


def gammainc_grad(k: float, x: float) -> float:
    """``d/dk gammainc(k, x)``, the derivative of the regularized lower incomplete gamma
    function in its shape ``k`` (at ``k = 0`` the one-sided one, ``-E1(x)``; NaN for
    ``k < 0`` or ``x < 0``; 0 at ``x = 0`` and ``x = inf``)."""
    k, x = float(k), float(x)
    if _bad(k, x) or k < 0.0 or x < 0.0 or math.isinf(k):
        return math.nan
    if x == 0.0 or math.isinf(x):
        return 0.0
    if k == 0.0:
        return -_exp1(x)
    if x < k + 1.0:
        return _lower_series(k, x)
    return -_upper_fraction(k, x)


def gammaincc_grad(k: float, x: float) -> float:
    """``d/dk gammaincc(k, x) = -d/dk gammainc(k, x)``."""
    return -gammainc_grad(k, x)


# ====================================================================== incomplete beta


def _beta_fraction_terms(a: float, b: float, x: float, wrt_a: bool) -> Iterator[Term]:
    """``1 / (1 + d_1 / (1 + d_2 / (1 + ...)))`` with the ``d_n`` of the incomplete beta
    function's continued fraction, differentiated in ``a`` (``wrt_a``) or ``b``."""
    yield 0.0, 0.0, 0.0, 0.0
    yield 1.0, 0.0, 1.0, 0.0
    m = 0
    while True:
        # d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        d = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        if wrt_a:
            dd = d * (1 / (a + m) + 1 / (a + b + m) - 1 / (a + 2 * m) - 1 / (a + 2 * m + 1))
        else:
            dd = d / (a + b + m)
        yield d, dd, 1.0, 0.0
        m += 1
        # d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))
        den = (a + 2 * m - 1) * (a + 2 * m)
        d = m * (b - m) * x / den
        dd = d * (-1 / (a + 2 * m - 1) - 1 / (a + 2 * m)) if wrt_a else m * x / den
        yield d, dd, 1.0, 0.0


def _beta_fraction(a: float, b: float, x: float, wrt_a: bool) -> float:
    """``d/da`` (``wrt_a``) or ``d/db`` of ``I_x(a, b)`` for ``0 < x < 1`` on the side of
    the mode where the continued fraction converges fast."""
    h, dh = _fraction(_beta_fraction_terms(a, b, x, wrt_a))
    if math.isnan(h) or h <= 0.0:
        return math.nan
    log_x, log_1mx = math.log(x), math.log1p(-x)
    lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    log_i = a * log_x + b * log_1mx - math.log(a) - lbeta + math.log(h)
    if wrt_a:
        slope = log_x - 1.0 / a - digamma(a) + digamma(a + b)
    else:
        slope = log_1mx - digamma(b) + digamma(a + b)
    return math.exp(log_i) * (slope + dh / h)


def _betainc_grad(a: float, b: float, x: float, wrt_a: bool) -> float:
    a, b, x = float(a), float(b), float(x)
    if _bad(a, b, x) or a <= 0.0 or b <= 0.0 or not 0.0 <= x <= 1.0:
        return math.nan
    if math.isinf(a) or math.isinf(b):
        return math.nan
    if x in (0.0, 1.0):
        return 0.0
    if x > (a + 1.0) / (a + b + 2.0):
        return -_beta_fraction(b, a, 1.0 - x, not wrt_a)
    return _beta_fraction(a, b, x, wrt_a)


def betainc_grad_a(a: float, b: float, x: float) -> float:
    """``d/da betainc(a, b, x)`` (NaN for ``a, b <= 0`` or ``x`` outside ``[0, 1]``)."""
    return _betainc_grad(a, b, x, True)


def betainc_grad_b(a: float, b: float, x: float) -> float:
    """``d/db betainc(a, b, x)`` (NaN for ``a, b <= 0`` or ``x`` outside ``[0, 1]``)."""
    return _betainc_grad(a, b, x, False)


# ====================================================================== hyp2f1


def _nonpositive_int(x: float) -> bool:
    return x <= 0.0 and x == math.floor(x)


def _series_grads(
    a: float, b: float, c: float, z: float, polynomial: bool = False
) -> tuple[float, float, float, float]:
    """``2F1(a, b; c; z)`` and its derivatives in ``a``, ``b``, ``c`` from the series
    (``|z| < 1``); NaN where it does not converge. With ``polynomial``, the sum stops before
    the first zero term: the derivatives of the polynomial, its degree held (for any ``z``)."""
    t, ta, tb, tc = 1.0, 0.0, 0.0, 0.0
    f, fa, fb, fc = 1.0, 0.0, 0.0, 0.0
    bound = abs(a) + abs(b) + abs(c) + 10.0
    for k in range(_MAX_ITER):
        ak, bk, ck = a + k, b + k, c + k
        r = ak * bk / (ck * (k + 1.0)) * z
        # d r / d(a, b, c) without dividing by a + k or b + k (they may be 0)
        ra = bk / (ck * (k + 1.0)) * z
        rb = ak / (ck * (k + 1.0)) * z
        rc = -r / ck
        if polynomial and r == 0.0:
            return f, fa, fb, fc
        t, ta, tb, tc = t * r, ta * r + t * ra, tb * r + t * rb, tc * r + t * rc
        f, fa, fb, fc = f + t, fa + ta, fb + tb, fc + tc
        small = max(abs(t), abs(ta), abs(tb), abs(tc))
        scale = max(abs(f), abs(fa), abs(fb), abs(fc))
        if k > bound and small <= _EPS * scale:
            return f, fa, fb, fc
        if t == ta == tb == tc == 0.0:
            return f, fa, fb, fc
    return math.nan, math.nan, math.nan, math.nan


def _gamma_sign(x: float) -> float:
    """The sign of ``Gamma(x)`` away from its poles."""
    return 1.0 if x > 0.0 or math.ceil(-x) % 2 == 0 else -1.0


def _psi_over_gamma_at_pole(x: float) -> float:
    """``psi(x) / Gamma(x)`` at a pole ``x = -n``: its limit ``(-1)**(n + 1) n!``."""
    n = -x
    return (-1.0 if n % 2 == 0 else 1.0) * math.exp(math.lgamma(n + 1.0))


def _gauss_grads(a: float, b: float, c: float) -> tuple[float, float, float]:
    """The derivatives of Gauss's ``2F1(a, b; c; 1) = Gamma(c) Gamma(s) / (Gamma(c - a)
    Gamma(c - b))``, ``s = c - a - b > 0``, ``c`` not a pole. Where ``c - a`` (or ``c -
    b``) is a pole the value is 0 and only the term with ``psi(c - a) / Gamma(c - a)``
    survives; where both are, the zero is double and the derivatives are 0."""
    s = c - a - b
    pole_a, pole_b = _nonpositive_int(c - a), _nonpositive_int(c - b)
    if pole_a and pole_b:
        return 0.0, 0.0, 0.0
    sign = _gamma_sign(c)
    log_k = math.lgamma(c) + math.lgamma(s)
    if pole_a or pole_b:
        pole, other = (c - a, c - b) if pole_a else (c - b, c - a)
        g = sign * _gamma_sign(other) * math.exp(log_k - math.lgamma(other))
        edge = g * _psi_over_gamma_at_pole(pole)
        return (edge, 0.0, -edge) if pole_a else (0.0, edge, -edge)
    sign *= _gamma_sign(c - a) * _gamma_sign(c - b)
    f = sign * math.exp(log_k - math.lgamma(c - a) - math.lgamma(c - b))
    psi_s, psi_ca, psi_cb = digamma(s), digamma(c - a), digamma(c - b)
    return f * (psi_ca - psi_s), f * (psi_cb - psi_s), f * (digamma(c) + psi_s - psi_ca - psi_cb)


def _hyp2f1_grads(a: float, b: float, c: float, z: float) -> tuple[float, float, float]:
    a, b, c, z = float(a), float(b), float(c), float(z)
    if any(math.isnan(t) or math.isinf(t) for t in (a, b, c, z)) or _nonpositive_int(c):
        return math.nan, math.nan, math.nan
    if z == 0.0:
        return 0.0, 0.0, 0.0
    terminating = _nonpositive_int(a) or _nonpositive_int(b)
    if z == 1.0 and c - a - b > 0.0 and not terminating:
        # the series converges there, too slowly to sum where c - a - b is small
        return _gauss_grads(a, b, c)
    if 0.0 < z < 1.0:
        _, fa, fb, fc = _series_grads(a, b, c, z)
        return fa, fb, fc
    if z < 0.0:
        # Pfaff: 2F1(a, b; c; z) = (1 - z)**-a 2F1(a, c - b; c; w), w = z / (z - 1)
        scale = (1.0 - z) ** (-a)
        g, ga, g2, gc = _series_grads(a, c - b, c, z / (z - 1.0))
        return scale * (ga - math.log1p(-z) * g), -scale * g2, scale * (gc + g2)
    if terminating:
        # z >= 1: the derivatives of the polynomial the series ends as
        _, fa, fb, fc = _series_grads(a, b, c, z, polynomial=True)
        return fa, fb, fc
    return math.nan, math.nan, math.nan


def _hyp2f1_component(index: int) -> Callable[[float, float, float, float], float]:
    def grad(a: float, b: float, c: float, z: float) -> float:
        return _hyp2f1_grads(a, b, c, z)[index]

    grad.__name__ = f"hyp2f1_grad_{'abc'[index]}"
    grad.__doc__ = (
        f"``d/d{'abc'[index]} hyp2f1(a, b, c, z)`` for ``z < 1`` and for ``z = 1`` where "
        "``c - a - b > 0`` (NaN for other ``z >= 1`` unless "
        "the series terminates, and for a non-positive integer ``c``; 0 at ``z = 0``)."
    )
    return grad


hyp2f1_grad_a = _hyp2f1_component(0)
hyp2f1_grad_b = _hyp2f1_component(1)
hyp2f1_grad_c = _hyp2f1_component(2)
