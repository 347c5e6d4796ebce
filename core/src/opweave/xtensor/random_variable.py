"""Random variables over named dimensions (PyTensor's ``XRV``).

:class:`XRV` wraps a core :class:`~opweave.tensor.random.op.RandomVariable`. Its parameters
are labelled tensors that broadcast by dimension name; ``core_dims`` names the core
dimensions of each parameter and of one draw, and ``extra_dims`` names batch dimensions of
the draws that no parameter has (their lengths are inputs of the node). Like the core Op
it takes a generator first and returns ``(next_generator, draws)``. It is lowered to the
core Op by :mod:`opweave.xtensor.rewriting.random_variable`; PyTensor keeps the class in
``pytensor.xtensor.vectorization``, which re-exports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.scalar import discrete_dtypes
from opweave.tensor._typing import tensor_type_of
from opweave.tensor.basic import as_tensor_variable
from opweave.tensor.random.op import RandomVariable, RNGConsumerOp
from opweave.tensor.random.type import RandomType
from opweave.tensor.random.var import randomgen_constructor
from opweave.tensor.type import tensor
from opweave.tensor.utils import get_static_shape_from_size_variables
from opweave.xtensor.basic import XOp
from opweave.xtensor.type import XTensorVariable, as_xtensor, xtensor

__all__ = ["XRV"]

CoreDims = tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]


def _dims_and_shape(inputs: Sequence[XTensorVariable]) -> dict[str, int | None]:
    """The dimensions of ``inputs`` in order of appearance, with their static lengths.

    Raises
    ------
    ValueError
        If two inputs give one dimension different static lengths.
    """
    out: dict[str, int | None] = {}
    for inp in inputs:
        for dim, length in zip(inp.type.dims, inp.type.shape, strict=True):
            known = out.get(dim)
            if known is not None and length is not None and known != length:
                raise ValueError(f"Dimension {dim} has conflicting shapes")
            if dim not in out or known is None:
                out[dim] = length
    return out


class XRV(XOp, RNGConsumerOp):
    """A core random variable that broadcasts its parameters by dimension name.

    The node's inputs are ``(rng, *extra_dim_lengths, *params)`` and its outputs
    ``(next_rng, draws)``; calling the Op returns the draws. The draws' dimensions are the
    ``extra_dims``, then the parameters' batch dimensions (in order of appearance), then
    the output core dimensions.

    Parameters
    ----------
    core_op
        The wrapped :class:`~opweave.tensor.random.op.RandomVariable`.
    core_dims
        ``(params_core_dims, output_core_dims)``: for each parameter the names of its
        core dimensions (in the order the core Op expects them), and those of one draw.
    extra_dims
        Names of the batch dimensions that only the draws have.
    name
        The name printed for the Op (default: the core Op's name).

    Raises
    ------
    ValueError
        If an operand repeats a core dimension, or ``extra_dims`` repeats a name.
    """

    __props__ = ("core_op", "core_dims", "extra_dims")
    default_output = 1

    def __init__(
        self,
        core_op: RandomVariable,
        core_dims: CoreDims,
        extra_dims: Sequence[str],
        name: str | None = None,
    ) -> None:
        super().__init__()
        self.name = name if name is not None else getattr(core_op, "name", None)
        self.core_op = core_op
        params_core_dims, out_core_dims = core_dims
        for operand_dims in (*params_core_dims, out_core_dims):
            if len(set(operand_dims)) != len(operand_dims):
                raise ValueError(f"Operand has repeated dims {tuple(operand_dims)}")
        self.core_dims: CoreDims = (
            tuple(tuple(d) for d in params_core_dims),
            tuple(out_core_dims),
        )
        if len(set(extra_dims)) != len(extra_dims):
            raise ValueError("size_dims must be unique")
        self.extra_dims: tuple[str, ...] = tuple(extra_dims)
        print_name = getattr(core_op, "_print_name", None)
        if print_name:
            self._print_name = print_name

    def __str__(self) -> str:
        attrs = f"core_dims={self.core_dims}, extra_dims={self.extra_dims}"
        if self.name is not None:
            return f"{self.name}({attrs})"
        return f"{type(self).__name__}(core_op={self.core_op}, {attrs})"

    # ------------------------------------------------------------- node parts

    def rng_param(self, node: Apply) -> Variable:
        """The generator input of ``node``."""
        return node.inputs[0]

    def size_params(self, node: Apply) -> list[Variable]:
        """The lengths of the extra dimensions of ``node``."""
        return list(node.inputs[1 : 1 + len(self.extra_dims)])

    def dist_params(self, node: Apply) -> list[Variable]:
        """The distribution parameters of ``node``."""
        return list(node.inputs[1 + len(self.extra_dims) :])

    def update(self, node: Apply) -> dict[Variable, Variable]:
        """``{rng input: next_rng output}``."""
        return {node.inputs[0]: node.outputs[0]}

    # ------------------------------------------------------------------ graph

    def make_node(self, rng: Any, *extra_dim_lengths_and_params: Any) -> Apply:
        """Check the inputs and build ``(next_rng, draws)``.

        Parameters
        ----------
        rng
            A random generator variable, or ``None`` for a new shared generator.
        *extra_dim_lengths_and_params
            The length of each extra dimension (integer scalars), then the parameters.

        Raises
        ------
        TypeError
            For an ``rng`` that is not a generator or lengths that are not integer scalars.
        ValueError
            For a wrong number of parameters, a parameter with a core dimension that
            belongs to another parameter or without one of its own, or extra dimensions
            that a parameter also has.
        """
        if rng is None:
            rng = randomgen_constructor(np.random.default_rng())
        elif not (isinstance(rng, Variable) and isinstance(rng.type, RandomType)):
            raise TypeError("The type of rng should be an instance of RandomGeneratorType ")

        n_extra = len(self.extra_dims)
        extra_dim_lengths = [
            as_tensor_variable(
                length.values if isinstance(length, XTensorVariable) else length,
                allow_xtensor_conversion=True,
            )
            for length in extra_dim_lengths_and_params[:n_extra]
        ]
        if not all(
            length.type.ndim == 0 and length.type.dtype in discrete_dtypes
            for length in extra_dim_lengths
        ):
            raise TypeError("All dimension lengths should be scalar discrete dtype.")

        params = [as_xtensor(p) for p in extra_dim_lengths_and_params[n_extra:]]
        if len(params) != len(self.core_op.ndims_params):
            raise ValueError(
                f"Expected {len(self.core_op.ndims_params)} parameters + {n_extra} "
                f"dim_lengths, got {len(extra_dim_lengths_and_params)}"
            )

        params_core_dims, out_core_dims = self.core_dims
        all_core_dims = set(chain.from_iterable(params_core_dims))
        for param, param_core_dims in zip(params, params_core_dims, strict=True):
            invalid = (set(param.type.dims) - set(param_core_dims)) & all_core_dims
            if invalid:
                raise ValueError(f"Parameter {param} has invalid core dimensions {sorted(invalid)}")

        extra_dims_and_shape = dict(
            zip(
                self.extra_dims,
                get_static_shape_from_size_variables(extra_dim_lengths),
                strict=True,
            )
        )
        params_dims_and_shape = _dims_and_shape(params)
        conflict = set(extra_dims_and_shape) & set(params_dims_and_shape)
        if conflict:
            raise ValueError(
                f"Size dimensions {sorted(conflict)} conflict with parameter dimensions. "
                "They should be unique."
            )
        batch = [
            (dim, length)
            for dim, length in (extra_dims_and_shape | params_dims_and_shape).items()
            if dim not in all_core_dims
        ]

        dummy_core_params = []
        for param, param_core_dims in zip(params, params_core_dims, strict=True):
            try:
                core_shape = [param.type.shape[param.type.dims.index(d)] for d in param_core_dims]
            except ValueError:
                raise ValueError(
                    f"At least one core dim={param_core_dims} missing from input {param} "
                    f"with dims={param.type.dims}"
                ) from None
            dummy_core_params.append(tensor(dtype=param.type.dtype, shape=core_shape))
        core_node = self.core_op.make_node(rng, None, *dummy_core_params)
        if len(core_node.outputs) != 2:
            raise NotImplementedError(
                "XRandomVariable only supports core ops with two outputs (rng, out)"
            )
        core_type = tensor_type_of(core_node.outputs[1])
        draws = xtensor(
            dtype=core_type.dtype,
            shape=(*(length for _, length in batch), *core_type.shape),
            dims=(*(dim for dim, _ in batch), *out_core_dims),
        )
        return Apply(self, [rng, *extra_dim_lengths, *params], [rng.type(), draws])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The node rebuilt on batched inputs (the new dimensions come from the parameters).

        Raises
        ------
        NotImplementedError
            If a length of an extra dimension is batched.
        """
        new_rng, *rest = new_inputs
        n_extra = len(self.extra_dims)
        new_lengths = [length.squeeze() for length in rest[:n_extra]]  # type: ignore[attr-defined]
        if not all(length.type.ndim == 0 for length in new_lengths):
            raise NotImplementedError(
                f"Vectorization of {self} with batched extra_dim_lengths not implemented, "
            )
        return list(self.make_node(new_rng, *new_lengths, *rest[n_extra:]).outputs)
