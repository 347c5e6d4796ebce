"""Dimension-aware vectorization of scalar and core Ops: :class:`XElemwise` and
:class:`XBlockwise` (PyTensor's ``pytensor.xtensor.vectorization``).

An :class:`XElemwise` applies a scalar Op elementwise to named-dimension tensors: the
inputs broadcast by dimension name (not by position), and the output holds the union of
their dimensions, in the order they are first met. An :class:`XBlockwise` does the same for
an Op on core dimensions (a matrix decomposition, a solve, a convolution): the dimensions
that are not core ones are batch dimensions and come first in the outputs.

Both are XOps: they carry no kernels and are lowered to tensor ``Elemwise`` and
``Blockwise`` nodes by :mod:`opweave.xtensor.rewriting.vectorization` before linking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import singledispatch
from itertools import chain
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.graph.traversal import toposort, truncated_graph_inputs
from opweave.scalar.basic import ScalarOp
from opweave.scalar.type import get_scalar_type
from opweave.tensor.extra_ops import broadcast_shape, broadcast_to
from opweave.tensor.type import tensor
from opweave.tensor.variable import TensorVariable
from opweave.xtensor.basic import XOp, XTypeCastOp
from opweave.xtensor.random_variable import XRV
from opweave.xtensor.type import XTensorType, XTensorVariable, as_xtensor, xtensor

__all__ = ["XRV", "XBlockwise", "XElemwise", "combine_dims_and_shape", "vectorize_graph"]


def combine_dims_and_shape(
    inputs: Sequence[XTensorVariable], exclude: Sequence[str] | None = None
) -> dict[str, int | None]:
    """Merge the dimensions and static lengths of several named-dimension tensors.

    Parameters
    ----------
    inputs
        The variables, whose dimensions are visited in order (the first time a dimension
        is met fixes its position in the result).
    exclude
        Dimensions left out of the result.

    Returns
    -------
    dict of str to int or None
        Each dimension's static length: the one any input knows, ``None`` when none does.

    Raises
    ------
    ValueError
        When two inputs give one dimension different static lengths.
    """
    excluded = set() if exclude is None else set(exclude)
    dims_and_shape: dict[str, int | None] = {}
    for inp in inputs:
        for dim, length in zip(inp.type.dims, inp.type.shape, strict=True):
            if dim in excluded:
                continue
            known = dims_and_shape.get(dim)
            if dim not in dims_and_shape or known is None:
                dims_and_shape[dim] = length
            elif length is not None and length != known:
                raise ValueError(f"Dimension {dim} has conflicting shapes")
    return dims_and_shape


def _split(
    items: Sequence[tuple[str, int | None]],
) -> tuple[tuple[str, ...], tuple[int | None, ...]]:
    """The dimensions and the lengths of ``(dim, length)`` pairs, as two tuples."""
    return tuple(d for d, _ in items), tuple(s for _, s in items)


class XElemwise(XOp):
    """A scalar Op applied elementwise to named-dimension tensors.

    Inputs broadcast by dimension name; the output has every input's dimensions (in the
    order first met, from the first input on) and the dtype the scalar Op gives.

    Parameters
    ----------
    scalar_op
        The scalar Op (``opweave.scalar.add``, a ``Cast``, a ``Composite``, ...).
    """

    __props__ = ("scalar_op",)

    def __init__(self, scalar_op: ScalarOp) -> None:
        super().__init__()
        self.scalar_op = scalar_op

    def make_node(self, *inputs: Any) -> Apply:
        """Broadcast the inputs by name and give outputs of the scalar Op's dtypes."""
        xinputs = [as_xtensor(inp) for inp in inputs]
        nin = getattr(self.scalar_op, "nin", -1)
        if nin != -1 and len(xinputs) != nin:
            raise ValueError(f"Wrong number of inputs, expected {nin}, got {len(xinputs)}")
        out_dims, out_shape = _split(list(combine_dims_and_shape(xinputs).items()))
        dummy = [get_scalar_type(inp.type.dtype)() for inp in xinputs]
        scalar_outs: list[Any] = list(self.scalar_op.make_node(*dummy).outputs)
        out_dtypes = [out.type.dtype for out in scalar_outs]
        outputs = [xtensor(dtype=dtype, dims=out_dims, shape=out_shape) for dtype in out_dtypes]
        return Apply(self, xinputs, outputs)

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """The same Op on the batched inputs (new dimensions broadcast by name)."""
        return self(*new_inputs, return_list=True)


