"""Scalar variables and constants, the :class:`ScalarOp` base classes and the elementary Ops.

Every Op here is symbolic only: ``make_node``, output types, ``grad``/``L_op`` and
the attributes an elementwise or C backend needs (``nfunc_spec``, ``identity``,
``commutative``, ``associative``). The values are computed by backends (the Python
backend's implementations live in ``opweave_python.impls.scalar``).

Gradients follow one rule: an Op whose output is discrete is locally flat, so
every input gets a zero gradient (of the input's dtype when it is continuous, of
``config.floatX`` when it is discrete); a continuous output gives discrete inputs
the same gradient a float input would get.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any, Self

import numpy as np

from opweave.gradient.opsupport import grad_not_implemented
from opweave.graph.basic import Apply, Constant, OptionalApplyType, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType, NullType
from opweave.scalar._typing import scalar_out, scalar_var
from opweave.scalar.autocast import NumpyAutocaster as NumpyAutocaster
from opweave.scalar.autocast import autocast_float as autocast_float
from opweave.scalar.autocast import autocast_float_as as autocast_float_as
from opweave.scalar.autocast import autocast_int as autocast_int
from opweave.scalar.autocast import convert
from opweave.scalar.rules import (
    bitwise_out,
    bool_out,
    real_out,
    same_out,
    same_out_float_only,
    same_out_min8,
    same_out_nobool,
    sign_out,
    specific_out,
    transfer_type,
    upcast_out,
    upcast_out_min8,
    upcast_out_no_complex,
    upcast_out_no_complex_min8,
    upcast_out_nobool,
    upgrade_to_float_no_complex,
)
from opweave.scalar.rules import float_out as float_out
from opweave.scalar.rules import int_out as int_out
from opweave.scalar.rules import same_out_nocomplex as same_out_nocomplex
from opweave.scalar.rules import upgrade_to_float as upgrade_to_float
from opweave.scalar.rules import upgrade_to_float64 as upgrade_to_float64
from opweave.scalar.type import (
    ScalarType,
    bool_,
    complex64,
    complex128,
    complex_types,
    continuous_types,
    discrete_types,
    float16,
    float32,
    float64,
    floatX,
    get_scalar_type,
    int8,
    int16,
    int32,
    int64,
    normalize_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from opweave.scalar.type import all_types as all_types
from opweave.scalar.type import discrete_dtypes as discrete_dtypes
from opweave.scalar.type import float_types as float_types
from opweave.scalar.type import int_types as int_types
from opweave.scalar.type import integer_types as integer_types
from opweave.scalar.type import uint_types as uint_types
from opweave.scalar.type import upcast as upcast

#: ``(type, value)``: what identifies a scalar constant (PyTensor's type alias).
ScalarConstantSignature = tuple[ScalarType, Any]


class ComplexError(NotImplementedError):
    """Raised where an operation does not support complex numbers."""


class IntegerDivisionError(Exception):
    """Raised where integers are divided with ``/`` where ``//`` is meant."""


# ====================================================================== variables


def _binary(op: Callable[..., Any], a: Any, b: Any) -> Any:
    """Apply ``op``, or return ``NotImplemented`` when ``b`` is a non-scalar Variable."""
    if isinstance(b, Variable) and not isinstance(b.type, ScalarType):
        return NotImplemented
    return op(a, b)


class ScalarVariable(Variable["ScalarType", OptionalApplyType]):
    """A Variable of a :class:`~opweave.scalar.type.ScalarType`, with Python operators.

    ``+ - * / // % **``, unary ``-``, ``abs()``, ``< <= > >=`` and the bitwise
    ``& | ^ ~`` build graphs. ``==`` and ``!=`` keep Python's identity semantics
    (variables are dictionary keys); use :func:`eq` and :func:`neq` for the
    symbolic comparisons.
    """

    ndim = 0

    @property
    def dtype(self) -> str:
        """The dtype of the values."""
        return str(self.type.dtype)

    def __bool__(self) -> bool:
        raise TypeError(
            "a symbolic scalar has no truth value; use opweave.scalar.switch or compare "
            "values after compiling"
        )

    def __abs__(self) -> ScalarVariable:
        return scalar_out(abs_(self))

    def __neg__(self) -> ScalarVariable:
        return scalar_out(neg(self))

    def __pos__(self) -> Self:
        return self

    def __invert__(self) -> ScalarVariable:
        return scalar_out(invert(self))

    def __and__(self, other: Any) -> Any:
        return _binary(and_, self, other)

    def __or__(self, other: Any) -> Any:
        return _binary(or_, self, other)

    def __xor__(self, other: Any) -> Any:
        return _binary(xor, self, other)

    def __rand__(self, other: Any) -> Any:
        return and_(other, self)

    def __ror__(self, other: Any) -> Any:
        return or_(other, self)

    def __rxor__(self, other: Any) -> Any:
        return xor(other, self)

    def __lt__(self, other: Any) -> Any:
        return _binary(lt, self, other)

    def __le__(self, other: Any) -> Any:
        return _binary(le, self, other)

    def __gt__(self, other: Any) -> Any:
        return _binary(gt, self, other)

    def __ge__(self, other: Any) -> Any:
        return _binary(ge, self, other)

    def __add__(self, other: Any) -> Any:
        return _binary(add, self, other)

    def __sub__(self, other: Any) -> Any:
        return _binary(sub, self, other)

    def __mul__(self, other: Any) -> Any:
        return _binary(mul, self, other)

    def __truediv__(self, other: Any) -> Any:
        return _binary(true_div, self, other)

    def __floordiv__(self, other: Any) -> Any:
        return _binary(int_div, self, other)

    def __mod__(self, other: Any) -> Any:
        return _binary(mod_check, self, other)

    def __pow__(self, other: Any) -> Any:
        return _binary(pow, self, other)

    def __radd__(self, other: Any) -> Any:
        return add(other, self)

    def __rsub__(self, other: Any) -> Any:
        return sub(other, self)

    def __rmul__(self, other: Any) -> Any:
        return mul(other, self)

    def __rtruediv__(self, other: Any) -> Any:
        return true_div(other, self)

    def __rfloordiv__(self, other: Any) -> Any:
        return int_div(other, self)

    def __rmod__(self, other: Any) -> Any:
        return mod_check(other, self)

    def __rpow__(self, other: Any) -> Any:
        return pow(other, self)

    # No __eq__/__hash__: variables keep identity semantics (they are dict keys).

    def zeros_like(self: ScalarVariable, dtype: str | None = None) -> ScalarVariable:
        """A scalar of ``dtype`` (default: this one's) equal to 0, tied to this variable."""
        return zeros_like(self, dtype)

    def ones_like(self: ScalarVariable, dtype: str | None = None) -> ScalarVariable:
        """A scalar of ``dtype`` (default: this one's) equal to 1, tied to this variable."""
        return ones_like(self, dtype)

    def astype(self, dtype: Any) -> ScalarVariable:
        """Return this variable cast to ``dtype`` (itself if it already has that dtype)."""
        return cast(self, dtype)


