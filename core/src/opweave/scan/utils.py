"""Helpers of :func:`opweave.scan.scan`: ``until``, reading what the body returns, and
:class:`ScanArgs`, a Scan node's inputs and outputs sorted into named fields that can be
edited and turned back into a Scan (PyTensor's ``pytensor.scan.utils``)."""

from __future__ import annotations

import copy
from collections import deque, namedtuple
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np

import opweave.scalar as ps
from opweave.compile.profiling import ProfileStats
from opweave.graph.basic import Apply, Constant, Variable, equal_computations
from opweave.graph.basic import clone as clone_graph
from opweave.graph.replace import clone_replace
from opweave.graph.traversal import graph_inputs
from opweave.scan.info import ScanInfo
from opweave.tensor.basic import AllocEmpty, cast
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.subtensor import set_subtensor

__all__ = [
    "FieldInfo",
    "InnerFunctionError",
    "ScanArgs",
    "ScanProfileStats",
    "Validator",
    "default_filter_scanargs",
    "expand_empty",
    "forced_replace",
    "get_updates_and_outputs",
    "reconstruct_graph",
    "safe_index",
    "safe_new",
    "scan_io_mappings",
    "until",
]


class until:  # noqa: N801 - PyTensor's name
    """The stopping condition of a while loop: the body returns ``outputs, until(cond)``.

    The loop stops after the first step whose ``condition`` is true (that step's outputs
    are kept).

    Parameters
    ----------
    condition
        A boolean (or integer) scalar.

    Raises
    ------
    TypeError
        If ``condition`` is not a scalar.
    """

    def __init__(self, condition: Any) -> None:
        cond = as_tensor_variable(condition)
        if cond.type.ndim != 0:
            raise TypeError(f"until: the condition must be a scalar, got {cond.type}")
        self.condition = cond


def _is_updates(x: Any) -> bool:
    return isinstance(x, Mapping) or (
        isinstance(x, (list, tuple))
        and len(x) > 0
        and all(isinstance(p, tuple) and len(p) == 2 for p in x)
        and all(not isinstance(p, Variable) for p in x)
    )


def _as_outputs(x: Any) -> list[Variable]:
    if x is None:
        return []
    items = list(x) if isinstance(x, (list, tuple)) else [x]
    # variables of any Type (random generators...) are kept; other values become tensors
    return [o if isinstance(o, Variable) else as_tensor_variable(o) for o in items]


def get_updates_and_outputs(
    ls: Any,
) -> tuple[Variable | None, list[Variable], dict[Variable, Variable]]:
    """Read what a scan body returned: ``(condition, outputs, updates)``.

    Accepted forms (as PyTensor's): ``outputs``; ``updates``; ``(outputs, updates)`` or
    ``(updates, outputs)``; any of these followed by ``until(cond)``; ``until(cond)``
    alone; ``outputs`` may be one variable or a list/tuple of them.

    Raises
    ------
    ValueError
        If the value has none of these forms.
    """
    cond: Variable | None = None
    if isinstance(ls, until):
        return ls.condition, [], {}
    if isinstance(ls, tuple | list) and ls and isinstance(ls[-1], until):
        cond = ls[-1].condition
        ls = ls[:-1]
        if len(ls) == 1:
            ls = ls[0]
    if _is_updates(ls):
        return cond, [], dict(ls)
    if isinstance(ls, tuple | list) and len(ls) == 2:
        first, second = ls
        if _is_updates(second) and not _is_updates(first):
            return cond, _as_outputs(first), dict(second)
        if _is_updates(first) and not _is_updates(second):
            return cond, _as_outputs(second), dict(first)
    if isinstance(ls, tuple | list) and any(_is_updates(x) or isinstance(x, until) for x in ls):
        raise ValueError(
            "scan: the body must return outputs, updates (a dict), (outputs, updates), or "
            "any of these followed by until(condition); got "
            f"{type(ls).__name__} of {[type(x).__name__ for x in ls]}"
        )
    return cond, _as_outputs(ls), {}


# ---------------------------------------------------------------------- ScanArgs

#: Where :meth:`ScanArgs.find_among_fields` found a variable: the field's name, the name of
#: the aggregate list holding the field (``"outer_outputs"``, ...), the index in the field,
#: the index within a state's taps (nested fields only, else ``None``) and the index in the
#: aggregate list.
FieldInfo = namedtuple("FieldInfo", ("name", "agg_name", "index", "inner_index", "agg_index"))


