"""``Blockwise``: a core Op applied over leading batch dimensions (PyTensor's
``pytensor.tensor.blockwise``).

A :class:`Blockwise` wraps an Op that works on inputs of fixed ranks (its *core* case) and
a generalized-ufunc signature such as ``"(m,n),(n)->(m)"``: every input may carry extra
dimensions on the left of its core dimensions, these batch dimensions broadcast against
each other (a dimension of static length 1 broadcasts; others must match), and the output
stacks, for each batch index, what the core Op computes from the corresponding slices.

Importing this module also registers the fallback rule of
:func:`opweave.graph.replace.vectorize_graph`: a node whose Op has no rule of its own and
whose tensor inputs gained batch dimensions is wrapped in a :class:`Blockwise`.

The Op holds no kernel: opweave-python runs it (``opweave_python.impls.blockwise``) by
calling the core Op's Python implementation once per batch index, or the NumPy function its
``gufunc_spec`` names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from opweave.compile.builders import OpFromGraph
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node, _vectorize_not_needed, vectorize_graph
from opweave.graph.traversal import ancestors
from opweave.graph.type import DisconnectedType, NullType
from opweave.tensor.constructors import as_tensor_variable, constant
from opweave.tensor.elemwise import left_pad, zeros_like_float
from opweave.tensor.reductions import sum as tensor_sum
from opweave.tensor.shape_ops import Shape_i
from opweave.tensor.type import TensorType, tensor

__all__ = [
    "Blockwise",
    "BlockwiseWithCoreShape",
    "OpWithCoreShape",
    "safe_signature",
    "vectorize_node_fallback",
]

#: A core-dimension list of a signature: ``()`` or ``(m,n)`` (names are words or digits).
_DIMS = r"\(\s*(?:\w+\s*(?:,\s*\w+\s*)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMS}\s*(?:,\s*{_DIMS}\s*)*->\s*{_DIMS}\s*(?:,\s*{_DIMS}\s*)*$")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The core dimension names of each input and output of a gufunc ``signature``.

    Raises
    ------
    ValueError
        If ``signature`` is not of the form ``"(m,n),(n)->(m)"``.
    """
    if not isinstance(signature, str) or not _SIGNATURE.match(signature):
        raise ValueError(
            f"Blockwise: not a valid gufunc signature: {signature!r} (expected e.g. "
            "'(m,n),(n)->(m)')"
        )
    ins, outs = signature.split("->")

    def dims(part: str) -> list[tuple[str, ...]]:
        groups = re.findall(r"\(([^)]*)\)", part)
        return [tuple(d.strip() for d in g.split(",") if d.strip()) for g in groups]

    return dims(ins), dims(outs)


def safe_signature(core_inputs_ndim: Sequence[int], core_outputs_ndim: Sequence[int]) -> str:
    """A signature giving every core dimension its own name (nothing is assumed equal).

    Parameters
    ----------
    core_inputs_ndim, core_outputs_ndim
        The number of core dimensions of each input and output.

    Returns
    -------
    str
        For ``[2, 1], [1]``: ``"(i00,i01),(i10)->(o00)"``.
    """

    def part(prefix: str, ndims: Sequence[int]) -> str:
        return ",".join(
            "(" + ",".join(f"{prefix}{k}{d}" for d in range(n)) + ")" for k, n in enumerate(ndims)
        )

    return f"{part('i', core_inputs_ndim)}->{part('o', core_outputs_ndim)}"


def _broadcast_static(lengths: Sequence[int | None], where: str) -> int | None:
    """The static length of a batch dimension from its inputs' static lengths.

    Raises
    ------
    ValueError
        If two known lengths other than 1 differ.
    """
    known = {n for n in lengths if n is not None and n != 1}
    if len(known) > 1:
        raise ValueError(f"{where}: incompatible batch dimension lengths {sorted(known)}")
    if known:
        return known.pop()
    return 1 if lengths and all(n == 1 for n in lengths) else None


