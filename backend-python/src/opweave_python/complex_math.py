"""NumPy implementations of the complex-number scalar Ops of :mod:`opweave.scalar.complex`.

Each function takes NumPy scalars or arrays (broadcasting as ufuncs do) and returns values
of the dtype the Op declares, so that :func:`opweave_python.impls.scalar.finish` has nothing
to convert. ``complex`` and ``complex_from_polar`` write the real and imaginary parts into a
complex result directly, so an infinite part stays infinite (``x + 1j * y`` would turn
``complex(0, inf)`` into ``nan + inf j``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["angle", "complex_", "complex_from_polar", "conj", "imag", "real"]


def _float_of(x: Any) -> Any:
    """``x`` as an array, discrete dtypes converted to the float dtype opweave gives them
    (``float32`` up to 16 bits, ``float64`` above)."""
    x = np.asarray(x)
    if x.dtype.kind in "biu":
        return x.astype(np.float32 if x.dtype.itemsize <= 2 else np.float64)
    return x


def _scalarize(x: np.ndarray) -> Any:
    return x[()] if x.ndim == 0 else x


def real(x: Any) -> Any:
    """The real part (a copy of ``x`` for real values): never a view of ``x``, which
    ``np.real`` returns (an Elemwise output must not alias its input undeclared)."""
    out = np.real(x)
    return out.copy() if isinstance(out, np.ndarray) else out


def imag(x: Any) -> Any:
    """The imaginary part (zeros of ``x``'s dtype for real values)."""
    return np.imag(x)


def conj(x: Any) -> Any:
    """The complex conjugate."""
    return np.conjugate(x)


def angle(x: Any) -> Any:
    """The argument in ``[-pi, pi]``, in the real part's float dtype."""
    return _scalarize(np.angle(_float_of(x)))


def _complex_dtype(x: Any, y: Any) -> np.dtype[Any]:
    """``complex128`` when ``x`` and ``y`` promote to ``float64`` or a 32/64-bit integer,
    else ``complex64`` (the rule of :class:`opweave.scalar.complex.Complex`)."""
    return np.result_type(np.asarray(x).dtype, np.asarray(y).dtype, np.complex64)


def _assemble(re: Any, im: Any, dtype: np.dtype[Any]) -> Any:
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype=dtype)
    out.real = re
    out.imag = im
    return _scalarize(out)


def complex_(x: Any, y: Any) -> Any:
    """The complex number ``x + iy`` of real ``x`` and ``y``."""
    return _assemble(x, y, _complex_dtype(x, y))


def complex_from_polar(r: Any, theta: Any) -> Any:
    """The complex number ``r * (cos(theta) + i sin(theta))``."""
    dtype = _complex_dtype(r, theta)
    part = np.float32 if dtype == np.complex64 else np.float64
    r = np.asarray(r, dtype=part)
    theta = np.asarray(theta, dtype=part)
    return _assemble(r * np.cos(theta), r * np.sin(theta), dtype)