def safe_index(lst: Sequence[Any], x: Any) -> int | None:
    """The position of ``x`` (by identity) in ``lst``, or ``None``."""
    for i, item in enumerate(lst):
        if item is x:
            return i
    return None


def default_filter_scanargs(name: str) -> bool:
    """Whether the :class:`ScanArgs` attribute ``name`` is a variable field."""
    return name.startswith(("inner_", "outer_"))


def scan_io_mappings(
    n_seqs: int,
    state_taps: Sequence[Sequence[int]],
    n_nit: int,
    n_shared: int,
    n_inner_inputs: int,
) -> dict[str, dict[int, Any]]:
    """The correspondences between a Scan node's outer and inner inputs and outputs.

    The layout is :class:`~opweave.scan.op.Scan`'s (see :mod:`opweave.scan.op`); the keys
    are PyTensor's (``"inner_out_from_outer_out"``, ``"outer_out_from_outer_inp"``, ... :
    ``"<to>_from_<from>"`` with ``outer_inp``, ``inner_inp``, ``inner_out``, ``outer_out``).
    A mapping to an outer variable gives one index (``-1``: none); a mapping to inner
    variables gives a list (a state has one inner input per tap). Per-step outputs have
    no outer input (their length is the number of steps).

    Parameters
    ----------
    n_seqs
        Number of sequences.
    state_taps
        The taps of each state, in the node's order.
    n_nit
        Number of per-step outputs.
    n_shared
        Number of shared states.
    n_inner_inputs
        Number of inner inputs (the non-sequences are the last ones).
    """
    n_states = len(state_taps)
    # (outer input, inner inputs, inner outputs, outer output) of each outer quantity
    entries: list[tuple[int, list[int], list[int], int]] = [(0, [], [], -1)]
    oi, ii = 1, 0
    for _ in range(n_seqs):
        entries.append((oi, [ii], [], -1))
        oi, ii = oi + 1, ii + 1
    for j, taps in enumerate(state_taps):
        entries.append((oi, list(range(ii, ii + len(taps))), [j], j))
        oi, ii = oi + 1, ii + len(taps)
    for k in range(n_nit):
        entries.append((-1, [], [n_states + k], n_states + k))
    for s in range(n_shared):
        out = n_states + n_nit + s
        entries.append((oi, [ii], [out], out))
        oi, ii = oi + 1, ii + 1
    for _ in range(n_inner_inputs - ii):
        entries.append((oi, [ii], [], -1))
        oi, ii = oi + 1, ii + 1
    names = ("outer_inp", "inner_inp", "inner_out", "outer_out")
    maps: dict[str, dict[int, Any]] = {
        f"{to}_from_{frm}": {} for frm in names[::-1] for to in names if to != frm
    }
    for oinp, iinp, iout, oout in entries:
        if oout != -1:
            maps["outer_inp_from_outer_out"][oout] = oinp
            maps["inner_inp_from_outer_out"][oout] = iinp
            maps["inner_out_from_outer_out"][oout] = iout
        if oinp != -1:
            maps["inner_inp_from_outer_inp"][oinp] = iinp
            maps["inner_out_from_outer_inp"][oinp] = iout
            maps["outer_out_from_outer_inp"][oinp] = oout
        for idx in iinp:
            maps["outer_inp_from_inner_inp"][idx] = oinp
            maps["inner_out_from_inner_inp"][idx] = iout
            maps["outer_out_from_inner_inp"][idx] = oout
        for idx in iout:
            maps["outer_inp_from_inner_out"][idx] = oinp
            maps["inner_inp_from_inner_out"][idx] = iinp
            maps["outer_out_from_inner_out"][idx] = oout
    return maps


def _is_sit_sot(taps: Sequence[int]) -> bool:
    return tuple(taps) == (-1,)


