"""The dask linker's graphs on a ``dask.distributed`` cluster of worker processes."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402


def test_a_fused_graph_computes_on_two_worker_processes() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    f = opweave.function(
        [x, y],
        [ot.tanh(ot.exp(x) * y + 1), ot.sum(x * y, axis=0)],
        mode=opweave.Mode(linker="dask"),
    )
    rng = np.random.default_rng(3)
    xv, yv = rng.normal(size=(40, 6)), rng.normal(size=(40, 6))
    fused, summed = f(da.from_array(xv, chunks=(10, 3)), da.from_array(yv, chunks=(10, 3)))
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        got_fused, got_summed = client.compute([fused, summed], sync=True)
        pids = client.run(lambda: __import__("os").getpid())
    assert len(set(pids.values())) == 2
    np.testing.assert_allclose(got_fused, np.tanh(np.exp(xv) * yv + 1))
    np.testing.assert_allclose(got_summed, (xv * yv).sum(axis=0))


def _kill_on_second_kernel_call(marker: str) -> int:
    """Run in each worker: make opweave's chunk kernels kill their worker process once.

    The second kernel call in a worker process writes its process id to ``marker`` (created
    exclusively, so only one worker of the cluster ever does it) and exits the process at
    once, as a crash would. Kernel calls after that, in any process, run normally.
    """
    import os

    from opweave_dask.kernel import NodeKernel

    calls = [0]
    original = NodeKernel.__call__

    def dying_call(self: NodeKernel, *values: object) -> object:
        calls[0] += 1
        if calls[0] == 2:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os._exit(1)
        return original(self, *values)

    NodeKernel.__call__ = dying_call  # type: ignore[method-assign]
    return os.getpid()


def test_a_worker_dying_in_a_chunk_kernel_is_recovered_from(tmp_path: object) -> None:
    import os

    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    outputs = [ot.tanh(ot.exp(x) * y + 1), ot.sum(x * y, axis=0)]
    f = opweave.function([x, y], outputs, mode=opweave.Mode(linker="dask"))
    g = opweave.function([x, y], outputs, mode=opweave.Mode(linker="vm"))
    rng = np.random.default_rng(5)
    xv, yv = rng.normal(size=(64, 8)), rng.normal(size=(64, 8))
    fused, summed = f(da.from_array(xv, chunks=(8, 4)), da.from_array(yv, chunks=(8, 4)))
    marker = os.path.join(str(tmp_path), "killed")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        before = set(client.run(_kill_on_second_kernel_call, marker).values())
        got_fused, got_summed = client.compute([fused, summed], sync=True)
        client.wait_for_workers(2, timeout=30)
        after = set(client.run(os.getpid).values())
    with open(marker) as file:
        killed = int(file.read())
    assert len(before) == 2
    assert killed in before
    assert killed not in after
    want_fused, want_summed = g(xv, yv)
    np.testing.assert_allclose(got_fused, want_fused, rtol=1e-12)
    np.testing.assert_allclose(got_summed, want_summed, rtol=1e-12)
