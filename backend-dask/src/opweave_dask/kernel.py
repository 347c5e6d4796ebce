"""One node compiled into a small opweave function, as a picklable per-chunk callable.

A :class:`NodeKernel` holds what rebuilds the node (its Op, the Types of its variable
inputs, its constant inputs) and compiles it on its first call in each process: with the
``c`` linker when opweave-c is usable (one C function per call, no Python loop), else
``cvm``, else ``vm``. Compiled functions are kept in a bounded per-process cache keyed by
the kernel's token, so that the many copies of one kernel a distributed scheduler
unpickles (one per task) compile once per worker process; opweave-c's module cache makes
that compilation a load from disk when the module was built before.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import Type
from opweave_dask.portable import reduce_through_core
from opweave_dask.threads import limit_task_thread

__all__ = ["NodeKernel", "chunk_linker"]

#: Linkers a kernel may compile with, best first.
_LINKERS = ("c", "cvm", "vm")


def chunk_linker(asked: str = "auto") -> str:
    """The linker kernels compile with: ``asked`` (``config.dask__kernel_linker``), or for
    ``"auto"`` the best usable here of ``c``, ``cvm`` and ``vm``.

    Raises
    ------
    ValueError
        When ``asked`` names a linker that is not installed or not usable here.
    """
    from opweave.link.lookup import available_linkers, unusable_linkers

    if asked != "auto":
        if asked not in _LINKERS:
            raise ValueError(f"dask__kernel_linker must be one of auto, c, cvm, vm; got {asked!r}")
        reason = unusable_linkers().get(asked)
        if asked not in available_linkers() or reason is not None:
            raise ValueError(
                f"dask__kernel_linker={asked!r} is not usable here: {reason or 'not installed'}"
            )
        return asked
    installed = available_linkers()
    unusable = unusable_linkers()
    for name in _LINKERS:
        if name in installed and name not in unusable:
            return name
    return "vm"


class NodeKernel:
    """``op`` applied to values, compiled lazily into an opweave function.

    Parameters
    ----------
    op
        The Op to run.
    inputs
        One entry per input of the node: a :class:`~opweave.graph.type.Type` for an input
        given at each call, or a :class:`~opweave.graph.basic.Constant` kept in the kernel.
    linker
        The linker to compile with (``"c"``, ``"cvm"`` or ``"vm"``); ``"c"`` falls back
        to ``cvm`` for a node without C code.
    output_types
        The output Types of the node, for an Op whose ``make_node`` cannot be called again
        on fresh inputs (the node is then rebuilt as it was); default: ``op.make_node``.
    destroyed
        Inputs (positions among the call's arguments) the Op overwrites: the kernel copies
        them first, as the values it gets belong to Dask.
    token
        The kernel's identity (kept through pickling); default: a hash of the above.

    Calling the kernel with the variable inputs' values returns the output value (a tuple
    for an Op of several outputs); a call is a Dask task's (:meth:`__call__`), or not
    (:meth:`compute`).
    """

    def __init__(
        self,
        op: Op,
        inputs: Sequence[Type | Constant],
        linker: str,
        output_types: Sequence[Type] | None = None,
        destroyed: Sequence[int] = (),
        token: str | None = None,
    ) -> None:
        self.op = op
        self.inputs = tuple(inputs)
        self.linker = linker
        self.output_types = None if output_types is None else tuple(output_types)
        self.destroyed = tuple(destroyed)
        # From the printed forms and the Op's hash (its props): pickling a long fused Op's
        # graph just to name it would be slow, and too deep for pickle past a few hundred
        # operations. Kept through pickling, so copies of a kernel share its cache entry.
        described = repr(
            (
                type(op).__module__,
                type(op).__qualname__,
                str(op),
                hash(op),
                [(str(i), getattr(i, "data", None)) for i in self.inputs],
                linker,
                [str(t) for t in self.output_types or ()],
                self.destroyed,
            )
        )
        self.token = token or hashlib.sha1(described.encode(), usedforsecurity=False).hexdigest()
        self.nout = len(self._build_node().outputs)

    # ---------------------------------------------------------------- building

    def _build_node(self) -> Apply:
        variables = [
            spec if isinstance(spec, Constant) else spec(f"i{k}")
            for k, spec in enumerate(self.inputs)
        ]
        if self.output_types is not None:
            return Apply(self.op, variables, [t() for t in self.output_types])
        return self.op.make_node(*variables)

    def compile(self) -> Any:
        """Build the node afresh and compile it into an opweave function."""
        import opweave  # late: the package's function and Mode (floor 8)
        from opweave.compile.io import In

        node = self._build_node()
        args = [v for v in node.inputs if not isinstance(v, Constant)]
        ins = [In(v, mutable=i in self.destroyed) for i, v in enumerate(args)]
        for linker in _LINKERS[_LINKERS.index(self.linker) :]:
            mode = opweave.Mode(linker=linker, optimizer=None)
            try:
                return opweave.function(
                    ins,
                    list(node.outputs),
                    mode=mode,
                    accept_inplace=bool(self.destroyed),
                    on_unused_input="ignore",
                )
            except NotImplementedError:  # no C code for this node: the next linker
                if linker == "vm":
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # ---------------------------------------------------------------- calling

    def __call__(self, *values: Any) -> Any:
        """Run as a Dask task: :meth:`compute` with the calling thread's OpenMP limits of
        a task (:func:`~opweave_dask.threads.limit_task_thread`)."""
        fn = _compiled(_Key(self))
        limit_task_thread()
        return self._run(fn, values)

    def compute(self, *values: Any) -> Any:
        """Run in the calling thread, outside Dask (the threads as they are)."""
        return self._run(_compiled(_Key(self)), values)

    def _run(self, fn: Any, values: tuple[Any, ...]) -> Any:
        if self.destroyed:
            values = tuple(
                np.array(v, copy=True) if i in self.destroyed else v for i, v in enumerate(values)
            )
        outs = fn(*values)
        return outs[0] if self.nout == 1 else tuple(outs)

    def __dask_tokenize__(self) -> str:
        return self.token

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Through the core, so that loading it without opweave-dask names the distribution.
        return reduce_through_core(
            NodeKernel,
            (self.op, self.inputs, self.linker, self.output_types, self.destroyed, self.token),
        )

    def __repr__(self) -> str:
        return f"NodeKernel({self.op}, linker={self.linker!r})"


class _Key:
    """A cache key: a kernel, equal to any kernel with the same token."""

    __slots__ = ("kernel",)

    def __init__(self, kernel: NodeKernel) -> None:
        self.kernel = kernel

    def __hash__(self) -> int:
        return hash(self.kernel.token)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.kernel.token == self.kernel.token


@functools.lru_cache(maxsize=512)
def _compiled(key: _Key) -> Any:
    """The compiled function of ``key``'s kernel, once per process (bounded cache)."""
    return key.kernel.compile()


def detached_inputs(node: Apply) -> list[Type | Constant]:
    """The input specs of a kernel for ``node`` as it is: constants kept, Types otherwise."""
    return [v if isinstance(v, Constant) else v.type for v in node.inputs]


def variable_positions(node: Apply) -> list[int]:
    """Positions of ``node``'s inputs that are not constants (a kernel's arguments)."""
    return [i for i, v in enumerate(node.inputs) if not isinstance(v, Constant)]


def is_variable(v: Any) -> bool:
    """Whether ``v`` is a graph variable (not a constant)."""
    return isinstance(v, Variable) and not isinstance(v, Constant)
