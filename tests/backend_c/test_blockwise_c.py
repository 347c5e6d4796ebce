"""C code of ``Blockwise`` (a batch loop around the core Op's C code): the Python
backend's values, shapes, dtypes and errors on the ``c`` and ``cvm`` linkers, for core
Ops with C (Cholesky, Solve, SolveTriangular, CholeskySolve, Dot); core Ops without C
leave the node to Python.

The core Ops' C calls the routines their Python kernels call (see ``test_slinalg_c.py``),
one matrix at a time as the Python Blockwise kernel does, so values agree bit for bit.
"""

from __future__ import annotations

import gc
import sys
import weakref
from typing import Any, Literal

import numpy as np
import pytest
from c_parity import check, compiled, outcome, strided

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.link.capabilities import PARTIAL
from opweave.link.resolver import class_capability
from opweave.tensor import nlinalg as nl
from opweave.tensor import slinalg as sl
from opweave.tensor.blas import Dot
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.type import TensorType

pytest.importorskip("scipy.linalg.lapack")

from opweave_c.impls import C_OPS, c_code_for
from opweave_c.impls.blockwise_loop import BlockwiseC
from opweave_c.linkers.c_linker import MissingCCodeError

RNG = np.random.default_rng(7)

#: (id, core Op, signature, does the second input have a core matrix (else a vector)).
CORES: list[tuple[str, Any, str, bool | None]] = [
    ("cholesky-lower", sl.Cholesky(lower=True), "(m,m)->(m,m)", None),
    ("cholesky-upper", sl.Cholesky(lower=False), "(m,m)->(m,m)", None),
    ("solve-gen", sl.Solve(assume_a="gen", b_ndim=2), "(m,m),(m,n)->(m,n)", True),
    ("solve-pos-vector", sl.Solve(assume_a="pos", b_ndim=1), "(m,m),(m)->(m)", False),
    (
        "triangular",
        sl.SolveTriangular(lower=True, unit_diagonal=False, b_ndim=2),
        "(m,m),(m,n)->(m,n)",
        True,
    ),
    ("cho_solve", sl.CholeskySolve(lower=True, b_ndim=2), "(m,m),(m,n)->(m,n)", True),
    ("dot-matvec", Dot(), "(m,n),(n)->(m)", False),
]


def spd(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    """Symmetric positive definite matrices of ``shape`` (the last two axes equal)."""
    x = RNG.normal(size=shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def bw(core: Any, signature: str, *inputs: Any) -> Any:
    """The Blockwise of ``core`` applied to ``inputs``."""
    return Blockwise(core, signature=signature)(*inputs)


def node_of(
    core: Any, signature: str, a_shape: tuple, b_shape: tuple | None, dtype: str
) -> tuple[list[Any], Any]:
    """The inputs and the Blockwise output, with the given static shapes."""
    a = TensorType(dtype, shape=a_shape)("a")
    if b_shape is None:
        return [a], Blockwise(core, signature=signature)(a)
    b = TensorType(dtype, shape=b_shape)("b")
    return [a, b], Blockwise(core, signature=signature)(a, b)


def values(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...] | None, dtype: str
) -> list[np.ndarray]:
    """A batch of symmetric positive definite ``a`` (and normal ``b``)."""
    args = [spd(a_shape, dtype)]
    if b_shape is not None:
        args.append(RNG.normal(size=b_shape).astype(dtype))
    return args


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("name", "core", "signature", "matrix_b"), CORES, ids=[c[0] for c in CORES]
)
def test_batched_core_ops_agree_with_python(
    name: str, core: Any, signature: str, matrix_b: bool | None, dtype: str
) -> None:
    """Broadcasting batch dimensions, an empty batch and non-contiguous inputs: the same
    values bit for bit, shapes and dtypes as the Python backend, every node in C."""
    b_core = None if matrix_b is None else ((3, 2) if matrix_b else (3,))
    b_static = None if b_core is None else (1, None, *b_core)
    ins, out = node_of(core, signature, (None, 1, 3, 3), b_static, dtype)
    fns = compiled(ins, out)
    b_full = None if b_core is None else (1, 4, *b_core)
    b_empty = None if b_core is None else (1, 0, *b_core)
    cases = [
        values((2, 1, 3, 3), b_full, dtype),
        values((0, 1, 3, 3), b_full, dtype),
        values((2, 1, 3, 3), b_empty, dtype),
        [strided(v) for v in values((2, 1, 3, 3), b_full, dtype)],
    ]
    check(fns, cases)
    got = fns["c"](*cases[0])
    assert got.shape == ((2, 1, 3, 3) if b_core is None else (2, 4, *b_core))
    assert got.dtype == dtype


