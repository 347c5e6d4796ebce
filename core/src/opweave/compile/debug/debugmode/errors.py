"""The exceptions DebugMode raises, and the text helpers that describe values in them.

Every message names the Apply node involved (``str(node)``), the implementation that
misbehaved, the values of the node's inputs (type, shape, dtype, a short repr) and what
differed. The attributes the constructors store let tests and tools inspect the failure
without parsing the message.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.graph import features as _features
from opweave.graph.basic import Apply, Variable

__all__ = [
    "BadDestroyMap",
    "BadOptimization",
    "BadThunkOutput",
    "BadViewMap",
    "DebugModeError",
    "DebugModeWarning",
    "InvalidValueError",
    "StochasticOrder",
    "describe_difference",
    "describe_inputs",
    "describe_value",
    "short_repr",
    "str_diagnostic",
]

#: Longest repr shown for one value.
REPR_LIMIT = 240


# ---------------------------------------------------------------------- text helpers


def short_repr(value: Any, limit: int = REPR_LIMIT) -> str:
    """Return a one-line repr of ``value``, summarised for large arrays, cut at ``limit``."""
    if isinstance(value, np.ndarray):
        try:
            text = np.array2string(value, threshold=16, edgeitems=3, max_line_width=10**6)
        except Exception:
            text = repr(value)
    else:
        try:
            text = repr(value)
        except Exception as exc:
            text = f"<unprintable {type(value).__name__}: {exc}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_value(value: Any) -> str:
    """Return the Python type, shape, dtype, strides, range and a short repr of ``value``."""
    parts = [type(value).__name__]
    if isinstance(value, np.ndarray):
        parts.append(f"shape={value.shape}")
        parts.append(f"dtype={value.dtype}")
        parts.append(f"strides={value.strides}")
        if value.size and value.dtype.kind in "biuf":
            try:
                parts.append(f"min={value.min()}")
                parts.append(f"max={value.max()}")
                if value.dtype.kind == "f":
                    parts.append(f"n_nan={int(np.isnan(value).sum())}")
                    parts.append(f"n_inf={int(np.isinf(value).sum())}")
            except Exception:
                pass
    else:
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        if shape is not None:
            parts.append(f"shape={tuple(shape)}")
        if dtype is not None:
            parts.append(f"dtype={dtype}")
    parts.append(f"value={short_repr(value)}")
    return " ".join(parts)


def describe_inputs(node: Apply, values: Sequence[Any] | None) -> str:
    """Return one indented line per input of ``node``: variable, Type and value."""
    if not node.inputs:
        return "    (no inputs)"
    lines = []
    for i, var in enumerate(node.inputs):
        desc = describe_value(values[i]) if values is not None and i < len(values) else "?"
        lines.append(f"    input {i} ({var}, type {var.type}): {desc}")
    return "\n".join(lines)


def describe_difference(expected: Any, value: Any) -> str:
    """Return where two values differ: shapes, dtypes, and the largest differences."""
    a = expected
    b = value
    if not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        try:
            return f"difference (second - first): {b - a!r}"
        except Exception:
            return "values differ"
    lines = []
    shape_a, shape_b = np.shape(a), np.shape(b)
    if shape_a != shape_b:
        lines.append(f"shapes differ: {shape_a} vs {shape_b}")
    dtype_a, dtype_b = getattr(a, "dtype", type(a)), getattr(b, "dtype", type(b))
    if dtype_a != dtype_b:
        lines.append(f"dtypes differ: {dtype_a} vs {dtype_b}")
    if shape_a == shape_b:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                aa = np.asarray(a, dtype=float)
                bb = np.asarray(b, dtype=float)
                absdiff = np.abs(bb - aa)
                reldiff = absdiff / np.abs(aa)
                mismatch = np.argwhere(~np.isclose(aa, bb, equal_nan=True))
                max_abs = np.nanmax(absdiff) if absdiff.size else 0.0
                max_rel = np.nanmax(reldiff) if reldiff.size else 0.0
            lines.append(f"max abs diff: {max_abs}")
            lines.append(f"max rel diff: {max_rel}")
            lines.append(
                f"mismatching positions: {len(mismatch)} (first: "
                f"{[tuple(int(k) for k in idx) for idx in mismatch[:5]]})"
            )
        except Exception:
            pass
    return "; ".join(lines) if lines else "values differ"


def str_diagnostic(expected: Any, value: Any, rtol: float | None, atol: float | None) -> str:
    """Return a multi-line report of how ``value`` differs from ``expected``.

    Parameters
    ----------
    expected, value
        The two values (arrays or scalars).
    rtol, atol
        The tolerances of the comparison that failed, or ``None`` for the default ones.

    Returns
    -------
    str
        Both values described (type, shape, dtype, range, a short repr), their
        differences, and the tolerances.
    """
    tolerances = ", ".join(
        f"{label}={'default' if tol is None else tol}"
        for label, tol in (("rtol", rtol), ("atol", atol))
    )
    return "\n".join(
        [
            f"  expected: {describe_value(expected)}",
            f"  value   : {describe_value(value)}",
            f"  {describe_difference(expected, value)}",
            f"  tolerances: {tolerances}",
        ]
    )


def _context_line(impl: str | None, context: str | None) -> str:
    parts = []
    if impl:
        parts.append(f"implementation: {impl}")
    if context:
        parts.append(context)
    return "\n  " + "; ".join(parts) if parts else ""


# ---------------------------------------------------------------------- exceptions


class DebugModeError(Exception):
    """Base class of every error DebugMode reports: a bug in an Op, a Type or a rewrite."""


class DebugModeWarning(UserWarning):
    """A DebugMode finding not worth an error (e.g. output strides differing, level 1)."""


class BadThunkOutput(DebugModeError):
    """Two computations of the same node output disagree.

    Raised when two implementations of an Op (``debug_perform``, ``py``, ``c``...)
    give different values, or when an implementation gives a different value (or
    fails) when its output storage was pre-allocated (the storage reuse contract).

    Parameters
    ----------
    node
        The Apply node.
    output_index
        Which output disagrees.
    impl1, value1
        The reference implementation and its value.
    impl2, value2
        The implementation compared with it and its value.
    input_values
        The node's input values.
    prealloc
        The pre-allocation mode of the run that disagreed (``"previous"``,
        ``"wrong_size"``, ``"strided"``...), or ``None`` for a run with empty output
        storage.
    reason
        An extra explanation (e.g. an exception raised by the run, or differing strides).
    """

    def __init__(
        self,
        node: Apply,
        output_index: int,
        impl1: str,
        value1: Any,
        impl2: str,
        value2: Any,
        input_values: Sequence[Any] = (),
        prealloc: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.node = node
        self.output_index = output_index
        self.variable = node.outputs[output_index] if node.outputs else None
        self.impl1 = impl1
        self.value1 = value1
        self.impl2 = impl2
        self.value2 = value2
        self.input_values = list(input_values)
        self.prealloc = prealloc
        self.reason = reason
        super().__init__(self._message())

    def offending_op(self) -> type:
        """Return the class of the Op whose implementations disagree."""
        return type(self.node.op)

    # PyTensor's attribute names for the same facts.

    @property
    def r(self) -> Variable | None:
        """The output that disagrees (:attr:`variable`)."""
        return self.variable

    @property
    def thunk1(self) -> str:
        """The reference implementation (:attr:`impl1`)."""
        return self.impl1

    @property
    def val1(self) -> Any:
        """The reference value (:attr:`value1`)."""
        return self.value1

    @property
    def thunk2(self) -> str:
        """The implementation compared with the reference (:attr:`impl2`)."""
        return self.impl2

    @property
    def val2(self) -> Any:
        """Its value (:attr:`value2`)."""
        return self.value2

    @property
    def inputs_val(self) -> list[Any]:
        """The node's input values (:attr:`input_values`)."""
        return self.input_values

    def str_diagnostic(self) -> str:
        """The message: the node, both implementations and values, and how they differ."""
        return str(self)

    def _message(self) -> str:
        var = self.variable
        var_desc = f"{var}, type {var.type}" if var is not None else "no output"
        storage = (
            f"with its output storage pre-allocated ({self.prealloc})"
            if self.prealloc
            else "with empty output storage"
        )
        lines = [
            f"BadThunkOutput: output {self.output_index} ({var_desc}) of node "
            f"{self.node} differs between implementation {self.impl1!r} and implementation "
            f"{self.impl2!r} run {storage}",
            f"  Apply node: {self.node}",
            f"  Op: {self.node.op} ({type(self.node.op).__qualname__})",
            f"  pre-allocation mode: {self.prealloc or 'none'}",
            "  inputs:",
            describe_inputs(self.node, self.input_values),
            f"  {self.impl1} (reference) value: {describe_value(self.value1)}",
            f"  {self.impl2} value: {describe_value(self.value2)}",
            f"  {describe_difference(self.value1, self.value2)}",
        ]
        if self.reason:
            lines.append(f"  reason: {self.reason}")
        return "\n".join(lines)


