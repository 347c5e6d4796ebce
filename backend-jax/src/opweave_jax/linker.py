"""The ``jax`` linker: a graph lowered to one ``jax.jit`` function, run by XLA.

Linking asks the core's resolver for every node's lowering (:mod:`opweave_jax.program`),
builds one Python function of ``jax.numpy`` / ``jax.lax`` calls from them and wraps it in
``jax.jit`` once; a node without a lowering is refused, saying how to proceed
(:mod:`opweave_jax.refusal`). The jitted function traces and compiles on the first call
for each combination of input shapes and dtypes; XLA's executables are kept in JAX's
persistent compilation cache under ``compiledir`` (:mod:`opweave_jax.compile_cache`).

A compiled function's call goes through :meth:`JAXLinker.make_fast_call`
(:mod:`opweave_jax.calls`): its arguments go straight to the jitted function (those not
exactly of their Type through its filter), and the outputs come back as NumPy arrays
the caller owns (writable copies), so that results compare with other linkers' and may be
changed by the caller; an output returned with ``Out(borrow=True)`` comes back as a
read-only view of the device buffer (no copy on the CPU). The linker's ``fn()`` (used by
``make_thunk`` and the core's generic call) reads the input cells and stores copies of
the outputs in the output cells.

64-bit values: linking turns JAX's ``jax_enable_x64`` flag on, process-wide, since opweave's
Types fix their dtypes (``float64`` and ``int64`` are common, and shapes are ``int64``); JAX
would otherwise compute them in 32 bits.

Shared variables live on the device between calls: the linker keeps, for each shared input,
the JAX array (or key) standing for the value its storage cell holds, and passes it to the
jitted function as long as the cell holds the same value
(:class:`~opweave_jax.mirror.DeviceMirror`); a value set with ``set_value`` (a new object
in the cell) is copied to the device at the next call.
The inputs that ``updates`` write are donated (``donate_argnums``), and each new value is
kept on the device for the next call while the cell gets its NumPy form, a read-only array
(on the CPU a view of the device buffer, no copy), so that ``get_value`` and the functions
of other linkers read it as before. Random generators are JAX keys inside the function
(:mod:`opweave_jax.lowerings.random`) and ``numpy.random.Generator`` values in the cells
(:func:`~opweave_jax.values.generator_of`, :func:`~opweave_jax.values.key_data_of`).

The device is the one ``config.jax__device`` names (:func:`opweave_jax.options.jax_device`),
read when the function is linked.

This module imports no JAX: the plugin hands :class:`JAXLinker` to every opweave user.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import JITLinker
from opweave.sparse.type import SparseTensorType
from opweave.tensor.random.type import RandomType
from opweave_jax.mirror import DeviceMirror

if TYPE_CHECKING:
    from opweave_jax.calls import LinkedGraph

__all__ = ["DeviceMirror", "JAXLinker", "enable_x64"]


def enable_x64() -> None:
    """Turn on JAX's 64-bit mode (``jax_enable_x64``), once per process."""
    import jax

    if not jax.config.read("jax_enable_x64"):
        jax.config.update("jax_enable_x64", True)


