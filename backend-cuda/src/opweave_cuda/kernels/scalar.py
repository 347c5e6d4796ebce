"""The device code of one application of a scalar Op, reused from the C backend.

The ``c`` implementations of scalar-level nodes (ScalarType inputs and outputs), as the
core's resolver finds them (:func:`opweave.link.resolver.implementation_for`; the C
backend, a declared requirement, provides those of the core's scalar Ops), are objects
whose ``c_code`` gives plain C99 statements on NumPy's ``npy_*`` number types and
``<math.h>`` (``expf`` for ``float32``, ``exp`` for ``float64``), and whose
``c_support_code`` holds the helper functions, declared with ``OPW_SC_FN``. Both compile
as CUDA device code under :data:`~opweave_cuda.kernels.source.PRELUDE`, so this module
takes them from there; it imports no other backend.

``float16`` has no C code: values of that dtype are computed as ``float32`` (the scalar graph
is rebuilt on ``float32``, a cast to ``float16`` becoming a cast to ``float32``) and loads and
stores convert. That is NumPy's own float16 loop strategy for one function. In a fused
graph every inner result of dtype ``float16`` is rounded to ``float16`` where it is computed
(:class:`RoundToHalf`), so a fused ``a * b + a`` rounds twice, as NumPy and the CPU backends,
which run one operation at a time, do.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.link.resolver import implementation_for
from opweave.scalar import basic as sb
from opweave.scalar.composite import Composite
from opweave.scalar.rules import specific_out
from opweave.scalar.type import get_scalar_type
from opweave_cuda.kernels.source import CUDA_DTYPES

__all__ = ["RoundToHalf", "ScalarCode", "conversion_support", "scalar_code", "with_conversions"]


@dataclass(frozen=True)
class ScalarCode:
    """Device statements computing one application of a scalar Op.

    Attributes
    ----------
    statements
        C statements reading the input names and assigning the output names.
    support
        Support snippets (helper functions) the statements need.
    in_dtypes, out_dtypes
        The compute dtypes of the inputs and outputs (``float16`` replaced by ``float32``).
    """

    statements: str
    support: tuple[str, ...]
    in_dtypes: tuple[str, ...]
    out_dtypes: tuple[str, ...]


def _f32(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


def _has_float16(op: Any) -> bool:
    """Whether ``op`` itself names ``float16`` (a cast to it, or a Composite using it)."""
    if isinstance(op, sb.Cast):
        return str(op.o_type.dtype) == "float16"
    if not isinstance(op, Composite):
        return False
    for node in op.inner_nodes():
        for var in (*node.inputs, *node.outputs):
            if str(var.type.dtype) == "float16":  # type: ignore[attr-defined]
                return True
    return any(str(t.dtype) == "float16" for t in op.inputs_type)


class RoundToHalf(sb.UnaryScalarOp):
    """A ``float32`` value rounded to the nearest ``float16`` (ties to even), still as a
    ``float32``: what storing a ``float16`` result and loading it back gives, so that
    fused ``float16`` code rounds after each operation."""

    def __init__(self) -> None:
        super().__init__(specific_out(get_scalar_type("float32")), name="round_to_half")

    def impl(self, x: Any) -> Any:
        """NumPy's rounding of ``x`` to float16, as float32."""
        return np.float32(np.float16(x))

    def c_code(
        self, node: Apply, name: str, inputs: Sequence[str], outputs: Sequence[str], sub: Any
    ) -> str:
        """Device code (CUDA's ``__float2half_rn``)."""
        return f"{outputs[0]} = __half2float(__float2half_rn({inputs[0]}));"

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Version of :meth:`c_code`."""
        return (1,)


def _without_float16(op: Any, in_dtypes: Sequence[str]) -> Apply:
    """A scalar node of ``op`` (or of an equivalent Op without ``float16``) on the compute
    dtypes of ``in_dtypes``."""
    inputs = [get_scalar_type(_f32(d))() for d in in_dtypes]
    if not _has_float16(op):
        node = op.make_node(*inputs)
    elif isinstance(op, sb.Cast):
        node = sb.Cast(get_scalar_type("float32")).make_node(*inputs)
    else:
        names: dict[Variable, Variable] = dict(zip(op.inputs, inputs, strict=True))
        for inner in op.inner_nodes():
            args = []
            for var in inner.inputs:
                if var not in names:
                    if not isinstance(var, Constant):
                        raise NotImplementedError(f"{op}: free variable {var} in its graph")
                    dtype = _f32(var.type.dtype)  # type: ignore[attr-defined]
                    names[var] = sb.constant(var.data, dtype=dtype)
                args.append(names[var])
            new = _without_float16_apply(inner.op, args)
            for old_out, new_out in zip(inner.outputs, new.outputs, strict=True):
                half = str(old_out.type.dtype) == "float16"  # type: ignore[attr-defined]
                names[old_out] = _round_to_half(new_out) if half else new_out
        fresh = [v.type() for v in inputs]
        composite = Composite(inputs, [names[v] for v in op.outputs])
        node = composite.make_node(*fresh)
    for var in node.outputs:
        if str(var.type.dtype) == "float16":  # type: ignore[attr-defined]
            raise NotImplementedError(f"scalar Op {op} computes float16 from float32 values")
    return node


def _round_to_half(var: Variable) -> Variable:
    """``var`` (a float32 scalar) rounded to float16 (a no-op on float32 inputs aside)."""
    return RoundToHalf().make_node(var).outputs[0]


def _without_float16_apply(op: Any, inputs: Sequence[Variable]) -> Apply:
    if isinstance(op, sb.Cast) and str(op.o_type.dtype) == "float16":
        op = sb.Cast(get_scalar_type("float32"))
    return op.make_node(*inputs)


def scalar_code(
    op: Any,
    in_dtypes: Sequence[str],
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: str = "opw",
) -> ScalarCode:
    """Device statements computing ``op`` on ``inputs`` into ``outputs``.

    Parameters
    ----------
    op
        A scalar Op of :mod:`opweave.scalar` (a :class:`~opweave.scalar.composite.Composite`
        included).
    in_dtypes
        The dtypes of its inputs (``float16`` allowed: computed as ``float32``).
    inputs
        C names of the inputs' compute-type values.
    outputs
        C names of the outputs' compute-type lvalues (declared by the caller with the
        :attr:`ScalarCode.out_dtypes`).
    name
        A name for the node in the generated code.

    Returns
    -------
    ScalarCode

    Raises
    ------
    NotImplementedError
        If a dtype or a (inner) scalar Op has no CUDA code.
    """
    bad = sorted(set(in_dtypes) - CUDA_DTYPES)
    if bad:
        raise NotImplementedError(f"no CUDA code for dtype {', '.join(bad)} (scalar Op {op})")
    try:
        node = _without_float16(op, in_dtypes)
    except NotImplementedError:
        raise
    except Exception as exc:
        raise NotImplementedError(f"no CUDA code for scalar Op {op}: {exc}") from exc
    out_dtypes = tuple(str(v.type.dtype) for v in node.outputs)  # type: ignore[attr-defined]
    bad = sorted(set(out_dtypes) - CUDA_DTYPES)
    if bad:
        raise NotImplementedError(f"no CUDA code for dtype {', '.join(bad)} (scalar Op {op})")
    if len(outputs) != len(out_dtypes):
        raise ValueError(f"scalar Op {op} has {len(out_dtypes)} outputs, got {len(outputs)} names")
    found = implementation_for(node, "c")
    impl = None
    if found.what == "kernel":  # the Op itself when its class carries c_code
        impl = node.op if found.origin == "method" else found.implementation
    if impl is None or not hasattr(impl, "c_code"):
        raise NotImplementedError(
            f"no CUDA code for scalar Op {op} on {', '.join(in_dtypes)}: neither opweave-c "
            "nor an installed plugin provides C code for it"
        )
    statements = impl.c_code(node, name, list(inputs), list(outputs), {"fail": "return;"})
    support = impl.c_support_code() if hasattr(impl, "c_support_code") else []
    if isinstance(support, str):
        support = [support]
    return ScalarCode(
        statements=str(statements),
        support=tuple(str(s) for s in support if s),
        in_dtypes=tuple(str(v.type.dtype) for v in node.inputs),  # type: ignore[attr-defined]
        out_dtypes=out_dtypes,
    )


@functools.cache
def conversion_support() -> tuple[str, ...]:
    """The support snippets that define the float to integer helpers (``opw_sc_f2i_<dtype>``)
    of :func:`~opweave_cuda.kernels.source.convert`: those of the graph's own ``Cast`` from
    ``float64`` to ``int32``, so that every conversion of a kernel gives what a cast node
    gives."""
    cast = sb.Cast(get_scalar_type("int32"))
    return scalar_code(cast, ["float64"], ["x"], ["y"], name="opw_cast").support


def with_conversions(code: ScalarCode) -> ScalarCode:
    """``code`` whose support also defines the conversion helpers (each snippet once)."""
    extra = tuple(s for s in conversion_support() if s not in code.support)
    return replace(code, support=code.support + extra) if extra else code