def test_broadcast_shape_and_items_match_the_core_op() -> None:
    """Each batch entry of the output is the core Op on that entry of the broadcast inputs."""
    ins, out = node_of(
        sl.Solve(assume_a="gen", b_ndim=2),
        "(m,m),(m,n)->(m,n)",
        (None, 1, 3, 3),
        (1, None, 3, 2),
        "float64",
    )
    f = opweave.function(ins, out, mode=Mode(linker="c", optimizer=None))
    a, b = spd((2, 1, 3, 3)), RNG.normal(size=(1, 4, 3, 2))
    got = f(a, b)
    assert got.shape == (2, 4, 3, 2) and got.flags.c_contiguous
    for i in range(2):
        for j in range(4):
            np.testing.assert_allclose(got[i, j], np.linalg.solve(a[i, 0], b[0, j]), rtol=1e-12)


def test_batch_lengths_that_do_not_broadcast_raise_the_python_error() -> None:
    ins, out = node_of(
        sl.Solve(assume_a="gen", b_ndim=2),
        "(m,m),(m,n)->(m,n)",
        (None, 3, 3),
        (None, 3, 2),
        "float64",
    )
    fns = compiled(ins, out)
    args = [spd((2, 3, 3)), RNG.normal(size=(3, 3, 2))]
    ref = outcome(fns["py"], args)
    assert ref[0] == "error" and ref[1][0] is ValueError
    assert "batch dimension 0 has different lengths {0: 2, 1: 3}" in ref[1][1]
    check(fns, [args, [spd((1, 3, 3)), RNG.normal(size=(2, 3, 2))]])


@pytest.mark.parametrize("on_error", ["nan", "raise"])
def test_a_failing_batch_entry_behaves_as_in_python(on_error: Literal["nan", "raise"]) -> None:
    """Cholesky of a matrix that is not positive definite, at one batch index: NaN for that
    entry only, or numpy.linalg.LinAlgError with the core Op's message."""
    ins, out = node_of(
        sl.Cholesky(lower=True, on_error=on_error), "(m,m)->(m,m)", (None, 3, 3), None, "float64"
    )
    fns = compiled(ins, out)
    a = spd((3, 3, 3))
    a[1] = -np.eye(3)
    ref = outcome(fns["py"], [a])
    if on_error == "nan":
        assert ref[0] == "ok"
        assert np.isnan(ref[1][1]).all() and not np.isnan(ref[1][0]).any()
    else:
        assert ref[0] == "error" and ref[1][0] is np.linalg.LinAlgError
        assert "is not positive definite" in ref[1][1]
    check(fns, [[a]])


def test_gradients_through_blockwise_compile_on_c() -> None:
    x = TensorType("float64", shape=(None, 3, 3))("x")
    ch = bw(sl.Cholesky(lower=True), "(m,m)->(m,m)", x)
    g = opweave.grad((ch * ch).sum(), x)
    fns = {k: opweave.function([x], [ch, g], mode=Mode(linker=k)) for k in ("py", "c", "cvm")}
    kinds = [n.op for n in fns["c"].maker.fgraph.toposort() if isinstance(n.op, Blockwise)]
    assert len(kinds) >= 2
    n_nodes = len(fns["cvm"].maker.fgraph.toposort())
    assert fns["cvm"].fn.c_nodes == list(range(n_nodes))
    v = spd((4, 3, 3))
    ref = fns["py"](v)
    for name in ("c", "cvm"):
        for r, got in zip(ref, fns[name](v), strict=True):
            assert got.shape == r.shape and got.dtype == r.dtype
            np.testing.assert_allclose(got, r, rtol=1e-12, atol=1e-14)


def test_core_ops_without_c_keep_the_node_in_python() -> None:
    x = TensorType("float64", shape=(None, 3, 3))("x")
    inv = bw(nl.TensorInv(ind=1), "(m,n)->(n,m)", x)
    assert c_code_for(inv.owner.op, inv.owner) is None
    with pytest.raises(MissingCCodeError, match=r"Blockwise\{TensorInv"):
        opweave.function([x], inv, mode=Mode(linker="c", optimizer=None))
    f = opweave.function([x], inv, mode=Mode(linker="cvm", optimizer=None))
    assert f.fn.c_nodes == []
    v = spd((2, 3, 3))
    np.testing.assert_allclose(f(v), np.linalg.inv(v), rtol=1e-10)


