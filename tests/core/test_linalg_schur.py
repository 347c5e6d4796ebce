"""``opweave.tensor.linalg.schur``, ``qz`` and ``ordqz`` (and their Ops ``Schur``, ``QZ``):
values against ``scipy.linalg`` on the ``py``, ``vm`` and ``cvm`` linkers, the
reconstructions ``Z T Z^H == A`` and ``Q AA Z^H == A``, ``Q BB Z^H == B``, the eigenvalue
selections, batches, static shapes and ``infer_shape``, dtypes, bad inputs, the missing
gradient, and the SciPy dependency (imported only when such a node runs)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import scipy.linalg as sla

import opweave
import opweave.tensor as ot
from opweave.compile import In, Mode
from opweave.gradient import NullTypeGradError
from opweave.graph.basic import Variable
from opweave.graph.utils import InconsistencyError
from opweave.link.capabilities import capability_matrix
from opweave.tensor import linalg, slinalg
from opweave.tensor.linalg import QZ, Schur, ordqz, qz, schur
from opweave.tensor.type import TensorType

LINKERS = ["py", "vm", "cvm"]
SORTS = ["lhp", "rhp", "iuc", "ouc"]
RNG = np.random.default_rng(20240611)


def T(dtype: str, shape: tuple[int | None, ...], name: str = "x") -> Any:
    return TensorType(dtype, shape=shape)(name)


def matrices(shape: tuple[int, ...], complex_: bool = False) -> np.ndarray:
    x = RNG.normal(size=shape)
    return x + 1j * RNG.normal(size=shape) if complex_ else x


def rebuilt(left: np.ndarray, core: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left @ core @ right^H`` over a batch."""
    return np.einsum("...ij,...jk,...lk->...il", left, core, right.conj())  # type: ignore[no-any-return]


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, linker: str = "vm") -> Any:
    return opweave.function(list(inputs), outputs, mode=Mode(linker=linker))(*values)


# ====================================================================== names


def test_the_linalg_modules_export_them() -> None:
    for module in (linalg, slinalg):
        for name in ("Schur", "QZ", "schur", "qz", "ordqz"):
            assert name in module.__all__
            assert getattr(module, name) is getattr(linalg, name)


def test_they_are_listed_under_the_python_backend() -> None:
    matrix = capability_matrix(opweave.get_plugin_manager().hook.opweave_backend_info())
    for cls in (
        "opweave.tensor.linalg.decomposition.schur.Schur",
        "opweave.tensor.linalg.decomposition.schur.QZ",
    ):
        assert matrix[cls]["opweave-python"] == "implemented", matrix[cls]


def test_props() -> None:
    assert Schur() == Schur(output="real", overwrite_a=False, sort=None)
    assert hash(Schur(sort="lhp")) == hash(Schur(sort="lhp"))
    assert Schur(sort="lhp") != Schur(sort="rhp") and Schur() != Schur(output="complex")
    assert Schur.__props__ == ("output", "overwrite_a", "sort")
    assert QZ.__props__ == (
        "complex_output",
        "overwrite_a",
        "overwrite_b",
        "sort",
        "return_eigenvalues",
    )
    assert QZ(sort="iuc") != QZ(sort="iuc", return_eigenvalues=True)
    assert Schur().destroy_map == {} and Schur(overwrite_a=True).destroy_map == {0: [0]}
    assert QZ(overwrite_a=True, overwrite_b=True).destroy_map == {0: [0], 1: [1]}


# ====================================================================== schur


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("complex_", [False, True], ids=["real_input", "complex_input"])
@pytest.mark.parametrize("shape", [(5, 5), (2, 4, 4)], ids=["matrix", "batch"])
def test_schur_matches_scipy_and_rebuilds(
    linker: str, output: str, complex_: bool, shape: tuple[int, ...]
) -> None:
    dtype = "complex128" if complex_ else "float64"
    x = T(dtype, (None,) * len(shape))
    a = matrices(shape, complex_)
    t, z = run([x], list(schur(x, output=output)), a, linker=linker)
    np.testing.assert_allclose(rebuilt(z, t, z), a, atol=1e-10)
    want = np.vectorize(lambda m: sla.schur(m, output=output), signature="(m,m)->(m,m),(m,m)")(a)
    np.testing.assert_allclose(t, want[0], atol=1e-10)
    np.testing.assert_allclose(z, want[1], atol=1e-10)
    if output == "complex" or complex_:
        assert t.dtype == np.complex128
        np.testing.assert_array_equal(np.tril(t, -1), 0)  # triangular
    else:
        assert t.dtype == np.float64
        np.testing.assert_array_equal(np.tril(t, -2), 0)  # quasi-triangular


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_sort_matches_scipy(sort: str, output: str) -> None:
    x = ot.dmatrix("x")
    a = matrices((6, 6)) * 0.7
    t, z = run([x], list(schur(x, output=output, sort=sort)), a)
    t0, z0, sdim = sla.schur(a, output=output, sort=sort)
    np.testing.assert_allclose(t, t0, atol=1e-10)
    np.testing.assert_allclose(z, z0, atol=1e-10)
    np.testing.assert_allclose(rebuilt(z, t, z), a, atol=1e-10)
    assert 0 < sdim < 6  # the selection is not trivial on this matrix
    w = np.linalg.eigvals(t[:sdim, :sdim])
    chosen = {
        "lhp": w.real < 0,
        "rhp": w.real >= 0,
        "iuc": np.abs(w) <= 1,
        "ouc": np.abs(w) > 1,
    }[sort]
    assert chosen.all()


