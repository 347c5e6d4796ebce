"""``eigvalsh`` and the generalized ``eigh`` on edge matrices, on every linker, against
NumPy and SciPy.

Symmetric 3 x 3 matrices (repeated eigenvalues, signed zeros, NaN, infinities, huge and
tiny entries), paired with positive definite right-hand sides (and some that are not),
are stacked into batches, contiguous, strided and transposed, in float32 and float64, and
evaluated by one compiled function per linker (``py``, ``vm``, ``c``, ``cvm``). All
linkers must give the same bits or the same error; the eigenvalues must be NumPy's
(``eigvalsh``) and SciPy's (``eigh(a, b)``): NaN exactly where they give NaN, finite values
within rounding, or the same failures. ``Eigvalsh`` runs on ``c`` once the C backend's
table lists its C code; until then the ``c`` linker is left out for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from nlinalg_cases import DTYPES, INF, NAN, SYMMETRIC, close_to, layouts, outcome, same_outcome

import opweave
from opweave.compile import Mode
from opweave.tensor import nlinalg as nl
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave.tensor.type import TensorType

scipy_linalg = pytest.importorskip("scipy.linalg")

from opweave_c.impls import C_OPS  # noqa: E402
from opweave_c.impls.nlinalg_eigen import eigvalsh_c  # noqa: E402

#: The linkers ``Eigvalsh`` runs on (``c`` needs its C code listed).
EIGVALSH_LINKERS = (
    ("py", "vm", "c", "cvm") if C_OPS.lookup(Eigvalsh) is eigvalsh_c else ("py", "vm", "cvm")
)

#: Matrices holding NaN or infinities (NumPy's ``eigvalsh`` may raise ``LinAlgError`` or
#: give NaN, or finite values where the triangle read holds no NaN).
NONFINITE: dict[str, list[list[float]]] = {
    "nan-corner": [[NAN, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
    "nan-middle": [[1.0, 0.0, 0.0], [0.0, NAN, 0.0], [0.0, 0.0, 1.0]],
    "nan-upper": [[1.0, NAN, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
    "inf": [[INF, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
    "-inf-middle": [[1.0, 0.0, 0.0], [0.0, -INF, 0.0], [0.0, 0.0, 1.0]],
}


#: Symmetric positive definite right-hand sides ``b``.
DEFINITE: dict[str, list[list[float]]] = {
    "identity": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    "scaled": [[4.0, 0.0, 0.0], [0.0, 1e-3, 0.0], [0.0, 0.0, 9.0]],
    "coupled": [[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 1.5]],
}

#: Right-hand sides that are not positive definite.
INDEFINITE: dict[str, list[list[float]]] = {
    "negative": [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    "singular": [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    "zeros": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
}


def _scipy_eigh(a: np.ndarray, b: np.ndarray, lower: bool, only: bool) -> Any:
    """``scipy.linalg.eigh(a, b)`` without its check for finite entries."""
    return scipy_linalg.eigh(a, b, lower=lower, eigvals_only=only, check_finite=False)


def _functions(dtype: str, linkers: tuple[str, ...], ops: list[Any]) -> dict[str, Any]:
    a = TensorType(dtype, shape=(None, None, None))("a")
    b = TensorType(dtype, shape=(None, None, None))("b")
    outs = [o for op in ops for o in op.make_node(a, b).outputs]
    mode = {k: Mode(linker=k, optimizer=None) for k in linkers}
    return {k: opweave.function([a, b], outs, mode=mode[k]) for k in linkers}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_generalized_problems_of_every_pair(lower: bool, dtype: str) -> None:
    pairs = [(a, b) for a in SYMMETRIC.values() for b in DEFINITE.values()]
    a = np.array([p[0] for p in pairs], dtype=dtype)
    b = np.array([p[1] for p in pairs], dtype=dtype)
    eigh = _functions(dtype, ("py", "vm", "c", "cvm"), [nl.Eigh(lower=lower)])
    vals = _functions(dtype, EIGVALSH_LINKERS, [Eigvalsh(lower=lower)])
    want = np.array([scipy_linalg.eigh(x, y, lower=lower, eigvals_only=True) for x, y in pairs])
    for la, lb in zip(layouts(a), layouts(b), strict=True):
        for fns in (eigh, vals):
            ref = outcome(fns["py"], la, lb)
            assert ref[0] == "ok"
            close_to(ref[1][0], want, f"{dtype} py", rtol32=1e-4)
            for k, f in fns.items():
                same_outcome(ref, outcome(f, la, lb), f"{dtype} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigenvalues_of_every_matrix(dtype: str) -> None:
    a = np.array(list(SYMMETRIC.values()), dtype=dtype)
    x = TensorType(dtype, shape=(None, None, None))("x")
    out = Eigvalsh().make_node(x).outputs[0]
    fns = {
        k: opweave.function([x], out, mode=Mode(linker=k, optimizer=None)) for k in EIGVALSH_LINKERS
    }
    want = np.linalg.eigvalsh(a)
    for layout in layouts(a):
        ref = outcome(fns["py"], layout)
        close_to(ref[1], want, dtype, rtol32=1e-4)
        for k, f in fns.items():
            same_outcome(("ok", [ref[1]]), ("ok", [outcome(f, layout)[1]]), f"{dtype} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("name", list(NONFINITE))
def test_nonfinite_matrices_behave_as_in_numpy(name: str, lower: bool, dtype: str) -> None:
    """NumPy's error where it raises one, else its NaN; the generalized problem with the
    identity as ``b`` fails or not as SciPy's ``eigh`` does."""
    a = np.array([SYMMETRIC["general"], NONFINITE[name]], dtype=dtype)
    b = np.array([DEFINITE["identity"]] * 2, dtype=dtype)
    want = outcome(np.linalg.eigvalsh, a, "L" if lower else "U")
    fns = _functions(dtype, EIGVALSH_LINKERS, [Eigvalsh(lower=lower)])
    x = TensorType(dtype, shape=(None, None, None))("x")
    one = Eigvalsh(lower=lower).make_node(x).outputs[0]
    for k in EIGVALSH_LINKERS:
        f = opweave.function([x], one, mode=Mode(linker=k, optimizer=None))
        got = outcome(f, a)
        assert got[0] == want[0], (k, got, want)
        if want[0] == "error":
            assert got[1] == (np.linalg.LinAlgError, "Eigenvalues did not converge"), k
        else:
            close_to(got[1], want[1], f"{name} {k}", rtol32=1e-4)
    tables = {
        True: fns,
        False: _functions(dtype, ("py", "vm", "c", "cvm"), [nl.Eigh(lower=lower)]),
    }
    for only, table in tables.items():
        scipy_ok = all(
            outcome(_scipy_eigh, m, i, lower, only)[0] == "ok"
            for m, i in zip(a.astype(np.float64), b.astype(np.float64), strict=True)
        )
        ref = outcome(table["py"], a, b)
        assert (ref[0] == "ok") == scipy_ok, ref
        if ref[0] == "error":
            assert ref[1] == (np.linalg.LinAlgError, "Eigenvalues did not converge")
        for k, f in table.items():
            same_outcome(ref, outcome(f, a, b), f"{name} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(INDEFINITE))
def test_indefinite_b_raises_everywhere(name: str, dtype: str) -> None:
    a = np.array([SYMMETRIC["general"]] * 2, dtype=dtype)
    b = np.array([DEFINITE["coupled"], INDEFINITE[name]], dtype=dtype)
    with pytest.raises(np.linalg.LinAlgError):
        scipy_linalg.eigh(a[1], b[1])
    for op, linkers in ((nl.Eigh(), ("py", "vm", "c", "cvm")), (Eigvalsh(), EIGVALSH_LINKERS)):
        fns = _functions(dtype, linkers, [op])
        for k, f in fns.items():
            assert outcome(f, a, b) == (
                "error",
                (np.linalg.LinAlgError, f"{op}: b is not positive definite"),
            ), k


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_problems(dtype: str) -> None:
    for shape in ((2, 0, 0), (0, 3, 3)):
        z = np.zeros(shape, dtype=dtype)
        for ops, linkers in (
            ([nl.Eigh()], ("py", "vm", "c", "cvm")),
            ([Eigvalsh()], EIGVALSH_LINKERS),
        ):
            for k, f in _functions(dtype, linkers, ops).items():
                got = f(z, z)
                assert got[0].shape == shape[:-1] and got[0].dtype == np.dtype(dtype), k
                assert all(g.shape[:-1] == shape[:-1] for g in got[1:]), k
