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

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.deferred import defer
from opweave.link.loop import LinkedGraph, LoopLinker, describe_failure, make_node_thunk
from opweave.link.progress import current as current_progress
from opweave_c.codegen import Block, BlockBuilder, block_versions
from opweave_c.contract import NoCCode
from opweave_c.linkers.block_call import LinkedBlock, link_block
from opweave_c.linkers.lifted_constants import (
    constant_inputs,
    lift_float_constants,
    lifted_shape,
)
from opweave_c.module import build_modules, start_runtime_prelude

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
    return _node_block(node, no_recycling, check_input)[0]


def _node_block(node: Apply, no_recycling: Any, check_input: bool) -> tuple[Block, Apply]:
    """:func:`node_block`, and the node its code computes (``node``, or its lifted form)."""
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
    named = dataclasses.replace(
        block,
        fn_name=name,
        code=block.code.replace(_UNNAMED, name),
        support_apply=[code.replace(_UNNAMED, name) for code in block.support_apply],
        init_apply=[code.replace(_UNNAMED, name) for code in block.init_apply],
    )
    return named, computed


def _bound(
    block: Block, rename: dict[Any, Any], node: Apply, constants: list[Any], runs_as: Any
) -> Block:
    """``block`` with its variables and nodes renamed; a note names lifted constants."""
    labels = {label: (kind, rename.get(what, what)) for label, (kind, what) in block.labels.items()}
    inputs = [rename.get(v, v) for v in block.inputs]
    outputs = [rename.get(v, v) for v in block.outputs]
    notes = list(block.notes)
    if constants:
        notes = [_LiftedNote(node, runs_as, constants)]
    return dataclasses.replace(block, inputs=inputs, outputs=outputs, labels=labels, notes=notes)


@dataclasses.dataclass(frozen=True)
class _LiftedNote:
    """The note naming a node's lifted constants, written only when an error needs it (the
    printed form of a large fused node is slow to build, and most blocks never fail)."""

    node: Apply
    runs_as: Any
    constants: list[Any]

    def __str__(self) -> str:
        n = len(self.node.inputs)
        passed = ", ".join(
            f"input {n + k} = {np.asarray(c.data).item()!r}" for k, c in enumerate(self.constants)
        )
        return f"{self.node.op} runs as {self.runs_as}, its constants passed in: {passed}"


def _as_block_of(block: Block, computed: Apply, node: Apply) -> Block:
    """``block`` (generated for ``computed``, ``node`` with its constants lifted) bound to
    ``node``'s variables: it reads ``node``'s inputs and the lifted constants and writes
    ``node``'s outputs, and its failure labels name ``node`` and its variables."""
    rename: dict[Any, Any] = {computed: node}
    rename.update(zip(computed.inputs, node.inputs, strict=False))
    rename.update(zip(computed.outputs, node.outputs, strict=True))
    return _bound(block, rename, node, computed.inputs[len(node.inputs) :], computed.op)


def node_kind(node: Apply, no_recycling: Any, check_input: bool) -> tuple[Any, list[Any]] | None:
    """A key equal for two nodes whose blocks have the same code, and the constants the
    node's block takes as inputs (see :func:`node_block`).

    The key holds the Op (or, for a fused node with float constants, what its lifted form
    computes: :func:`~opweave_c.linkers.lifted_constants.lifted_shape`), the Types of the
    inputs and outputs, which inputs repeat, constant inputs' values, which outputs may not
    be recycled, and ``check_input``. ``None`` for an Op from outside opweave, whose
    equality the code may depend on more closely than its ``__eq__`` says.
    """
    if not type(node.op).__module__.startswith("opweave."):
        return None
    shaped = lifted_shape(node)
    what, values = shaped if shaped is not None else ((node.op,), [])
    inputs = tuple(
        (
            v.type,
            node.inputs.index(v),
            np.asarray(v.data).tobytes() if isinstance(v, Constant) else None,
        )
        for v in node.inputs
    )
    outputs = tuple((o.type, o in no_recycling) for o in node.outputs)
    return (what, inputs, outputs, check_input), values


def _rebound(
    template: Block, template_node: Apply, runs_as: str, node: Apply, values: list[Any]
) -> Block:
    """The block of ``template_node``, of the same kind as ``node``, bound to ``node``
    (``runs_as`` names what the template computes: its lifted form)."""
    constants = constant_inputs(node, values) if values else []
    rename: dict[Any, Any] = {template_node: node}
    rename.update(zip(template_node.inputs, node.inputs, strict=True))
    rename.update(zip(template_node.outputs, node.outputs, strict=True))
    own = len(dict.fromkeys(template_node.inputs))
    rename.update(zip(template.inputs[own:], constants, strict=True))
    return _bound(template, rename, node, constants, runs_as)


class CVMLinker(LoopLinker):
    """Per-node C thunks with a Python fallback, run in the core's loop."""

    name: ClassVar[str] = "cvm"
    priority: ClassVar[int] = 30
    #: C first; nodes without C code fall back to Python.
    impls: ClassVar[tuple[str | None, ...]] = ("c", "py")

    @classmethod
    def prepare_compile(cls, fgraph: FunctionGraph) -> None:
        """Start compiling the runtime (its object, and its header where cores allow)
        while a large graph is rewritten (:func:`opweave_c.module.start_runtime_prelude`)."""
        start_runtime_prelude(fgraph)

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
        # One block per kind of node is generated; the other nodes of the kind reuse it.
        kinds: dict[Any, tuple[Block, Apply, str] | None] = {}
        no_recycling = set(self.no_recycling)
        # Binding the other nodes of a kind to its block can wait for the compilers.
        rebind: list[tuple[int, tuple[Block, Apply, str], Apply, list[Any]]] = []

        def bind_the_rest() -> None:
            while rebind:
                k, known, node, values = rebind.pop()
                blocks[k] = _rebound(*known, node, values)

        for k, node in enumerate(order):
            kind = node_kind(node, no_recycling, config.check_input)
            if kind is not None and kind[0] in kinds:
                known = kinds[kind[0]]
                if known is not None:
                    rebind.append((k, known, node, kind[1]))
                continue
            try:
                block, computed = _node_block(node, no_recycling, config.check_input)
            except NoCCode as exc:
                log.debug("cvm: %s runs in Python (%s)", node, exc)
                if kind is not None:
                    kinds[kind[0]] = None
                continue
            blocks[k] = block
            if kind is not None and (computed is not node) == bool(kind[1]):
                kinds[kind[0]] = (block, node, str(computed.op))
        distinct = list({block.fn_name: block for block in blocks.values()}.values())
        defer(bind_the_rest)
        modules = build_modules(distinct, f"cvm graph {self.fgraph}") if blocks else {}
        bind_the_rest()  # what the wait left
        self._c_nodes: dict[int, LinkedBlock] = {}
        thunks: list[Any] = []
        fallback = tuple(impl for impl in self.impls if impl != "c")
        for k, node in enumerate(order):
            found = blocks.get(k)
            if found is None:
                thunks.append(
                    make_node_thunk(node, storage_map, compute_map, self.no_recycling, fallback)
                )
                continue
            linked, _ = link_block(modules[found.fn_name], found, storage_map)
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
        result[0].c_nodes = sorted(self._c_nodes)  # type: ignore[attr-defined]
        return result
