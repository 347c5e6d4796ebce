"""The one way to bind a compiled block to storage cells: :func:`link_block`.

Every generated module exports ``link_<block>(...)`` (``opw_link`` in
``csrc/runtime.h``), which binds the block's C function to the cells it reads and writes
and returns ``(run, call)``: ``run()`` computes from the cells, ``call(*args)`` does a
compiled function's whole call (arguments in, updates applied, outputs out). ``call`` is
thread-safe (one call at a time, in C) and empties the cells it is told to clear when it
returns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from opweave.graph.basic import Constant, Variable
from opweave_c.codegen import Block
from opweave_c.linkers.failures import explain


@dataclass
class LinkedBlock:
    """A compiled block bound to its cells.

    Attributes
    ----------
    block
        The block (its labels name the nodes and variables a failure code points at).
    run
        Computes the block from its cells; raises what the generated C raised.
    failcell
        Where the C stores the label of what failed.
    """

    block: Block
    run: Callable[[], None]
    failcell: list[Any] = field(default_factory=lambda: [0])

    def explain(self, exc: BaseException, storage_map: dict[Variable, list[Any]]) -> Any:
        """Note on ``exc`` what failed in the C (:func:`opweave_c.linkers.failures.explain`)."""
        found = explain(exc, self.block.labels, self.failcell, storage_map)
        if found is not None:
            for note in self.block.notes:
                exc.add_note(str(note))
        return found


def link_block(
    module: Any,
    block: Block,
    storage_map: dict[Variable, list[Any]],
    filters: Sequence[Any] | None = None,
    n_args: int = 0,
    update_cells: Sequence[tuple[list[Any], list[Any]]] = (),
    user_output_cells: Sequence[list[Any]] = (),
    unpack_single: bool = False,
    clear_cells: Sequence[list[Any]] = (),
) -> tuple[LinkedBlock, Callable[..., Any]]:
    """Bind ``block`` of the built ``module`` to ``storage_map``'s cells.

    Parameters
    ----------
    module
        The module :func:`opweave_c.module.build_module` returned for ``block``.
    block
        The block to bind.
    storage_map
        The cells of the block's inputs and outputs.
    filters
        Per input, the Python filter the fast call applies (``None``: none).
    n_args
        How many positional arguments the fast call takes.
    update_cells
        ``(source, destination)`` cells the fast call copies after running.
    user_output_cells
        The cells whose values the fast call returns.
    unpack_single
        Return the first output alone.
    clear_cells
        Cells the fast call empties when it returns (the caller's arguments).

    Returns
    -------
    LinkedBlock, callable
        The bound block, and the fast call (meaningful when ``n_args`` is given).
    """
    # A constant the graph does not hold (one a block lifted out of a fused node's code)
    # gets a cell of its own with its value.
    in_cells = tuple(
        storage_map[v] if v in storage_map or not isinstance(v, Constant) else [v.data]
        for v in block.inputs
    )
    failcell: list[Any] = [0]
    run, call = getattr(module, f"link_{block.fn_name}")(
        in_cells,
        tuple(storage_map[v] for v in block.outputs),
        tuple(filters) if filters is not None else (None,) * len(in_cells),
        failcell,
        n_args,
        tuple(src for src, _ in update_cells),
        tuple(dst for _, dst in update_cells),
        tuple(user_output_cells),
        unpack_single,
        tuple(clear_cells),
    )
    return LinkedBlock(block, run, failcell), call
