"""Vector-Jacobian products (:func:`pullback`, also :func:`Lop`) and Jacobian-vector
products (:func:`pushforward`, also :func:`Rop`), under PyTensor's current and earlier names."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

from opweave.gradient._helpers import (
    as_list,
    as_variable,
    cast_to,
    check_option,
    dtype_of,
    filled_like,
    float_filled_like,
    floatx,
    format_as,
    is_discrete,
    ndim_of,
    sum_terms,
)
from opweave.gradient.opsupport import DisconnectedInputError
from opweave.gradient.reverse import _DISCONNECTED_INPUTS, _RETURN_DISCONNECTED, grad
from opweave.graph.basic import Apply, Variable, ancestors, clone_replace, io_toposort
from opweave.graph.type import DisconnectedType, NullType, disconnected_type

__all__ = ["Lop", "Rop", "pullback", "pushforward"]


def Lop(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    eval_points: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: Literal["ignore", "warn", "raise"] = "raise",
) -> Any:
    """Return the L-operator: ``eval_points`` left-multiplied by the Jacobian of ``f``.

    ``Lop(f, wrt, v)[j] = sum_i v[i] . d f[i] / d wrt[j]`` (a vector-Jacobian
    product), computed by reverse mode as
    ``grad(None, wrt, known_grads=dict(zip(f, eval_points)))``.

    Parameters
    ----------
    f
        A variable or a list/tuple of variables.
    wrt
        A variable or a list/tuple of variables; the result has the same form.
    eval_points
        One vector per ``f``, of ``f``'s shape.
    consider_constant, disconnected_inputs
        As for :func:`~opweave.gradient.grad`.

    Returns
    -------
    Variable or list or tuple
        One product per ``wrt``.
    """
    return _vector_jacobian(
        "Lop", "eval_points", f, wrt, eval_points, consider_constant, disconnected_inputs, "zero"
    )


def _vector_jacobian(
    who: str,
    vectors_name: str,
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    vectors: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None,
    disconnected_inputs: Literal["ignore", "warn", "raise"],
    return_disconnected: Literal["none", "zero", "disconnected"],
) -> Any:
    """What :func:`Lop` and :func:`pullback` compute; ``who`` and ``vectors_name`` name the
    function and its third argument in error messages."""
    f_list, _, _ = as_list(f)
    vec_list, _, _ = as_list(vectors)
    if len(f_list) != len(vec_list):
        raise ValueError(
            f"{who}: f has {len(f_list)} variables but {vectors_name} has {len(vec_list)}; "
            "they must match one to one"
        )
    f_vars = [as_variable(x, f"{who}: f[{i}]") for i, x in enumerate(f_list)]
    vecs = [as_variable(x, f"{who}: {vectors_name}[{i}]") for i, x in enumerate(vec_list)]
    wrt_list, use_list, use_tuple = as_list(wrt)
    wrt_vars = [as_variable(x, f"{who}: wrt[{i}]") for i, x in enumerate(wrt_list)]
    result = grad(
        None,
        wrt_vars,
        consider_constant=consider_constant,
        disconnected_inputs=disconnected_inputs,
        known_grads=_merge_known(f_vars, vecs),
        return_disconnected=return_disconnected,
    )
    return format_as(use_list, use_tuple, result)


def _merge_known(keys: Sequence[Variable], values: Sequence[Variable]) -> dict[Variable, Variable]:
    """``dict(zip(keys, values))``, adding up the values of repeated keys."""
    grouped: dict[Variable, list[Variable]] = {}
    for k, v in zip(keys, values, strict=True):
        grouped.setdefault(k, []).append(v)
    return {k: sum_terms(k, vs) for k, vs in grouped.items()}


def Rop(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    eval_points: Variable | Sequence[Variable],
    disconnected_outputs: Literal["ignore", "warn", "raise"] = "raise",
    return_disconnected: Literal["zero", "None", "none", "disconnected"] = "zero",
    use_op_rop_implementation: bool = True,
) -> Any:
    """Return the R-operator: the Jacobian of ``f`` right-multiplied by ``eval_points``.

    ``Rop(f, wrt, v)[i] = sum_j d f[i] / d wrt[j] . v[j]`` (a Jacobian-vector product).

    Parameters
    ----------
    f
        A variable or a list/tuple of variables; the result has the same form.
    wrt
        A variable or a list/tuple of variables.
    eval_points
        One variable per ``wrt``, of its shape.
    disconnected_outputs
        What to do for an ``f`` that does not depend on any ``wrt``: ``"raise"`` a
        :class:`~opweave.gradient.DisconnectedInputError`, ``"warn"`` or ``"ignore"``.
    return_disconnected
        What to return for such an ``f``: ``"zero"`` (zeros like it), ``"None"`` or
        ``"disconnected"`` (a :class:`DisconnectedType` variable).
    use_op_rop_implementation
        ``True`` (default): forward mode, calling each node's
        ``op.R_op(inputs, eval_points)`` in topological order. ``False``: derive the
        product from ``L_op`` applied twice (for dummy ``u``, ``g(u) = J^T u`` is
        linear in ``u``, and the gradient of ``v . g(u)`` with respect to ``u`` is
        ``J v``), which works for every Op with a gradient.

    Returns
    -------
    Variable or list or tuple
        One product per ``f``.

    Raises
    ------
    NotImplementedError
        If an Op on the path does not implement ``R_op`` (the message names it).
    ValueError
        Mismatched ``wrt``/``eval_points``, or an ``R_op`` returning the wrong number
        of results.

    Notes
    -----
    In forward mode the eval point of an input that does not depend on ``wrt`` is
    ``None`` (read: zero); a node whose inputs all have ``None`` is skipped, and
    ``R_op`` implementations treat a ``None`` eval point as zero. An ``R_op`` may
    return ``None`` for an output that does not depend on the eval points.
    """
    disconnected_outputs = check_option(
        "disconnected_outputs", disconnected_outputs, _DISCONNECTED_INPUTS
    )  # type: ignore[assignment]
    return_disconnected_l = check_option(
        "return_disconnected", return_disconnected, _RETURN_DISCONNECTED
    )
    f_list, use_list, use_tuple = as_list(f)
    f_vars = [as_variable(x, f"Rop: f[{i}]") for i, x in enumerate(f_list)]
    wrt_list, _, _ = as_list(wrt)
    wrt_vars = [as_variable(x, f"Rop: wrt[{i}]") for i, x in enumerate(wrt_list)]
    ev_list, _, _ = as_list(eval_points)
    evs = [as_variable(x, f"Rop: eval_points[{i}]") for i, x in enumerate(ev_list)]
    if len(wrt_vars) != len(evs):
        raise ValueError(
            f"Rop: wrt has {len(wrt_vars)} variables but eval_points has {len(evs)}; they must "
            "match one to one"
        )
    for i, (w, v) in enumerate(zip(wrt_vars, evs, strict=True)):
        w_ndim, v_ndim = ndim_of(w), ndim_of(v)
        if w_ndim is not None and v_ndim is not None and w_ndim != v_ndim:
            raise ValueError(
                f"Rop: wrt[{i}] ({w}) has {w_ndim} dimensions but eval_points[{i}] ({v}) has "
                f"{v_ndim}"
            )
    if len(set(wrt_vars)) != len(wrt_vars):
        raise ValueError("Rop: a variable appears twice in wrt")

    if use_op_rop_implementation:
        products = _rop_forward(f_vars, wrt_vars, evs)
    else:
        # As PyTensor's two pull-backs: the first checks that each variable in wrt
        # reaches f; an output whose product is then disconnected (as zero_grad(x) is)
        # gets a zero product, with no message.
        products, unreached = _rop_via_lop(f_vars, wrt_vars, evs)
        for i in unreached:
            _report_disconnected(
                f"Rop was asked for the product at wrt[{i}] ({wrt_vars[i]}), on which no "
                "variable in f depends, or only through non-differentiable operations",
                disconnected_outputs,
            )
    results: list[Variable | None] = []
    for i, (out, r) in enumerate(zip(f_vars, products, strict=True)):
        if r is not None and not isinstance(r.type, DisconnectedType):
            results.append(r)
            continue
        if use_op_rop_implementation:
            _report_disconnected(
                f"Rop was asked for the product of f[{i}] ({out}), which does not depend on "
                "any variable in wrt, or only through non-differentiable operations",
                disconnected_outputs,
            )
        if return_disconnected_l == "zero":
            results.append(filled_like(out, 0))
        elif return_disconnected_l == "none":
            results.append(None)
        else:
            results.append(disconnected_type())
    return format_as(use_list, use_tuple, results)


def _report_disconnected(message: str, option: str) -> None:
    """Raise :class:`DisconnectedInputError` or warn with ``message``, as ``option`` says."""
    if option == "raise":
        raise DisconnectedInputError(
            message + " (pass disconnected_outputs='warn' or 'ignore' to get zeros)"
        )
    if option == "warn":
        warnings.warn(message, UserWarning, stacklevel=3)


def _rop_forward(
    f: list[Variable], wrt: list[Variable], eval_points: list[Variable]
) -> list[Variable | None]:
    """Forward mode through each node's ``R_op``."""
    points: dict[Variable, Variable] = dict(zip(wrt, eval_points, strict=True))
    for node in io_toposort(wrt, f):
        local = [points.get(ipt) for ipt in node.inputs]
        if all(p is None for p in local):
            continue
        local = [
            None if p is None else _coerce_eval_point(node, i, ipt, p)
            for i, (ipt, p) in enumerate(zip(node.inputs, local, strict=True))
        ]
        try:
            returned = node.op.R_op(list(node.inputs), local)
        except NotImplementedError as exc:
            raise NotImplementedError(
                f"Rop: {node.op} does not implement R_op (needed for the node {node}); "
                "implement R_op(inputs, eval_points) on the Op, or call "
                "Rop(..., use_op_rop_implementation=False) to derive it from L_op"
            ) from exc
        if isinstance(returned, Variable) or not isinstance(returned, Sequence):
            raise TypeError(
                f"{node.op}.R_op must return a list with one result per output, got "
                f"{type(returned).__name__}: {returned!r}"
            )
        if len(returned) != len(node.outputs):
            raise ValueError(
                f"{node.op}.R_op returned {len(returned)} results, but the node has "
                f"{len(node.outputs)} outputs: it must return one per output"
            )
        for j, (out, r) in enumerate(zip(node.outputs, returned, strict=True)):
            if r is None or out in points:
                continue
            if not isinstance(r, Variable):
                raise TypeError(
                    f"{node.op}.R_op returned {type(r).__name__} {r!r} for output {j}; expected "
                    "a Variable or None"
                )
            if isinstance(r.type, DisconnectedType):
                continue
            points[out] = r
    return [points.get(out) for out in f]


