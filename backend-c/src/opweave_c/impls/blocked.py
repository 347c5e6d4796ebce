"""Blocked evaluation of a fused ``Composite``: a few short loops per block of elements.

A fused loop that computes a deep ``Composite`` element by element is one long dependency
chain per (vector of) element(s): a ``tanh`` waits for the ``*`` before it, which waits
for the ``tanh`` before it... The processor cannot overlap the next elements' work (it is
too far ahead in the instruction stream), so such loops run at the latency of their chain,
not at the throughput of the machine. Blocked evaluation cuts the inner graph into
*segments* (each ends after an expensive call such as ``exp`` or ``tanh``, or after
:data:`SEGMENT_NODES` nodes) and computes each segment over a block of ``B`` elements
before the next::

    for (i0 = 0; i0 < n; i0 += B) {
        m = min(B, n - i0);
        for (j = 0; j < m; j++) b0[j] = tanh(x[i0 + j]);                 /* segment 0 */
        for (j = 0; j < m; j++) { t = b0[j] * 1.5 + 0.1; b1[j] = tanh(t); } /* segment 1 */
        ...
        for (j = 0; j < m; j++) out[i0 + j] = b1[j];
    }

The iterations of each short loop are independent, vectorised, and overlap; values that
cross segments live in small arrays (slots, reused once their value is dead) that stay in
the L1 cache, the others in registers. Every inner node's statement is the one the
element-by-element loop runs, so the results are identical.

Values that depend only on statically scalar inputs and constants are computed once,
before the loop. Composites containing scalar Ops with C code of their own (which may
declare variables or assume scalar operands) are not blocked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.scalar import math as sm
from opweave.scalar.basic import Pow
from opweave.scalar.composite import Composite
from opweave_c.impls.scalar_basic import (
    C_TYPE,
    OwnCOps,
    _defines_c_code,
    _Gen,
    _literal,
    _node_code,
)

__all__ = [
    "BLOCK_START",
    "LANE",
    "LANES",
    "BlockedLoop",
    "blocked_composite",
    "segments",
    "work_per_element",
]

#: Bytes of one slot: the block length is this over the widest item size.
SLOT_BYTES = 512
#: Most inner nodes in one segment.
SEGMENT_NODES = 8
#: Index names in the generated code.
BLOCK_START, LANE, LANES = "opw_i0", "opw_j", "opw_m"
#: Scalar Ops whose C is a call of many instructions (libm or libmvec), ending a segment.
EXPENSIVE: tuple[type, ...] = (
    sm.Exp,
    sm.Exp2,
    sm.Expm1,
    sm.Log,
    sm.Log2,
    sm.Log10,
    sm.Log1p,
    sm.Sin,
    sm.Cos,
    sm.Tan,
    sm.ArcSin,
    sm.ArcCos,
    sm.ArcTan,
    sm.ArcTan2,
    sm.Sinh,
    sm.Cosh,
    sm.Tanh,
    sm.ArcSinh,
    sm.ArcCosh,
    sm.ArcTanh,
    sm.Sigmoid,
    sm.Softplus,
    sm.Erf,
    sm.Erfc,
    Pow,
)


@dataclass(frozen=True)
class BlockedLoop:
    """The pieces of a blocked flat loop (see the module docstring).

    Attributes
    ----------
    block
        The block length ``B``.
    prologue
        Statements before the loop: the slot arrays' declarations and the values that
        are the same for every element.
    steps
        The statements for one block: one loop over ``opw_j < opw_m`` per segment, the
        last one storing the outputs.
    """

    block: int
    prologue: str
    steps: str


def _uses_own_c_code(op: Composite) -> bool:
    for node in op.inner_nodes():
        inner = node.op
        if isinstance(inner, Composite):
            if _uses_own_c_code(inner):
                return True
        elif _defines_c_code(inner):
            return True
    return False


def _expensive(node: Apply) -> bool:
    if isinstance(node.op, Composite):
        return any(_expensive(n) for n in node.op.inner_nodes())
    return isinstance(node.op, EXPENSIVE)


def work_per_element(op: object) -> int:
    """A scalar Op's work per element, in cheap operations: 1 per scalar Op, 8 per
    expensive call (see :data:`EXPENSIVE`), summed over a Composite's inner nodes."""
    if isinstance(op, Composite):
        return sum(work_per_element(node.op) for node in op.inner_nodes())
    return 8 if isinstance(op, EXPENSIVE) else 1


def segments(nodes: Sequence[Apply]) -> list[list[Apply]]:
    """The inner nodes of a Composite, in order, cut after each expensive call and after
    every :data:`SEGMENT_NODES` nodes."""
    out: list[list[Apply]] = [[]]
    for node in nodes:
        out[-1].append(node)
        if _expensive(node) or len(out[-1]) >= SEGMENT_NODES:
            out.append([])
    return [seg for seg in out if seg]


class _Slots:
    """Slot arrays per C type, reused once their value is dead."""

    def __init__(self, block: int) -> None:
        self.block = block
        self.free: dict[str, list[str]] = {}
        self.decls: list[str] = []

    def take(self, ctype: str) -> str:
        free = self.free.setdefault(ctype, [])
        if free:
            return free.pop()
        name = f"opw_b{len(self.decls)}"
        self.decls.append(f"{ctype} {name}[{self.block}];")
        return name

    def give_back(self, ctype: str, name: str) -> None:
        self.free.setdefault(ctype, []).append(name)


def _lane_loop(statements: Sequence[str]) -> str:
    body = "\n".join(statements)
    body = "    " + body.replace("\n", "\n    ")
    return f"for ({LANE} = 0; {LANE} < {LANES}; {LANE}++) {{\n{body}\n}}"


