"""A lazy graph's steps as the runtime's loop runs them: the core's lazy schedule, flat.

The core runs a graph holding a lazy node (``ifelse``) in its demand-driven loop
(:func:`opweave.link.lazy.run_lazy_loop`): from the nodes computing the outputs, a node
runs once the nodes it depends on ran, and a lazy node first names the inputs it needs,
so that the branch an ``IfElse`` does not take never runs. :func:`lazy_program` turns that
loop's schedule (:func:`opweave.link.lazy.lazy_schedule`) into the ``lazy`` argument of
``link_steps`` (``csrc/runtime_functions.h``), with which the runtime runs the same steps
in the same order, in C: nested ``IfElse`` nodes, branches sharing nodes and conditions
computed in another ``IfElse``'s branch are all decided as the core decides them, since
the order is decided while the call runs, as in the core.

An ``IfElse`` whose thunk is the core's lazy wrapper around the Python kernel
(:func:`opweave_python.impls.ifelse.ifelse_perform`) is run by the runtime itself: it
reads the condition as ``bool(value != 0)`` and sets the outputs to the taken branch's
values, copied unless the node is ``as_view`` and the ``then`` branch is taken, as that
kernel does. Any other lazy thunk is called as the core calls it.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.ifelse import IfElse
from opweave.link.lazy import _stalled, is_lazy, lazy_schedule
from opweave.link.loop import GcEntry

__all__ = ["LazyProgram", "lazy_program", "runs_python_ifelse"]

#: The kinds of node (the first entry of ``spec``): one the runtime's loop runs once the
#: nodes it depends on ran, a lazy Python thunk it asks which inputs it needs, an
#: ``IfElse`` it runs itself.
EAGER, LAZY_THUNK, IFELSE = 0, 1, 2


@dataclass(frozen=True)
class LazyProgram:
    """A lazy graph's schedule in the form ``link_steps`` reads.

    Attributes
    ----------
    spec
        The ``lazy`` argument of ``link_steps`` (its layout is described there).
    freeable
        The intermediates, which ``link_steps`` takes as its gc cells: each is freed once
        every node reading it ran, and all are emptied at the end of a call.
    """

    spec: tuple[Any, ...]
    freeable: tuple[GcEntry, ...]


def _flat(per_node: Sequence[Sequence[Any]]) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """Offsets (``len(per_node) + 1`` of them) and the concatenated items."""
    ends = [0]
    items: list[Any] = []
    for entries in per_node:
        items += entries
        ends.append(len(items))
    return tuple(ends), tuple(items)


#: Module and name of the Python backend's ``IfElse`` kernel.
_PYTHON_IFELSE = ("opweave_python.impls.ifelse", "ifelse_perform")


def runs_python_ifelse(node: Apply, thunk: Any) -> bool:
    """Whether ``thunk`` is the core's lazy wrapper of the Python ``IfElse`` kernel for
    ``node`` (an :class:`~opweave.ifelse.IfElse` itself, not a subclass), which the
    runtime may run in its place. The kernel is recognised by its module and name, without
    importing the Python backend (backends import no other backend): without it installed
    nothing matches, and the node's thunk runs through Python."""
    if type(node.op) is not IfElse or not is_lazy(thunk):
        return False
    if getattr(thunk, "__qualname__", None) != "make_lazy_thunk.<locals>.lazy_thunk":
        return False
    eager = getattr(thunk, "eager", None)
    if getattr(eager, "__qualname__", None) != "make_perform_thunk.<locals>.thunk":
        return False
    perform = getattr(eager, "perform", None)
    return (
        isinstance(perform, functools.partial)
        and getattr(perform.func, "__module__", None) == _PYTHON_IFELSE[0]
        and getattr(perform.func, "__qualname__", None) == _PYTHON_IFELSE[1]
        and len(perform.args) == 1
        and perform.args[0] is node.op
        and not perform.keywords
    )


def lazy_program(
    fgraph: FunctionGraph,
    order: Sequence[Apply],
    thunks: Sequence[Any],
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    allow_gc: bool,
) -> LazyProgram:
    """The :class:`LazyProgram` of ``fgraph`` linked as ``order`` and ``thunks``.

    Parameters
    ----------
    fgraph
        The graph.
    order, thunks
        Its nodes in the linker's order and their thunks (at least one lazy).
    storage_map, compute_map
        The linker's maps.
    allow_gc
        Whether intermediates are freed (otherwise they keep their values between calls,
        and only the views of the inputs are emptied, by the release cells).
    """
    schedule = lazy_schedule(fgraph, order, thunks, storage_map, compute_map, allow_gc)
    kinds = tuple(
        IFELSE if runs_python_ifelse(node, thunk) else LAZY_THUNK if lazy else EAGER
        for node, thunk, lazy in zip(order, thunks, schedule.lazy, strict=True)
    )
    ifelse: list[Any] = []
    for node, kind in zip(order, kinds, strict=True):
        if kind != IFELSE:
            ifelse.append(None)
            continue
        op = node.op
        assert isinstance(op, IfElse)
        ifelse.append(
            (
                op.n_outs,
                op.as_view,
                tuple(storage_map[v] for v in node.inputs),
                tuple(compute_map[v] for v in node.inputs),
                tuple(storage_map[v] for v in node.outputs),
            )
        )
    where = {id(cell): g for g, (cell, _) in enumerate(schedule.freeable)}
    frees = schedule.frees or tuple(() for _ in order)
    free_gc = [[where[id(cell)] for cell, _, _ in entries] for entries in frees]
    readers = [readers for entries in frees for _, _, readers in entries]
    owners = [[-1 if o is None else o for o in owned] for owned in schedule.input_owner]

    def stalled(k: int, requires: list[int]) -> RuntimeError:
        return _stalled(order[k], requires)

    spec = (
        kinds,
        schedule.roots,
        *_flat(schedule.deps),
        *_flat(schedule.prereqs),
        *_flat(owners),
        *_flat(schedule.output_computed),
        *_flat(free_gc),
        *_flat(readers),
        tuple(ifelse),
        copy.deepcopy,
        stalled,
    )
    return LazyProgram(spec, tuple(schedule.freeable))
