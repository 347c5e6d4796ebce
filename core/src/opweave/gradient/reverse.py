"""Reverse-mode differentiation: :func:`grad`.

How :func:`grad` works
----------------------
1. From the cost (and the keys of ``known_grads``) it walks the graph down to its
   roots, following only the *true* connections that each Op's
   ``connection_pattern(node)`` declares (every input is connected to every
   output when an Op does not define it) and stopping at ``consider_constant``
   variables. It then keeps only the variables that have one of ``wrt`` as a
   true ancestor.
2. It visits the Apply nodes in reverse topological order. For each node it
   collects the gradients of its outputs (a :class:`DisconnectedType` variable
   for an output that does not lead to the cost), casts float output gradients
   to their output's dtype and calls ``node.op.L_op(inputs, outputs,
   output_grads)`` (which defaults to ``op.grad(inputs, output_grads)``). It
   checks what the Op returns: one term per input, each a Variable (``None``
   means disconnected) of a matching Type, never of an integer dtype; float
   terms are cast to their input's float dtype.
3. The terms a variable receives from all its clients are added up: with the
   Type's ``grad_add(terms)`` hook when the gradient's Type defines one, otherwise
   with ``+`` (tensor and scalar variables build a graph with it).
4. A :class:`NullType` term makes the whole gradient of that variable (and,
   through the connection pattern, of everything it depends on) a NullType;
   :func:`grad` raises :class:`NullTypeGradError` when one reaches a requested
   ``wrt``.

Gradients are never of an integer dtype: the gradient seeded at an integer cost,
and the zero returned for a disconnected integer ``wrt``, are of ``config.floatX``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from opweave.gradient._helpers import (
    as_list,
    cast_to,
    check_option,
    dtype_of,
    float_filled_like,
    format_as,
    is_continuous,
    is_discrete,
    is_float,
    ndim_of,
    sum_terms,
)
from opweave.gradient.opsupport import (
    DisconnectedInputError,
    NullTypeGradError,
    connection_pattern_of,
)
from opweave.graph.basic import Apply, Constant, Variable, ancestors, io_toposort
from opweave.graph.type import DisconnectedType, NullType, disconnected_type

__all__ = ["grad"]

DisconnectedInputs = Literal["ignore", "warn", "raise"]
ReturnDisconnected = Literal["zero", "None", "none", "disconnected", "Disconnected"]

_DISCONNECTED_INPUTS = ("ignore", "warn", "raise")
_RETURN_DISCONNECTED = ("zero", "none", "disconnected")
_NULL_GRADIENTS = ("raise", "return")


# ====================================================================== grad


def grad(
    cost: Variable | None,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: DisconnectedInputs = "raise",
    add_names: bool = True,
    known_grads: Mapping[Variable, Variable] | None = None,
    return_disconnected: ReturnDisconnected = "zero",
    null_gradients: Literal["raise", "return"] = "raise",
) -> Any:
    """Return the symbolic gradient of ``cost`` with respect to ``wrt``.

    Parameters
    ----------
    cost
        A scalar variable (``cost.type.ndim == 0`` when its Type has ``ndim``), or
        ``None`` when ``known_grads`` seeds the computation.
    wrt
        A variable or a list/tuple of variables; the result has the same form.
    consider_constant
        Variables treated as constants: gradients do not flow through them to
        what they are computed from.
    disconnected_inputs
        What to do for a ``wrt`` the cost does not depend on (or depends on only
        through non-differentiable Ops): ``"raise"`` a
        :class:`DisconnectedInputError`, ``"warn"`` (``UserWarning``) or ``"ignore"``.
    add_names
        Name new gradient variables ``(dcost/dvar)`` when both are named.
    known_grads
        ``{variable: gradient}``: gradients of the cost with respect to
        intermediate variables, used as given (for example by :func:`Lop`).
    return_disconnected
        What to return for a disconnected ``wrt``: ``"zero"`` (zeros shaped like it,
        of a float dtype), ``"None"`` or ``"disconnected"`` (the
        :class:`DisconnectedType` variable).
    null_gradients
        ``"raise"`` a :class:`NullTypeGradError` when a requested gradient is
        undefined or not implemented, or ``"return"`` the :class:`NullType` variable.

    Returns
    -------
    Variable or list or tuple
        One gradient per ``wrt``, in the form ``wrt`` was given.

    Raises
    ------
    TypeError
        Bad arguments, a non-scalar cost, or an Op's ``grad`` returning something
        that is not a gradient term (see the module docstring).
    ValueError
        Bad option values, or an Op returning the wrong number of terms.
    DisconnectedInputError
        With ``disconnected_inputs="raise"``, for a disconnected ``wrt``.
    NullTypeGradError
        With ``null_gradients="raise"``, for an undefined gradient.

    Notes
    -----
    Type hooks, for Types that are neither tensors nor opweave scalars:

    - ``grad_add(terms) -> Variable``: when several Ops use a variable, its gradient
      terms are added up by the gradient Type's ``grad_add`` if it defines one, and
      with ``functools.reduce(operator.add, terms)`` otherwise. Types whose variables
      have neither (such as a ``Double`` Type) support graphs where each variable has a
      single use.
    - ``ones_like(var)`` / ``zeros_like(var)``: the seed gradient of the cost and the
      zero returned for a disconnected ``wrt``. Without them, a Type whose ``filter``
      accepts the Python floats ``1.0``/``0.0`` (``Double``) gets Constants; any
      other Type raises ``TypeError``. Tensors use ``opweave.tensor.basic``'s
      ``ones_like``/``zeros_like``, scalars ``opweave.scalar``'s.

    Gradients with respect to integer variables are float (the gradient of
    ``0.5 * float(y)`` with respect to the integer ``y`` is ``0.5``), and a disconnected
    integer ``wrt`` gets float (``floatX``) zeros.
    """
    disconnected_inputs = check_option(
        "disconnected_inputs", disconnected_inputs, _DISCONNECTED_INPUTS
    )  # type: ignore[assignment]
    return_disconnected_l = check_option(
        "return_disconnected", return_disconnected, _RETURN_DISCONNECTED
    )
    check_option("null_gradients", null_gradients, _NULL_GRADIENTS)
    known = _check_known_grads(known_grads)
    if cost is None and not known:
        raise ValueError("grad: cost is None and known_grads is empty: nothing to differentiate")
    if cost is not None:
        _check_cost(cost)
    wrt_list, use_list, use_tuple = as_list(wrt)
    for i, w in enumerate(wrt_list):
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt[{i}] must be a Variable, got {type(w).__name__}: {w!r}")
    constants = list(consider_constant or ())
    for i, c in enumerate(constants):
        if not isinstance(c, Variable):
            raise TypeError(
                f"grad: consider_constant[{i}] must be a Variable, got {type(c).__name__}: {c!r}"
            )

    computation = _GradComputation(cost, wrt_list, constants, known, add_names)
    raw = computation.run()

    results: list[Variable | None] = []
    for i, (w, g) in enumerate(zip(wrt_list, raw, strict=True)):
        if isinstance(g.type, NullType):
            if null_gradients == "raise":
                raise NullTypeGradError(
                    f"grad: the gradient with respect to wrt[{i}] ({w}) is undefined: "
                    f"{g.type.why_null}"
                )
            results.append(g)
            continue
        if isinstance(g.type, DisconnectedType):
            _handle_disconnected(
                disconnected_inputs,
                f"grad was asked for the gradient with respect to wrt[{i}] ({w}), which is not "
                "part of the computational graph of the cost, or is used only by "
                "non-differentiable operations",
            )
            if return_disconnected_l == "zero":
                results.append(float_filled_like(w, 0))
            elif return_disconnected_l == "none":
                results.append(None)
            else:
                results.append(g)
            continue
        results.append(g)
    return format_as(use_list, use_tuple, results)


def _handle_disconnected(mode: str, message: str) -> None:
    """Raise, warn or ignore per ``disconnected_inputs``."""
    if mode == "raise":
        raise DisconnectedInputError(
            message + " (pass disconnected_inputs='warn' or 'ignore' to get a zero gradient)"
        )
    if mode == "warn":
        warnings.warn(message, UserWarning, stacklevel=3)


def _check_cost(cost: Any) -> None:
    if not isinstance(cost, Variable):
        raise TypeError(f"grad: cost must be a Variable or None, got {type(cost).__name__}")
    if isinstance(cost.type, NullType):
        raise ValueError(f"grad: cannot differentiate an undefined cost: {cost.type.why_null}")
    if isinstance(cost.type, DisconnectedType):
        raise ValueError("grad: the cost is a DisconnectedType placeholder, not a value")
    ndim = ndim_of(cost)
    if ndim is not None and ndim != 0:
        raise TypeError(
            f"grad: cost must be a scalar (ndim 0), got {cost} with ndim {ndim} "
            f"(Type {cost.type}); reduce it first, for example with sum()"
        )


def _check_known_grads(known_grads: Mapping[Variable, Variable] | None) -> dict[Variable, Variable]:
    if known_grads is None:
        return {}
    if not isinstance(known_grads, Mapping):
        raise TypeError(
            f"grad: known_grads must be a mapping {{variable: gradient}}, "
            f"got {type(known_grads).__name__}"
        )
    checked: dict[Variable, Variable] = {}
    for var, g in known_grads.items():
        if not isinstance(var, Variable):
            raise TypeError(f"grad: known_grads key {var!r} is not a Variable")
        if not isinstance(g, Variable):
            raise TypeError(
                f"grad: known_grads[{var}] must be a Variable, got {type(g).__name__}: {g!r}"
            )
        if is_discrete(dtype_of(g)):
            raise TypeError(
                f"grad: known_grads[{var}] has the integer dtype {dtype_of(g)}; gradients must "
                "have a floating-point dtype"
            )
        checked[var] = g
    return checked


class _GradComputation:
    """The state of one :func:`grad` call (kept off module level)."""

    def __init__(
        self,
        cost: Variable | None,
        wrt: list[Variable],
        consider_constant: list[Variable],
        known_grads: dict[Variable, Variable],
        add_names: bool,
    ) -> None:
        self.cost = cost
        self.wrt = wrt
        self.consider_constant = set(consider_constant)
        self.known_grads = known_grads
        self.outputs = ([cost] if cost is not None else []) + list(known_grads)
        self.cost_name = cost.name if add_names and cost is not None else None
        self.patterns: dict[Apply, list[list[bool]]] = {}
        self.grad_dict: dict[Variable, Variable] = {}
        self.term_dict: dict[Apply, list[Variable]] = {}
        self.var_to_app_to_idx: dict[Variable, dict[Apply, list[int]]] = {}
        self.protected: set[Variable] = set()

    # ------------------------------------------------------------------ driver

    def run(self) -> list[Variable]:
        self._populate_var_to_app_to_idx()
        if self.cost is not None:
            g_cost = self.known_grads.get(self.cost)
            if g_cost is None:
                g_cost = float_filled_like(self.cost, 1)
            cost_dtype = dtype_of(self.cost)
            if is_continuous(cost_dtype) and dtype_of(g_cost) is not None:
                g_cost = cast_to(g_cost, cost_dtype)
            self.grad_dict[self.cost] = g_cost
        for var, g in self.known_grads.items():
            if var is not self.cost:
                self.grad_dict[var] = g
        if self.cost_name is not None:
            self.protected = set(ancestors(self.outputs)) | set(self.known_grads.values())
        # Compute the terms of the relevant nodes in reverse topological order, so
        # that every lookup below finds its dependencies cached (no deep recursion).
        relevant = {app for apps in self.var_to_app_to_idx.values() for app in apps}
        for node in reversed(io_toposort([], self.outputs)):
            if node in relevant:
                self._terms(node)
        return [self._grad_of(w) for w in self.wrt]

    def _pattern(self, node: Apply) -> list[list[bool]]:
        pattern = self.patterns.get(node)
        if pattern is None:
            pattern = connection_pattern_of(node)
            self.patterns[node] = pattern
        return pattern

    # ------------------------------------------------------------------ graph walk

    def _populate_var_to_app_to_idx(self) -> None:
        """Map each variable on a true path from ``wrt`` to the cost to its clients.

        ``var_to_app_to_idx[var][node]`` lists the positions of ``var`` among
        ``node.inputs`` (ordered dicts keep the summation order deterministic).
        """
        v2a = self.var_to_app_to_idx
        accounted: set[Variable] = set()
        stack = list(reversed(self.outputs))
        while stack:
            var = stack.pop()
            if var in accounted:
                continue
            accounted.add(var)
            if isinstance(var, Constant) or var in self.consider_constant or var.owner is None:
                continue
            app = var.owner
            pattern = self._pattern(app)
            var_idx = _output_index(app, var)
            for i, ipt in enumerate(app.inputs):
                if not pattern[i][var_idx]:
                    continue
                positions = v2a.setdefault(ipt, {}).setdefault(app, [])
                if i not in positions:
                    positions.append(i)
                stack.append(ipt)

        # Keep only the variables that have an element of wrt as a true ancestor.
        visited: set[Variable] = set()
        stack = list(self.wrt)
        while stack:
            var = stack.pop()
            if var in visited or var not in v2a:
                continue
            visited.add(var)
            for node, positions in v2a[var].items():
                pattern = self._pattern(node)
                for idx in positions:
                    for j, out in enumerate(node.outputs):
                        if pattern[idx][j]:
                            stack.append(out)
        for var in list(v2a):
            if var not in visited:
                del v2a[var]

    # ------------------------------------------------------------------ accumulation

    def _grad_of(self, var: Variable) -> Variable:
        """The total gradient of the cost with respect to ``var`` (cached)."""
        cached = self.grad_dict.get(var)
        if cached is not None:
            return cached
        clients = self.var_to_app_to_idx.get(var)
        if clients is None:
            result = disconnected_type()
            self.grad_dict[var] = result
            return result
        null_terms: list[Variable] = []
        terms: list[Variable] = []
        for node, positions in clients.items():
            node_terms = self._terms(node)
            for idx in positions:
                term = node_terms[idx]
                if isinstance(term.type, NullType):
                    null_terms.append(term)
                elif not isinstance(term.type, DisconnectedType):
                    terms.append(term)
        if null_terms:
            result = null_terms[0]
        elif terms:
            result = sum_terms(var, terms)
            if (
                self.cost_name is not None
                and var.name is not None
                and result.name is None
                and result not in self.protected
            ):
                result.name = f"(d{self.cost_name}/d{var.name})"
        else:
            result = disconnected_type()
        self.grad_dict[var] = result
        return result

    # ------------------------------------------------------------------ one node

    def _terms(self, node: Apply) -> list[Variable]:
        """The gradient terms ``node`` contributes to each of its inputs (cached)."""
        cached = self.term_dict.get(node)
        if cached is not None:
            return cached
        op = node.op
        inputs = list(node.inputs)
        output_grads = [self._grad_of(o) for o in node.outputs]
        pattern = self._pattern(node)
        out_connected = [not isinstance(g.type, DisconnectedType) for g in output_grads]
        out_null = [isinstance(g.type, NullType) for g in output_grads]
        out_int = [is_discrete(dtype_of(o)) for o in node.outputs]
        in_connected = [
            any(p and c for p, c in zip(row, out_connected, strict=True)) for row in pattern
        ]
        # The NullType output gradient each input is connected to, if any.
        in_null = [
            next(
                (
                    g
                    for p, c, g in zip(row, out_connected, output_grads, strict=True)
                    if p and c and isinstance(g.type, NullType)
                ),
                None,
            )
            for row in pattern
        ]
        only_null = [
            not any(p and c and not n for p, c, n in zip(row, out_connected, out_null, strict=True))
            for row in pattern
        ]
        only_int = [
            not any(p and c and not n for p, c, n in zip(row, out_connected, out_int, strict=True))
            for row in pattern
        ]

        if not any(in_connected):
            input_grads: list[Variable] = [disconnected_type() for _ in inputs]
        elif all(only_null):
            input_grads = [
                in_null[i] if in_connected[i] else disconnected_type()  # type: ignore[misc]
                for i in range(len(inputs))
            ]
        else:
            input_grads = self._call_op(node, inputs, output_grads, out_null)

        checked: list[Variable] = []
        for i, (ipt, term) in enumerate(zip(inputs, input_grads, strict=True)):
            null = in_null[i]
            if null is not None:
                # Undefined + anything is undefined (through the connection pattern).
                checked.append(null)
                continue
            if isinstance(term.type, NullType):
                checked.append(term)
                continue
            if isinstance(term.type, DisconnectedType):
                if in_connected[i] and hasattr(op, "connection_pattern"):
                    raise TypeError(
                        f"{op}.grad returned a DisconnectedType gradient for input {i} ({ipt}), "
                        "but its connection_pattern says that input is connected to an output "
                        "the cost depends on"
                    )
                checked.append(term)
                continue
            if not in_connected[i]:
                raise TypeError(
                    f"{op}.grad returned {term} (Type {term.type}) for input {i} ({ipt}); "
                    "expected a DisconnectedType variable: according to the Op's "
                    "connection_pattern that input does not affect any output the cost "
                    "depends on"
                )
            term = _check_term(op, i, ipt, term)
            if only_int[i] and _is_zero(term) == "no":
                raise ValueError(
                    f"{op}.grad returned the nonzero gradient {term} for input {i} ({ipt}), "
                    "whose only connections to the cost are integer-valued outputs: such a "
                    "gradient must be zero, a DisconnectedType or a NullType"
                )
            checked.append(term)
        self.term_dict[node] = checked
        return checked

    def _call_op(
        self,
        node: Apply,
        inputs: list[Variable],
        output_grads: list[Variable],
        out_null: list[bool],
    ) -> list[Variable]:
        """Call ``L_op`` and normalise what it returns (``None`` means disconnected)."""
        op = node.op
        new_output_grads: list[Variable] = []
        for o, g, null in zip(node.outputs, output_grads, out_null, strict=True):
            if null:
                # Ops never see NullType gradients; the null is propagated afterwards
                # through the connection pattern.
                new_output_grads.append(disconnected_type())
                continue
            o_dtype = dtype_of(o)
            if (
                not isinstance(g.type, DisconnectedType)
                and is_continuous(o_dtype)
                and dtype_of(g) not in (None, o_dtype)
            ):
                g = cast_to(g, o_dtype)
            new_output_grads.append(g)
        # An Op destroying an input whose value its gradient uses would create a cycle:
        # pass symbolic copies of destroyed inputs.
        destroyed = {
            node.inputs[positions[0]]
            for positions in (getattr(op, "destroy_map", None) or {}).values()
            if positions
        }
        # ``copy`` is duck-typed: the variable classes of the tensor library have it.
        call_inputs = [
            ipt.copy()  # type: ignore[attr-defined]
            if ipt in destroyed and callable(getattr(ipt, "copy", None))
            else ipt
            for ipt in inputs
        ]
        returned = op.L_op(call_inputs, node.outputs, new_output_grads)
        if returned is None or isinstance(returned, Variable) or not isinstance(returned, Sequence):
            raise TypeError(
                f"{op}.grad must return a list or tuple with one gradient per input, got "
                f"{type(returned).__name__}: {returned!r}"
            )
        if len(returned) != len(inputs):
            raise ValueError(
                f"{op}.grad returned {len(returned)} gradient terms, but the Op has "
                f"{len(inputs)} inputs: it must return exactly one term per input"
            )
        terms: list[Variable] = []
        for i, term in enumerate(returned):
            if term is None:
                term = disconnected_type()
            elif not isinstance(term, Variable):
                raise TypeError(
                    f"{op}.grad returned {type(term).__name__} {term!r} for input {i}; each "
                    "gradient term must be a Variable (None or a DisconnectedType variable "
                    "for a disconnected input, grad_undefined/grad_not_implemented for an "
                    "undefined one)"
                )
            terms.append(term)
        return terms


def _output_index(app: Apply, var: Variable) -> int:
    idx = var.index
    if isinstance(idx, int) and idx < len(app.outputs) and app.outputs[idx] is var:
        return idx
    return next(j for j, o in enumerate(app.outputs) if o is var)


def _check_term(op: Any, i: int, ipt: Variable, term: Variable) -> Variable:
    """Check a real gradient term against its input's Type; cast float terms."""
    in_type, t_type = ipt.type, term.type
    in_ndim, t_ndim = ndim_of(in_type), ndim_of(t_type)
    if in_ndim is not None and t_ndim is not None:
        if in_ndim != t_ndim:
            raise ValueError(
                f"{op}.grad returned a gradient term with {t_ndim} dimensions for input {i} "
                f"({ipt}), which has {in_ndim} dimensions"
            )
    elif t_type != in_type:
        try:
            term = in_type.filter_variable(term)
        except (TypeError, ValueError, AssertionError) as exc:
            raise TypeError(
                f"{op}.grad returned a gradient term of Type {t_type} for input {i} ({ipt}) "
                f"of Type {in_type}: the gradient of a variable must have a matching Type"
            ) from exc
    t_dtype = dtype_of(term)
    if is_discrete(t_dtype):
        raise TypeError(
            f"{op}.grad illegally returned an integer-valued gradient (dtype {t_dtype}) for input "
            f"{i} ({ipt}): gradients must have a floating-point dtype, even for integer inputs "
            "(return float zeros, a DisconnectedType or a NullType variable instead)"
        )
    in_dtype = dtype_of(ipt)
    if is_float(in_dtype) and is_float(t_dtype) and in_dtype != t_dtype:
        term = cast_to(term, in_dtype)
    return term


def _is_zero(term: Variable) -> str:
    """``"yes"``, ``"no"`` or ``"maybe"``: is ``term`` verifiably all zeros?"""
    if isinstance(term, Constant):
        try:
            return "yes" if bool(np.all(np.asarray(term.data) == 0)) else "no"
        except Exception:
            return "maybe"
    # A tensor variable knows how to look through the Ops that keep a constant's value.
    underlying_constant = getattr(term, "get_underlying_scalar_constant", None)
    if not callable(underlying_constant):
        return "maybe"
    try:
        value = underlying_constant()
    except Exception:
        return "maybe"
    return "yes" if bool(np.all(np.asarray(value) == 0)) else "no"