class ScalarConstant(ScalarVariable[None], Constant["ScalarType"]):
    """A :class:`ScalarVariable` with a fixed value (a NumPy scalar)."""


ScalarType.variable_type = ScalarVariable
ScalarType.constant_type = ScalarConstant


def constant(x: Any, name: str | None = None, dtype: Any = None) -> ScalarConstant:
    """Return a :class:`ScalarConstant` holding ``x``.

    Parameters
    ----------
    x
        A Python or NumPy number, or a zero-dimensional array.
    name
        Optional name.
    dtype
        Force this dtype (``x`` is cast, possibly losing precision). By default the
        dtype follows :func:`~opweave.scalar.autocast.convert`: a NumPy value keeps its
        dtype; under ``cast_policy="custom"`` (the default) a Python ``int`` (or ``bool``)
        gets the smallest integer dtype holding it (``2`` is ``int8``, ``1000`` ``int16``)
        and a Python ``float`` the narrowest float holding it exactly (``1.5`` is
        ``float32``, ``1.1`` ``float64``; always ``floatX`` when that is ``float32``), so
        that constants do not widen the variables they meet. Under ``"numpy+floatX"``
        ints are ``int64`` and floats ``config.floatX``. A ``complex`` is ``complex128``.

    Raises
    ------
    TypeError
        If ``x`` is not a number or not zero-dimensional.
    """
    if isinstance(x, Variable):
        raise TypeError(f"constant() needs a value, got the variable {x}")
    if x is None or isinstance(x, str | bytes):
        raise TypeError(f"a scalar constant needs a number, got {type(x).__name__} {x!r}")
    try:
        value = convert(x, None if dtype is None else normalize_dtype(dtype))
    except (ValueError, OverflowError) as exc:
        raise TypeError(f"cannot make a scalar constant from {x!r}: {exc}") from exc
    if value.ndim != 0:
        raise TypeError(f"a scalar constant needs a 0-dimensional value, got shape {value.shape}")
    stype = get_scalar_type(value.dtype)
    return ScalarConstant(stype, value[()], name=name)


def _scalar_conversion(x: Variable) -> Callable[[], Variable] | None:
    """The method that gives the zero-dimensional variable ``x`` as a scalar: its own
    ``_as_ScalarVariable`` (tensor variables define it), or that of the tensor its
    ``_as_TensorVariable`` gives; ``None`` when it has neither."""
    to_scalar = getattr(x, "_as_ScalarVariable", None)
    if to_scalar is None:
        to_tensor = getattr(x, "_as_TensorVariable", None)
        if to_tensor is not None:
            to_scalar = getattr(to_tensor(), "_as_ScalarVariable", None)
    return to_scalar


def as_scalar(x: Any, name: str | None = None) -> ScalarVariable:
    """Return ``x`` as a scalar Variable.

    A ScalarType Variable is returned as is, an Apply node with one output gives
    that output, a zero-dimensional tensor is converted by its ``_as_ScalarVariable``
    method (``scalar_from_tensor``), and any other value becomes a :func:`constant`.

    Raises
    ------
    TypeError
        If ``x`` cannot be a scalar.
    """
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(f"{x} has {len(x.outputs)} outputs; say which one is meant")
        x = x.outputs[0]
    if isinstance(x, Variable):
        if isinstance(x.type, ScalarType):
            return scalar_var(x)
        if getattr(x.type, "ndim", None) == 0:
            to_scalar = _scalar_conversion(x)
            if to_scalar is not None:
                return scalar_out(to_scalar())
        raise TypeError(f"cannot use {x} (of type {x.type}) as a scalar")
    return constant(x, name=name)


# ====================================================================== gradient helpers


def zeros_like(x: Variable, dtype: Any = None) -> ScalarVariable:
    """``second(x, 0)``: a zero of ``dtype`` (default ``x``'s) that depends on ``x``."""
    dtype = scalar_var(x).type.dtype if dtype is None else normalize_dtype(dtype)
    return scalar_out(second(x, constant(0, dtype=dtype)))


def ones_like(x: Variable, dtype: Any = None) -> ScalarVariable:
    """``second(x, 1)``: a one of ``dtype`` (default ``x``'s) that depends on ``x``."""
    dtype = scalar_var(x).type.dtype if dtype is None else normalize_dtype(dtype)
    return scalar_out(second(x, constant(1, dtype=dtype)))


