"""High-precision values (mpmath) where SciPy's are known to be wrong.

A case of the catalogue may name, besides its SciPy reference, an *exact* function (of
:mod:`mpmath` numbers) and where SciPy is wrong (an elementwise mask of the inputs): at
those inputs the expected value is the exact function's, evaluated with
:data:`DIGITS` significant digits and rounded to the output dtype. A complex value (a
real function's argument outside its real domain) and a function that raises count as
NaN.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import mpmath as mp  # type: ignore[import-untyped]
from mpmath.libmp import NoConvergence  # type: ignore[import-untyped]

__all__ = [
    "DIGITS",
    "bessel_i",
    "bessel_ive",
    "bessel_j",
    "bessel_j0",
    "bessel_j1",
    "bessel_kve",
    "exact_value",
    "gammainc",
    "gammaincc",
    "gammainccinv",
    "gammaincinv",
]

#: Significant digits of the computations (mpmath raises its working precision further
#: where a function needs it, as for the argument reduction of a huge ``x``).
DIGITS = 50


@functools.cache
def exact_value(fn: Callable[..., Any], args: tuple[float, ...]) -> float:
    """``fn(*args)`` computed with :data:`DIGITS` digits, rounded to the nearest float64
    (NaN for a complex value or an error)."""
    with mp.workdps(DIGITS):
        try:
            value = fn(*(mp.mpf(a) for a in args))
        except (ValueError, ZeroDivisionError, NoConvergence):
            return float("nan")
        if isinstance(value, mp.mpc):
            if value.imag != 0:
                return float("nan")
            value = value.real
        return float(value)


def bessel_j(v: Any, x: Any) -> Any:
    """The Bessel function of the first kind ``J_v(x)``."""
    return mp.besselj(v, x)


def bessel_j0(x: Any) -> Any:
    """``J_0(x)``."""
    return mp.besselj(0, x)


def bessel_j1(x: Any) -> Any:
    """``J_1(x)``."""
    return mp.besselj(1, x)


def bessel_i(v: Any, x: Any) -> Any:
    """The modified Bessel function of the first kind ``I_v(x)``."""
    return mp.besseli(v, x)


def bessel_ive(v: Any, x: Any) -> Any:
    """``exp(-|x|) I_v(x)``."""
    return mp.besseli(v, x) * mp.exp(-abs(x))


def bessel_kve(v: Any, x: Any) -> Any:
    """``exp(x) K_v(x)``."""
    return mp.besselk(v, x) * mp.exp(x)


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)`` (``1 - Q`` above the
    mean, where mpmath's series of ``P`` converges slowly at large ``a``)."""
    if x > a:
        return 1 - mp.gammainc(a, x, mp.inf, regularized=True)
    return mp.gammainc(a, 0, x, regularized=True)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x)`` (``1 - P`` below the
    mean)."""
    if x < a:
        return 1 - mp.gammainc(a, 0, x, regularized=True)
    return mp.gammainc(a, x, mp.inf, regularized=True)


def _inverse(a: Any, y: Any, upper: bool) -> Any:
    """The ``x >= 0`` with ``P(a, x) = y`` (``Q`` where ``upper``); NaN outside the domain
    ``a > 0``, ``0 <= y <= 1``. Anderson-Bjorck's method on ``log P(a, e**t) = log y``
    in a bracket grown from ``x = a`` outwards and bisected, checked by its residual."""
    if not (a > 0 and 0 <= y <= 1):
        return mp.nan
    if y == 0 or y == 1:
        return mp.inf if (y == 0) == upper else mp.mpf(0)
    function = gammaincc if upper else gammainc
    log_y = mp.log(y)

    def residual(t: Any) -> Any:  # increasing in t for P, decreasing for Q
        return mp.log(function(a, mp.exp(t))) - log_y

    # A bracket of the root in t = log x, from the median outwards.
    low = high = mp.log(a)
    step = mp.mpf(1)
    sign = -1 if upper else 1
    while sign * residual(low) > 0:
        low -= step
        step *= 2
    step = mp.mpf(1)
    while sign * residual(high) < 0:
        high += step
        step *= 2
    while high - low > 0.01:  # bisection first: the residual is steep far from the root
        middle = (low + high) / 2
        if sign * residual(middle) < 0:
            low = middle
        else:
            high = middle
    root = mp.findroot(residual, (low, high), solver="anderson")
    if abs(residual(root)) > mp.mpf(10) ** (10 - DIGITS) * (1 + abs(log_y)):
        raise ValueError(f"no inverse found for ({a}, {y})")
    return mp.exp(root)


def gammaincinv(a: Any, y: Any) -> Any:
    """The inverse of ``P(a, x)`` in ``x``."""
    return _inverse(a, y, upper=False)


def gammainccinv(a: Any, y: Any) -> Any:
    """The inverse of ``Q(a, x)`` in ``x``."""
    return _inverse(a, y, upper=True)
