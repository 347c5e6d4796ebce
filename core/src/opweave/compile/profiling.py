"""Run-time profiles of compiled functions: :class:`ProfileStats`, as PyTensor has it.

``function(..., profile=True)`` (or ``config.profile``) gives the function a new
:class:`ProfileStats`; ``profile=<ProfileStats>`` accumulates into one shared by several
functions. A profiled function counts its calls and times them whole; linkers running
one thunk per node (``py``, ``vm``, ``cvm``) link a timed loop that also times each node's
thunk with :func:`time.perf_counter` and records which implementation ran it (``py``,
``c``, ``cuda``...). The ``c`` linker runs the whole graph as one C call: only whole calls
are timed. An unprofiled function links the untimed loop, so profiling costs nothing when
it is off.
"""

from __future__ import annotations

import atexit
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any, TextIO

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph

__all__ = ["ProfileStats"]

NodeKey = tuple[FunctionGraph, Apply]


class ProfileStats:
    """Calls and times of compiled functions, per node and per Op class.

    Parameters
    ----------
    message
        A title for :meth:`summary` (``function`` uses the function's name).
    atexit_print
        Print the profile at exit when ``config.profile`` is on then (as PyTensor does), to
        ``config.profiling__destination``.

    Attributes
    ----------
    fct_callcount, fct_call_time
        How many times the profiled functions were called, and their total time in seconds
        (the whole call: argument checks, the graph, updates).
    vm_call_time
        Seconds spent in the timed thunk loops (part of ``fct_call_time``).
    apply_time, apply_callcount
        Per ``(fgraph, node)``: seconds spent in the node's thunk and how many times it ran.
    apply_impl
        Per node: the implementation its thunk came from (``"py"``, ``"c"``, ``"cuda"``...).
    untimed
        Names of the linkers of profiled functions that run their graph as one call
        (no per-node times).
    """

    def __init__(self, message: str | None = None, atexit_print: bool = True) -> None:
        if message is not None and not isinstance(message, str):
            raise TypeError(
                f"ProfileStats: message must be a str or None, got {type(message).__name__}"
            )
        self.message = message
        self.untimed: list[str] = []
        self.apply_impl: dict[Apply, str] = {}
        self.reset()
        if atexit_print:
            # Each profile registers its own exit handler (printed, most recent first, when
            # config.profile is on at exit): no process-wide list of profiles is kept.
            atexit.register(self.print_at_exit)

    def print_at_exit(self) -> None:
        """Print :meth:`summary` to ``config.profiling__destination`` if ``config.profile``
        is on and this profile recorded a call; what runs at exit."""
        if not config.profile or self.fct_callcount == 0:
            return
        destination = config.profiling__destination
        n_ops, n_apply = config.profiling__n_ops, config.profiling__n_apply
        if destination in ("stderr", "stdout"):
            stream = sys.stderr if destination == "stderr" else sys.stdout
            self.summary(stream, n_ops, n_apply)
            return
        with open(destination, "a", encoding="utf-8") as file:
            self.summary(file, n_ops, n_apply)

    def reset(self) -> None:
        """Forget every call recorded so far; functions profiled into it go on recording."""
        self.fct_call_time = 0.0
        self.fct_callcount = 0
        self.vm_call_time = 0.0
        #: Per variable: the shape of its value in the last call (through its Type's
        #: ``get_shape_info``), and per node key the bytes of each output (``get_size``).
        self.variable_shape: dict[Variable, Any] = {}
        self.output_size: dict[NodeKey, list[int]] = {}
        #: Per node key: the floating-point operations of its last run (Ops with ``flops``).
        self.apply_flops: dict[NodeKey, float] = {}
        # Emptied in place: the timed loops of linked functions hold these two.
        if hasattr(self, "apply_time"):
            self.apply_time.clear()
            self.apply_callcount.clear()
        else:
            self.apply_time: dict[NodeKey, float] = defaultdict(float)
            self.apply_callcount: Counter[NodeKey] = Counter()

    # ------------------------------------------------------------------ recording

    def register_nodes(
        self, fgraph: FunctionGraph, order: Sequence[Apply], impls: Sequence[str]
    ) -> list[NodeKey]:
        """Note the nodes a timed loop runs and their implementations; return their keys.

        Called by a linker when it links a timed loop.
        """
        keys = [(fgraph, node) for node in order]
        for key, impl in zip(keys, impls, strict=True):
            self.apply_impl[key[1]] = impl
            self.apply_time[key] += 0.0
            self.apply_callcount[key] += 0
        return keys

    def record_node(
        self, key: NodeKey, in_cells: Sequence[list[Any]], out_cells: Sequence[list[Any]]
    ) -> None:
        """Note the shapes and sizes of a node's values after it ran (the timed loops call it).

        Each value is measured through its variable's Type (``get_shape_info`` then
        ``get_size``, the Type contract); a Type without them, or a value it cannot measure,
        is recorded with no shape and 0 bytes. An Op with a ``flops(inputs, outputs)``
        method (input and output shapes, as in PyTensor) has its count recorded.
        """
        node = key[1]
        sizes: list[int] = []
        for var, cell in zip(node.outputs, out_cells, strict=True):
            shape, size = _measure(var, cell[0])
            self.variable_shape[var] = shape
            sizes.append(size)
        self.output_size[key] = sizes
        flops = getattr(node.op, "flops", None)
        if callable(flops):
            ins = [
                _measure(var, cell[0])[0] for var, cell in zip(node.inputs, in_cells, strict=True)
            ]
            outs = [self.variable_shape[var] for var in node.outputs]
            try:
                self.apply_flops[key] = float(flops(ins, outs))
            except Exception:  # a flops method that cannot count these shapes counts nothing
                self.apply_flops.pop(key, None)

    def register_untimed(self, linker_name: str) -> None:
        """Note that a profiled function's linker times only whole calls."""
        if linker_name not in self.untimed:
            self.untimed.append(linker_name)

    @property
    def apply_cimpl(self) -> dict[Apply, bool]:
        """Per node: whether its thunk ran compiled code (not ``py``), as PyTensor has it."""
        return {node: impl != "py" for node, impl in self.apply_impl.items()}

    # ------------------------------------------------------------------ aggregation

    def class_time(self) -> dict[type, float]:
        """Seconds spent per Op class."""
        out: dict[type, float] = defaultdict(float)
        for (_fg, node), t in self.apply_time.items():
            out[type(node.op)] += t
        return dict(out)

    def class_callcount(self) -> Counter[type]:
        """Thunk calls per Op class."""
        out: Counter[type] = Counter()
        for (_fg, node), n in self.apply_callcount.items():
            out[type(node.op)] += n
        return out

    def class_nodes(self) -> Counter[type]:
        """Number of profiled nodes per Op class."""
        return Counter(type(node.op) for _fg, node in self.apply_callcount)

    def class_impl(self) -> dict[type, str]:
        """Per Op class: the implementations its nodes ran, joined by ``+`` (``"c+py"``)."""
        found: dict[type, set[str]] = defaultdict(set)
        for _fg, node in self.apply_callcount:
            found[type(node.op)].add(self.apply_impl.get(node, "?"))
        return {cls: "+".join(sorted(impls)) for cls, impls in found.items()}

    # ------------------------------------------------------------------ printing

    def summary(
        self,
        file: TextIO | None = None,
        n_ops_to_print: int = 20,
        n_apply_to_print: int = 20,
    ) -> None:
        """Print the function totals, then the Op classes and the nodes, slowest first.

        Parameters
        ----------
        file
            Where to print (default ``sys.stderr``).
        n_ops_to_print, n_apply_to_print
            How many Op classes and nodes to list at most.
        """
        for name, value in (
            ("n_ops_to_print", n_ops_to_print),
            ("n_apply_to_print", n_apply_to_print),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"ProfileStats.summary: {name} must be an int >= 0, got {value!r}")
        out = sys.stderr if file is None else file
        self.summary_function(out)
        self.summary_class(out, n_ops_to_print)
        self.summary_nodes(out, n_apply_to_print)
        self.summary_memory(out, n_apply_to_print)

    def summary_function(self, file: TextIO) -> None:
        """Print the call count and the total times."""
        print(f"Function profiling\n==================\n  Message: {self.message}", file=file)
        print(
            f"  Time in {self.fct_callcount} calls to Function.__call__: {self.fct_call_time:e}s",
            file=file,
        )
        if self.fct_call_time > 0:
            share = 100 * self.vm_call_time / self.fct_call_time
            print(f"  Time in thunk loops: {self.vm_call_time:e}s ({share:.1f}%)", file=file)
        node_time = sum(self.apply_time.values())
        print(f"  Time in thunks: {node_time:e}s", file=file)
        for linker in self.untimed:
            print(
                f"  Linker {linker!r} runs the whole graph in one call: only whole calls "
                "are timed, not nodes",
                file=file,
            )

    def _total(self) -> float:
        total = sum(self.apply_time.values())
        return total if total > 0 else 1.0

    def summary_class(self, file: TextIO, n: int = 20) -> None:
        """Print the Op classes, slowest first."""
        times = self.class_time()
        counts = self.class_callcount()
        nodes = self.class_nodes()
        impls = self.class_impl()
        total = self._total()
        print(
            "\nClass\n---\n  <% time> <sum %> <time> <time/call> <calls> <nodes> <impl> "
            "<Class name>",
            file=file,
        )
        rows = sorted(times.items(), key=lambda kv: kv[1], reverse=True)
        acc = 0.0
        for cls, t in rows[:n]:
            acc += t
            calls = counts[cls]
            mean = t / calls if calls else 0.0
            print(
                f"  {100 * t / total:6.1f}% {100 * acc / total:6.1f}% {t:.3e}s {mean:.3e}s "
                f"{calls:7d} {nodes[cls]:5d} {impls[cls]:>6} {cls.__module__}.{cls.__name__}",
                file=file,
            )
        if len(rows) > n:
            print(f"  ... ({len(rows) - n} other classes)", file=file)

    def summary_nodes(self, file: TextIO, n: int = 20) -> None:
        """Print the nodes, slowest first."""
        total = self._total()
        print(
            "\nApply\n---\n  <% time> <sum %> <time> <time/call> <calls> <impl> <id> <Apply name>",
            file=file,
        )
        rows = sorted(self.apply_time.items(), key=lambda kv: kv[1], reverse=True)
        positions: dict[FunctionGraph, dict[Apply, int]] = {}
        acc = 0.0
        for (fgraph, node), t in rows[:n]:
            acc += t
            calls = self.apply_callcount[(fgraph, node)]
            mean = t / calls if calls else 0.0
            if fgraph not in positions:
                positions[fgraph] = {nd: i for i, nd in enumerate(fgraph.toposort())}
            position = positions[fgraph].get(node, -1)
            print(
                f"  {100 * t / total:6.1f}% {100 * acc / total:6.1f}% {t:.3e}s {mean:.3e}s "
                f"{calls:7d} {self.apply_impl.get(node, '?'):>4} {position:4d} {node}",
                file=file,
            )
        if len(rows) > n:
            print(f"  ... ({len(rows) - n} other nodes)", file=file)

    # ------------------------------------------------------------------ memory

    def memory_estimates(self, fgraph: FunctionGraph) -> dict[str, int]:
        """Peak memory of ``fgraph``'s intermediates and outputs in the last call, estimated
        from the recorded output sizes, in bytes.

        Outputs that are views of an input or overwrite one (``view_map``/``destroy_map``)
        take no new memory. ``"without_gc"`` keeps every value to the end of the call;
        ``"with_gc"`` frees each intermediate after the last node reading it, in the order
        the nodes ran (the garbage collection ``allow_gc`` does).

        Returns
        -------
        dict
            ``{"without_gc": bytes, "with_gc": bytes, "outputs": bytes}``.
        """
        order = [node for (fg, node) in self.output_size if fg is fgraph]
        new_bytes: dict[Variable, int] = {}
        for node in order:
            aliased = set(getattr(node.op, "view_map", {})) | set(
                getattr(node.op, "destroy_map", {})
            )
            for k, (var, size) in enumerate(
                zip(node.outputs, self.output_size[(fgraph, node)], strict=True)
            ):
                new_bytes[var] = 0 if k in aliased else size
        position = {node: i for i, node in enumerate(order)}
        last_use: dict[Variable, int] = {}
        for node in order:
            for var in node.inputs:
                if var in new_bytes:
                    last_use[var] = max(last_use.get(var, -1), position[node])
        outputs = set(fgraph.outputs)
        live = peak = 0
        freed_after: dict[int, list[Variable]] = defaultdict(list)
        for var, i in last_use.items():
            if var not in outputs:
                freed_after[i].append(var)
        for i, node in enumerate(order):
            live += sum(new_bytes[v] for v in node.outputs)
            peak = max(peak, live)
            live -= sum(new_bytes[v] for v in freed_after[i])
            # a value nobody reads (and not an output) is freed right after its node
            live -= sum(
                new_bytes[v] for v in node.outputs if v not in last_use and v not in outputs
            )
        return {
            "without_gc": sum(new_bytes.values()),
            "with_gc": peak,
            "outputs": sum(new_bytes.get(v, 0) for v in outputs),
        }

    def summary_memory(self, file: TextIO, n: int = 20) -> None:
        """Print each profiled graph's peak memory estimates and its largest node outputs."""
        graphs = list(dict.fromkeys(fg for fg, _ in self.output_size))
        if not graphs:
            return
        print("\nMemory profile (sizes of the last call's values)\n---", file=file)
        for fgraph in graphs:
            est = self.memory_estimates(fgraph)
            print(
                f"  Peak memory of intermediates and outputs: {_kb(est['with_gc'])} with "
                f"garbage collection, {_kb(est['without_gc'])} without (outputs: "
                f"{_kb(est['outputs'])})",
                file=file,
            )
        rows = sorted(self.output_size.items(), key=lambda kv: sum(kv[1]), reverse=True)
        print("  <bytes> <shapes> <flops> <Apply name>", file=file)
        for (_fg, node), sizes in rows[:n]:
            shapes = ", ".join(str(self.variable_shape.get(v)) for v in node.outputs)
            flops = self.apply_flops.get((_fg, node))
            flop_text = f"{flops:.3g}" if flops is not None else "-"
            print(f"  {sum(sizes):10d} {shapes} {flop_text} {node}", file=file)
        if len(rows) > n:
            print(f"  ... ({len(rows) - n} other nodes)", file=file)

    def __repr__(self) -> str:
        return (
            f"<ProfileStats {self.message!r}: {self.fct_callcount} calls, "
            f"{self.fct_call_time:.3e}s>"
        )


def _measure(var: Variable, value: Any) -> tuple[Any, int]:
    """``(shape info, bytes)`` of ``value`` through ``var``'s Type (``(None, 0)`` when the
    Type cannot measure it)."""
    typ = var.type
    try:
        info = typ.get_shape_info(value)
        return info, int(typ.get_size(info))
    except Exception:  # a Type without the methods, or an unexpected value
        return None, 0


def _kb(size: int) -> str:
    """``size`` bytes in B, KB or MB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024**2:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024**2:.1f} MB"
