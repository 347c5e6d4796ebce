"""Rebuilding a function's graph: ``givens`` substitutions, updates, shared variables.

:func:`rebuild_collect_shared` is what :func:`~opweave.compile.maker.function` runs before
building a function's graph, with PyTensor's rules:

* the graph is rebuilt with the ``givens`` (``replace``) substituted; nodes whose inputs
  did not change are kept as they are;
* every shared variable the outputs, the replacements and the update expressions reach
  is collected;
* a shared variable whose ``default_update`` is set gets that update, unless an explicit
  update is given for it, or ``no_default_updates`` is ``True`` or a list naming it. The
  default update expressions are rebuilt too (with the ``givens``), and the shared
  variables they reach get their own default updates in turn. A shared variable that a
  ``givens`` entry replaces is not in the graph any more, and gets no default update.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.compile.io import Out
from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import Apply, Variable

__all__ = ["UnusedInputError", "rebuild_collect_shared"]


class UnusedInputError(ValueError):
    """An input of ``function`` is not needed by any output or update."""


def _pairs(value: Any, what: str) -> list[tuple[Any, Any]]:
    if value is None:
        return []
    items = list(value.items()) if isinstance(value, dict) else list(value)
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2):
            raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs")
        if not isinstance(item[0], Variable):
            raise TypeError(f"{what}: {item[0]!r} is not a Variable")
    return [tuple(item) for item in items]


def _excluded_from_default_updates(no_default_updates: Any) -> set[Variable] | None:
    """The shared variables whose default update is skipped (``None``: all of them)."""
    if no_default_updates is True:
        return None
    if no_default_updates is False:
        return set()
    if isinstance(no_default_updates, list | tuple | set | frozenset):
        for var in no_default_updates:
            if not isinstance(var, Variable):
                raise TypeError(
                    f"no_default_updates must list Variables, got {type(var).__name__} {var!r}"
                )
        return set(no_default_updates)
    raise TypeError(
        "no_default_updates must be True, False or a list of shared variables, got "
        f"{type(no_default_updates).__name__} {no_default_updates!r}"
    )


class _Rebuilder:
    """Rebuilds variables through ``clone_d`` and collects shared variables and updates."""

    def __init__(
        self,
        rebuild_strict: bool,
        copy_inputs_over: bool,
        skip_defaults: set[Variable] | None,
    ) -> None:
        self.strict = rebuild_strict
        self.copy_inputs_over = copy_inputs_over
        self.skip_defaults = skip_defaults
        self.clone_d: dict[Variable, Variable] = {}
        self.update_d: dict[SharedVariable, Variable] = {}
        self.update_expr: list[tuple[SharedVariable, Variable]] = []
        self.shared_inputs: list[SharedVariable] = []
        self.explicit: set[Variable] = set()

    def add_update(self, target: Any, expr: Any) -> None:
        """Record an explicit update of ``target``."""
        if not isinstance(target, SharedVariable):
            raise TypeError(f"update target {target} is not a shared variable")
        if target in self.update_d:
            raise ValueError(f"shared variable {target} is given two update expressions")
        try:
            expr = target.type.filter_variable(expr, allow_convert=True)
        except TypeError as exc:
            raise TypeError(
                f"the update of shared variable {target} must be of its type {target.type}, "
                f"got {getattr(expr, 'type', type(expr).__name__)}: {exc}"
            ) from exc
        self.update_d[target] = expr
        self.update_expr.append((target, expr))

    def _root(self, var: Variable) -> Variable:
        if isinstance(var, SharedVariable):
            if var not in self.shared_inputs:
                self.shared_inputs.append(var)
            self._default_update(var)
        return var if self.copy_inputs_over else var.clone()

    def _default_update(self, var: SharedVariable) -> None:
        default = getattr(var, "default_update", None)
        skip = self.skip_defaults
        if (
            default is None
            or skip is None
            or var in skip
            or var in self.update_d
            or var in self.explicit
        ):
            return
        try:
            expr = var.type.filter_variable(default, allow_convert=False)
        except TypeError as exc:
            raise TypeError(
                f"the default_update of shared variable {var} must be of its type {var.type}, "
                f"got {getattr(default, 'type', type(default).__name__)}"
            ) from exc
        self.update_d[var] = expr
        self.update_expr.append((var, expr))

    def rebuild(self, var: Variable) -> Variable:
        """Return ``var`` rebuilt through ``clone_d`` (depth first, without recursion)."""
        clone_d = self.clone_d
        stack = [var]
        while stack:
            v = stack.pop()
            if v in clone_d:
                continue
            node = v.owner
            if node is None:
                clone_d[v] = self._root(v)
                continue
            pending = [i for i in node.inputs if i not in clone_d]
            if pending:
                stack.append(v)
                stack.extend(reversed(pending))
                continue
            new_node = self._rebuild_node(node)
            for old, new in zip(node.outputs, new_node.outputs, strict=True):
                clone_d.setdefault(old, new)
        return clone_d[var]

    def _rebuild_node(self, node: Apply) -> Apply:
        new_inputs = [self.clone_d[i] for i in node.inputs]
        if self.copy_inputs_over and all(
            new is old for new, old in zip(new_inputs, node.inputs, strict=True)
        ):
            return node
        return node.clone_with_new_inputs(new_inputs, strict=self.strict)


def _given_value_as_constant(old: Any, value: Any) -> Variable:
    """A ``givens`` replacement given as a plain value: a constant of ``old``'s Type.

    Raises
    ------
    TypeError
        If ``value`` is not a value of that Type.
    """
    typ: Any = getattr(old, "type", None)
    try:
        constant: Variable = typ.make_constant(typ.filter(value, allow_downcast=True))
        return constant
    except (TypeError, ValueError, AttributeError) as exc:
        raise TypeError(
            f"givens: the replacement of {old} must be a Variable of type {typ} or a value of "
            f"that Type, got {type(value).__name__} {value!r}: {exc}"
        ) from exc


def rebuild_collect_shared(
    outputs: Variable | Out | Sequence[Variable | Out] | None,
    inputs: Sequence[Variable] | None = None,
    replace: dict[Variable, Variable] | Sequence[tuple[Variable, Variable]] | None = None,
    updates: dict[Variable, Any] | Sequence[tuple[Variable, Any]] | None = None,
    rebuild_strict: bool = True,
    copy_inputs_over: bool = True,
    no_default_updates: bool | Sequence[Variable] = False,
) -> tuple[list[Variable], Any, tuple[dict, dict, list, list]]:
    """Rebuild ``outputs`` with ``replace`` substituted; collect shared variables and updates.

    Parameters
    ----------
    outputs
        A Variable, an :class:`~opweave.compile.io.Out`, a list of them, or ``None``.
    inputs
        The function's explicit inputs; they stay as they are (with ``copy_inputs_over``)
        and get no default update.
    replace
        ``{variable: replacement}`` (or pairs): the ``givens``.
    updates
        ``{shared variable: expression}`` (or pairs): explicit updates.
    rebuild_strict
        Rebuilt nodes keep their output Types (replacements must have compatible Types);
        if false, ``make_node`` builds them anew.
    copy_inputs_over
        Keep roots as they are (otherwise they are cloned).
    no_default_updates
        ``True``: apply no ``default_update``; a list: skip those of the listed shared
        variables; ``False`` (default): apply them all.

    Returns
    -------
    tuple
        ``(input_variables, rebuilt_outputs, (clone_d, update_d, update_expr,
        shared_inputs))``: the inputs, the outputs in the form given, the map from
        original to rebuilt variables, ``{shared variable: rebuilt update}``, the
        ``(shared variable, rebuilt update)`` pairs in order (explicit ones first, then
        default updates in the order they were found), and every shared variable found.

    Raises
    ------
    TypeError
        A non-Variable ``replace`` key or replacement, an update of a non-shared variable
        or of the wrong type, a bad ``no_default_updates``.
    ValueError
        Two updates of one shared variable, or a ``replace`` entry that replaces an
        input of the function or a variable another replacement uses.
    """
    rb = _Rebuilder(
        rebuild_strict, copy_inputs_over, _excluded_from_default_updates(no_default_updates)
    )
    for target, expr in _pairs(updates, "updates"):
        rb.add_update(target, expr)
    input_variables = []
    for var in inputs or ():
        if not isinstance(var, Variable):
            raise TypeError(f"inputs must be Variables, got {type(var).__name__} {var!r}")
        rb.explicit.add(var)
        input_variables.append(rb.clone_d.setdefault(var, var if copy_inputs_over else var.clone()))
    for old, new in _pairs(replace, "givens"):
        if not isinstance(new, Variable):
            new = _given_value_as_constant(old, new)
        if old in rb.explicit:
            raise ValueError(
                f"givens: {old} is an input of the function, so replacing it would have no "
                "effect; make a new input and give an expression of it instead, e.g. "
                "function([y], f(x), givens={x: g(y)})"
            )
        if old in rb.clone_d:
            raise ValueError(
                f"givens: {old} is used by an earlier replacement, so it cannot be replaced "
                "itself (givens={a: b, b: a + 1} is not allowed)"
            )
        rebuilt = rb.rebuild(new)
        if rebuild_strict:
            try:
                rebuilt = old.type.filter_variable(rebuilt)
            except TypeError as exc:
                raise TypeError(
                    f"givens: the replacement of {old} must be of type {old.type}, got "
                    f"{rebuilt.type}: {exc}"
                ) from exc
        rb.clone_d[old] = rebuilt

    def rebuild_out(out: Any, position: int) -> Any:
        if isinstance(out, Out):
            return Out(rb.rebuild(out.variable), out.borrow)
        if isinstance(out, Variable):
            return rb.rebuild(out)
        raise TypeError(
            f"function output {position} must be a Variable or Out, got "
            f"{type(out).__name__}: {out!r}"
        )

    if outputs is None:
        rebuilt_outputs: Any = []
    elif isinstance(outputs, Variable | Out):
        rebuilt_outputs = rebuild_out(outputs, 0)
    else:
        rebuilt_outputs = [rebuild_out(o, i) for i, o in enumerate(outputs)]
    # Rebuild the update expressions; default updates found on the way join the list.
    i = 0
    while i < len(rb.update_expr):
        target, expr = rb.update_expr[i]
        rebuilt = rb.rebuild(expr)
        rb.update_d[target] = rebuilt
        rb.update_expr[i] = (target, rebuilt)
        if target not in rb.shared_inputs:
            rb.shared_inputs.append(target)
        i += 1
    return (
        input_variables,
        rebuilt_outputs,
        (rb.clone_d, rb.update_d, rb.update_expr, rb.shared_inputs),
    )
