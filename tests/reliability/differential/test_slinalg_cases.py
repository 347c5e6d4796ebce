"""Cholesky and the solvers of ``opweave.tensor.slinalg`` on every linker, on edge matrices.

Every case (each solver option, ``b`` as vectors and as matrices) is compiled once per
linker through the harness's batching (:func:`differential.runner.evaluate`) and called
on square matrices holding edge scenarios (NaN, infinities, negative zeros, subnormals,
exactly singular and indefinite matrices, a 0 x 0 system) in every memory layout of
:data:`differential.values.LAYOUTS`. Each linker must give the ``py`` linker's dtype,
shape and values bit for bit (NaN in the same places, zeros of the same sign): the C and
Python kernels hand the same matrices to the same LAPACK routines (SciPy's build when
SciPy is installed, else both run the Python kernels). The ``jax`` linker's factorizations
and substitutions are XLA's own: its values must be within :data:`ROUNDING_ULPS` of
``py``'s, except in the scenarios of :data:`KNOWN_SCENARIOS`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave.tensor as pt
from differential.catalogue import FLUSHES_SUBNORMALS
from differential.runner import Outcome, evaluate, refused, usable_linkers
from differential.values import LAYOUTS, agree
from opweave.tensor import slinalg as sl

N = 4


def _case(fn: Callable[..., Any], with_b: str | None = "matrix", **kwargs: Any) -> Any:
    """Builds ``fn(a, **kwargs)`` (Cholesky), or ``fn(a, b, **kwargs)`` with ``b`` the
    matrix or its first column (``with_b="vector"``)."""

    def build(a: Any, b: Any) -> Any:
        if with_b is None:
            return fn(a, **kwargs)
        return fn(a, b if with_b == "matrix" else b[:, 0], **kwargs)

    return build


def _cho_solve(c: Any, b: Any, lower: bool) -> Any:
    return sl.cho_solve((c, lower), b, b_ndim=2)


#: Case name -> builds the output from ``a`` (a matrix) and ``b`` (a matrix of N rows).
CASES: dict[str, Callable[[Any, Any], Any]] = {
    **{f"cholesky-{lower}": _case(sl.cholesky, None, lower=lower) for lower in (True, False)},
    **{
        f"solve-{kind}-{lower}-b{b_ndim}": _case(
            sl.solve,
            "matrix" if b_ndim == 2 else "vector",
            assume_a=kind,
            lower=lower,
            b_ndim=b_ndim,
        )
        for kind in ("gen", "sym", "pos", "tridiagonal")
        for lower in (True, False)
        for b_ndim in (1, 2)
    },
    **{
        f"triangular-{lower}-{unit}": _case(
            sl.solve_triangular, lower=lower, unit_diagonal=unit, b_ndim=2
        )
        for lower in (True, False)
        for unit in (True, False)
    },
    **{f"cho_solve-{lower}": _case(_cho_solve, lower=lower) for lower in (True, False)},
}


def edge_matrices(dtype: str) -> dict[str, np.ndarray]:
    """Square ``N x N`` inputs, each an edge scenario for factorizations and solves."""
    info = np.finfo(dtype)
    spd = np.array(
        [[4.0, 1.0, 0.5, 0.25], [1.0, 5.0, 1.0, 0.5], [0.5, 1.0, 6.0, 1.0], [0.25, 0.5, 1.0, 7.0]]
    )
    nan, inf, neg_zero = spd.copy(), spd.copy(), spd.copy()
    nan[2, 1] = nan[1, 2] = np.nan
    inf[3, 0] = inf[0, 3] = np.inf
    neg_zero[np.triu_indices(N, 1)] = -0.0
    neg_zero[np.tril_indices(N, -1)] = -0.0
    singular = spd.copy()
    singular[1, :] = singular[:, 1] = 0.0
    indefinite = spd.copy()
    indefinite[3, 3] = -1.0
    return {
        name: np.asarray(m, dtype=dtype)
        for name, m in {
            "spd": spd,
            "nan": nan,
            "inf": inf,
            "negative-zeros": neg_zero,
            "singular": singular,
            "indefinite": indefinite,
            "subnormal": spd * float(info.smallest_subnormal),
            "huge": spd / 16 * float(info.max),
            "empty": np.zeros((0, 0)),
        }.items()
    }


def _rhs(a: np.ndarray) -> np.ndarray:
    n = a.shape[0]
    return np.asarray(np.arange(2 * n).reshape(n, 2) - 2.5, dtype=a.dtype)


def _arity(key: str) -> int:
    """The inputs of a case: ``a`` alone for Cholesky, else ``a`` and ``b``."""
    return 1 if key.startswith("cholesky") else 2


def _calls(dtype: str) -> dict[str, Callable[[str], list[np.ndarray]]]:
    calls: dict[str, Callable[[str], list[np.ndarray]]] = {}
    for name, a in edge_matrices(dtype).items():
        for layout, lay in LAYOUTS.items():
            calls[f"{name}/{layout}"] = _call(lay(a), lay(_rhs(a)))
    return calls


def _call(a: np.ndarray, b: np.ndarray) -> Callable[[str], list[np.ndarray]]:
    """A case's arguments for one call: ``a``, and ``b`` when the case takes it."""

    def arguments(key: str) -> list[np.ndarray]:
        return [a, b][: _arity(key)]

    return arguments