class BadDestroyMap(DebugModeError):
    """An implementation modified an input its Op does not declare in ``destroy_map``.

    Parameters
    ----------
    node
        The Apply node.
    input_index
        The input that changed.
    old_value, new_value
        The input's value before and after the node ran.
    impl
        The implementation that changed it.
    input_values
        The node's input values (before it ran).
    context
        Where it happened (e.g. the pre-allocation mode).
    """

    def __init__(
        self,
        node: Apply,
        input_index: int,
        old_value: Any,
        new_value: Any,
        impl: str,
        input_values: Sequence[Any] = (),
        context: str | None = None,
    ) -> None:
        self.node = node
        self.input_index = input_index
        self.old_value = old_value
        self.new_value = new_value
        self.impl = impl
        self.input_values = list(input_values)
        self.context = context
        super().__init__(self._message())

    def _message(self) -> str:
        var = self.node.inputs[self.input_index]
        return "\n".join(
            [
                f"BadDestroyMap: node {self.node} modified its input {self.input_index} ({var}, "
                f"type {var.type}), which its Op does not declare in destroy_map "
                f"(destroy_map={dict(self.node.op.destroy_map)!r})"
                + _context_line(self.impl, self.context),
                f"  Apply node: {self.node}",
                "  inputs (before the node ran):",
                describe_inputs(self.node, self.input_values),
                f"  input {self.input_index} before: {describe_value(self.old_value)}",
                f"  input {self.input_index} after: {describe_value(self.new_value)}",
                f"  {describe_difference(self.old_value, self.new_value)}",
                "  Hint: declare the input in destroy_map, or work on a copy; a deficient "
                "values_eq of the input's Type can also cause this.",
            ]
        )


