"""The :class:`RandomVariable` Op (``pytensor.tensor.random.op``).

A random variable node takes ``(rng, size, *dist_params)`` and returns
``(next_rng, draws)``: the generator advanced past the draws, and the draws. ``size`` is
``None`` (the draws take the broadcast batch shape of the parameters) or an integer
vector of known length (the batch shape). Each Op has a ``signature`` in NumPy's
gufunc notation giving the core dimensions of its parameters and of one draw
(``"(),()->()"`` for the normal, ``"(n),(n,n)->(n)"`` for the multivariate normal);
parameters broadcast over their leading (batch) dimensions. The draws themselves are
computed by the backends (opweave-python, with NumPy).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.gradient.opsupport import grad_undefined
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import generic
from opweave.scalar.type import floatX
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_type_of, tensor_var
from opweave.tensor.basic import _const_int, _int_vector, _static_vector, as_tensor_variable
from opweave.tensor.random.type import RandomType
from opweave.tensor.random.var import randomgen_constructor
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = ["RandomVariable", "normalize_size_param"]

_GROUP = re.compile(r"\(([^()]*)\)")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """The core dimension names of each parameter and of the output."""
    if not isinstance(signature, str) or signature.count("->") != 1:
        raise ValueError(f"RandomVariable: invalid signature {signature!r} (want '(),()->()')")
    left, right = (part.replace(" ", "") for part in signature.split("->"))
    params = [tuple(d for d in g.split(",") if d) for g in _GROUP.findall(left)]
    outs = _GROUP.findall(right)
    if len(outs) != 1 or _GROUP.sub("", left).strip(",") or _GROUP.sub("", right):
        raise ValueError(f"RandomVariable: invalid signature {signature!r} (want '(),()->()')")
    return params, tuple(d for d in outs[0].split(",") if d)


def normalize_size_param(size: Any, who: str = "RandomVariable") -> Variable:
    """``size`` as a graph input: a ``None`` constant, or an integer vector of known length.

    Raises
    ------
    TypeError
        If ``size`` is not ``None``, an int or a sequence / vector of integers.
    ValueError
        If its length is not known statically or an entry is negative.
    """
    if size is None or (isinstance(size, Constant) and size.data is None):
        return Constant(generic, None, name="None")
    if isinstance(size, int | np.integer) and not isinstance(size, bool):
        size = (int(size),)
    var = _int_vector(size, f"{who}: size")
    entries = _static_vector(var)
    if entries is None:
        raise ValueError(f"{who}: the length of size {var} must be known statically")
    if any(e is not None and e < 0 for e in entries):
        raise ValueError(f"{who}: size entries must be non-negative, got {entries}")
    return var


def _is_none(v: Variable) -> bool:
    return isinstance(v, Constant) and v.data is None


def _broadcast_static(shapes: Sequence[Sequence[int | None]], who: str) -> list[int | None]:
    """The static batch shape of right-aligned ``shapes`` broadcast together."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[int | None] = []
    for i in range(ndim):
        dims = [s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"{who}: parameters with batch shapes {list(shapes)} do not broadcast")
        if known:
            out.append(known.pop())
        elif all(d == 1 for d in dims):
            out.append(1)
        else:
            out.append(None)
    return out