def test_schur_sorted_differs_from_unsorted() -> None:
    x = ot.dmatrix("x")
    a = np.diag([3.0, -1.0, 2.0, -4.0])
    t, _ = run([x], list(schur(x, sort="lhp")), a)
    np.testing.assert_allclose(np.diag(t)[:2], [-1.0, -4.0])
    t, _ = run([x], list(schur(x)), a)
    np.testing.assert_allclose(np.diag(t), [3.0, -1.0, 2.0, -4.0])


def test_schur_of_an_empty_matrix_and_non_finite_values() -> None:
    x = ot.fmatrix("x")
    t, z = run([x], list(schur(x)), np.empty((0, 0), dtype="float32"))
    assert t.shape == z.shape == (0, 0) and t.dtype == z.dtype == np.float32
    y = ot.dtensor3("y")
    a = matrices((2, 3, 3))
    a[1, 0, 0] = np.inf
    t, z = run([y], list(schur(y)), a)
    assert np.isnan(t[1]).all() and np.isnan(z[1]).all()
    np.testing.assert_allclose(t[0], sla.schur(a[0])[0], atol=1e-12)


def test_schur_float32_agrees_with_scipy_in_single_precision() -> None:
    x = ot.fmatrix("x")
    a = matrices((4, 4)).astype("float32")
    t, z = run([x], list(schur(x)), a)
    assert t.dtype == z.dtype == np.float32
    t0 = sla.schur(a)[0]
    np.testing.assert_allclose(t, t0, atol=1e-5)
    np.testing.assert_allclose(rebuilt(z, t, z), a, atol=1e-4)


def test_schur_overwrite_a_destroys_its_input() -> None:
    x = ot.dmatrix("x")
    t, z = Schur(overwrite_a=True)(x)
    f = opweave.function([In(x, mutable=True)], [t, z], mode=Mode(linker="vm"), accept_inplace=True)
    a = np.asfortranarray(matrices((4, 4)))
    t0, z0 = sla.schur(a)
    given = a.copy(order="F")
    got_t, got_z = f(given)
    np.testing.assert_allclose(got_t, t0, atol=1e-12)
    np.testing.assert_allclose(got_z, z0, atol=1e-12)
    np.testing.assert_allclose(given, t0, atol=1e-12)  # LAPACK wrote T over A
    with pytest.raises(InconsistencyError, match="destroys x"):
        opweave.function([x], [t, z], mode=Mode(linker="vm"), accept_inplace=True)


# ====================================================================== qz / ordqz


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("complex_", [False, True], ids=["real_input", "complex_input"])
@pytest.mark.parametrize("sort", [None, *SORTS])
def test_qz_matches_scipy_and_rebuilds(
    linker: str, output: str, complex_: bool, sort: str | None
) -> None:
    dtype = "complex128" if complex_ else "float64"
    x, y = T(dtype, (None, None), "a"), T(dtype, (None, None), "b")
    a, b = matrices((5, 5), complex_), matrices((5, 5), complex_)
    got = run([x, y], list(qz(x, y, output=output, sort=sort)), a, b, linker=linker)
    assert len(got) == 4
    aa, bb, q, z = got
    np.testing.assert_allclose(rebuilt(q, aa, z), a, atol=1e-10)
    np.testing.assert_allclose(rebuilt(q, bb, z), b, atol=1e-10)
    if sort is None:
        want = sla.qz(a, b, output=output)
    else:
        aa0, bb0, _, _, q0, z0 = sla.ordqz(a, b, sort=sort, output=output)
        want = (aa0, bb0, q0, z0)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-10)