class JAXLinker(JITLinker):
    """``linker='jax'`` (mode ``JAX``): the whole graph as one ``jax.jit`` function.

    ``priority`` is negative: ``linker='auto'`` never picks it. Its random variables draw
    from JAX's generator (``random_generator = "jax"``), not NumPy's.

    Attributes
    ----------
    device
        The JAX device the last linked function runs on (``None``: JAX's default).
    """

    name: ClassVar[str] = "jax"
    priority: ClassVar[int] = -10
    compile_priority: ClassVar[int] = -10
    random_generator: ClassVar[str] = "jax"
    #: In-place rewrites buy nothing here (XLA reuses buffers, and updates are donated),
    #: and their destroyed inputs make each call copy the shared values the device holds
    #: (read-only views of its buffers) and send them to the device again.
    incompatible_rewrites: ClassVar[tuple[str, ...]] = ("inplace",)
    #: Its own rewrites (:mod:`opweave_jax.rewrites`): ``sum(x[mask])`` as a masked sum.
    rewrite_tags: ClassVar[tuple[str, ...]] = ("jax",)
    device: Any = None
    _linked: LinkedGraph | None = None

    def fgraph_convert(
        self,
        fgraph: FunctionGraph,
        input_storage: list[list[Any]],
        storage_map: dict[Variable, list[Any]],
        **kwargs: Any,
    ) -> Callable[..., Any]:
        """The graph as one function of JAX values (:class:`opweave_jax.program.GraphProgram`,
        each node lowered through the resolver), returning the outputs' values and the
        conditions of the graph's deferred checks; ``order`` may come as a keyword.

        Raises
        ------
        opweave.graph.utils.NoImplementationError
            For a node whose Op has no ``jax`` lowering.
        """
        from opweave_jax.program import GraphProgram

        order = kwargs.get("order")
        return GraphProgram(fgraph, fgraph.toposort() if order is None else order)

    def jit_compile(
        self,
        fn: Callable[..., Any],
        donate_argnums: tuple[int, ...] = (),
        static_argnums: tuple[int, ...] = (),
    ) -> Callable[..., Any]:
        """``jax.jit(fn)``, donating the buffers of the arguments ``donate_argnums`` and
        tracing once per value of the arguments ``static_argnums`` (Python ``int``)."""
        import jax

        return jax.jit(fn, donate_argnums=donate_argnums, static_argnums=static_argnums)

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Lower and jit the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`.

        Raises
        ------
        opweave.graph.utils.NoImplementationError
            For a node whose Op has no ``jax`` lowering (the resolver's message).
        ValueError
            For a ``config.jax__device`` that names no device JAX has.
        """
        import jax

        from opweave_jax.calls import LinkedGraph
        from opweave_jax.checked import CheckedProgram
        from opweave_jax.compile_cache import configure_compilation_cache
        from opweave_jax.options import jax_device
        from opweave_jax.static_args import StaticShapeArguments, shape_input_candidates

        fgraph, order, ins, outs, smap = self.wire_storage(
            input_storage, output_storage, storage_map
        )
        enable_x64()
        configure_compilation_cache()
        device = jax_device()
        self.device = device
        zero_copy = (device or jax.devices()[0]).platform == "cpu"
        program = self.fgraph_convert(fgraph, ins, smap, order=order)
        inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
        updates = sorted(fgraph.update_mapping.items())  # (output index, input index)
        mirrors: list[DeviceMirror | None] = [
            DeviceMirror(device, isinstance(v.type, RandomType))
            if isinstance(v, SharedVariable)
            else None
            for v in inputs
        ]
        # A sparse update comes back to the host whole (its mirror copies the SciPy matrix
        # to the device again): its buffers are not donated.
        donated = tuple(
            sorted(
                {
                    i
                    for _, i in updates
                    if mirrors[i] is not None and not isinstance(inputs[i].type, SparseTensorType)
                }
            )
        )
        # The deferred checks' conditions come back as one integer (opweave_jax.checked).
        checked = CheckedProgram(program)
        candidates = shape_input_candidates(inputs, donated)
        jitted: Callable[..., Any]
        if candidates:
            # Integer scalars become static arguments when a trace needs their value.
            jitted = StaticShapeArguments(
                program,
                lambda static: self.jit_compile(checked, donated, static),
                candidates,
            )
        else:
            jitted = self.jit_compile(checked, donate_argnums=donated)
        # An output the caller borrows (Out(borrow=True)) is one the core lets the linker
        # reuse: it is not in no_recycling.
        recycled = set(self.no_recycling or ())
        borrowed = frozenset(
            o
            for o, var in enumerate(outputs)
            if var.owner is not None and var not in recycled and o not in fgraph.update_mapping
        )
        linked = LinkedGraph(
            jitted,
            checked,
            inputs,
            outputs,
            ins,
            outs,
            mirrors,
            updates,
            device,
            zero_copy,
            borrowed,
        )
        self._linked = linked

        def run() -> None:
            linked.run()

        run.impl = "jax"  # type: ignore[attr-defined]
        run.jitted = jitted  # type: ignore[attr-defined]
        run.program = program  # type: ignore[attr-defined]
        run.mirrors = mirrors  # type: ignore[attr-defined]
        run.donate_argnums = donated  # type: ignore[attr-defined]
        self.jitted = jitted
        return run, ins, outs, [run], order

    def make_fast_call(
        self,
        arg_filters: list[Callable[[Any], Any]],
        update_cells: list[tuple[list[Any], list[Any]]],
        user_output_cells: list[list[Any]],
        unpack_single: bool,
        transient_cells: Sequence[list[Any]] = (),
    ) -> Callable[..., Any] | None:
        """The whole call of the linked function, arguments straight to the jitted
        function (:meth:`opweave_jax.calls.LinkedGraph.fast_call`; see
        :meth:`opweave.link.basic.Linker.make_fast_call`). ``None`` before linking."""
        linked = self._linked
        if linked is None:
            return None
        return linked.fast_call(arg_filters, update_cells, len(user_output_cells), unpack_single)

    def explain_failure(self, exc: BaseException) -> tuple[str, Any] | None:
        """``("input", variable)`` when the fast call refused an argument, else ``None``."""
        from opweave_jax.calls import FAILED_INPUT

        k = getattr(exc, FAILED_INPUT, None)
        linked = self._linked
        if k is None or linked is None:
            return None
        return ("input", linked.inputs[k])
