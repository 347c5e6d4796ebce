"""What the C kernels calling LAPACK share: SciPy's LAPACK, found at run time.

``scipy.linalg.cython_lapack`` exports LAPACK's routines as capsules of function pointers;
the generated code looks them up on first use (``opw_lapack_lookup``, :data:`SUPPORT`), so
nothing is linked. :func:`lapack_exports` says whether SciPy is there with the routines.
"""

from __future__ import annotations

from functools import cache

from opweave_c.impls.csource import snippet

__all__ = ["SUPPORT", "lapack_exports"]

#: ``opw_lapack_lookup(name)``: a routine's function pointer, or NULL with an exception.
SUPPORT = snippet("lapack.c", "support")


@cache
def lapack_exports(routines: tuple[str, ...]) -> bool:
    """Whether SciPy's LAPACK capsules can be loaded and export every one of ``routines``.

    Parameters
    ----------
    routines
        Routine names as ``scipy.linalg.cython_lapack`` has them (``"dgesv"``...).

    Returns
    -------
    bool
        False without SciPy (an optional extra) or where a routine is missing.
    """
    try:
        from scipy.linalg import cython_lapack  # type: ignore[import-untyped]
    except ImportError:
        return False
    capi = getattr(cython_lapack, "__pyx_capi__", {})
    return all(name in capi for name in routines)