@pytest.mark.parametrize("sort", SORTS)
@pytest.mark.parametrize("output", ["real", "complex"])
def test_ordqz_matches_scipy(sort: str, output: str) -> None:
    x, y = ot.dmatrix("a"), ot.dmatrix("b")
    a, b = matrices((6, 6)), matrices((6, 6))
    got = run([x, y], list(ordqz(x, y, sort=sort, output=output)), a, b)
    want = sla.ordqz(a, b, sort=sort, output=output)
    assert [g.dtype for g in got] == [w.dtype for w in want]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-10)
    aa, bb, _, _, q, z = got
    np.testing.assert_allclose(rebuilt(q, aa, z), a, atol=1e-10)
    np.testing.assert_allclose(rebuilt(q, bb, z), b, atol=1e-10)


def test_unsorted_eigenvalues_are_the_generalized_eigenvalues() -> None:
    x, y = ot.dmatrix("a"), ot.dmatrix("b")
    a, b = matrices((5, 5)), matrices((5, 5))
    outs = ordqz(x, y)  # PyTensor's default: no sorting
    assert len(outs) == 6 and outs[2].dtype == "complex128" and outs[3].dtype == "float64"
    aa, bb, alpha, beta, q, z = run([x, y], list(outs), a, b)
    for g, w in zip((aa, bb, q, z), sla.qz(a, b), strict=True):
        np.testing.assert_allclose(g, w, atol=1e-10)
    np.testing.assert_allclose(
        np.sort_complex(alpha / beta), np.sort_complex(sla.eigvals(a, b)), rtol=1e-8
    )


def test_qz_with_eigenvalues_on_a_broadcast_batch() -> None:
    x, y = T("float64", (2, None, None), "a"), T("float64", (1, None, None), "b")
    a, b = matrices((2, 4, 4)), matrices((1, 4, 4))
    outs = qz(x, y, sort="iuc", return_eigenvalues=True)
    assert [o.type.shape for o in outs] == [(2, None, None)] * 2 + [(2, None)] * 2 + [
        (2, None, None)
    ] * 2
    got = run([x, y], list(outs), a, b, linker="py")
    for i in range(2):
        want = sla.ordqz(a[i], b[0], sort="iuc")
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g[i], w, atol=1e-10)


def test_qz_non_finite_and_empty() -> None:
    x, y = ot.dmatrix("a"), ot.dmatrix("b")
    a, b = matrices((3, 3)), matrices((3, 3))
    a[1, 2] = np.nan
    got = run([x, y], list(ordqz(x, y, sort="lhp")), a, b)
    assert all(np.isnan(g).all() for g in got)
    got = run([x, y], list(ordqz(x, y)), np.empty((0, 0)), np.empty((0, 0)))
    assert [g.shape for g in got] == [(0, 0), (0, 0), (0,), (0,), (0, 0), (0, 0)]


# ====================================================================== shapes, dtypes


def test_static_shapes() -> None:
    t, z = schur(T("float64", (3, None, 4)))
    assert t.type.shape == z.type.shape == (3, 4, 4)
    outs = qz(T("float64", (None, 5)), T("float64", (2, 1, None, None)), return_eigenvalues=True)
    assert [o.type.shape for o in outs] == [(2, 1, 5, 5)] * 2 + [(2, 1, 5)] * 2 + [(2, 1, 5, 5)] * 2


def check_infer_shape(inputs: Sequence[Variable], out: Variable, *values: Any) -> None:
    """``infer_shape`` gives the value's shape, and compiled ``out.shape`` runs no Schur/QZ."""
    expected = run(inputs, out, *values).shape
    f = opweave.function(list(inputs), out.shape, mode=Mode(linker="py"))
    assert tuple(f(*values)) == expected
    assert not any(isinstance(n.op, Schur | QZ) for n in f.maker.fgraph.toposort())


def test_infer_shape() -> None:
    x, y = ot.dtensor3("a"), ot.dmatrix("b")
    a, b = matrices((2, 3, 3)), matrices((3, 3))
    for out in schur(x):
        check_infer_shape([x], out, a)
    for out in qz(x, y, return_eigenvalues=True):
        check_infer_shape([x, y], out, a, b)
    for out in qz(y, x):
        check_infer_shape([x, y], out, a, b)


