"""``scan_save_mem``: a loop output of which only the last entries are read keeps only those.

An output of a :class:`~opweave.scan.op.Scan` node (a state's buffer, initial values
first, or a per-step output's stack) whose every reader takes one entry counted from the
end, ``out[-i]`` or ``out[d:][-i]`` (a constant ``i``; the entry may be indexed further,
``out[-1, 2]``), needs only its last ``k`` entries: ``i`` for ``out[-i]``, ``d + i`` for
``out[d:][-i]``. The rewrite replaces the node with one whose ``info.keep`` says so, and the
readers with the same indexing of the new output, which holds the last ``k`` entries (all
of them when there are fewer); the loop then stores its values in a circular buffer of
``k`` entries (at least the state's depth) instead of one entry per step. The values read
are those of the full output, and a reader that would index past the start of the full
output (``out[1:][-1]`` after no step) still raises: ``out[d:]`` is kept in the rebuilt
reader, on ``d + i`` entries.

A state's buffer that nobody reads (a state kept only because the body reads its previous
values, such as the gradient carried backwards by the loop that back-propagates through
another) keeps its last ``depth`` entries: the loop needs no more to run.
"""

from __future__ import annotations

from dataclasses import replace as dc_replace
from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.scan.op import Scan
from opweave.tensor.subtensor import Subtensor

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph

__all__ = ["scan_save_mem"]

#: A reader to rebuild on the short output: the variable it computes, the Subtensor node
#: taking the entry, and the ``out[d:]`` node in between (or ``None``).
_Reader = tuple[Variable, Apply, Apply | None]


def from_end(client: Any, idx: int) -> int | None:
    """``i`` when ``client`` reads entry ``-i`` of its input ``idx``, else ``None``."""
    if client == "output" or idx != 0 or not isinstance(client.op, Subtensor):
        return None
    first = client.op.idx_list[0]
    if isinstance(first, int) and not isinstance(first, bool) and first < 0:
        return -first
    return None


def tail_start(client: Any, idx: int) -> int | None:
    """``s`` when ``client`` takes ``[s:]`` (a non-negative ``s``) of its input ``idx``,
    else ``None``."""
    if client == "output" or idx != 0 or not isinstance(client.op, Subtensor):
        return None
    idx_list = client.op.idx_list
    first = idx_list[0]
    if (
        len(idx_list) == 1
        and isinstance(first, slice)
        and isinstance(first.start, int)
        and first.start >= 0
        and first.stop is None
        and first.step is None
    ):
        return int(first.start)
    return None


def _tail_readers(fgraph: FunctionGraph, out: Variable) -> tuple[int, list[_Reader]] | None:
    """How many last entries of ``out`` its readers need, and the readers to rebuild;
    ``None`` when some reader needs more (or ``out`` is not read)."""
    need, readers = 0, []
    clients = fgraph.clients.get(out, [])
    if not clients:
        return None
    for client, idx in clients:
        i = from_end(client, idx)
        if i is not None:
            need = max(need, i)
            readers.append((client.outputs[0], client, None))
            continue
        first = tail_start(client, idx)
        if first is None:
            return None
        inner_clients = fgraph.clients.get(client.outputs[0], [])
        if not inner_clients:
            return None
        for c2, idx2 in inner_clients:
            i2 = from_end(c2, idx2)
            if i2 is None:
                return None
            need = max(need, first + i2)
            readers.append((c2.outputs[0], c2, client))
    return need, readers


@node_rewriter([Scan])
def scan_save_mem(fgraph: FunctionGraph, node: Apply) -> Any:
    """Keep only the last entries of the outputs read only from their end (see the module
    docstring)."""
    op: Scan = node.op  # type: ignore[assignment]
    info = op.info
    n_out = info.n_states + info.n_nit
    keep = list(info.keep) if info.keep else [0] * n_out
    found: dict[int, list[_Reader]] = {}
    for i in range(n_out):
        if keep[i]:
            continue
        if i < info.n_states and not fgraph.clients.get(node.outputs[i]):
            keep[i], found[i] = info.depths[i], []
            continue
        tail = _tail_readers(fgraph, node.outputs[i])
        if tail is not None and tail[0] > 0:
            keep[i], found[i] = tail[0], tail[1]
    if not found:
        return None
    new_op = op.clone_with(op.inner_inputs, op.inner_outputs, dc_replace(info, keep=tuple(keep)))
    new_outs = new_op(*node.inputs, return_list=True)
    pairs: dict[Variable, Variable] = {}
    for i, (old, new) in enumerate(zip(node.outputs, new_outs, strict=True)):
        if i not in found:
            pairs[old] = new
            continue
        for var, reader, sliced in found[i]:
            short = new if sliced is None else sliced.op(new, *sliced.inputs[1:])
            pairs[var] = reader.op(short, *reader.inputs[1:])
    return pairs
