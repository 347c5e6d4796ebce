"""Checking symbolic gradients against finite differences: :func:`verify_grad`.

It compiles tensor graphs, so this module is on the tensor floor of :mod:`opweave._layers`
(``opweave.gradient`` gives its names on first use).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np

from opweave.compile.function import function
from opweave.gradient.reverse import grad
from opweave.graph.basic import Variable
from opweave.tensor import math as tensor_math
from opweave.tensor.constructors import as_tensor_variable as as_tensor
from opweave.tensor.sharedvar import shared
from opweave.tensor.type import TensorType

__all__ = ["GradientError", "numeric_grad", "verify_grad"]

#: Default finite-difference step per dtype (the largest over the inputs is used).
TYPE_EPS: Mapping[str, float] = MappingProxyType(
    {"float64": 1e-7, "float32": 3e-3, "float16": 1e-1}
)
#: Default absolute and relative tolerance per dtype (the largest over the inputs is used).
TYPE_TOL: Mapping[str, float] = MappingProxyType(
    {"float64": 1e-4, "float32": 1e-2, "float16": 5e-2}
)


class GradientError(Exception):
    """The symbolic gradient and the finite-difference gradient disagree.

    Attributes
    ----------
    arg
        The position of the input whose gradient is wrong.
    err_pos
        The flat index, in that input, of the worst element.
    shape
        The input's shape.
    val1
        The numeric (finite-difference) gradient there.
    val2
        The analytic (symbolic) gradient there.
    abs_err, rel_err
        The absolute and relative errors there.
    abs_tol, rel_tol
        The tolerances that were exceeded (both).
    """

    def __init__(
        self,
        arg: int,
        err_pos: int,
        shape: tuple[int, ...],
        val1: float,
        val2: float,
        abs_err: float,
        rel_err: float,
        abs_tol: float,
        rel_tol: float,
    ) -> None:
        super().__init__(arg, err_pos)
        self.arg = arg
        self.err_pos = err_pos
        self.shape = tuple(shape)
        self.val1 = val1
        self.val2 = val2
        self.abs_err = abs_err
        self.rel_err = rel_err
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol

    def __str__(self) -> str:
        index = np.unravel_index(self.err_pos, self.shape) if self.shape else ()
        where = tuple(int(i) for i in index)
        return (
            "GradientError: the analytic and the numeric gradient differ beyond the tolerance\n"
            f"  input {self.arg} (shape {self.shape}), element {where} (flat index "
            f"{self.err_pos}):\n"
            f"    numeric gradient  = {self.val1!r}\n"
            f"    analytic gradient = {self.val2!r}\n"
            f"    max abs. error = {self.abs_err:.6g} (abs. tolerance {self.abs_tol:.6g})\n"
            f"    max rel. error = {self.rel_err:.6g} (rel. tolerance {self.rel_tol:.6g})"
        )


class numeric_grad:  # noqa: N801 - PyTensor's name
    """The gradient of a scalar function of arrays, by central finite differences.

    Parameters
    ----------
    f
        A callable taking the arrays of ``pt`` and returning a scalar.
    pt
        An array or a list of arrays: the point.
    eps
        The step (default: the largest :data:`TYPE_EPS` of the inputs' dtypes).
    out_type
        A complex dtype name for complex gradients (default: real).

    Attributes
    ----------
    gf
        The gradient: one array per element of ``pt`` (or one array if ``pt`` was one).
    """

    type_eps = TYPE_EPS

    def __init__(
        self,
        f: Callable[..., Any],
        pt: np.ndarray | Sequence[np.ndarray],
        eps: float | None = None,
        out_type: str | None = None,
    ) -> None:
        packed = not isinstance(pt, list | tuple)
        arrays = [np.array(p) for p in ([pt] if packed else pt)]
        dtypes = [str(a.dtype) for a in arrays]
        if eps is None:
            eps = max(self.type_eps.get(dt, 1e-7) for dt in dtypes)
        working = "float64"
        gdtype = out_type if out_type is not None and out_type.startswith("complex") else working
        self.gf: Any = []
        for k, a in enumerate(arrays):
            g = np.zeros(a.shape, dtype=gdtype)
            base = a.astype(working)
            flat_g = g.reshape(-1)
            for i in range(base.size):
                plus = [p.copy() for p in arrays]
                minus = [p.copy() for p in arrays]
                plus_k = base.copy().reshape(-1)
                minus_k = base.copy().reshape(-1)
                plus_k[i] += eps
                minus_k[i] -= eps
                plus[k] = plus_k.reshape(a.shape).astype(a.dtype)
                minus[k] = minus_k.reshape(a.shape).astype(a.dtype)
                # The step actually taken, after rounding to the input's dtype.
                step = float(plus[k].reshape(-1)[i]) - float(minus[k].reshape(-1)[i])
                if step == 0:
                    raise ValueError(
                        f"numeric_grad: the step eps={eps} vanishes when rounded to the "
                        f"dtype {a.dtype} of input {k}; pass a larger eps"
                    )
                diff = np.asarray(f(*plus), dtype=gdtype) - np.asarray(f(*minus), dtype=gdtype)
                flat_g[i] = diff / step
            self.gf.append(g)
        if packed:
            self.gf = self.gf[0]

    @staticmethod
    def abs_rel_err(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Element-wise ``|a - b|`` and ``|a - b| / max(|a| + |b|, 1e-8)``."""
        abs_err = np.abs(np.asarray(a) - np.asarray(b))
        rel_err = abs_err / np.maximum(np.abs(a) + np.abs(b), 1e-8)
        return np.asarray(abs_err), np.asarray(rel_err)

    def max_err(
        self, g_pt: Sequence[np.ndarray], abs_tol: float, rel_tol: float
    ) -> tuple[int, int, float, float]:
        """Find the worst element: ``(input, flat index, abs error, rel error)``.

        An element's error is ``min(abs_err / abs_tol, rel_err / rel_tol)``: it fails
        only when it exceeds both tolerances.
        """
        gf = self.gf if isinstance(self.gf, list) else [self.gf]
        if len(g_pt) != len(gf):
            raise ValueError(f"expected {len(gf)} gradients, got {len(g_pt)}")
        best: tuple[float, int, int, float, float] | None = None
        for k, (a, b) in enumerate(zip(g_pt, gf, strict=True)):
            a = np.asarray(a)
            if a.shape != b.shape:
                raise ValueError(
                    f"the analytic gradient of input {k} has shape {a.shape}, but the input has "
                    f"shape {b.shape}"
                )
            abs_err, rel_err = self.abs_rel_err(a, b)
            if a.size == 0:
                continue
            scaled = np.minimum(abs_err / abs_tol, rel_err / rel_tol).reshape(-1)
            pos = int(np.argmax(scaled))
            cand = (
                float(scaled[pos]),
                k,
                pos,
                float(abs_err.reshape(-1)[pos]),
                float(rel_err.reshape(-1)[pos]),
            )
            if best is None or cand[0] > best[0]:
                best = cand
        if best is None:
            return 0, 0, 0.0, 0.0
        return best[1], best[2], best[3], best[4]


def _random_generator(rng: Any) -> Any:
    if rng is None or isinstance(rng, int | np.integer | np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator | np.random.RandomState) or rng is np.random:
        return rng  # the module ``numpy.random`` draws from NumPy's global state
    raise TypeError(
        "verify_grad: rng must be a numpy.random.Generator, a RandomState, the module "
        f"numpy.random, an int for numpy.random.default_rng or None, got {type(rng).__name__}"
    )


def _is_debug_mode(mode: Any) -> bool:
    name = mode if isinstance(mode, str) else type(mode).__name__
    return name == "DebugMode"


def verify_grad(
    fun: Callable[..., Any],
    pt: Sequence[Any],
    n_tests: int = 2,
    rng: np.random.Generator | np.random.RandomState | ModuleType | int | None = None,
    eps: float | None = None,
    out_type: str | None = None,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
    mode: Any = None,
    cast_to_output_type: bool = False,
    no_debug_ref: bool = True,
) -> None:
    """Check the symbolic gradient of ``fun`` at ``pt`` against finite differences.

    ``fun`` is applied to symbolic tensors with the dtypes and the static shapes of
    ``pt``'s arrays (as PyTensor's ``verify_grad`` makes them, so an Op whose
    ``make_node`` needs static shapes can be checked). The check uses the scalar
    ``cost = sum(fun(*inputs) * r)`` for a random projection ``r`` (redrawn for each of
    the ``n_tests`` tests), compiles ``grad(cost, inputs)`` with :func:`opweave.function`,
    and compares it with central finite differences of the compiled cost.

    Parameters
    ----------
    fun
        A Python function (or an Op) taking as many tensor variables as ``pt`` has
        arrays and returning one tensor variable.
    pt
        A list of NumPy arrays of float dtypes: the point.
    n_tests
        How many random projections to test.
    rng
        A ``numpy.random.Generator`` (or ``RandomState``, or the module ``numpy.random``
        for NumPy's global state, as PyTensor code passes it), or an int given to
        ``numpy.random.default_rng``; ``None`` makes a fresh generator.
    eps
        The finite-difference step (default: 1e-7 for float64, 3e-3 for float32,
        1e-1 for float16; the largest over the inputs).
    out_type
        A complex dtype name when ``fun`` is complex-valued.
    abs_tol, rel_tol
        Tolerances (default: 1e-4 for float64, 1e-2 for float32, 5e-2 for float16; the
        largest over the inputs). An element fails only when it exceeds both.
    mode
        The compilation mode.
    cast_to_output_type
        Cast the random projection to the output's dtype when it is float32.
    no_debug_ref
        With a ``DebugMode`` ``mode``, compile the reference cost in ``FAST_RUN``.

    Raises
    ------
    GradientError
        On a mismatch; its message gives the input, the element, the numeric and the
        analytic values, the errors and the tolerances.
    TypeError
        If ``pt`` is not a list of float arrays.
    ValueError
        If a gradient is not finite.
    """
    if not isinstance(pt, list | tuple):
        raise TypeError(
            f"verify_grad: pt must be a list or tuple of arrays, got {type(pt).__name__}"
        )
    points = [np.array(p) for p in pt]
    for i, p in enumerate(points):
        if p.dtype.name not in TYPE_TOL:
            raise TypeError(
                f"verify_grad works only with floating-point inputs, but input {i} has dtype "
                f"{p.dtype}"
            )
    if abs_tol is None:
        abs_tol = max(TYPE_TOL[p.dtype.name] for p in points)
    if rel_tol is None:
        rel_tol = max(TYPE_TOL[p.dtype.name] for p in points)
    generator = _random_generator(rng)

    tensor_sum = tensor_math.sum

    def compile_(inputs: list[Variable], outputs: Any, fn_mode: Any = mode) -> Any:
        return function(
            inputs,
            outputs,
            mode=fn_mode,
            accept_inplace=True,
            allow_input_downcast=True,
            on_unused_input="ignore",
        )

    inputs = [
        TensorType(p.dtype.name, shape=p.shape)(name=f"input {i}") for i, p in enumerate(points)
    ]
    output = fun(*inputs)
    if isinstance(output, list | tuple):
        raise NotImplementedError(
            "verify_grad cannot (yet) test a function with several outputs; test each output "
            "separately"
        )
    output = as_tensor(output)
    out_value = np.asarray(compile_(inputs, output)(*[p.copy() for p in points]))
    out_dtype = str(getattr(output.type, "dtype", "float64"))

    def random_projection() -> np.ndarray:
        plain = np.asarray(generator.random(out_value.shape) + 0.5)
        if cast_to_output_type and out_dtype == "float32":
            return plain.astype(out_dtype)
        return plain

    projection = shared(random_projection(), name="random_projection", borrow=True)
    cost = tensor_sum(projection * output)
    cost_mode = "FAST_RUN" if no_debug_ref and _is_debug_mode(mode) else mode
    cost_fn = compile_(inputs, cost, cost_mode)
    symbolic = grad(cost, inputs, disconnected_inputs="ignore")
    grad_fn = compile_(inputs, list(symbolic))

    for test_num in range(n_tests):
        num = numeric_grad(cost_fn, [p.copy() for p in points], eps, out_type)
        analytic = [np.asarray(a) for a in grad_fn(*[p.copy() for p in points])]
        for k, (a, n) in enumerate(zip(analytic, num.gf, strict=True)):
            if not (np.all(np.isfinite(a)) and np.all(np.isfinite(n))):
                raise ValueError(
                    f"verify_grad: the gradient of input {k} is not finite (analytic {a}, "
                    f"numeric {n})"
                )
        arg, pos, abs_err, rel_err = num.max_err(analytic, abs_tol, rel_tol)
        if abs_err > abs_tol and rel_err > rel_tol:
            raise GradientError(
                arg,
                pos,
                points[arg].shape,
                val1=float(np.asarray(num.gf[arg]).reshape(-1)[pos]),
                val2=float(analytic[arg].reshape(-1)[pos]),
                abs_err=abs_err,
                rel_err=rel_err,
                abs_tol=abs_tol,
                rel_tol=rel_tol,
            )
        if test_num < n_tests - 1:
            projection.set_value(random_projection(), borrow=True)