def _build(dtype: str) -> Callable[[Sequence[str]], list[tuple[list[Any], list[Any]]]]:
    def build(keys: Sequence[str]) -> list[tuple[list[Any], list[Any]]]:
        parts = []
        for key in keys:
            a, b = pt.matrix(dtype=dtype), pt.matrix(dtype=dtype)
            parts.append(([a, b][: _arity(key)], [CASES[key](a, b)]))
        return parts

    return build


@functools.cache
def outcomes(dtype: str, linker: str) -> dict[str, Outcome]:
    """Every case's outputs on ``linker`` (computed once per test run)."""
    return evaluate(_build(dtype), list(CASES), _calls(dtype), linker)


#: How far the values of a linker that does not call LAPACK may be from ``py``'s, in
#: units in the last place of each value (4: what XLA's LU, Cholesky and substitutions
#: differ by on these matrices, at most 3.7e-7 relative in float32 and 5.2e-16 in float64).
ROUNDING_ULPS: dict[str, int] = {"jax": 4}

#: Why the ``py`` and ``jax`` kernels place NaN and infinities differently.
_SPREAD = (
    "the py kernel solves a triangle with numpy.linalg.solve (LU with pivoting), which "
    "spreads a NaN or an infinity of the matrix over the whole solution; XLA's "
    "substitution keeps it to the rows that depend on it"
)
_ALL_SOLVES = [case for case in CASES if case.startswith("solve-")]
_TRIANGULAR = [case for case in CASES if case.startswith("triangular-")]
#: The cases whose solution of the subnormal and of the huge systems (near 1e-308 in
#: float64, 1e-38 in float32) XLA flushes, in part, to zero.
_FLUSHED = {
    "subnormal": ["cholesky-True", "cholesky-False", *_ALL_SOLVES, *_TRIANGULAR[1::2]],
    "huge": [*_ALL_SOLVES, *(case for case in _TRIANGULAR if case != "triangular-False-True")],
}

#: Scenarios where a linker is known to differ from ``py`` (in both dtypes): (linker,
#: case, scenario) -> why. The linker's values there must still differ (an entry goes as
#: soon as its fix lands); the other scenarios of the case are compared as usual.
KNOWN_SCENARIOS: dict[tuple[str, str, str], str] = {
    **{("jax", case, s): _SPREAD for case in _TRIANGULAR for s in ("nan", "inf")},
    **{("jax", f"cho_solve-{lower}", "inf"): _SPREAD for lower in (True, False)},
    **{
        ("jax", case, scenario): FLUSHES_SUBNORMALS
        for scenario, cases in _FLUSHED.items()
        for case in cases
    },
}


def _disagreements(got: np.ndarray, ref: np.ndarray, where: str, ulps: int = 0) -> list[str]:
    """``where``'s line when ``got`` is not ``ref`` bit for bit (``ulps`` 0) or within
    ``ulps`` units in the last place (NaN in the same places, zeros of the same sign)."""
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return [f"{where}: {got.dtype} {got.shape}, py {ref.dtype} {ref.shape}"]
    if ulps:
        return [] if agree(got, ref, ulps).all() else [f"{where}: {got!r}, py {ref!r}"]
    numbers = ~np.isnan(ref)
    if not np.array_equal(got, ref, equal_nan=True) or not np.array_equal(
        np.signbit(got[numbers]), np.signbit(ref[numbers])
    ):
        return [f"{where}: {got!r}, py {ref!r}"]
    return []


#: The scenarios at the ends of the float range, checked apart.
EXTREMES = ("subnormal", "huge")


def _problems(case: str, dtype: str, extremes: bool) -> list[str]:
    ref = outcomes(dtype, "py")[case]
    assert ref.error is None, ref.error
    problems: list[str] = []
    for linker in usable_linkers():
        if linker == "py":
            continue
        got = outcomes(dtype, linker)[case]
        assert not refused(linker, got.error), f"{linker} has no code for {case}"
        assert got.error is None, f"{linker}: {got.error!r}"
        ulps = ROUNDING_ULPS.get(linker, 0)
        known: dict[str, list[str]] = {}
        for call, ref_outs in ref.values.items():
            scenario = call.split("/")[0]
            if (scenario in EXTREMES) != extremes:
                continue
            lines = _disagreements(got.values[call][0], ref_outs[0], f"{linker}/{call}", ulps)
            if (linker, case, scenario) in KNOWN_SCENARIOS:
                known.setdefault(scenario, []).extend(lines)
            else:
                problems += lines
        problems += [
            f"{linker}/{scenario}: agrees, yet is listed in KNOWN_SCENARIOS"
            for scenario, lines in known.items()
            if not lines
        ]
    return problems


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_slinalg_case_agrees_with_py_on_every_linker(case: str, dtype: str) -> None:
    problems = _problems(case, dtype, extremes=False)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_slinalg_case_agrees_with_py_on_extreme_matrices(case: str, dtype: str) -> None:
    problems = _problems(case, dtype, extremes=True)
    assert not problems, "\n".join(problems)


def test_the_edge_matrices_fail_where_they_should() -> None:
    """The scenarios are what their names say on ``py``: NaN for a singular system and an
    indefinite factorization, finite values for the positive-definite matrix."""
    got = outcomes("float64", "py")
    assert np.isfinite(got["cholesky-True"].values["spd/contiguous"][0]).all()
    assert np.isnan(got["cholesky-True"].values["indefinite/contiguous"][0]).all()
    assert np.isnan(got["solve-gen-True-b2"].values["singular/contiguous"][0]).all()
    assert np.isnan(got["solve-pos-False-b1"].values["indefinite/strided"][0]).all()
    assert got["cho_solve-True"].values["empty/reversed"][0].shape == (0, 2)
