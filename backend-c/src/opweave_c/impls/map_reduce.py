"""C code of :class:`~opweave.tensor.map_reduce.MapReduce`: a reduction of a one-input map.

The reduction loops are those of ``CAReduce`` (:mod:`opweave_c.impls.reduce_loops`). A
contiguous row is mapped a block of :data:`BLOCK` elements at a time into a small buffer
(by the Elemwise's own flat loop, blocked and vectorised as in
:mod:`opweave_c.impls.blocked`), which the reduction then reads: no array of the mapped
values is made, and the accumulators see the mapped elements in the same order as an
element-by-element loop, so the results are identical. A strided row passes each element
through the map (a ``static inline`` function of the scalar code) as it is read.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.scalar.composite import Composite
from opweave.tensor.map_reduce import MapReduce
from opweave_c.impls.blocked import (
    BLOCK_START,
    LANE,
    LANES,
    blocked_composite,
    work_per_element,
)
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


#: Elements mapped at a time into the buffer the reduction reads (a multiple of 8).
BLOCK = 128
#: The work per element (:func:`~opweave_c.impls.blocked.work_per_element`) of one
#: expensive call: maps with less are applied element by element as they are read.
EXPENSIVE_WORK = 8


def block_function(name: str, scalar_op: Any, raw_dt: str, mid_dt: str, fn: str) -> str:
    """``void name(x, n, out)``: ``out[i] = map(x[i])`` for ``i < n``, a contiguous loop
    (blocked when the map is a Composite with several expensive steps, see
    :func:`~opweave_c.impls.blocked.blocked_composite`; else a plain loop calling ``fn``)
    that the compiler vectorises."""
    raw_t, mid_t = C_TYPE[raw_dt], C_TYPE[mid_dt]
    head = (
        f"static OPW_HOT void {name}(const {raw_t}* restrict opw_mx, npy_intp opw_n, "
        f"{mid_t}* restrict opw_mbuf) {{\n"
    )
    blocked = None
    if isinstance(scalar_op, Composite):
        blocked = blocked_composite(
            scalar_op,
            [f"opw_mx[{BLOCK_START} + {LANE}]"],
            [False],
            [f"opw_mbuf[{BLOCK_START} + {LANE}]"],
            OwnCOps(),
            {"fail": "return;", "id": "0"},
        )
    if blocked is None:
        return f"""{head}    npy_intp opw_j;
    for (opw_j = 0; opw_j < opw_n; opw_j++) opw_mbuf[opw_j] = {fn}(opw_mx[opw_j]);
}}
"""
    i0, j, m, b = BLOCK_START, LANE, LANES, blocked.block
    steps = "\n".join("        " + line for line in blocked.steps.splitlines())
    prologue = "\n".join("    " + line for line in blocked.prologue.splitlines())
    return f"""{head}    npy_intp {i0}, {j}, {m};
{prologue}
    for ({i0} = 0; {i0} < opw_n; {i0} += {b}) {{
        {m} = opw_n - {i0} < {b} ? opw_n - {i0} : {b};
{steps}
    }}
}}
"""


class _MappedSpec(ReduceSpec):
    """A reduction of ``fn(x)``: ``x`` of ``raw_dt`` mapped by the C function ``fn`` to
    ``mid_dt``, accumulated in ``acc_dt``."""

    def __init__(
        self, op: str, raw_dt: str, mid_dt: str, acc_dt: str, fn: str, blocks: bool
    ) -> None:
        super().__init__(op, mid_dt, acc_dt)
        self.in_dt = raw_dt
        self.in_t = ctype(raw_dt)
        self.mid_t = ctype(mid_dt)
        self.fn = fn
        self.blocks = blocks
        self.block_fn = f"{fn}_block"
        self.key = f"{self.op}_{raw_dt}_{acc_dt}_{fn}"

    def uses_ext(self) -> bool:
        """Never: the SIMD extrema read unmapped elements."""
        return False

    def load(self, v: str) -> str:
        """The mapped element as a ``cmp`` value."""
        return super().load(f"{self.fn}({v})")

    def _mapped(self, v: str) -> str:
        """An element of the buffer of mapped values as a ``cmp`` value."""
        return super().load(v)

    def _contig_loop(self) -> str:
        """Without blocks (a cheap map), the elements mapped as they are read; else the 8
        accumulators of :meth:`ReduceSpec._reduce_loop`, fed a block of mapped
        elements at a time (:data:`BLOCK`, a multiple of 8, so each element meets the
        accumulator it meets there: the last few, past the last multiple of 8, go to
        the first)."""
        if not self.blocks:
            return super()._contig_loop()
        body = self.accumulate_eight(lambda k: self._mapped(f"opw_buf[j + {k}]"), " " * 16)
        tail = self.combine("r0", self._mapped("opw_buf[j]"))
        return f"""
        {self.accumulators()}
        {self.mid_t} opw_buf[{BLOCK}];
        npy_intp i = 0, j, m;
        for (; i < n; i += m) {{
            m = n - i < {BLOCK} ? n - i : {BLOCK};
            {self.block_fn}(x + i, m, opw_buf);
            for (j = 0; j + 8 <= m; j += 8) {{
{body}
            }}
            for (; j < m; j++) r0 = {tail};
        }}
        return {self.total()};"""

    def _contig_column(self, combine: str) -> str:
        """The row mapped a block at a time (or, for a cheap map, as it is read), each
        mapped element combined into its accumulator."""
        if not self.blocks:
            return super()._contig_column(combine)
        comb = self.combine("a[i + j]", self._mapped("opw_buf[j]"))
        return f"""{self.mid_t} opw_buf[{BLOCK}];
        npy_intp j, m;
        for (i = 0; i < n; i += m) {{
            m = n - i < {BLOCK} ? n - i : {BLOCK};
            {self.block_fn}(x + i, m, opw_buf);
            for (j = 0; j < m; j++) a[i + j] = {comb};
        }}"""


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
        # Only a map with an expensive call (exp, tanh...) is worth mapping a block at a
        # time through the vectorised loop; a cheap one (x**2) is best applied as it is read.
        self.blocks = work_per_element(node.op.elemwise.scalar_op) >= EXPENSIVE_WORK  # type: ignore[attr-defined]
        self.map_code = (
            f"static inline OPW_HOT {C_TYPE[mid_dt]} {self.fn}(const {C_TYPE[raw_dt]} opw_a0) {{\n"
            f"    {C_TYPE[mid_dt]} opw_r0;\n"
            + "\n".join("    " + line for line in body.splitlines())
            + "\n    return opw_r0;\n}\n"
        )
        if self.blocks:
            scalar_op = node.op.elemwise.scalar_op  # type: ignore[attr-defined]
            self.map_code += block_function(f"{self.fn}_block", scalar_op, raw_dt, mid_dt, self.fn)
        super().__init__(node, op_name, careduce=node.op.careduce)  # type: ignore[attr-defined]

    def _spec(self, op_name: str) -> ReduceSpec:
        return _MappedSpec(op_name, self.in_dt, self.mid_dt, self.acc_dt, self.fn, self.blocks)

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
