"""Building one node's thunk: the corridor from a node to its kernel.

:func:`make_node_thunk` (what every per-node linker calls) tries the implementations a
linker names in order. For each it calls the Op's own ``make_thunk`` when its class
overrides :meth:`opweave.graph.op.Op.make_thunk` (PyTensor's override point), and
otherwise :func:`build_thunk`: :func:`~opweave.link.resolver.implementation_for` finds the
kernel, and the thunk is built by the core (``perform``-style kernels,
:func:`~opweave.link.perform.make_perform_thunk`) or by the ``make_thunk`` its backend
declares in its ``opweave_backend_info`` answer (opweave-c's C thunks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.link.lazy import declares_lazy, is_lazy, make_lazy_thunk
from opweave.link.perform import make_perform_thunk
from opweave.link.resolver import refusal, resolve, thunk_builder
from opweave.plugins.manager import get_plugin_manager

__all__ = ["build_thunk", "make_node_thunk", "make_thunk_through_plugins"]

#: The implementation asked for when a caller names none.
DEFAULT_IMPL = "py"


def build_thunk(
    op: Any,
    node: Apply,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Callable[[], Any]:
    """A thunk of ``node`` from ``impl``'s kernel (``None``: ``"py"``).

    Raises
    ------
    NoImplementationError
        When ``impl`` has no kernel for the node (it has none, or defers it to another
        backend); the message names the Op, the backend and what was asked.
    """
    pm = get_plugin_manager()
    backend = impl or DEFAULT_IMPL
    found = resolve(op, node, backend, pm)
    if found.what != "kernel":
        raise refusal(found, op, node)
    make = None if backend == DEFAULT_IMPL else thunk_builder(found, pm)
    if make is not None:
        thunk: Callable[[], Any] = make(
            node, found.implementation, storage_map, compute_map, no_recycling
        )
        return thunk
    if not callable(found.implementation):
        raise TypeError(
            f"{found.source} gave {found.implementation!r} as the {backend!r} implementation "
            f"of {op}, which is not callable and its backend declares no make_thunk"
        )
    return make_perform_thunk(node, found.implementation, storage_map, compute_map, no_recycling)


#: The default ``Op.make_thunk`` builds through this module (the graph layer below calls
#: it without importing it).
Op.thunk_builder = build_thunk


#: Earlier name of :func:`build_thunk`.
make_thunk_through_plugins = build_thunk


def _overrides_make_thunk(op: Any) -> bool:
    return type(op).make_thunk is not Op.make_thunk


def make_node_thunk(
    node: Apply,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    no_recycling: Sequence[Variable],
    impls: Sequence[str | None],
    lazy: bool = True,
) -> Callable[[], Any]:
    """A thunk of ``node`` from the first of ``impls`` that implements its Op.

    The thunk carries the implementation that made it (its ``impl`` attribute, which a
    profile reports). With ``lazy``, the thunk of an Op declaring the lazy protocol
    (``needed_inputs``) is wrapped into a lazy thunk
    (:func:`opweave.link.lazy.make_lazy_thunk`).

    Raises
    ------
    NotImplementedError
        The last implementation's refusal when none of ``impls`` implements the node.
    """
    op = node.op
    refusal_: NotImplementedError | None = None
    for impl in impls:
        try:
            op.prepare_node(node, storage_map, compute_map, impl)
            if _overrides_make_thunk(op):
                thunk = op.make_thunk(node, storage_map, compute_map, no_recycling, impl=impl)
            else:
                thunk = build_thunk(op, node, storage_map, compute_map, no_recycling, impl)
        except NotImplementedError as exc:
            refusal_ = exc
            continue
        if lazy and declares_lazy(op) and not is_lazy(thunk):
            thunk = make_lazy_thunk(node, thunk, storage_map, compute_map)
        try:  # what a profile reports as the node's implementation (thunk_origin)
            thunk.impl = impl  # type: ignore[attr-defined]
        except (AttributeError, TypeError):  # a builtin or bound method takes no attribute
            pass
        return thunk
    if refusal_ is None:
        raise NotImplementedError(f"no implementation asked for {node}")
    raise refusal_
