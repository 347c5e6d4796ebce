"""``check_op``: an Op against the Op contract, on every installed CPU linker."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opweave.compile.debug.debugmode.checks import (
    check_destroy_map,
    check_view_map,
    copy_value,
    preallocated_storage,
    values_equal,
    values_match,
)
from opweave.compile.debug.debugmode.errors import DebugModeError
from opweave.compile.function import function
from opweave.compile.mode import Mode
from opweave.gradient import Rop
from opweave.gradient.verify import GradientError, verify_grad
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType
from opweave.graph.utils import MethodNotDefined, NoImplementationError
from opweave.plugins import get_plugin_manager
from opweave.scalar.type import get_scalar_type
from opweave.tensor.basic import as_tensor_variable
from opweave.tensor.type import TensorType
from opweave.testing.errors import CheckReport, ContractViolation, describe
from opweave.testing.linkers import c_of_op, c_version, usable_linkers

__all__ = ["check_op", "default_inputs", "find_perform"]

_PREALLOC_MODES = ("previous", "wrong_size", "strided", "f_contiguous")


def default_inputs(values: Sequence[Any]) -> list[Variable]:
    """Symbolic inputs for ``values``: a tensor per array (static 1 where the value has 1,
    as PyTensor's testers make them), a scalar per NumPy scalar.

    Raises
    ------
    TypeError
        For a value of another kind: pass ``make_inputs`` to ``check_op`` then.
    """
    inputs: list[Variable] = []
    for i, value in enumerate(values):
        if isinstance(value, np.ndarray):
            shape = tuple(1 if s == 1 else None for s in value.shape)
            inputs.append(TensorType(str(value.dtype), shape=shape)(f"in{i}"))
        elif isinstance(value, np.generic):
            inputs.append(get_scalar_type(str(value.dtype))(f"in{i}"))
        else:
            raise TypeError(
                f"check_op cannot make a symbolic input for input {i}, a "
                f"{type(value).__name__}: pass make_inputs=lambda values: [...] returning one "
                "Variable per value"
            )
    return inputs


def find_perform(op: Op, node: Apply) -> Callable[..., None] | None:
    """The Python implementation of ``node``: the Op's own ``perform`` or the one a backend
    gives through ``opweave_implementation(op, node, backend="py")``."""
    for cls in type(op).__mro__:
        if cls is Op:
            break
        if "perform" in vars(cls):
            return op.perform
    return get_plugin_manager().hook.opweave_implementation(op=op, node=node, backend="py")


def _defines(op: Op, method: str) -> bool:
    return any(
        method in vars(cls) for cls in type(op).__mro__ if cls is not Op and cls is not object
    )


def _check_make_node(op: Op, inputs: list[Variable], report: CheckReport) -> Apply:
    node = op.make_node(*inputs)
    again = op.make_node(*inputs)
    same = (
        node.op == again.op
        and len(node.outputs) == len(again.outputs)
        and all(a.type == b.type for a, b in zip(node.outputs, again.outputs, strict=False))
        and list(node.inputs) == list(again.inputs)
    )
    if not same or node.op != op:
        raise ContractViolation(
            "make_node_deterministic",
            op,
            f"make_node on the same inputs gave {node} with outputs "
            f"{[o.type for o in node.outputs]}, then {again} with outputs "
            f"{[o.type for o in again.outputs]}",
            "make_node is deterministic: the same inputs give an equal Op and equal output Types",
        )
    report.ok("make_node_deterministic")
    return node


def _check_props(op: Op, report: CheckReport) -> None:
    props = getattr(op, "__props__", None)
    if props is None:
        report.skip("props_eq_hash", "the Op has no __props__")
        return
    copies = [("a copy", copy.copy(op))]
    try:
        copies.append(("a pickled and unpickled copy", pickle.loads(pickle.dumps(op))))
    except Exception as exc:
        raise ContractViolation(
            "props_eq_hash",
            op,
            f"pickling the Op raised {type(exc).__name__}: {exc}",
            "an Op is picklable (compiled functions are)",
        ) from exc
    try:
        copies.append(("an Op rebuilt from its __props__", type(op)(**op._props_dict())))
    except Exception:  # the constructor need not take the props as keywords
        pass
    for how, other in copies:
        if op != other or hash(op) != hash(other):
            raise ContractViolation(
                "props_eq_hash",
                op,
                f"{op!r} and {how} ({other!r}) compare {op == other} with hashes {hash(op)} "
                f"and {hash(other)}",
                "__props__ drive __eq__ and __hash__: equal props give equal Ops, equal hashes",
            )
    report.ok("props_eq_hash")


def _compile(op: Op, inputs: list[Variable], outputs: list[Variable], linker: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(
            inputs, outputs, mode=Mode(linker=linker, optimizer=None), on_unused_input="ignore"
        )


def _node_failed(op: Op, linker: str, exc: Exception) -> ContractViolation:
    """The violation of a node that failed to compile or run on ``linker``."""
    return ContractViolation(
        f"linker_{linker}",
        op,
        f"on linker {linker!r} the node failed with {type(exc).__name__}: {exc}",
        "an Op runs on every installed linker (in Python where it has no code there)",
    )


def _check_linkers(
    op: Op,
    node: Apply,
    values: Sequence[Any],
    reference: list[Any],
    linkers: Sequence[str],
    report: CheckReport,
) -> None:
    has_c = c_of_op(node) is not None
    for linker in linkers:
        if linker == "c" and not has_c:
            report.skip(f"linker_{linker}", "the Op has no C code")
            continue
        try:
            fn = _compile(op, list(node.inputs), list(node.outputs), linker)
        except NoImplementationError as exc:
            # a linker without a Python fallback (jax) refuses what it cannot lower
            report.skip(f"linker_{linker}", f"the linker refuses the node: {exc}")
            continue
        except Exception as exc:
            raise _node_failed(op, linker, exc) from exc
        try:
            got = fn.maker.linker.host_values(fn(*[copy_value(v) for v in values]))
        except Exception as exc:
            raise _node_failed(op, linker, exc) from exc
        for j, (var, want, have) in enumerate(zip(node.outputs, reference, got, strict=True)):
            if not values_match(var, want, have):
                raise ContractViolation(
                    f"linker_{linker}",
                    op,
                    f"output {j} on linker {linker!r} is {describe(have)}; the Python "
                    f"implementation gives {describe(want)} (inputs "
                    f"{', '.join(describe(v) for v in values)})",
                    "every linker computes the same values (within values_eq_approx)",
                )
        report.ok(f"linker_{linker}")


def _run_perform(
    perform: Callable[..., None], node: Apply, values: Sequence[Any], filling: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    given = [copy_value(v) for v in values]
    storage = [[v] for v in filling]
    perform(node, given, storage)
    return given, [cell[0] for cell in storage]


def _check_storage_reuse(
    op: Op,
    node: Apply,
    perform: Callable[..., None],
    values: Sequence[Any],
    reference: list[Any],
    report: CheckReport,
) -> None:
    for mode in _PREALLOC_MODES:
        for filling in preallocated_storage(mode, reference, None):
            _, got = _run_perform(perform, node, values, filling)
            for j, (var, want, have) in enumerate(zip(node.outputs, reference, got, strict=True)):
                if not values_match(var, want, have):
                    raise ContractViolation(
                        "output_storage_reuse",
                        op,
                        f"with output {j}'s storage pre-filled ({mode}: "
                        f"{describe(filling[j])}) perform gave {describe(have)} instead of "
                        f"{describe(want)}",
                        "perform may reuse the storage it is given, but only when its shape, "
                        "dtype and layout fit; it never relies on its contents",
                    )
            report.ok("output_storage_reuse")


def _check_aliasing(
    op: Op,
    node: Apply,
    perform: Callable[..., None],
    values: Sequence[Any],
    hidden: Sequence[int],
    report: CheckReport,
) -> None:
    given, got = _run_perform(perform, node, values, [None] * len(node.outputs))
    before = dict(zip(node.inputs, values, strict=True))
    after = dict(zip(node.inputs, given, strict=True))
    try:
        check_destroy_map(node, before, after, "py", values)
    except DebugModeError as exc:
        raise ContractViolation(
            "destroy_map",
            op,
            str(exc),
            "an Op writes into an input only when destroy_map declares it",
        ) from exc
    report.ok("destroy_map")
    try:
        check_view_map(node, after, got, hidden, "py", values)
    except DebugModeError as exc:
        raise ContractViolation(
            "view_map",
            op,
            str(exc),
            "an output shares memory only with the inputs view_map (or destroy_map) declares",
        ) from exc
    report.ok("view_map")


def _symbolic_shape(var: Variable) -> tuple[Any, ...]:
    if isinstance(var.type, TensorType):
        return tuple(var.shape[k] for k in range(var.type.ndim))
    return ()


def _check_infer_shape(
    op: Op, node: Apply, values: Sequence[Any], reference: list[Any], report: CheckReport
) -> None:
    if not _defines(op, "infer_shape"):
        report.skip("infer_shape", "the Op has no infer_shape")
        return
    try:
        shapes = op.infer_shape(None, node, [_symbolic_shape(v) for v in node.inputs])
    except (MethodNotDefined, NotImplementedError) as exc:
        report.skip("infer_shape", f"infer_shape refused: {exc}")
        return
    flat = [as_tensor_variable(d) for shape in shapes for d in shape]
    dims = _compile(op, list(node.inputs), flat, "py")(*values) if flat else []
    k = 0
    for j, (shape, value) in enumerate(zip(shapes, reference, strict=True)):
        inferred = tuple(int(d) for d in dims[k : k + len(shape)])
        k += len(shape)
        if inferred != np.shape(value):
            raise ContractViolation(
                "infer_shape",
                op,
                f"infer_shape says output {j} has shape {inferred}, the computed value has "
                f"{np.shape(value)} (inputs {', '.join(describe(v) for v in values)})",
                "infer_shape gives the shapes perform computes",
            )
    report.ok("infer_shape")


def _float_arrays(values: Sequence[Any]) -> bool:
    return all(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in values)


def _check_grad(
    op: Op, node: Apply, values: Sequence[Any], report: CheckReport, tol: dict[str, Any]
) -> None:
    if not (_defines(op, "grad") or _defines(op, "L_op")):
        report.skip("verify_grad", "the Op has no grad")
        return
    if not _float_arrays(values):
        report.skip("verify_grad", "verify_grad needs float arrays as inputs")
        return
    for j, out in enumerate(node.outputs):
        if not (isinstance(out.type, TensorType) and out.type.dtype.startswith("float")):
            continue

        def fun(*xs: Variable, j: int = j) -> Variable:
            return op(*xs, return_list=True)[j]

        try:
            verify_grad(fun, [v.copy() for v in values], rng=np.random.default_rng(42), **tol)
        except GradientError as exc:
            raise ContractViolation(
                "verify_grad",
                op,
                f"the gradient of output {j}: {exc}",
                "grad agrees with finite differences",
            ) from exc
    report.ok("verify_grad")


def _check_rop(
    op: Op, node: Apply, values: Sequence[Any], report: CheckReport, tol: dict[str, Any]
) -> None:
    if not _defines(op, "R_op"):
        report.skip("R_op", "the Op has no R_op")
        return
    if not _float_arrays(values):
        report.skip("R_op", "the R_op check needs float arrays as inputs")
        return
    rng = np.random.default_rng(7)
    points = [rng.standard_normal(v.shape).astype(v.dtype) for v in values]
    evs = [i.type() for i in node.inputs]
    outs = [o for o in node.outputs if isinstance(o.type, TensorType)]
    try:
        rops = Rop(outs, list(node.inputs), evs)
    except NotImplementedError as exc:
        report.skip("R_op", f"R_op refused: {exc}")
        return
    got = _compile(op, [*node.inputs, *evs], list(rops), "py")(*values, *points)
    forward = _compile(op, list(node.inputs), outs, "py")
    low = any(v.dtype.itemsize < 8 for v in values)  # float32/float16: coarser steps
    eps = tol.get("eps") or (3e-3 if low else 1e-6)
    rtol = tol.get("rel_tol") or (1e-2 if low else 1e-4)
    atol = tol.get("abs_tol") or (1e-2 if low else 1e-4)
    plus = forward(*[v + eps * p for v, p in zip(values, points, strict=True)])
    minus = forward(*[v - eps * p for v, p in zip(values, points, strict=True)])
    for j, (have, a, b) in enumerate(zip(got, plus, minus, strict=True)):
        want = (np.asarray(a, dtype="float64") - b) / (2 * eps)
        if not np.allclose(have, want, rtol=rtol, atol=atol):
            raise ContractViolation(
                "R_op",
                op,
                f"R_op of output {j} is {describe(np.asarray(have))}, finite differences give "
                f"{describe(want)}",
                "R_op gives the Jacobian times the evaluation points",
            )
    report.ok("R_op")


def _check_connection_pattern(op: Op, node: Apply, report: CheckReport) -> None:
    if not _defines(op, "connection_pattern"):
        report.skip("connection_pattern", "the Op has no connection_pattern")
        return
    pattern = op.connection_pattern(node)
    ograds = [o.type() for o in node.outputs]
    try:
        grads = op.L_op(list(node.inputs), list(node.outputs), ograds)
    except NotImplementedError as exc:
        report.skip("connection_pattern", f"grad refused: {exc}")
        return
    for i, row in enumerate(pattern):
        if not any(row) and not isinstance(grads[i].type, DisconnectedType):
            raise ContractViolation(
                "connection_pattern",
                op,
                f"connection_pattern says input {i} affects no output, but its gradient is "
                f"{grads[i]} of type {grads[i].type}",
                "an input that connection_pattern disconnects gets a DisconnectedType gradient",
            )
    report.ok("connection_pattern")


def _check_c_version(op: Op, node: Apply, report: CheckReport) -> None:
    impl = c_of_op(node)
    if impl is None:
        report.skip("c_code_cache_version", "the Op has no C code (or no C backend is usable here)")
        return
    if not c_version(impl, node):
        raise ContractViolation(
            "c_code_cache_version",
            op,
            f"the C code of {node} has no c_code_cache_version",
            "C code declares a cache version (bump it when the code changes)",
        )
    report.ok("c_code_cache_version")


def check_op(
    op: Op,
    input_values: Sequence[Any],
    *,
    make_inputs: Callable[[Sequence[Any]], Sequence[Variable]] | None = None,
    grad: bool = True,
    rop: bool = True,
    linkers: Sequence[str] | None = None,
    hidden_outputs: Sequence[int] | None = None,
    eps: float | None = None,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
) -> CheckReport:
    """Check ``op`` applied to ``input_values`` against the Op contract.

    Rules: ``make_node`` is deterministic; ``__props__`` drive equality and hashing (also
    through pickling); the values agree on every linker (``py`` is the reference, ``c``
    only when the Op has C code); ``perform`` gives the right values with pre-filled
    output storage (previous values, wrong shapes, strided and Fortran-ordered buffers);
    inputs are not destroyed unless ``destroy_map`` says so and outputs alias only what
    ``view_map`` declares; ``infer_shape`` matches the computed shapes; the gradient
    (``verify_grad``) and ``R_op`` agree with finite differences; ``connection_pattern``
    matches the gradient's disconnected entries; C code carries a cache version.

    Parameters
    ----------
    op
        The Op instance.
    input_values
        One value per input.
    make_inputs
        ``make_inputs(input_values)`` returns the symbolic inputs; by default a tensor per
        array and a scalar per NumPy scalar (:func:`default_inputs`).
    grad, rop
        Run the gradient and ``R_op`` checks (only for float array inputs).
    linkers
        The linkers to compare; default: every usable CPU linker.
    hidden_outputs
        Outputs that are private buffers (they may alias other outputs); default: every
        output but ``op.default_output`` when the Op sets it.
    eps, abs_tol, rel_tol
        Passed to ``verify_grad`` (and used by the ``R_op`` check).

    Returns
    -------
    CheckReport
        The rules verified and those that did not apply.

    Raises
    ------
    ContractViolation
        At the first rule broken.
    """
    report = CheckReport(op)
    values = list(input_values)
    inputs = list(make_inputs(values) if make_inputs else default_inputs(values))
    if len(inputs) != len(values):
        raise ValueError(
            f"make_inputs returned {len(inputs)} variables for {len(values)} input values"
        )
    values = [i.type.filter(v) for i, v in zip(inputs, values, strict=True)]
    node = _check_make_node(op, inputs, report)
    _check_props(op, report)
    perform = find_perform(op, node)
    if perform is None:
        raise ContractViolation(
            "perform",
            op,
            "no Python implementation: the Op has no perform and no backend "
            "answers opweave_implementation(op, node, 'py')",
            "every Op has a Python implementation (the reference the other backends match)",
        )
    _, reference = _run_perform(perform, node, values, [None] * len(node.outputs))
    for j, (var, value) in enumerate(zip(node.outputs, reference, strict=True)):
        if not var.type.is_valid_value(value):
            raise ContractViolation(
                "perform",
                op,
                f"output {j} is {describe(value)}, which its Type {var.type} refuses",
                "perform stores values of the output's Type",
            )
    _, again = _run_perform(perform, node, values, [None] * len(node.outputs))
    if not all(
        values_equal(v, a, b) for v, a, b in zip(node.outputs, reference, again, strict=True)
    ):
        report.skip("deterministic", "perform is not deterministic: values compared approximately")
    if hidden_outputs is None:
        default = getattr(op, "default_output", None)
        n = len(node.outputs)
        hidden_outputs = [] if default is None else [k for k in range(n) if k != default]
    tol = {"eps": eps, "abs_tol": abs_tol, "rel_tol": rel_tol}
    _check_linkers(op, node, values, reference, linkers or usable_linkers(), report)
    _check_storage_reuse(op, node, perform, values, reference, report)
    _check_aliasing(op, node, perform, values, hidden_outputs, report)
    _check_infer_shape(op, node, values, reference, report)
    if grad:
        _check_grad(op, node, values, report, tol)
    if rop:
        _check_rop(op, node, values, report, tol)
    _check_connection_pattern(op, node, report)
    _check_c_version(op, node, report)
    return report