def _coerce_eval_point(node: Apply, i: int, ipt: Variable, point: Variable) -> Variable:
    """Give an eval point its input's Type (casting the dtype when needed)."""
    if point.type == ipt.type:
        return point
    try:
        return ipt.type.filter_variable(point)
    except (TypeError, ValueError):
        pass
    if dtype_of(ipt) is not None and dtype_of(point) is not None:
        try:
            return ipt.type.filter_variable(cast_to(point, dtype_of(ipt)))
        except (TypeError, ValueError):
            pass
    raise TypeError(
        f"Rop: the eval point {point} (Type {point.type}) for input {i} ({ipt}) of {node.op} "
        f"cannot be converted to the input's Type {ipt.type}"
    )


def _rop_via_lop(
    f: list[Variable], wrt: list[Variable], eval_points: list[Variable]
) -> tuple[list[Variable | None], list[int]]:
    """The R-operator from two reverse passes (no ``R_op`` needed), and the positions in
    ``wrt`` of the variables that no output of ``f`` depends on."""
    dummies = [_dummy_like(out) for out in f]
    g = grad(
        None,
        wrt,
        known_grads=_merge_known(f, dummies),
        disconnected_inputs="ignore",
        return_disconnected="disconnected",
    )
    unreached = [i for i, gi in enumerate(g) if isinstance(gi.type, DisconnectedType)]
    pairs = [
        (gi, v)
        for gi, v in zip(g, eval_points, strict=True)
        if not isinstance(gi.type, DisconnectedType | NullType)
    ]
    if not pairs:
        return [None] * len(f), unreached
    known = _merge_known([p[0] for p in pairs], [p[1] for p in pairs])
    products = grad(
        None,
        dummies,
        known_grads=known,
        disconnected_inputs="ignore",
        return_disconnected="disconnected",
    )
    results: list[Variable | None] = []
    dummy_of = {u: out for u, out in zip(dummies, f, strict=True)}
    for r in products:
        if isinstance(r.type, DisconnectedType):
            results.append(None)
            continue
        # J v does not depend on the dummies' values (g is linear in them), but the
        # graph may still mention them: substitute zeros shaped like the outputs
        # (zeros_like(u) would itself depend on u) so that it compiles.
        present = [u for u in ancestors([r]) if u in dummy_of]
        if present:
            r = clone_replace(r, {u: float_filled_like(dummy_of[u], 0) for u in present})
        results.append(r)
    return results, unreached


