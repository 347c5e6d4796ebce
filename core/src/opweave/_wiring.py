"""What the top floor gives the floors below it, once, when ``import opweave`` runs.

A module may not import one of a higher floor (see :mod:`opweave._layers`), yet PyTensor
code finds some names in a package below the one that defines them, and the core's own
plugin registers rewrites that the tensor library defines. The ``opweave`` package imports
every floor, and importing any ``opweave`` submodule runs it first, so this module, which
it imports, binds those names where PyTensor has them before any other code can ask:

* ``opweave.compile.Shape``, ``Shape_i`` and ``opweave.compile.ops.Shape``, ``Shape_i``,
  ``shape``: the Ops of :mod:`opweave.tensor.shape`;
* ``opweave.compile.shared`` and ``opweave.compile.sharedvalue.shared``: the constructor of
  :mod:`opweave.compile.shared_dispatch`;
* ``opweave.gradient.jacobian``, ``hessian`` (:mod:`opweave.gradient.matrices`), also
  ``opweave.tensor.jacobian`` and ``hessian``,
  ``verify_grad``, ``numeric_grad``, ``GradientError`` (:mod:`opweave.gradient.verify`)
  and ``zero_grad`` and the other gradient-shaping Ops and functions
  (:mod:`opweave.compile.gradient_ops`);
* ``get_active_mode`` in :mod:`opweave.graph.rewriting.basic` and
  :mod:`opweave.graph.rewriting.tools`: :func:`opweave.compile.mode.get_active_mode`;
* ``Assert`` in :mod:`opweave.tensor.blas` and :mod:`opweave.tensor.extra_ops` (for the
  run-time checks of ``tensordot``'s contracted lengths and of broadcast lengths): the Op
  of :mod:`opweave.raise_op`, which builds on :mod:`opweave.tensor`;
* the core plugin's standard rewrites (:mod:`opweave.plugins.builtin`):
  :func:`opweave.tensor.rewriting.plugin.register_standard_rewrites`.

``Variable.eval`` and ``Node.dprint`` are given by the modules that define them
(:mod:`opweave._variable_eval`, :mod:`opweave.printing`) when they are imported.
"""

from __future__ import annotations

from opweave import compile, gradient, raise_op, tensor
from opweave._layers import give_names
from opweave.compile import gradient_ops, mode, ops, shared_dispatch, sharedvalue
from opweave.gradient import matrices, verify
from opweave.graph.rewriting import basic as rewriting_basic
from opweave.graph.rewriting import tools as rewriting_tools
from opweave.plugins.builtin import provide_standard_rewrites
from opweave.tensor import blas, extra_ops, shape_ops
from opweave.tensor.rewriting.plugin import register_standard_rewrites
from opweave.tensor.shape import _shape

__all__: list[str] = []


give_names(compile, shape_ops, "Shape Shape_i")
give_names(compile, shared_dispatch, "shared")
give_names(ops, shape_ops, "Shape Shape_i")
ops.shape = _shape  # PyTensor's compile.ops.shape: the Op instance
give_names(sharedvalue, shared_dispatch, "shared")
give_names(gradient, matrices, "hessian jacobian")
give_names(gradient, verify, "GradientError numeric_grad verify_grad")
give_names(gradient, gradient_ops, " ".join(gradient_ops.__all__))
give_names(tensor, matrices, "hessian jacobian")
give_names(blas, raise_op, "Assert")
give_names(extra_ops, raise_op, "Assert")
give_names(rewriting_basic, mode, "get_active_mode")
give_names(rewriting_tools, mode, "get_active_mode")
provide_standard_rewrites(register_standard_rewrites)
