"""The :class:`RandomVariable` Op (``pytensor.tensor.random.op``).

A random variable node takes ``(rng, size, *dist_params)`` and returns
``(next_rng, draws)``: the generator advanced past the draws, and the draws. ``size`` is
``None`` (the draws take the broadcast batch shape of the parameters) or an integer
vector of known length (the batch shape). Each Op has a ``signature`` in NumPy's
gufunc notation giving the core dimensions of its parameters and of one draw
(``"(),()->()"`` for the normal, ``"(n),(n,n)->(n)"`` for the multivariate normal);
parameters broadcast over their leading (batch) dimensions, and every parameter of a
node has the draws' batch rank (:func:`explicit_expand_dims`).

:class:`RNGConsumerOp` is the base of every Op that consumes generators; its
:meth:`~RNGConsumerOp.update` maps each generator input to its advanced output. The draws
of a :class:`RandomVariable` are those of its ``rng_fn(rng, *dist_params, size)``, which
subclasses may define; the backends compute them (opweave-python, with NumPy and SciPy).
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from opweave.gradient.opsupport import grad_undefined
from opweave.graph.basic import Apply, Constant, Variable, equal_computations
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.scalar.type import floatX
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_type_of, tensor_var, tensor_vars
from opweave.tensor.basic import (
    _const_int,
    _int_vector,
    _static_vector,
    as_tensor_variable,
    concatenate,
    get_vector_length,
    infer_static_shape,
)
from opweave.tensor.extra_ops import _broadcast_arrays_unchecked
from opweave.tensor.random.type import RandomType
from opweave.tensor.random.var import randomgen_constructor
from opweave.tensor.shape import shape_padleft
from opweave.tensor.type import TensorType
from opweave.tensor.type_other import NoneConst, NoneTypeT
from opweave.tensor.variable import TensorVariable

__all__ = [
    "RNGConsumerOp",
    "RandomVariable",
    "compute_batch_shape",
    "explicit_expand_dims",
    "normalize_size_param",
    "vectorize_random_variable",
]

_GROUP = re.compile(r"\(([^()]*)\)")


def _parse_signature(signature: str | None) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
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
    """``size`` as a graph input: ``NoneConst``, or an integer vector of known length.

    Raises
    ------
    TypeError
        If ``size`` is not ``None``, an int or a sequence / vector of integers.
    ValueError
        If its length is not known statically or an entry is negative.
    """
    if isinstance(size, Variable) and isinstance(size.type, NoneTypeT):
        return size
    if size is None or (isinstance(size, Constant) and size.data is None):
        return NoneConst
    if isinstance(size, int | np.integer) and not isinstance(size, bool):
        size = (int(size),)
    elif isinstance(size, np.ndarray) and size.ndim == 0:
        size = size.reshape(1)
    elif isinstance(size, Variable) and getattr(size.type, "ndim", None) == 0:
        # A scalar size is a one-entry size, as in PyTensor.
        size = [size]
    var = _int_vector(size, f"{who}: size")
    entries = _static_vector(var)
    if entries is None:
        raise ValueError(f"{who}: the length of size {var} must be known statically")
    if any(e is not None and e < 0 for e in entries):
        raise ValueError(f"{who}: size entries must be non-negative, got {entries}")
    return var


def explicit_expand_dims(
    params: Sequence[TensorVariable],
    ndim_params: Sequence[int],
    size_length: int | None = None,
) -> list[TensorVariable]:
    """Give every parameter the same number of batch dimensions (leading broadcastable ones).

    Parameters
    ----------
    params
        The distribution parameters.
    ndim_params
        The core rank of each.
    size_length
        The batch rank to reach (the length of ``size``); by default the largest batch
        rank of the parameters.

    Returns
    -------
    list of TensorVariable
        The parameters, padded on the left where they had fewer batch dimensions.
    """
    batch_dims = [p.type.ndim - nd for p, nd in zip(params, ndim_params, strict=True)]
    target = max(batch_dims, default=0) if size_length is None else size_length
    return [
        shape_padleft(p, target - b) if target > b else p
        for p, b in zip(params, batch_dims, strict=True)
    ]


def compute_batch_shape(params: Sequence[Any], ndims_params: Sequence[int]) -> TensorVariable:
    """The symbolic batch shape of random variable parameters broadcast together.

    Parameters
    ----------
    params
        The parameters (tensor variables).
    ndims_params
        The core rank of each.
    """
    padded = explicit_expand_dims([as_tensor_variable(p) for p in params], ndims_params)
    batch = [p[(..., *(0,) * nd)] for p, nd in zip(padded, ndims_params, strict=True)]
    batch_shape: TensorVariable = _broadcast_arrays_unchecked(*batch)[0].shape
    return batch_shape


def _overrides(cls: type, method: str) -> bool:
    """Whether ``cls`` redefines ``method`` of :class:`RandomVariable`."""
    return getattr(cls, method) is not getattr(RandomVariable, method)


def _static_size_entry(entry: TensorVariable) -> int | None:
    """The value of a ``size`` entry when it is known without running anything.

    As PyTensor's ``infer_static_shape``: beyond constants and static lengths, the shape
    rewrites and constant folding see through the checks of ``broadcast_shape`` (a length
    ``Assert``-ed equal to another).
    """
    known = _const_int(entry)
    if known is not None:
        return known
    return infer_static_shape([entry])[1][0]


def _unknown_core_dim_message(who: str, dim: str) -> str:
    """The error for a core dimension of the draws that no parameter has."""
    return (
        f"{who}: the core dimension {dim!r} of the draws is not a dimension of any "
        "parameter, so the signature is not sufficient to infer the support shape; "
        "the Op must define _supp_shape_from_params"
    )


def _is_none(v: Variable) -> bool:
    return isinstance(v.type, NoneTypeT) or (isinstance(v, Constant) and v.data is None)


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


class RNGConsumerOp(Op):
    """Base class of the Ops that consume random generators (PyTensor's contract).

    Such an Op says, through :meth:`update`, which of its outputs is the advanced state
    of each generator it reads, so that repeated calls of a compiled function can
    carry the generators forward.
    """

    def update(self, node: Apply) -> dict[Variable, Variable]:
        """``{generator input: advanced generator output}`` for ``node``.

        Raises
        ------
        NotImplementedError
            Unless a subclass defines it.
        """
        raise NotImplementedError(f"{type(self).__name__} must define update(node)")


def _signature_from_ndims(ndims_params: Sequence[int], ndim_supp: int) -> str:
    """A gufunc signature with the given core ranks (fresh dimension names)."""
    counter = itertools.count()

    def group(ndim: int) -> str:
        return "(" + ",".join(f"d{next(counter)}" for _ in range(ndim)) + ")"

    return ",".join(group(nd) for nd in ndims_params) + "->" + group(ndim_supp)


class RandomVariable(RNGConsumerOp):
    """A random variable: draws from a distribution with a NumPy generator.

    Inputs are ``(rng, size, *dist_params)``, outputs ``(next_rng, draws)``; calling the
    Op returns the draws (``default_output = 1``), whose ``owner.outputs[0]`` is the
    advanced generator.

    The draws are computed by :meth:`rng_fn` ``(rng, *dist_params, size)``; by default
    the ``numpy.random.Generator`` method named like the Op. A subclass that defines its
    own ``rng_fn`` (a method or a classmethod) is drawn with it by every linker.

    Parameters
    ----------
    name
        The distribution's name (NumPy's method name for most).
    ndim_supp, ndims_params
        The core ranks of one draw and of each parameter; deprecated in favour of
        ``signature`` (a ``FutureWarning`` says so). Used only without a signature.
    dtype
        The draws' dtype; ``"floatX"`` means ``config.floatX``; ``None`` means that each
        call must give one.
    inplace
        Advance the input generator in place instead of a copy of it.
    signature
        The gufunc signature of one draw (see the module docstring).
    """

    __props__: tuple[str, ...] = ("name", "signature", "dtype", "inplace")
    default_output = 1
    _output_type_depends_on_input_value = True

    name: str = "random_variable"
    signature: str | None = None
    dtype: str | None = "floatX"
    inplace: bool = False

    def __init__(
        self,
        name: str | None = None,
        ndim_supp: int | str | None = None,
        ndims_params: Sequence[int] | None = None,
        dtype: str | None = None,
        inplace: bool | None = None,
        signature: str | None = None,
    ) -> None:
        if isinstance(ndim_supp, str) and signature is None:
            # ``RandomVariable(name, signature)``: the signature given second.
            signature, ndim_supp = ndim_supp, None
        self.name = name or type(self).name
        signature = signature or getattr(self, "signature", None)
        if signature is None:
            signature = self._signature_from_ranks(ndim_supp, ndims_params)
        self.signature = signature
        params, out = _parse_signature(signature)
        self.inputs_sig: list[tuple[str, ...]] = params
        self.output_sig: tuple[str, ...] = out
        self.ndims_params: tuple[int, ...] = tuple(len(p) for p in params)
        self.ndim_supp: int = len(out)
        if isinstance(dtype, np.dtype):
            dtype = dtype.name
        self.dtype = dtype or getattr(self, "dtype", None)
        self.inplace = bool(inplace if inplace is not None else getattr(self, "inplace", False))
        if self.inplace:
            self.destroy_map = {0: [0]}

    def _signature_from_ranks(self, ndim_supp: Any, ndims_params: Any) -> str:
        """The signature implied by the deprecated ``ndim_supp`` and ``ndims_params``."""
        ndim_supp = ndim_supp if ndim_supp is not None else getattr(self, "ndim_supp", None)
        if ndims_params is None:
            ndims_params = getattr(self, "ndims_params", None)
        if ndim_supp is None or ndims_params is None:
            raise ValueError(f"{self.name}: signature must be provided")
        if not isinstance(ndims_params, Sequence):
            raise TypeError(
                f"{self.name}: ndims_params must be a sequence of ints, got {ndims_params!r}"
            )
        warnings.warn(
            "ndim_supp and ndims_params are deprecated; provide signature instead",
            FutureWarning,
            stacklevel=3,
        )
        return _signature_from_ndims([int(n) for n in ndims_params], int(ndim_supp))

    def update(self, node: Apply) -> dict[Variable, Variable]:
        """``{rng input: next_rng output}``."""
        return {node.inputs[0]: node.outputs[0]}

    def rng_fn(self, rng: np.random.Generator, *args: Any, **kwargs: Any) -> Any:
        """Draw with the ``numpy.random.Generator`` method named like the Op.

        Called as ``rng_fn(rng, *dist_params, size)`` with NumPy values; subclasses
        whose draws are not that method override it.
        """
        return getattr(rng, self.name)(*args, **kwargs)

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """No directional derivative: ``None`` for every evaluation point."""
        return [None for _ in eval_points]

    def batch_ndim(self, node: Apply) -> int:
        """The number of batch dimensions of ``node``'s draws."""
        return int(tensor_type_of(node.outputs[1]).ndim) - self.ndim_supp

    # ------------------------------------------------------------------ shapes

    def _core_dims(self) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
        return _parse_signature(self.signature)

    def _supp_shape_from_params(
        self, dist_params: Sequence[TensorVariable], param_shapes: Sequence[Any] | None = None
    ) -> list[Any]:
        """The core shape of one draw, from the parameters' core dimensions.

        A numeric core dimension of the output (``"->(3)"``) is that number; a named one
        is the length of a parameter dimension of that name. Subclasses whose core shape
        depends on something else override this.

        Raises
        ------
        NotImplementedError
            When the signature does not determine the core shape.
        """
        params_dims, out_dims = self._core_dims()
        shape: list[Any] = []
        for name in out_dims:
            if name.isdigit():
                shape.append(int(name))
                continue
            for k, (p, dims) in enumerate(zip(dist_params, params_dims, strict=False)):
                if name in dims:
                    axis = p.ndim - len(dims) + dims.index(name)
                    shape.append(p.shape[axis] if param_shapes is None else param_shapes[k][axis])
                    break
            else:
                raise NotImplementedError(_unknown_core_dim_message(self.name, name))
        return shape

    def _static_supp_shape(self, dist_params: Sequence[TensorVariable]) -> list[int | None]:
        """The statically known core shape of one draw (``None`` where unknown)."""
        params_dims, out_dims = self._core_dims()
        shape: list[int | None] = []
        overridden = _overrides(type(self), "_supp_shape_from_params")
        for name in out_dims:
            dim: int | None = int(name) if name.isdigit() else None
            known = name.isdigit()
            for p, dims in zip(dist_params, params_dims, strict=False):
                if name in dims:
                    known = True
                    if dim is None:
                        dim = p.type.shape[p.ndim - len(dims) + dims.index(name)]
            if not (known or overridden):
                # As PyTensor: an Op whose signature leaves a core dimension of the
                # draws undetermined cannot be applied without its own shape rule.
                raise NotImplementedError(_unknown_core_dim_message(self.name, name))
            shape.append(dim)
        if None in shape and overridden:
            try:
                symbolic = self._supp_shape_from_params(dist_params, param_shapes=None)
            except (NotImplementedError, TypeError, ValueError, IndexError):
                return shape
            shape = [
                s if s is not None else _const_int(d) for s, d in zip(shape, symbolic, strict=False)
            ]
        return shape

    def _batch_shapes(self, dist_params: Sequence[TensorVariable]) -> list[tuple[int | None, ...]]:
        return [
            p.type.shape[: p.ndim - nd]
            for p, nd in zip(dist_params, self.ndims_params, strict=True)
        ]

    def _infer_shape(
        self,
        size: Variable,
        dist_params: Sequence[TensorVariable],
        param_shapes: Sequence[Sequence[Any]] | None = None,
    ) -> tuple[Any, ...]:
        """The symbolic shape of the draws: the batch shape, then the core shape.

        Parameters
        ----------
        size
            The size input (a ``None`` constant or an integer vector).
        dist_params
            The distribution parameters.
        param_shapes
            Their shapes, when known better than ``p.shape`` (shape inference).

        Raises
        ------
        ValueError
            If a parameter has more batch dimensions than ``size`` has entries.
        """
        supp = (
            ()
            if self.ndim_supp == 0
            else tuple(self._supp_shape_from_params(dist_params, param_shapes=param_shapes))
        )
        if not _is_none(size):
            length = get_vector_length(size)
            for i, (p, nd) in enumerate(zip(dist_params, self.ndims_params, strict=True)):
                if p.ndim - nd > length:
                    raise ValueError(
                        f"{self.name}: size of length {length} is shorter than the "
                        f"{p.ndim - nd} batch dimensions of parameter {i} {p}"
                    )
            return tuple(tensor_var(size)[i] for i in range(length)) + supp
        if param_shapes is None:
            param_shapes = [tuple(p.shape[i] for i in range(p.ndim)) for p in dist_params]
        batch_shapes = [
            tuple(1 if bc else s for s, bc in zip(shape, p.type.broadcastable, strict=False))[
                : p.ndim - nd
            ]
            for shape, p, nd in zip(param_shapes, dist_params, self.ndims_params, strict=True)
        ]
        return tuple(_broadcast_symbolic(batch_shapes)) + supp

    # ------------------------------------------------------------------ graph

    def _output_dtype(self, dist_params: Sequence[TensorVariable]) -> str:
        if self.dtype is None:
            raise TypeError(f"{self.name}: this random variable needs a dtype argument")
        return floatX() if self.dtype == "floatX" else str(self.dtype)

    def make_node(self, rng: Any, size: Any, *dist_params: Any) -> Apply:
        """Check the inputs and build ``(next_rng, draws)``.

        Parameters with fewer batch dimensions than the draws get explicit leading
        broadcastable dimensions, so that every parameter of the node has the draws'
        batch rank (the rewrites that lift indexing through random variables rely on it).

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
            batch = [
                d if d is not None else _static_size_entry(tensor_var(size_var)[i])
                for i, d in enumerate(_static_vector(size_var) or [])
            ]
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
        params = explicit_expand_dims(params, self.ndims_params, size_length=len(batch))
        return Apply(self, [rng, size_var, *params], [rng.type(), draws])

    def __call__(
        self,
        *args: Any,
        size: Any = None,
        name: str | None = None,
        rng: Any = None,
        dtype: str | None = None,
        return_next_rng: bool = False,
        **kwargs: Any,
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
            Another dtype for the draws (of the same kind: float or not).
        return_next_rng
            Also return the advanced generator.
        **kwargs
            Passed on to :meth:`Op.__call__`.

        Raises
        ------
        ValueError
            For a ``dtype`` that switches between floating point and other dtypes.
        """
        op = self
        if dtype == "floatX":
            dtype = floatX()
        own = floatX() if self.dtype == "floatX" else self.dtype
        if dtype is not None and dtype != own:
            if own is not None and str(dtype).startswith("float") != own.startswith("float"):
                raise ValueError(
                    f"Cannot change the dtype of a {self.name} RV from {own} to {dtype}"
                )
            props = self._props_dict()
            props["dtype"] = str(np.dtype(dtype))
            op = type(self)(**props)
        next_rng, draws = cast(  # return_list=True: always the list of outputs
            "list[Variable]", Op.__call__(op, rng, size, *args, return_list=True, **kwargs)
        )
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
        _, size, *params = node.inputs
        return [None, list(self._infer_shape(size, tensor_vars(params), param_shapes=shapes[2:]))]

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


@_vectorize_node.register(RandomVariable)
def vectorize_random_variable(
    op: RandomVariable, node: Apply, rng: Variable, size: Variable, *dist_params: Variable
) -> Apply:
    """Draw with batched parameters: a given ``size`` gains the new batch dimensions."""
    old_params = op.dist_params(node)
    old_size = op.size_param(node)
    if not _is_none(old_size) and equal_computations([old_size], [size]):
        new_ndim = tensor_type_of(dist_params[0]).ndim - tensor_type_of(old_params[0]).ndim
        if new_ndim >= 0:
            batch = compute_batch_shape(dist_params, op.ndims_params)
            size = concatenate([batch[:new_ndim], size])
    return op.make_node(rng, size, *dist_params)
