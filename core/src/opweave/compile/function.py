"""``function``: compile symbolic inputs and outputs into a callable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.compile.function_maker import FunctionMaker, UnusedInputError
from opweave.compile.io import In, Out
from opweave.compile.mode import Mode
from opweave.graph.basic import Constant, Variable, clone_replace

__all__ = ["UnusedInputError", "function"]


def _as_pairs(
    value: dict[Variable, Any] | Sequence[tuple[Variable, Any]] | None, what: str
) -> list[tuple[Variable, Any]]:
    if value is None:
        return []
    items = list(value.items()) if isinstance(value, dict) else list(value)
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2):
            raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs")
        if not isinstance(item[0], Variable):
            raise TypeError(f"{what}: {item[0]!r} is not a Variable")
    return [tuple(item) for item in items]  # type: ignore[misc]


def function(
    inputs: Sequence[Variable | In],
    outputs: Variable | Out | Sequence[Variable | Out] | None = None,
    mode: str | Mode | None = None,
    updates: dict[Variable, Any] | Sequence[tuple[Variable, Any]] | None = None,
    givens: dict[Variable, Any] | Sequence[tuple[Variable, Any]] | None = None,
    no_default_updates: bool = False,
    accept_inplace: bool = False,
    name: str | None = None,
    rebuild_strict: bool = True,
    allow_input_downcast: bool | None = None,
    profile: Any = None,
    on_unused_input: str | None = None,
    trust_input: bool = False,
) -> Any:
    """Compile a function computing ``outputs`` from ``inputs``.

    Parameters
    ----------
    inputs
        Variables (or :class:`In`) the caller passes, in order. A :class:`Constant`
        cannot be an input; every non-constant root the outputs need must be one
        (shared variables are found automatically).
    outputs
        A Variable (the function returns one value), a list (it returns a list),
        or ``None`` (it returns an empty list, useful with ``updates``).
    mode
        A :class:`Mode`, a mode name (``"FAST_RUN"``, ``"FAST_COMPILE"``), or ``None``
        for ``config.mode``.
    updates
        ``(shared variable, expression)`` pairs: after each call the shared
        variable holds the expression's value.
    givens
        ``(variable, replacement)`` pairs substituted in the graph before compiling.
    allow_input_downcast
        Passed to every input's ``Type.filter``.
    on_unused_input
        ``"raise"`` (default), ``"warn"`` or ``"ignore"`` for inputs the outputs do not use.
    trust_input
        Skip argument checking (the caller guarantees valid values).

    Returns
    -------
    Function
        The compiled callable; ``f.maker.fgraph`` is its rewritten graph.

    Raises
    ------
    TypeError
        A Constant among the inputs, or a non-Variable input or output.
    opweave.graph.utils.MissingInputError
        The outputs need a variable that is not an input.
    """
    ins = [_as_in(x, i, allow_input_downcast) for i, x in enumerate(inputs)]
    single = isinstance(outputs, Variable | Out)
    if outputs is None:
        outs: list[Out] = []
    elif single:
        outs = [_as_out(outputs, 0)]  # type: ignore[arg-type]
    else:
        outs = [_as_out(o, i) for i, o in enumerate(outputs)]  # type: ignore[union-attr]
    update_pairs = _as_pairs(updates, "updates")
    given_pairs = _as_pairs(givens, "givens")
    if given_pairs:
        exprs = [o.variable for o in outs] + [u for _, u in update_pairs]
        replaced = clone_replace(exprs, given_pairs) if exprs else []
        outs = [Out(v, o.borrow) for v, o in zip(replaced, outs, strict=False)]
        update_pairs = [
            (s, v) for (s, _), v in zip(update_pairs, replaced[len(outs) :], strict=True)
        ]
    maker = FunctionMaker(
        ins,
        outs,
        mode=mode,
        updates=update_pairs,
        name=name,
        on_unused_input=on_unused_input or "raise",
        accept_inplace=accept_inplace,
    )
    fn = maker.create(unpack_single=single)
    fn.trust_input = trust_input
    return fn


def _as_in(x: Any, position: int, allow_downcast: bool | None) -> In:
    if isinstance(x, In):
        if x.allow_downcast is None:
            x.allow_downcast = allow_downcast
        var = x.variable
    elif isinstance(x, Variable):
        var = x
        x = In(x, allow_downcast=allow_downcast)
    else:
        raise TypeError(
            f"function input {position} must be a Variable or In, got {type(x).__name__}: {x!r}"
        )
    if isinstance(var, Constant):
        raise TypeError(
            f"function input {position} ({var}) is a Constant: constants have a fixed value and "
            "cannot be inputs; use a variable of the same type instead"
        )
    if var.owner is not None:
        raise TypeError(
            f"function input {position} ({var}) is computed by {var.owner.op}; inputs must be "
            "roots of the graph (use givens to replace an intermediate)"
        )
    return x


def _as_out(x: Any, position: int) -> Out:
    if isinstance(x, Out):
        return x
    if isinstance(x, Variable):
        return Out(x)
    raise TypeError(
        f"function output {position} must be a Variable or Out, got {type(x).__name__}: {x!r}"
    )
