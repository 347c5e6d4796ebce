"""Turning inputs, outputs and updates into a rewritten graph and a linked callable."""

from __future__ import annotations

import copy
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from opweave.compile.device import device_rewrite_tags
from opweave.compile.io import In, Out
from opweave.compile.mode import Mode, get_mode
from opweave.compile.ops import deep_copy_op
from opweave.configdefaults import config
from opweave.graph.basic import Constant, Variable, graph_inputs
from opweave.graph.features import DestroyHandler
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import build_rewrite_database
from opweave.graph.utils import MissingInputError
from opweave.link.lookup import resolve_linker


class UnusedInputError(ValueError):
    """An input of ``function`` is not needed by any output or update."""


def view_chain(var: Variable) -> list[Variable]:
    """Return ``var`` and the variables it aliases, following ``view_map``/``destroy_map``.

    The last entry is the root: a variable that is not a view of anything.
    """
    chain = [var]
    while var.owner is not None:
        op = var.owner.op
        aliased = (getattr(op, "view_map", None) or {}).get(var.index) or (
            getattr(op, "destroy_map", None) or {}
        ).get(var.index)
        if not aliased:
            break
        var = var.owner.inputs[aliased[0]]
        chain.append(var)
    return chain


def _is_shared(var: Variable) -> bool:
    return hasattr(var, "container") and hasattr(var, "get_value")