class XBlockwise(XOp):
    """A core Op applied over the batch dimensions of named-dimension tensors.

    Parameters
    ----------
    core_op
        The Op on the core dimensions (a tensor Op, batched by ``Blockwise`` once lowered).
    core_dims
        ``(inputs_core_dims, outputs_core_dims)``: for each input and each output, the
        names of its core dimensions, in the order the core Op sees them.
    signature
        The gufunc signature given to the lowered ``Blockwise``; by default the core Op's
        ``gufunc_signature``, else one spelled from ``core_dims``.
    """

    __props__ = ("core_op", "core_dims")

    def __init__(
        self,
        core_op: Op,
        core_dims: tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]],
        signature: str | None = None,
    ) -> None:
        super().__init__()
        self.core_op = core_op
        self.core_dims = core_dims
        self.signature = signature

    def make_node(self, *inputs: Any) -> Apply:
        """Check each input holds its core dimensions (and no other input's) and give
        outputs with the batch dimensions first, then the output's core dimensions."""
        xinputs = [as_xtensor(i) for i in inputs]
        core_inputs_dims, core_outputs_dims = self.core_dims
        if len(xinputs) != len(core_inputs_dims):
            raise ValueError(
                f"Wrong number of inputs, expected {len(core_inputs_dims)}, got {len(xinputs)}"
            )
        all_core = set(chain.from_iterable(core_inputs_dims))
        for i, (inp, core_inp_dims) in enumerate(zip(xinputs, core_inputs_dims, strict=True)):
            if invalid := set(inp.type.dims) & (all_core - set(core_inp_dims)):
                raise ValueError(
                    f"Input {i} has invalid core dims {sorted(invalid)}. Allowed: {core_inp_dims}"
                )
        dims_and_shape = combine_dims_and_shape(xinputs)
        batch_dims, batch_shape = _split(
            [(d, s) for d, s in dims_and_shape.items() if d not in all_core]
        )
        dummy_core_inputs = []
        for inp, core_inp_dims in zip(xinputs, core_inputs_dims, strict=True):
            if missing := [d for d in core_inp_dims if d not in inp.type.dims]:
                raise ValueError(
                    f"At least one core dim={core_inp_dims} missing from input {inp} "
                    f"with dims={inp.type.dims} (missing: {missing})"
                )
            core_shape = tuple(inp.type.shape[inp.type.dims.index(d)] for d in core_inp_dims)
            dummy_core_inputs.append(tensor(dtype=inp.type.dtype, shape=core_shape))
        core_outs: list[Any] = list(self.core_op.make_node(*dummy_core_inputs).outputs)
        outputs = [
            xtensor(
                dtype=core_out.type.dtype,
                shape=batch_shape + tuple(core_out.type.shape),
                dims=batch_dims + tuple(core_out_dims),
            )
            for core_out, core_out_dims in zip(core_outs, core_outputs_dims, strict=True)
        ]
        return Apply(self, xinputs, outputs)

    def vectorize_node(self, node: Apply, *new_inputs: Variable, new_dim: str | None) -> Any:
        """The same Op on the batched inputs (new dimensions become batch dimensions)."""
        return self(*new_inputs, return_list=True)


# ---------------------------------------------------------------------- vectorization


@_vectorize_node.register(XOp)
@_vectorize_node.register(XTypeCastOp)
def _vectorize_xop(op: Any, node: Apply, *new_inputs: Variable) -> Sequence[Variable]:
    """The rule :func:`opweave.graph.replace.vectorize_graph` uses for xtensor Ops, which
    knows no dimension names (``new_dim`` is ``None``)."""
    return _vectorize_xnode(op, node, *new_inputs, new_dim=None)