class BadViewMap(DebugModeError):
    """An output shares memory with an input or another output without declaring it.

    Parameters
    ----------
    node
        The Apply node.
    output_index
        The aliasing output.
    output_value
        Its value.
    in_alias_idx
        The inputs it aliases without a ``view_map``/``destroy_map`` entry.
    out_alias_idx
        The other outputs it aliases.
    impl
        The implementation that produced the alias.
    input_values
        The node's input values.
    context
        Where it happened (e.g. the pre-allocation mode).
    """

    def __init__(
        self,
        node: Apply,
        output_index: int,
        output_value: Any,
        in_alias_idx: Sequence[int] = (),
        out_alias_idx: Sequence[int] = (),
        impl: str = "",
        input_values: Sequence[Any] = (),
        context: str | None = None,
    ) -> None:
        self.node = node
        self.output_index = output_index
        self.output_value = output_value
        self.in_alias_idx = list(in_alias_idx)
        self.out_alias_idx = list(out_alias_idx)
        self.impl = impl
        self.input_values = list(input_values)
        self.context = context
        super().__init__(self._message())

    def _message(self) -> str:
        var = self.node.outputs[self.output_index]
        what = []
        if self.in_alias_idx:
            names = ", ".join(f"{i} ({self.node.inputs[i]})" for i in self.in_alias_idx)
            what.append(f"input(s) {names}")
        if self.out_alias_idx:
            names = ", ".join(f"{i} ({self.node.outputs[i]})" for i in self.out_alias_idx)
            what.append(f"output(s) {names}")
        op = self.node.op
        return "\n".join(
            [
                f"BadViewMap: output {self.output_index} ({var}) of node {self.node} shares "
                f"memory with {' and '.join(what)} without declaring it (view_map="
                f"{dict(op.view_map)!r}, destroy_map={dict(op.destroy_map)!r})"
                + _context_line(self.impl, self.context),
                f"  Apply node: {self.node}",
                "  inputs:",
                describe_inputs(self.node, self.input_values),
                f"  aliased output value: {describe_value(self.output_value)}",
                "  Hint: declare the alias in view_map (or destroy_map), or return a copy.",
            ]
        )