class FunctionMaker:
    """Builds the :class:`FunctionGraph` of a function, rewrites it, and links it.

    Attributes
    ----------
    fgraph
        The rewritten graph (PyTensor's ``f.maker.fgraph``).
    mode
        The :class:`Mode` used.
    linker
        The linker instance that produced the callable.
    """

    def __init__(
        self,
        inputs: Sequence[In],
        outputs: Sequence[Out],
        mode: str | Mode | None = None,
        updates: Sequence[tuple[Variable, Variable]] = (),
        name: str | None = None,
        on_unused_input: str = "raise",
        accept_inplace: bool = False,
    ) -> None:
        if on_unused_input not in ("raise", "warn", "ignore"):
            raise ValueError(
                f"on_unused_input must be 'raise', 'warn' or 'ignore', got {on_unused_input!r}"
            )
        self.mode = get_mode(mode)
        self.name = name
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        seen: set[Variable] = set()
        for i, inp in enumerate(self.inputs):
            if inp.variable in seen:
                raise ValueError(f"function input {i} ({inp.variable}) is given twice")
            seen.add(inp.variable)

        # Updates: from `updates=` on shared variables, and from In(update=...).
        self.updates: list[tuple[Variable, Variable]] = []
        for target, expr in updates:
            if not _is_shared(target):
                raise TypeError(f"update target {target} is not a shared variable")
            expr = target.type.filter_variable(expr)
            self.updates.append((target, expr))
        for inp in self.inputs:
            if inp.update is not None:
                self.updates.append((inp.variable, inp.variable.type.filter_variable(inp.update)))
        targets = [t for t, _ in self.updates]
        if len(set(targets)) != len(targets):
            raise ValueError("a variable is updated more than once")

        out_vars = [o.variable for o in self.outputs]
        exprs = out_vars + [e for _, e in self.updates]
        explicit = [i.variable for i in self.inputs]
        implicit = [v for v in graph_inputs(exprs + targets) if _is_shared(v) and v not in seen]
        self.implicit = list(dict.fromkeys(implicit))
        all_inputs = explicit + self.implicit
        self._check_unused(exprs, on_unused_input)
        update_mapping = {
            len(out_vars) + k: all_inputs.index(t) for k, (t, _) in enumerate(self.updates)
        }
        try:
            fgraph = FunctionGraph(all_inputs, exprs, update_mapping=update_mapping)
        except MissingInputError as exc:
            var = exc.variable
            raise MissingInputError(
                f"the outputs need {var} (type {getattr(var, 'type', '?')}), which is not among "
                "the function's inputs; add it to the inputs or replace it with givens",
                variable=var,
            ) from None
        self.fgraph = fgraph
        # The mode's linker, its name resolved once (the rewrite tags and linking use it).
        self._linker_choice: Any = None
        self._mark_mutable_inputs()
        self._check_inplace(accept_inplace)
        self._rewrite()
        self._protect_outputs()
        self.linker = self._make_linker()

    def _mark_mutable_inputs(self) -> None:
        """Let destructive Ops overwrite inputs marked ``mutable`` and updated variables."""
        n_explicit = len(self.inputs)
        updated = {self.fgraph.inputs[i] for i in self.fgraph.update_mapping.values()}
        for i, var in enumerate(self.fgraph.inputs):
            if (i < n_explicit and self.inputs[i].mutable) or var in updated:
                var.tag.mutable = True

    def _check_inplace(self, accept_inplace: bool) -> None:
        """Refuse user graphs with destructive Ops unless ``accept_inplace``; then validate."""
        destroyers = [n for n in self.fgraph.apply_nodes if getattr(n.op, "destroy_map", None)]
        if not destroyers:
            return
        if not accept_inplace:
            names = ", ".join(sorted({str(n.op) for n in destroyers}))
            raise TypeError(
                f"the graph contains inplace operations ({names}); pass accept_inplace=True to "
                "compile it anyway"
            )
        self.fgraph.attach_feature(DestroyHandler())
        self.fgraph.validate()  # type: ignore[attr-defined]

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

    def _rewrite(self) -> None:
        query = self.mode.rewrite_query()
        if query is None:
            return
        include, exclude, require = query
        include += self._target_rewrite_tags()
        include += tuple(t for t in config.optimizer_including.split(":") if t)
        exclude += tuple(t for t in config.optimizer_excluding.split(":") if t)
        rewriter = build_rewrite_database().query(include=include, exclude=exclude, require=require)
        rewriter.rewrite(self.fgraph)

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
                chosen = resolve_linker(chosen, fast_compile=fast_compile)
            self._linker_choice = chosen
        return chosen

    def _protect_outputs(self) -> None:
        """Copy outputs that would hand the caller memory it does not own.

        An output that is (or is a view, through ``view_map``/``destroy_map`` chains, of) an
        input or a constant, or that shares its memory with an earlier output, goes through a
        ``DeepCopyOp``: the "user vs opweave memory region" of seed 002.
        """
        fgraph = self.fgraph
        roots_seen: set[Variable] = set()
        inputs = set(fgraph.inputs)
        n_user = len(self.outputs)
        for i, out in enumerate(list(fgraph.outputs)):
            root = view_chain(out)[-1]
            # An update computed in the memory of the variable it updates needs no copy.
            own = i >= n_user and root is fgraph.inputs[fgraph.update_mapping[i]]
            aliased = (
                (root in inputs and not own) or isinstance(root, Constant) or root in roots_seen
            )
            roots_seen.add(root)
            if aliased:
                fgraph.change_node_input("output", i, deep_copy_op(out), reason="protect_outputs")

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

    def create(self, unpack_single: bool = False) -> Function:
        """Link the graph and return the callable :class:`Function`."""
        input_storage: list[list[Any]] = []
        for i, inp in enumerate(self.inputs):
            value = None
            if inp.has_value:
                value = inp.value if inp.borrow else copy.deepcopy(inp.value)
                value = self._filter_default(i, inp, value)
            input_storage.append([value])
        for var in self.implicit:
            input_storage.append(var.container.storage)  # type: ignore[attr-defined]
        fn, in_cells, out_cells, _thunks, _order = self.linker.make_all(input_storage=input_storage)
        return Function(self, fn, in_cells, out_cells, unpack_single)

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


