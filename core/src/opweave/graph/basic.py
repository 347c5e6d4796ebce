"""Graph objects (:class:`Variable`, :class:`Constant`, :class:`Apply`) and cloning.

A graph is a bipartite DAG: :class:`Apply` nodes take :class:`Variable` inputs and own
:class:`Variable` outputs. A variable whose ``owner`` is ``None`` is a graph root: a free
input, a :class:`Constant`, a :class:`NominalVariable`, or a shared variable.
:class:`FrozenApply` is the immutable, interned node of frozen graphs
(:class:`~opweave.graph.fg.FrozenFunctionGraph`).

Users import the graph walks (``ancestors``, ``graph_inputs``, ``io_toposort`` ...) from
:mod:`opweave.graph.traversal` and ``clone_replace`` from :mod:`opweave.graph.replace`, as in
PyTensor; their old names here still work and give the very same functions. The walks that
follow only ``owner`` and ``inputs`` are defined in :mod:`opweave.graph.walks`, below this
module, which uses them; ``explicit_graph_inputs``, ``apply_depends_on``,
``variable_depends_on`` and ``clone_replace``, which tell the classes apart, are defined
here. This module imports nothing that builds on it: ``Variable.eval`` and ``Node.dprint``,
which PyTensor offers on every graph object, are given by :mod:`opweave._variable_eval`
(which compiles with ``opweave.function``) and the printer (:mod:`opweave.printing`) when
they are imported, which ``import opweave`` does.
"""

from __future__ import annotations

import copy as _copy
import weakref
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from itertools import count
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, cast

import numpy as np

from opweave.graph import walks
from opweave.graph.walks import (
    ancestors,
    apply_ancestors,
    graph_inputs,
    io_toposort,
)

if TYPE_CHECKING:
    # Type checkers read PEP 696 defaults from typing_extensions' TypeVar; at run time the
    # stand-in below builds a plain ``typing.TypeVar`` (no dependency, same objects).
    from typing_extensions import TypeVar

    from opweave.graph.op import Op
    from opweave.graph.type import Type

    # What the module's __getattr__ forwards, for type checkers.
    from opweave.graph.walks import (  # noqa: F401
        applys_between,
        general_toposort,
        orphans_between,
        toposort,
        toposort_with_orderings,
        truncated_graph_inputs,
        variable_ancestors,
        vars_between,
        walk,
        walk_toposort,
    )
else:
    from typing import TypeVar as _TypeVar

    def TypeVar(name: str, *constraints: Any, default: Any = None, **kwargs: Any) -> Any:
        """``typing.TypeVar(name, ...)``; ``default`` is for type checkers only."""
        return _TypeVar(name, *constraints, **kwargs)


#: The Op of an :class:`Apply` node (``Apply[Elemwise]``); a bare ``Apply`` has ``Op``.
OpType = TypeVar("OpType", bound="Op", default="Op", covariant=True)
#: The owner of a :class:`Variable`: ``None`` for roots, an Apply node for computed ones.
#: A bare ``Variable`` may be either (as in PyTensor, the outputs of a :class:`FrozenApply`
#: are typed as ordinary variables too: they offer the same reading interface).
OptionalApplyType = TypeVar(
    "OptionalApplyType",
    bound="AbstractApply | None",
    default="Apply | None",
    covariant=True,
)
#: The :class:`~opweave.graph.type.Type` of a :class:`Variable` (``Variable[TensorType,
#: None]``); a bare ``Variable`` has ``Type``. (The defaults exist for type checkers only:
#: a subscript evaluated at run time, as in a base class, names every parameter.)
_TypeType = TypeVar("_TypeType", bound="Type", default="Type", covariant=True)

#: The graph walks of :mod:`opweave.graph.walks` (PyTensor's ``pytensor.graph.traversal``)
#: that this module's ``__getattr__`` gives under their old names here; ``ancestors``,
#: ``io_toposort``, ``graph_inputs`` and ``apply_ancestors`` are imported, and
#: ``explicit_graph_inputs``, ``apply_depends_on``, ``variable_depends_on`` and
#: ``clone_replace`` are defined here.
_MOVED_TO_WALKS = frozenset(walks.__all__)


