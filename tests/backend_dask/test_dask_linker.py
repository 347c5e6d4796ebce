"""The ``dask`` linker: values equal to the ``vm`` linker's, laziness, graph structure."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.link.lookup import available_linkers, resolve_linker  # noqa: E402
from opweave_dask import DaskLinker, NodeKernel  # noqa: E402
from opweave_dask.elemwise import elemwise_on_chunks  # noqa: E402
from opweave_dask.kernel import chunk_linker  # noqa: E402
from opweave_dask.options import chunks_from_flag  # noqa: E402

IRREGULAR = ((3, 5, 2), (4, 4))
RNG = np.random.default_rng(42)
X = RNG.normal(size=(10, 8))
Y = RNG.normal(size=(10, 8))


def irregular(value: np.ndarray) -> da.Array:
    return da.from_array(value, chunks=IRREGULAR)


# ---------------------------------------------------------------------- the linker


def test_the_linker_is_installed_and_never_chosen_automatically() -> None:
    assert available_linkers()["dask"] is DaskLinker
    assert resolve_linker("auto") is not DaskLinker


def test_opweave_info_lists_the_dask_linker(capsys: pytest.CaptureFixture[str]) -> None:
    from opweave.cli import main

    main(["info"])
    out = capsys.readouterr().out
    assert "opweave-dask: linkers dask; available" in out


def test_every_core_op_has_an_entry() -> None:
    from opweave_dask.table import DASK_OPS, ONE_WORKER

    assert DASK_OPS.missing() == []
    assert DASK_OPS.lookup(ot.sort(ot.dvector()).owner.op) is ONE_WORKER


# ---------------------------------------------------------------------- elementwise


@pytest.mark.parametrize("kernel_linker", ["vm", "cvm", "c"])
def test_fused_elementwise_chain_equals_vm_on_irregular_chunks(same_as_vm, kernel_linker) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    out = ot.tanh(ot.exp(x) * y + 1) - ot.sqr(y) / 3
    with opweave.config.change_flags(dask__kernel_linker=kernel_linker):
        (got,) = same_as_vm([x, y], [out], [irregular(X), irregular(Y)])
    assert got.chunks == IRREGULAR


def test_a_fused_chain_is_one_blockwise_layer(dask_mode) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    f = opweave.function([x, y], ot.tanh(ot.exp(x) * y + 1) - ot.sqr(y) / 3, mode=dask_mode)
    assert len(f.maker.fgraph.apply_nodes) == 1  # fused into one Composite
    dx, dy = irregular(X), irregular(Y)
    out = f(dx, dy)
    assert len(out.dask.layers) == len(dx.dask.layers) + len(dy.dask.layers) + 1
    new = set(out.dask.layers) - set(dx.dask.layers) - set(dy.dask.layers)
    assert all(name.startswith("opweave-elemwise") for name in new)


def test_a_map_reduce_then_a_fused_chain_is_two_elementwise_layers(dask_mode) -> None:
    x = ot.dmatrix("x")
    summed = ot.exp(x).sum(axis=0)  # fused into one map-reduce node
    f = opweave.function([x], ot.log(summed + 1) * 2, mode=dask_mode)
    assert len(f.maker.fgraph.apply_nodes) == 2
    dx = irregular(X)
    out = f(dx)
    names = [n for n in out.dask.layers if n not in dx.dask.layers]
    assert sum(n.startswith("opweave-elemwise") for n in names) == 2
    np.testing.assert_allclose(out.compute(), np.log(np.exp(X).sum(axis=0) + 1) * 2)


def test_a_row_broadcasts_across_chunks(same_as_vm) -> None:
    x, r, s = ot.dmatrix("x"), ot.drow("r"), ot.dscalar("s")
    row = RNG.normal(size=(1, 8))
    (got,) = same_as_vm([x, r, s], [x * r + s], [irregular(X), row, np.float64(2.5)])
    assert got.chunks == IRREGULAR


def test_a_dask_row_with_its_own_chunks_broadcasts(same_as_vm) -> None:
    x, r = ot.dmatrix("x"), ot.drow("r")
    row = da.from_array(RNG.normal(size=(1, 8)), chunks=(1, 2))
    same_as_vm([x, r], [ot.exp(x) - r], [irregular(X), row])


def test_several_outputs_of_one_fused_node(same_as_vm) -> None:
    x = ot.dmatrix("x")
    e = ot.exp(x)
    same_as_vm([x], [e * 2, e + 1], [irregular(X)])


def test_integer_and_boolean_elementwise(same_as_vm) -> None:
    i, j = ot.lmatrix("i"), ot.lmatrix("j")
    ints = RNG.integers(-5, 5, size=(10, 8))
    same_as_vm([i, j], [i * j + 3, ot.gt(i, j), ot.cast(i, "float32") / 2], [irregular(ints), ints])


# ---------------------------------------------------------------------- reductions

AXES = [None, 0, 1, (0, 1)]


@pytest.mark.parametrize("axis", AXES)
def test_reductions_over_each_axis_set(same_as_vm, axis) -> None:
    x = ot.dmatrix("x")
    b = ot.gt(x, 0)
    outs = [
        ot.sum(x, axis=axis),
        ot.prod(x, axis=axis),
        ot.max(x, axis=axis),
        ot.min(x, axis=axis),
        ot.mean(x, axis=axis),
        ot.all(b, axis=axis),
        ot.any(b, axis=axis),
        ot.sum(ot.exp(x) * 2, axis=axis),  # a map-reduce node
        ot.argmax(x, axis=axis),
        ot.argmin(x, axis=axis),
    ]
    got = same_as_vm([x], outs, [irregular(X)])
    assert all(isinstance(o, da.Array) for o in got)


def test_integer_sum_accumulates_in_the_node_dtype(same_as_vm) -> None:
    i = ot.tensor(dtype="int8", shape=(None, None), name="i")
    small = RNG.integers(100, 127, size=(10, 8)).astype("int8")
    same_as_vm([i], [ot.sum(i), ot.sum(i, axis=0), ot.max(i, axis=1)], [irregular(small)])


def test_three_d_reduction_over_outer_axes(same_as_vm) -> None:
    t = ot.dtensor3("t")
    value = RNG.normal(size=(4, 6, 5))
    chunked = da.from_array(value, chunks=((1, 3), (2, 4), (5,)))
    same_as_vm(
        [t], [ot.sum(t, axis=(0, 2)), ot.argmax(t, axis=(0, 2)), ot.max(t, axis=2)], [chunked]
    )


# ---------------------------------------------------------------------- array operations


def test_dot_and_matrix_vector_products(same_as_vm) -> None:
    x, w, v = ot.dmatrix("x"), ot.dmatrix("w"), ot.dvector("v")
    wv = RNG.normal(size=(8, 3))
    vv = RNG.normal(size=8)
    dv = da.from_array(vv, chunks=(4, 4))
    same_as_vm(
        [x, w, v],
        [ot.dot(x, w), ot.dot(x, v), ot.dot(v, v), ot.dot(x.T, x) + 1],
        [irregular(X), wv, dv],
    )


def test_dimshuffle_transpose_expand_squeeze(same_as_vm) -> None:
    x, c = ot.dmatrix("x"), ot.dcol("c")
    col = RNG.normal(size=(10, 1))
    same_as_vm(
        [x, c],
        [x.T, x.dimshuffle("x", 1, 0), c.dimshuffle(0), x.dimshuffle(0, "x", 1)],
        [irregular(X), da.from_array(col, chunks=((3, 7), (1,)))],
    )


def test_reshape_to_vectors_and_other_matrices(same_as_vm) -> None:
    x = ot.dmatrix("x")
    same_as_vm([x], [x.reshape((80,)), x.reshape((5, 16)), x.reshape((-1, 4))], [irregular(X)])


def test_basic_and_advanced_indexing(same_as_vm) -> None:
    x, i = ot.dmatrix("x"), ot.lvector("i")
    k = ot.lscalar("k")
    same_as_vm(
        [x, i, k],
        [x[1:7, ::3], x[-1], x[2, 5], x[::-2], x[k:], x[i], x[i, 1:3]],
        [irregular(X), np.array([0, -1, 4, 4]), np.int64(3)],
    )


def test_advanced_indexing_with_lazy_indices(same_as_vm) -> None:
    x, i = ot.dmatrix("x"), ot.lvector("i")
    idx = da.from_array(np.array([9, 0, -2, 5]), chunks=2)
    same_as_vm([x, i], [x[i]], [irregular(X), idx])


def test_out_of_bounds_indices_raise(dask_mode) -> None:
    x, i = ot.dmatrix("x"), ot.lvector("i")
    f = opweave.function([x, i], x[i], mode=dask_mode)
    for indices in (np.array([1, 10]), da.from_array(np.array([1, -11]), chunks=1)):
        out = f(irregular(X), indices)  # lazy indices: checked when computed
        with pytest.raises(IndexError, match=r"index (10|-11) is out of bounds"):
            out.compute()
    g = opweave.function([x], x[ot.constant(np.array([0, 10]))], mode=dask_mode)
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        g(irregular(X))  # constant indices: checked at once


def test_join_and_stack(same_as_vm) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    i = ot.lmatrix("i")
    ints = RNG.integers(0, 9, size=(10, 8))
    same_as_vm(
        [x, y, i],
        [
            ot.concatenate([x, y]),
            ot.concatenate([x, y], axis=1),
            ot.stack([x, y]),
            ot.join(0, x, i),
        ],
        [irregular(X), Y, ints],
    )


def test_empty_arrays(same_as_vm) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    empty = np.zeros((0, 8))
    same_as_vm(
        [x, y],
        [ot.exp(x) * y, ot.sum(x), ot.sum(x, axis=0), x.T, ot.concatenate([x, y])],
        [da.from_array(empty, chunks=(0, 4)), empty],
    )


def test_a_node_without_chunked_form_runs_on_one_worker_lazily(same_as_vm) -> None:
    v, x = ot.dvector("v"), ot.dmatrix("x")
    vec = RNG.normal(size=10)
    got = same_as_vm(
        [v, x],
        [ot.sort(v) * 2, ot.cumsum(x, axis=0), ot.sort(v)[::2]],
        [da.from_array(vec, chunks=3), irregular(X)],
    )
    assert got[0].shape == (10,) and got[1].shape == (10, 8)  # lengths from infer_shape


# ---------------------------------------------------------------------- laziness and flags


def test_nothing_is_computed_before_compute(dask_mode) -> None:
    calls: list[int] = []

    def load() -> np.ndarray:
        calls.append(1)
        return X

    lazy = da.from_delayed(dask.delayed(load)(), shape=X.shape, dtype=X.dtype)
    x = ot.dmatrix("x")
    f = opweave.function(
        [x], [ot.exp(x).sum(axis=1), ot.dot(x, x.T), ot.sort(x[0])], mode=dask_mode
    )
    outs = f(lazy)
    assert calls == []
    assert all(isinstance(o, da.Array) for o in outs)
    total, prod, srt = dask.compute(*outs)
    assert calls == [1]
    np.testing.assert_allclose(total, np.exp(X).sum(axis=1))
    np.testing.assert_allclose(prod, X @ X.T)
    np.testing.assert_allclose(srt, np.sort(X[0]))


def test_numpy_inputs_are_chunked_by_the_flag(dask_mode) -> None:
    x = ot.dvector("x")
    f = opweave.function([x], x * 2, mode=dask_mode)
    with opweave.config.change_flags(dask__chunk_size="4"):
        out = f(np.arange(10.0))
    assert out.chunks == ((4, 4, 2),)
    np.testing.assert_array_equal(out.compute(), np.arange(10.0) * 2)


def test_compute_flag_returns_numpy(dask_mode) -> None:
    x = ot.dmatrix("x")
    f = opweave.function([x], [ot.exp(x), ot.sum(x)], mode=dask_mode)
    with opweave.config.change_flags(dask__compute=True):
        e, s = f(irregular(X))
    assert type(e) is np.ndarray and type(s) is np.ndarray
    np.testing.assert_allclose(e, np.exp(X))
    np.testing.assert_allclose(s, X.sum())


def test_chunk_size_flag_values() -> None:
    assert chunks_from_flag("auto") == "auto"
    assert chunks_from_flag("1000") == 1000
    assert chunks_from_flag("64MiB") == "64MiB"
    with pytest.raises(ValueError, match=r"64MiB"):
        opweave.config.dask__chunk_size = "lots"


def test_a_computed_output_never_shares_memory_with_an_input(dask_mode) -> None:
    x = ot.dmatrix("x")
    f = opweave.function([x], x.T, mode=dask_mode)
    value = X.copy()
    with opweave.config.change_flags(dask__compute=True):
        out = f(value)
    assert not np.shares_memory(out, value)
    np.testing.assert_array_equal(out, X.T)


# ---------------------------------------------------------------------- shared variables


def test_shared_variable_is_updated_to_the_new_dask_array(dask_mode) -> None:
    acc = opweave.shared(np.zeros(8), name="acc")
    x = ot.dmatrix("x")
    f = opweave.function([x], ot.sum(x), updates=[(acc, acc + x.sum(axis=0))], mode=dask_mode)
    f(irregular(X))
    f(irregular(Y))
    value = acc.get_value()
    assert isinstance(value, da.Array)
    np.testing.assert_allclose(value.compute(), X.sum(axis=0) + Y.sum(axis=0))
    with opweave.config.change_flags(dask__compute=True):
        f(irregular(X))
    assert type(acc.get_value()) is np.ndarray
    np.testing.assert_allclose(acc.get_value(), 2 * X.sum(axis=0) + Y.sum(axis=0))


def test_logistic_regression_trains_on_dask_data(dask_mode) -> None:
    n, d = 400, 5
    data = RNG.normal(size=(n, d))
    truth = RNG.normal(size=d)
    labels = (data @ truth > 0).astype("float64")
    x, t = ot.dmatrix("x"), ot.dvector("t")
    w = opweave.shared(np.zeros(d), name="w")
    b = opweave.shared(np.float64(0.0), name="b")
    p = ot.sigmoid(ot.dot(x, w) + b)
    loss = -ot.mean(t * ot.log(p) + (1 - t) * ot.log(1 - p))
    gw, gb = opweave.grad(loss, [w, b])
    train = opweave.function(
        [x, t], loss, updates=[(w, w - 0.5 * gw), (b, b - 0.5 * gb)], mode=dask_mode
    )
    dx = da.from_array(data, chunks=(100, d))
    dt = da.from_array(labels, chunks=100)
    losses = []
    with opweave.config.change_flags(dask__compute=True):
        for _ in range(6):
            losses.append(float(train(dx, dt)))
    assert losses[0] == pytest.approx(np.log(2))
    assert all(b < a for a, b in itertools.pairwise(losses))
    # the same steps on the vm linker give the same weights
    w_vm = opweave.shared(np.zeros(d))
    b_vm = opweave.shared(np.float64(0.0))
    p_vm = ot.sigmoid(ot.dot(x, w_vm) + b_vm)
    loss_vm = -ot.mean(t * ot.log(p_vm) + (1 - t) * ot.log(1 - p_vm))
    gw_vm, gb_vm = opweave.grad(loss_vm, [w_vm, b_vm])
    step = opweave.function(
        [x, t],
        loss_vm,
        updates=[(w_vm, w_vm - 0.5 * gw_vm), (b_vm, b_vm - 0.5 * gb_vm)],
        mode=opweave.Mode(linker="vm"),
    )
    for _ in range(6):
        step(data, labels)
    np.testing.assert_allclose(w.get_value(), w_vm.get_value(), rtol=1e-10)


# ---------------------------------------------------------------------- bad input


def test_a_list_is_refused(dask_mode) -> None:
    x = ot.dvector("x")
    f = opweave.function([x], x * 2, mode=dask_mode)
    with pytest.raises(
        TypeError, match=r"input 'x' .* takes a dask.array.Array or a numpy.ndarray, got list"
    ):
        f([1.0, 2.0])


def test_a_dask_array_of_the_wrong_rank_is_refused(dask_mode) -> None:
    x = ot.dvector("x")
    f = opweave.function([x], x * 2, mode=dask_mode)
    with pytest.raises(TypeError, match=r"input 'x' .* takes a 1-d array, got a 2-d dask array"):
        f(irregular(X))
    with pytest.raises(TypeError, match=r"input 'x' .*: .*expected 1 dimension"):
        f(X)  # NumPy arrays go through the Type's own filter


def test_a_lossy_dtype_is_refused_and_a_safe_one_cast(dask_mode) -> None:
    x = ot.fvector("x")
    f = opweave.function([x], x * 2, mode=dask_mode)
    with pytest.raises(TypeError, match="cannot take a dask array of dtype float64"):
        f(da.ones(4, chunks=2))
    out = f(da.ones(4, chunks=2, dtype="int8"))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.compute(), np.full(4, 2, dtype="float32"))


def test_a_wrong_static_length_is_refused(dask_mode) -> None:
    x = ot.tensor(dtype="float64", shape=(3,), name="x")
    f = opweave.function([x], x + 1, mode=dask_mode)
    with pytest.raises(ValueError, match="static length 3 on axis 0"):
        f(da.ones(4, chunks=2))


# ---------------------------------------------------------------------- kernels


def test_chunk_kernels_pickle_and_compile_on_arrival() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    f = opweave.function([x, y], ot.exp(x) * y + 1, mode=opweave.Mode(linker="vm"))
    (node,) = f.maker.fgraph.toposort()
    kernel, chunked = elemwise_on_chunks(node, chunk_linker())
    assert chunked == [0, 1]
    copy = pickle.loads(pickle.dumps(kernel))
    assert isinstance(copy, NodeKernel) and copy.token == kernel.token
    np.testing.assert_allclose(copy(X[:3], Y[:3]), np.exp(X[:3]) * Y[:3] + 1)


def test_host_values_compute_dask_outputs_and_pass_others() -> None:
    import dask.array as da

    x = ot.dvector("x")
    f = opweave.function([x], [ot.exp(x), x.shape[0]], mode=opweave.Mode(linker="dask"))
    lazy = f(da.ones(5, chunks=2))
    assert isinstance(lazy[0], da.Array)
    host = f.maker.linker.host_values(lazy)
    assert isinstance(host[0], np.ndarray)
    np.testing.assert_allclose(host[0], np.exp(np.ones(5)))
    assert int(host[1]) == 5
    # eager linkers' outputs are their host values already
    g = opweave.function([x], ot.exp(x), mode=opweave.Mode(linker="vm"))
    value = g(np.ones(2))
    assert g.maker.linker.host_values([value])[0] is value