def test_capability_is_partial_and_nodes_get_the_loop() -> None:
    assert class_capability(C_OPS, Blockwise) == PARTIAL
    x = TensorType("float64", shape=(None, 3, 3))("x")
    ch = bw(sl.Cholesky(lower=True), "(m,m)->(m,m)", x)
    impl = c_code_for(ch.owner.op, ch.owner)
    assert isinstance(impl, BlockwiseC)
    assert impl.c_code_cache_version_apply(ch.owner)
    assert any("potrf" in s for s in impl.c_support_code())


def _dtype_refs_after(fn: Any, dtype: str, calls: int = 1000) -> int:
    descr = np.dtype(dtype)
    fn()
    gc.collect()
    before = sys.getrefcount(descr)
    for _ in range(calls):
        fn()
    gc.collect()
    return sys.getrefcount(descr) - before


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_no_leaks_on_success_and_on_errors(linker: str) -> None:
    ins, out = node_of(
        sl.Cholesky(lower=True, on_error="raise"), "(m,m)->(m,m)", (None, 3, 3), None, "float64"
    )
    f = opweave.function(ins, out, mode=Mode(linker=linker, optimizer=None))
    good, bad, empty = spd((5, 3, 3)), spd((5, 3, 3)), spd((0, 3, 3))
    bad[2] = -np.eye(3)

    def fails() -> None:
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            f(bad)

    assert _dtype_refs_after(lambda: f(good), "float64") == 0
    assert _dtype_refs_after(fails, "float64") == 0
    assert _dtype_refs_after(lambda: f(empty), "float64") == 0
    ins2, out2 = node_of(
        sl.Solve(assume_a="gen", b_ndim=2),
        "(m,m),(m,n)->(m,n)",
        (None, 3, 3),
        (None, 3, 2),
        "float64",
    )
    g = opweave.function(ins2, out2, mode=Mode(linker=linker, optimizer=None))
    a, b = spd((2, 3, 3)), RNG.normal(size=(3, 3, 2))

    def mismatched() -> None:
        with pytest.raises(ValueError, match="different lengths"):
            g(a, b)

    assert _dtype_refs_after(mismatched, "float64", calls=200) == 0
    arg = spd((4, 3, 3))
    ref = weakref.ref(arg)
    f(arg)
    del arg
    gc.collect()
    assert ref() is None


class Head(Op):
    """``x[:int(x[0])]`` of a float64 vector (a ValueError for a negative count), in Python
    and in C (with per-node support code): its output length varies along a batch."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [TensorType("float64", shape=(None,))()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        (x,) = inputs
        n = int(x[0])
        if n < 0:
            raise ValueError("Head: a negative count")
        outputs[0][0] = x[: min(n, len(x))].copy()

    def c_support_code_apply(self, node: Apply, name: str) -> str:
        return f"""
static npy_intp {name}_count(PyArrayObject* x) {{
    npy_intp n = (npy_intp)*(double*)PyArray_GETPTR1(x, 0);
    return n < PyArray_DIM(x, 0) ? n : PyArray_DIM(x, 0);
}}"""

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        (x,), (z,), fail = inputs, outputs, sub["fail"]
        return f"""{{
    npy_intp n = {name}_count({x}), i;
    if (n < 0) {{
        PyErr_SetString(PyExc_ValueError, "Head: a negative count");
        {fail}
    }}
    Py_XDECREF({z});
    {z} = (PyArrayObject*)PyArray_EMPTY(1, &n, NPY_FLOAT64, 0);
    if (!{z}) {fail}
    for (i = 0; i < n; i++)
        ((double*)PyArray_DATA({z}))[i] = *(double*)PyArray_GETPTR1({x}, i);
}}"""

    def c_code_cache_version(self) -> tuple[int, ...]:
        return (1,)


def test_core_ops_with_support_code_errors_and_varying_shapes() -> None:
    """A core Op of the graph's own with per-node support code: its values; its error at a
    batch index; the Python kernel's error for an output whose shape changes along the
    batch."""
    x = TensorType("float64", shape=(None, 4))("x")
    fns = compiled([x], bw(Head(), "(n)->(m)", x))
    rows = np.array([[2.0, 5.0, 6.0, 7.0], [2.0, 1.0, 0.0, 3.0]])
    varying = rows.copy()
    varying[1, 0] = 3.0
    negative = rows.copy()
    negative[1, 0] = -1.0
    cases = [[rows], [strided(rows)], [varying], [negative], [rows[:0]]]
    assert outcome(fns["py"], [varying])[1][1].endswith(
        "the outputs must not change shape along the batch"
    )
    assert outcome(fns["py"], [negative])[1] == (ValueError, "Head: a negative count")
    check(fns, cases)