class Blockwise(Op):
    """A core Op applied over the leading (batch) dimensions of its inputs.

    Parameters
    ----------
    core_op
        The Op computing the core case. It must not be a :class:`Blockwise` itself.
    signature
        The gufunc signature of the core case, e.g. ``"(m,m)->(m,m)"``; default: the
        core Op's ``gufunc_signature`` attribute.
    name
        A name for printing (default: ``Blockwise{core_op, signature}``).
    gufunc_spec
        ``(import path, n_inputs, n_outputs)`` of a NumPy function computing the whole
        batched case (e.g. ``("numpy.matmul", 2, 1)``): the Python backend calls it instead
        of looping the core Op. Not part of the Op's identity. Default: the core Op's
        ``gufunc_spec`` attribute, if any.
    destroy_map
        Must equal the core Op's (default: it).

    Raises
    ------
    TypeError
        If ``core_op`` is not an Op or is a Blockwise.
    ValueError
        If no signature is given nor found, the signature is malformed, or ``destroy_map``
        differs from the core Op's.

    Examples
    --------
    >>> from opweave.tensor.nlinalg import matrix_inverse
    >>> inv = Blockwise(matrix_inverse, signature="(m,m)->(m,m)")
    >>> xs = tensor("xs", dtype="float64", shape=(None, 3, 3))
    >>> inv(xs).type.shape
    (None, 3, 3)
    """

    __props__ = ("core_op", "signature")

    def __init__(
        self,
        core_op: Op,
        signature: str | None = None,
        name: str | None = None,
        gufunc_spec: tuple[str, int, int] | None = None,
        destroy_map: dict[int, list[int]] | None = None,
    ) -> None:
        if not isinstance(core_op, Op):
            raise TypeError(f"Blockwise: core_op must be an Op, got {type(core_op).__name__}")
        if isinstance(core_op, Blockwise):
            raise TypeError("Blockwise: the core Op is already a Blockwise")
        if signature is None:
            signature = getattr(core_op, "gufunc_signature", None)
            if signature is None:
                raise ValueError(
                    f"Blockwise: no signature given and the core Op {core_op} has no "
                    "gufunc_signature"
                )
        self.core_op = core_op
        self.signature = signature
        self.name = name
        self.inputs_sig, self.outputs_sig = _parse_signature(signature)
        self.gufunc_spec = gufunc_spec
        core_destroy = dict(getattr(core_op, "destroy_map", {}) or {})
        if destroy_map is not None and dict(destroy_map) != core_destroy:
            raise ValueError(
                f"Blockwise: destroy_map {destroy_map} must be the core Op's ({core_destroy})"
            )
        if core_destroy:
            self.destroy_map = core_destroy

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        return f"{type(self).__name__}{{{self.core_op}, {self.signature}}}"

    # ------------------------------------------------------------------ core nodes

    def _core_inputs(
        self, inputs: Sequence[Variable], *, keep_unbatched: bool = False
    ) -> tuple[list[Variable], list[Variable]]:
        """Placeholders of the core case of ``inputs`` (and those that are placeholders).

        With ``keep_unbatched``, an input whose batch dimensions all have static length 1
        is given to the core Op itself (squeezed), so that its value stays visible.
        """
        core_inputs: list[Variable] = []
        dummies: list[Variable] = []
        if len(inputs) != len(self.inputs_sig):
            raise TypeError(
                f"{self}: expected {len(self.inputs_sig)} inputs (signature {self.signature}), "
                f"got {len(inputs)}"
            )
        for i, (inp, sig) in enumerate(zip(inputs, self.inputs_sig, strict=True)):
            ttype = inp.type
            if not isinstance(ttype, TensorType):
                raise TypeError(f"{self}: input {i} must be a TensorType variable, got {ttype}")
            if ttype.ndim < len(sig):
                raise ValueError(
                    f"{self}: input {i} ({inp}, type {ttype}) has fewer than the "
                    f"{len(sig)} core dimensions of the signature {self.signature}"
                )
            batch = ttype.ndim - len(sig)
            if keep_unbatched and all(n == 1 for n in ttype.shape[:batch]):
                core_inputs.append(_squeeze_left(inp, batch))
                continue
            dummy = tensor(dtype=ttype.dtype, shape=ttype.shape[batch:])
            core_inputs.append(dummy)
            dummies.append(dummy)
        return core_inputs, dummies

    def _core_node(self, core_inputs: Sequence[Variable]) -> Apply:
        """The core Op applied to ``core_inputs``, checked against the signature."""
        node = self.core_op.make_node(*core_inputs)
        if len(node.outputs) != len(self.outputs_sig):
            raise ValueError(
                f"{self}: the core Op gives {len(node.outputs)} outputs, the signature "
                f"{self.signature} {len(self.outputs_sig)}"
            )
        for i, (out, sig) in enumerate(zip(node.outputs, self.outputs_sig, strict=True)):
            if out.type.ndim != len(sig):
                raise ValueError(
                    f"{self}: core output {i} has {out.type.ndim} dimensions, the signature "
                    f"{self.signature} gives it {len(sig)}"
                )
        return node

    def core_node(self, node: Apply) -> Apply:
        """A node of the core Op on placeholders of one batch entry of ``node``'s inputs
        (inputs without batch extent are given as they are)."""
        core_inputs, _ = self._core_inputs(node.inputs, keep_unbatched=True)
        return self._core_node(core_inputs)

    def batch_ndim(self, node: Apply) -> int:
        """The number of batch dimensions of ``node``'s outputs."""
        return int(node.outputs[0].type.ndim - len(self.outputs_sig[0]))

    # ------------------------------------------------------------------ the Op contract

    def make_node(self, *inputs: Any) -> Apply:
        """Apply the Op to ``inputs`` (each with at least its core dimensions).

        Inputs with fewer batch dimensions are padded on the left with broadcastable ones.

        Raises
        ------
        TypeError
            For a wrong number of inputs or an input that is not a tensor.
        ValueError
            For an input lacking core dimensions, or batch dimensions of known lengths that
            do not broadcast.
        """
        tensors = [as_tensor_variable(x) for x in inputs]
        core_inputs, _ = self._core_inputs(tensors)
        core_node = self._core_node(core_inputs)
        batch = max(x.type.ndim - len(sig) for x, sig in zip(tensors, self.inputs_sig))
        padded = [
            left_pad(x, batch + len(sig)) for x, sig in zip(tensors, self.inputs_sig, strict=True)
        ]
        batch_shape = tuple(
            _broadcast_static([x.type.shape[d] for x in padded], str(self)) for d in range(batch)
        )
        outputs = [
            tensor(dtype=out.type.dtype, shape=batch_shape + tuple(out.type.shape))
            for out in core_node.outputs
        ]
        return Apply(self, padded, outputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """Batch lengths from the inputs; core lengths from the signature's names, the
        signature's digits, or the core Op's own ``infer_shape``."""
        batch = self.batch_ndim(node)
        batch_shape = [_batch_length(node.inputs, shapes, d) for d in range(batch)]
        named: dict[str, Any] = {}
        for shape, sig in zip(shapes, self.inputs_sig, strict=True):
            for length, dim in zip(shape[batch:], sig, strict=True):
                if dim not in named or (
                    isinstance(length, Constant) and not isinstance(named[dim], Constant)
                ):
                    named[dim] = length
        core_shapes: list[list[Any]] | None = None
        result = []
        for o, (out, sig) in enumerate(zip(node.outputs, self.outputs_sig, strict=True)):
            core = []
            for i, dim in enumerate(sig):
                if dim in named:
                    core.append(named[dim])
                elif dim.isdigit():
                    core.append(constant(int(dim), dtype="int64"))
                else:
                    if core_shapes is None:
                        core_shapes = self._core_output_shapes(fgraph, node, shapes, batch)
                    length = core_shapes[o][i]
                    core.append(Shape_i(batch + i)(out) if length is None else length)
            result.append((*batch_shape, *core))
        return result

    def _core_output_shapes(
        self, fgraph: Any, node: Apply, shapes: list[Any], batch: int
    ) -> list[list[Any]]:
        """The core Op's output shapes, ``None`` where they may vary over the batch."""
        try:
            core_inputs, dummies = self._core_inputs(node.inputs, keep_unbatched=True)
            core_node = self._core_node(core_inputs)
            core_shapes = self.core_op.infer_shape(
                fgraph, core_node, [tuple(s[batch:]) for s in shapes]
            )
        except (NotImplementedError, AttributeError, TypeError):
            return [[None] * len(sig) for sig in self.outputs_sig]
        placeholders = set(dummies)
        safe: list[list[Any]] = []
        for shape in core_shapes:
            safe.append(
                [
                    None if isinstance(n, Variable) and placeholders & set(ancestors([n])) else n
                    for n in shape
                ]
            )
        return safe

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The core Op's connection pattern (every input to every output by default)."""
        pattern = getattr(self.core_op, "connection_pattern", None)
        if pattern is None:
            return [[True] * len(node.outputs) for _ in node.inputs]
        return pattern(self.core_node(node))

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """The core Op's gradient graph, vectorized over the batch dimensions; terms of
        inputs that were broadcast along a batch dimension are summed over it."""
        batch = self.batch_ndim(outputs[0].owner)
        core_inputs = [tensor(dtype=x.type.dtype, shape=x.type.shape[batch:]) for x in inputs]
        core_outputs = self._core_node(core_inputs).outputs
        core_grads = [
            g if isinstance(g.type, NullType | DisconnectedType) else out.type()
            for g, out in zip(output_grads, core_outputs, strict=True)
        ]
        core_input_grads = self.core_op.L_op(core_inputs, core_outputs, core_grads)
        replace = dict(
            zip(
                [*core_inputs, *core_outputs, *core_grads],
                [*inputs, *outputs, *output_grads],
                strict=True,
            )
        )
        replace = {k: v for k, v in replace.items() if k is not v}
        grads = list(vectorize_graph(list(core_input_grads), replace=replace))
        batch_shape = outputs[0].type.shape[:batch]
        result: list[Variable] = []
        for inp, g in zip(inputs, grads, strict=True):
            if isinstance(g.type, NullType | DisconnectedType):
                result.append(g)
                continue
            if g.type.ndim < inp.type.ndim:
                g = zeros_like_float(inp, dtype=g.type.dtype) + g
            axes = [
                d
                for d, (n_in, n_out) in enumerate(zip(inp.type.shape[:batch], batch_shape))
                if n_in == 1 and n_out != 1
            ]
            if axes:
                g = tensor_sum(g, axis=axes, keepdims=True)
            result.append(g)
        return result


def _squeeze_left(x: Variable, n: int) -> Variable:
    """``x`` without its first ``n`` dimensions (each of static length 1)."""
    if n == 0:
        return x
    return x.dimshuffle(*range(n, x.type.ndim))


def _batch_length(inputs: Sequence[Variable], shapes: Sequence[Any], d: int) -> Any:
    """The symbolic length of batch dimension ``d``: 1 if every input has static length
    1 there, else the length of an input without static length 1 (a known one first)."""
    candidates = [
        (x.type.shape[d], shape[d])
        for x, shape in zip(inputs, shapes, strict=True)
        if x.type.shape[d] != 1
    ]
    if not candidates:
        return constant(1, dtype="int64")
    for static, _ in candidates:
        if static is not None:
            return constant(static, dtype="int64")
    return candidates[0][1]


@_vectorize_node.register(Op)
def vectorize_node_fallback(op: Op, node: Apply, *batched_inputs: Variable) -> Any:
    """Vectorize a node whose Op has no rule of its own: rebuild it as it is when no input
    gained batch dimensions, else wrap its Op in a :class:`Blockwise` (with the Op's
    ``gufunc_signature``, or one giving every core dimension its own name).

    Raises
    ------
    NotImplementedError
        If an input gained batch dimensions and some input or output is not a tensor.
    """
    gained = [
        i
        for i, (old, new) in enumerate(zip(node.inputs, batched_inputs, strict=True))
        if getattr(new.type, "ndim", 0) != getattr(old.type, "ndim", 0)
    ]
    if not gained:
        return _vectorize_not_needed(op, node, *batched_inputs)
    for var in [*node.inputs, *node.outputs]:
        if not isinstance(var.type, TensorType):
            raise NotImplementedError(
                f"vectorize_graph: cannot vectorize {op} ({type(op).__name__}) over batch "
                f"dimensions of its input(s) {gained}: {var} has the non-tensor Type "
                f"{var.type}; register a rule with "
                f"opweave.graph.replace._vectorize_node.register({type(op).__name__})"
            )
    signature = getattr(op, "gufunc_signature", None) or safe_signature(
        [x.type.ndim for x in node.inputs], [x.type.ndim for x in node.outputs]
    )
    return Blockwise(op, signature=signature).make_node(*batched_inputs)


_vectorize_node.register(Blockwise, _vectorize_not_needed)


class OpWithCoreShape(OpFromGraph):
    """An :class:`~opweave.compile.builders.OpFromGraph` wrapping one node whose core output
    shape is passed as an extra input (PyTensor's contract).

    Backends that must know the core shape before running the batch loop compile such a
    wrapper; opweave's own backends run the wrapped graph like any ``OpFromGraph``. The
    inputs may repeat a variable (``on_unused_input`` defaults to ``"ignore"``).
    """

    def __init__(self, *args: Any, on_unused_input: str = "ignore", **kwargs: Any) -> None:
        super().__init__(*args, on_unused_input=on_unused_input, **kwargs)


class BlockwiseWithCoreShape(OpWithCoreShape):
    """An :class:`OpWithCoreShape` whose inner graph is one :class:`Blockwise` node."""

    def _blockwise(self) -> Blockwise:
        nodes = list(self.fgraph.apply_nodes)
        if len(nodes) != 1 or not isinstance(nodes[0].op, Blockwise):
            raise ValueError(
                "BlockwiseWithCoreShape: the inner graph must be exactly one Blockwise node, "
                f"got {[node.op for node in nodes]}"
            )
        return nodes[0].op

    @property
    def core_op(self) -> Op:
        """The core Op of the wrapped :class:`Blockwise`."""
        return self._blockwise().core_op

    def __str__(self) -> str:
        return f"[{self._blockwise()!s}]"
