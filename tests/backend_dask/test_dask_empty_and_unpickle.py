"""The dask linker on inputs with no rows gives what NumPy (and ``vm``) give: values,
shapes, dtypes, and NumPy's errors; what it puts into Dask graphs, unpickled where
opweave-dask is missing, says what to install."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.link._absent import rebuild  # noqa: E402

x, y = ot.dmatrix("x"), ot.dmatrix("y")
v, w, iv = ot.dvector("v"), ot.dvector("w"), ot.lvector("iv")

#: name -> (inputs, output, the same with NumPy, input shapes)
CASES: dict[str, tuple[list[Any], Any, Callable[..., Any], list[tuple[int, ...]]]] = {
    "exp_plus_one": ([x], ot.exp(x) + 1, lambda a: np.exp(a) + 1, [(0, 3)]),
    "broadcast_row": ([x, v], x * v, lambda a, b: a * b, [(0, 3), (3,)]),
    "sum": ([x], x.sum(), np.sum, [(0, 3)]),
    "sum_axis0": ([x], x.sum(axis=0), lambda a: a.sum(axis=0), [(0, 3)]),
    "sum_axis1": ([x], x.sum(axis=1), lambda a: a.sum(axis=1), [(0, 3)]),
    "prod": ([x], x.prod(), np.prod, [(0, 3)]),
    "prod_axis0": ([x], x.prod(axis=0), lambda a: a.prod(axis=0), [(0, 3)]),
    "int_prod": ([iv], iv.prod(), np.prod, [(0,)]),
    "max_axis1": ([x], x.max(axis=1), lambda a: a.max(axis=1), [(0, 3)]),
    "sum_of_squares": ([x], (x**2).sum(axis=1), lambda a: (a**2).sum(axis=1), [(0, 3)]),
    "dot_no_rows": ([x, y], ot.dot(x, y), np.dot, [(0, 3), (3, 2)]),
    "dot_empty_inner": ([x, y], ot.dot(x, y), np.dot, [(3, 0), (0, 2)]),
    "vector_dot": ([v, w], ot.dot(v, w), np.dot, [(0,), (0,)]),
    "argmax_kept_axis": ([x], ot.argmax(x, axis=1), lambda a: np.argmax(a, axis=1), [(0, 3)]),
    "reshape": ([x], x.reshape((-1,)), lambda a: a.reshape(-1), [(0, 3)]),
    "reshape_to_matrix": ([x], x.reshape((3, -1)), lambda a: a.reshape(3, -1), [(0, 3)]),
}


def _chunked(value: np.ndarray, chunks: Any) -> Any:
    return value if chunks is None else da.from_array(value, chunks=chunks)


@pytest.mark.parametrize("chunks", [None, 2, "auto"], ids=["numpy", "chunks2", "auto"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_empty_inputs_give_numpys_values(case: str, chunks: Any) -> None:
    inputs, output, reference, shapes = CASES[case]
    args = [np.ones(s, dtype=i.type.dtype) for i, s in zip(inputs, shapes, strict=True)]
    want = np.asarray(reference(*args))
    f = opweave.function(inputs, output, mode=opweave.Mode(linker="dask"))
    got = np.asarray(f.maker.linker.host_values([f(*[_chunked(a, chunks) for a in args])])[0])
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("chunks", [None, 2], ids=["numpy", "chunks2"])
@pytest.mark.parametrize(
    ("build", "axis", "reference"),
    [
        (ot.max, None, np.max),
        (ot.max, 0, lambda a, axis: np.max(a, axis=axis)),
        (ot.min, None, np.min),
        (ot.argmax, None, np.argmax),
        (ot.argmax, 0, lambda a, axis: np.argmax(a, axis=axis)),
        (ot.argmin, (0, 1), lambda a, axis: np.argmin(a.reshape(-1))),
    ],
)
def test_reductions_without_identity_refuse_empty_input_as_numpy(
    build: Callable[..., Any], axis: Any, reference: Callable[..., Any], chunks: Any
) -> None:
    a = np.ones((0, 3))
    with pytest.raises(ValueError) as numpy_error:
        reference(a, axis=axis)
    for linker in ("vm", "dask"):
        f = opweave.function([x], build(x, axis=axis), mode=opweave.Mode(linker=linker))
        with pytest.raises(ValueError) as err:
            f.maker.linker.host_values([f(_chunked(a, chunks) if linker == "dask" else a)])
        assert str(err.value).startswith(str(numpy_error.value)), linker


# ---------------------------------------------------------------------- unpickling


@pytest.fixture
def without_opweave_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``opweave_dask`` and its modules unimportable (as where it is not installed)."""
    for name in [n for n in sys.modules if n == "opweave_dask" or n.startswith("opweave_dask.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "opweave_dask", None)


def _lazy_values() -> dict[str, Any]:
    """Dask values built by the dask linker: an elementwise map, a reduction and an
    index check (each holds one of this backend's callables)."""
    i = ot.lvector("i")
    with opweave.config.change_flags(dask__compute=False):
        f = opweave.function(
            [x, i], [ot.exp(x) * 2, x.sum(axis=0), x[i]], mode=opweave.Mode(linker="dask")
        )
        mapped, summed, indexed = f(np.ones((4, 3)), da.from_array(np.array([0, 3]), chunks=1))
    return {"elemwise": mapped, "reduction": summed, "index": indexed}


@pytest.mark.parametrize("kind", ["elemwise", "reduction", "index"])
def test_lazy_values_unpickle_where_opweave_dask_is_installed(kind: str) -> None:
    value = _lazy_values()[kind]
    copy = pickle.loads(pickle.dumps(value))
    np.testing.assert_array_equal(copy.compute(), value.compute())


@pytest.mark.parametrize("kind", ["elemwise", "reduction", "index"])
def test_unpickling_without_opweave_dask_names_the_distribution(
    kind: str, request: pytest.FixtureRequest
) -> None:
    data = pickle.dumps(_lazy_values()[kind])
    request.getfixturevalue("without_opweave_dask")
    with pytest.raises(ModuleNotFoundError, match=r"pip install opweave-dask") as err:
        pickle.loads(data)
    assert "opweave_dask" in str(err.value)


def test_rebuild_names_the_distribution_only_for_its_own_modules(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ModuleNotFoundError, match="pip install some-dist"):
        rebuild("some-dist", "opweave_no_such_backend.kernel", "Kernel", ())
    # a module that is there but imports a missing one: Python's own error
    (tmp_path / "opweave_broken_backend.py").write_text("import opweave_missing_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="opweave_missing_dependency") as err:
        rebuild("some-dist", "opweave_broken_backend", "f", None)
    assert "pip install some-dist" not in str(err.value)
    assert rebuild("numpy", "numpy", "add", None) is np.add
    assert rebuild("numpy", "numpy", "dtype", ("int8",)) == np.dtype("int8")
