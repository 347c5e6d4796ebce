"""The Elemwise rewrites under PyTensor's module and names (``pytensor.tensor.rewriting.elemwise``).

The definitions live in opweave's modules, one per family; this module re-exports them:

* :class:`FusionOptimizer` (:mod:`opweave.tensor.rewriting.fusion`): chains of
  ``Elemwise`` fused into one ``Elemwise(Composite)``;
* :class:`InplaceElemwiseOptimizer` (:mod:`opweave.tensor.rewriting.inplace`):
  ``Elemwise`` computed in the storage of an input;
* :data:`local_careduce_fusion` (:mod:`opweave.tensor.rewriting.reduce_fusion`): a
  reduction of an elementwise map computed in one pass.

They are registered into each compilation's rewrite database by
:func:`~opweave.tensor.rewriting.plugin.register_standard_rewrites`.
"""

from opweave.tensor.rewriting.fusion import FusionOptimizer
from opweave.tensor.rewriting.inplace import InplaceElemwiseOptimizer
from opweave.tensor.rewriting.reduce_fusion import local_careduce_fusion

__all__ = ["FusionOptimizer", "InplaceElemwiseOptimizer", "local_careduce_fusion"]