@pytest.mark.parametrize(
    ("dtype", "output", "expected"),
    [
        ("float64", "real", "float64"),
        ("float32", "real", "float32"),
        ("float32", "complex", "complex64"),
        ("float64", "complex", "complex128"),
        ("int64", "real", "float64"),
        ("int8", "real", "float32"),
        ("int64", "complex", "complex128"),
        ("complex64", "real", "complex64"),
        ("complex128", "complex", "complex128"),
    ],
)
def test_output_dtypes(dtype: str, output: str, expected: str) -> None:
    x = T(dtype, (3, 3))
    assert [o.dtype for o in schur(x, output=output)] == [expected] * 2
    outs = qz(x, x, output=output, return_eigenvalues=True)
    alpha = np.result_type(expected, np.complex64).name
    assert [o.dtype for o in outs] == [expected, expected, alpha, expected, expected, expected]


def test_mixed_precision_and_integer_values() -> None:
    x, y = T("float32", (3, 3), "a"), T("int64", (3, 3), "b")
    assert {o.dtype for o in qz(x, y)} == {"float64"}
    a = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]])
    t, _ = run([y], list(schur(y)), a)
    assert t.dtype == np.float64
    np.testing.assert_allclose(t, sla.schur(a.astype(float))[0], atol=1e-12)


# ====================================================================== bad input


def test_bad_inputs_name_the_input() -> None:
    with pytest.raises(ValueError, match=r"Schur: the input A .* must be square"):
        schur(T("float64", (3, 4)))
    with pytest.raises(TypeError, match=r"Schur: the input A .* at least 2 dimensions"):
        schur(ot.dvector("v"))
    with pytest.raises(TypeError, match=r"Schur: the input A .* cannot be made a tensor"):
        schur(object())
    with pytest.raises(ValueError, match=r"QZ: the input B .* must be square"):
        qz(ot.dmatrix(), T("float64", (2, 3)))
    with pytest.raises(TypeError, match=r"QZ: the input A .* at least 2 dimensions"):
        ordqz(ot.dscalar(), ot.dmatrix())
    with pytest.raises(ValueError, match="same order"):
        qz(T("float64", (3, None)), T("float64", (None, 4)))
    with pytest.raises(ValueError, match="cannot broadcast"):
        qz(T("float64", (2, 3, 3)), T("float64", (4, 3, 3)))


def test_bad_options() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(ValueError, match=r"Schur: output must be 'real' or 'complex', got 'r'"):
        schur(x, output="r")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"qz: output must be 'real' or 'complex'"):
        qz(x, x, output="Complex")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Schur: sort must be None or one of"):
        schur(x, sort="left")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"QZ: sort must be None or one of"):
        ordqz(x, x, sort=lambda a, b: a.real < 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Schur: sort must be None or one of"):
        schur(x, sort=lambda w: w.real < 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"QZ: return_eigenvalues must be a bool, got 'yes'"):
        QZ(return_eigenvalues="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Schur: overwrite_a must be a bool"):
        Schur(overwrite_a=1)  # type: ignore[arg-type]


def test_run_time_shapes_are_checked() -> None:
    x, y = ot.dmatrix("a"), ot.dmatrix("b")
    with pytest.raises(ValueError, match="the input A must hold square matrices"):
        run([x], list(schur(x)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="same order"):
        run([x, y], list(qz(x, y)), np.ones((2, 2)), np.ones((3, 3)))


# ====================================================================== gradient


def test_no_gradient_as_in_pytensor() -> None:
    x, y = ot.dmatrix("a"), ot.dmatrix("b")
    with pytest.raises(NullTypeGradError, match=r"gradient of Schur.* is not implemented"):
        opweave.grad(ot.sum(schur(x)[0]), x)
    with pytest.raises(NullTypeGradError, match="not unique"):
        opweave.grad(ot.sum(qz(x, y)[2]), y)


# ====================================================================== SciPy


def test_a_missing_scipy_is_named_when_the_node_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    x = ot.dmatrix("x")
    f = opweave.function([x], list(schur(x)), mode=Mode(linker="vm"))
    g = opweave.function([x], list(qz(x, x)), mode=Mode(linker="py"))
    monkeypatch.setitem(sys.modules, "scipy.linalg", None)
    for fn in (f, g):
        with pytest.raises(ImportError, match=r"computed with SciPy.*pip install scipy"):
            fn(np.eye(2))


SCRIPT = """
import sys
import numpy as np
import opweave
import opweave.tensor as ot
from opweave.tensor.linalg import ordqz, schur
x = ot.dmatrix("x")
outs = [*schur(x, sort="lhp"), *ordqz(x, x + 1.0, sort="iuc")]
fns = [opweave.function([x], outs, mode=opweave.Mode(linker=l)) for l in ("vm", "cvm")]
print(any(name == "scipy" or name.startswith("scipy.") for name in sys.modules))
fns[0](np.eye(3))
print("scipy.linalg" in sys.modules)
"""


def test_scipy_is_imported_only_when_a_node_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
