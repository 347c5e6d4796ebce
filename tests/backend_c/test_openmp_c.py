"""``config.openmp``: flat Elemwise loops on several threads give the one-thread values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import In, Mode
from opweave.tensor.elemwise import Elemwise

C = Mode(linker="c")


def _compile(inputs, outputs, tmp_path: Path, **kwargs):
    with opweave.config.change_flags(
        openmp=True, openmp_elemwise_minsize=1, compiledir=str(tmp_path)
    ):
        f = opweave.function(inputs, outputs, mode=C, **kwargs)
    source = "".join(p.read_text() for p in tmp_path.rglob("*.c"))
    return f, source


def test_threads_are_off_by_default() -> None:
    assert opweave.config.openmp is False
    assert opweave.config.openmp_elemwise_minsize == 200000


def test_threaded_loops_give_the_one_thread_values(tmp_path: Path) -> None:
    """A deep (blocked) and a shallow fused loop, a statically scalar input, at lengths
    around the chunk size."""
    x, y = ot.dvector("x"), ot.dvector("y")
    s = ot.TensorType("float64", shape=(1,))("s")
    deep = x
    for _ in range(4):
        deep = ot.tanh(deep * 1.5 + s) - 0.05
    outs = [deep, ot.exp(x) * y + s]
    f, source = _compile([x, y, s], outs, tmp_path)
    assert "#pragma omp parallel" in source and "opw_ew_par_" in source
    ref = opweave.function([x, y, s], outs, mode=Mode(linker="py"))
    rng = np.random.default_rng(11)
    for n in [0, 1, 63, 64, 65, 127, 129, 1000, 100_003]:
        args = [rng.normal(size=n), rng.normal(size=n), np.array([0.25])]
        for got, exp in zip(f(*args), ref(*args), strict=True):
            np.testing.assert_allclose(got, exp, rtol=1e-13, atol=1e-15)


def test_threaded_in_place_loop(tmp_path: Path) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = Elemwise(ps.add, {0: 0})(x, y)
    f, _ = _compile([In(x, mutable=True), y], out, tmp_path, accept_inplace=True)
    a, b = np.arange(10_001.0), np.ones(10_001)
    np.testing.assert_array_equal(f(a, b), np.arange(1.0, 10_002.0))
    np.testing.assert_array_equal(a, np.arange(1.0, 10_002.0))


class OwnCDouble(ps.UnaryScalarOp):
    """A scalar Op with C code of its own (which could fail): its loops stay on one
    thread, since a Python exception needs the calling thread."""

    nfunc_spec = None

    def impl(self, x):
        return 2 * x

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = 2 * {inputs[0]};"

    def c_code_cache_version(self):
        return (1,)


@pytest.mark.filterwarnings("ignore")
def test_scalar_ops_with_their_own_c_stay_on_one_thread(tmp_path: Path) -> None:
    from opweave.scalar.rules import same_out

    x = ot.dvector("x")
    out = Elemwise(OwnCDouble(same_out, name="own_double"))(x)
    f, source = _compile([x], out, tmp_path)
    assert "opw_ew_par_" not in source
    np.testing.assert_array_equal(f(np.arange(5.0)), np.arange(5.0) * 2)


def test_loops_doing_more_work_thread_from_fewer_elements() -> None:
    """The threshold is ``openmp_elemwise_minsize`` for one cheap Op per element, divided
    by the work of a fused loop (a call such as ``tanh`` counting as 8)."""
    from opweave_c.impls.blocked import work_per_element
    from opweave_c.impls.elemwise import C_OPS

    x = ot.dvector("x")
    chain = x
    for _ in range(5):
        chain = ot.tanh(chain) * 1.5 + 0.1
    f = opweave.function([x], [chain, x + 1.0], mode=Mode(linker="py"))
    nodes = f.maker.fgraph.toposort()
    for node in nodes:
        impl = C_OPS[Elemwise](node.op, node)
        work = work_per_element(node.op.scalar_op)
        impl.use_threads(True, 200_000, work)
        assert impl.parallel_from == 200_000 // work
        impl.use_threads(False, 200_000, work)
        assert impl.parallel_from == 0
    assert sorted(work_per_element(n.op.scalar_op) for n in nodes) == [1, 5 * (8 + 2)]
