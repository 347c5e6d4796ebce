"""The standard rewrites of tensor graphs, one module per family.

* :mod:`~opweave.tensor.rewriting.constant_folding`: nodes of constants computed at
  compile time;
* :mod:`~opweave.tensor.rewriting.canonicalize`: algebraic identities (``x * 1``,
  ``-(-x)``, ``x - x``, reductions of DimShuffles), stable forms (``log1p``, ``expm1``,
  ``log_softmax``) and special cases (``dot`` of transposes);
* :mod:`~opweave.tensor.rewriting.shape`: ``Shape``/``Shape_i`` answered from
  ``infer_shape``;
* :mod:`~opweave.tensor.rewriting.reshape`: ``join_dims``/``split_dims`` as ``Reshape``;
* :mod:`~opweave.tensor.rewriting.fusion`: chains of ``Elemwise`` fused into
  ``Elemwise(Composite)``;
* :mod:`~opweave.tensor.rewriting.inplace`: ``Elemwise`` computed in place;
* :mod:`~opweave.tensor.rewriting.plugin`: :func:`register_standard_rewrites`, which the
  core's own plugin calls from the ``opweave_rewrites(db)`` hook.

Nothing is registered at import: every compilation builds a fresh database. The package
imports none of its modules: :mod:`~opweave.tensor.rewriting.plugin` gathers the rewrites
of ``scan`` and ``ifelse`` too, which build on the tensor library, so importing one family
(``opweave.tensor.rewriting.shape``) does not import them all.
"""

__all__: list[str] = []