def zero_grad(x: Variable) -> ScalarVariable:
    """The zero gradient of ``x``: continuous ``x``'s dtype, else ``floatX``."""
    dtype = scalar_var(x).type.dtype if x.type in continuous_types else floatX()
    return zeros_like(x, dtype)


def disconnected_grad() -> Variable:
    """A new :class:`DisconnectedType` variable: the input does not affect the output."""
    return DisconnectedType()()


def _const(value: Any, like: Variable) -> ScalarConstant:
    """A constant of ``like``'s dtype."""
    return constant(value, dtype=scalar_var(like).type.dtype)


def _as_float(x: Variable, dtype: str) -> ScalarVariable:
    """``x`` cast to ``dtype`` if it is discrete (so gradient formulas never overflow)."""
    return cast(x, dtype) if x.type in discrete_types else scalar_var(x)


# ====================================================================== Op base classes


#: The logical reduction of booleans, by the name of the bitwise one.
_LOGICAL_REDUCERS = {
    "bitwise_and": "logical_and",
    "bitwise_or": "logical_or",
    "bitwise_xor": "logical_xor",
}


class ScalarOp(Op):
    """Base class of Ops on scalars.

    Parameters
    ----------
    output_types_preference
        The output type rule: ``rule(*input_types) -> tuple of ScalarTypes`` (see
        :mod:`opweave.scalar.rules`). Two Ops of one class with equal rules are equal.
    name
        The name shown when printing (not part of the Op's identity).

    Attributes
    ----------
    nin, nout
        Number of inputs (``-1``: any positive number) and outputs.
    nfunc_spec
        ``(numpy function name, nin, nout)`` naming the NumPy function computing the
        same values, or ``None``.
    identity
        The neutral element of an associative binary Op (used by reductions), or ``None``.
    commutative, associative
        Algebraic properties rewrites may use.
    infix_symbol, prefix_symbol
        Operator symbols used when printing expressions, or ``None``.

    Subclasses give the gradient either by overriding :meth:`L_op` / :meth:`grad`, or,
    for continuous functions, by defining ``grad_formula(inputs, output, gz)``. The
    inputs it receives are cast to the output dtype when they are discrete; discrete
    outputs and complex values are handled before it is called.
    """

    __props__ = ("output_types_preference",)

    nin: int = -1
    nout: int = 1
    #: The printed name (a subclass whose ``__init__`` does not call ScalarOp's has none).
    name: str | None = None
    output_types_preference: Callable[..., Sequence[ScalarType]] | None = None
    nfunc_spec: tuple[str, int, int] | None = None
    nfunc_variadic: str | None = None
    identity: Any = None
    commutative: bool = False
    associative: bool = False
    infix_symbol: str | None = None
    prefix_symbol: str | None = None
    #: ``grad_formula(inputs, output, gz)``: the gradient terms of a continuous Op (see
    #: above); declared for type checkers only, the Ops that have one define it.
    grad_formula: Callable[
        [Sequence[ScalarVariable], ScalarVariable, ScalarVariable], Sequence[Any]
    ]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        own_str = "__str__" in cls.__dict__
        super().__init_subclass__(**kwargs)
        if not own_str and "__str__" in cls.__dict__:
            delattr(cls, "__str__")  # keep ScalarOp's name-based __str__

    def __init__(
        self,
        output_types_preference: Callable[..., Sequence[ScalarType]] | None = None,
        name: str | None = None,
    ) -> None:
        if output_types_preference is not None:
            if not callable(output_types_preference):
                raise TypeError(
                    f"output_types_preference of {type(self).__name__} must be callable, "
                    f"got {output_types_preference!r}"
                )
        # always an instance attribute (the class's rule by default), as in PyTensor
        if output_types_preference is None:
            output_types_preference = self.output_types_preference
        self.output_types_preference = output_types_preference
        self.name = name

    # ------------------------------------------------------------------ nodes

    def make_node(self, *inputs: Any) -> Apply:
        """Wrap Python numbers as constants, check the arity and build the output types."""
        if self.nin >= 0 and len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} input(s), got {len(inputs)}")
        if self.nin < 0 and not inputs:
            raise TypeError(f"{self} needs at least one input")
        scalars = [as_scalar(x) for x in inputs]
        types = self.output_types([x.type for x in scalars])
        return Apply(self, scalars, [t() for t in types])

    def output_types(self, types: Sequence[ScalarType]) -> tuple[ScalarType, ...]:
        """Return the output Types for inputs of ``types`` (via ``output_types_preference``)."""
        rule = self.output_types_preference
        if rule is None:
            raise NotImplementedError(f"{self} has no output type rule")
        try:
            out = rule(*types)
        except TypeError as exc:
            names = ", ".join(str(t) for t in types)
            raise TypeError(
                f"{self} cannot be applied to inputs of types ({names}): {exc}"
            ) from exc
        if not isinstance(out, list | tuple) or not all(isinstance(t, ScalarType) for t in out):
            raise TypeError(f"the output type rule of {self} returned {out!r}, not ScalarTypes")
        if len(out) != self.nout:
            raise TypeError(
                f"the output type rule of {self} gave {len(out)} types for {self.nout} outputs"
            )
        return tuple(out)

    def make_new_inplace(
        self,
        output_types_preference: Callable[..., Sequence[ScalarType]] | None = None,
        name: str | None = None,
    ) -> ScalarOp:
        """Return an Op of this class with another output rule (used by inplace rewrites)."""
        return type(self)(output_types_preference, name)

    # ------------------------------------------------------------------ gradients

    def _has_formula(self) -> bool:
        return callable(getattr(self, "grad_formula", None))

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Return one gradient term per input (see the class docstring)."""
        if self._has_formula():
            return _formula_grads(self, inputs, outputs, output_grads)
        if type(self).grad is ScalarOp.grad:
            raise NotImplementedError(f"{self} does not implement its gradient")
        return self.grad(inputs, output_grads)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """Like :meth:`L_op`, rebuilding the outputs from ``inputs``."""
        if not self._has_formula() and type(self).L_op is ScalarOp.L_op:
            raise NotImplementedError(f"{self} does not implement its gradient")
        return self.L_op(inputs, self.make_node(*inputs).outputs, output_grads)

    def R_op(
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable | None]:
        """Jacobian-vector products, from :meth:`L_op` with unit output gradients.

        Each output gets ``sum_i d(output)/d(input_i) * eval_points[i]``, ``None`` when
        every eval point is ``None`` (or disconnected), and a zero when it is discrete.
        """
        outputs = self.make_node(*inputs).outputs
        results: list[Variable | None] = []
        for k, out in enumerate(outputs):
            if out.type in discrete_types:
                results.append(zero_grad(out))
                continue
            seeds = [_const(1, o) if j == k else disconnected_grad() for j, o in enumerate(outputs)]
            grads = self.L_op(inputs, outputs, seeds)
            terms: list[Variable] = []
            for g, ev in zip(grads, eval_points, strict=True):
                if ev is None or isinstance(g.type, DisconnectedType):
                    continue
                if isinstance(g.type, NullType):
                    terms = [g]
                    break
                terms.append(scalar_out(mul(g, ev)))
            if not terms:
                results.append(None)
            elif isinstance(terms[0].type, NullType):
                results.append(terms[0])
            else:
                results.append(terms[0] if len(terms) == 1 else scalar_out(add(*terms)))
        return results

    # ------------------------------------------------------------------ misc

    def reduce_ufunc_name(self, dtype_kind: str) -> str | None:
        """The NumPy ufunc whose ``reduce`` combines values of dtype kind ``dtype_kind``
        (``"b"``, ``"i"``, ``"f"`` ...) as this Op does, by name, or ``None``.

        It is the ufunc of :attr:`nfunc_spec` for a commutative and associative binary Op
        (its logical counterpart for booleans: ``logical_and`` for ``bitwise_and``); a
        description backends use to reduce with NumPy, not a kernel.
        """
        spec = self.nfunc_spec
        if spec is None or spec[1] != 2 or not (self.commutative and self.associative):
            return None
        return _LOGICAL_REDUCERS.get(spec[0], spec[0]) if dtype_kind == "b" else spec[0]

    def __str__(self) -> str:
        if self.name:
            return self.name
        props = [p for p in getattr(self, "__props__", ()) if p != "output_types_preference"]
        if props:
            params = ", ".join(f"{p}={getattr(self, p)}" for p in props)
            return f"{type(self).__name__}{{{params}}}"
        return type(self).__name__


def _formula_grads(
    op: ScalarOp,
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    output_grads: Sequence[Variable],
) -> list[Variable]:
    (out,) = outputs
    (gz,) = output_grads
    if out.type in discrete_types:
        return [zero_grad(x) for x in inputs]
    if (
        out.type in complex_types
        or gz.type in complex_types
        or any(x.type in complex_types for x in inputs)
    ):
        return [
            grad_not_implemented(op, i, x, "gradients of complex values are not implemented")
            for i, x in enumerate(inputs)
        ]
    dtype = scalar_var(out).type.dtype
    floats = [_as_float(x, dtype) for x in inputs]
    grads = list(op.grad_formula(floats, scalar_var(out), scalar_var(gz)))
    if len(grads) != len(inputs):
        raise ValueError(f"{op}.grad_formula returned {len(grads)} terms for {len(inputs)} inputs")
    return grads


class UnaryScalarOp(ScalarOp):
    """A ScalarOp with one input."""

    nin = 1


class BinaryScalarOp(ScalarOp):
    """A ScalarOp with two inputs."""

    nin = 2


class ZeroGradMixin:
    """For piecewise-constant Ops: every input gets a zero gradient."""

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Zeros (of the input's dtype, or ``floatX`` for discrete inputs)."""
        return [zero_grad(x) for x in inputs]