class ScanArgs:
    """A Scan node's inputs and outputs sorted into named, editable fields (PyTensor's
    ``ScanArgs``).

    Fields (lists of variables): ``outer_in_seqs``/``inner_in_seqs``,
    ``outer_in_mit_sot``/``inner_in_mit_sot`` (one list of tap inputs per state) and
    ``mit_sot_in_slices`` (their taps), ``outer_in_sit_sot``/``inner_in_sit_sot`` (states
    with the single tap ``-1``), ``outer_in_shared``/``inner_in_shared`` (shared states),
    ``outer_in_nit_sot`` (the length of each per-step output: the number of steps),
    ``outer_in_non_seqs``/``inner_in_non_seqs``, and for the outputs ``inner_out_*`` /
    ``outer_out_*`` with ``mit_sot``, ``sit_sot``, ``nit_sot`` and ``shared``; ``cond``
    holds the stopping condition of a while loop (or nothing) and ``n_steps`` the number
    of steps. The ``mit_mot`` fields are always empty (they belong to PyTensor's gradient
    loops, which opweave builds differently).

    States are listed mit-sot first, then sit-sot, each kind in the node's order, so that
    a Scan built from :attr:`inner_inputs`, :attr:`inner_outputs`, :attr:`info` and
    :attr:`outer_inputs` has the outputs :attr:`outer_outputs`, in that order::

        args = ScanArgs.from_node(node)
        ...  # edit the fields
        new_outputs = Scan(args.inner_inputs, args.inner_outputs, args.info)(
            *args.outer_inputs, return_list=True
        )

    Opweave's Scan takes no length inputs for per-step outputs (each has one entry per
    step), so :attr:`outer_inputs` leaves ``outer_in_nit_sot`` out.

    Parameters
    ----------
    outer_inputs, outer_outputs
        The node's inputs and outputs.
    _inner_inputs, _inner_outputs
        The Op's inner graph.
    info
        The Op's :class:`~opweave.scan.info.ScanInfo`.
    clone
        Copy the inner graph (its inputs included) first.

    Raises
    ------
    ValueError
        If the variables do not match the layout of ``info``.
    """

    default_filter = staticmethod(default_filter_scanargs)
    nested_list_fields = ("inner_in_mit_mot", "inner_in_mit_sot", "inner_out_mit_mot")

    def __init__(
        self,
        outer_inputs: Sequence[Variable],
        outer_outputs: Sequence[Variable],
        _inner_inputs: Sequence[Variable],
        _inner_outputs: Sequence[Variable],
        info: ScanInfo,
        clone: bool | None = True,
    ) -> None:
        _check_layout(outer_inputs, outer_outputs, _inner_inputs, _inner_outputs, info)
        inner_inputs, inner_outputs = list(_inner_inputs), list(_inner_outputs)
        if clone:
            inner_inputs, inner_outputs = clone_graph(
                inner_inputs, inner_outputs, copy_inputs=True, copy_orphans=False
            )
        self.n_steps = outer_inputs[0]
        self.as_while = info.as_while
        self.truncate_gradient = info.truncate_gradient
        self.cond = [inner_outputs[-1]] if info.as_while else []
        if info.as_while:
            inner_outputs = inner_outputs[:-1]

        n_seqs, n_states, n_nit = info.n_seqs, info.n_states, info.n_nit
        self.outer_in_seqs = list(outer_inputs[1 : 1 + n_seqs])
        self.inner_in_seqs = list(inner_inputs[:n_seqs])
        taps_in, q = [], n_seqs
        for taps in info.state_taps:
            taps_in.append(list(inner_inputs[q : q + len(taps)]))
            q += len(taps)
        outer_states = list(outer_inputs[1 + n_seqs : 1 + n_seqs + n_states])
        mit = [j for j, taps in enumerate(info.state_taps) if not _is_sit_sot(taps)]
        sit = [j for j, taps in enumerate(info.state_taps) if _is_sit_sot(taps)]

        self.mit_mot_in_slices: list[tuple[int, ...]] = []
        self.mit_sot_in_slices = [tuple(info.state_taps[j]) for j in mit]
        self.sit_sot_in_slices = [(-1,) for _ in sit]
        self.inner_in_mit_mot: list[list[Variable]] = []
        self.inner_in_mit_sot = [taps_in[j] for j in mit]
        self.outer_in_mit_mot: list[Variable] = []
        self.outer_in_mit_sot = [outer_states[j] for j in mit]
        self.outer_in_sit_sot = [outer_states[j] for j in sit]
        self.inner_in_sit_sot = [taps_in[j][0] for j in sit]
        self.outer_in_shared = list(
            outer_inputs[1 + n_seqs + n_states : 1 + n_seqs + n_states + info.n_shared]
        )
        self.inner_in_shared = list(inner_inputs[q : q + info.n_shared])
        self.outer_in_nit_sot = [outer_inputs[0]] * n_nit
        self.outer_in_non_seqs = list(outer_inputs[1 + n_seqs + n_states + info.n_shared :])
        self.inner_in_non_seqs = list(inner_inputs[q + info.n_shared :])

        self.mit_mot_out_slices: list[tuple[int, ...]] = []
        self.outer_out_mit_mot: list[Variable] = []
        self.inner_out_mit_mot: list[list[Variable]] = []
        self.outer_out_mit_sot = [outer_outputs[j] for j in mit]
        self.inner_out_mit_sot = [inner_outputs[j] for j in mit]
        self.outer_out_sit_sot = [outer_outputs[j] for j in sit]
        self.inner_out_sit_sot = [inner_outputs[j] for j in sit]
        self.outer_out_nit_sot = list(outer_outputs[n_states : n_states + n_nit])
        self.inner_out_nit_sot = list(inner_outputs[n_states : n_states + n_nit])
        self.outer_out_shared = list(outer_outputs[n_states + n_nit :])
        self.inner_out_shared = list(inner_outputs[n_states + n_nit :])

    @staticmethod
    def from_node(node: Apply, clone: bool = False) -> ScanArgs:
        """The fields of the Scan node ``node`` (its inner graph not copied by default).

        Raises
        ------
        TypeError
            If ``node`` is not a Scan node.
        """
        info = getattr(node.op, "info", None)
        if not isinstance(info, ScanInfo) or not hasattr(node.op, "inner_outputs"):
            raise TypeError(f"{node} is not a Scan node")
        return ScanArgs(
            node.inputs,
            node.outputs,
            node.op.inner_inputs,
            node.op.inner_outputs,
            info,
            clone=clone,
        )

    # ------------------------------------------------------------------ aggregates

    @property
    def inner_inputs(self) -> list[Variable]:
        """The inner inputs in Scan's layout."""
        return [
            *self.inner_in_seqs,
            *chain.from_iterable(self.inner_in_mit_mot),
            *chain.from_iterable(self.inner_in_mit_sot),
            *self.inner_in_sit_sot,
            *self.inner_in_shared,
            *self.inner_in_non_seqs,
        ]

    @property
    def outer_inputs(self) -> list[Variable]:
        """The outer inputs in Scan's layout (no per-step output lengths)."""
        return [
            self.n_steps,
            *self.outer_in_seqs,
            *self.outer_in_mit_mot,
            *self.outer_in_mit_sot,
            *self.outer_in_sit_sot,
            *self.outer_in_shared,
            *self.outer_in_non_seqs,
        ]

    @property
    def inner_outputs(self) -> list[Variable]:
        """The inner outputs in Scan's layout (the condition last)."""
        return [
            *chain.from_iterable(self.inner_out_mit_mot),
            *self.inner_out_mit_sot,
            *self.inner_out_sit_sot,
            *self.inner_out_nit_sot,
            *self.inner_out_shared,
            *self.cond,
        ]

    @property
    def outer_outputs(self) -> list[Variable]:
        """The outer outputs in Scan's layout."""
        return [
            *self.outer_out_mit_mot,
            *self.outer_out_mit_sot,
            *self.outer_out_sit_sot,
            *self.outer_out_nit_sot,
            *self.outer_out_shared,
        ]

    @property
    def info(self) -> ScanInfo:
        """The layout of the fields, for building a Scan."""
        if self.mit_mot_in_slices or self.inner_in_mit_mot or self.inner_out_mit_mot:
            raise ValueError("ScanArgs: opweave's Scan has no mit-mot states")
        return ScanInfo(
            n_seqs=len(self.inner_in_seqs),
            state_taps=(
                *(tuple(taps) for taps in self.mit_sot_in_slices),
                *((-1,) for _ in self.inner_in_sit_sot),
            ),
            n_nit=len(self.inner_out_nit_sot),
            n_shared=len(self.inner_in_shared),
            n_non_seqs=len(self.inner_in_non_seqs),
            as_while=self.as_while,
            truncate_gradient=self.truncate_gradient,
        )

    @property
    def n_nit_sot(self) -> int:
        """Number of per-step outputs."""
        return len(self.inner_out_nit_sot)

    @property
    def n_mit_mot(self) -> int:
        """Number of mit-mot states (always 0)."""
        return 0

    @property
    def inputs(self) -> list[Variable]:
        """The inner inputs (as :attr:`inner_inputs`)."""
        return self.inner_inputs

    @property
    def var_mappings(self) -> dict[str, dict[int, Any]]:
        """:func:`scan_io_mappings` of the fields' layout (indices in the aggregates)."""
        info = self.info
        return scan_io_mappings(
            info.n_seqs, info.state_taps, info.n_nit, info.n_shared, len(self.inner_inputs)
        )

    @property
    def field_names(self) -> list[str]:
        """The tap lists, then the variable fields and ``n_steps``, in definition order."""
        names = ["mit_mot_out_slices", "mit_mot_in_slices", "mit_sot_in_slices"]
        names += [
            name
            for name in self.__dict__
            if name.startswith(("inner_in", "inner_out", "outer_in", "outer_out"))
            or name == "n_steps"
        ]
        return names

    # ------------------------------------------------------------------ finding fields

    def find_among_fields(
        self, i: Variable, field_filter: Callable[[str], bool] = default_filter_scanargs
    ) -> FieldInfo | None:
        """The first field (among those ``field_filter`` accepts) holding ``i``, or ``None``."""
        for name in filter(field_filter, self.field_names):
            values = getattr(self, name)
            prefix = name[:8]
            agg_name = f"{prefix}puts" if prefix.endswith("in") else f"{prefix}tputs"
            agg = getattr(self, agg_name)
            if name in self.nested_list_fields:
                for n, sub in enumerate(values):
                    idx = safe_index(sub, i)
                    if idx is not None:
                        return FieldInfo(name, agg_name, n, idx, safe_index(agg, i))
                continue
            idx = safe_index(values, i)
            if idx is not None:
                return FieldInfo(name, agg_name, idx, None, safe_index(agg, i))
        return None

    def get_alt_field(self, var_info: Variable | FieldInfo, alt_prefix: str) -> Variable:
        """The element matching ``var_info`` in the field of the same kind with prefix
        ``alt_prefix`` (``"inner_in"``, ``"inner_out"``, ``"outer_in"``, ``"outer_out"``):
        e.g. the inner output of a ``outer_out_sit_sot`` element.

        Raises
        ------
        ValueError
            If ``var_info`` is a variable found in no field.
        """
        if not isinstance(var_info, FieldInfo):
            found = self.find_among_fields(var_info)
            if found is None:
                raise ValueError(f"ScanArgs: {var_info} is in none of the fields")
            var_info = found
        kind = var_info.name[var_info.name.index("_", 6) + 1 :]
        return getattr(self, f"{alt_prefix}_{kind}")[var_info.index]

    def _remove_from_fields(
        self, i: Variable, field_filter: Callable[[str], bool] = default_filter_scanargs
    ) -> FieldInfo | None:
        found = self.find_among_fields(i, field_filter=field_filter)
        if found is None:
            return None
        values = getattr(self, found.name)
        if found.inner_index is not None:
            del values[found.index][found.inner_index]
        else:
            del values[found.index]
        return found

    def get_dependent_nodes(self, i: Variable, seen: set[Variable] | None = None) -> set[Variable]:
        """The variables of the fields that depend on ``i`` or that ``i`` feeds (the inner
        and outer variables of the same quantity, the inner outputs computed from an inner
        input), transitively.

        Raises
        ------
        ValueError
            If ``i`` is in none of the fields.
        """
        seen = {i} if seen is None else seen | {i}
        found = self.find_among_fields(i)
        if found is None:
            raise ValueError(f"ScanArgs: {i} is in none of the fields")
        suffix = f"{found.name[:8]}p" if found.name[:8].endswith("_in") else found.name[:9]
        dependents: set[Variable] = set()
        for key, mapping in self.var_mappings.items():
            if not key.endswith(suffix) or found.agg_index not in mapping:
                continue
            targets = mapping[found.agg_index]
            targets = targets if isinstance(targets, list) else [targets]
            prefix = key[:9]
            agg = getattr(self, f"{prefix}uts" if prefix.endswith("p") else f"{prefix}puts")
            dependents.update(agg[t] for t in targets if t >= 0 and agg[t] not in seen)
        if found.name.startswith("inner_in"):
            for out in self.inner_outputs:
                if out not in seen and any(v is i for v in graph_inputs([out])):
                    dependents.add(out)
        for var in tuple(dependents):
            if var in seen:
                continue
            more = self.get_dependent_nodes(var, seen=seen)
            dependents |= more
            seen |= more
        return dependents

    def remove_from_fields(
        self, i: Variable, rm_dependents: bool = True
    ) -> list[tuple[Variable, FieldInfo | None]]:
        """Remove ``i`` (and, with ``rm_dependents``, what depends on it) from the fields.

        Returns
        -------
        list
            ``(variable, where it was)`` for each variable removed.
        """
        targets = self.get_dependent_nodes(i) | {i} if rm_dependents else {i}
        return [(v, self._remove_from_fields(v)) for v in targets]

    # ------------------------------------------------------------------ copying

    def _list_fields(self) -> list[str]:
        return [
            name
            for name in self.__dict__
            if name.startswith(("inner_in", "inner_out", "outer_in", "outer_out"))
            or name in ("mit_mot_out_slices", "mit_mot_in_slices", "mit_sot_in_slices")
        ]

    def __copy__(self) -> ScanArgs:
        """A copy whose field lists can be edited without touching the original's."""
        res = object.__new__(type(self))
        res.__dict__.update(self.__dict__)
        for name in self._list_fields():
            setattr(res, name, copy.copy(getattr(self, name)))
        return res

    def merge(self, other: ScanArgs) -> ScanArgs:
        """A copy with ``other``'s field elements appended to each field."""
        res = copy.copy(self)
        for name in self._list_fields():
            getattr(res, name).extend(getattr(other, name))
        return res

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return all(
            hasattr(other, name) and getattr(self, name) == getattr(other, name)
            for name in self.field_names
        )

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        order = (
            [n for n in self.field_names if n.startswith("outer_in") or n == "n_steps"]
            + [n for n in self.field_names if n.startswith("inner_in")]
            + ["mit_mot_in_slices", "mit_sot_in_slices"]
            + [n for n in self.field_names if n.startswith("inner_out")]
            + ["mit_mot_out_slices"]
            + [n for n in self.field_names if n.startswith("outer_out")]
        )
        body = ",\n".join(f"\t{name}={getattr(self, name)}" for name in order)
        return f"ScanArgs(\n{body})"

    __repr__ = __str__


