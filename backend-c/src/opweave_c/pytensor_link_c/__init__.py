"""PyTensor's ``pytensor.link.c`` paths, for code written against PyTensor.

The C backend serves this package as ``opweave.link.c`` (its ``opweave_modules`` hook), so
``import opweave.link.c.basic`` (and, under the PyTensor alias, ``import
pytensor.link.c.basic``) gives these modules. opweave's C contract lives in the core,
:mod:`opweave.graph.c_interface` (``CLinkerObject``, ``CLinkerOp``, ``CLinkerType``; every
:class:`~opweave.graph.op.Op` and :class:`~opweave.graph.type.Type` has it), and the C
backend that uses it is the ``opweave-c`` distribution (package ``opweave_c``: the ``c``
and ``cvm`` linkers, the module cache, the compiler). The submodules keep PyTensor's paths
where opweave has the thing:

* :mod:`opweave.link.c.interface`, :mod:`opweave.link.c.op` (``COp``),
  :mod:`opweave.link.c.type` (``CType``, ``Generic``, ``generic``): re-exports;
* :mod:`opweave.link.c.basic`: ``CLinker`` and ``OpWiseCLinker``, the installed linkers
  named ``c`` and ``cvm``;
* :mod:`opweave.link.c.params_type`, :mod:`opweave.link.c.cmodule`: importing them raises
  an :class:`ImportError` naming the opweave equivalent.

Names of PyTensor's modules that opweave lacks (``ExternalCOp``, ``EnumType``, ...) raise an
:class:`ImportError` that says what to use instead.
"""