# ====================================================================== comparisons


def _compare_out(*types: ScalarType) -> tuple[ScalarType, ...]:
    for t in types:
        if t in complex_types:
            raise TypeError(f"ordering comparisons do not accept complex inputs (got {t})")
    return bool_out(*types)


class LogicalComparison(ZeroGradMixin, BinaryScalarOp):
    """A comparison of two scalars, with a ``bool`` output."""

    # the rule of every comparison, so that one built without arguments (``GT()``, as
    # PyMC builds them) has a bool output too, as in PyTensor
    output_types_preference = staticmethod(_compare_out)


class LT(LogicalComparison):
    """``x < y``."""

    nfunc_spec = ("less", 2, 1)
    infix_symbol = "<"


class GT(LogicalComparison):
    """``x > y``."""

    nfunc_spec = ("greater", 2, 1)
    infix_symbol = ">"


class LE(LogicalComparison):
    """``x <= y``."""

    nfunc_spec = ("less_equal", 2, 1)
    infix_symbol = "<="


class GE(LogicalComparison):
    """``x >= y``."""

    nfunc_spec = ("greater_equal", 2, 1)
    infix_symbol = ">="


class EQ(LogicalComparison):
    """``x == y`` (elementwise, symbolic)."""

    commutative = True
    nfunc_spec = ("equal", 2, 1)
    infix_symbol = "=="