def _check_layout(
    outer_inputs: Sequence[Variable],
    outer_outputs: Sequence[Variable],
    inner_inputs: Sequence[Variable],
    inner_outputs: Sequence[Variable],
    info: ScanInfo,
) -> None:
    """Raise ValueError unless the four lists have the sizes ``info`` gives them."""
    n_in = info.n_seqs + info.n_taps + info.n_shared + info.n_non_seqs
    n_out = info.n_states + info.n_nit + info.n_shared
    sizes = (len(outer_inputs), len(outer_outputs), len(inner_inputs), len(inner_outputs))
    want = (
        1 + info.n_seqs + info.n_states + info.n_shared + info.n_non_seqs,
        n_out,
        n_in,
        n_out + int(info.as_while),
    )
    if sizes != want:
        raise ValueError(
            f"ScanArgs: the layout {info} needs (outer inputs, outer outputs, inner inputs, "
            f"inner outputs) = {want}, got {sizes}"
        )


# ---------------------------------------------------------------------- PyTensor's helpers


class InnerFunctionError(Exception):
    """An error raised while running a Scan's inner function."""


class ScanProfileStats(ProfileStats):
    """The profile of a Scan's inner function: its calls, steps and time.

    Parameters
    ----------
    atexit_print
        Print the profile when the interpreter exits.
    name
        The name shown.
    """

    show_sum = False
    callcount = 0
    nbsteps = 0
    call_time = 0.0

    def __init__(self, atexit_print: bool = True, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(atexit_print=atexit_print, **kwargs)
        self.name = name


def safe_new(x: Variable, tag: str = "", dtype: Any = None) -> Variable:
    """A new root variable of ``x``'s type (cast to ``dtype`` when given), named
    ``x.name + tag``; a constant is returned as it is (or cast, as a constant).

    Used to build fresh inner inputs that share nothing with the outer graph.
    """
    name = x.name + tag if getattr(x, "name", None) is not None else None
    if isinstance(x, Constant):
        if dtype is not None and x.type.dtype != dtype:
            cast_type = cast(x, dtype).type
            return type(x)(cast_type, np.asarray(x.data, dtype=dtype), x.name)
        return x
    if isinstance(x.type, ps.ScalarType):
        new = ps.get_scalar_type(dtype)() if dtype else x.type()
        new.name = name
        return new
    try:
        x = as_tensor_variable(x)
    except TypeError:
        pass  # e.g. random generators: keep the type as it is
    if dtype is not None and getattr(x.type, "dtype", dtype) != dtype:
        x = cast(x, dtype)
    new = x.type()
    new.name = name
    return new


def expand_empty(tensor_var: Variable, size: Any) -> Variable:
    """``tensor_var`` followed by ``size`` uninitialised rows along axis 0 (its shape
    ``(d0, d1, ...)`` becomes ``(d0 + size, d1, ...)``)."""
    if isinstance(size, int) and size == 0:
        return tensor_var
    shape = tuple(tensor_var.shape)
    empty = AllocEmpty(tensor_var.type.dtype)(size + shape[0], *shape[1:])
    result = set_subtensor(empty[: shape[0]], tensor_var)
    result.tag.nan_guard_mode_check = False
    return result


class Validator:
    """Tells whether variables can be computed without the ``invalid`` ones.

    Parameters
    ----------
    valid
        Variables known to be usable.
    invalid
        Variables that must not be used.
    valid_equivalent
        ``{invalid variable: usable variable computing the same}``.
    """

    def __init__(
        self,
        valid: Sequence[Variable] | None = None,
        invalid: Sequence[Variable] | None = None,
        valid_equivalent: Mapping[Variable, Variable] | None = None,
    ) -> None:
        equivalent = dict(valid_equivalent or {})
        self.valid = set(valid or ()) | set(equivalent.values())
        self.invalid = set(invalid or ()) | set(equivalent)
        self.valid_equivalent = equivalent

    def _value(self, var: Variable) -> tuple[Variable, bool] | None:
        if var in self.valid:
            return var, True
        if var in self.valid_equivalent:
            return self.valid_equivalent[var], False
        return None

    def check(self, out: Variable) -> tuple[Variable, bool] | None:
        """``(out, True)`` if ``out`` is usable; ``(equivalent, False)`` if it is not
        but can be rebuilt from usable variables; ``None`` otherwise. Root variables
        not marked invalid are usable."""
        stack = [out]
        while stack:
            var = stack.pop()
            if var in self.valid or var in self.invalid:
                continue
            if var.owner is None:
                self.valid.add(var)
                continue
            pending = [i for i in var.owner.inputs if i not in self.valid and i not in self.invalid]
            if pending:
                stack.append(var)
                stack.extend(pending)
                continue
            inputs = [self._value(i) for i in var.owner.inputs]
            if any(v is None for v in inputs):
                self.invalid.add(var)
                continue
            values = [v for v in inputs if v is not None]
            if all(ok for _, ok in values):
                self.valid.add(var)
                continue
            clone = var.owner.clone_with_new_inputs([v for v, _ in values])
            new = clone.outputs[var.owner.outputs.index(var)]
            self.invalid.add(var)
            self.valid.add(new)
            self.valid_equivalent[var] = new
        return self._value(out)


def reconstruct_graph(
    inputs: Sequence[Variable], outputs: Sequence[Variable], tag: str | None = None
) -> tuple[list[Variable], list[Variable]]:
    """Clone the graph from ``inputs`` to ``outputs`` onto new inputs (made by
    :func:`safe_new`, named with ``tag``); return ``(new inputs, new outputs)``."""
    new_inputs = [safe_new(x, tag or "") for x in inputs]
    givens = dict(zip(inputs, new_inputs, strict=True))
    return new_inputs, clone_replace(list(outputs), replace=givens)


def forced_replace(out: Variable | None, x: Variable, y: Variable) -> Variable | None:
    """``out`` with every subexpression that computes the same as ``x``
    (:func:`~opweave.graph.basic.equal_computations`, not only ``x`` itself) replaced
    by ``y``; a matched subexpression is not looked into."""
    if out is None:
        return None
    seen: set[Variable] = set()
    queue: deque[Variable] = deque([out])
    pairs = []
    while queue:
        var = queue.popleft()
        if var in seen:
            continue
        seen.add(var)
        if equal_computations([var], [x]):
            pairs.append((var, y))
        elif var.owner is not None:
            queue.extendleft(var.owner.inputs)
    if not pairs:
        return out
    return clone_replace(out, replace=pairs)
