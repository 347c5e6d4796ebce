"""The :class:`Op` contract.

An Op builds :class:`~opweave.graph.basic.Apply` nodes with :meth:`Op.make_node`
and describes their computation. The core defines no computation itself:
:meth:`Op.make_thunk` asks the installed backends (through the
``opweave_make_thunk`` hook) for a thunk, and they use the Op's own
:meth:`~Op.perform` when it defines one, or an implementation registered for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from opweave.graph.basic import Apply, Variable
from opweave.graph.c_interface import CLinkerOp
from opweave.graph.trace import add_tag_trace, pause_traces, resume_traces
from opweave.graph.utils import MethodNotDefined

#: A storage cell: a one-element list holding a value.
StorageCell = list
#: A thunk: a zero-argument callable computing one node (or a whole graph).
Thunk = Callable[[], Any]


def _props_eq(self: Op, other: object) -> bool:
    return type(self) is type(other) and self._props() == other._props()


def _props_hash(self: Op) -> int:
    return hash((type(self), self._props()))


def _props_str(self: Op) -> str:
    props = self.__props__
    if not props:
        return type(self).__name__
    params = ", ".join(f"{p}={getattr(self, p)!r}" for p in props)
    return f"{type(self).__name__}{{{params}}}"


class Op(CLinkerOp):
    """Base class of every operation.

    Subclasses define :meth:`make_node` and usually :meth:`perform`. Setting the
    class attribute ``__props__`` to a tuple of attribute names generates
    ``__eq__``, ``__hash__`` and ``__str__`` from those attributes (a subclass may
    still override any of them).

    Attributes
    ----------
    default_output
        If an int, ``op(*inputs)`` returns only that output.
    destroy_map
        ``{output index: [input indices]}``: inputs overwritten by the output.
    view_map
        ``{output index: [input index]}``: inputs the output may alias.
    """

    #: Attribute names that define the Op's equality, hash and printing (set by
    #: subclasses; see the class docstring).
    __props__: tuple[str, ...]
    default_output: ClassVar[int | None] = None
    # Plain (not ClassVar) annotations: an Op may set these per instance in ``__init__``
    # (an in-place variant, a view of some inputs), shadowing the class's empty default.
    destroy_map: dict[int, list[int]] = {}
    view_map: dict[int, list[int]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        props = cls.__dict__.get("__props__")
        if props is None:
            return
        if not isinstance(props, tuple) or not all(isinstance(p, str) for p in props):
            raise TypeError(f"{cls.__name__}.__props__ must be a tuple of attribute names")
        if "__eq__" not in cls.__dict__:
            cls.__eq__ = _props_eq  # type: ignore[method-assign,assignment]
        if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
            cls.__hash__ = _props_hash  # type: ignore[method-assign,assignment]
        if "__str__" not in cls.__dict__:
            cls.__str__ = _props_str  # type: ignore[method-assign]

    # ------------------------------------------------------------------ props

    def _props(self) -> tuple[Any, ...]:
        """The values of the attributes named in ``__props__``."""
        return tuple(getattr(self, p) for p in getattr(self, "__props__", ()))

    def _props_dict(self) -> dict[str, Any]:
        """``__props__`` as a name-to-value dict."""
        return {p: getattr(self, p) for p in getattr(self, "__props__", ())}

    # ------------------------------------------------------------------ graph building

    def make_node(self, *inputs: Any) -> Apply:
        """Check ``inputs``, make the outputs and return ``Apply(self, inputs, outputs)``."""
        raise NotImplementedError(f"{type(self).__name__}.make_node is not defined")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Variable | list[Variable]:
        """Build a node and return its outputs.

        Returns ``node.outputs[self.default_output]`` if ``default_output`` is set,
        the only output if there is one, otherwise the list of outputs.
        """
        return_list = kwargs.pop("return_list", False)
        paused = pause_traces()  # the outputs' Types record none: the node's outputs get one below
        try:
            node = self.make_node(*inputs, **kwargs)
        finally:
            resume_traces(paused)
        add_tag_trace(node.outputs)
        if return_list:
            return list(node.outputs)
        if self.default_output is not None:
            return node.outputs[self.default_output]
        if len(node.outputs) == 1:
            return node.outputs[0]
        return list(node.outputs)

    # ------------------------------------------------------------------ computing

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        """Compute the outputs of ``node`` from the input values.

        Parameters
        ----------
        node
            The Apply node made by :meth:`make_node`.
        inputs
            The input values.
        output_storage
            One storage cell (a one-element list) per output; set ``cell[0]``. A cell
            may hold the previous call's value, which may be reused.
        """
        raise MethodNotDefined(f"{type(self).__name__}.perform is not defined")

    def prepare_node(
        self,
        node: Apply,
        storage_map: dict[Variable, list[Any]] | None,
        compute_map: dict[Variable, list[int]] | None,
        impl: str | None,
    ) -> None:
        """Make per-node preparations before a thunk is built (default: none)."""

    def make_thunk(
        self,
        node: Apply,
        storage_map: dict[Variable, list[Any]],
        compute_map: dict[Variable, list[int]],
        no_recycling: Sequence[Variable],
        impl: str | None = None,
    ) -> Thunk:
        """Return a thunk computing ``node`` in ``storage_map``.

        Parameters
        ----------
        node
            The node to compute.
        storage_map
            Maps every variable to its storage cell.
        compute_map
            Maps every variable to a one-element list: 0 not computed, 1 computed,
            2 garbage-collected. The thunk sets its outputs to 1.
        no_recycling
            Outputs whose storage must be cleared before each run (never reused).
        impl
            ``None``, ``"py"`` or ``"c"`` (or any implementation a backend offers).

        The default asks the installed backends through the ``opweave_make_thunk`` hook.
        """
        # late: link (floor 3) builds on graph; thunks come from the backends through it
        from opweave.link.thunks import make_thunk_through_plugins

        return make_thunk_through_plugins(self, node, storage_map, compute_map, no_recycling, impl)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Return False to keep ``node`` from being replaced by a constant."""
        return True

    # ------------------------------------------------------------------ shapes and cost

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """Return the symbolic output shapes from the input shapes."""
        raise MethodNotDefined(f"{type(self).__name__}.infer_shape is not defined")

    def flops(self, inputs: list[tuple[int, ...]], outputs: list[tuple[int, ...]]) -> float:
        """Return the floating-point operation count for the given shapes."""
        raise MethodNotDefined(f"{type(self).__name__}.flops is not defined")

    # ------------------------------------------------------------------ differentiation

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """Return one gradient term per input."""
        raise NotImplementedError(
            f"{type(self).__name__}.grad is not implemented; opweave cannot differentiate "
            f"through {self}"
        )

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Like :meth:`grad`, with the node's outputs available too."""
        return self.grad(inputs, output_grads)

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable | None]:
        """Return the Jacobian of each output times ``eval_points``.

        An eval point (and a result) is ``None`` where there is nothing to propagate.
        """
        raise NotImplementedError(f"{type(self).__name__}.R_op is not implemented")

    # ------------------------------------------------------------------ printing

    def __str__(self) -> str:
        return getattr(self, "name", None) or type(self).__name__

    def __repr__(self) -> str:
        return str(self)


def get_test_value(v: Variable) -> Any:
    """PyTensor compatibility: opweave keeps no test values; always raises."""
    raise AttributeError(f"{v} has no test value")
