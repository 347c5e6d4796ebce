"""The ``cvm`` linker: one C thunk per node, the Python backend for nodes without C.

Every node with C code gets its own block, whose text depends only on what the node
computes (its Op, its variables' Types, which of its outputs may be recycled), not on
where it sits: its function is named after a hash of that text, so the nodes of a graph
that compute the same thing share one C function, and a graph of many repeated blocks
compiles only its distinct kinds of node. The functions are built into one module, or
into several built in parallel when there are many (:func:`opweave_c.module.build_modules`).
The thunks run in the core's thunk loop (:class:`opweave.link.loop.LoopLinker`), which
frees intermediates after their last use.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from typing import Any, ClassVar

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.link.loop import LinkedGraph, LoopLinker, describe_failure, make_node_thunk
from opweave.link.progress import current as current_progress
from opweave_c.codegen import Block, BlockBuilder, block_versions
from opweave_c.contract import NoCCode
from opweave_c.linkers.block_call import LinkedBlock, link_block
from opweave_c.linkers.lifted_constants import lift_float_constants
from opweave_c.module import build_modules

log = logging.getLogger("opweave_c.cvm")

#: The name a node's function is generated under, then replaced by one made from its text.
_UNNAMED = "opw_node_unnamed"


def describe_kind(node: Apply) -> str:
    """What a node computes, without naming its variables: ``Op(input types)``."""
    return f"{node.op}({', '.join(str(v.type) for v in node.inputs)})"


def node_block(node: Apply, no_recycling: list[Variable], check_input: bool) -> Block:
    """The block computing ``node`` alone: its inputs in, its outputs out.

    Its function is named ``opw_node_<hash>`` after its text (code, support and init code,
    cache versions), so two nodes computing the same thing get the same function. A fused
    node's floating-point constants are inputs of the block
    (:func:`~opweave_c.linkers.lifted_constants.lift_float_constants`), so fused nodes
    that differ only by their constants share it too; the block's ``inputs`` then end with
    those constants, which :func:`~opweave_c.linkers.block_call.link_block` binds to cells
    holding their values.

    Raises
    ------
    NoCCode
        When the node's Op or one of its variables' Types has no C code.
    """
    lifted = lift_float_constants(node)
    computed = lifted[0] if lifted is not None else node
    inputs = list(dict.fromkeys(computed.inputs))
    recycled_not = [
        new for new, old in zip(computed.outputs, node.outputs, strict=True) if old in no_recycling
    ]
    builder = BlockBuilder(
        _UNNAMED,
        [computed],
        inputs,
        list(computed.outputs),
        recycled_not,
        check_input,
        describe=describe_kind,
    )
    block = builder.build()
    if computed is not node:
        block = _as_block_of(block, computed, node)
    digest = hashlib.sha256()
    for part in (block.code, *block.support_apply, *block.init_apply, repr(block_versions(block))):
        digest.update(part.encode())
        digest.update(b"\0")
    name = f"opw_node_{digest.hexdigest()[:24]}"
    return dataclasses.replace(
        block,
        fn_name=name,
        code=block.code.replace(_UNNAMED, name),
        support_apply=[code.replace(_UNNAMED, name) for code in block.support_apply],
        init_apply=[code.replace(_UNNAMED, name) for code in block.init_apply],
    )


def _as_block_of(block: Block, computed: Apply, node: Apply) -> Block:
    """``block`` (generated for ``computed``, ``node`` with its constants lifted) bound to
    ``node``'s variables: it reads ``node``'s inputs and the lifted constants and writes
    ``node``'s outputs, and its failure labels name ``node`` and its variables."""
    rename: dict[Any, Any] = {computed: node}
    rename.update(zip(computed.inputs, node.inputs, strict=False))
    rename.update(zip(computed.outputs, node.outputs, strict=True))
    labels = {label: (kind, rename.get(what, what)) for label, (kind, what) in block.labels.items()}
    inputs = [rename.get(v, v) for v in block.inputs]
    outputs = [rename.get(v, v) for v in block.outputs]
    n = len(node.inputs)
    lifted = ", ".join(
        f"input {n + k} = {np.asarray(c.data).item()!r}" for k, c in enumerate(computed.inputs[n:])
    )
    note = f"{node.op} runs as {computed.op}, its constants passed in: {lifted}"
    return dataclasses.replace(
        block, inputs=inputs, outputs=outputs, labels=labels, notes=[*block.notes, note]
    )


class CVMLinker(LoopLinker):
    """Per-node C thunks with a Python fallback, run in the core's loop."""

    name: ClassVar[str] = "cvm"
    priority: ClassVar[int] = 30
    #: C first; nodes without C code fall back to Python.
    impls: ClassVar[tuple[str | None, ...]] = ("c", "py")

    def make_thunks(
        self,
        order: list[Apply],
        storage_map: dict[Variable, list[Any]],
        compute_map: dict[Variable, list[int]],
    ) -> list[Any]:
        """C thunks for the nodes with C (one function per distinct kind of node, built
        together); Python for the rest."""
        from opweave import config  # late: opweave's package init is above the link floor

        current_progress().stage(f"generating C for {len(order)} nodes")
        blocks: dict[int, Block] = {}
        for k, node in enumerate(order):
            try:
                blocks[k] = node_block(node, self.no_recycling, config.check_input)
            except NoCCode as exc:
                log.debug("cvm: %s runs in Python (%s)", node, exc)
        distinct = list({block.fn_name: block for block in blocks.values()}.values())
        modules = build_modules(distinct, f"cvm graph {self.fgraph}") if blocks else {}
        self._c_nodes: dict[int, LinkedBlock] = {}
        thunks: list[Any] = []
        fallback = tuple(impl for impl in self.impls if impl != "c")
        for k, node in enumerate(order):
            block = blocks.get(k)
            if block is None:
                thunks.append(
                    make_node_thunk(node, storage_map, compute_map, self.no_recycling, fallback)
                )
                continue
            linked, _ = link_block(modules[block.fn_name], block, storage_map)
            self._c_nodes[k] = linked
            thunks.append(linked.run)
        return thunks

    def on_failure(self, exc: BaseException, i: int, linked: LinkedGraph) -> None:
        """Name what failed in a node's C, or the node and its inputs."""
        c_node = self._c_nodes.get(i)
        if c_node is None or c_node.explain(exc, linked.storage_map) is None:
            describe_failure(exc, linked.order[i], linked.storage_map)

    def make_all(self, *args: Any, **kwargs: Any) -> Any:
        """Link the accepted graph; the function also lists the steps run in C."""
        result = super().make_all(*args, **kwargs)
        result[0].c_nodes = sorted(self._c_nodes)
        return result
