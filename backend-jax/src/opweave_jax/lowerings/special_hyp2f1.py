"""The lowering of the Gauss hypergeometric function ``2F1(a, b; c; z)`` of real arguments
(:mod:`opweave.scalar.hyp2f1`).

``jax.scipy.special.hyp2f1`` is not SciPy's (its values near ``z = 1`` and at large
parameters differ far beyond rounding): this follows the ``py`` backend's kernel
(:mod:`opweave_python.special_hyp2f1`) in float64, elementwise, with its stopping rules:

* a terminating series (``a`` or ``b`` a non-positive integer) is summed as the polynomial
  it is;
* ``0 <= z <= 0.9``: the hypergeometric series;
* ``0.9 < z < 1``: the connection formula to ``1 - z`` (Abramowitz and Stegun 15.3.6), or,
  where ``c - a - b`` is an integer, its logarithmic limit (15.3.10, 15.3.11, after
  Euler's transformation when ``c - a - b < 0``);
* ``z < 0``: Pfaff's transformation to ``w = z / (z - 1)``, then as above;
* ``z = 1``: Gauss's formula where ``c - a - b > 0``.

Edges are the kernel's (SciPy's): ``inf`` for ``z > 1``, at ``z = 1`` with ``c - a - b <=
0`` and where ``c`` is a non-positive integer (unless the series ends first), NaN for
infinite or NaN arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from opweave.graph.basic import Apply
from opweave.scalar import hyp2f1 as shyp
from opweave_jax.lowerings.special import in_float64
from opweave_jax.lowerings.special_loops import FACTORIALS, masked_loop

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]

_EPS = 1e-16
_MAX_TERMS = 200_000


def _nonpositive_int(x: Any) -> Any:
    return (x <= 0) & (x == jnp.floor(x))


def _lgamma_sign(x: Any) -> tuple[Any, Any]:
    """``(log|Gamma(x)|, sign(Gamma(x)))``; ``(inf, 0)`` at the poles."""
    pole = _nonpositive_int(x)
    sign = jnp.where((x < 0) & (jnp.floor(x) % 2 == 1), -1.0, 1.0)
    return jnp.where(pole, jnp.inf, jss.gammaln(x)), jnp.where(pole, 0.0, sign)


def _gamma_ratio(num: tuple[Any, ...], den: tuple[Any, ...]) -> Any:
    """``prod(Gamma(num)) / prod(Gamma(den))`` (0 when a denominator is at a pole, else
    ``inf`` when a numerator is)."""
    log, sign = 0.0, 1.0
    den_pole = num_pole = False
    for x in den:
        lg, s = _lgamma_sign(x)
        den_pole = den_pole | (s == 0)
        log, sign = log - lg, sign * s
    for x in num:
        lg, s = _lgamma_sign(x)
        num_pole = num_pole | (s == 0)
        log, sign = log + lg, sign * s
    value = jnp.where(log < 709.78, sign * jnp.exp(jnp.minimum(log, 709.78)), sign * jnp.inf)
    return jnp.where(den_pole, 0.0, jnp.where(num_pole, jnp.inf, value))


def _series(a: Any, b: Any, c: Any, z: Any) -> Any:
    """The hypergeometric series (terminating, or ``|z| < 1``)."""
    bound = jnp.abs(a) + jnp.abs(b) + jnp.abs(c) + 2.0

    def body(i: Any, term: Any, total: Any) -> tuple[tuple[Any, Any], Any]:
        k = i - 1.0
        term = term * ((a + k) * (b + k) / ((c + k) * (k + 1.0)) * z)
        total = total + term
        return (term, total), (term == 0) | ((jnp.abs(term) <= _EPS * jnp.abs(total)) & (k > bound))

    one = jnp.ones_like(z)
    start = (jnp.ones((), z.dtype), one, one, jnp.zeros(jnp.shape(z), bool))
    return masked_loop(lambda i: i < _MAX_TERMS, body, start)[1]


def _polynomial(a: Any, b: Any, c: Any, z: Any, n: Any) -> Any:
    """The first ``n`` terms of the series (the whole of it where it ends)."""

    def body(i: Any, term: Any, total: Any) -> tuple[tuple[Any, Any], Any]:
        k = i - 1.0
        term = term * ((a + k) * (b + k) / ((c + k) * (k + 1.0)) * z)
        return (term, total + term), i >= n

    one = jnp.ones_like(z)
    start = (jnp.ones((), z.dtype), one, one, n < 1)
    return masked_loop(lambda i: True, body, start)[1]


def _near_one_generic(a: Any, b: Any, c: Any, z: Any) -> Any:
    """A&S 15.3.6, for ``c - a - b`` not an integer."""
    m = c - a - b
    y = 1.0 - z
    first = _gamma_ratio((c, m), (c - a, c - b))
    second = _gamma_ratio((c, -m), (a, b))
    total = jnp.where(first != 0, first * _series(a, b, 1.0 - m, y), 0.0)
    tail = second * jnp.power(y, m) * _series(c - a, c - b, m + 1.0, y)
    return total + jnp.where(second != 0, tail, 0.0)


def _near_one_log(a: Any, b: Any, m: Any, z: Any) -> Any:
    """A&S 15.3.10/15.3.11: ``2F1(a, b; a + b + m; z)`` for an integer ``m >= 0``."""
    y = 1.0 - z
    c = a + b + m

    def finite(n: Any, term: Any, part: Any) -> tuple[tuple[Any, Any], Any]:
        term = term * ((a + n - 1) * (b + n - 1) / (n * (n - m)) * y)
        return (term, part + term), n >= m - 1

    one = jnp.ones_like(z)
    part = masked_loop(lambda n: True, finite, (jnp.ones((), z.dtype), one, one, m < 2))[1]
    coef = _gamma_ratio((jnp.maximum(m, 1.0), c), (a + m, b + m))
    total = jnp.where(m > 0, coef * part, 0.0)
    coef = _gamma_ratio((c,), (a, b))
    log_y = jnp.log(y)
    index = jnp.minimum(m, 170.0).astype(np.int32)
    term = jnp.where(m > 170, 0.0, 1.0 / jnp.asarray(FACTORIALS)[index])
    bound = jnp.abs(a) + jnp.abs(b) + m + 2.0

    def bracket(n: Any) -> Any:
        return (
            log_y
            - jss.digamma(n + 1.0)
            - jss.digamma(n + m + 1.0)
            + jss.digamma(a + n + m)
            + jss.digamma(b + n + m)
        )

    first = term * bracket(jnp.zeros_like(z))

    def body(i: Any, term: Any, part: Any) -> tuple[tuple[Any, Any], Any]:
        n = i
        term = term * ((a + m + n - 1) * (b + m + n - 1) / (n * (n + m)) * y)
        delta = term * bracket(n + jnp.zeros_like(z))
        part = part + delta
        return (term, part), (jnp.abs(delta) <= _EPS * jnp.abs(part)) & (n > bound)

    start = (jnp.ones((), z.dtype), term, first, jnp.zeros(jnp.shape(z), bool))
    part = masked_loop(lambda i: i < _MAX_TERMS, body, start)[1]
    sign = jnp.where(m % 2 == 1, -1.0, 1.0)
    value = total - coef * sign * jnp.power(y, m) * part
    return jnp.where(coef == 0, total, value)


def _unit_interval(a: Any, b: Any, c: Any, z: Any) -> Any:
    """``2F1(a, b; c; z)`` for ``0 <= z < 1``."""
    plain = (z <= 0.9) | _nonpositive_int(a) | _nonpositive_int(b)
    series = _series(a, b, c, jnp.where(plain, z, 0.5))
    m = c - a - b
    nearest = jnp.round(m)
    generic = jnp.abs(m - nearest) > 64 * _EPS * (jnp.abs(a) + jnp.abs(b) + jnp.abs(c) + 1.0)
    wide = ~plain & generic
    safe_z = jnp.where(plain, 0.95, z)
    connected = _near_one_generic(
        jnp.where(wide, a, 0.25), jnp.where(wide, b, 0.5), jnp.where(wide, c, 1.6), safe_z
    )
    logarithmic = ~plain & ~generic
    euler = nearest < 0
    la = jnp.where(logarithmic, jnp.where(euler, c - a, a), 0.25)
    lb = jnp.where(logarithmic, jnp.where(euler, c - b, b), 0.5)
    lm = jnp.where(logarithmic, jnp.abs(nearest), 1.0)
    limit = _near_one_log(la, lb, lm, safe_z)
    limit = jnp.where(euler, jnp.power(1.0 - safe_z, nearest) * limit, limit)
    return jnp.where(plain, series, jnp.where(generic, connected, limit))


def _hyp2f1(a: Any, b: Any, c: Any, z: Any) -> Any:
    """``2F1(a, b; c; z)`` with the ``py`` kernel's edges."""
    a, b, c, z = jnp.broadcast_arrays(a, b, c, z)
    finite = jnp.isfinite(a) & jnp.isfinite(b) & jnp.isfinite(c) & jnp.isfinite(z)
    ends_a, ends_b = _nonpositive_int(a), _nonpositive_int(b)
    ending = finite & (ends_a | ends_b)
    n = jnp.minimum(jnp.where(ends_a, -a, jnp.inf), jnp.where(ends_b, -b, jnp.inf))
    n = jnp.where(ending, n, 0.0)
    poly = _polynomial(a, b, c, jnp.where(ending, z, 0.0), n)
    poly = jnp.where(_nonpositive_int(c) & (-c < n), jnp.inf, poly)
    # the other lanes: 0 < z < 1 or z < 0, none of a, b, c a non-positive integer
    usual = finite & ~ending & ~_nonpositive_int(c) & (z < 1) & (z != 0)
    usual = usual & (c != a) & (c != b)
    pfaff = z < 0
    ua = jnp.where(usual, a, 0.25)
    ub = jnp.where(usual, jnp.where(pfaff, c - b, b), 0.5)
    uc = jnp.where(usual, c, 1.6)
    uz = jnp.where(usual, jnp.where(pfaff, z / (z - 1.0), z), 0.5)
    value = _unit_interval(ua, ub, uc, uz)
    value = jnp.where(pfaff, jnp.power(1.0 - z, -a) * value, value)
    value = jnp.where(c == b, jnp.power(1.0 - z, -a), value)
    value = jnp.where(c == a, jnp.power(1.0 - z, -b), value)
    gauss = jnp.where(c - a - b <= 0, jnp.inf, _gamma_ratio((c, c - a - b), (c - a, c - b)))
    value = jnp.where(z == 1, gauss, value)
    value = jnp.where(z == 0, 1.0, value)
    value = jnp.where(_nonpositive_int(c) | (z > 1), jnp.inf, value)
    value = jnp.where(ending, poly, value)
    return jnp.where(finite, value, jnp.nan)


#: Scalar Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    shyp.Hyp2F1: in_float64(_hyp2f1),
}