class InvalidValueError(DebugModeError):
    """A node produced a value its output Type does not accept (or a NaN/inf).

    Parameters
    ----------
    variable
        The output variable.
    value
        The value produced.
    node
        The Apply node (default: ``variable.owner``).
    hint
        Why the value is invalid.
    impl
        The implementation that produced it.
    input_values
        The node's input values.
    context
        Where it happened (e.g. the pre-allocation mode).
    """

    def __init__(
        self,
        variable: Variable,
        value: Any,
        node: Apply | None = None,
        hint: str = "",
        impl: str = "",
        input_values: Sequence[Any] = (),
        context: str | None = None,
    ) -> None:
        self.variable = variable
        self.value = value
        self.node = node if node is not None else variable.owner
        self.hint = hint
        self.impl = impl
        self.input_values = list(input_values)
        self.context = context
        super().__init__(self._message())

    def _message(self) -> str:
        var = self.variable
        lines = [
            f"InvalidValueError: node {self.node} produced an invalid value for output {var} "
            f"(type {var.type}): {self.hint}" + _context_line(self.impl, self.context),
            f"  Apply node: {self.node}",
        ]
        if self.node is not None:
            lines += ["  inputs:", describe_inputs(self.node, self.input_values)]
        lines.append(f"  value: {describe_value(self.value)}")
        return "\n".join(lines)


class BadOptimization(DebugModeError, _features.BadOptimization):
    """A rewrite replaced a variable with one that computes a different value.

    Parameters
    ----------
    old_variable
        The variable the rewrite replaced.
    new_variable
        Its replacement.
    old_value, new_value
        Their values in the call that found the difference.
    reason
        The rewrite that made the replacement (the ``reason`` of the graph change).
    old_input_values, new_input_values
        The input values of the nodes computing the two variables.
    """

    def __init__(
        self,
        old_variable: Variable,
        new_variable: Variable,
        old_value: Any,
        new_value: Any,
        reason: str | None,
        old_input_values: Sequence[Any] | None = None,
        new_input_values: Sequence[Any] | None = None,
    ) -> None:
        self.old_variable = old_variable
        self.new_variable = new_variable
        self.old_value = old_value
        self.new_value = new_value
        self.reason = reason
        self.old_input_values = old_input_values
        self.new_input_values = new_input_values
        self.node = old_variable.owner
        super().__init__(old_variable, new_variable, old_value, new_value, reason)

    def description(self) -> str:
        """The message: the rewrite, both variables, their inputs' values and theirs."""
        return self._message()

    def _message(self) -> str:
        old, new = self.old_variable, self.new_variable
        lines = [
            f"BadOptimization: rewrite {self.reason!r} replaced {old} (type {old.type}) with "
            f"{new} (type {new.type}), but they compute different values",
            f"  rewrite: {self.reason}",
            f"  old variable: {old}, computed by {old.owner or '(a graph input or constant)'}",
        ]
        if old.owner is not None:
            lines.append(describe_inputs(old.owner, self.old_input_values))
        lines.append(
            f"  new variable: {new}, computed by {new.owner or '(a graph input or constant)'}"
        )
        if new.owner is not None:
            lines.append(describe_inputs(new.owner, self.new_input_values))
        lines += [
            f"  old value: {describe_value(self.old_value)}",
            f"  new value: {describe_value(self.new_value)}",
            f"  {describe_difference(self.old_value, self.new_value)}",
            "  Hint: the rewrite is wrong for these inputs, or the Type's values_eq_approx "
            "is too strict (a rewrite may set new_variable.tag.values_eq_approx).",
        ]
        return "\n".join(lines)


class StochasticOrder(DebugModeError):
    """Rewriting copies of the same graph gave different graphs.

    The usual cause is a rewrite that iterates in a memory-address-dependent order
    (over ``id()``s, or a ``set`` of Variables) or that keeps state between runs.
    """