@singledispatch
def _vectorize_xnode(
    op: Any, node: Apply, *batched_inputs: Variable, new_dim: str | None = None
) -> Sequence[Variable]:
    """``node`` rebuilt on ``batched_inputs``, whose new dimensions must be new to the
    graph of ``node`` and must keep every dimension the old inputs had."""
    old_dims = set(
        chain.from_iterable(
            v.type.dims for v in (*node.inputs, *node.outputs) if isinstance(v.type, XTensorType)
        )
    )
    for new_inp, old_inp in zip(batched_inputs, node.inputs, strict=True):
        if not (isinstance(new_inp.type, XTensorType) and isinstance(old_inp.type, XTensorType)):
            continue
        old_set, new_set = set(old_inp.type.dims), set(new_inp.type.dims)
        if missing := old_set - new_set:
            raise ValueError(
                f"Vectorized input {new_inp} is missing pre-existing dims: {sorted(missing)}"
            )
        if clash := (new_set - old_set) & old_dims:
            raise ValueError(
                f"Vectorized input {new_inp} has new dimensions that were present in the "
                f"original graph: {sorted(clash)}"
            )
    return list(op.vectorize_node(node, *batched_inputs, new_dim=new_dim))


def _vectorize_single_dim(
    outputs: Sequence[Variable], replace: Mapping[Variable, Variable], new_dim: str
) -> list[Variable]:
    """``outputs`` rebuilt for the replacements, which add the one dimension ``new_dim``."""
    inputs = truncated_graph_inputs(list(outputs), ancestors_to_include=replace.keys())
    vect: dict[Variable, Variable] = {inp: replace.get(inp, inp) for inp in inputs}
    for node in toposort(outputs, blockers=inputs):
        new_inputs = [vect.get(inp, inp) for inp in node.inputs]
        if isinstance(node.op, XOp | XTypeCastOp):
            new_outs: Sequence[Variable] = _vectorize_xnode(
                node.op, node, *new_inputs, new_dim=new_dim
            )
        else:
            result = _vectorize_node(node.op, node, *new_inputs)
            new_outs = result.outputs if isinstance(result, Apply) else result
        for out, new_out in zip(node.outputs, new_outs, strict=True):
            # a replacement given for one output of a multi-output node is kept
            vect.setdefault(out, new_out)
    return [vect[out] for out in outputs]


def _intermediate(new: Variable, remaining: Sequence[str]) -> Any:
    """A placeholder of the type ``new`` has without the dimensions still to add."""
    if isinstance(new, XTensorVariable):
        pairs = zip(new.type.dims, new.type.shape, strict=True)
        dims, shape = _split([(d, s) for d, s in pairs if d not in remaining])
        return new.type.clone(dims=dims, shape=shape)()
    if isinstance(new, TensorVariable):
        return new.type.clone(shape=new.type.shape[len(remaining) :])()
    return new.type()