class NEQ(LogicalComparison):
    """``x != y`` (elementwise, symbolic)."""

    commutative = True
    nfunc_spec = ("not_equal", 2, 1)
    infix_symbol = "!="


lt = LT(_compare_out, name="lt")
gt = GT(_compare_out, name="gt")
le = LE(_compare_out, name="le")
ge = GE(_compare_out, name="ge")
eq = EQ(bool_out, name="eq")
neq = NEQ(bool_out, name="neq")


class FixedLogicalComparison(ZeroGradMixin, UnaryScalarOp):
    """A boolean test of one value against a fixed set (``isnan``, ``isinf``)."""


class IsNan(FixedLogicalComparison):
    """True where the value is NaN."""

    nfunc_spec = ("isnan", 1, 1)


class IsInf(FixedLogicalComparison):
    """True where the value is infinite."""

    nfunc_spec = ("isinf", 1, 1)


isnan = IsNan(bool_out, name="isnan")
isinf = IsInf(bool_out, name="isinf")

# ====================================================================== bitwise / logical


class BinaryBitOp(ZeroGradMixin, BinaryScalarOp):
    """A bitwise operation of booleans or integers (logical on booleans)."""

    commutative = True
    associative = True


class AND(BinaryBitOp):
    """``x & y``. ``identity`` is ``-1`` (all bits set: ``True`` for booleans)."""

    identity = -1
    nfunc_spec = ("bitwise_and", 2, 1)
    infix_symbol = "&"


class OR(BinaryBitOp):
    """``x | y``."""

    identity = 0
    nfunc_spec = ("bitwise_or", 2, 1)
    infix_symbol = "|"


class XOR(BinaryBitOp):
    """``x ^ y``."""

    identity = 0
    nfunc_spec = ("bitwise_xor", 2, 1)
    infix_symbol = "^"


class UnaryBitOp(ZeroGradMixin, UnaryScalarOp):
    """A bitwise operation of one boolean or integer."""


class Invert(UnaryBitOp):
    """``~x`` (logical not of a boolean)."""

    nfunc_spec = ("invert", 1, 1)
    prefix_symbol = "~"


and_ = AND(bitwise_out, name="and_")
or_ = OR(bitwise_out, name="or_")
xor = XOR(bitwise_out, name="xor")
invert = Invert(bitwise_out, name="invert")

# ====================================================================== selection, copies, casts


def _switch_out(cond: ScalarType, ift: ScalarType, iff: ScalarType) -> tuple[ScalarType, ...]:
    if cond in complex_types:
        raise TypeError(f"the condition of switch cannot be complex (got {cond})")
    return upcast_out(ift, iff)


class Switch(ScalarOp):
    """``ift if cond else iff``."""

    nin = 3
    nfunc_spec = ("where", 3, 1)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """The condition gets zero; each branch gets ``gz`` where it was selected."""
        cond, ift, iff = inputs
        (gz,) = output_grads
        if outputs[0].type in discrete_types:
            return [zero_grad(cond), zero_grad(ift), zero_grad(iff)]
        zero = _const(0, gz)
        return [
            zero_grad(cond),
            scalar_out(switch(cond, gz, zero)),
            scalar_out(switch(cond, zero, gz)),
        ]


switch = Switch(_switch_out, name="switch")


