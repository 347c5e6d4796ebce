"""PyTensor's ``pytensor.link.c`` paths, for code written against PyTensor.

opweave's C contract lives in the core, :mod:`opweave.graph.c_interface`
(``CLinkerObject``, ``CLinkerOp``, ``CLinkerType``; every :class:`~opweave.graph.op.Op` and
:class:`~opweave.graph.type.Type` has it), and the C backend that uses it is the
``opweave-c`` distribution (package ``opweave_c``: the ``c`` and ``cvm`` linkers, the module
cache, the compiler). The submodules keep PyTensor's paths where opweave has the thing:

* :mod:`opweave.link.c.interface`, :mod:`opweave.link.c.op` (``COp``),
  :mod:`opweave.link.c.type` (``CType``, ``Generic``, ``generic``): re-exports;
* :mod:`opweave.link.c.basic`: ``CLinker`` and ``OpWiseCLinker``, the installed linkers
  named ``c`` and ``cvm``;
* :mod:`opweave.link.c.params_type`, :mod:`opweave.link.c.cmodule`: importing them raises
  an :class:`ImportError` naming the opweave equivalent.

Names of PyTensor's modules that opweave lacks (``ExternalCOp``, ``EnumType``, ...) raise an
:class:`ImportError` that says what to use instead.
"""