def _broadcast_symbolic(shapes: Sequence[Sequence[Any]]) -> list[Any]:
    """The batch shape of right-aligned symbolic ``shapes`` broadcast together."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Any] = []
    for i in range(ndim):
        dims = [s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0]
        dims = [d for d in dims if _const_int(d) != 1]
        if not dims:
            out.append(1)
            continue
        dim = dims[0]
        for other in dims[1:]:
            dim = tm.maximum(dim, other)
        out.append(dim)
    return out


class RandomVariable(Op):
    """A random variable: draws from a distribution with a NumPy generator.

    Inputs are ``(rng, size, *dist_params)``, outputs ``(next_rng, draws)``; calling the
    Op returns the draws (``default_output = 1``), whose ``owner.outputs[0]`` is the
    advanced generator.

    Parameters
    ----------
    name
        The distribution's name (NumPy's method name for most).
    signature
        The gufunc signature of one draw (see the module docstring).
    dtype
        The draws' dtype; ``"floatX"`` means ``config.floatX``.
    inplace
        Advance the input generator in place instead of a copy of it.
    """

    __props__ = ("name", "signature", "dtype", "inplace")
    default_output = 1

    name: str = "random_variable"
    signature: str = "()->()"
    dtype: str = "floatX"

    def __init__(
        self,
        name: str | None = None,
        signature: str | None = None,
        dtype: str | None = None,
        inplace: bool = False,
    ) -> None:
        if name is not None:
            self.name = name
        if signature is not None:
            self.signature = signature
        if dtype is not None:
            self.dtype = dtype
        params, out = _parse_signature(self.signature)
        self.ndims_params: tuple[int, ...] = tuple(len(p) for p in params)
        self.ndim_supp = len(out)
        self.inplace = bool(inplace)
        if self.inplace:
            self.destroy_map = {0: [0]}

    # ------------------------------------------------------------------ shapes

    def _core_dims(self) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
        return _parse_signature(self.signature)

    def _supp_shape_from_params(
        self, dist_params: Sequence[TensorVariable], param_shapes: Sequence[Any] | None = None
    ) -> list[Any]:
        """The core shape of one draw, from the parameters' core dimensions."""
        params_dims, out_dims = self._core_dims()
        shape: list[Any] = []
        for name in out_dims:
            for p, dims, k in zip(dist_params, params_dims, range(len(dist_params)), strict=False):
                if name in dims:
                    axis = p.ndim - len(dims) + dims.index(name)
                    shape.append(p.shape[axis] if param_shapes is None else param_shapes[k][axis])
                    break
            else:
                raise ValueError(
                    f"{self.name}: the core dimension {name!r} of the draws is not a "
                    "dimension of any parameter; the Op must define _supp_shape_from_params"
                )
        return shape

    def _static_supp_shape(self, dist_params: Sequence[TensorVariable]) -> list[int | None]:
        """The statically known core shape of one draw (``None`` where unknown)."""
        params_dims, out_dims = self._core_dims()
        shape: list[int | None] = []
        for name in out_dims:
            dim: int | None = None
            for p, dims in zip(dist_params, params_dims, strict=False):
                if name in dims:
                    dim = p.type.shape[p.ndim - len(dims) + dims.index(name)]
                    if dim is not None:
                        break
            shape.append(dim)
        return shape

    def _batch_shapes(self, dist_params: Sequence[TensorVariable]) -> list[tuple[int | None, ...]]:
        return [
            p.type.shape[: p.ndim - nd]
            for p, nd in zip(dist_params, self.ndims_params, strict=True)
        ]

    # ------------------------------------------------------------------ graph

    def _output_dtype(self, dist_params: Sequence[TensorVariable]) -> str:
        return floatX() if self.dtype == "floatX" else str(self.dtype)

    def make_node(self, rng: Any, size: Any, *dist_params: Any) -> Apply:
        """Check the inputs and build ``(next_rng, draws)``.

        Parameters
        ----------
        rng
            A random generator variable, or ``None`` for a new shared generator.
        size
            ``None`` or the batch shape (an int, a sequence, or an integer vector).
        *dist_params
            The distribution parameters (tensors or values), one per signature entry.

        Raises
        ------
        TypeError
            For an ``rng`` that is not a random generator variable, a non-integer ``size``,
            a wrong number of parameters or parameters with too few dimensions.
        ValueError
            For a ``size`` of unknown length or one the parameters do not fit, or
            parameters that do not broadcast.
        """
        who = self.name
        if len(dist_params) != len(self.ndims_params):
            raise TypeError(
                f"{who}: expected {len(self.ndims_params)} parameters, got {len(dist_params)}"
            )
        if rng is None:
            rng = randomgen_constructor(np.random.default_rng())
        if not (isinstance(rng, Variable) and isinstance(rng.type, RandomType)):
            raise TypeError(
                f"{who}: rng must be a variable of RandomGeneratorType (e.g. a shared "
                f"numpy.random.Generator), got {type(rng).__name__} {rng!r:.60}"
            )
        size_var = normalize_size_param(size, who)
        params = [as_tensor_variable(p) for p in dist_params]
        for i, (p, nd) in enumerate(zip(params, self.ndims_params, strict=True)):
            if p.ndim < nd:
                raise TypeError(
                    f"{who}: parameter {i} must have at least {nd} dimensions, got {p} of "
                    f"type {p.type!r}"
                )
        batch_shapes = self._batch_shapes(params)
        if _is_none(size_var):
            batch = _broadcast_static(batch_shapes, who)
        else:
            batch = list(_static_vector(size_var) or [])
            if any(len(s) > len(batch) for s in batch_shapes):
                raise ValueError(
                    f"{who}: size of length {len(batch)} is shorter than the batch dimensions "
                    f"of the parameters {batch_shapes}"
                )
            for s in batch_shapes:
                for d, b in zip(reversed(s), reversed(batch), strict=False):
                    if d is not None and b is not None and d not in (1, b):
                        raise ValueError(
                            f"{who}: parameters with batch shape {s} do not fit size {batch}"
                        )
        shape = tuple(batch) + tuple(self._static_supp_shape(params))
        draws = TensorType(self._output_dtype(params), shape=shape)()
        return Apply(self, [rng, size_var, *params], [rng.type(), draws])

    def __call__(
        self,
        *args: Any,
        size: Any = None,
        name: str | None = None,
        rng: Any = None,
        dtype: str | None = None,
        return_next_rng: bool = False,
    ) -> Any:
        """Return the draws (or ``(next_rng, draws)`` with ``return_next_rng``).

        Parameters
        ----------
        *args
            The distribution parameters.
        size
            The batch shape, or ``None`` for the parameters' broadcast batch shape.
        name
            The draws' name.
        rng
            The generator variable (default: a new shared generator).
        dtype
            Another dtype for the draws.
        return_next_rng
            Also return the advanced generator.
        """
        op = self
        if dtype is not None and dtype != self.dtype:
            op = type(self)(self.name, self.signature, dtype, self.inplace)
        node = op.make_node(rng, size, *args)
        next_rng, draws = node.outputs
        if name is not None:
            draws.name = name
        return (next_rng, draws) if return_next_rng else draws

    def rng_param(self, node: Apply) -> Variable:
        """The generator input of ``node``."""
        return node.inputs[0]

    def size_param(self, node: Apply) -> Variable:
        """The size input of ``node``."""
        return node.inputs[1]

    def dist_params(self, node: Apply) -> list[Variable]:
        """The distribution parameters of ``node``."""
        return list(node.inputs[2:])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """No shape for the generator; the batch shape and core shape for the draws."""
        _, size, *rest = node.inputs
        params: list[Any] = rest
        param_shapes = shapes[2:]
        if _is_none(size):
            batch_shapes = [
                tuple(s)[: p.ndim - nd]
                for s, p, nd in zip(param_shapes, params, self.ndims_params, strict=True)
            ]
            batch = _broadcast_symbolic(batch_shapes)
        else:
            ndim = tensor_type_of(node.outputs[1]).ndim
            batch = [tensor_var(size)[i] for i in range(ndim - self.ndim_supp)]
        supp = self._supp_shape_from_params(params, param_shapes=param_shapes)
        return [None, (*batch, *supp)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Undefined for every input, as in PyTensor."""
        return [
            grad_undefined(self, k, inp, "no gradient is defined for random variables")
            for k, inp in enumerate(inputs)
        ]

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Never: each evaluation must draw anew."""
        return False

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.name}, {self.signature}, {self.dtype}}}"
