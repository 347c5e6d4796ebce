"""Type-generic helper Ops: ``DeepCopyOp``, ``ViewOp``, the per-Type code registrations,
and :func:`wrap_py` (an Op around a Python function).

``Shape`` and ``Shape_i`` build int64 tensors, so they live where PyTensor has them, in
:mod:`opweave.tensor.shape` (a floor above this package, see :mod:`opweave._layers`); the
names ``opweave.compile.ops.Shape``, ``Shape_i`` and ``shape`` stay importable from here:
``import opweave`` gives them here once the tensor library is loaded.

Their kernels come from backends, through the plugins. The ``register_*_c_code``
functions (Theano's names) record code per Type class as the answer of a collect hook
that the backend compiling that code declares and reads (the C backend declares
``opweave_register_deep_copy_op_c_code`` and its siblings); the registrations live in the
plugin manager, like every other contribution, and cost nothing where that backend is
not installed.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import Type
from opweave.graph.utils import MethodNotDefined
from opweave.plugins.registration import CollectHookEntry, register_plugin_object

if TYPE_CHECKING:
    # What ``import opweave`` gives here (see the module docstring), for type checkers.
    from opweave.tensor.shape import Shape as Shape
    from opweave.tensor.shape import Shape_i as Shape_i
    from opweave.tensor.shape import _shape as shape  # noqa: F401


def _register(hook: str, entry: tuple[Any, ...], type_class: type) -> None:
    if not isinstance(type_class, type):
        raise TypeError(f"expected a Type class, got {type_class!r}")
    register_plugin_object(CollectHookEntry(hook, entry), f"{hook}:{type_class.__qualname__}")


def register_deep_copy_op_c_code(typ: type, code: str, version: tuple[Any, ...] = ()) -> None:
    """Register C code copying a value of Type class ``typ`` (``%(iname)s`` to ``%(oname)s``).

    The entry answers the ``opweave_register_deep_copy_op_c_code`` hook.
    """
    _register("opweave_register_deep_copy_op_c_code", (typ, code, version), typ)


def register_view_op_c_code(typ: type, code: str, version: tuple[Any, ...] = ()) -> None:
    """Register C code making ``%(oname)s`` a view of ``%(iname)s`` for Type class ``typ``.

    The entry answers the ``opweave_register_view_op_c_code`` hook.
    """
    _register("opweave_register_view_op_c_code", (typ, code, version), typ)


def register_shape_c_code(typ: type, code: str, version: tuple[Any, ...] = ()) -> None:
    """Register C code putting the shape of ``%(iname)s`` in ``%(oname)s`` for ``typ``.

    The entry answers the ``opweave_register_shape_c_code`` hook.
    """
    _register("opweave_register_shape_c_code", (typ, code, version), typ)


def register_shape_i_c_code(
    typ: type, code: str, check_input: str, version: tuple[Any, ...] = ()
) -> None:
    """Register C code for dimension ``%(i)s`` of ``%(iname)s``, with its ``CHECK_INPUT``.

    The entry answers the ``opweave_register_shape_i_c_code`` hook.
    """
    _register("opweave_register_shape_i_c_code", (typ, code, check_input, version), typ)


class _IdentityLike(Op):
    """One input, one output; the gradient is the identity's."""

    __props__: tuple[str, ...] = ()

    if TYPE_CHECKING:
        # One input, one output: calling the Op gives that output.
        def __call__(self, x: Variable, **kwargs: Any) -> Variable: ...

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """Same shape as the input."""
        return list(shapes)

    def grad(self, inputs: Any, output_grads: Any) -> list[Any]:
        """The identity's gradient."""
        return list(output_grads)


class DeepCopyOp(_IdentityLike):
    """Return a copy of the input that shares no memory with it.

    Used to keep the user's memory and opweave's apart: outputs that would
    alias an input or another output are copied.
    """

    __props__ = ()

    def make_node(self, x: Variable) -> Apply:
        """One input, one output of the same Type."""
        if not isinstance(x, Variable):
            raise TypeError(f"DeepCopyOp expects a Variable, got {x!r}")
        return Apply(self, [x], [x.type()])


deep_copy_op = DeepCopyOp()


class TypeCastingOp(_IdentityLike):
    """Base of the Ops that change only what the graph knows about a value: the output is
    the input itself (a view), computed by the identity (PyTensor's name and contract).

    A subclass defines ``make_node`` (typically giving the output another Type, or the
    same Type as a marker in the graph); its kernels are the identity's, in every backend
    (those of :class:`ViewOp`).
    """

    __props__ = ()
    view_map = {0: [0]}


class ViewOp(TypeCastingOp):
    """Return the input itself (an alias), declaring the view."""

    __props__ = ()

    def make_node(self, x: Variable) -> Apply:
        """One input, one output of the same Type."""
        if not isinstance(x, Variable):
            raise TypeError(f"ViewOp expects a Variable, got {x!r}")
        return Apply(self, [x], [x.type()])


view_op = ViewOp()


def load_back(mod: str, name: str) -> Any:
    """Import module ``mod`` and return its attribute ``name`` (how a pickled
    :class:`FromFunctionOp` is found again)."""
    return getattr(importlib.import_module(mod), name)


