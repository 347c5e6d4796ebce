"""``function`` and :class:`FunctionMaker`: from inputs, outputs and updates to a callable.

``function`` rebuilds the graph with the ``givens`` and collects the shared variables and
their updates (explicit ones, then ``default_update``\\ s:
:func:`~opweave.compile.rebuild.rebuild_collect_shared`); :class:`FunctionMaker` builds the
:class:`~opweave.graph.fg.FunctionGraph`, rewrites it, protects the caller's memory
(:mod:`opweave.compile.aliasing`) and links it; the result is a
:class:`~opweave.compile.executor.Function`.
"""

from __future__ import annotations

import copy
import functools
import math
import pickle
import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

from opweave.compile import rewrite_cache, tiered
from opweave.compile.aliasing import (
    add_supervisor_to_fgraph,
    destructive_nodes,
    insert_deepcopy,
    view_chain,
)
from opweave.compile.collector import fewer_collections
from opweave.compile.device import device_rewrite_tags
from opweave.compile.executor import Function, ProfiledFunction
from opweave.compile.io import In, Out
from opweave.compile.mode import Mode, _registered_linkers, get_mode, linker_from_name
from opweave.compile.profiling import ProfileStats
from opweave.compile.rebuild import UnusedInputError, rebuild_collect_shared
from opweave.configdefaults import config
from opweave.graph.basic import Constant, Variable, clone_get_equiv, graph_inputs
from opweave.graph.features import DestroyHandler
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import GraphRewriter, build_rewrite_database
from opweave.graph.rewriting.db import RewriteDatabaseQuery
from opweave.graph.trace import traces_off, variable_creation_note
from opweave.graph.utils import MissingInputError
from opweave.link.basic import Container
from opweave.link.deferred import defer, waiting_room
from opweave.link.lookup import LinkerNotFoundError
from opweave.link.loop import thunk_origin
from opweave.link.progress import compile_progress
from opweave.link.progress import current as current_progress
from opweave.link.threads import apply_thread_flags

__all__ = ["FunctionMaker", "UnusedInputError", "function"]


def _is_shared(var: Variable) -> bool:
    return hasattr(var, "container") and hasattr(var, "get_value")


def _shared_roots_in_order(
    outputs: Sequence[Variable],
    updates: Sequence[tuple[Variable, Variable]],
    explicit: set[Variable],
) -> list[Variable]:
    """The shared variables a function reads, in PyTensor's order of its implicit inputs.

    That is the order a left-to-right depth-first walk meets them: through the outputs
    first, then through each update expression followed by the variable it updates.
    Libraries give new states to the random generators of a function in this order, so it
    fixes which stream each generator draws from.
    """
    found: dict[Variable, None] = {}
    visited: set[Variable] = set()

    def walk(var: Variable) -> None:
        stack = [var]
        while stack:
            v = stack.pop()
            if v in visited:
                continue
            visited.add(v)
            if v.owner is not None:
                stack.extend(reversed(v.owner.inputs))
            elif _is_shared(v) and v not in explicit:
                found.setdefault(v, None)

    for out in outputs:
        walk(out)
    for target, expr in updates:
        walk(expr)
        walk(target)
    return list(found)


