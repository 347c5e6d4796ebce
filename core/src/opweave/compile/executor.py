"""The compiled callable: :class:`Function`, its argument binding, and :meth:`Function.copy`."""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from opweave.compile.aliasing import InputAliasGuard
from opweave.compile.io import In, Out
from opweave.compile.sharedvalue import SharedVariable, state_lock_of
from opweave.graph.basic import Variable, clone_get_equiv
from opweave.graph.fg import FunctionGraph
from opweave.plugins.forksafe import AfterFork, StateLock
from opweave.printing import debugprint

if TYPE_CHECKING:
    from opweave.compile.maker import FunctionMaker

__all__ = ["AliasedMemoryError", "Function", "ProfiledFunction"]


class AliasedMemoryError(Exception):
    """Memory is aliased that should not be (PyTensor's name): two values a function
    must keep apart share memory. opweave's functions copy such arguments instead of
    raising, so the class is there for code that catches it."""


def _is_shared(var: Variable) -> bool:
    return hasattr(var, "container") and hasattr(var, "get_value")


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

    State shared between Functions: a call that writes shared variables (its updates,
    random generators included) also holds, from the moment its arguments are stored
    until its updates are written, the :class:`~opweave.plugins.forksafe.StateLock` of each
    of those variables' containers, taken in one order common to every Function (after
    its own lock). Two Functions updating the same shared variable from two threads thus
    run one at a time and lose no update, nor draw the same random numbers twice;
    Functions that update nothing take no such lock. ``get_value``/``set_value`` hold the
    same lock.

    Tiered compile: a function whose linker compiles code may run its first calls on the
    Python kernels while that linker works in the background, and switch to it between
    two calls (:mod:`opweave.compile.tiered`, :attr:`tier`, :meth:`wait_compiled`).

    Fork: a process forked while another thread is inside a call gets every such lock
    back released (:class:`~opweave.plugins.forksafe.AfterFork`), so the child can call
    the Function.

    After each call the storage cells of the explicit inputs that have no default value
    are emptied, so a compiled function never keeps its caller's arrays alive; inputs with
    a default (``In(value=...)``) and shared variables keep their values.

    Aliased arguments: when the graph overwrites an input in place (an input marked
    ``In(mutable=True)``, or a shared variable updated in place), arguments that share
    memory with that input (the same array passed twice, an array and a view of it, a
    shared variable's own value) are copied before the call, so the results are those of
    the graph as written (:class:`~opweave.compile.aliasing.InputAliasGuard`). Functions
    that overwrite no input do no such check. With ``trust_input`` it is skipped.

    Attributes
    ----------
    maker
        The :class:`~opweave.compile.maker.FunctionMaker`; ``maker.fgraph`` is the
        rewritten graph.
    trust_input
        If true, arguments are not checked (faster; wrong values are the caller's fault).
    name
        The name given to ``function`` (used in error messages).
    profile
        The :class:`~opweave.compile.profiling.ProfileStats` this function records its
        calls into, or ``None`` (then it is a plain :class:`Function`; a profiled one is a
        :class:`ProfiledFunction`).
    linker
        The linker whose ``fn`` runs the calls: ``maker.linker``, or the Python tier's
        while a tiered compile links ``maker.linker`` in the background (:attr:`tier`,
        :meth:`wait_compiled`).
    fn
        What that linker made: ``fn()`` runs the graph on the values in the storage cells.
    """

    def __init__(
        self,
        maker: FunctionMaker,
        fn: Any,
        input_cells: list[list[Any]],
        output_cells: list[list[Any]],
        unpack_single: bool,
        name: str | None = None,
        profile: Any = None,
        linker: Any = None,
    ) -> None:
        self.maker = maker
        self.unpack_single = unpack_single
        self.trust_input = False
        self.name = maker.name if name is None else name
        self.profile = profile
        self._lock = threading.Lock()
        AfterFork.track(self)
        #: While a tiered compile runs on the Python tier: its background link (see
        #: :mod:`opweave.compile.tiered`), which the next call switches to once done.
        self._tier: Any = None
        #: The error that background link raised (``None``: none).
        self._tier_error: BaseException | None = None
        ins = maker.inputs
        self._n_args = len(ins)
        self._names = {inp.name: i for i, inp in enumerate(ins) if inp.name is not None}
        names = [inp.name for inp in ins]
        #: Every input's value, in order, from keywords naming each input once (PyMC's
        #: ``f(**point)``); ``None`` where an input has no name or shares it.
        self._by_name: Any = (
            itemgetter(*names) if ins and len(self._names) == len(ins) == len(set(names)) else None
        )
        self._state_locks = _state_locks(
            [inp.variable for inp in ins] + list(maker.implicit),
            maker.fgraph.update_mapping.values(),
        )
        # Inputs with an update carry state between calls; the others return to their
        # default whenever the caller omits them.
        self._default_values = {
            i: cell[0]
            for i, (inp, cell) in enumerate(zip(ins, input_cells, strict=False))
            if inp.has_value and inp.update is None
        }
        self._attach(maker.linker if linker is None else linker, fn, input_cells, output_cells)

    def _attach(
        self, linker: Any, fn: Any, input_cells: list[list[Any]], output_cells: list[list[Any]]
    ) -> None:
        """Run the graph as ``linker`` linked it: ``fn`` with its storage cells (what a
        tiered compile calls again, at a call boundary, when its final linker is done;
        see :mod:`opweave.compile.tiered`)."""
        maker = self.maker
        ins = maker.inputs
        unpack_single = self.unpack_single
        self.linker = linker
        self.fn = fn
        self.input_cells = input_cells
        self.output_cells = output_cells
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
        n_out = len(maker.outputs)
        self._user_out_cells = output_cells[:n_out]
        update_mapping = maker.fgraph.update_mapping
        self._update_targets = [
            (output_cells[o], input_cells[update_mapping[o]]) for o in sorted(update_mapping)
        ]
        # Only a graph overwriting one of its inputs needs its arguments checked for
        # shared memory (None otherwise: the common call does no such check).
        self._alias_guard = InputAliasGuard.for_graph(maker.fgraph, input_cells[self._n_args :])
        make_fast_call = getattr(linker, "make_fast_call", None)
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
        # (In(update=...)): binding its current value outside the call could lose an update;
        # or unless arguments must be checked for shared memory (the check reads shared
        # variables' values, which another call may be updating).
        # Nor when the call writes state other Functions share (their calls must wait).
        self._lock_free = (
            self._fast is not None
            and all(inp.update is None for inp in ins)
            and self._alias_guard is None
            and not self._state_locks
        )

    @property
    def tier(self) -> str:
        """The name of the linker whose code runs the calls now: the mode's linker, or,
        while a tiered compile links that one in the background, the Python tier's
        (see :mod:`opweave.compile.tiered`)."""
        return str(getattr(self.linker, "name", type(self.linker).__name__))

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Wait until the function runs on its final linker.

        A function compiled with ``config.compile__tiered`` may answer its first calls
        with the Python kernels while its linker (C) links in the background
        (:mod:`opweave.compile.tiered`); this waits for that link and switches to it.
        For any other function it returns at once.

        Parameters
        ----------
        timeout
            Seconds to wait at most; ``None`` waits as long as the link takes.

        Returns
        -------
        bool
            ``True`` once the calls run on the final linker, ``False`` if ``timeout``
            passed first.

        Raises
        ------
        Exception
            The error the final linker raised in the background (the function keeps
            running on the Python tier).
        """
        tier = self._tier
        if tier is not None:
            if not tier.done.wait(timeout):
                return False
            with self._lock:  # once no call is under way
                if self._tier is not None:
                    self._tier.settle(self, warn=False)
        if self._tier_error is not None:
            raise self._tier_error
        return True

    def settle_tier(self) -> None:
        """Switch to the final linker if a tiered compile's background link is done (what
        a call does before it runs), for code that runs the linked graph through its
        cells (:attr:`fn`, :attr:`input_cells`, :attr:`output_cells`) rather than by
        calling the function, such as a ``Scan`` loop. The caller holds the function's
        lock, so no call is under way; nothing happens for an untiered function or one
        already switched."""
        if self._tier is not None:
            self._tier.settle(self, warn=True)

    @property
    def compiling(self) -> bool:
        """Whether a tiered compile's final linker is still linking in the background."""
        tier = self._tier
        return tier is not None and not tier.done.is_set()

    def reset_after_fork(self) -> None:
        """Make the Function's lock anew (in a forked child: the thread that held it is
        not there); a tiered compile's background link, which the child has not got, is
        done again at its next call."""
        self._lock = threading.Lock()
        if self._tier is not None:
            self._tier.after_fork()

    def _named(self, kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
        """The arguments in order when ``kwargs`` names every input once (and nothing
        else); ``None`` otherwise (the generic binding then says what is wrong)."""
        if self._by_name is None or len(kwargs) != self._n_args:
            return None
        try:
            found = self._by_name(kwargs)
        except KeyError:
            return None
        return (found,) if self._n_args == 1 else found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs and not args and (named := self._named(kwargs)) is not None:
            args, kwargs = named, {}
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
            if self._tier is not None:  # on the Python tier: switch if the linker is done
                self._tier.settle(self, warn=True)
            held = _acquire_all(self._state_locks) if self._state_locks else ()
        except BaseException:  # interrupted while waiting for the shared state
            lock.release()
            raise
        try:
            if self._alias_guard is not None and not self.trust_input:
                args = tuple(self._alias_guard(self._bind_current(args, kwargs)))
                kwargs = {}
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
            for state in held:
                state.release()
            lock.release()

    def _call(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
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
        explain = getattr(self.linker, "explain_failure", None)
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

    def _bind_current(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """Every explicit input's value, omitted ones taking what their cell holds (their
        default, or the state an ``In(update=...)`` input carries); the lock is held."""
        if not kwargs and len(args) == self._n_args:
            return list(args)
        values = self._bind(args, kwargs)
        return [
            self._arg_specs[i][0][0] if value is _DEFAULT else value
            for i, value in enumerate(values)
        ]

    def _bind(
        self, args: Sequence[Any], kwargs: dict[str, Any], store_defaults: bool = True
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

    # ------------------------------------------------------------------ copying

    def __copy__(self) -> Function:
        return self.copy()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle what compiles this function again, as PyTensor does: its maker (inputs,
        outputs, updates, mode; the shared variables come with the graph, so those of
        several functions pickled together stay shared), the current values of its
        inputs with a default, its name, ``trust_input`` and output structure. Unpickling
        recompiles (the ``c`` linkers load their modules from their cache);
        ``copy.deepcopy`` goes the same way and so gives a function with its own shared
        variables, while ``copy.copy`` is :meth:`copy`."""
        values: list[Any] = []
        for i, inp in enumerate(self.maker.inputs):
            if not inp.has_value:
                values.append(None)
            elif i in self._default_values:
                values.append(self._default_values[i])
            else:  # state carried between calls (In(update=...))
                values.append(self.input_cells[i][0])
        return (
            _constructor_Function,
            (
                self.maker,
                values,
                self.trust_input,
                self.name,
                self.unpack_single,
                self.profile,
            ),
        )

    def get_shared(self) -> list[Variable]:
        """The shared variables this function reads or updates (PyTensor's contract), in
        the order of its implicit inputs.

        Returns
        -------
        list of SharedVariable
        """
        return list(self.maker.implicit)

    def dprint(self, **kwargs: Any) -> Any:
        """:func:`~opweave.printing.debugprint` of this function's graph (PyTensor's
        ``Function.dprint``).

        Parameters
        ----------
        **kwargs
            Passed to :func:`~opweave.printing.debugprint` (e.g. ``file="str"``).

        Returns
        -------
        Whatever :func:`~opweave.printing.debugprint` returns for these arguments.
        """
        return debugprint(self, **kwargs)

    def copy(
        self,
        share_memory: bool = False,
        swap: dict[SharedVariable, SharedVariable] | None = None,
        delete_updates: bool = False,
        name: str | None = None,
        profile: Any = None,
    ) -> Function:
        """Return a copy of this function, linked anew from its rewritten graph.

        The copy has its own graph, linker and output storage; it is not rewritten again.
        Explicit inputs keep their defaults (a mutable or state-carrying one gets its own
        cell, the others share the original's); shared variables are shared, unless
        swapped.

        Parameters
        ----------
        share_memory
            Let the copy use the same storage as this function for intermediate results
            (not for inputs and outputs). Saves memory, most with ``allow_gc=False``; the
            two functions must then not run at the same time (from two threads).
        swap
            ``{shared variable of this function: shared variable to use instead}`` in the
            copy. Each replacement must have the same Type (or a more specific one).
        delete_updates
            Drop the updates in the copy: it computes the outputs and changes no shared
            variable (one it overwrites in place still changes, with a warning).
        name
            The copy's name; default: this function's name followed by ``" copy"``.
        profile
            Kept as the copy's ``profile`` attribute; default: this function's.

        Returns
        -------
        Function
            The new function.

        Raises
        ------
        TypeError
            If a ``swap`` key or value is not a shared variable, or a replacement's Type
            does not match.
        ValueError
            If a ``swap`` key is not a shared variable of this function.
        """
        maker = self.maker
        fgraph = maker.fgraph
        n_out = len(maker.outputs)
        user_vars = [inp.variable for inp in maker.inputs] + list(maker.implicit)
        # Keyed by Any: the implicit inputs are looked up in it, shared or not.
        swaps: dict[Any, SharedVariable] = dict(swap or {})
        memo: dict[Any, Any] = {}
        for old, new in swaps.items():
            position = self._swap_position(old, new, user_vars)
            memo[fgraph.inputs[position]] = new.clone()
        if delete_updates:
            out_vars = fgraph.outputs[:n_out]
            self._warn_destroyed_without_update()
        else:
            out_vars = list(fgraph.outputs)
        equiv = clone_get_equiv(fgraph.inputs, out_vars, memo=memo)
        fg_copy = FunctionGraph(
            [equiv[v] for v in fgraph.inputs],
            [equiv[v] for v in out_vars],
            clone=False,
            update_mapping={} if delete_updates else fgraph.update_mapping,
        )
        ins = []
        for inp in maker.inputs:
            new_in = _copy_in(inp)
            if delete_updates:
                new_in.update = None
            ins.append(new_in)
        implicit = [swaps.get(var, var) for var in maker.implicit]
        storage_map = None
        if share_memory:
            # The copy shares the storage of this function's final tier, where it can.
            try:
                self.wait_compiled()
            except Exception:  # no final tier: the copy shares the Python tier's storage
                pass
            old_map = getattr(self.fn, "storage_map", None) or {}
            ends = set(fgraph.inputs) | set(fgraph.outputs)
            storage_map = {
                equiv[var]: cell
                for var, cell in old_map.items()
                if var not in ends and var in equiv and var.owner is not None
            }
        new_maker = type(maker)(
            ins,
            [Out(o.variable, o.borrow) for o in maker.outputs],
            mode=maker.mode,
            name=maker.name,
            on_unused_input="ignore",
            accept_inplace=True,
            fgraph=fg_copy,
            implicit=implicit,
        )
        # Explicit inputs that are neither overwritten nor carry state keep sharing their
        # default value with this function; the others start from a copy of the current one.
        input_storage: list[list[Any]] = []
        for i, inp in enumerate(maker.inputs):
            cell = self.input_cells[i]
            if inp.has_value and not (inp.mutable or inp.update is not None):
                input_storage.append(cell)
            else:
                input_storage.append([cell[0]] if inp.has_value else [None])
        if not name and self.name:
            name = self.name + " copy"
        copied = new_maker.create(
            unpack_single=self.unpack_single,
            input_storage=input_storage,
            storage_map=storage_map,
            name=name,
            profile=self.profile if profile is None else profile,
        )
        copied.trust_input = self.trust_input
        return copied

    def _swap_position(self, old: Any, new: Any, user_vars: list[Variable]) -> int:
        """Where shared variable ``old`` is among this function's inputs, after checking
        that ``new`` may replace it."""
        if not isinstance(old, SharedVariable):
            raise TypeError(
                f"Function.copy: the keys of swap must be shared variables, got "
                f"{type(old).__name__} {old!r}"
            )
        if not isinstance(new, SharedVariable):
            raise TypeError(
                f"Function.copy: swap[{old}] must be a shared variable of type {old.type}, "
                f"got {type(new).__name__} {new!r}"
            )
        if old not in user_vars:
            raise ValueError(
                f"Function.copy: shared variable {old} is not an input of {self._label()}; "
                f"its shared variables are: "
                f"{', '.join(str(v) for v in user_vars if isinstance(v, SharedVariable)) or 'none'}"
            )
        if new.type != old.type and old.type.convert_variable(new) is not new:
            raise TypeError(
                f"Function.copy: swap[{old}] has type {new.type}, expected {old.type} (the "
                f"type of {old})"
            )
        return user_vars.index(old)

    def _warn_destroyed_without_update(self) -> None:
        fgraph = self.maker.fgraph
        destroyers = getattr(fgraph, "destroyers", None)
        if destroyers is None:
            return
        n_out = len(self.maker.outputs)
        kept = set()
        for out in fgraph.outputs[:n_out]:
            stack = [out]
            while stack:
                var = stack.pop()
                if var.owner is not None and var.owner not in kept:
                    kept.add(var.owner)
                    stack.extend(var.owner.inputs)
        for i in fgraph.update_mapping.values():
            var = fgraph.inputs[i]
            if any(node in kept for node in destroyers(var)):
                warnings.warn(
                    f"Function.copy(delete_updates=True): {var} will still change, because "
                    "an operation of the copied graph overwrites it in place",
                    UserWarning,
                    stacklevel=3,
                )


class ProfiledFunction(Function):
    """A :class:`Function` that counts and times its calls into its ``profile``.

    The function maker makes this class only for profiled functions, so unprofiled calls
    pay nothing for profiling. Per-node times come from the linker's timed loop (the
    ``py``, ``vm`` and ``cvm`` linkers); a linker running the graph in one call (``c``)
    gives only these whole-call times.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        profile = self.profile
        start = time.perf_counter()
        try:
            return super().__call__(*args, **kwargs)
        finally:
            profile.fct_call_time += time.perf_counter() - start
            profile.fct_callcount += 1


_MISSING = object()
_DEFAULT = object()


def _constructor_Function(
    maker: FunctionMaker,
    input_values: list[Any],
    trust_input: bool,
    name: str | None,
    unpack_single: bool,
    profile: Any = None,
) -> Function:
    """Link an unpickled maker again into a :class:`Function` whose explicit inputs hold
    ``input_values`` (what :meth:`Function.__reduce__` pickled)."""
    f = maker.create(
        unpack_single=unpack_single,
        input_storage=[[value] for value in input_values],
        name=name,
        profile=profile,
    )
    f.trust_input = trust_input
    return f


def _state_locks(variables: Sequence[Variable], updated: Any) -> tuple[StateLock, ...]:
    """The state locks of the shared variables among ``variables`` (a Function's inputs,
    explicit then implicit) at the positions ``updated``, each once, in the order every
    Function takes them (by identity: a fixed order among the locks alive together)."""
    locks = {id(lock): lock for i in updated if (lock := state_lock_of(variables[i])) is not None}
    return tuple(locks[key] for key in sorted(locks))


def _acquire_all(states: tuple[StateLock, ...]) -> tuple[Any, ...]:
    """Acquire the locks of ``states`` in order; return the locks taken (to release: a
    forked child replaces a StateLock's lock, never the one a call took)."""
    held: list[Any] = []
    try:
        for state in states:
            lock = state.lock
            lock.acquire()
            held.append(lock)
    except BaseException:  # interrupted while waiting: give back what was taken
        for lock in reversed(held):
            lock.release()
        raise
    return tuple(reversed(held))


def _copy_in(inp: In) -> In:
    new = In.__new__(In)
    new.__dict__.update(inp.__dict__)
    return new


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
