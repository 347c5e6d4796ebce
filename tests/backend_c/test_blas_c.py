"""C code of Dot and MatMul: NumPy's values, dtypes and errors (as the Python backend's) for
every rank combination, dtype pair and memory layout, on the ``c`` and ``cvm`` linkers."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.basic import io_toposort
from opweave.tensor.blas import Dot, MatMul

PY = Mode(linker="py", optimizer=None)
C = Mode(linker="c", optimizer=None)
RNG = np.random.default_rng(77)
#: (first dtype, second dtype): same dtypes (the output is written in place) and mixed
#: ones (NumPy's result is cast to the node's dtype).
DTYPE_PAIRS = [
    ("float64", "float64"),
    ("float32", "float32"),
    ("int64", "int64"),
    ("bool", "bool"),
    ("int32", "float32"),
    ("uint8", "int8"),
    ("float32", "float64"),
]


def _outcome(f, args):
    try:
        return "ok", f(*args)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def check(fc, fp, cases, rtol=1e-5):
    """Every case gives the same values (dtype, shape) or error (type, message) twice."""
    for args in cases:
        for _ in range(2):  # the second call writes into the previous outputs
            ref, got = _outcome(fp, args), _outcome(fc, args)
            assert ref[0] == got[0], f"{args!r}: {ref} != {got}"
            if ref[0] == "error":
                assert ref[1] == got[1]
                continue
            for r, g in zip(ref[1], got[1], strict=True):
                assert type(r) is type(g)
                assert r.dtype == g.dtype and r.shape == g.shape, f"{r!r} != {g!r}"
                np.testing.assert_allclose(g, r, rtol=rtol)


def _values(dtype, shape):
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype.startswith("float"):
        return RNG.normal(size=shape).astype(dtype)
    low = 0 if dtype.startswith("u") else -5
    return RNG.integers(low, 6, size=shape).astype(dtype)


def test_dot_every_rank_combination_and_dtype_pair():
    inputs, outputs = [], []
    for a, b in DTYPE_PAIRS:
        v1 = ot.tensor(f"v_{a}", dtype=a, shape=(None,))
        w2 = ot.tensor(f"w_{b}", dtype=b, shape=(None,))
        m1 = ot.tensor(f"m_{a}", dtype=a, shape=(None, None))
        m2 = ot.tensor(f"n_{b}", dtype=b, shape=(None, None))
        inputs += [v1, w2, m1, m2]
        outputs += [ot.dot(v1, w2), ot.dot(m1, w2), ot.dot(v1, m2), ot.dot(m1, m2)]
    assert all(isinstance(o.owner.op, Dot) for o in outputs)
    fc = opweave.function(inputs, outputs, mode=C)
    fp = opweave.function(inputs, outputs, mode=PY)
    cases = []
    for n, k, m in [(3, 4, 5), (7, 1, 1), (0, 4, 2), (3, 0, 2), (2, 3, 0), (33, 65, 17)]:
        plain, strided = [], []
        for a, b in DTYPE_PAIRS:
            vals = [_values(a, (k,)), _values(b, (k,)), _values(a, (n, k)), _values(b, (k, m))]
            plain += vals
            strided += [
                vals[0][::-1],
                np.repeat(vals[1], 2)[::2],
                np.asfortranarray(vals[2]),
                vals[3][::-1, ::-1],
            ]
        cases += [plain, strided]
    # Contracted lengths that differ: NumPy's "not aligned" error, from the first Dot.
    bad = []
    for a, b in DTYPE_PAIRS:
        bad += [_values(a, (3,)), _values(b, (3,)), _values(a, (2, 3)), _values(b, (4, 2))]
    cases.append(bad)
    check(fc, fp, cases)


def test_matmul_batches_ranks_and_dtypes():
    x = ot.dtensor3("x")
    y = ot.tensor("y", dtype="float64", shape=(1, None, None))  # broadcasts its batch axis
    z = ot.tensor("z", dtype="float32", shape=(None, None, None, None))
    i = ot.tensor("i", dtype="int32", shape=(None, None, None))
    m = ot.dmatrix("m")
    v = ot.dvector("v")
    outputs = [
        ot.matmul(x, y),
        ot.matmul(y, x),
        ot.matmul(x, x.transpose(0, 2, 1)),
        ot.matmul(z, x),  # rank 4 @ rank 3, mixed dtypes
        ot.matmul(z, z.transpose(0, 1, 3, 2)),  # float32 in place
        ot.matmul(i, i.transpose(0, 2, 1)),  # integers
        ot.matmul(x, v),  # a vector operand
        MatMul()(m, m.T),  # MatMul of matrices (matmul() would build a Dot)
    ]
    inputs = [x, y, z, i, m, v]
    nodes = io_toposort(inputs, outputs)
    assert sum(isinstance(n.op, MatMul) for n in nodes) == len(outputs)
    fc = opweave.function(inputs, outputs, mode=C)
    fp = opweave.function(inputs, outputs, mode=PY)

    def case(b, n, k, j, layout=lambda a: a):
        return [
            layout(_values("float64", (b, n, k))),
            layout(_values("float64", (1, k, n))),
            layout(_values("float32", (2, b, n, k))),
            layout(_values("int32", (b, n, k))),
            layout(_values("float64", (j, k))),
            _values("float64", (k,)),
        ]

    cases = [
        case(3, 4, 5, 2),
        case(1, 1, 1, 1),
        case(2, 0, 3, 0),
        case(2, 3, 0, 4),
        case(4, 6, 7, 5, layout=lambda a: np.ascontiguousarray(a[..., ::-1])[..., ::-1]),
        case(3, 5, 4, 3, layout=lambda a: a.T.copy().T),
    ]
    # A batch axis of length 1 whose static length is unknown must not broadcast.
    bad = case(3, 4, 5, 2)
    bad[2] = _values("float32", (2, 1, 4, 5))
    cases.append(bad)
    # Contracted lengths that differ: NumPy's error.
    bad = case(3, 4, 5, 2)
    bad[5] = _values("float64", (4,))
    cases.append(bad)
    check(fc, fp, cases)


def test_dot_writes_into_its_previous_output_without_overwriting_results():
    a, b = ot.dmatrix("a"), ot.dmatrix("b")
    prod = ot.dot(a, b)
    with opweave.config.change_flags(allow_gc=False):
        f = opweave.function([a, b], ot.sum(prod, axis=0), mode=Mode(linker="cvm"))
    (dot,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Dot)]
    assert f.fn.c_nodes == list(range(len(f.maker.fgraph.toposort())))
    cell = f.fn.storage_map[dot.outputs[0]]
    x1, y1 = _values("float64", (4, 3)), _values("float64", (3, 5))
    x2, y2 = _values("float64", (4, 3)), _values("float64", (3, 5))
    np.testing.assert_allclose(f(x1, y1), (x1 @ y1).sum(axis=0), rtol=1e-13)
    buffer = cell[0]
    np.testing.assert_allclose(f(x2, y2), (x2 @ y2).sum(axis=0), rtol=1e-13)
    assert cell[0] is buffer  # the same memory, written again
    np.testing.assert_allclose(f(y2.T, x2.T), (y2.T @ x2.T).sum(axis=0), rtol=1e-13)
    assert cell[0].shape == (5, 4)

    g = opweave.function([a, b], prod, mode=C)
    r1 = g(x1, y1)
    kept = r1.copy()
    r2 = g(x2, y2)
    np.testing.assert_array_equal(r1, kept)  # a returned result is never overwritten
    np.testing.assert_allclose(r2, x2 @ y2, rtol=1e-13)


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_dot_in_a_rewritten_graph(linker):
    a, b = ot.fmatrix("a"), ot.fmatrix("b")
    f = opweave.function([a, b], ot.dot(a, b), mode=Mode(linker=linker))
    if linker == "cvm":
        assert f.fn.c_nodes == list(range(len(f.maker.fgraph.toposort())))
    x, y = _values("float32", (256, 784)), _values("float32", (784, 256))
    got = f(x, y)
    assert got.dtype == np.float32 and got.shape == (256, 256)
    np.testing.assert_allclose(got, x @ y, rtol=1e-4, atol=1e-4)
