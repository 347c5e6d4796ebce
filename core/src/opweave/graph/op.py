"""The :class:`Op` contract.

An Op builds :class:`~opweave.graph.basic.Apply` nodes with :meth:`Op.make_node`
and describes their computation. The core defines no computation itself:
:meth:`Op.make_thunk` builds a thunk from the implementation the link layer's resolver
finds (:func:`opweave.link.resolver.implementation_for`): the Op's own
:meth:`~Op.perform` when it defines one, or one a backend or plugin provides.
"""

from __future__ import annotations

import copy
import warnings
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, TypeVar, cast

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Variable
from opweave.graph.c_interface import CLinkerOp
from opweave.graph.trace import add_tag_trace, pause_traces, resume_traces
from opweave.graph.traversal import io_toposort
from opweave.graph.utils import MethodNotDefined

#: A storage cell: a one-element list holding a value.
StorageCell = list
#: A thunk: a zero-argument callable computing one node (or a whole graph).
Thunk = Callable[[], Any]

# PyTensor's names for the storage, compute-map and thunk types of the Op contract.
#: A storage cell: a one-element list holding a value (or ``None``).
StorageCellType = list[Any | None]
#: Maps each variable to its storage cell.
StorageMapType = dict[Variable, StorageCellType]
#: Maps each variable to a one-element list: whether it has been computed.
ComputeMapType = dict[Variable, list[bool]]
#: The storage cells of a node's inputs.
InputStorageType = list[StorageCellType]
#: The storage cells of a node's outputs.
OutputStorageType = list[StorageCellType]
#: The signature of :meth:`Op.perform`.
PerformMethodType = Callable[[Apply, list[Any], OutputStorageType], None]
#: A thunk that takes no argument.
BasicThunkType = Callable[[], None]
#: A callable computing a node from a perform method, the storage and compute maps.
ThunkCallableType = Callable[[PerformMethodType, StorageMapType, ComputeMapType, Apply], None]
#: The type variable of :class:`ThunkType` (the call signature of a thunk).
C = TypeVar("C", bound=Callable[..., Any])


class ThunkType(Protocol[C]):
    """What a thunk made by :meth:`Op.make_thunk` carries (PyTensor's name): its input
    and output storage cells, whether it is lazy, its call and the perform it runs."""

    inputs: list[list[list[Any] | None]]
    outputs: list[list[list[Any] | None]]
    lazy: bool
    __call__: C
    perform: PerformMethodType


