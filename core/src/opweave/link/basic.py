"""The linker contract and storage helpers shared by every backend.

A linker turns a rewritten :class:`~opweave.graph.fg.FunctionGraph` into a
callable. Backends subclass :class:`Linker`; the core only defines the shape of
the result so that :func:`opweave.function` can drive any of them.
:class:`WrapLinker` runs several linkers' per-node thunks side by side, and
``PerformLinker`` is PyTensor's name of the installed ``py`` linker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from copy import copy
from typing import Any, ClassVar, Protocol, cast

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.lookup import available_linkers, linker_distributions
from opweave.link.threads import apply_thread_flags
from opweave.link.thunks import make_node_thunk


class Container:
    """A storage cell with the Type that filters what is stored in it.

    Parameters
    ----------
    variable
        The variable (its ``type`` filters values, its ``name`` is used in errors).
    storage
        The one-element list shared with the thunks.
    readonly
        Refuse assignments.
    strict, allow_downcast
        Passed to ``type.filter``.
    name
        Name used in error messages (defaults to the variable's name).
    """

    __slots__ = ("allow_downcast", "name", "provided", "readonly", "storage", "strict", "type")

    def __init__(
        self,
        variable: Variable,
        storage: list[Any],
        readonly: bool = False,
        strict: bool = False,
        allow_downcast: bool | None = None,
        name: str | None = None,
    ) -> None:
        self.type = variable.type
        self.name = name if name is not None else variable.name
        self.storage = storage
        self.readonly = readonly
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.provided = 0

    @property
    def data(self) -> Any:
        """The stored value."""
        return self.storage[0]

    @data.setter
    def data(self, value: Any) -> None:
        if self.readonly:
            raise ValueError(f"cannot set read-only container {self.name}")
        if value is None:
            self.storage[0] = None
            return
        self.storage[0] = self.type.filter(
            value, strict=self.strict, allow_downcast=self.allow_downcast
        )
        self.provided += 1

    @property
    def value(self) -> Any:
        """Alias of :attr:`data`."""
        return self.storage[0]

    def __repr__(self) -> str:
        return f"<{self.name}: {self.storage[0]!r}>"

    def __getstate__(self) -> object:
        """The slots' values, so that pickle protocols 0 and 1 can copy it too."""
        return object.__getstate__(self)


class Linker:
    """Base class of linkers.

    Subclasses implement :meth:`make_all` and set ``name``. ``priority`` orders
    linkers for ``linker="auto"`` (highest wins); ``compile_priority`` orders them when
    the mode asks for a quick compile (``FAST_COMPILE``: the optimizer ``fast_compile``).
    ``random_generator`` names the generator its random variables draw from: linkers with
    the same one draw the same numbers from the same seed (``"numpy"``: NumPy's
    ``Generator``, which the standard backends use; the ``jax`` linker's is ``"jax"``).
    ``incompatible_rewrites`` (PyTensor's attribute) names rewrite tags that a function
    compiled for the linker never runs, whatever its mode includes (the ``jax`` linker
    excludes ``inplace``: XLA reuses buffers itself).
    """

    name: ClassVar[str] = "linker"
    priority: ClassVar[int] = 0
    compile_priority: ClassVar[int] = 0
    random_generator: ClassVar[str] = "numpy"
    incompatible_rewrites: ClassVar[tuple[str, ...]] = ()

    def __init__(self, allow_gc: bool | None = None) -> None:
        self.fgraph: FunctionGraph | None = None
        self.no_recycling: list[Variable] = []
        self.allow_gc = allow_gc

    @classmethod
    def prepare_compile(cls, fgraph: FunctionGraph) -> None:
        """Called when a compile has chosen this linker, before ``fgraph`` is rewritten.

        A linker may start work here that the rewritten graph does not decide and that
        would otherwise lengthen the link, in the background (the C linkers start compiling
        their runtime when the graph is large enough for that to end before the link needs
        it). The default does nothing.
        """

    @staticmethod
    def host_values(values: Sequence[Any]) -> list[Any]:
        """What a function's outputs stand for, as values computed on the host.

        The values themselves for a linker that computes them before the call returns (the
        default); a linker whose outputs are lazy (``dask``) or live elsewhere overrides it.
        Code that compares linkers, such as :mod:`opweave.testing`, compares through it.
        """
        return list(values)

    def accept(
        self,
        fgraph: FunctionGraph,
        no_recycling: Sequence[Variable] | None = None,
        profile: Any = None,
    ) -> Linker:
        """Take ``fgraph`` to link; ``no_recycling`` outputs get fresh storage each call."""
        if self.fgraph is not None and self.fgraph is not fgraph:
            return type(self)(allow_gc=self.allow_gc).accept(fgraph, no_recycling, profile)
        self.fgraph = fgraph
        self.no_recycling = list(no_recycling or [])
        return self

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Return ``(fn, input_storage, output_storage, thunks, order)``.

        ``fn()`` computes the outputs from what is in the input cells and leaves the
        results in the output cells.
        """
        raise NotImplementedError(f"{type(self).__name__}.make_all is not defined")

    def wire_storage(
        self,
        input_storage: list[list[Any]] | None,
        output_storage: list[list[Any]] | None,
        storage_map: dict[Variable, list[Any]] | None,
    ) -> tuple[
        FunctionGraph, list[Apply], list[list[Any]], list[list[Any]], dict[Variable, list[Any]]
    ]:
        """The opening of every :meth:`make_all`: the accepted graph, its nodes in execution
        order, and a storage cell for every variable (:func:`map_storage`).

        Returns
        -------
        tuple
            ``(fgraph, order, input cells, output cells, storage map)``.

        Raises
        ------
        RuntimeError
            When no graph was accepted.
        """
        fgraph = self.fgraph
        if fgraph is None:
            raise RuntimeError(f"{type(self).__name__}: call accept(fgraph) before linking")
        order = fgraph.toposort()
        ins, outs, smap = map_storage(fgraph, order, input_storage, output_storage, storage_map)
        return fgraph, order, ins, outs, smap

    def make_fast_call(
        self,
        arg_filters: list[Callable[[Any], Any]],
        update_cells: list[tuple[list[Any], list[Any]]],
        user_output_cells: list[list[Any]],
        unpack_single: bool,
        transient_cells: Sequence[list[Any]] = (),
    ) -> Callable[..., Any] | None:
        """Optionally return one callable doing a compiled function's whole call.

        Called after :meth:`make_all`. The callable takes every explicit argument
        positionally (the caller binds keywords and defaults), checks and converts each
        (``arg_filters[i]`` is the input's ``Type.filter`` with its
        ``strict``/``allow_downcast``), runs the graph, copies each update's source cell
        into its destination cell, empties ``transient_cells`` (so that the caller's
        arrays are not kept alive) and returns the user outputs (the first one alone
        when ``unpack_single``). It must be safe to call from several threads at once
        (one call at a time is enough): the compiled function then takes no lock of
        its own. It returns ``NotImplemented`` for a different number of arguments. The
        default, ``None``, means the linker has no such path.
        """
        return None

    def explain_failure(self, exc: BaseException) -> tuple[str, Any] | None:
        """After the fast call raised ``exc``: ``("input", variable)`` when an argument was
        refused, another ``(kind, what)`` for other failures, or ``None``."""
        return None

    def make_thunk(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[Container], list[Container]]:
        """PyTensor's contract: ``(fn, inputs, outputs)``, the cells of :meth:`make_all`
        wrapped in Containers (set ``inputs[i].data``, call ``fn()``, read
        ``outputs[j].data``)."""
        apply_thread_flags()  # as opweave.function does before linking
        fn, ins, outs, _thunks, _order = self.make_all(input_storage, output_storage, storage_map)
        assert self.fgraph is not None
        in_c = [Container(v, s) for v, s in zip(self.fgraph.inputs, ins, strict=True)]
        out_c = [
            Container(v, s, readonly=True) for v, s in zip(self.fgraph.outputs, outs, strict=True)
        ]
        return fn, in_c, out_c


def map_storage(
    fgraph: FunctionGraph,
    order: Sequence[Apply],
    input_storage: list[list[Any]] | None,
    output_storage: list[list[Any]] | None,
    storage_map: dict[Variable, list[Any]] | None = None,
) -> tuple[list[list[Any]], list[list[Any]], dict[Variable, list[Any]]]:
    """Give every variable of ``fgraph`` a storage cell; constants get their value.

    Returns the input cells, the output cells and the full map.
    """
    storage_map = {} if storage_map is None else storage_map
    if input_storage is None:
        input_storage = [storage_map.get(v) or [None] for v in fgraph.inputs]
    for var, cell in zip(fgraph.inputs, input_storage, strict=True):
        storage_map[var] = cell
    for node in order:
        for var in node.inputs:
            if var not in storage_map:
                storage_map[var] = [var.data] if isinstance(var, Constant) else [None]
        for var in node.outputs:
            storage_map.setdefault(var, [None])
    if output_storage is not None:
        for var, cell in zip(fgraph.outputs, output_storage, strict=True):
            storage_map[var] = cell
    for var in fgraph.outputs:
        if var not in storage_map:
            storage_map[var] = [var.data] if isinstance(var, Constant) else [None]
    output_storage = [storage_map[v] for v in fgraph.outputs]
    return input_storage, output_storage, storage_map


def compute_map_for(storage_map: dict[Variable, list[Any]]) -> dict[Variable, list[int]]:
    """Return a compute map: roots (inputs, constants) computed, everything else not."""
    return {v: [1 if v.owner is None else 0] for v in storage_map}


class NodeThunk:
    """One node's thunk with the storage cells it reads and writes.

    ``inputs`` and ``outputs`` are the node's cells (one-element lists) in the storage of
    the linker that built the thunk; calling the object runs the thunk.
    """

    __slots__ = ("impl", "inputs", "node", "outputs", "thunk")

    def __init__(
        self,
        node: Apply,
        thunk: Callable[[], Any],
        storage_map: dict[Variable, list[Any]],
        impl: str | None,
    ) -> None:
        self.node = node
        self.thunk = thunk
        self.impl = impl
        self.inputs = [storage_map[v] for v in node.inputs]
        self.outputs = [storage_map[v] for v in node.outputs]

    def __call__(self) -> Any:
        return self.thunk()


def node_thunk(
    node: Apply,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    no_recycling: Sequence[Variable],
    impls: Sequence[str | None],
) -> NodeThunk:
    """A :class:`NodeThunk` of ``node`` from the first of ``impls`` that implements its Op
    (:func:`~opweave.link.thunks.make_node_thunk`, without the lazy wrapping: the wrapper
    runs every node).

    Raises
    ------
    NotImplementedError
        The last refusal when none of ``impls`` implements the node.
    """
    thunk = make_node_thunk(node, storage_map, compute_map, no_recycling, impls, lazy=False)
    return NodeThunk(node, thunk, storage_map, getattr(thunk, "impl", None))


class _PerNodeLinker(Protocol):
    """A linker (instance or class) that declares its per-node implementations."""

    impls: Sequence[str | None]


class WrapLinker(Linker):
    """PyTensor's ``WrapLinker``: several linkers run the same graph side by side.

    Every linker gets its own storage and one thunk per node (from the implementations
    it declares in ``impls``, as the ``py``, ``vm`` and ``cvm`` linkers do). At each
    step, ``wrapper(fgraph, i, node, *thunks)`` is called with the i-th node and each
    linker's :class:`NodeThunk` of it; the wrapper runs the thunks (or not) and may
    inspect their ``outputs``. The inputs set on the first linker's cells are copied to
    the others' before each call; the outputs are the first linker's.

    Parameters
    ----------
    linkers
        Linker instances or classes, each with an ``impls`` sequence.
    wrapper
        Called once per node and call, as above.
    """

    name: ClassVar[str] = "wrap"

    def __init__(
        self,
        linkers: Sequence[Linker | type[Linker]],
        wrapper: Callable[..., Any],
        allow_gc: bool | None = None,
    ) -> None:
        super().__init__(allow_gc=allow_gc)
        if not linkers:
            raise ValueError("WrapLinker: linkers must name at least one linker")
        for linker in linkers:
            if not getattr(linker, "impls", None):
                raise TypeError(
                    f"WrapLinker: linker {linker!r} declares no per-node implementations "
                    "(an 'impls' sequence, as the py, vm and cvm linkers have)"
                )
        self.linkers = list(linkers)
        self.wrapper = wrapper

    def accept(
        self,
        fgraph: FunctionGraph,
        no_recycling: Sequence[Variable] | None = None,
        profile: Any = None,
    ) -> WrapLinker:
        """Take ``fgraph`` to link; a linker that holds another graph links a copy."""
        if self.fgraph is not None and self.fgraph is not fgraph:
            other = type(self).__new__(type(self))
            other.__dict__.update(self.__dict__)
            other.fgraph = None
            return other.accept(fgraph, no_recycling, profile)
        self.fgraph = fgraph
        self.no_recycling = list(no_recycling or [])
        return self

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Return ``(fn, input cells, output cells, thunk groups, order)``.

        The cells are the first linker's; ``thunk groups[i]`` holds each linker's
        :class:`NodeThunk` of ``order[i]``.
        """
        fgraph, order, ins0, outs0, smap0 = self.wire_storage(
            input_storage, output_storage, storage_map
        )
        sides = [(ins0, smap0, compute_map_for(smap0))]
        for _ in self.linkers[1:]:
            ins, _outs, smap = map_storage(fgraph, order, None, None)
            sides.append((ins, smap, compute_map_for(smap)))
        groups = [
            tuple(
                node_thunk(
                    node, smap, cmap, self.no_recycling, cast("_PerNodeLinker", linker).impls
                )
                for linker, (_ins, smap, cmap) in zip(self.linkers, sides, strict=True)
            )
            for node in order
        ]
        to_reset = [smap[v] for _ins, smap, _cmap in sides for v in self.no_recycling if v in smap]
        others = [ins for ins, _smap, _cmap in sides[1:]]
        wrapper = self.wrapper

        def run() -> None:
            for ins in others:
                for first, other in zip(ins0, ins, strict=True):
                    other[0] = copy(first[0])
            for cell in to_reset:
                cell[0] = None
            for i, (node, thunks) in enumerate(zip(order, groups, strict=True)):
                try:
                    wrapper(fgraph, i, node, *thunks)
                except Exception as exc:
                    exc.add_note(f"Apply node that caused the error: {node}")
                    raise

        return run, ins0, outs0, groups, order


class JITLinker(Linker):
    """A linker that turns the whole graph into one Python function and compiles it
    (PyTensor's ``JITLinker`` contract, the base of its JAX and Numba linkers).

    :meth:`make_all` calls :meth:`fgraph_convert` once for the accepted graph (a function
    of the inputs' values returning the outputs' values, in the order of
    ``fgraph.outputs``), hands it to :meth:`jit_compile`, and returns a thunk that reads
    the input cells (:meth:`create_thunk_inputs`, each value through :meth:`input_filter`),
    calls the compiled function, and writes each output through :meth:`output_filter`.
    A subclass implements the first two; :func:`graph_function` builds the converted
    function from one function per node.
    """

    name: ClassVar[str] = "jit"

    def fgraph_convert(
        self,
        fgraph: FunctionGraph,
        input_storage: list[list[Any]],
        storage_map: dict[Variable, list[Any]],
        **kwargs: Any,
    ) -> Callable[..., Any]:
        """The graph as one function of its inputs' values (``order``, the nodes in
        execution order, comes as a keyword)."""
        raise NotImplementedError(f"{type(self).__name__}.fgraph_convert is not defined")

    def jit_compile(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Compile the converted function ``fn``."""
        raise NotImplementedError(f"{type(self).__name__}.jit_compile is not defined")

    def create_thunk_inputs(self, storage_map: dict[Variable, list[Any]]) -> list[list[Any]]:
        """The cells the thunk reads the compiled function's arguments from: the input
        cells of the accepted graph, in order."""
        assert self.fgraph is not None
        return [storage_map[v] for v in self.fgraph.inputs]

    def input_filter(self, inp: Any) -> Any:
        """Convert an input value before the compiled function sees it (unchanged)."""
        return inp

    def output_filter(self, var: Variable, out: Any) -> Any:
        """Convert what the compiled function returned for ``var`` (unchanged)."""
        return out

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Convert, compile, and wrap in one thunk; see :meth:`Linker.make_all`."""
        fgraph, order, ins, outs, smap = self.wire_storage(
            input_storage, output_storage, storage_map
        )
        converted = self.fgraph_convert(fgraph, ins, smap, order=order)
        compiled = self.jit_compile(converted)
        cells = self.create_thunk_inputs(smap)
        pairs = list(zip(fgraph.outputs, outs, strict=True))
        read, write = self.input_filter, self.output_filter

        def run() -> None:
            values = compiled(*[read(cell[0]) for cell in cells])
            for (var, cell), value in zip(pairs, values, strict=True):
                cell[0] = write(var, value)

        return run, ins, outs, [run], order


def graph_function(
    fgraph: FunctionGraph,
    order: Sequence[Apply],
    node_function: Callable[[Apply], Callable[..., Any]],
) -> Callable[..., list[Any]]:
    """``fgraph`` as one Python function of its inputs' values returning the list of its
    outputs' values: each node of ``order`` runs ``node_function(node)`` (asked once,
    here) on its inputs' values, returning its output's value (a sequence of them for a
    node of several outputs). What a :meth:`JITLinker.fgraph_convert` may return."""
    steps = [(node, node_function(node), len(node.outputs) > 1) for node in order]
    inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)

    def value(env: dict[Variable, Any], var: Variable) -> Any:
        return var.data if isinstance(var, Constant) else env[var]

    def run(*args: Any) -> list[Any]:
        env: dict[Variable, Any] = dict(zip(inputs, args, strict=True))
        for node, fn, several in steps:
            result = fn(*[value(env, v) for v in node.inputs])
            env.update(zip(node.outputs, result if several else (result,), strict=True))
        return [value(env, v) for v in outputs]

    return run


def __getattr__(name: str) -> object:
    if name == "PerformLinker":
        found = available_linkers().get("py")
        if found is None:
            dist = linker_distributions().get("py")
            hint = f"pip install {dist}" if dist else "install the backend that provides it"
            raise ImportError(
                f"{__name__}.PerformLinker is the linker 'py', which no installed plugin "
                f"provides: {hint}",
                name=__name__,
            )
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