class Function:
    """A compiled function. Call it with the input values in order (or by name).

    Thread safety: one Function may be called from many threads at once. Its linker keeps
    every value (inputs, intermediates, outputs) in storage cells shared by all calls, so
    each call holds the Function's lock (a :class:`threading.Lock`) from the moment its
    arguments are stored until its outputs and updates are taken: calls of one Function
    run one at a time, calls of different Functions concurrently. A lock was chosen over
    per-call storage because it keeps the linkers' storage reuse (outputs written into the
    previous call's arrays, the ``c`` linker's one-step fast call) and costs a fraction of
    a microsecond when uncontended. A Function that calls itself from inside its own graph
    (an Op's ``perform`` calling it) deadlocks instead of corrupting its storage.

    After each call the storage cells of the explicit inputs that have no default value
    are emptied, so a compiled function never keeps its caller's arrays alive; inputs with
    a default (``In(value=...)``) and shared variables keep their values.

    Attributes
    ----------
    maker
        The :class:`FunctionMaker`; ``maker.fgraph`` is the rewritten graph.
    trust_input
        If true, arguments are not checked (faster; wrong values are the caller's fault).
    """

    def __init__(
        self,
        maker: FunctionMaker,
        fn: Any,
        input_cells: list[list[Any]],
        output_cells: list[list[Any]],
        unpack_single: bool,
    ) -> None:
        self.maker = maker
        self.fn = fn
        self.input_cells = input_cells
        self.output_cells = output_cells
        self.unpack_single = unpack_single
        self.trust_input = False
        self.name = maker.name
        self._lock = threading.Lock()
        ins = maker.inputs
        self._n_args = len(ins)
        self._arg_specs = [
            (
                cell,
                inp.variable.type.filter,
                inp.strict,
                inp.allow_downcast,
                i,
                inp.name if inp.name is not None else inp.variable.name,
                inp.variable.type,
            )
            for i, (inp, cell) in enumerate(zip(ins, input_cells, strict=False))
        ]
        self._defaults = [
            (i, cell)
            for i, (inp, cell) in enumerate(zip(ins, input_cells, strict=False))
            if inp.has_value
        ]
        # Cells emptied after each call: explicit inputs without a default (whose value is
        # the caller's, needed by no later call). Defaults and shared variables stay.
        self._transient_cells = tuple(
            cell
            for inp, cell in zip(ins, input_cells, strict=False)
            if not inp.has_value and inp.update is None and not _is_shared(inp.variable)
        )
        # Inputs with an update carry state between calls; the others return to their
        # default whenever the caller omits them.
        self._default_values = {i: cell[0] for i, cell in self._defaults if ins[i].update is None}
        self._names = {inp.name: i for i, inp in enumerate(ins) if inp.name is not None}
        n_out = len(maker.outputs)
        self._user_out_cells = output_cells[:n_out]
        self._update_targets = [
            (output_cells[n_out + k], input_cells[maker.fgraph.update_mapping[n_out + k]])
            for k in range(len(maker.updates))
        ]
        make_fast_call = getattr(maker.linker, "make_fast_call", None)
        self._fast = (
            make_fast_call(
                [_bound_filter(spec[1], spec[2], spec[3]) for spec in self._arg_specs],
                self._update_targets,
                self._user_out_cells,
                unpack_single,
                self._transient_cells,
            )
            if make_fast_call is not None
            else None
        )
        # A linker's fast call is thread-safe by contract: every call can go through it
        # without a lock here, unless an explicit input carries state between calls
        # (In(update=...)): binding its current value outside the call could lose an update.
        self._lock_free = self._fast is not None and all(inp.update is None for inp in ins)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._lock_free:
            if kwargs or len(args) != self._n_args:
                args = tuple(self._bind_values(args, kwargs))
            try:
                return self._fast(*args)  # type: ignore[misc]
            except Exception as exc:
                try:
                    self._fast_call_failed(exc, args)
                finally:  # the call leaves the arguments in their cells when it fails
                    for cell in self._transient_cells:
                        cell[0] = None
                raise
        lock = self._lock
        lock.acquire()
        try:
            fast = self._fast
            if fast is None or kwargs:
                return self._call(args, kwargs)
            try:
                out = fast(*args)
            except Exception as exc:
                self._fast_call_failed(exc, args)
                raise
            return self._call(args, kwargs) if out is NotImplemented else out
        finally:
            for cell in self._transient_cells:
                cell[0] = None
            lock.release()

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The generic call (keywords, omitted inputs, no fast path); the lock is held."""
        if kwargs or len(args) != self._n_args:
            args = self._bind(args, kwargs)
        if self.trust_input:
            for spec, value in zip(self._arg_specs, args, strict=False):
                if value is not _DEFAULT:
                    spec[0][0] = value
        else:
            for (cell, filt, strict, downcast, i, name, typ), value in zip(
                self._arg_specs, args, strict=False
            ):
                if value is _DEFAULT:
                    continue
                try:
                    cell[0] = filt(value, strict, downcast)
                except (TypeError, ValueError) as exc:
                    raise type(exc)(
                        f"bad input argument {i} (name {name!r}) to {self._label()}: expected "
                        f"{typ}, got {type(value).__name__} {_short(value)}: {exc}"
                    ) from exc
        self.fn()
        for src, dst in self._update_targets:
            dst[0] = src[0]
        if self.unpack_single:
            return self._user_out_cells[0][0]
        return [cell[0] for cell in self._user_out_cells]

    def _fast_call_failed(self, exc: Exception, args: tuple[Any, ...]) -> None:
        """Re-raise a refused argument the way the generic path words it."""
        explain = getattr(self.maker.linker, "explain_failure", None)
        found = explain(exc) if explain is not None else None
        if found is None or found[0] != "input":
            return
        try:
            i = self.maker.fgraph.inputs.index(found[1])
        except ValueError:
            return
        if i >= self._n_args or not isinstance(exc, TypeError | ValueError):
            return
        _, _, _, _, _, name, typ = self._arg_specs[i]
        value = args[i]
        raise type(exc)(
            f"bad input argument {i} (name {name!r}) to {self._label()}: expected "
            f"{typ}, got {type(value).__name__} {_short(value)}: {exc}"
        ) from exc

    def _bind_values(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """Every explicit input's value, omitted ones taking their default (no cell is
        written: the fast call stores them)."""
        values = self._bind(args, kwargs, store_defaults=False)
        return [
            self._default_values[i] if value is _DEFAULT else value
            for i, value in enumerate(values)
        ]

    def _bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], store_defaults: bool = True
    ) -> list[Any]:
        """Every explicit input's value, ``_DEFAULT`` for omitted ones (whose cells get
        their default back, with ``store_defaults``)."""
        if len(args) > self._n_args:
            raise TypeError(
                f"{self._label()} takes {self._n_args} inputs, got {len(args)} positional arguments"
            )
        values: list[Any] = list(args) + [_MISSING] * (self._n_args - len(args))
        for key, value in kwargs.items():
            if key not in self._names:
                raise TypeError(f"{self._label()} has no input named {key!r}")
            i = self._names[key]
            if values[i] is not _MISSING:
                raise TypeError(f"{self._label()} got input {key!r} twice")
            values[i] = value
        defaults = dict(self._defaults)
        for i, value in enumerate(values):
            if value is _MISSING:
                if i not in defaults:
                    _, _, _, _, _, name, typ = self._arg_specs[i]
                    raise TypeError(
                        f"missing input argument {i} (name {name!r}, type {typ}) to {self._label()}"
                    )
                values[i] = _DEFAULT
                if store_defaults and i in self._default_values:
                    defaults[i][0] = self._default_values[i]
        return values

    def _label(self) -> str:
        return f"opweave function {self.name!r}" if self.name else "opweave function"

    def __repr__(self) -> str:
        return f"<Function {self.name or ''} {self.maker.fgraph}>"


_MISSING = object()
_DEFAULT = object()


def _bound_filter(filt: Any, strict: bool, allow_downcast: bool | None) -> Any:
    """``filt`` with the input's settings bound, for a linker's fast call; its ``strict``
    attribute tells the linker whether only exact values may pass. (A closure passing them
    positionally: a ``functools.partial`` with keywords costs twice as much per call.)"""

    def bound(value: Any) -> Any:
        return filt(value, strict, allow_downcast)

    bound.strict = strict  # type: ignore[attr-defined]
    return bound


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
