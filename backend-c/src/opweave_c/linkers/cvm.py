"""The ``cvm`` linker: one C thunk per node, the Python backend for nodes without C.

Every node with C code gets its own block, whose text depends only on what the node
computes (its Op, its variables' Types, which of its outputs may be recycled), not on
where it sits: its function is named after a hash of that text, so the nodes of a graph
that compute the same thing share one C function, and a graph of many repeated blocks
compiles only its distinct kinds of node. The functions are built into one module, or
into several built in parallel when there are many (:func:`opweave_c.module.build_modules`).
The core's linking (:class:`opweave.link.loop.LoopLinker`) makes the thunks and chooses
the loop; where it chooses its plain eager loop, the steps run in the runtime's loop
instead (:mod:`opweave_c.linkers.c_loop`: compiled blocks called directly, Python thunks
through the C API, intermediates freed after their last use as the core frees them), and a
call of the compiled function is one C call. Where it chooses its lazy loop (a graph with
an ``ifelse``), the runtime runs the same steps on demand
(:mod:`opweave_c.linkers.lazy_plan`): only the branch an ``IfElse`` takes is computed. A
profiled function keeps the core's loop.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.deferred import defer
from opweave.link.loop import (
    LinkedGraph,
    LoopLinker,
    describe_failure,
    gc_plan,
    make_node_thunk,
    release_plan,
)
from opweave.link.progress import current as current_progress
from opweave_c.codegen import Block, BlockBuilder, block_versions
from opweave_c.contract import NoCCode
from opweave_c.linkers.block_call import LinkedBlock, link_block
from opweave_c.linkers.c_loop import CLoop
from opweave_c.linkers.lazy_plan import lazy_program
from opweave_c.linkers.lifted_constants import (
    constant_inputs,
    lift_float_constants,
    lifted_shape,
)
from opweave_c.linkers.tier_agreement import kernels_agree
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
    #: A tiered compile (:mod:`opweave.compile.tiered`) may run the first calls on the
    #: Python kernels while the C builds, on graphs where both give the same bits.
    links_slowly: ClassVar[bool] = True
    python_tier_agrees = staticmethod(kernels_agree)

    @classmethod
    def prepare_compile(cls, fgraph: FunctionGraph) -> None:
        """Start compiling the runtime (its object, and its header where cores allow)
        while the graph is rewritten (:func:`opweave_c.module.start_runtime_prelude`)."""
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
        self._modules = modules
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
        """Link the accepted graph; the function also lists the steps run in C
        (``c_nodes``) and says whether the runtime runs its loop (``c_loop``)."""
        self._loop: CLoop | None = None
        fn: Any
        fn, ins, outs, thunks, order = super().make_all(*args, **kwargs)
        self._inputs = ins
        self._order = order
        modules = getattr(self, "_modules", None)
        if modules and fn.loop in ("eager", "lazy") and getattr(fn, "profile", None) is None:
            fn = self._link_c_loop(fn, ins, outs, thunks, order)
        fn.c_nodes = sorted(self._c_nodes)
        fn.c_loop = self._loop is not None
        return fn, ins, outs, thunks, order

    def _link_c_loop(
        self,
        loop_fn: Any,
        ins: list[list[Any]],
        outs: list[list[Any]],
        thunks: list[Any],
        order: list[Apply],
    ) -> Callable[[], None]:
        """The core's loop ``loop_fn`` (eager, or lazy) replaced by the runtime's
        (:class:`CLoop`), running and freeing what the core's would run and free and
        reporting failures through :meth:`on_failure`."""
        assert self.fgraph is not None
        smap, cmap = loop_fn.storage_map, loop_fn.compute_map
        linked = LinkedGraph(order, thunks, ins, outs, smap, cmap)
        lazy = None
        if loop_fn.loop == "lazy":
            lazy = lazy_program(self.fgraph, order, thunks, smap, cmap, loop_fn.allow_gc)
            plan = None
        else:
            plan = gc_plan(self.fgraph, linked) if loop_fn.allow_gc else None
        release = release_plan(self.fgraph, linked, plan)
        states = {
            k: block.run.__self__ for k, block in self._c_nodes.items() if thunks[k] is block.run
        }
        # The runtime keeps what it is given alive and the linker keeps the loop: the
        # report reaches the linker through a weak reference, so that no cycle passes
        # through the runtime, which the garbage collector cannot see into.
        linker = weakref.ref(self)

        def on_failure(exc: BaseException, i: int) -> None:
            found = linker()
            if found is None:
                describe_failure(exc, linked.order[i], linked.storage_map)
            else:
                found.on_failure(exc, i, linked)

        module = next(iter(self._modules.values()))
        self._loop = CLoop.link(module, thunks, states, plan, release, on_failure, lazy)
        run = self._loop.run

        def fn() -> None:
            run()

        # What the wrapper calls, for a caller running the graph many times over (a
        # ``Scan`` loop): the same call without the wrapper's frame.
        fn.__wrapped__ = run  # type: ignore[attr-defined]
        for name in ("storage_map", "compute_map", "allow_gc", "loop", "schedule"):
            if hasattr(loop_fn, name):
                setattr(fn, name, getattr(loop_fn, name))
        return fn

    def make_fast_call(
        self,
        arg_filters: list[Callable[[Any], Any]],
        update_cells: list[tuple[list[Any], list[Any]]],
        user_output_cells: list[list[Any]],
        unpack_single: bool,
        transient_cells: Sequence[list[Any]] = (),
    ) -> Callable[..., Any] | None:
        """A compiled function's whole call in one C call, where the runtime runs the
        loop (see :meth:`opweave.link.basic.Linker.make_fast_call`); ``None`` otherwise.

        Each argument goes through its filter, unless it is exactly a value of its Type
        (:func:`~opweave_c.linkers.c_loop.exact_spec`), which the filter returns as it is.
        """
        if self._loop is None or self.fgraph is None:
            return None
        n = len(arg_filters)
        return self._loop.fast_call(
            self._inputs[:n],
            arg_filters,
            [v.type for v in self.fgraph.inputs[:n]],
            update_cells,
            user_output_cells,
            unpack_single,
            transient_cells,
        )

    def explain_failure(self, exc: BaseException) -> tuple[str, Any] | None:
        """After the fast call raised ``exc``: ``("input", variable)`` when an argument's
        filter refused it, ``("node", node)`` when a step failed (already described on
        ``exc`` by :meth:`on_failure`), else ``None``."""
        found = self._loop.take_failure() if self._loop is not None else None
        if found is None or self.fgraph is None:
            return None
        kind, i = found
        if kind == "input":
            return "input", self.fgraph.inputs[i]
        return "node", self._order[i]