def vectorize_graph(
    outputs: Variable | Sequence[Variable],
    replace: Mapping[Variable, Variable],
    *,
    new_tensor_dims: Sequence[str] = (),
) -> Any:
    """Rebuild a graph of xtensors (and tensors) for inputs with new dimensions.

    Batched xtensor replacements may hold their new dimensions anywhere (each named, and
    absent from the original graph). Batched tensor replacements hold them on the left,
    positionally; ``new_tensor_dims`` names them, left to right.

    The new dimensions come first in the xtensor outputs: those only xtensor
    replacements introduce, then ``new_tensor_dims``. Tensor outputs get the new
    dimensions on the left, in the same order.

    Parameters
    ----------
    outputs
        One variable or a sequence of them.
    replace
        ``{variable of the graph: batched variable}``.
    new_tensor_dims
        Names of the leading batch dimensions of tensor replacements.

    Returns
    -------
    Variable or list of Variable
        The rebuilt outputs, in the form of ``outputs``.

    Raises
    ------
    ValueError
        For a replacement that misses a dimension of the variable it replaces, or tensor
        replacements with more batch dimensions than ``new_tensor_dims`` names.
    NotImplementedError
        For a replacement of another Type whose number of dimensions changed.

    Examples
    --------
    >>> from opweave.xtensor import xtensor
    >>> x = xtensor("x", dims=("a",))
    >>> y = xtensor("y", dims=("a",))
    >>> x_new = xtensor("x_new", dims=("c", "a"))
    >>> y_new = xtensor("y_new", dims=("a", "b"))
    >>> vectorize_graph(x + y, {x: x_new, y: y_new}).type.dims
    ('c', 'b', 'a')
    """
    seq_outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    for old, new in replace.items():
        if not (isinstance(old, Variable) and isinstance(new, Variable)):
            raise ValueError(f"Some of the replaced items are not Variables: {replace}")

    new_xtensor_sizes: dict[str, Any] = {}
    tensor_batch_shapes: list[tuple[Any, ...]] = []
    for old, new in replace.items():
        if isinstance(new, XTensorVariable):
            old_dims = set(old.type.dims)  # type: ignore[attr-defined]
            if missing := old_dims - set(new.type.dims):
                raise ValueError(
                    f"Vectorized input {new} is missing pre-existing dims: {sorted(missing)}"
                )
            new_xtensor_sizes.update({d: s for d, s in new.sizes.items() if d not in old_dims})
        elif isinstance(new, TensorVariable):
            n_new = new.type.ndim - old.type.ndim  # type: ignore[attr-defined]
            if n_new < 0:
                raise ValueError(
                    f"Vectorized input {new} is missing pre-existing dims "
                    f"{new.type.ndim=}, {old.type.ndim=}"  # type: ignore[attr-defined]
                )
            if n_new > len(new_tensor_dims):
                if not new_tensor_dims:
                    raise ValueError(
                        f"TensorVariable replacement {new} has {n_new} batch dimensions. "
                        "You must specify `new_tensor_dims` to label these."
                    )
                raise ValueError(
                    f"TensorVariable replacement {new} has {n_new} batch dimensions "
                    f"but only {new_tensor_dims=} were specified. "
                )
            tensor_batch_shapes.append(
                tuple(
                    1 if b else s
                    for s, b in zip(
                        tuple(new.shape)[:n_new], new.type.broadcastable[:n_new], strict=True
                    )
                )
            )
        elif getattr(new.type, "ndim", None) != getattr(old.type, "ndim", None):
            raise NotImplementedError(
                f"vectorize_graph does not know how to handle batched input {new} of type "
                f"{new.type}"
            )

    new_dims = (*(d for d in new_xtensor_sizes if d not in new_tensor_dims), *new_tensor_dims)
    new_tensor_sizes: dict[str, Any] = {}
    if new_tensor_dims:
        lengths = broadcast_shape(*tensor_batch_shapes, arrays_are_shapes=True)
        if len(lengths) != len(new_tensor_dims):
            raise ValueError(
                f"{len(new_tensor_dims)} tensor dims were specified, but only "
                f"{len(lengths)} were found in the new inputs"
            )
        new_tensor_sizes = dict(zip(new_tensor_dims, lengths, strict=True))
    new_sizes = tuple(new_xtensor_sizes.get(d, new_tensor_sizes.get(d, 1)) for d in new_dims)

    # the new dimensions of every replacement on the left, in the order of new_dims
    aligned: dict[Variable, Variable] = {}
    for old, new in replace.items():
        if isinstance(new, XTensorVariable):
            new = new.transpose(*new_dims, ..., missing_dims="ignore")  # type: ignore[attr-defined]
        elif isinstance(new, TensorVariable):
            n_existing = new.type.ndim - old.type.ndim  # type: ignore[attr-defined]
            if n_existing < len(new_dims) or any(new.type.broadcastable[: len(new_dims)]):
                new = broadcast_to(new, shape=(*new_sizes, *tuple(new.shape)[n_existing:]))
        aligned[old] = new

    current = seq_outputs
    remaining = list(new_dims)
    while remaining:
        new_dim = remaining.pop()
        if remaining:
            # add one dimension at a time, through placeholders without the others
            step = {old: _intermediate(new, remaining) for old, new in aligned.items()}
            aligned = dict(zip(step.values(), aligned.values(), strict=True))
        else:
            step = aligned
        current = _vectorize_single_dim(current, step, new_dim)

    results = [
        new.transpose(*new_dims, *old.type.dims)  # type: ignore[attr-defined]
        if isinstance(new, XTensorVariable)
        else new
        for new, old in zip(current, seq_outputs, strict=True)
    ]
    return results[0] if isinstance(outputs, Variable) else results