class _Builder:
    """Names, slots and statements of one blocked Composite."""

    def __init__(
        self,
        op: Composite,
        inputs: Sequence[str],
        scalar_like: Sequence[bool],
        uniform: Sequence[bool],
    ):
        dtypes = [v.type.dtype for v in (*op.inputs, *op.outputs)]  # type: ignore[attr-defined]
        self.slots = _Slots(max(16, SLOT_BYTES // max(np.dtype(d).itemsize for d in dtypes)))
        self.names: dict[Variable, str] = dict(zip(op.inputs, inputs, strict=True))
        self.like: dict[Variable, bool] = dict(zip(op.inputs, scalar_like, strict=True))
        self.uni: dict[Variable, bool] = dict(zip(op.inputs, uniform, strict=True))
        self.slot_of: dict[Variable, tuple[str, str]] = {}
        self.prologue: list[str] = []

    def operand(self, var: Variable) -> tuple[str, bool, bool] | None:
        """The C expression of ``var``, whether it is statically scalar (the flag scalar
        code generation takes) and whether it is the same for every element of the loop."""
        if var not in self.names:
            literal = _literal(var) if isinstance(var, Constant) else None
            if literal is None:
                return None
            self.names[var], self.like[var], self.uni[var] = literal, True, True
        return self.names[var], self.like[var], self.uni[var]

    def result(
        self, var: Variable, n: int, j: int, like: bool, uniform: bool, crosses: bool
    ) -> str:
        """Name ``var`` (output ``j`` of inner node ``n``): a scalar before the loop, a
        slot element when later segments read it, else a variable of the loop body."""
        ctype = C_TYPE[var.type.dtype]  # type: ignore[attr-defined]
        if uniform:
            name = f"opw_c{n}_{j}"
            self.prologue.append(f"{ctype} {name};")
        elif crosses:
            slot = self.slots.take(ctype)
            self.slot_of[var] = (ctype, slot)
            name = f"{slot}[{LANE}]"
        else:
            name = f"opw_t{n}_{j}"
        self.names[var], self.like[var], self.uni[var] = name, like, uniform
        return name


def blocked_composite(
    op: Composite,
    inputs: Sequence[str],
    scalar_like: Sequence[bool],
    outputs: Sequence[str],
    own: OwnCOps,
    sub: dict[str, str],
    uniform: Sequence[bool] | None = None,
) -> BlockedLoop | None:
    """The blocked form of an Elemwise of ``op`` over C-contiguous operands.

    Parameters
    ----------
    op
        The Composite.
    inputs
        Per input: the C expression of its element ``i0 + j`` (an array input), or of its
        value (a statically scalar input, the same for every element).
    scalar_like
        Per input, whether it is statically scalar.
    outputs
        Per output: the C lvalue of its element ``i0 + j``.
    own, sub
        As for :func:`~opweave_c.impls.scalar_basic.scalar_c_code`.
    uniform
        Per input, whether its value is the same for every element of the loop (default:
        ``scalar_like``; a loop over one row also has inputs broadcast along the row).

    Returns
    -------
    BlockedLoop or None
        ``None`` when blocking does not apply (fewer than two segments, or scalar Ops with
        C code of their own) or some inner Op or constant has no C code.
    """
    nodes = op.inner_nodes()
    segs = segments(nodes)
    if len(segs) < 2 or _uses_own_c_code(op):
        return None
    index = {node: k for k, node in enumerate(nodes)}
    seg_of = {node: s for s, seg in enumerate(segs) for node in seg}
    last_seg: dict[Variable, int] = {}
    for node in nodes:
        for var in node.inputs:
            last_seg[var] = seg_of[node]
    for var in op.outputs:
        last_seg[var] = len(segs)
    build = _Builder(op, inputs, scalar_like, scalar_like if uniform is None else uniform)
    gen = _Gen(dict(sub), own)
    steps: list[str] = []
    for s, seg in enumerate(segs):
        body: list[str] = []
        for node in seg:
            n = index[node]
            found = [build.operand(v) for v in node.inputs]
            if any(f is None for f in found):
                return None
            args = [f[0] for f in found if f is not None]
            flags = [f[1] for f in found if f is not None]
            same = all(f[2] for f in found if f is not None)
            temps = []
            for j, var in enumerate(node.outputs):
                crosses = last_seg.get(var, s) > s
                name = build.result(var, n, j, all(flags), same, crosses)
                if not same and not crosses:
                    ctype = C_TYPE[var.type.dtype]  # type: ignore[attr-defined]
                    body.append(f"{ctype} {name};")
                temps.append(name)
            code = _node_code(node.op, node, args, temps, flags, f"opw_s_{n}_", gen)
            if code is None:
                return None
            (build.prologue if same else body).append(code)
        if s == len(segs) - 1:
            # Every output's value is read before any is stored: an in-place output may
            # overwrite an input that another output is (element for element).
            stores = []
            for k, (var, out) in enumerate(zip(op.outputs, outputs, strict=True)):
                found_out = build.operand(var)
                if found_out is None:
                    return None
                ctype = C_TYPE[var.type.dtype]  # type: ignore[attr-defined]
                body.append(f"const {ctype} opw_o{k} = {found_out[0]};")
                stores.append(f"{out} = opw_o{k};")
            body += stores
        if body:
            steps.append(_lane_loop(body))
        for var, (ctype, slot) in list(build.slot_of.items()):
            if last_seg.get(var, s) <= s:
                build.slots.give_back(ctype, slot)
                del build.slot_of[var]
    decls = "\n".join(build.slots.decls)
    prologue = decls + "\n" + "\n".join(build.prologue)
    return BlockedLoop(build.slots.block, prologue, "\n".join(steps))
