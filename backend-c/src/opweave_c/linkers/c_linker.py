"""The ``c`` linker: the whole graph in one generated C block (Theano's documented C contract)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import Linker
from opweave.link.progress import current as current_progress
from opweave_c.codegen import BlockBuilder
from opweave_c.contract import NoCCode, c_type_of, call_optional, filter_checked_in_c
from opweave_c.linkers.block_call import link_block
from opweave_c.linkers.shared_kinds import LIFT_TAG
from opweave_c.linkers.tier_agreement import kernels_agree
from opweave_c.module import build_modules, start_runtime_prelude


class MissingCCodeError(NoCCode):
    """The ``c`` linker was asked to compile a graph with a node that has no C code."""


def block_io(fgraph: Any, order: list[Apply]) -> tuple[list[Variable], list[Variable]]:
    """The variables the whole-graph block reads and writes.

    Inputs: the graph's inputs, then constants without a C literal. Outputs: the graph's
    outputs, then node outputs nobody reads (hidden state an Op keeps between calls, as
    in Theano's documented Op contract), so their values persist in their storage cells.
    """
    inputs: list[Variable] = list(fgraph.inputs)
    for node in order:
        for var in node.inputs:
            if isinstance(var, Constant) and var not in inputs:
                ctype = c_type_of(var.type)
                if call_optional(ctype, "c_literal", var.data) is None:
                    inputs.append(var)
    outputs = [v for v in dict.fromkeys(fgraph.outputs) if v.owner is not None]
    read = {v for node in order for v in node.inputs}
    for node in order:
        outputs += [v for v in node.outputs if v not in read and v not in outputs]
    return inputs, outputs


class CLinker(Linker):
    """Compile the whole graph into one C function; every node must have C code.

    The graph function calls one function per kind of node (nodes computing the same
    thing on the same Types share it), so a graph of many repeated blocks compiles only its
    distinct kinds.

    Calls go straight from Python into C: the compiled function extracts and checks
    its arguments with the Types' ``c_extract`` (``config.check_input``), runs, applies
    the updates and returns the outputs.
    """

    name = "c"
    priority = 5
    #: A tiered compile (:mod:`opweave.compile.tiered`) may run the first calls on the
    #: Python kernels while the C builds, on graphs where both give the same bits.
    links_slowly = True
    python_tier_agrees = staticmethod(kernels_agree)
    #: Asks the compilation for ``c_lift_fused_constants`` (see
    #: :mod:`opweave_c.linkers.shared_kinds`), so fused nodes that differ only by their
    #: constants share one function.
    rewrite_tags = (LIFT_TAG,)

    @classmethod
    def prepare_compile(cls, fgraph: FunctionGraph) -> None:
        """Start compiling the runtime (its object, and its header where cores allow)
        while the graph is rewritten (:func:`opweave_c.module.start_runtime_prelude`)."""
        start_runtime_prelude(fgraph)

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Link the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`."""
        from opweave import config

        fgraph, order, ins, outs, smap = self.wire_storage(
            input_storage, output_storage, storage_map
        )
        current_progress().stage(f"generating C for {len(order)} nodes")
        try:
            inputs, outputs = block_io(fgraph, order)
            block = BlockBuilder(
                "opw_graph",
                order,
                inputs,
                outputs,
                self.no_recycling,
                config.check_input,
                share_kinds=True,
            ).build()
        except NoCCode as exc:
            raise MissingCCodeError(
                f"linker 'c' compiles the whole graph to C, but {exc}. Use linker='cvm', "
                "which runs the nodes without C code in Python."
            ) from exc
        self._module = build_modules([block], f"graph {fgraph}")[block.fn_name]
        self._block = block
        self._storage_map = smap
        self._linked, _ = link_block(self._module, block, smap)
        linked = self._linked
        run = linked.run

        def fn() -> None:
            try:
                run()
            except Exception as exc:
                linked.explain(exc, smap)
                raise

        fn.storage_map = smap  # type: ignore[attr-defined]
        return fn, ins, outs, [run], order

    def make_fast_call(
        self,
        arg_filters: list[Callable[[Any], Any]],
        update_cells: list[tuple[list[Any], list[Any]]],
        user_output_cells: list[list[Any]],
        unpack_single: bool,
        transient_cells: Sequence[list[Any]] = (),
    ) -> Callable[..., Any] | None:
        """A C callable doing a whole call: arguments in, updates applied, outputs out.

        It runs one call at a time (in C, without a Python lock) and empties
        ``transient_cells`` when it returns.

        ``arg_filters[i]`` converts argument ``i`` when it is not already exactly a value
        of its Type (the Type's ``filter`` with the input's ``strict``/``allow_downcast``,
        and that ``strict`` as its attribute). The core's Types call it from their C
        extraction for values that are not already exact; strict inputs of those Types get
        no filter (only exact values pass, as a strict ``filter`` lets only them pass).
        Every other Type's arguments go through the filter before their C extraction,
        unless the Type declares ``c_extract_checks_filter = True``.
        It returns ``NotImplemented`` when called with a different number of arguments.
        """
        assert self.fgraph is not None
        n = len(arg_filters)
        types = [v.type for v in self.fgraph.inputs[:n]]
        filters = tuple(
            None if getattr(f, "strict", False) and filter_checked_in_c(t) else f
            for f, t in zip(arg_filters, types, strict=True)
        ) + (None,) * (len(self._block.inputs) - n)
        # The fast call shares the failure cell of the bound block (explain_failure reads it).
        linked, call = link_block(
            self._module,
            self._block,
            self._storage_map,
            filters,
            n,
            update_cells,
            user_output_cells,
            unpack_single,
            transient_cells,
        )
        self._linked = linked
        return call

    def explain_failure(self, exc: BaseException) -> tuple[str, Any] | None:
        """What a failing fast call was doing: ``("input", var)``, ``("node", node)``..."""
        explained: tuple[str, Any] | None = self._linked.explain(exc, self._storage_map)
        return explained