def is_thunk_type(thunk: ThunkCallableType) -> ThunkType[Any]:
    """Return ``thunk``, typed as a :class:`ThunkType` (a cast for type checkers; nothing
    is checked at run time)."""
    return cast(ThunkType[Any], thunk)


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
    #: The input and output Types of an Op whose :meth:`make_node` is the default one
    #: (PyTensor's attributes); ``None`` for Ops that define ``make_node``.
    itypes: Sequence[Any] | None = None
    otypes: Sequence[Any] | None = None

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
        """Check ``inputs``, make the outputs and return ``Apply(self, inputs, outputs)``.

        The default serves Ops that set :attr:`itypes` and :attr:`otypes` (PyTensor's
        contract): each input must be a Variable whose Type the matching entry of
        ``itypes`` accepts, and the outputs are fresh Variables of ``otypes``.

        Raises
        ------
        NotImplementedError
            When the Op sets neither ``make_node`` nor ``itypes``/``otypes``.
        ValueError
            When the number of inputs differs from ``len(itypes)``.
        TypeError
            When an input is not a Variable of the expected Type.
        """
        if self.itypes is None or self.otypes is None:
            raise NotImplementedError(
                f"{type(self).__name__}.make_node is not defined: define make_node, or set "
                "itypes and otypes"
            )
        if len(inputs) != len(self.itypes):
            raise ValueError(f"{self} expects {len(self.itypes)} inputs, got {len(inputs)}")
        for i, (var, expected) in enumerate(zip(inputs, self.itypes, strict=True)):
            if not isinstance(var, Variable) or not expected.is_super(var.type):
                got = var.type if isinstance(var, Variable) else type(var).__name__
                raise TypeError(f"input {i} of {self} must be a Variable of {expected}, got {got}")
        return Apply(self, list(inputs), [otype() for otype in self.otypes])

    def __call__(self, *inputs: Any, **kwargs: Any) -> Variable | list[Variable]:
        """Build a node and return its outputs.

        Returns ``node.outputs[self.default_output]`` if ``default_output`` is set,
        the only output if there is one, otherwise the list of outputs. Keyword arguments
        go to :meth:`make_node`, except ``return_list`` (always return the list) and
        ``name``: the name of the output (of the default output; with several outputs
        and no default, output ``i`` is named ``f"{name}_{i}"``). When the flag
        ``compute_test_value`` is not ``off``, the node's test values are computed
        (:func:`compute_test_value`).
        """
        return_list = kwargs.pop("return_list", False)
        name = kwargs.pop("name", None)
        paused = pause_traces()  # the outputs' Types record none: the node's outputs get one below
        try:
            node = self.make_node(*inputs, **kwargs)
        finally:
            resume_traces(paused)
        add_tag_trace(node.outputs)
        if name is not None:
            _name_outputs(node, name, self.default_output)
        if config.compute_test_value != "off":
            compute_test_value(node)
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

    #: The function the default :meth:`make_thunk` calls, ``fn(op, node, storage_map,
    #: compute_map, no_recycling, impl) -> thunk``. The link layer, above this one, installs
    #: it when it is imported (:func:`opweave.link.thunks.build_thunk`), so that the graph
    #: layer calls the resolver without importing it.
    thunk_builder: ClassVar[Callable[..., Thunk] | None] = None

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

        The default builds it from the implementation the resolver finds
        (:func:`opweave.link.thunks.build_thunk`, which the link layer passes down as
        :attr:`thunk_builder` when it is imported), as the linkers do for Ops that do not
        override this method; overriding it is PyTensor's way for an Op to build its own.

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
        """
        build = Op.thunk_builder
        if build is None:
            raise NotImplementedError(
                f"{type(self).__name__}.make_thunk: no thunk builder is installed "
                "(opweave.link.thunks installs it when opweave is imported)"
            )
        return build(self, node, storage_map, compute_map, no_recycling, impl)

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


def _name_outputs(node: Apply, name: str, default_output: int | None) -> None:
    """Name the outputs of a node made by ``op(..., name=name)``."""
    if len(node.outputs) == 1:
        node.outputs[0].name = name
    elif default_output is not None:
        node.outputs[default_output].name = name
    else:
        for i, out in enumerate(node.outputs):
            out.name = f"{name}_{i}"


def get_test_value(v: Variable) -> Any:
    """PyTensor compatibility: opweave keeps no test values; always raises."""
    raise AttributeError(f"{v} has no test value")


class _InnerGraphMeta(ABCMeta):
    """Makes ``isinstance(op, HasInnerGraph)`` true for every Op holding an inner graph,
    whether or not its class derives from :class:`HasInnerGraph`."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if super().__instancecheck__(instance):
            return True
        return (
            cls is HasInnerGraph
            and isinstance(instance, Op)
            and hasattr(instance, "inner_inputs")
            and hasattr(instance, "inner_outputs")
        )


class HasInnerGraph(metaclass=_InnerGraphMeta):
    """The interface of an Op that holds an inner graph (PyTensor's name).

    ``isinstance(op, HasInnerGraph)`` is true for any :class:`Op` with ``inner_inputs``
    and ``inner_outputs`` (opweave's ``OpFromGraph``, ``Scan`` and scalar ``Composite``
    included); a new Op class may also derive from it, and must then define the members
    below.
    """

    @property
    @abstractmethod
    def fn(self) -> Any:
        """The compiled inner function."""

    @property
    @abstractmethod
    def inner_inputs(self) -> list[Variable]:
        """The inner graph's inputs."""

    @property
    @abstractmethod
    def inner_outputs(self) -> list[Variable]:
        """The inner graph's outputs."""

    @abstractmethod
    def clone(self) -> Op:
        """A copy of the Op with a copy of its inner graph."""


def _test_value(var: Variable) -> tuple[bool, Any]:
    """``(True, value)`` for a variable with a test value (a constant's data, a shared
    variable's value, or ``tag.test_value``), else ``(False, None)``."""
    if hasattr(var, "data"):
        return True, var.data
    get_value = getattr(var, "get_value", None)
    if callable(get_value):
        return True, get_value(borrow=True)
    tag = getattr(var, "tag", None)
    if tag is not None and hasattr(tag, "test_value"):
        return True, tag.test_value
    return False, None


