"""The linker contract and storage helpers shared by every backend.

A linker turns a rewritten :class:`~opweave.graph.fg.FunctionGraph` into a
callable. Backends subclass :class:`Linker`; the core only defines the shape of
the result so that :func:`opweave.function` can drive any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph


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


class Linker:
    """Base class of linkers.

    Subclasses implement :meth:`make_all` and set ``name``. ``priority`` orders
    linkers for ``linker="auto"`` (highest wins); ``compile_priority`` orders them when
    the mode asks for a quick compile (``FAST_COMPILE``: the optimizer ``fast_compile``).
    """

    name: ClassVar[str] = "linker"
    priority: ClassVar[int] = 0
    compile_priority: ClassVar[int] = 0

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
    ) -> tuple[Callable[[], Any], list[Container], list[Container], list[Any], list[Apply]]:
        """Like :meth:`make_all`, with the input and output cells wrapped in Containers."""
        fn, ins, outs, thunks, order = self.make_all(input_storage, output_storage, storage_map)
        assert self.fgraph is not None
        in_c = [Container(v, s) for v, s in zip(self.fgraph.inputs, ins, strict=True)]
        out_c = [
            Container(v, s, readonly=True) for v, s in zip(self.fgraph.outputs, outs, strict=True)
        ]
        return fn, in_c, out_c, thunks, order


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
