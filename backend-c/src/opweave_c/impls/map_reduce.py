"""C code of :class:`~opweave.tensor.map_reduce.MapReduce`: a reduction of a one-input map.

The reduction loops are those of ``CAReduce`` (:mod:`opweave_c.impls.reduce_loops`); each
element goes through the map (the Elemwise's scalar code, a ``static inline`` function)
as it is read, with no intermediate array.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.map_reduce import MapReduce
from opweave_c.impls.common import ctype
from opweave_c.impls.reduce_loops import VERSION, CAReduceC, ReduceSpec, reduce_name
from opweave_c.impls.scalar_basic import (
    C_TYPE,
    COMPILE_ARGS,
    SCALAR_C_SUPPORT,
    OwnCOps,
    scalar_c_code,
)
from opweave_c.impls.scalar_basic import VERSION as SCALAR_VERSION
from opweave_c.impls.tensor_type import C_DTYPES
from opweave_c.vector_math import vector_math_code

__all__ = ["C_OPS", "MapReduceC"]


class _MappedSpec(ReduceSpec):
    """A reduction of ``fn(x)``: ``x`` of ``raw_dt`` mapped by the C function ``fn`` to
    ``mid_dt``, accumulated in ``acc_dt``."""

    def __init__(self, op: str, raw_dt: str, mid_dt: str, acc_dt: str, fn: str) -> None:
        super().__init__(op, mid_dt, acc_dt)
        self.in_dt = raw_dt
        self.in_t = ctype(raw_dt)
        self.fn = fn
        self.key = f"{self.op}_{raw_dt}_{acc_dt}_{fn}"

    def uses_ext(self) -> bool:
        """Never: the SIMD extrema read unmapped elements."""
        return False

    def load(self, v: str) -> str:
        """The mapped element as a ``cmp`` value."""
        return super().load(f"{self.fn}({v})")


class MapReduceC(CAReduceC):
    """The C code of a :class:`~opweave.tensor.map_reduce.MapReduce` node: the reduction's
    loops, each element passed through the map (a ``static inline`` function of the
    Elemwise's scalar code) as it is read.

    Parameters
    ----------
    node
        The MapReduce node.
    op_name
        The reduction's combination.
    mid_dt
        The dtype of the mapped elements (the Elemwise's output dtype).
    body
        The scalar code computing ``opw_r0`` (of ``mid_dt``) from ``opw_a0``.
    """

    def __init__(self, node: Apply, op_name: str, mid_dt: str, body: str) -> None:
        self.mid_dt = mid_dt
        raw_dt = node.inputs[0].type.dtype  # type: ignore[attr-defined]
        digest = hashlib.sha256(f"{raw_dt}:{mid_dt}:{body}".encode()).hexdigest()[:16]
        self.fn = f"opw_map_{digest}"
        self.map_code = (
            f"static inline OPW_HOT {C_TYPE[mid_dt]} {self.fn}(const {C_TYPE[raw_dt]} opw_a0) {{\n"
            f"    {C_TYPE[mid_dt]} opw_r0;\n"
            + "\n".join("    " + line for line in body.splitlines())
            + "\n    return opw_r0;\n}\n"
        )
        super().__init__(node, op_name, careduce=node.op.careduce)  # type: ignore[attr-defined]

    def _spec(self, op_name: str) -> ReduceSpec:
        return _MappedSpec(op_name, self.in_dt, self.mid_dt, self.acc_dt, self.fn)

    def supported(self) -> bool:
        """True when the dtypes and the combination have C code."""
        return self.mid_dt in C_DTYPES and super().supported()

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """Vector math declarations, the scalar helpers, the map, the reduction's code."""
        vec = vector_math_code()
        head = [vec.support_code] if vec else []
        return [*head, SCALAR_C_SUPPORT, self.map_code, *super().c_support_code()]

    def c_compile_args(self, c_compiler: Any = None) -> list[str]:
        """No floating-point contraction (as in Elemwise loops); vector math flags."""
        vec = vector_math_code()
        return [*COMPILE_ARGS, *(vec.compile_args if vec else ())]

    def c_libraries(self, c_compiler: Any = None) -> list[str]:
        """libmvec where vector math applies."""
        vec = vector_math_code()
        return list(vec.libraries) if vec else []

    def c_code_cache_version(self) -> tuple[int, ...]:
        """The reductions' version and the scalar code's."""
        return (*VERSION, *SCALAR_VERSION)


def _map_reduce(op: MapReduce, node: Apply) -> MapReduceC | None:
    name = reduce_name(op.careduce)
    if name is None:
        return None
    raw_dt = node.inputs[0].type.dtype  # type: ignore[attr-defined]
    mapped_node, _ = op.unfused(node.inputs[0])
    mid_dt = mapped_node.outputs[0].type.dtype  # type: ignore[attr-defined]
    if raw_dt not in C_DTYPES or mid_dt not in C_DTYPES:
        return None
    own = OwnCOps()
    body = scalar_c_code(
        op.elemwise.scalar_op,
        [raw_dt],
        [mid_dt],
        ["opw_a0"],
        ["opw_r0"],
        [False],
        prefix="opw_s_",
        sub={"fail": "return -1;", "id": "0"},
        own=own,
    )
    if body is None or own.snippets("c_support_code") or own.versions() != ():
        return None  # scalar Ops with C of their own may fail: not in a reduction loop
    impl = MapReduceC(node, name, mid_dt, body)
    return impl if impl.supported() else None


#: Op class -> ``fn(op, node)`` giving the node's C implementation (or ``None``).
C_OPS: MappingProxyType[type, Any] = MappingProxyType({MapReduce: _map_reduce})