def compute_test_value(node: Apply) -> None:
    """Compute ``node``'s outputs from its inputs' test values into ``out.tag.test_value``.

    A test value is a constant's data, a shared variable's value or ``tag.test_value``.
    What happens when an input has none follows the flag ``config.compute_test_value``:
    ``ignore`` returns, ``warn`` warns and returns, ``raise`` raises, ``pdb`` enters the
    debugger. PyTensor's name and contract.

    Parameters
    ----------
    node
        The node to compute (with the Python implementation of its Op).

    Raises
    ------
    ValueError
        When an input has no test value and the flag is ``raise`` (or ``off``: the flag
        says test values are not in use).
    """
    storage_map: dict[Variable, list[Any]] = {}
    compute_map: dict[Variable, list[int]] = {}
    for i, inp in enumerate(node.inputs):
        found, value = _test_value(inp)
        if not found:
            mode = config.compute_test_value
            message = f"cannot compute test value: input {i} ({inp}) of {node} has none"
            if mode == "ignore":
                return
            if mode == "warn":
                warnings.warn(message, stacklevel=2)
                return
            if mode == "pdb":
                import pdb

                pdb.set_trace()
                return
            raise ValueError(f"{message} (config.compute_test_value={mode!r})")
        destroyed = any(i in ins for ins in node.op.destroy_map.values())
        storage_map[inp] = [copy.copy(value) if destroyed else value]
        compute_map[inp] = [1]
    for out in node.outputs:
        storage_map[out] = [None]
        compute_map[out] = [0]
    thunk = node.op.make_thunk(node, storage_map, compute_map, no_recycling=[], impl="py")
    thunk()
    for out in node.outputs:
        out.tag.test_value = storage_map[out][0]


def io_connection_pattern(
    inputs: Sequence[Variable], outputs: Sequence[Variable]
) -> list[list[bool]]:
    """Which of ``inputs`` each of ``outputs`` truly depends on (PyTensor's name and
    contract).

    A dependency counts only through the connections each node's ``connection_pattern``
    declares (all of them for an Op that declares none), as gradients follow them.

    Parameters
    ----------
    inputs, outputs
        The graph's boundary.

    Returns
    -------
    list of list of bool
        ``pattern[i][j]``: output ``j`` depends on input ``i`` (one row per input).

    Raises
    ------
    ValueError
        When an Op's ``connection_pattern(node)`` is not one list of
        ``len(node.outputs)`` booleans per input.
    """
    reached: dict[Variable, set[int]] = {}
    for i, inp in enumerate(inputs):
        reached.setdefault(inp, set()).add(i)
    for node in io_toposort(inputs, outputs):
        pattern = connection_pattern_of(node)
        for j, out in enumerate(node.outputs):
            found: set[int] = set()
            for k, inp in enumerate(node.inputs):
                if pattern[k][j]:
                    found |= reached.get(inp, set())
            reached[out] = found
    return [[i in reached.get(out, ()) for out in outputs] for i in range(len(inputs))]


def connection_pattern_of(node: Apply) -> list[list[bool]]:
    """Return ``node.op.connection_pattern(node)``, checked, or all-``True`` if undefined.

    ``pattern[i][j]`` is true when the elements of input ``i`` affect the elements
    of output ``j``.

    Raises
    ------
    ValueError
        If the Op's pattern does not have one list of ``len(node.outputs)`` booleans
        per input.
    """
    nin, nout = len(node.inputs), len(node.outputs)
    method = getattr(node.op, "connection_pattern", None)
    if method is None:
        return [[True] * nout for _ in range(nin)]
    pattern = method(node)
    ok = isinstance(pattern, Sequence) and len(pattern) == nin
    ok = ok and all(isinstance(row, Sequence) and len(row) == nout for row in pattern)
    if not ok:
        raise ValueError(
            f"{node.op}.connection_pattern(node) must return one list of {nout} booleans per "
            f"input ({nin} lists), got {pattern!r}"
        )
    return [[bool(b) for b in row] for row in pattern]
