"""``scan_initial_buffer``: a state's initial values enter the loop as they are.

:func:`opweave.scan.scan` gives each state (sit-sot, mit-sot) its initial values as
``set_subtensor(AllocEmpty(dtype)(*shape)[:n], init)`` with ``shape`` the shape of ``init``
and ``n`` its first dimension: PyTensor's layout of a state's outer input, which readers of
a Scan's inputs recognise (the initial values are the second input of that node). When the
write covers the whole buffer, the buffer holds ``init`` and nothing else, so the rewrite
gives the loop ``init`` itself: no allocation and no copy when the function runs.

It is a rewrite of compiled functions only: graph transformations that read the layout
(PyTensor's ``scan_eqopt1``/``scan_eqopt2`` users) run before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Constant, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.scan.op import Scan
from opweave.tensor.basic import AllocEmpty
from opweave.tensor.shape import Shape, Shape_i
from opweave.tensor.subtensor import IncSubtensor, Subtensor

if TYPE_CHECKING:
    from opweave.graph.basic import Apply
    from opweave.graph.fg import FunctionGraph

__all__ = ["scan_initial_buffer", "whole_buffer_initial_values"]


def _is_dim_of(v: Any, x: Variable, k: int) -> bool:
    """Whether ``v`` is, by construction, the length of dimension ``k`` of ``x``."""
    if isinstance(v, Constant):
        static = x.type.shape[k]  # type: ignore[attr-defined]
        return static is not None and int(v.data) == static
    node = v.owner
    if node is None:
        return False
    if isinstance(node.op, Shape_i):
        return node.op.i == k and node.inputs[0] is x
    if isinstance(node.op, Subtensor) and tuple(node.op.idx_list) == (k,):
        shape = node.inputs[0].owner
        return shape is not None and isinstance(shape.op, Shape) and shape.inputs[0] is x
    return False


def whole_buffer_initial_values(buf: Variable) -> Variable | None:
    """``init`` when ``buf`` is ``set_subtensor(AllocEmpty(*init.shape)[:init.shape[0]],
    init)`` (the write covers the whole buffer), else ``None``."""
    node = buf.owner
    if node is None or not isinstance(node.op, IncSubtensor) or not node.op.set_instead_of_inc:
        return None
    idx = tuple(node.op.idx_list)
    if len(idx) != 1 or not isinstance(idx[0], slice) or len(node.inputs) != 3:
        return None
    if idx[0].start is not None or idx[0].step is not None or idx[0].stop is None:
        return None
    empty, init, stop = node.inputs
    alloc = empty.owner
    if alloc is None or not isinstance(alloc.op, AllocEmpty):
        return None
    if init.type.ndim != empty.type.ndim or init.type.dtype != empty.type.dtype:  # type: ignore[attr-defined]
        return None
    if not _is_dim_of(stop, init, 0):
        return None
    if not all(_is_dim_of(d, init, k) for k, d in enumerate(alloc.inputs)):
        return None
    return init


@node_rewriter([Scan])
def scan_initial_buffer(fgraph: FunctionGraph, node: Apply) -> Any:
    """Give the loop each state's initial values instead of a buffer they fill whole."""
    op = node.op
    assert isinstance(op, Scan)
    first = 1 + op.info.n_seqs
    inputs = list(node.inputs)
    changed = False
    for j in range(op.info.n_states):
        init = whole_buffer_initial_values(inputs[first + j])
        if init is not None:
            inputs[first + j] = init
            changed = True
    if not changed:
        return None
    return op.make_node(*inputs).outputs