class Second(BinaryScalarOp):
    """Return the second input; the first only ties the result to it (``fill``)."""

    #: The output has the second input's type (also for ``Second()`` built without a rule).
    output_types_preference = transfer_type(1)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The first input's value is never used."""
        return [[False], [True]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """The first input is disconnected; the second gets ``gz`` (zero if discrete)."""
        _, y = inputs
        (gz,) = output_grads
        if y.type in continuous_types:
            return [disconnected_grad(), gz]
        return [disconnected_grad(), zero_grad(y)]


second = Second(transfer_type(1), name="second")
fill = second


class Identity(UnaryScalarOp):
    """Return the input."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """``gz`` (zero for a discrete input)."""
        (x,) = inputs
        (gz,) = output_grads
        return [gz] if x.type in continuous_types else [zero_grad(x)]


identity = Identity(same_out, name="identity")


class Cast(UnaryScalarOp):
    """Convert to another dtype (as NumPy's ``astype`` does).

    Parameters
    ----------
    o_type
        The output ScalarType.
    name
        Printed name.
    """

    __props__ = ("o_type",)

    def __init__(self, o_type: ScalarType, name: str | None = None) -> None:
        if not isinstance(o_type, ScalarType):
            raise TypeError(f"Cast needs a ScalarType, got {o_type!r}")
        super().__init__(specific_out(o_type), name=name)
        self.o_type = o_type

    def __str__(self) -> str:
        return f"Cast{{{self.o_type.dtype}}}"  # as PyTensor prints it, whatever the name

    def make_new_inplace(
        self,
        output_types_preference: Callable[..., Sequence[ScalarType]] | None = None,
        name: str | None = None,
    ) -> Cast:
        """A Cast to the same type (the rule is fixed by ``o_type``)."""
        return type(self)(self.o_type, name)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """``gz`` cast back to a float input's dtype; zero when the output is discrete."""
        (x,) = inputs
        (gz,) = output_grads
        if self.o_type in discrete_types:
            return [zero_grad(x)]
        if (x.type in complex_types) != (self.o_type in complex_types):
            return [grad_not_implemented(self, 0, x, "casts between real and complex")]
        if x.type in continuous_types:
            return [cast(gz, scalar_var(x).type.dtype)]
        return [gz]


convert_to_bool = Cast(bool_, name="convert_to_bool")
convert_to_int8 = Cast(int8, name="convert_to_int8")
convert_to_int16 = Cast(int16, name="convert_to_int16")
convert_to_int32 = Cast(int32, name="convert_to_int32")
convert_to_int64 = Cast(int64, name="convert_to_int64")
convert_to_uint8 = Cast(uint8, name="convert_to_uint8")
convert_to_uint16 = Cast(uint16, name="convert_to_uint16")
convert_to_uint32 = Cast(uint32, name="convert_to_uint32")
convert_to_uint64 = Cast(uint64, name="convert_to_uint64")
convert_to_float16 = Cast(float16, name="convert_to_float16")
convert_to_float32 = Cast(float32, name="convert_to_float32")
convert_to_float64 = Cast(float64, name="convert_to_float64")
convert_to_complex64 = Cast(complex64, name="convert_to_complex64")
convert_to_complex128 = Cast(complex128, name="convert_to_complex128")

#: dtype -> the Cast Op converting to it.
_CASTS: MappingProxyType[str, Cast] = MappingProxyType(
    {
        op.o_type.dtype: op
        for op in (
            convert_to_bool,
            convert_to_int8,
            convert_to_int16,
            convert_to_int32,
            convert_to_int64,
            convert_to_uint8,
            convert_to_uint16,
            convert_to_uint32,
            convert_to_uint64,
            convert_to_float16,
            convert_to_float32,
            convert_to_float64,
            convert_to_complex64,
            convert_to_complex128,
        )
    }
)


def cast(x: Any, dtype: Any) -> ScalarVariable:
    """Return ``x`` cast to ``dtype`` (``x`` itself when it already has that dtype).

    Raises
    ------
    TypeError
        For a complex-to-real cast, which is ambiguous (take the real part or the
        absolute value explicitly).
    """
    dtype = normalize_dtype(dtype)
    var = as_scalar(x)
    if var.type.dtype == dtype:
        return var
    if var.type in complex_types and dtype not in ("complex64", "complex128"):
        raise TypeError(f"casting {var} from complex to {dtype} is ambiguous")
    return scalar_out(_CASTS[dtype](var))


# ====================================================================== arithmetic


class Add(ScalarOp):
    """``x + y + ...`` (any number of inputs)."""

    identity = 0
    commutative = True
    associative = True
    nfunc_spec = ("add", 2, 1)
    nfunc_variadic = "sum"
    infix_symbol = "+"

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz`` for every input."""
        return [gz] * len(inputs)


class Mul(ScalarOp):
    """``x * y * ...`` (any number of inputs)."""

    identity = 1
    commutative = True
    associative = True
    nfunc_spec = ("multiply", 2, 1)
    nfunc_variadic = "prod"
    infix_symbol = "*"

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz`` times the product of the other inputs."""
        return [mul(gz, *inputs[:i], *inputs[i + 1 :]) for i in range(len(inputs))]


class MulWithoutZeros(BinaryScalarOp):
    """``x * y`` where neither is 0; ``y`` where ``x == 0``, ``x`` where ``y == 0``.

    As PyTensor's Op of this name: a reduction with it multiplies the non-zero elements of
    each group, and a group without any (all zeros, or empty) gives 0, its ``identity``.
    A NaN is not 0, so it propagates. It has no gradient, as in PyTensor (``Prod``'s
    gradient handles zeros itself).
    """

    identity = 0
    commutative = True
    associative = True


class Sub(BinaryScalarOp):
    """``x - y``."""

    nfunc_spec = ("subtract", 2, 1)
    infix_symbol = "-"

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz, -gz``."""
        return [gz, neg(gz)]


def _true_div_out(x: ScalarType, y: ScalarType) -> tuple[ScalarType, ...]:
    if x in discrete_types and y in discrete_types:
        return (get_scalar_type(floatX()),)
    return upcast_out(x, y)


class TrueDiv(BinaryScalarOp):
    """``x / y``; two discrete inputs give a ``floatX`` result."""

    nfunc_spec = ("true_divide", 2, 1)
    infix_symbol = "/"

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz / y`` and ``-gz * x / y**2``."""
        x, y = inputs
        return [gz / y, scalar_out(neg(gz * x)) / (y * y)]


class IntDiv(ZeroGradMixin, BinaryScalarOp):
    """``x // y``: floor division with NumPy's semantics (rounding towards minus infinity)."""

    nfunc_spec = ("floor_divide", 2, 1)
    infix_symbol = "//"


class Mod(BinaryScalarOp):
    """``x % y`` with NumPy's (Python's) semantics: the result has the sign of ``y``."""

    nfunc_spec = ("mod", 2, 1)
    infix_symbol = "%"

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz`` and ``-(x // y) * gz``."""
        x, y = inputs
        return [gz, scalar_out(neg(int_div(x, y))) * gz]


class Pow(BinaryScalarOp):
    """``x ** y``.

    The output dtype is the inputs' upcast. Integer powers are exact modulo the range of
    the dtype they wrap around in, element by element, on every backend:

    * an integer power of two arrays is computed in the output dtype, both operands converted
      to it (NumPy's result: ``int8 ** uint8`` is ``int16``, so ``2 ** 7 == 128``;
      ``int64 ** uint64`` is a ``float64`` power);
    * a constant exponent no wider than the base (the Python ``2`` of ``x ** 2``, an
      ``int8`` constant here) wraps in the base's dtype, as NumPy's ``x ** 2`` does:
      ``uint8`` values ``[5, 200, 255]`` squared are ``[25, 64, 1]``, then converted to the
      ``int16`` output;
    * a negative exponent, which NumPy refuses for integers, gives the real power truncated
      towards zero: ``1 ** -n == 1``, ``(-1) ** -n == ±1``, ``x ** -n == 0`` for
      ``|x| >= 2``, and ``0 ** -n == 0`` (as integer division by zero gives 0).
    """

    nfunc_spec = ("power", 2, 1)
    infix_symbol = "**"

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz * y * x**(y-1)`` and ``gz * log(x) * x**y`` (0 where ``x == 0``)."""
        x, y = inputs
        gx = gz * y * pow(x, y - _const(1, y))
        gy = switch(eq(x, _const(0, x)), _const(0, gz), gz * log(x) * out)
        return [gx, gy]


class Log(UnaryScalarOp):
    """Natural logarithm (here, below :mod:`opweave.scalar.math`, for :class:`Pow`'s
    gradient)."""

    nfunc_spec = ("log", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz / x``."""
        (x,) = inputs
        return [gz / x]


class Neg(UnaryScalarOp):
    """``-x``."""

    nfunc_spec = ("negative", 1, 1)
    prefix_symbol = "-"

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``-gz``."""
        return [neg(gz)]


class Abs(UnaryScalarOp):
    """``|x|`` (the modulus, a float, for complex numbers)."""

    nfunc_spec = ("abs", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz * sign(x)``."""
        (x,) = inputs
        return [gz * sign(x)]


class Sign(ZeroGradMixin, UnaryScalarOp):
    """-1, 0 or 1 (NaN for NaN)."""

    nfunc_spec = ("sign", 1, 1)


class Sqr(UnaryScalarOp):
    """``x * x``."""

    nfunc_spec = ("square", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``2 * x * gz``."""
        (x,) = inputs
        return [gz * x * _const(2, x)]


class Reciprocal(UnaryScalarOp):
    """``1 / x``."""

    nfunc_spec = ("reciprocal", 1, 1)

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``-gz / x**2``."""
        (x,) = inputs
        return [scalar_out(neg(gz)) / (x * x)]


class _Extremum(BinaryScalarOp):
    """Common base of :class:`Maximum` and :class:`Minimum`."""

    commutative = True
    associative = True

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz`` goes to the selected input (the first one on ties)."""
        x, _ = inputs
        chosen = scalar_out(eq(out, x))
        return [chosen * gz, (_const(1, gz) - chosen) * gz]


class Maximum(_Extremum):
    """The larger input (NaN if either is NaN)."""

    identity = -np.inf
    nfunc_spec = ("maximum", 2, 1)
    nfunc_variadic = "maximum"


class Minimum(_Extremum):
    """The smaller input (NaN if either is NaN)."""

    identity = np.inf
    nfunc_spec = ("minimum", 2, 1)
    nfunc_variadic = "minimum"


class Clip(ScalarOp):
    """``minimum(maximum(x, lo), hi)``, NumPy's ``clip``: ``hi`` wins when ``lo > hi``, and
    a NaN among the three gives NaN (PyTensor's clip gives ``lo`` and ignores NaN bounds)."""

    nin = 3

    def grad_formula(
        self, inputs: Sequence[ScalarVariable], out: ScalarVariable, gz: ScalarVariable
    ) -> list[Any]:
        """``gz`` goes to whichever of ``x``, ``lo`` and ``hi`` the output is: ``hi`` above
        it (or when ``lo > hi``), ``lo`` below it, ``x`` inside ``[lo, hi]``."""
        x, lo, hi = inputs
        above = scalar_out(or_(gt(x, hi), gt(lo, hi)))
        below = scalar_out(and_(lt(x, lo), invert(above)))
        inside = scalar_out(and_(invert(below), invert(above)))
        return [inside * gz, below * gz, above * gz]


class Floor(ZeroGradMixin, UnaryScalarOp):
    """The largest integer not above ``x`` (as a float)."""

    nfunc_spec = ("floor", 1, 1)


class Ceil(ZeroGradMixin, UnaryScalarOp):
    """The smallest integer not below ``x`` (as a float)."""

    nfunc_spec = ("ceil", 1, 1)


class Trunc(ZeroGradMixin, UnaryScalarOp):
    """``x`` rounded towards zero (as a float)."""

    nfunc_spec = ("trunc", 1, 1)


class RoundHalfToEven(ZeroGradMixin, UnaryScalarOp):
    """Round to the nearest integer, halves to even (NumPy's ``round``)."""

    nfunc_spec = ("round", 1, 1)


class RoundHalfAwayFromZero(ZeroGradMixin, UnaryScalarOp):
    """Round to the nearest integer, halves away from zero (C's ``round``)."""


add = Add(upcast_out, name="add")
mul = Mul(upcast_out, name="mul")
mul_without_zeros = MulWithoutZeros(upcast_out, name="mul_without_zeros")
sub = Sub(upcast_out_nobool, name="sub")
true_div = TrueDiv(_true_div_out, name="true_div")
int_div = IntDiv(upcast_out_no_complex_min8, name="int_div")
floor_div = int_div
mod = Mod(upcast_out_no_complex_min8, name="mod")
pow = Pow(upcast_out_min8, name="pow")
log = Log(upgrade_to_float, name="log")
neg = Neg(same_out_nobool, name="neg")
abs_ = Abs(real_out, name="abs")
sign = Sign(sign_out, name="sign")
sqr = Sqr(same_out_min8, name="sqr")
reciprocal = Reciprocal(upgrade_to_float, name="reciprocal")
maximum = Maximum(upcast_out_no_complex, name="maximum")
minimum = Minimum(upcast_out_no_complex, name="minimum")
scalar_maximum = maximum
scalar_minimum = minimum
ScalarMaximum = Maximum
ScalarMinimum = Minimum
clip = Clip(upcast_out_no_complex, name="clip")
floor = Floor(upgrade_to_float_no_complex, name="floor")
ceil = Ceil(upgrade_to_float_no_complex, name="ceil")
trunc = Trunc(upgrade_to_float_no_complex, name="trunc")
round_half_to_even = RoundHalfToEven(same_out_float_only, name="round_half_to_even")
round_half_away_from_zero = RoundHalfAwayFromZero(
    same_out_float_only, name="round_half_away_from_zero"
)


def mod_check(x: Any, y: Any) -> ScalarVariable:
    """``x % y``, refusing complex operands.

    Raises
    ------
    ComplexError
        Where ``x`` or ``y`` is complex.
    """
    for name, value in (("x", x), ("y", y)):
        if as_scalar(value).type in complex_types:
            raise ComplexError(f"mod_check: {name} is complex ({value}); % takes real numbers")
    return scalar_out(mod(x, y))


def round_half_away_from_zero_(a: Any) -> Any:
    """Round one real number half away from zero (C's ``round``), with NumPy."""
    return np.floor(a + 0.5) if a > 0 else np.ceil(a - 0.5)


#: :func:`round_half_away_from_zero_` over arrays, with float64 and float32 results.
round_half_away_from_zero_vec64 = np.vectorize(
    round_half_away_from_zero_, doc="``round_half_away_from_zero_`` over float64 arrays"
)
round_half_away_from_zero_vec32 = np.vectorize(
    round_half_away_from_zero_,
    doc="``round_half_away_from_zero_`` over float32 arrays",
    otypes=["float32"],
)


def round_half_away_from_zero_vec(a: Any) -> Any:
    """Round an array half away from zero, keeping float32 as float32."""
    if getattr(a, "dtype", None) == np.float32:
        return round_half_away_from_zero_vec32(a)
    return round_half_away_from_zero_vec64(a)


# ====================================================================== plural constructors


def apply_across_args(
    *fns: Callable[..., Any],
) -> Callable[..., Any] | list[Callable[..., Any]]:
    """Make constructors of several variables from constructors of one (PyTensor's rule).

    Each function ``fn`` (a Type, or a function taking an optional name) becomes
    ``many(*names)``:

    * ``many(n)`` for an int ``n``: a list of ``n`` unnamed variables;
    * ``many("xy")``: one variable per character, ``[fn("x"), fn("y")]``, and
      ``many("x")`` a single variable ``fn("x")`` (not a list);
    * ``many("a", "b")`` or ``many(["a", "b"])``: one variable per name, in a list;
    * ``many()``: an empty list.

    Parameters
    ----------
    *fns
        The constructors of one variable.

    Returns
    -------
    callable or list of callable
        One plural constructor per function (the function itself when there is one).

    Examples
    --------
    >>> x, y = floats("xy")
    >>> a, b, c = ints(3)
    """

    def across(fn: Callable[..., Any]) -> Callable[..., Any]:
        def many(*names: Any) -> Any:
            if names and isinstance(names[0], int | np.integer):
                count = names[0]
                if isinstance(count, bool | np.bool_) or len(names) > 1 or count < 0:
                    raise TypeError(
                        "give either one non-negative int (how many variables) or names, "
                        f"got {names!r}"
                    )
                return [fn() for _ in range(int(count))]
            spec: Any = names[0] if len(names) == 1 else names
            if isinstance(spec, str) and len(spec) == 1:
                return fn(spec)
            if not isinstance(spec, str | list | tuple):
                raise TypeError(
                    f"expected names (str) or a count (int), got {type(spec).__name__} {spec!r}"
                )
            for name in spec:
                if not isinstance(name, str):
                    raise TypeError(
                        f"a variable's name must be a str, got {type(name).__name__} {name!r}"
                    )
            return [fn(name) for name in spec]

        what = getattr(fn, "__name__", None) or str(fn)
        many.__doc__ = (
            f"Variables like ``{what}(name)`` makes: ``n`` unnamed ones for an int ``n``, one "
            "per character of a single string, or one per name given."
        )
        return many

    if len(fns) == 1:
        return across(fns[0])
    return [across(fn) for fn in fns]


#: ``ints("ab")``, ``floats(3)``, ...: plural constructors of scalar variables (int64,
#: float64, complex128, complex64 and complex128 scalars), as in PyTensor.
ints = apply_across_args(int64)
floats = apply_across_args(float64)
complexs = apply_across_args(complex128)
complexs64 = apply_across_args(complex64)
complexs128 = apply_across_args(complex128)


class ScalarInnerGraphOp(ScalarOp):
    """The base of scalar Ops computed by an inner graph of scalar Ops (``Composite``).

    A subclass holds its graph as ``fgraph`` (with ``inputs`` and ``outputs``);
    ``inner_inputs`` and ``inner_outputs`` name them as every inner-graph Op does.
    """

    @property
    def inner_inputs(self) -> list[Variable]:
        """The inputs of the inner graph."""
        return list(self.fgraph.inputs)  # type: ignore[attr-defined]

    @property
    def inner_outputs(self) -> list[Variable]:
        """The outputs of the inner graph."""
        return list(self.fgraph.outputs)  # type: ignore[attr-defined]


#: Names of ``pytensor.scalar.basic`` that would shadow builtins here: name -> attribute.
#: (PyTensor's names for the Ops that live in the modules of this package which build on
#: this one, ``Exp``, ``Composite``, ``complex``..., are set here by ``opweave.scalar``,
#: which sits above them all; so this module never uses the builtin ``complex``.)
_BUILTIN_NAMES: MappingProxyType[str, str] = MappingProxyType({"abs": "abs_", "bool": "bool_"})


def __getattr__(name: str) -> Any:
    # ``abs`` and ``bool``: the same objects as ``abs_`` and ``bool_``, without shadowing
    # the builtins in this module.
    if name not in _BUILTIN_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return globals()[_BUILTIN_NAMES[name]]