def _takes_fgraph(fn: Callable[..., Any]) -> bool:
    """Whether a user ``infer_shape`` takes ``(fgraph, node, input_shapes)`` rather than
    ``(node, input_shapes)``."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3 or any(p.kind is p.VAR_POSITIONAL for p in params)


class FromFunctionOp(Op):
    """An Op whose computation is a Python function (PyTensor's name and contract).

    Built by :func:`wrap_py`. ``make_node`` checks the inputs against ``itypes`` and makes
    outputs of ``otypes``; ``perform`` calls the function on the input values (its result,
    or each item of a returned list or tuple, is an output). The Op carries its own
    implementation, so every linker runs it in Python. It has no gradient, and a shape
    only where ``infer_shape`` is given.

    Parameters
    ----------
    fn
        The function, taking one value per input.
    itypes, otypes
        The input and output Types.
    infer_shape
        ``None``, or a callable ``(node, input_shapes) -> output_shapes`` (a callable
        taking ``(fgraph, node, input_shapes)`` is accepted too).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        itypes: Sequence[Type],
        otypes: Sequence[Type],
        infer_shape: Callable[..., Any] | None,
    ) -> None:
        self._fn = fn
        self.itypes = list(itypes)
        self.otypes = list(otypes)
        self._infer_shape = infer_shape

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FromFunctionOp)
            and type(self) is type(other)
            and (self._fn == other._fn)
        )

    def __hash__(self) -> int:
        return hash(type(self)) ^ hash(self._fn)

    def __str__(self) -> str:
        return f"FromFunctionOp{{{getattr(self._fn, '__name__', self._fn)}}}"

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        """Call the function and store its result(s).

        Raises
        ------
        ValueError
            When the function returns a different number of values than the Op has
            outputs.
        """
        outs = self._fn(*inputs)
        if not isinstance(outs, list | tuple):
            outs = (outs,)
        if len(outs) != len(output_storage):
            raise ValueError(
                f"{self} returned {len(outs)} values for {len(output_storage)} outputs"
            )
        for cell, value in zip(output_storage, outs, strict=True):
            cell[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The output shapes from the ``infer_shape`` given to :func:`wrap_py`.

        Raises
        ------
        MethodNotDefined
            When none was given.
        """
        if self._infer_shape is None:
            raise MethodNotDefined(f"{self} was made without infer_shape")
        if _takes_fgraph(self._infer_shape):
            return list(self._infer_shape(fgraph, node, shapes))
        return list(self._infer_shape(node, shapes))

    def __reduce__(self) -> tuple[Any, ...]:
        mod = getattr(self._fn, "__module__", None)
        name = getattr(self._fn, "__name__", None)
        try:
            obj = load_back(str(mod), str(name))
        except (ImportError, KeyError, AttributeError):
            raise pickle.PicklingError(
                f"cannot pickle a wrap_py Op: it is not found as {mod}.{name}"
            ) from None
        if obj is not self:
            raise pickle.PicklingError(
                f"cannot pickle a wrap_py Op: {mod}.{name} is not this Op (decorate a "
                "module-level function with wrap_py to make it picklable)"
            )
        return load_back, (mod, name)


def _type_list(types: Any, what: str) -> list[Type]:
    if not isinstance(types, list | tuple):
        types = [types]
    bad = [t for t in types if not isinstance(t, Type)]
    if bad:
        raise TypeError(f"{what} must be a Type or a list of Types, got {bad[0]!r}")
    return list(types)


def wrap_py(
    itypes: Type | Sequence[Type],
    otypes: Type | Sequence[Type],
    infer_shape: Callable[..., Any] | None = None,
) -> Callable[[Callable[..., Any]], FromFunctionOp]:
    """Decorator making a Python function into an Op (a :class:`FromFunctionOp`).

    Parameters
    ----------
    itypes, otypes
        The Type of each input and output (one Type or a list).
    infer_shape
        Optional callable ``(node, input_shapes) -> output_shapes`` giving the symbolic
        output shapes, so that shape rewrites need not run the function.

    Returns
    -------
    callable
        A decorator: applied to a function, it returns the Op.

    Raises
    ------
    TypeError
        When ``itypes`` or ``otypes`` holds something that is not a Type, or
        ``infer_shape`` is not callable.

    Examples
    --------
    >>> import numpy as np
    >>> from opweave.tensor.type import dmatrix, dvector
    >>> @wrap_py(dmatrix, dvector)
    ... def flat_cumprod(x):
    ...     return np.cumprod(x)
    """
    in_types = _type_list(itypes, "itypes")
    out_types = _type_list(otypes, "otypes")
    if infer_shape is not None and not callable(infer_shape):
        raise TypeError(f"infer_shape must be callable, got {infer_shape!r}")

    def make_op(fn: Callable[..., Any]) -> FromFunctionOp:
        return FromFunctionOp(fn, in_types, out_types, infer_shape)

    return make_op


def as_op(
    itypes: Type | Sequence[Type],
    otypes: Type | Sequence[Type],
    infer_shape: Callable[..., Any] | None = None,
) -> Callable[[Callable[..., Any]], FromFunctionOp]:
    """Deprecated name of :func:`wrap_py` (warns with a ``FutureWarning``)."""
    warnings.warn("as_op is deprecated; use wrap_py instead", FutureWarning, stacklevel=2)
    return wrap_py(itypes, otypes, infer_shape)
