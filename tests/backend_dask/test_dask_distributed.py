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