def _dummy_like(out: Variable) -> Variable:
    """A fresh variable standing for the gradient of ``out`` (float even for ints)."""
    if is_discrete(dtype_of(out)):
        return out.type.clone(dtype=floatx())()
    return out.type()


def pullback(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    cotangents: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: Literal["ignore", "warn", "raise"] = "raise",
    return_disconnected: Literal["none", "zero", "disconnected"] = "zero",
) -> Any:
    """The pull-back (vector-Jacobian product) of ``f`` with respect to ``wrt`` at
    ``cotangents``: the Jacobian of ``f`` left-multiplied by them, PyTensor's current name
    for :func:`Lop`.

    Parameters
    ----------
    f
        A variable or a list/tuple of variables.
    wrt
        A variable or a list/tuple of variables; the result has the same form.
    cotangents
        One variable per ``f``, of its shape.
    consider_constant, disconnected_inputs, return_disconnected
        As for :func:`~opweave.gradient.grad`.

    Returns
    -------
    Variable or list or tuple
        One product per ``wrt``.
    """
    return _vector_jacobian(
        "pullback",
        "cotangents",
        f,
        wrt,
        cotangents,
        consider_constant,
        disconnected_inputs,
        return_disconnected,
    )


def pushforward(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    tangents: Variable | Sequence[Variable],
    disconnected_outputs: Literal["ignore", "warn", "raise"] = "raise",
    return_disconnected: Literal["none", "zero", "disconnected"] = "zero",
    use_op_pushforward: bool = False,
) -> Any:
    """The push-forward (Jacobian-vector product) of ``f`` with respect to ``wrt`` at
    ``tangents``: the Jacobian of ``f`` right-multiplied by them, PyTensor's current name
    for :func:`Rop`.

    As in PyTensor, by default it is computed through two pull-backs (which every Op with a
    gradient supports); ``use_op_pushforward=True`` uses the Ops' ``R_op`` in forward mode
    instead. The other parameters are :func:`Rop`'s.
    """
    return Rop(
        f,
        wrt,
        tangents,
        disconnected_outputs=disconnected_outputs,
        return_disconnected=return_disconnected,
        use_op_rop_implementation=use_op_pushforward,
    )