def __getattr__(name: str) -> Any:
    """Give the graph walks that moved to :mod:`opweave.graph.walks` under their old names."""
    if name in _MOVED_TO_WALKS:
        return getattr(walks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Scratchpad:
    """A free-form attribute bag (``var.tag``) for annotations on graph objects."""

    if TYPE_CHECKING:
        # Any attribute may be set and read: type checkers see each one as ``Any``.
        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"scratchpad{{{items}}}"

    def __copy__(self) -> Scratchpad:
        new = Scratchpad()
        new.__dict__.update(self.__dict__)
        return new


def _copy_tag(tag: Any) -> Any:
    """A shallow copy of a node's or variable's ``tag`` (fast for a :class:`Scratchpad`)."""
    return tag.__copy__() if type(tag) is Scratchpad else _copy.copy(tag)


# --------------------------------------------------------------------- pickling

#: The ids of the Apply nodes whose saving (by ``pickle`` or ``copy.deepcopy``) is under
#: way, leaves first; they and their outputs are saved plainly while it lasts.
_ancestors_being_saved: ContextVar[frozenset[int]] = ContextVar(
    "opweave_ancestors_being_saved", default=frozenset()
)


#: True while a payload that lists a graph's nodes in topological order is pickled
#: (:func:`nodes_saved_in_order`): each node then refers only to saved ones, and the
#: ancestors walk of each would make the whole save quadratic.
_nodes_saved_in_order: ContextVar[bool] = ContextVar("opweave_nodes_saved_in_order", default=False)


@contextmanager
def nodes_saved_in_order() -> Iterator[None]:
    """Within it, ``pickle`` and ``copy.deepcopy`` save Apply nodes and Variables plainly,
    for a payload that lists its graph's nodes leaves first (as :func:`io_toposort` gives
    them): its recursion depth is bounded without the ancestors walk (which would walk
    each node's whole ancestry again, quadratic in the graph)."""
    token = _nodes_saved_in_order.set(True)
    try:
        yield
    finally:
        _nodes_saved_in_order.reset(token)


def _nothing() -> None:
    """What a marker of :func:`_ancestors_first` unpickles to."""
    return None


class _AncestorsStart:
    """First item of an ancestors list: saving it marks the nodes that follow as under way."""

    def __init__(self, ids: frozenset[int]) -> None:
        self.ids = ids
        self.token: Token[frozenset[int]] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        self.token = _ancestors_being_saved.set(_ancestors_being_saved.get() | self.ids)
        return (_nothing, ())


class _AncestorsEnd:
    """Last item of an ancestors list: saving it ends what its start marked."""

    def __init__(self, start: _AncestorsStart) -> None:
        self.start = start

    def __reduce__(self) -> tuple[Any, ...]:
        if self.start.token is not None:
            _ancestors_being_saved.reset(self.start.token)
            self.start.token = None
        return (_nothing, ())


def _ancestors_first(inputs: Iterable[Variable]) -> list[Any]:
    """The Apply nodes ``inputs`` depend on, each after those it depends on, between markers.

    ``pickle`` and ``copy.deepcopy`` save a list's items in order, so the nodes of a graph
    saved through this list are each saved when everything they refer to already is: the
    depth of the recursion no longer grows with the depth of the graph. Empty when
    ``inputs`` are all roots. The walk is iterative.
    """
    order: list[AbstractApply] = []
    expanded: set[int] = set()
    stack: list[tuple[AbstractApply, bool]] = [
        (v.owner, False) for v in reversed(list(inputs)) if v.owner is not None
    ]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in expanded:
            continue
        expanded.add(id(node))
        stack.append((node, True))
        for inp in reversed(node.inputs):
            owner = inp.owner
            if owner is not None and id(owner) not in expanded:
                stack.append((owner, False))
    if not order:
        return []
    start = _AncestorsStart(frozenset(id(node) for node in order))
    return [start, *order, _AncestorsEnd(start)]


def _after_ancestors(cls: Any, ancestors: list[Any]) -> Any:
    """A new, empty ``cls`` object, made once ``ancestors`` are loaded (see
    :func:`_ancestors_first`); its state is set afterwards."""
    return cls.__new__(cls)


#: The type of what :func:`_plain_copy` copies.
_Copied = TypeVar("_Copied")


def _plain_copy(obj: _Copied) -> _Copied:
    """What ``copy.copy(obj)`` gives through the plain reduce value (no ancestors walk),
    or through the object's own ``__reduce_ex__`` (a frozen node's output gives itself)."""
    own = vars(obj).get("__reduce_ex__")
    value: Any = own(4) if own is not None else object.__reduce_ex__(obj, 4)
    parts: list[Any] = [*value, None]
    func, args, state = parts[0], parts[1], parts[2]
    new: Any = func(*args)
    if state is None:
        return cast(_Copied, new)
    if hasattr(new, "__setstate__"):
        new.__setstate__(state)
        return cast(_Copied, new)
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        new.__dict__.update(state)
    for name, value in (slots or {}).items():
        setattr(new, name, value)
    return cast(_Copied, new)


def _reduce_after_ancestors(obj: Any, inputs: Sequence[Variable], protocol: int) -> Any:
    """``obj``'s reduce value, saving the nodes ``inputs`` depend on first (leaves first),
    or the plain one where there are none or they are being saved already."""
    own_reduce = getattr(type(obj), "__reduce__", None)
    if own_reduce is not object.__reduce__ or _nodes_saved_in_order.get():
        return object.__reduce_ex__(obj, protocol)
    ancestors = _ancestors_first(inputs)
    if not ancestors:
        return object.__reduce_ex__(obj, protocol)
    return (_after_ancestors, (type(obj), ancestors), obj.__getstate__())


class Node:
    """Common base of Apply nodes and :class:`Variable`."""

    def get_parents(self) -> list[Node]:
        """Return the nodes this node depends on directly."""
        raise NotImplementedError

    if TYPE_CHECKING:
        # Given by opweave.printing when it is imported (``import opweave`` does): the
        # printer builds on graphs.
        def dprint(self, **kwargs: Any) -> Any:
            """:func:`~opweave.printing.debugprint` of this node; ``kwargs`` go to it."""


class AbstractApply(Node, Generic[OpType]):
    """What every Apply node offers: an ``op`` applied to ``inputs``, giving ``outputs``.

    :class:`Apply` is the ordinary, editable node; :class:`FrozenApply` the immutable one
    of frozen graphs. Both are generic in their Op for type checkers: ``Apply[Elemwise]``.
    """

    op: OpType
    inputs: Sequence[Variable]
    outputs: Sequence[Variable]
    tag: Scratchpad

    @property
    def out(self) -> Variable:
        """The default output (``op.default_output``, or the only output)."""
        do: int | None = getattr(self.op, "default_output", None)
        if do is not None:
            return self.outputs[do]
        if len(self.outputs) == 1:
            return self.outputs[0]
        raise ValueError(f"{self.op} has {len(self.outputs)} outputs and no default_output")

    @property
    def nin(self) -> int:
        """Number of inputs."""
        return len(self.inputs)

    @property
    def nout(self) -> int:
        """Number of outputs."""
        return len(self.outputs)

    def get_parents(self) -> list[Node]:
        """Return the input variables."""
        return list(self.inputs)

    def default_output(self) -> Variable:
        """Return the default output variable (see :attr:`out`)."""
        return self.out

    def __str__(self) -> str:
        ins = ", ".join(str(i) for i in self.inputs)
        return f"{self.op}({ins})"

    def __repr__(self) -> str:
        return str(self)


class Apply(AbstractApply[OpType]):
    """The application of an :class:`~opweave.graph.op.Op` to input variables.

    Parameters
    ----------
    op
        The operation applied.
    inputs
        The input variables, in the order the Op expects.
    outputs
        Fresh output variables (they must not have an owner yet); each gets
        ``owner = self`` and its position as ``index``.
    """

    def __init__(self, op: OpType, inputs: Sequence[Variable], outputs: Sequence[Variable]) -> None:
        self.op = op
        self.inputs: list[Variable] = []
        self.tag = Scratchpad()
        for i, inp in enumerate(inputs):
            if not isinstance(inp, Variable):
                raise TypeError(
                    f"Apply input {i} of {op} must be a Variable, got {type(inp).__name__}: {inp!r}"
                )
            self.inputs.append(inp)
        self.outputs: list[Variable] = []
        for i, out in enumerate(outputs):
            if not isinstance(out, Variable):
                raise TypeError(
                    f"Apply output {i} of {op} must be a Variable, got {type(out).__name__}"
                )
            if out.owner is None:
                out.owner = self
                out.index = i
            elif out.owner is not self or out.index != i:
                raise ValueError(f"output {i} of {op} already belongs to another Apply node")
            self.outputs.append(out)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle (and deep-copy) the node after the nodes it depends on, leaves first, so
        that a deep graph does not take one level of recursion per node."""
        if id(self) in _ancestors_being_saved.get():
            return object.__reduce_ex__(self, protocol)
        return _reduce_after_ancestors(self, self.inputs, protocol)

    def __copy__(self) -> Self:
        """A shallow copy (``copy.copy``), as for any object; the graph is not walked."""
        return _plain_copy(self)

    def clone(self, clone_inner_graph: bool = False) -> Apply[OpType]:
        """Return a copy with the same inputs and fresh (cloned) outputs.

        Parameters
        ----------
        clone_inner_graph
            Give the copy a clone of the Op too when it has an inner graph and a
            ``clone()`` method (``Scan``, ``OpFromGraph``), so that the copy shares no
            inner graph with the original.
        """
        if type(self) is Apply:  # the common case, without copy's generic protocol
            new_node = Apply.__new__(Apply)
            new_node.__dict__.update(self.__dict__)
        else:
            new_node = _copy.copy(self)
        if clone_inner_graph and _has_inner_graph(self.op):
            new_node.op = self.op.clone()  # type: ignore[attr-defined]
        new_node.inputs = list(self.inputs)
        new_node.outputs = []
        new_node.tag = _copy_tag(self.tag)
        for i, out in enumerate(self.outputs):
            new_out: Variable = out.clone()
            new_out.owner = new_node
            new_out.index = i
            new_node.outputs.append(new_out)
        return new_node

    def clone_with_new_inputs(
        self, inputs: Sequence[Variable], strict: bool = True, clone_inner_graph: bool = False
    ) -> Apply:
        """Return a node computing the same Op on ``inputs``.

        With ``strict`` each new input whose Type differs is converted to the old input's
        Type (``filter_variable``); when they then all have the old Types the node is a
        copy with the same output Types, and when one is more specific (a known static
        shape) ``op.make_node`` builds the node anew, so its outputs may be more specific
        too. Without ``strict``, ``op.make_node`` builds the node anew. With
        ``clone_inner_graph`` an Op with an inner graph is cloned first (see :meth:`clone`).
        """
        if len(inputs) != len(self.inputs):
            raise ValueError(f"{self.op} expects {len(self.inputs)} inputs, got {len(inputs)}")
        if strict and all(
            new.type == old.type for new, old in zip(inputs, self.inputs, strict=True)
        ):
            new_node = self.clone(clone_inner_graph)
            new_node.inputs = list(inputs)
            return new_node
        if strict:
            inputs = [
                new if new.type == old.type else old.type.filter_variable(new)
                for new, old in zip(inputs, self.inputs, strict=True)
            ]
            if all(new.type == old.type for new, old in zip(inputs, self.inputs, strict=True)):
                new_node = self.clone(clone_inner_graph)
                new_node.inputs = list(inputs)
                return new_node
        op: Any = self.op
        if clone_inner_graph and _has_inner_graph(op):
            op = op.clone()
        return op.make_node(*inputs)  # type: ignore[no-any-return]


def _has_inner_graph(op: Any) -> bool:
    """Whether ``op`` holds an inner graph it can clone (``HasInnerGraph``'s members, which
    ``Scan`` and ``OpFromGraph`` have)."""
    return hasattr(op, "inner_outputs") and callable(getattr(op, "clone", None))


class Variable(Node, Generic[_TypeType, OptionalApplyType]):
    """A typed value slot in a graph.

    For type checkers it is generic in its Type and its owner, as in PyTensor:
    ``Variable[TensorType, None]`` is a root tensor variable, ``Variable[TensorType,
    Apply]`` a computed one; a bare ``Variable`` has ``Type`` and ``Apply | None``.

    Parameters
    ----------
    type
        The :class:`~opweave.graph.type.Type` constraining the values.
    owner
        The :class:`Apply` node computing this variable, or ``None`` for a root.
    index
        The position of this variable in ``owner.outputs``.
    name
        A name used when printing.
    """

    #: Numbers the variables' ``auto_name`` (an :func:`itertools.count`, as in PyTensor:
    #: assigning a new ``count(n)`` restarts the numbering at ``n``).
    __count__: ClassVar[Iterator[int]] = count()
    type: _TypeType
    owner: OptionalApplyType

    def __init__(
        self,
        type: _TypeType,
        owner: AbstractApply | None = None,
        index: int | None = None,
        name: str | None = None,
    ) -> None:
        if owner is not None and not isinstance(owner, AbstractApply):
            raise TypeError(f"owner must be an Apply or None, got {owner!r}")
        if index is not None and not isinstance(index, int):
            raise TypeError(f"index must be an int or None, got {index!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str or None, got {name!r}")
        self.type = type
        # The class parameter says which owners the variable has over its life: an
        # output usually gets its owner from its Apply after construction.
        self.owner = owner  # type: ignore[assignment]
        self.index = index
        self.name = name
        self.tag = Scratchpad()
        self.auto_name = f"auto_{next(Variable.__count__)}"

    def get_parents(self) -> list[Node]:
        """Return ``[owner]`` or ``[]`` for a root."""
        return [self.owner] if self.owner is not None else []

    def clone(self, **kwargs: Any) -> Self:
        """Return a new, ownerless Variable of the same type, name and tag.

        Keyword arguments override constructor arguments (``name=...``).
        """
        name = kwargs.pop("name", self.name)
        cp = self.__class__(self.type, None, None, name)
        cp.tag = _copy_tag(self.tag)
        return cp

    if TYPE_CHECKING:
        # Given by opweave._variable_eval when it is imported (``import opweave`` does):
        # the compiler builds on graphs.
        def eval(
            self, inputs_to_values: dict[Variable | str, Any] | None = None, **kwargs: Any
        ) -> Any:
            """Compile and evaluate this variable (see :mod:`opweave._variable_eval`)."""

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = self.owner.op
            if self.index == getattr(op, "default_output", None) or len(self.owner.outputs) == 1:
                return f"{op}.out"
            return f"{op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self) -> str:
        return str(self)

    def __getstate__(self) -> dict[str, Any]:
        # Neither the compiled ``eval`` cache nor the process-wide ``auto_name`` travels:
        # an unpickled variable is named afresh in the process that loads it (so two
        # pickles of one graph made in different processes are the same bytes).
        state = self.__dict__.copy()
        state.pop("_fn_cache", None)
        state.pop("auto_name", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.auto_name = f"auto_{next(Variable.__count__)}"

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle (and deep-copy) a computed variable after the nodes it depends on, leaves
        first, so that a deep graph does not take one level of recursion per node."""
        owner = self.owner
        if owner is None or id(owner) in _ancestors_being_saved.get():
            return object.__reduce_ex__(self, protocol)
        return _reduce_after_ancestors(self, owner.inputs, protocol)

    def __copy__(self) -> Self:
        """A shallow copy (``copy.copy``), as for any object; the graph is not walked."""
        return _plain_copy(self)


class Constant(Variable[_TypeType, None]):
    """A root variable with a fixed value.

    Parameters
    ----------
    type
        The constant's type; ``data`` is passed through ``type.filter``.
    data
        The value.
    name
        Optional name.
    """

    def __init__(self, type: _TypeType, data: Any, name: str | None = None) -> None:
        super().__init__(type, None, None, name)
        self._data = type.filter(data)

    @property
    def data(self) -> Any:
        """The constant's value (read-only)."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        raise AttributeError("a Constant's data is read-only; make a new Constant instead")

    @property
    def value(self) -> Any:
        """Read-only access to the data."""
        return self._data

    @property
    def owner(self) -> None:
        """Always ``None``: constants are roots."""
        return None

    @owner.setter
    def owner(self, value: AbstractApply | None) -> None:
        if value is not None:
            raise ValueError("a Constant cannot have an owner")

    def signature(self) -> tuple[Any, ...]:
        """A hashable key used to merge equal constants."""
        data = self._data
        try:
            hash(data)
            key: Any = data
        except TypeError:
            tobytes = getattr(data, "tobytes", None)
            key = (
                (getattr(data, "dtype", None), getattr(data, "shape", None), tobytes())
                if tobytes
                else id(data)
            )
        return (self.type, type(data).__name__, key)

    def equals(self, other: object) -> bool:
        """True if ``other`` is a Constant of the same type with an equal value."""
        if not isinstance(other, Constant) or other.type != self.type:
            return False
        return bool(self.type.values_eq(self._data, other._data))

    def clone(self, **kwargs: Any) -> Self:
        """Return a new Constant sharing (not copying) the data."""
        cp = self.__class__.__new__(self.__class__)
        Variable.__init__(cp, self.type, None, None, kwargs.get("name", self.name))
        cp._data = self._data
        cp.tag = _copy.copy(self.tag)
        return cp

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        text = str(self._data)
        return text if len(text) <= 20 else text[:10] + "..." + text[-5:]


# --------------------------------------------------------------------- frozen graphs


class NominalVariable(Variable[_TypeType, None]):
    """A root variable that stands for "input number ``id`` of Type ``typ``".

    Nominal variables are interned: ``NominalVariable(0, t)`` is the same object every
    time (and after unpickling), so two graphs over nominal inputs can be compared by
    identity. Frozen graphs (:meth:`~opweave.graph.fg.FunctionGraph.freeze`) root on them.

    Each instance belongs to a subclass that also derives from ``typ.variable_type``, so a
    nominal tensor input has the tensor methods; it prints as ``i<id>`` (``i0``, ``i1``).

    Parameters
    ----------
    id
        Any hashable identifier (frozen graphs use the input's position).
    typ
        The variable's Type.
    name
        An optional name (it does not take part in the identity).
    """

    __instances__: ClassVar[dict[tuple[Type, Hashable], NominalVariable[Any]]] = {}
    _classes: ClassVar[dict[type, type]] = {}
    id: Hashable

    def __new__(
        cls, id: Hashable, typ: _TypeType, name: str | None = None
    ) -> NominalVariable[_TypeType]:
        key = (typ, id)
        found = cls.__instances__.get(key)
        if found is not None:
            return found
        var_type = typ.variable_type
        sub = cls._classes.get(var_type)
        if sub is None:
            sub = type(f"Nominal{var_type.__name__}", (cls, var_type), {})
            cls._classes[var_type] = sub
        var: NominalVariable[_TypeType] = object.__new__(sub)
        var.id = id
        Variable.__init__(var, typ, None, None, name)
        cls.__instances__[key] = var
        return var

    def __init__(self, id: Hashable, typ: _TypeType, name: str | None = None) -> None:
        # Set up once by __new__; a later construction may only give a name.
        if name is not None:
            self.name = name

    @property
    def owner(self) -> None:
        """Always ``None``: nominal variables are roots."""
        return None

    @owner.setter
    def owner(self, value: AbstractApply | None) -> None:
        if value is not None:
            raise ValueError(f"the nominal variable {self} cannot be the output of {value}")

    @property
    def index(self) -> None:
        """Always ``None``."""
        return None

    @index.setter
    def index(self, value: int | None) -> None:
        if value is not None:
            raise ValueError(f"the nominal variable {self} cannot be an output")

    def clone(self, **kwargs: Any) -> NominalVariable[_TypeType]:
        """Itself (with another name if ``name=`` is given): a nominal variable is unique."""
        return NominalVariable(self.id, self.type, kwargs.get("name"))

    def signature(self) -> tuple[_TypeType, Hashable]:
        """``(type, id)``: what identifies the variable."""
        return (self.type, self.id)

    def equals(self, other: object) -> bool:
        """True if ``other`` is a nominal variable with the same id and an equal Type."""
        return isinstance(other, NominalVariable) and self.signature() == other.signature()

    def __reduce__(self) -> tuple[Any, ...]:
        return (NominalVariable, (self.id, self.type, self.name))

    def __str__(self) -> str:
        return self.name if self.name is not None else f"i{self.id}"

    def __repr__(self) -> str:
        return f"NominalVariable({self.id!r}, {self.type!r})"


def _frozen_output(node: FrozenApply, index: int) -> Variable:
    """Output ``index`` of ``node`` (how a frozen node's output is pickled)."""
    return node.outputs[index]


class FrozenApply(AbstractApply["Op"]):
    """An immutable, interned Apply node of a frozen graph.

    Building one with the same Op, inputs, output Types and ``topo_idx`` as a live one
    returns that one, so equal computations over the same nominal inputs are the same
    objects. Constant inputs count by value (their ``signature()``), other inputs by
    identity (they are nominal variables or outputs of other frozen nodes, interned
    too). Its ``inputs`` and ``outputs`` are tuples; it has no ``clone``: rebuild an
    editable graph with :meth:`~opweave.graph.fg.FrozenFunctionGraph.unfreeze` or
    :meth:`~opweave.graph.fg.FrozenFunctionGraph.bind`.

    Parameters
    ----------
    op
        The Op.
    inputs
        The input variables.
    output_types
        The Types of the outputs, which the node creates.
    topo_idx
        The node's position in the order a frozen graph bakes in, or ``-1`` when equal
        nodes anywhere may be one (see :meth:`FrozenFunctionGraph.from_io
        <opweave.graph.fg.FrozenFunctionGraph.from_io>`).
    """

    _cache: ClassVar[weakref.WeakValueDictionary[Any, FrozenApply]] = weakref.WeakValueDictionary()
    inputs: tuple[Variable, ...]
    outputs: tuple[Variable, ...]
    topo_idx: int

    def __new__(
        cls,
        op: Op,
        inputs: Sequence[Variable],
        output_types: Sequence[Type],
        topo_idx: int = -1,
    ) -> FrozenApply:
        inputs = tuple(inputs)
        for i, inp in enumerate(inputs):
            if not isinstance(inp, Variable):
                raise TypeError(
                    f"FrozenApply input {i} of {op} must be a Variable, got "
                    f"{type(inp).__name__}: {inp!r}"
                )
        output_types = tuple(output_types)
        key = (
            op,
            tuple(
                ("constant", i.signature()) if isinstance(i, Constant) else id(i) for i in inputs
            ),
            output_types,
            topo_idx,
        )
        found = cls._cache.get(key)
        if found is not None:
            return found
        node = object.__new__(cls)
        node.op = op
        node.inputs = inputs
        node.topo_idx = topo_idx
        node.tag = Scratchpad()
        node.outputs = tuple(t.variable_type(t, node, i) for i, t in enumerate(output_types))
        for i, out in enumerate(node.outputs):
            # Pickled as "output i of that node", so unpickling finds the interned one.
            out.__reduce_ex__ = lambda protocol, n=node, i=i: (_frozen_output, (n, i))  # type: ignore[method-assign,misc]
        cls._cache[key] = node
        return node

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            FrozenApply,
            (self.op, self.inputs, tuple(o.type for o in self.outputs), self.topo_idx),
        )


# --------------------------------------------------------------------- cloning


def clone_get_equiv(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool = True,
    memo: dict[Node, Any] | None = None,
    strict: bool = True,
    clone_inner_graphs: bool = False,
) -> dict[Node, Any]:
    """Clone the graph between ``inputs`` and ``outputs``; return the old-to-new map.

    Parameters
    ----------
    copy_inputs
        Clone the input variables too (otherwise they map to themselves).
    copy_orphans
        Clone the roots that are not in ``inputs``. Constants are never cloned (they
        map to themselves).
    memo
        A pre-filled map whose entries are respected; a node all of whose outputs it
        maps is not cloned.
    strict
        Passed to :meth:`Apply.clone_with_new_inputs`: with ``False`` a node whose new
        inputs have other Types is rebuilt by its Op's ``make_node`` (its outputs may
        change Type too).
    clone_inner_graphs
        Clone the Ops that have inner graphs (``Scan``, ``OpFromGraph``) too, so that the
        copy shares no inner graph with the original.
    """
    equiv: dict[Node, Any] = memo if memo is not None else {}
    for inp in inputs:
        if inp not in equiv:
            equiv[inp] = inp.clone() if copy_inputs and not isinstance(inp, Constant) else inp
    for node in io_toposort(inputs, outputs):
        if node in equiv or all(out in equiv for out in node.outputs):
            continue
        for inp in node.inputs:
            if inp not in equiv:
                copy_it = copy_orphans and not isinstance(inp, Constant)
                equiv[inp] = inp.clone() if copy_it else inp
        new_inputs = [equiv[i] for i in node.inputs]
        new_node = node.clone_with_new_inputs(
            new_inputs, strict=strict, clone_inner_graph=clone_inner_graphs
        )
        equiv[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs, strict=True):
            equiv.setdefault(old, new)
    for out in outputs:
        if out not in equiv:
            equiv[out] = out.clone() if copy_orphans else out
    return equiv


def clone(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool | None = None,
) -> tuple[list[Variable], list[Variable]]:
    """Copy the graph between ``inputs`` and ``outputs``.

    Returns
    -------
    The new inputs and the new outputs.
    """
    if copy_orphans is None:
        copy_orphans = copy_inputs
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


def is_in_ancestors(node: Apply, candidate: Apply) -> bool:
    """True if ``candidate`` is ``node`` or one of its ancestors."""
    for var in ancestors(node.outputs[:1] if node.outputs else node.inputs):
        if var.owner is candidate:
            return True
    return False


# ---------------------------------------------------------------------- graph queries
# ``opweave.graph.traversal`` (PyTensor's module for them) and ``opweave.graph.replace`` give
# these; they are defined here, beside the classes they tell apart, so that this module's old
# names for them need no import of those modules.


def explicit_graph_inputs(
    graph: Variable | Iterable[Variable],
) -> Generator[Variable, None, None]:
    """Yield the roots a compiled function of ``graph`` must take as inputs.

    Those are the roots that carry no value of their own: not constants, and not shared
    variables (recognised, as :func:`opweave.function` does, by their ``container`` and
    ``get_value``).
    """
    graphs = (graph,) if isinstance(graph, Variable) else tuple(graph)
    return (
        var
        for var in graph_inputs(graphs)
        if not isinstance(var, Constant)
        and not (hasattr(var, "container") and hasattr(var, "get_value"))
    )


def apply_depends_on(
    apply: AbstractApply, depends_on: AbstractApply | Iterable[AbstractApply]
) -> bool:
    """True if ``apply`` is one of ``depends_on`` or computes from one of them."""
    targets = (
        frozenset((depends_on,)) if isinstance(depends_on, AbstractApply) else frozenset(depends_on)
    )
    return apply in targets or any(node in targets for node in apply_ancestors(apply.inputs))


def variable_depends_on(variable: Variable, depends_on: Variable | Iterable[Variable]) -> bool:
    """True if ``variable`` is one of ``depends_on`` or computes from one of them."""
    targets = (
        frozenset((depends_on,)) if isinstance(depends_on, Variable) else frozenset(depends_on)
    )
    return any(var in targets for var in ancestors([variable]))


#: What the replacement arguments accept: ``{old: new}`` or ``(old, new)`` pairs.
ReplaceTypes = Mapping[Variable, Variable] | Iterable[tuple[Variable, Variable]]


def _is_replacement_value(new: Any) -> bool:
    """Whether ``new`` is a value that replaces a variable as a constant: a number (not a
    ``bool``) or a NumPy array or scalar."""
    if isinstance(new, bool):
        return False
    return isinstance(new, int | float | complex | np.ndarray | np.generic)


def _format_replace(
    replace: ReplaceTypes | None, what: str, *, values: bool = False
) -> dict[Variable, Variable]:
    """``replace`` as a dict, each new variable converted to its old variable's Type.

    With ``values``, a replacement may also be a number or a NumPy array, which the caller
    converts to a constant of the old variable's Type (PyTensor's ``graph_replace`` and
    ``clone_replace`` accept them; PyMC's ``sample_node`` passes arrays).

    Raises
    ------
    TypeError
        For something that is not a mapping or pairs of Variables, or a new variable
        whose Type cannot stand for the old one's.
    """
    if replace is None:
        return {}
    if isinstance(replace, Mapping):
        items = list(replace.items())
    elif isinstance(replace, Iterable) and not isinstance(replace, str | Variable):
        items = list(replace)
    else:
        raise TypeError(
            f"{what}: replace must be a dict {{old: new}} or a list of (old, new) pairs, "
            f"got {type(replace).__name__}"
        )
    result: dict[Variable, Variable] = {}
    for pair in items:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"{what}: replace must hold (old, new) pairs, got {pair!r}")
        old, new = pair
        is_value = values and _is_replacement_value(new)
        if not isinstance(old, Variable) or not (is_value or isinstance(new, Variable)):
            raise TypeError(
                f"{what}: replacements must map Variables to Variables, got "
                f"{type(old).__name__} -> {type(new).__name__}"
            )
        result[old] = new
    return result


def clone_replace(
    output: Variable | Sequence[Variable],
    replace: ReplaceTypes | None = None,
    *,
    rebuild_strict: bool = True,
) -> Any:
    """Clone ``output``'s graph with the variables of ``replace`` substituted.

    Parameters
    ----------
    output
        One variable or a list of variables.
    replace
        ``{old: new}`` (or pairs).
    rebuild_strict
        With ``True`` (the default) each ``new`` must be convertible to its ``old``'s Type
        and every node keeps its output Types; with ``False`` the nodes that see a new
        Type are rebuilt by their Op's ``make_node``, so Types may change downstream.

    Returns
    -------
    The cloned variable, or list of variables, matching ``output``'s form. Every node
    between the roots and ``output`` is a copy; the roots themselves are kept.

    Raises
    ------
    TypeError
        For malformed replacements, or (with ``rebuild_strict``) a new variable whose
        Type cannot stand for the old one's.
    """
    items = _format_replace(replace, "clone_replace", values=True)
    outputs = [output] if isinstance(output, Variable) else list(output)
    memo: dict[Node, Any] = {}
    for old, new in items.items():
        strict = rebuild_strict or not isinstance(new, Variable)  # a value: a constant
        memo[old] = old.type.filter_variable(new) if strict else new
    roots = [v for v in graph_inputs(outputs) if v not in memo] + list(items)
    equiv = clone_get_equiv(
        roots, outputs, copy_inputs=False, copy_orphans=False, memo=memo, strict=rebuild_strict
    )
    result = [equiv[o] for o in outputs]
    return result[0] if isinstance(output, Variable) else result


def _same_values(a: Any, b: Any) -> bool:
    """True if ``a`` and ``b`` (arrays or scalars) hold the same values, NaNs included."""
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # values of a dtype that has no NaN (objects, strings)
        return bool(np.array_equal(a, b))


def equal_computations(
    xs: Sequence[Any],
    ys: Sequence[Any],
    in_xs: Sequence[Variable] | None = None,
    in_ys: Sequence[Variable] | None = None,
    strict_dtype: bool = True,
) -> bool:
    """True if each ``xs[i]`` computes the same thing as ``ys[i]``, structurally.

    Parameters
    ----------
    xs, ys
        Variables, or plain values (a value equals a :class:`Constant` holding it).
    in_xs, in_ys
        Pairs of variables taken as equal (``in_xs[i]`` stands for ``in_ys[i]``), for
        comparing graphs over different inputs.
    strict_dtype
        When false, two constant inputs of equal nodes are equal when their values are,
        whatever their dtypes (``xs[i]`` and ``ys[i]`` themselves must still have Types
        of the same class).

    Raises
    ------
    ValueError
        If ``xs`` and ``ys`` have different lengths.
    """
    if len(xs) != len(ys):
        raise ValueError(
            f"equal_computations: xs and ys must have the same length, got {len(xs)} and {len(ys)}"
        )
    in_xs, in_ys = list(in_xs or ()), list(in_ys or ())
    if len(in_xs) != len(in_ys):
        return False
    if not all(b.type.in_same_class(a.type) for a, b in zip(in_xs, in_ys, strict=True)):
        return False
    known: set[tuple[Variable, Variable]] = set(zip(in_xs, in_ys, strict=True))
    compared: dict[tuple[AbstractApply, AbstractApply], bool] = {}

    def same_roots(x: Variable, y: Variable) -> bool:
        if isinstance(x, Constant) and isinstance(y, Constant):
            if x.equals(y):
                return True
            return not strict_dtype and _same_values(x.data, y.data)
        return False

    def same_nodes(nx: AbstractApply, ny: AbstractApply) -> bool:
        if nx is ny:
            return True
        key = (nx, ny)
        if key not in compared:
            compared[key] = (
                nx.op == ny.op
                and len(nx.inputs) == len(ny.inputs)
                and len(nx.outputs) == len(ny.outputs)
                and all(same(a, b) for a, b in zip(nx.inputs, ny.inputs, strict=True))
            )
        return compared[key]

    def same(x: Variable, y: Variable) -> bool:
        if x is y or (x, y) in known:
            return True
        if x.owner is None or y.owner is None:
            return x.owner is None and y.owner is None and same_roots(x, y)
        if x.owner.outputs.index(x) != y.owner.outputs.index(y):
            return False
        return y.type.in_same_class(x.type) and same_nodes(x.owner, y.owner)

    for x, y in zip(xs, ys, strict=True):
        if not isinstance(x, Variable) or not isinstance(y, Variable):
            if isinstance(x, Variable):
                x, y = y, x
            if isinstance(y, Variable):
                if not (isinstance(y, Constant) and _same_values(y.data, x)):
                    return False
            elif not _same_values(x, y):
                return False
        elif (x, y) not in known and not y.type.in_same_class(x.type):
            return False
        elif not same(x, y):
            return False
    return True


def default_node_formatter(node: Apply, argstrings: Sequence[str]) -> str:
    """Describe ``node`` as ``Op(arg, ...)`` (the default ``node_formatter`` of
    :func:`as_string`)."""
    return f"{node.op}({', '.join(argstrings)})"


def _reference_counts(stop: set[Variable], outputs: Sequence[Variable]) -> dict[Apply, int]:
    """How many times each Apply node between ``stop`` and ``outputs`` is referenced (by
    an output or by an input of another node of the subgraph)."""
    counts: dict[Apply, int] = {}
    pending = [out.owner for out in outputs if out.owner is not None and out not in stop]
    for node in pending:
        counts[node] = counts.get(node, 0) + 1
    visited: set[Apply] = set()
    while pending:
        node = pending.pop()
        if node in visited:
            continue
        visited.add(node)
        for inp in node.inputs:
            if inp.owner is None or inp in stop:
                continue
            counts[inp.owner] = counts.get(inp.owner, 0) + 1
            pending.append(inp.owner)
    return counts


def as_string(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    leaf_formatter: Callable[[Variable], str] = str,
    node_formatter: Callable[[Apply, Sequence[str]], str] = default_node_formatter,
) -> list[str]:
    """Describe the subgraph between ``inputs`` and ``outputs``, one string per output.

    Parameters
    ----------
    inputs
        Where the description stops: these variables (and the graph's roots) are leaves.
    outputs
        The variables to describe.
    leaf_formatter
        Describes a leaf variable.
    node_formatter
        Describes an Apply node from the descriptions of its inputs.

    Returns
    -------
    list of str
        A node referenced more than once is written ``*n -> description`` where it is
        first described and ``*n`` (``*n::i`` for its output ``i`` of several) afterwards;
        ``n`` numbers those nodes in the order they are first described.
    """
    stop = set(inputs)
    counts = _reference_counts(stop, outputs)
    labels: dict[Apply, int] = {}
    described: set[Apply] = set()

    def describe(var: Variable) -> str:
        node = var.owner
        if node is None or var in stop:
            return leaf_formatter(var)
        suffix = "" if len(node.outputs) == 1 else f"::{node.outputs.index(var)}"
        if node in described:
            return f"*{labels[node]}{suffix}"
        described.add(node)
        if counts.get(node, 0) > 1:
            labels[node] = len(labels) + 1
        text = node_formatter(node, [describe(inp) for inp in node.inputs])
        return f"*{labels[node]} -> {text}" if node in labels else text

    return [describe(out) for out in outputs]
