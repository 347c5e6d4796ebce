"""Constant folding: nodes whose inputs are all constants are computed at compile time.

A node is folded when every input is a :class:`~opweave.graph.basic.Constant`, its Op
agrees (``op.do_constant_folding(fgraph, node)``, the Op contract) and does not destroy an
input, and some installed backend implements it: the value is computed through
``op.make_thunk`` (a Python implementation is asked for first, so that nothing is
compiled at compile time, then whichever backend answers) and each output is replaced by
``output.type.make_constant(value)``. A node no backend implements, or whose
computation fails, is left in the graph, so that the failure (if any) happens when
the function is called, as it would without rewriting.

Registered (see :func:`register_constant_folding`):

* ``constant_folding``: its own phase at position 0.5 (after ``merge1``, before
  ``canonicalize``), tags ``fast_run``, ``fast_compile``, ``constant_folding``: this is
  what ``FAST_COMPILE`` runs besides merging;
* ``canonicalize_constant_folding`` in ``canonicalize`` and
  ``specialize_constant_folding`` in ``specialize``, tags ``fast_run``,
  ``constant_folding``: folding what the other rewrites of those phases expose.

Excluding the tag ``constant_folding`` turns all three off.

:func:`unconditional_constant_folding` (and :data:`topo_unconditional_constant_folding`,
a walk over a whole graph) folds whatever ``do_constant_folding`` says; nothing
registers it, it is run by hand (``topo_unconditional_constant_folding.apply(fgraph)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.rewriting import in2out, node_rewriter
from opweave.graph.utils import MethodNotDefined, NoImplementationError

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "compute_constant_node",
    "constant_folding",
    "register_constant_folding",
    "topo_constant_folding",
    "topo_unconditional_constant_folding",
    "unconditional_constant_folding",
]

#: The implementations asked for, in order: a Python one first (nothing to compile at
#: compile time, as PyTensor does), then whatever an installed backend offers.
_IMPLS = ("py", None)


def _computable(node: Apply, allow_no_inputs: bool = False) -> bool:
    """True if every input of ``node`` is a constant and it destroys none of them."""
    if not node.inputs and not allow_no_inputs:
        return False
    if not all(isinstance(inp, Constant) for inp in node.inputs):
        return False
    return not getattr(node.op, "destroy_map", None)


def _foldable(fgraph: FunctionGraph | None, node: Apply) -> bool:
    """True if ``node`` may be replaced by constants (before computing anything)."""
    if not _computable(node):
        return False
    decide = getattr(node.op, "do_constant_folding", None)
    if decide is None:
        return False
    try:
        return bool(decide(fgraph, node))
    except Exception:  # an Op that cannot decide is not folded
        return False


def compute_constant_node(node: Apply) -> list[Any] | None:
    """Compute the output values of ``node`` from its constant inputs, or return ``None``.

    The computation goes through ``node.op.make_thunk``: with ``impl="py"`` first (a
    Python implementation needs no compilation), then with ``impl=None``, so that
    whichever installed backend implements the Op computes it.

    Parameters
    ----------
    node
        A node whose inputs are all :class:`~opweave.graph.basic.Constant`.

    Returns
    -------
    list or None
        One value per output, or ``None`` when no installed backend implements the Op
        or the computation raised (the node is then left to run at call time).
    """
    storage_map: dict[Variable, list[Any]] = {}
    compute_map: dict[Variable, list[int]] = {}
    for inp in node.inputs:
        storage_map[inp] = [cast(Constant, inp).data]  # the inputs are constants
        compute_map[inp] = [1]
    for out in node.outputs:
        storage_map[out] = [None]
        compute_map[out] = [0]
    thunk = None
    for impl in _IMPLS:
        try:
            thunk = node.op.make_thunk(node, storage_map, compute_map, no_recycling=[], impl=impl)
        except (NoImplementationError, MethodNotDefined, NotImplementedError):
            continue
        except Exception:  # a backend failing to build the thunk: try the next, or give up
            continue
        break
    if thunk is None:
        return None
    try:
        thunk()
    except Exception:  # the error, if real, is raised when the function is called
        return None
    values = [storage_map[out][0] for out in node.outputs]
    if any(v is None for v in values):  # e.g. a lazy thunk that did not finish
        return None
    return values


def _fold(node: Apply) -> list[Variable] | bool:
    """The constants replacing the outputs of ``node``, or ``False``."""
    values = compute_constant_node(node)
    if values is None:
        return False
    replacements: list[Variable] = []
    for out, value in zip(node.outputs, values, strict=True):
        try:
            replacements.append(out.type.make_constant(value))
        except (TypeError, ValueError):
            return False
    return replacements


@node_rewriter(None)
def constant_folding(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """Replace the outputs of a node whose inputs are all constants by their values.

    See the module docstring for the conditions. All outputs of a multi-output node are
    replaced at once.
    """
    if not _foldable(fgraph, node):
        return False
    return _fold(node)


@node_rewriter(None)
def unconditional_constant_folding(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """Fold a node whose inputs are all constants (or that has no inputs) whatever its
    Op's ``do_constant_folding`` says (PyTensor's contract).

    A node that destroys an input, that no installed backend implements, or whose
    computation fails is left alone.
    """
    if not _computable(node, allow_no_inputs=True):
        return False
    return _fold(node)


#: :func:`constant_folding` over a whole graph, once from the inputs (PyTensor's name).
topo_constant_folding = in2out(constant_folding, ignore_newtrees=True, name="topo_constant_folding")

#: :func:`unconditional_constant_folding` over a whole graph, once from the inputs
#: (PyTensor's name): ``topo_unconditional_constant_folding.apply(fgraph)``.
topo_unconditional_constant_folding = in2out(
    unconditional_constant_folding,
    ignore_newtrees=True,
    name="topo_unconditional_constant_folding",
)


def register_constant_folding(db: RewriteDatabase) -> None:
    """Register constant folding in ``db`` (see the module docstring for where).

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db.register(
        "constant_folding",
        in2out(constant_folding, name="constant_folding"),
        "fast_run",
        "fast_compile",
        "constant_folding",
        position=0.5,
    )
    db["canonicalize"].register(
        "canonicalize_constant_folding",
        constant_folding,
        "fast_run",
        "constant_folding",
        position=0,
    )
    db["specialize"].register(
        "specialize_constant_folding",
        constant_folding,
        "fast_run",
        "constant_folding",
        position=0,
    )