class FunctionMaker:
    """Builds the :class:`FunctionGraph` of a function, rewrites it, and links it.

    Parameters
    ----------
    inputs
        The :class:`~opweave.compile.io.In` of each explicit input.
    outputs
        The :class:`~opweave.compile.io.Out` of each returned output.
    mode
        A :class:`~opweave.compile.mode.Mode`, a mode name, or ``None``.
    updates
        ``(shared variable, expression)`` pairs.
    name
        The function's name.
    on_unused_input
        ``"raise"``, ``"warn"`` or ``"ignore"``.
    accept_inplace
        Whether the graph may already contain destructive Ops.
    fgraph
        An already rewritten and protected graph to link as it is (what
        :meth:`Function.copy <opweave.compile.executor.Function.copy>` passes): its first
        inputs are ``inputs``' variables, the others the shared variables ``implicit``;
        its outputs after the first ``len(outputs)`` are updates
        (``fgraph.update_mapping``). ``updates`` is then ignored.
    implicit
        With ``fgraph``: the shared variables behind its implicit inputs.

    Attributes
    ----------
    fgraph
        The rewritten graph (PyTensor's ``f.maker.fgraph``).
    mode
        The :class:`Mode` used.
    linker
        The linker instance that produced the callable (with a tiered compile, the one
        it switches to once linked: ``Function.linker`` is the one running now).
    node_impls
        Which implementation runs each node (``"py"``, ``"c"``...) on the linker the
        function runs on now.
    implicit
        The shared variables the function reads without the caller passing them.
    """

    #: Keeps the rewritten graph in the rewrite cache: left for :meth:`create`, which runs
    #: it while the linker waits on a compiler (``None``: nothing to keep).
    _store_rewritten: Callable[[], None] | None = None

    def __init__(
        self,
        inputs: Sequence[In],
        outputs: Sequence[Out],
        mode: str | Mode | None = None,
        updates: Sequence[tuple[Variable, Variable]] = (),
        name: str | None = None,
        on_unused_input: str = "raise",
        accept_inplace: bool = False,
        *,
        fgraph: FunctionGraph | None = None,
        implicit: Sequence[Variable] | None = None,
    ) -> None:
        if on_unused_input not in ("raise", "warn", "ignore"):
            raise ValueError(
                f"on_unused_input must be 'raise', 'warn' or 'ignore', got {on_unused_input!r}"
            )
        self.mode = get_mode(mode)
        self.name = name
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self._accept_inplace = accept_inplace
        self._adopted = fgraph is not None
        # The mode's linker, its name resolved once (the rewrite tags and linking use it).
        self._linker_choice: Any = None
        #: Whether the rewritten graph came from :mod:`opweave.compile.rewrite_cache`.
        self.rewrites_reused = False
        if fgraph is not None:
            self._adopt(fgraph, list(implicit or ()))
            return
        seen: set[Variable] = set()
        for i, inp in enumerate(self.inputs):
            if inp.variable in seen:
                raise UnusedInputError(
                    f"function input {i} ({inp.variable}) is given twice: {inp.variable} is "
                    "used twice in inputs"
                )
            seen.add(inp.variable)

        # Updates: from `updates=` on shared variables, and from In(update=...).
        self.updates: list[tuple[Variable, Variable]] = []
        for target, expr in updates:
            if not _is_shared(target):
                raise TypeError(f"update target {target} is not a shared variable")
            expr = target.type.filter_variable(expr)
            self.updates.append((target, expr))
        for i, inp in enumerate(self.inputs):
            if inp.update is not None:
                if not inp.has_value:
                    raise TypeError(
                        f"function input {i} ({inp.variable}) has an update but no value: an "
                        "input that carries state needs an initial value (In(var, value=..., "
                        "update=...)); for a shared variable, pass updates={var: expr} instead "
                        "and leave it out of the inputs"
                    )
                self.updates.append((inp.variable, inp.variable.type.filter_variable(inp.update)))
        targets = [t for t, _ in self.updates]
        if len(set(targets)) != len(targets):
            raise ValueError("a variable is updated more than once")

        out_vars = [o.variable for o in self.outputs]
        explicit = [i.variable for i in self.inputs]
        self.implicit = _shared_roots_in_order(out_vars, self.updates, seen)
        all_inputs = explicit + self.implicit
        # As in PyTensor, the update outputs follow the order of the inputs they update.
        position = {var: k for k, var in enumerate(all_inputs)}
        self.updates.sort(key=lambda pair: position[pair[0]])
        exprs = out_vars + [e for _, e in self.updates]
        self._check_unused(exprs, on_unused_input)
        update_mapping = {
            len(out_vars) + k: all_inputs.index(t) for k, (t, _) in enumerate(self.updates)
        }
        with fewer_collections():
            self._build_graph(all_inputs, exprs, update_mapping, accept_inplace)
        self.linker = self._make_linker()

    def _build_graph(
        self,
        all_inputs: list[Variable],
        exprs: list[Variable],
        update_mapping: dict[int, int],
        accept_inplace: bool,
    ) -> None:
        """Make :attr:`fgraph`: the graph of ``exprs``, rewritten (or its rewritten form
        from :mod:`opweave.compile.rewrite_cache`)."""
        try:
            fgraph = FunctionGraph(all_inputs, exprs, update_mapping=update_mapping)
        except MissingInputError as exc:
            var = exc.variable
            missing = MissingInputError(
                f"the outputs need {var} (type {getattr(var, 'type', '?')}), which is not among "
                "the function's inputs; add it to the inputs or replace it with givens",
                variable=var,
            )
            created = variable_creation_note(var) if var is not None else None
            if created is not None:
                missing.add_note(created)
            raise missing from None
        self.fgraph = fgraph
        add_supervisor_to_fgraph(fgraph, self.inputs, accept_inplace)
        query = self._rewrite_query()
        prepare = getattr(self._chosen_linker(), "prepare_compile", None)
        if prepare is not None:
            prepare(fgraph)  # the linker's own work that needs no rewritten graph
        key = self._rewrite_key(query)
        cached = None if key is None else rewrite_cache.load_rewritten(key, fgraph)
        if cached is not None:
            current_progress().stage("reusing the rewritten graph")
            self.fgraph = cached
            cached.compile_mode = self.mode  # type: ignore[attr-defined]
            add_supervisor_to_fgraph(cached, self.inputs, accept_inplace=True)
            self.rewrites_reused = True
        else:
            self._rewrite(query)
            insert_deepcopy(fgraph, self.inputs, self.outputs)
            if key is not None:
                # Kept for the time the link waits on a compiler (opweave.link.deferred).
                self._store_rewritten = functools.partial(
                    rewrite_cache.store_rewritten, key, fgraph
                )

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickle what builds this maker again (as PyTensor does): the inputs, outputs,
        updates, mode (its linker by name where it has one) and name. Unpickling rewrites
        and links the graph anew; a maker that was given a prepared graph (a copied
        function's) keeps that graph. A linker asked for as ``"auto"`` (by the mode or by
        ``config.linker``) is stored as ``"auto"`` and chosen again where it is unpickled,
        among the linkers installed there."""
        given = self.mode.linker
        if given is None and config.linker == "auto":
            given = "auto"
        mode = Mode(
            given if isinstance(given, str) else _linker_for_pickle(self._chosen_linker()),
            self.mode.optimizer,
            self.mode._including,
            self.mode._excluding,
            self.mode._requiring,
        )
        kwargs: dict[str, Any] = {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "mode": mode,
            "name": self.name,
            "on_unused_input": "ignore",
            "accept_inplace": self._accept_inplace,
        }
        if self._adopted:
            kwargs["fgraph"] = _graph_for_pickle(self.fgraph)
            kwargs["implicit"] = self.implicit
        else:
            explicit = {inp.variable for inp in self.inputs}
            kwargs["updates"] = [(t, e) for t, e in self.updates if t not in explicit]
        return (_constructor_FunctionMaker, (kwargs,))

    def _adopt(self, fgraph: FunctionGraph, implicit: list[Variable]) -> None:
        """Take an already prepared graph (see the ``fgraph`` parameter)."""
        n_explicit = len(fgraph.inputs) - len(implicit)
        if n_explicit != len(self.inputs):
            raise ValueError(
                f"FunctionMaker: the graph has {len(fgraph.inputs)} inputs, but "
                f"{len(self.inputs)} explicit and {len(implicit)} implicit inputs were given"
            )
        self.implicit = implicit
        everything = [inp.variable for inp in self.inputs] + implicit
        self.updates = [
            (everything[i], fgraph.outputs[o]) for o, i in sorted(fgraph.update_mapping.items())
        ]
        if not hasattr(fgraph, "destroyers") and destructive_nodes(fgraph):
            fgraph.attach_feature(DestroyHandler())
        self.fgraph = fgraph
        self.linker = self._make_linker()

    def _check_unused(self, exprs: list[Variable], policy: str) -> None:
        if policy == "ignore":
            return
        used = set(graph_inputs(exprs))
        for i, inp in enumerate(self.inputs):
            if inp.variable in used or inp.update is not None:
                continue
            msg = (
                f"function input {i} ({inp.variable}) is not used to compute any output; pass "
                "on_unused_input='ignore' to allow it"
            )
            if policy == "raise":
                raise UnusedInputError(msg)
            warnings.warn(msg, stacklevel=4)

    def _rewrite_query(self) -> tuple[tuple[str, ...], ...] | None:
        """``(include, exclude, require)``: the mode's tags with those of the device, the
        linker (its ``rewrite_tags`` included, its ``incompatible_rewrites`` excluded) and
        the flags; ``None`` when the mode does not rewrite."""
        query = self.mode.rewrite_query()
        if query is None:
            return None
        include, exclude, require = query
        include += self._target_rewrite_tags()
        include += tuple(t for t in config.optimizer_including.split(":") if t)
        exclude += tuple(t for t in config.optimizer_excluding.split(":") if t)
        exclude += tuple(getattr(self._chosen_linker(), "incompatible_rewrites", ()))
        return include, exclude, require

    def _rewrite_key(self, query: tuple[tuple[str, ...], ...] | None) -> str | None:
        """The key of this compile in the cache of rewritten graphs, or ``None`` when it
        is not to be kept: the flag is off, the mode is not a plain :class:`Mode`, it runs
        no ``fast_run`` rewrites (``FAST_COMPILE``'s merging costs less than a key), or
        the graph cannot be pickled."""
        if query is None or not config.cache_rewrites or type(self.mode) is not Mode:
            return None
        if not math.isinf(self._position_cutoff()):
            return None  # a partial pipeline (OPT_STABILIZE): not worth a key
        uses_custom_db = getattr(self.mode, "uses_custom_db", None)
        if callable(uses_custom_db) and uses_custom_db():
            return None  # the user's own database: its rewrites are not in the key
        if self._extra_rewrites():
            return None  # rewriters added with Mode.register: not in the key either
        if "fast_run" not in query[0]:
            return None
        return rewrite_cache.rewrite_key(
            self.fgraph,
            [(i.mutable, i.borrow, i.update is not None, i.strict) for i in self.inputs],
            [(o.borrow,) for o in self.outputs],
            query,
            self._chosen_linker(),
        )

    def _rewrite(self, query: tuple[tuple[str, ...], ...] | None) -> None:
        # Ops with an inner graph (scan) compile it in the mode of the graph they are in.
        self.fgraph.compile_mode = self.mode  # type: ignore[attr-defined]
        custom = getattr(self.mode, "graph_rewriter", None)
        if custom is not None and query is None:
            # A graph rewriter given as the mode's optimizer rewrites the graph itself.
            with traces_off():
                custom.rewrite(self.fgraph)
            return
        if query is None:
            return
        include, exclude, require = query
        full_query = RewriteDatabaseQuery(
            include,
            require,
            exclude,
            position_cutoff=self._position_cutoff(),
            extra_rewrites=self._extra_rewrites(),
        )
        uses_custom_db = getattr(self.mode, "uses_custom_db", None)
        db = self.mode.optdb if callable(uses_custom_db) and uses_custom_db() else None
        # The top-level database runs its phases in sequence: its query is a graph rewriter.
        rewriter = cast(
            GraphRewriter, (db if db is not None else build_rewrite_database()).query(full_query)
        )
        current_progress().stage(f"rewriting {len(self.fgraph.apply_nodes)} nodes")
        with traces_off():  # rewritten nodes inherit the traces of what they replace
            rewriter.rewrite(self.fgraph)

    def _extra_rewrites(self) -> list[tuple[Any, float]]:
        """The ``(rewriter, position)`` pairs added with ``Mode.register``."""
        extra = getattr(self.mode, "extra_rewrites", None)
        return list(extra()) if callable(extra) else []

    def _position_cutoff(self) -> float:
        """Where in the rewrite database the mode's query stops (``inf``: it does not)."""
        cutoff = getattr(self.mode, "position_cutoff", None)
        return float(cutoff()) if callable(cutoff) else math.inf

    def _target_rewrite_tags(self) -> tuple[str, ...]:
        """Rewrite tags that ``config.device`` and the linker add to the query.

        ``config.device`` other than ``cpu`` adds its kind (e.g. ``cuda``), after checking
        that an installed, available backend provides it
        (:func:`opweave.compile.device.device_rewrite_tags`); a linker class adds its
        ``rewrite_tags`` attribute (the ``cuda`` linker adds ``cuda``).
        """
        tags = device_rewrite_tags(config.device)
        return tags + tuple(getattr(self._chosen_linker(), "rewrite_tags", ()))

    def _chosen_linker(self) -> Any:
        """The mode's linker (a class or an instance), its name resolved once."""
        chosen = self._linker_choice
        if chosen is None:
            chosen = self.mode.linker if self.mode.linker is not None else config.linker
            if isinstance(chosen, str):
                fast_compile = self.mode.optimizer == "fast_compile"
                chosen = linker_from_name(chosen, fast_compile=fast_compile)
            self._linker_choice = chosen
        return chosen

    def _make_linker(self) -> Any:
        linker = self._chosen_linker()
        if isinstance(linker, type):
            linker = linker()
        # An output's storage, and that of every variable it is a view of, is cleared before
        # each call, so a node never writes into memory a returned value still uses.
        no_recycling: list[Variable] = []
        for i, out in enumerate(self.fgraph.outputs):
            if i < len(self.outputs) and self.outputs[i].borrow:
                continue
            no_recycling.extend(v for v in view_chain(out) if v.owner is not None)
        no_recycling = list(dict.fromkeys(no_recycling))
        return linker.accept(self.fgraph, no_recycling=no_recycling)

    def create(
        self,
        unpack_single: bool = False,
        input_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
        name: str | None = None,
        profile: Any = None,
    ) -> Function:
        """Link the graph and return the callable :class:`Function`.

        With ``config.compile__tiered``, a linker that compiles code links in the
        background and the function runs on the Python kernels until it is done
        (:mod:`opweave.compile.tiered`; ``Function.wait_compiled`` waits for it).

        Parameters
        ----------
        unpack_single
            Return the single output itself rather than a one-element list.
        input_storage
            The storage cells of the explicit inputs (default: new cells holding each
            input's default value, copied unless ``borrow``).
        storage_map
            Storage cells to use for some variables of the graph (intermediate results a
            copied function shares with its original).
        name
            The function's name (default: the maker's).
        profile
            ``True``, a title or a :class:`~opweave.compile.profiling.ProfileStats` to
            profile the function (see :func:`function`); ``None`` follows
            ``config.profile``.
        """
        if input_storage is None:
            input_storage = []
            for i, inp in enumerate(self.inputs):
                value = None
                if inp.has_value and isinstance(inp.value, Container):
                    # The container's cell is the input's: its state is shared with the
                    # container's other users, and kept between calls.
                    input_storage.append(inp.value.storage)
                    continue
                if inp.has_value:
                    value = inp.value if inp.borrow else copy.deepcopy(inp.value)
                    value = self._filter_default(i, inp, value)
                input_storage.append([value])
        else:
            input_storage = list(input_storage)
        for var in self.implicit:
            input_storage.append(var.container.storage)  # type: ignore[attr-defined]
        current_progress().stage(
            f"linking {len(self.fgraph.apply_nodes)} nodes ({getattr(self.linker, 'name', '')})"
        )
        profile = _profile_for(profile, self.name if name is None else name)
        # A profiled function links the linker's timed loop, where it has one.
        self.linker.profile = profile
        apply_thread_flags()  # the BLAS threads config.blas__threads says, process-wide
        store, self._store_rewritten = self._store_rewritten, None
        # A linker that compiles code links in the background, the Python kernels answering
        # meanwhile (opweave.compile.tiered); never for a profiled function or shared storage.
        python_tier = (
            tiered.python_tier_for(self) if profile is None and storage_map is None else None
        )
        if python_tier is not None:
            return tiered.link_tiered(self, python_tier, input_storage, store, unpack_single, name)
        with fewer_collections(), waiting_room():
            if store is not None:
                defer(store)
            fn, in_cells, out_cells, thunks, order = self.linker.make_all(
                input_storage=input_storage, storage_map=storage_map
            )
        self.record_link(self.linker, thunks, order)
        if profile is None:
            return Function(self, fn, in_cells, out_cells, unpack_single, name=name)
        if getattr(fn, "profile", None) is not profile:
            profile.register_untimed(str(getattr(self.linker, "name", type(self.linker).__name__)))
        return ProfiledFunction(
            self, fn, in_cells, out_cells, unpack_single, name=name, profile=profile
        )

    def record_link(self, linker: Any, thunks: Sequence[Any], order: Sequence[Any]) -> None:
        """Note which implementation runs each node (:attr:`node_impls`) as ``linker``
        linked the graph (the tier a function runs on, :mod:`opweave.compile.tiered`)."""
        self.node_impls = node_implementations(linker, thunks, order)

    @staticmethod
    def _filter_default(i: int, inp: In, value: Any) -> Any:
        """An input's default value as its Type stores it (what a call would store).

        Every value in an input cell is then one the Type's ``filter`` returned, as the
        linkers expect: the C linkers read the cell of an omitted input without filtering.
        """
        typ = inp.variable.type
        try:
            return typ.filter(value, inp.strict, inp.allow_downcast)
        except (TypeError, ValueError) as exc:
            raise type(exc)(
                f"the default value of function input {i} ({inp.variable}) is not a value of "
                f"{typ}: {exc}"
            ) from exc


def _constructor_FunctionMaker(kwargs: dict[str, Any]) -> FunctionMaker:
    """Build a :class:`FunctionMaker` again from what :meth:`FunctionMaker.__reduce__`
    pickled (its graph is rewritten and linked anew)."""
    with compile_progress(f"compiling {kwargs.get('name') or 'a function'} (unpickled)"):
        return FunctionMaker(**kwargs)


def _graph_for_pickle(fgraph: FunctionGraph) -> FunctionGraph:
    """A copy of a prepared graph without what backends cached on its nodes' tags for
    linking (compiled helpers that cannot be pickled and are rebuilt when linking)."""
    equiv = clone_get_equiv(fgraph.inputs, fgraph.outputs)
    for node in fgraph.apply_nodes:
        tag = equiv[node].tag
        for key, value in list(vars(tag).items()):
            try:
                pickle.dumps(value)
            except (pickle.PicklingError, TypeError, AttributeError):
                # A backend's linking cache: dropped, it is rebuilt when linking.
                delattr(tag, key)
    return FunctionGraph(
        [equiv[v] for v in fgraph.inputs],
        [equiv[v] for v in fgraph.outputs],
        clone=False,
        update_mapping=fgraph.update_mapping,
    )


def _linker_for_pickle(linker: Any) -> Any:
    """The name that gives ``linker`` back through ``linker_from_name`` where it has
    one (so that unpickling where it is not installed fails with an error naming it),
    else ``linker`` itself."""
    if isinstance(linker, str):
        return linker
    for registered_name, registered in _registered_linkers.items():
        if registered is linker:
            return registered_name
    cls = linker if isinstance(linker, type) else type(linker)
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        return linker
    if not isinstance(linker, type):
        if getattr(linker, "allow_gc", True) is not False:
            return linker
        name += "_nogc"
    try:
        resolved = linker_from_name(name)
    except LinkerNotFoundError:  # the name does not resolve: keep the linker object
        return linker
    same = resolved is linker if isinstance(linker, type) else type(resolved) is cls
    return name if same else linker


def node_implementations(linker: Any, thunks: Sequence[Any], order: Sequence[Any]) -> dict:
    """Which implementation runs each node of a linked graph (``"py"``, ``"c"``, ``"cuda"``...).

    Linkers that run one thunk per node mark each thunk with its implementation; a linker
    that runs the whole graph as one call (``c``) runs every node with its own.
    """
    default = (getattr(linker, "impls", None) or (None,))[0]
    if len(thunks) == len(order):
        return {node: thunk_origin(t, default) for node, t in zip(order, thunks, strict=True)}
    name = default or str(getattr(linker, "name", "py"))
    return dict.fromkeys(order, name)


def _profile_for(profile: Any, name: str | None) -> ProfileStats | None:
    """The :class:`ProfileStats` a function records into, from ``function``'s ``profile``:
    ``None`` follows ``config.profile``; ``True`` (or a str, the title) makes a new one,
    ``False`` none."""
    if profile is None:
        profile = bool(config.profile)
    if isinstance(profile, ProfileStats):
        return profile
    if profile is True:
        return ProfileStats(message=name)
    if profile is False:
        return None
    if isinstance(profile, str):
        return ProfileStats(message=profile)
    raise TypeError(
        f"function: profile must be a bool, a str (a title) or a ProfileStats, got "
        f"{type(profile).__name__} {profile!r}"
    )


def function(
    inputs: Sequence[Variable | In],
    outputs: Variable | Out | Sequence[Variable | Out] | None = None,
    mode: str | Mode | None = None,
    updates: dict[Variable, Any] | Sequence[tuple[Variable, Any]] | None = None,
    givens: dict[Variable, Any] | Sequence[tuple[Variable, Any]] | None = None,
    no_default_updates: bool | Sequence[Variable] = False,
    accept_inplace: bool = False,
    name: str | None = None,
    rebuild_strict: bool = True,
    allow_input_downcast: bool | None = None,
    profile: Any = None,
    on_unused_input: str | None = None,
    trust_input: bool = False,
) -> Function:
    """Compile a function computing ``outputs`` from ``inputs``.

    Parameters
    ----------
    inputs
        Variables (or :class:`In`) the caller passes, in order. A :class:`Constant`
        cannot be an input; every non-constant root the outputs need must be one
        (shared variables are found automatically). An input that the graph computes
        cuts the graph there: its value is given, what computes it is not compiled.
    outputs
        A Variable (the function returns one value), a list (it returns a list),
        or ``None`` (it returns an empty list, useful with ``updates``).
    mode
        A :class:`Mode`, a mode name (``"FAST_RUN"``, ``"FAST_COMPILE"``, ``"DebugMode"``,
        any case), or ``None`` for ``config.mode``.
    updates
        ``(shared variable, expression)`` pairs: after each call the shared
        variable holds the expression's value.
    givens
        ``(variable, replacement)`` pairs substituted in the graph before compiling
        (in the outputs, the updates and the default updates).
    no_default_updates
        The ``default_update`` of every shared variable the graph reaches becomes an
        update of the function, unless an explicit update is given for it; ``True``
        turns that off, a list of shared variables turns it off for those.
    accept_inplace
        Whether the graph may contain destructive Ops (see
        :func:`~opweave.compile.aliasing.add_supervisor_to_fgraph`).
    name
        The function's name, used in error messages.
    rebuild_strict
        With ``givens``: keep the Types of the rebuilt nodes' outputs (replacements
        must have compatible Types); if false, the nodes are built anew.
    allow_input_downcast
        Passed to every input's ``Type.filter``.
    profile
        ``True`` profiles the function into a new
        :class:`~opweave.compile.profiling.ProfileStats` titled with its name (a str
        gives the title), a ``ProfileStats`` accumulates into that one, ``False`` turns
        profiling off, ``None`` (default) follows ``config.profile``. ``f.profile`` is the
        ``ProfileStats`` (``None`` when unprofiled).
    on_unused_input
        ``"raise"`` (default), ``"warn"`` or ``"ignore"`` for inputs the outputs do not use.
    trust_input
        Skip argument checking (the caller guarantees valid values).

    Returns
    -------
    Function
        The compiled callable; ``f.maker.fgraph`` is its rewritten graph. With
        ``config.compile__tiered`` (the default), a linker that has to run a compiler
        links in the background and the function answers its first calls with the Python
        kernels meanwhile (``f.tier``; ``f.wait_compiled()`` waits for the linker; see
        :mod:`opweave.compile.tiered`).

    Raises
    ------
    TypeError
        ``inputs`` not a list, a Constant among the inputs, or a non-Variable input or
        output.
    opweave.graph.utils.MissingInputError
        The outputs need a variable that is not an input.
    """
    if isinstance(inputs, Variable | In) or not isinstance(inputs, Sequence):
        raise TypeError(
            "the inputs of a function must be given as a list (or tuple) of Variables or "
            f"In, even when there is one input: use [{inputs}] instead of {inputs}"
        )
    inputs, givens = _cut_at_inputs(inputs, givens)
    ins = [_as_in(x, i, allow_input_downcast) for i, x in enumerate(inputs)]
    single = isinstance(outputs, Variable | Out)
    if outputs is None:
        outs: list[Out] = []
    elif isinstance(outputs, Variable | Out):
        outs = [_as_out(outputs, 0)]
    else:
        outs = [_as_out(o, i) for i, o in enumerate(outputs)]
    # The updates of In(update=...) inputs are rebuilt with the outputs.
    in_updates = [k for k, inp in enumerate(ins) if isinstance(inp.update, Variable)]
    extended = outs + [Out(ins[k].update) for k in in_updates]  # type: ignore[arg-type]
    _, rebuilt, (_, _, update_expr, _) = rebuild_collect_shared(
        extended,
        [inp.variable for inp in ins],
        replace=givens,
        updates=updates,
        rebuild_strict=rebuild_strict,
        no_default_updates=no_default_updates,
    )
    for k, out in zip(in_updates, rebuilt[len(outs) :], strict=True):
        if out.variable is not ins[k].update:
            ins[k] = _with_update(ins[k], out.variable)
    with compile_progress(f"compiling {name or 'a function'}"):
        maker = FunctionMaker(
            ins,
            rebuilt[: len(outs)],
            mode=mode,
            updates=update_expr,
            name=name,
            on_unused_input=on_unused_input or "raise",
            accept_inplace=accept_inplace,
        )
        fn = maker.create(unpack_single=single, profile=profile)
    fn.trust_input = trust_input
    return fn


def _cut_at_inputs(inputs: Sequence[Any], givens: Any) -> tuple[list[Any], Any]:
    """Inputs computed by the graph become roots: the graph is cut there, as in PyTensor.

    Each such input is replaced by a new variable of its Type (same name) in the inputs and,
    through ``givens``, in the outputs and updates; what computed it is not compiled.
    """
    cut: list[tuple[Variable, Variable]] = []
    new_inputs = list(inputs)
    for k, x in enumerate(inputs):
        var = x.variable if isinstance(x, In) else x
        if isinstance(var, Variable) and not isinstance(var, Constant) and var.owner is not None:
            root = var.type.make_variable(name=var.name)
            cut.append((var, root))
            if isinstance(x, In):
                x = copy.copy(x)
                x.variable = root
                new_inputs[k] = x
            else:
                new_inputs[k] = root
    if not cut:
        return new_inputs, givens
    pairs = list(givens.items()) if isinstance(givens, dict) else list(givens or ())
    return new_inputs, cut + pairs


def _with_update(inp: In, update: Variable) -> In:
    new = copy.copy(inp)
    new.update = update
    return new


def _as_in(x: In | Variable, position: int, allow_downcast: bool | None) -> In:
    if isinstance(x, In):
        if x.allow_downcast is None:
            x.allow_downcast = allow_downcast
        var = x.variable
    elif isinstance(x, Variable):
        var = x
        x = In(x, allow_downcast=allow_downcast)
    else:
        raise TypeError(
            f"function input {position} must be a Variable or In, got {type(x).__name__}: {x!r}"
        )
    if isinstance(var, Constant):
        raise TypeError(
            f"function input {position} ({var}) is a Constant: constants have a fixed value and "
            "cannot be inputs; use a variable of the same type instead"
        )
    return x


def _as_out(x: Any, position: int) -> Out:
    if isinstance(x, Out):
        return x
    if isinstance(x, Variable):
        return Out(x)
    raise TypeError(
        f"function output {position} must be a Variable or Out, got {type(x).__name__}: {x!r}"
    )
