"""opweave's Dask backend: the ``dask`` linker runs graphs lazily over chunked Dask arrays.

Elementwise nodes run chunk by chunk through opweave's own compiled kernels
(:mod:`opweave_dask.elemwise`), reductions through :func:`dask.array.reduction`
(:mod:`opweave_dask.reductions`), products, axis changes, reshapes, joins and indexing
through Dask's array operations (:mod:`opweave_dask.arrays`), other nodes on one worker
(:mod:`opweave_dask.fallback`).

Importing the package, or the plugin, imports no Dask: the table names its builders
(:mod:`opweave_dask.lazy`) and the linker imports :mod:`opweave_dask.running` when it links.
"""

from opweave_dask.kernel import NodeKernel
from opweave_dask.linker import DaskLinker
from opweave_dask.table import DASK_OPS

__all__ = ["DASK_OPS", "DaskLinker", "NodeKernel"]
