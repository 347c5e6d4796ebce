"""Sparse variables and the Ops that convert between sparse and dense (PyTensor's
``pytensor.sparse.basic`` names).

:func:`as_sparse_variable` (``as_sparse``) makes a sparse variable of a SciPy matrix,
:func:`as_sparse_or_tensor_variable` a sparse or a dense one, whichever fits;
:class:`DenseFromSparse` (``dense_from_sparse``) and :class:`SparseFromDense`
(``csr_from_dense``, ``csc_from_dense``) convert; :class:`Transpose` swaps the format
(a CSR matrix's transpose is CSC); :class:`Cast` changes the dtype;
:class:`CSMProperties` (``csm_data``, ``csm_indices``, ``csm_indptr``, ``csm_shape``)
takes a matrix apart and :class:`CSM` (``CSR``, ``CSC``) builds one from those parts;
:class:`StructuredUnary` applies an elementwise function to the stored values only (its
functions are in :mod:`opweave.sparse.math`); :class:`SparseSparseMultiply` and
:class:`SparseDenseMultiply` (``mul_s_s``, ``mul_s_d``, which
:func:`opweave.sparse.math.multiply` dispatches to) multiply elementwise, the result
stored where the sparse operand stores. :class:`HStack` and :class:`VStack`
(``hstack``, ``vstack``) join matrices; :class:`GetItem2d`, :class:`GetItemScalar`,
:class:`GetItemList` and :class:`GetItem2Lists` index them (``x[a:b, c:d]``, ``x[i, j]``,
``x[rows]``, ``x[rows, cols]``); :class:`Diag` (``diag``) takes the diagonal;
:class:`Remove0`, :class:`EnsureSortedIndices` and ``clean`` tidy the stored entries;
:class:`ConstructSparseFromList` builds a matrix from rows. The kernels live in the
backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.configdefaults import config
from opweave.gradient import grad as symbolic_grad
from opweave.gradient import grad_not_implemented, grad_undefined
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType, disconnected_type, generic
from opweave.sparse.type import SPARSE_FORMATS, SparseTensorType, _is_sparse_value, scipy_sparse
from opweave.tensor import basic as tb
from opweave.tensor import math as tm
from opweave.tensor.basic import as_tensor_variable
from opweave.tensor.index_shapes import slice_length, slice_static_length
from opweave.tensor.subtensor import advanced_subtensor1
from opweave.tensor.type import TensorType
from opweave.tensor.type import continuous_dtypes as tensor_continuous_dtypes

__all__ = [
    "CSC",
    "CSM",
    "CSR",
    "STRUCTURED_FUNCTIONS",
    "CSMGrad",
    "CSMProperties",
    "Cast",
    "ConstructSparseFromList",
    "DenseFromSparse",
    "Diag",
    "EnsureSortedIndices",
    "GetItem2Lists",
    "GetItem2ListsGrad",
    "GetItem2d",
    "GetItemList",
    "GetItemListGrad",
    "GetItemScalar",
    "HStack",
    "Remove0",
    "SparseBlockDiagonal",
    "SparseDenseMultiply",
    "SparseFromDense",
    "SparseSparseMultiply",
    "Stack",
    "StructuredUnary",
    "Transpose",
    "VStack",
    "all_dtypes",
    "as_sparse",
    "as_sparse_or_tensor_variable",
    "as_sparse_variable",
    "block_diag",
    "cast",
    "clean",
    "complex_dtypes",
    "construct_sparse_from_list",
    "continuous_dtypes",
    "csc_dmatrix",
    "csc_fmatrix",
    "csc_from_dense",
    "csc_matrix",
    "csm_data",
    "csm_grad",
    "csm_indices",
    "csm_indptr",
    "csm_properties",
    "csm_shape",
    "csr_dmatrix",
    "csr_fmatrix",
    "csr_from_dense",
    "csr_matrix",
    "dense_from_sparse",
    "diag",
    "discrete_dtypes",
    "ensure_sorted_indices",
    "float_dtypes",
    "get_item_2d",
    "get_item_2lists",
    "get_item_2lists_grad",
    "get_item_list",
    "get_item_list_grad",
    "get_item_scalar",
    "hstack",
    "int_dtypes",
    "integer_dtypes",
    "is_sparse_variable",
    "matrix",
    "mul_s_d",
    "mul_s_s",
    "remove0",
    "sp_ones_like",
    "sp_zeros_like",
    "sparse_formats",
    "square_diagonal",
    "transpose",
    "uint_dtypes",
    "vstack",
]

#: The formats sparse variables can have (PyTensor's name).
sparse_formats = list(SPARSE_FORMATS)

#: The dtypes a sparse matrix can have, and their groups (PyTensor's names).
all_dtypes = [
    "float32", "float64", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64",
    "int64", "complex128", "complex64",
]  # fmt: skip
complex_dtypes = [t for t in all_dtypes if t.startswith("complex")]
float_dtypes = [t for t in all_dtypes if t.startswith("float")]
int_dtypes = [t for t in all_dtypes if t.startswith("int")]
uint_dtypes = [t for t in all_dtypes if t.startswith("uint")]
integer_dtypes = int_dtypes + uint_dtypes
continuous_dtypes = complex_dtypes + float_dtypes
discrete_dtypes = int_dtypes + uint_dtypes


def is_sparse_variable(x: Any) -> bool:
    """Whether ``x`` is a variable of a :class:`SparseTensorType`."""
    return isinstance(x, Variable) and isinstance(x.type, SparseTensorType)


def _is_sparse_variable(x: Any) -> bool:
    """Whether the variable ``x`` is sparse (PyTensor's name; raises for non-variables)."""
    if not isinstance(x, Variable):
        raise NotImplementedError(f"_is_sparse_variable expects a variable, got {x!r}")
    return isinstance(x.type, SparseTensorType)


def _is_dense_variable(x: Any) -> bool:
    """Whether the variable ``x`` is a dense tensor (PyTensor's name)."""
    if not isinstance(x, Variable):
        raise NotImplementedError(f"_is_dense_variable expects a variable, got {x!r}")
    return isinstance(x.type, TensorType)


def _is_sparse(x: Any) -> bool:
    """Whether the value ``x`` is a SciPy sparse matrix rather than an array (PyTensor's
    name)."""
    if not (_is_sparse_value(x) or isinstance(x, np.ndarray | tuple | list)):
        raise NotImplementedError(f"_is_sparse expects a sparse matrix or an array, got {x!r}")
    return _is_sparse_value(x)


def __getattr__(name: str) -> Any:
    """``_mtypes``: the SciPy classes of sparse values (SciPy is imported on first use)."""
    if name == "_mtypes":
        sp = scipy_sparse()
        return [sp.csc_matrix, sp.csr_matrix]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sparse_input(x: Any, who: str, what: str = "x") -> Variable:
    """``x`` as a sparse variable (SciPy matrices become constants), or raise.

    Raises
    ------
    TypeError
        Naming ``who`` and the input ``what`` when ``x`` is not sparse.
    """
    if isinstance(x, Apply):
        x = x.default_output()
    if is_sparse_variable(x):
        return x
    if _is_sparse_value(x):
        return as_sparse_variable(x)
    kind = f"the variable {x} of type {x.type!r}" if isinstance(x, Variable) else repr(x)[:60]
    raise TypeError(
        f"{who}: input {what} must be a sparse variable (a SparseTensorType, format csr or "
        f"csc), got {kind}"
    )


# ------------------------------------------------------------------ variables


def as_sparse_variable(x: Any, name: str | None = None, ndim: int | None = None) -> Variable:
    """Return ``x`` as a sparse variable.

    Parameters
    ----------
    x
        A sparse variable (returned as is), an Apply node with one output, or a SciPy
        sparse matrix (a :class:`~opweave.sparse.variable.SparseConstant` of its format and
        dtype; formats other than CSR and CSC become CSR).
    name
        Name of a constant made from a matrix.
    ndim
        Accepted for PyTensor compatibility; sparse variables are always 2-d.

    Raises
    ------
    TypeError
        If ``x`` is a non-sparse variable or value.
    ValueError
        For an Apply node with several outputs.
    """
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(
                f"as_sparse_variable: the Apply node {x} has {len(x.outputs)} outputs; "
                "pass the one to use"
            )
        x = x.outputs[0]
    if isinstance(x, Variable):
        if not isinstance(x.type, SparseTensorType):
            raise TypeError(
                f"as_sparse_variable: expected a variable of a SparseTensorType, got {x} of "
                f"type {x.type!r} (convert dense matrices with csr_from_dense/csc_from_dense)"
            )
        return x
    if not _is_sparse_value(x):
        raise TypeError(
            f"as_sparse_variable: cannot convert {type(x).__name__} {repr(x)[:60]} to a sparse "
            "variable: expected a scipy.sparse matrix"
        )
    fmt = x.format if x.format in SPARSE_FORMATS else "csr"
    type_ = SparseTensorType(fmt, x.dtype, shape=(None, None))
    return type_.make_constant(x.copy() if x.format == fmt else x, name=name)


#: Short alias of :func:`as_sparse_variable` (PyTensor's name).
as_sparse = as_sparse_variable


def as_sparse_or_tensor_variable(x: Any, name: str | None = None, **kwargs: Any) -> Variable:
    """A SciPy sparse matrix or sparse variable as a sparse variable, anything else as a
    tensor variable (:func:`~opweave.tensor.as_tensor_variable`).

    Parameters
    ----------
    x
        The value or variable.
    name
        Name of a constant made from a value.
    **kwargs
        Passed to ``as_tensor_variable`` for dense values (``ndim``, ``dtype``).
    """
    if is_sparse_variable(x) or _is_sparse_value(x):
        return as_sparse_variable(x, name=name)
    if isinstance(x, Variable):
        return x
    return as_tensor_variable(x, name=name, **kwargs)


def matrix(format: str, name: str | None = None, dtype: Any = None, shape: Any = None) -> Variable:
    """A sparse matrix variable of ``format`` and ``dtype`` (default ``config.floatX``)."""
    dtype = config.floatX if dtype is None else dtype
    return SparseTensorType(format, dtype, shape=shape)(name)


def csr_matrix(name: str | None = None, dtype: Any = None, shape: Any = None) -> Variable:
    """A CSR sparse matrix variable (dtype default ``config.floatX``)."""
    return matrix("csr", name=name, dtype=dtype, shape=shape)


def csc_matrix(name: str | None = None, dtype: Any = None, shape: Any = None) -> Variable:
    """A CSC sparse matrix variable (dtype default ``config.floatX``)."""
    return matrix("csc", name=name, dtype=dtype, shape=shape)


csc_dmatrix = SparseTensorType("csc", "float64")
csr_dmatrix = SparseTensorType("csr", "float64")
csc_fmatrix = SparseTensorType("csc", "float32")
csr_fmatrix = SparseTensorType("csr", "float32")


def _sparse_out(x: Variable, dtype: str | None = None, fmt: str | None = None) -> Variable:
    """A new variable of ``x``'s sparse Type with the dtype and/or format replaced."""
    return SparseTensorType(fmt or x.type.format, dtype or x.type.dtype, shape=x.type.shape)()


# ------------------------------------------------------------------ conversions


class DenseFromSparse(Op):
    """The dense ndarray of a sparse matrix (``x.toarray()``).

    Parameters
    ----------
    structured
        The gradient's kind: ``True`` (default) keeps only the input's stored positions,
        ``False`` gives the full dense gradient as a sparse matrix.
    """

    __props__ = ("sparse_grad",)

    def __init__(self, structured: bool = True) -> None:
        self.sparse_grad = bool(structured)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{structured_grad={self.sparse_grad}}}"

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix; the output is a dense matrix of its dtype and static shape."""
        x = sparse_input(x, "DenseFromSparse")
        return Apply(self, [x], [TensorType(x.type.dtype, shape=x.type.shape)()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """Structured: the gradient at the stored positions; else all of it, as sparse."""
        (x,), (gz,) = inputs, grads
        if self.sparse_grad:
            return [mul_s_d(sp_ones_like(x), gz)]
        return [SparseFromDense(x.type.format)(gz)]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]


dense_from_sparse = DenseFromSparse()


class SparseFromDense(Op):
    """The sparse matrix (of ``format``) of a dense matrix; vectors and scalars become
    one-row matrices, as in PyTensor.

    Parameters
    ----------
    format
        ``"csr"`` or ``"csc"``.
    """

    __props__ = ("format",)

    def __init__(self, format: str) -> None:
        if format not in SPARSE_FORMATS:
            raise ValueError(
                f"SparseFromDense: format must be one of {SPARSE_FORMATS}, got {format!r}"
            )
        self.format = format

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.format}}}"

    def __call__(self, x: Any, **kwargs: Any) -> Any:
        """A sparse input is returned as it is."""
        if is_sparse_variable(x):
            return x
        return super().__call__(x, **kwargs)

    def make_node(self, x: Any) -> Apply:
        """One dense tensor of at most 2 dimensions.

        Raises
        ------
        TypeError
            For a tensor of more than 2 dimensions.
        """
        x = as_tensor_variable(x)
        if x.ndim > 2:
            raise TypeError(
                f"SparseFromDense: sparse matrices have 2 dimensions; input x ({x}) has {x.ndim}"
            )
        if x.ndim < 2:
            x = x.dimshuffle(["x"] * (2 - x.ndim) + list(range(x.ndim)))
        out = SparseTensorType(self.format, x.type.dtype, shape=x.type.shape)()
        return Apply(self, [x], [out])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The gradient's dense form."""
        (gz,) = grads
        return [dense_from_sparse(gz) if is_sparse_variable(gz) else gz]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]


csr_from_dense = SparseFromDense("csr")
csc_from_dense = SparseFromDense("csc")
SparseTensorType.from_dense.update(csr=csr_from_dense, csc=csc_from_dense)


class Transpose(Op):
    """The transpose of a sparse matrix; a CSR matrix's transpose is CSC and vice versa."""

    __props__ = ()
    view_map = {0: [0]}
    format_map = {"csr": "csc", "csc": "csr"}

    def __str__(self) -> str:
        return "SparseTranspose"

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix."""
        x = sparse_input(x, "Transpose")
        out = SparseTensorType(
            self.format_map[x.type.format], x.type.dtype, shape=x.type.shape[::-1]
        )()
        return Apply(self, [x], [out])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The gradient, transposed back."""
        (gz,) = grads
        return [transpose(gz) if is_sparse_variable(gz) else gz.T]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape, reversed."""
        return [tuple(shapes[0])[::-1]]


transpose = Transpose()


class Cast(Op):
    """A sparse matrix with its values cast to ``out_type`` (a dtype name)."""

    __props__ = ("out_type",)

    def __init__(self, out_type: Any) -> None:
        self.out_type = np.dtype(out_type).name

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix."""
        x = sparse_input(x, "Cast")
        return Apply(self, [x], [_sparse_out(x, dtype=self.out_type)])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The gradient cast back to the input's dtype (float inputs only)."""
        (x,), (gz,) = inputs, grads
        if (
            x.type.dtype not in tensor_continuous_dtypes
            or self.out_type not in tensor_continuous_dtypes
        ):
            return [grad_not_implemented(self, 0, x, "Cast between discrete dtypes")]
        return [cast(gz, x.type.dtype)]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]


def cast(variable: Any, dtype: Any) -> Variable:
    """``variable`` with its values cast to ``dtype`` (itself when it has that dtype)."""
    x = sparse_input(variable, "cast", "variable")
    if np.dtype(dtype).name == x.type.dtype:
        return x
    return Cast(dtype)(x)


# ------------------------------------------------------------------ compressed parts


def _int_vector(v: Any, who: str, what: str) -> Variable:
    """``v`` as a 1-d integer tensor (values given as int32 when they fit), or raise."""
    if not isinstance(v, Variable):
        arr = np.asarray(v)
        if arr.dtype.kind in "iu" and np.array_equal(arr, arr.astype("int32")):
            v = arr.astype("int32")
    var = as_tensor_variable(v)
    if var.ndim != 1 or var.dtype not in ("int8", "int16", "int32", "int64", "uint8",
                                          "uint16", "uint32", "uint64"):  # fmt: skip
        raise TypeError(
            f"{who}: input {what} must be a vector of integers, got {var} of type {var.type!r}"
        )
    return var


class CSMProperties(Op):
    """The parts of a CSR or CSC matrix: ``(data, indices, indptr, shape)``, the last three
    as int32 vectors. The gradient is the regular one (the data's gradient, put back in
    the input's structure)."""

    __props__ = ()
    view_map = {0: [0], 1: [0], 2: [0]}

    def make_node(self, csm: Any) -> Apply:
        """One sparse matrix."""
        csm = sparse_input(csm, "CSMProperties", "csm")
        outputs = [TensorType(csm.type.dtype, shape=(None,))()]
        outputs += [TensorType("int32", shape=(None,))() for _ in range(2)]
        outputs.append(TensorType("int32", shape=(2,))())
        return Apply(self, [csm], outputs)

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The data's gradient in the input's structure."""
        (csm,) = inputs
        if isinstance(grads[0].type, DisconnectedType):
            return [sp_zeros_like(csm)]
        _, indices, indptr, shape = csm_properties(csm)
        return [CSM(csm.type.format)(grads[0], indices, indptr, shape)]


csm_properties = CSMProperties()


def csm_data(csm: Any) -> Variable:
    """The stored values of the sparse matrix ``csm``."""
    return csm_properties(csm)[0]


def csm_indices(csm: Any) -> Variable:
    """The ``indices`` vector of the sparse matrix ``csm``."""
    return csm_properties(csm)[1]


def csm_indptr(csm: Any) -> Variable:
    """The ``indptr`` vector of the sparse matrix ``csm``."""
    return csm_properties(csm)[2]


def csm_shape(csm: Any) -> Variable:
    """The shape of the sparse matrix ``csm`` (an int32 vector)."""
    return csm_properties(csm)[3]


class CSM(Op):
    """The sparse matrix of ``format`` built from ``(data, indices, indptr, shape)``,
    sharing ``data``. The gradient flows to ``data`` (aligned with its order).

    Parameters
    ----------
    format
        ``"csr"`` or ``"csc"``.
    """

    __props__ = ("format",)
    view_map = {0: [0]}

    def __init__(self, format: str) -> None:
        if format not in SPARSE_FORMATS:
            raise ValueError(f"CSM: format must be one of {SPARSE_FORMATS}, got {format!r}")
        self.format = format

    def make_node(self, data: Any, indices: Any, indptr: Any, shape: Any) -> Apply:
        """A data vector and three integer vectors.

        Raises
        ------
        TypeError
            For a data input that is not a vector, or index inputs that are not integer
            vectors.
        """
        data = as_tensor_variable(data)
        if data.ndim != 1:
            raise TypeError(f"CSM: input data must be a vector, got {data} of type {data.type!r}")
        indices = _int_vector(indices, "CSM", "indices")
        indptr = _int_vector(indptr, "CSM", "indptr")
        shape = _int_vector(shape, "CSM", "shape")
        static: tuple[Any, ...] = (None, None)
        owner = shape.owner
        if owner is not None and isinstance(owner.op, CSMProperties) and owner.outputs[3] is shape:
            static = owner.inputs[0].type.shape
        out = SparseTensorType(self.format, data.type.dtype, shape=static)()
        return Apply(self, [data, indices, indptr, shape], [out])

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Only ``data`` carries values."""
        return [[True], [False], [False], [False]]

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The output gradient's values at ``data``'s positions; the rest disconnected."""
        x_data, x_indices, x_indptr, x_shape = inputs
        g_parts = csm_properties(as_sparse_gradient(grads[0], self.format))
        g_data = csm_grad(x_data, x_indices, x_indptr, x_shape, *g_parts)
        return [g_data, disconnected_type(), disconnected_type(), disconnected_type()]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The ``shape`` input's two entries."""
        shape = node.inputs[3]
        return [(shape[0], shape[1])]


CSC = CSM("csc")
CSR = CSM("csr")


def square_diagonal(diag: Any) -> Variable:
    """The square sparse matrix (CSC) with the vector ``diag`` on its diagonal, every
    diagonal position stored.

    Raises
    ------
    TypeError
        If ``diag`` is not a vector.
    """
    diag = as_tensor_variable(diag)
    if diag.ndim != 1:
        raise TypeError(
            f"square_diagonal: the data argument must be a vector, got {diag} of type {diag.type!r}"
        )
    n = diag.shape[0]
    positions = tb.arange(n, dtype="int32")
    built = CSC(diag, positions, tb.arange(n + 1, dtype="int32"), tb.stack([n, n]))
    assert isinstance(built, Variable)
    return built


class CSMGrad(Op):
    """The gradient of :class:`CSM` with respect to its data: for each stored position of
    ``x`` (in its data order), the value the gradient matrix ``g`` (same format) holds
    there, 0 where ``g`` stores nothing."""

    __props__ = ()

    def make_node(self, *parts: Any) -> Apply:
        """``x_data, x_indices, x_indptr, x_shape, g_data, g_indices, g_indptr, g_shape``.

        Raises
        ------
        ValueError
            For another number of inputs.
        """
        if len(parts) != 8:
            raise ValueError(f"CSMGrad: expected 8 inputs, got {len(parts)}")
        names = ("x_data", "x_indices", "x_indptr", "x_shape")
        names += ("g_data", "g_indices", "g_indptr", "g_shape")
        inputs = [
            as_tensor_variable(p) if i % 4 == 0 else _int_vector(p, "CSMGrad", names[i])
            for i, p in enumerate(parts)
        ]
        return Apply(self, inputs, [inputs[4].type()])

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Only ``g_data`` carries values."""
        return [[i == 4] for i in range(8)]

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """Not implemented (a second derivative through sparse structure)."""
        return [
            grad_not_implemented(self, i, v, "second derivative of CSM")
            if i == 4
            else disconnected_type()
            for i, v in enumerate(inputs)
        ]


csm_grad = CSMGrad()


# ------------------------------------------------------------------ structured elementwise

#: The elementwise functions :class:`StructuredUnary` applies to the stored values, by
#: name: each is the ``opweave.tensor.math`` function of that name (``ones_like`` gives
#: ones), and all but ``ones_like``, ``exp``, ``log`` and ``sigmoid`` map 0 to 0.
STRUCTURED_FUNCTIONS: tuple[str, ...] = (
    "abs",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "ceil",
    "conj",
    "deg2rad",
    "exp",
    "expm1",
    "floor",
    "log",
    "log1p",
    "neg",
    "ones_like",
    "rad2deg",
    "rint",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqr",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
)


def _elementwise_dtype(name: str, dtype: str) -> str:
    """The dtype ``opweave.tensor.math``'s ``name`` gives for a ``dtype`` input."""
    probe = TensorType(dtype, shape=(None,))()
    if name == "ones_like":
        return dtype
    if name == "sigmoid":
        return tm.sigmoid(probe).dtype
    if name == "conj":
        return tm.conj(probe).dtype
    if name == "rint":
        return tm.round_half_to_even(probe).dtype  # type: ignore[no-any-return]
    return getattr(tm, name)(probe).dtype  # type: ignore[no-any-return]


class StructuredUnary(Op):
    """An elementwise function of a sparse matrix's stored values; the structure (which
    positions are stored) is kept, so ``f(0)`` is never computed.

    Parameters
    ----------
    name
        One of :data:`STRUCTURED_FUNCTIONS`.
    """

    __props__ = ("name",)

    def __init__(self, name: str) -> None:
        if name not in STRUCTURED_FUNCTIONS:
            raise ValueError(
                f"StructuredUnary: unknown function {name!r}; expected one of "
                f"{STRUCTURED_FUNCTIONS}"
            )
        self.name = name

    def __str__(self) -> str:
        return f"Structured{{{self.name}}}"

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix; the output dtype is the tensor function's."""
        x = sparse_input(x, f"Structured{{{self.name}}}")
        return Apply(self, [x], [_sparse_out(x, dtype=_elementwise_dtype(self.name, x.dtype))])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz`` times the function's derivative at the stored values, kept to ``x``'s
        structure (float inputs; the rounding functions, ``sign`` and ``ones_like`` give
        zeros). ``conj`` and functions of integer or complex inputs have no gradient (a
        clear error when asked)."""
        (x,), (gz,) = inputs, grads
        gz = as_sparse_gradient(gz, x)
        # the gradient flows to the stored values only: it has x's structure
        if self.name == "neg":
            return [mul_s_s(StructuredUnary("neg")(sp_ones_like(x)), gz)]
        if self.name in ("sign", "ones_like", "ceil", "floor", "rint", "trunc"):
            return [sp_zeros_like(x)]
        if self.name == "abs":
            return [mul_s_s(StructuredUnary("sign")(x), gz)]
        if self.name != "conj" and str(getattr(x.type, "dtype", "")).startswith("float"):
            scaled: Any = mul_s_s(self._slope(x), gz)
            return [scaled]
        return [grad_not_implemented(self, 0, x, f"structured {self.name}")]

    def _slope(self, x: Variable) -> Variable:
        """The derivative of the function at ``x``'s stored values, in ``x``'s structure."""
        data: Any = csm_data(x)
        fn: Any = tm.sigmoid if self.name == "sigmoid" else getattr(tm, self.name)
        values: Any = fn(data)
        slope = symbolic_grad(values.sum(), data)
        fmt: str = getattr(x.type, "format", "csr")
        built = CSM(fmt)(slope, csm_indices(x), csm_indptr(x), csm_shape(x))
        assert isinstance(built, Variable)
        return built

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]


def sp_ones_like(x: Any) -> Variable:
    """``x``'s structure with every stored value 1."""
    return StructuredUnary("ones_like")(x)


def sp_zeros_like(x: Any) -> Variable:
    """A sparse matrix of zeros (nothing stored) of ``x``'s shape, format and dtype."""
    x = sparse_input(x, "sp_zeros_like")
    return SparseFromDense(x.type.format)(tb.zeros_like(dense_from_sparse(x)))


def as_sparse_gradient(g: Variable, like: Variable | str) -> Variable:
    """A gradient term ``g`` as a sparse matrix (a dense one is converted to the format
    ``like``, or ``like``'s format)."""
    if is_sparse_variable(g):
        return g
    return SparseFromDense(like if isinstance(like, str) else like.type.format)(g)


# ------------------------------------------------------------------ elementwise products


def _upcast(*dtypes: str) -> str:
    return np.result_type(*(np.dtype(d) for d in dtypes)).name


class SparseSparseMultiply(Op):
    """The elementwise product of two sparse matrices of one shape (``x.multiply(y)``),
    in ``x``'s format."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        """Two sparse matrices."""
        x = sparse_input(x, "SparseSparseMultiply", "x")
        y = sparse_input(y, "SparseSparseMultiply", "y")
        return Apply(self, [x, y], [_sparse_out(x, dtype=_upcast(x.dtype, y.dtype))])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz * y`` and ``gz * x``."""
        (x, y), (gz,) = inputs, grads
        gz = as_sparse_gradient(gz, x)
        return [mul_s_s(gz, y), mul_s_s(gz, x)]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The first input's shape."""
        return [shapes[0]]


mul_s_s = SparseSparseMultiply()


class SparseDenseMultiply(Op):
    """The elementwise product of a sparse matrix and a dense one broadcasting to its
    shape (a scalar, a row, a column or a matrix): a sparse matrix in ``x``'s format,
    stored where ``x`` stores."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        """A sparse matrix and a dense tensor of at most 2 dimensions.

        Raises
        ------
        TypeError
            If ``x`` is not sparse or ``y`` has more than 2 dimensions.
        """
        x = sparse_input(x, "SparseDenseMultiply", "x")
        y = as_tensor_variable(y)
        if y.ndim > 2:
            raise TypeError(
                f"SparseDenseMultiply: input y must have at most 2 dimensions, got {y} of "
                f"type {y.type!r}"
            )
        return Apply(self, [x, y], [_sparse_out(x, dtype=_upcast(x.dtype, y.dtype))])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """``gz * y`` (sparse, where ``gz`` stores), and ``x * gz`` (dense) summed to
        ``y``'s shape."""
        (x, y), (gz,) = inputs, grads
        gz_sparse = as_sparse_gradient(gz, x)
        gx = mul_s_d(gz_sparse, y)
        gy_full = dense_from_sparse(mul_s_s(gz_sparse, x))
        return [gx, _sum_to(gy_full, y)]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sparse input's shape."""
        return [shapes[0]]


mul_s_d = SparseDenseMultiply()


def _sum_to(full: Variable, like: Variable) -> Variable:
    """The matrix ``full`` summed over the axes that ``like`` (0-, 1- or 2-d) broadcasts."""
    if like.ndim == 0:
        return tm.sum(full)
    if like.ndim == 1:
        return tm.sum(full, axis=0) if like.type.shape[0] != 1 else tm.sum(full, keepdims=True)[0]
    axes = [i for i, s in enumerate(like.type.shape) if s == 1]
    return tm.sum(full, axis=axes, keepdims=True) if axes else full


# ------------------------------------------------------------------ block diagonal


class SparseBlockDiagonal(Op):
    """The sparse block-diagonal matrix of ``n_inputs`` matrices, dense or sparse
    (``scipy.sparse.block_diag``), in ``format``.

    Parameters
    ----------
    n_inputs
        The number of matrices, 2 or more.
    format
        ``"csc"`` (default) or ``"csr"``.
    """

    __props__ = ("n_inputs", "format")

    def __init__(self, n_inputs: int, format: str = "csc") -> None:
        if isinstance(n_inputs, bool) or not isinstance(n_inputs, int | np.integer):
            raise TypeError(f"SparseBlockDiagonal: n_inputs must be an int, got {n_inputs!r}")
        if n_inputs <= 1:
            raise ValueError(
                f"SparseBlockDiagonal: n_inputs must be greater than 1, got {n_inputs}"
            )
        if format not in SPARSE_FORMATS:
            raise ValueError(
                f"SparseBlockDiagonal: format must be one of {SPARSE_FORMATS}, got {format!r}"
            )
        self.n_inputs = int(n_inputs)
        self.format = format

    def make_node(self, *matrices: Any) -> Apply:
        """``n_inputs`` matrices (sparse variables, SciPy matrices or dense matrices).

        Raises
        ------
        ValueError
            For another count of inputs.
        TypeError
            For an input that is not a matrix.
        """
        if len(matrices) != self.n_inputs:
            raise ValueError(
                f"SparseBlockDiagonal: expected {self.n_inputs} matrices, got {len(matrices)}"
            )
        inputs = [as_sparse_or_tensor_variable(m) for m in matrices]
        for i, m in enumerate(inputs):
            if getattr(m.type, "ndim", None) != 2:
                raise TypeError(
                    f"SparseBlockDiagonal: input matrices[{i}] must be a matrix, got {m} of "
                    f"type {m.type!r}"
                )
        dtype = np.result_type(*(np.dtype(m.type.dtype) for m in inputs)).name
        return Apply(self, inputs, [SparseTensorType(self.format, dtype)()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """Each input's block of the (dense) output gradient, sparse for sparse inputs."""
        (gz,) = grads
        g = dense_from_sparse(gz) if is_sparse_variable(gz) else gz
        result: list[Variable] = []
        row: Any = 0
        col: Any = 0
        for x in inputs:
            dense_x = dense_from_sparse(x) if is_sparse_variable(x) else x
            end_row = tm.add(row, dense_x.shape[0])
            end_col = tm.add(col, dense_x.shape[1])
            block = g[row:end_row, col:end_col]
            result.append(SparseFromDense(x.type.format)(block) if is_sparse_variable(x) else block)
            row, col = end_row, end_col
        return result

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sums of the rows and of the columns."""
        return [(tm.add(*(s[0] for s in shapes)), tm.add(*(s[1] for s in shapes)))]


def block_diag(*matrices: Any, format: str = "csc") -> Variable:
    """The sparse block-diagonal matrix of the given matrices.

    Given ``A``, ``B`` and ``C``, the result is ``[[A, 0, 0], [0, B, 0], [0, 0, C]]``.

    Parameters
    ----------
    *matrices
        Matrices: sparse variables, SciPy sparse matrices or dense matrices.
    format
        The result's format, ``"csc"`` (default) or ``"csr"``.

    Raises
    ------
    ValueError
        If no matrix is given.
    """
    if not matrices:
        raise ValueError("block_diag: expected at least one matrix, got none")
    if len(matrices) == 1:
        return as_sparse_or_tensor_variable(matrices[0])
    return SparseBlockDiagonal(len(matrices), format=format)(*matrices)


# ------------------------------------------------------------------ indexing


def _int_scalar(v: Any, who: str, what: str) -> Variable:
    """``v`` as a 0-d integer tensor, or raise a ``ValueError`` naming it."""
    var = v if isinstance(v, Variable) else as_tensor_variable(v)
    if getattr(var.type, "ndim", None) != 0 or var.type.dtype not in integer_dtypes:
        raise ValueError(
            f"{who}: cannot index a sparse matrix with {what}={v!r}: expected None, an int "
            f"or a 0-d integer variable, got type {var.type!r}"
        )
    return var


def _is_index_scalar(v: Any) -> bool:
    """Whether ``v`` is an integer, or a 0-d integer variable (one row or column)."""
    if isinstance(v, Variable):
        return getattr(v.type, "ndim", None) == 0 and v.type.dtype in integer_dtypes
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _none_or_value(v: Variable) -> Any:
    """``None`` for a constant ``None`` input, the variable itself otherwise."""
    return None if isinstance(v, Constant) and v.data is None else v


def _int_list(v: Any, who: str, what: str) -> Variable:
    """``v`` as an integer vector (a list of row or column positions), or raise."""
    var = as_tensor_variable(v)
    if var.ndim != 1 or var.type.dtype not in integer_dtypes:
        raise TypeError(
            f"{who}: input {what} must be a vector of integers, got {var} of type {var.type!r}"
        )
    return var


class GetItemList(Op):
    """The rows of a sparse matrix at the positions of an integer vector (``x[index]``),
    a sparse matrix of ``x``'s format; positions may repeat and be negative."""

    __props__ = ()

    def make_node(self, x: Any, index: Any) -> Apply:
        """A sparse matrix and an integer vector (or list)."""
        x = sparse_input(x, "GetItemList")
        index = _int_list(index, "GetItemList", "index")
        shape = (index.type.shape[0], x.type.shape[1])
        return Apply(
            self, [x, index], [SparseTensorType(x.type.format, x.type.dtype, shape=shape)()]
        )

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The output gradient's rows added back at their positions; none for ``index``."""
        (x, index), (gz,) = inputs, grads
        gx: Any = get_item_list_grad(x, index, as_sparse_gradient(gz, x))
        return [
            gx,
            grad_undefined(self, 1, index, "the positions are not differentiable"),
        ]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``(len(index), columns of x)``."""
        return [(shapes[1][0], shapes[0][1])]


get_item_list = GetItemList()


class GetItemListGrad(Op):
    """The gradient of :class:`GetItemList`: a sparse matrix of ``x``'s shape and format
    holding row ``i`` of ``gz`` added into row ``index[i]`` (repeated positions add up)."""

    __props__ = ()

    def make_node(self, x: Any, index: Any, gz: Any) -> Apply:
        """The sparse matrix, the positions and the (sparse) output gradient."""
        x = sparse_input(x, "GetItemListGrad")
        gz = sparse_input(gz, "GetItemListGrad", "gz")
        index = _int_list(index, "GetItemListGrad", "index")
        return Apply(self, [x, index, gz], [_sparse_out(x, dtype=gz.type.dtype)])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]


get_item_list_grad = GetItemListGrad()


class GetItem2Lists(Op):
    """The values of a sparse matrix at the positions ``(ind1[k], ind2[k])``, a dense
    vector of ``x``'s dtype (``x[ind1, ind2]``)."""

    __props__ = ()

    def make_node(self, x: Any, ind1: Any, ind2: Any) -> Apply:
        """A sparse matrix and two integer vectors (rows and columns)."""
        x = sparse_input(x, "GetItem2Lists")
        ind1 = _int_list(ind1, "GetItem2Lists", "ind1")
        ind2 = _int_list(ind2, "GetItem2Lists", "ind2")
        return Apply(self, [x, ind1, ind2], [TensorType(x.type.dtype, shape=(None,))()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The output gradient's values added at their positions; none for the indices."""
        (x, ind1, ind2), (gz,) = inputs, grads
        gx: Any = get_item_2lists_grad(x, ind1, ind2, gz)
        return [
            gx,
            grad_undefined(self, 1, ind1, "the positions are not differentiable"),
            grad_undefined(self, 2, ind2, "the positions are not differentiable"),
        ]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The length of the index vectors."""
        return [(shapes[1][0],)]


get_item_2lists = GetItem2Lists()


class GetItem2ListsGrad(Op):
    """The gradient of :class:`GetItem2Lists`: a sparse matrix of ``x``'s shape and
    format holding ``gz[k]`` added at ``(ind1[k], ind2[k])`` (repeated positions add up)."""

    __props__ = ()

    def make_node(self, x: Any, ind1: Any, ind2: Any, gz: Any) -> Apply:
        """The sparse matrix, the two index vectors and the (dense) output gradient."""
        x = sparse_input(x, "GetItem2ListsGrad")
        ind1 = _int_list(ind1, "GetItem2ListsGrad", "ind1")
        ind2 = _int_list(ind2, "GetItem2ListsGrad", "ind2")
        gz = as_tensor_variable(gz)
        return Apply(self, [x, ind1, ind2, gz], [_sparse_out(x, dtype=gz.type.dtype)])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]


get_item_2lists_grad = GetItem2ListsGrad()


class GetItem2d(Op):
    """A block of a sparse matrix selected by one or two slices (``x[a:b:s, c:d:t]``),
    a sparse matrix of ``x``'s format. Bounds and steps are ``None``, ints or 0-d integer
    variables (negative ones count from the end). An integer index would make a sparse
    vector, which does not exist: use ``x[a:a + 1]`` instead. No gradient, as in PyTensor.
    """

    __props__ = ()

    def make_node(self, x: Any, index: Any) -> Apply:
        """A sparse matrix and a tuple of one or two slices.

        Raises
        ------
        NotImplementedError
            For an integer index (the result would be a sparse vector).
        ValueError
            For another kind of index or slice bound, or more than two indices.
        """
        x = sparse_input(x, "GetItem2d")
        index = tuple(index) if isinstance(index, tuple | list) else (index,)
        if len(index) not in (1, 2):
            raise ValueError(f"GetItem2d: expected 1 or 2 indices, got {len(index)}")
        inputs: list[Variable] = [x]
        static = list(x.type.shape)
        for axis, ind in enumerate(index):
            if isinstance(ind, slice):
                step = None if isinstance(ind.step, int) and ind.step == 1 else ind.step
                static[axis] = slice_static_length(ind, static[axis])
                for what, bound in (("start", ind.start), ("stop", ind.stop), ("step", step)):
                    inputs.append(
                        Constant(generic, None)
                        if bound is None
                        else _int_scalar(bound, "GetItem2d", what)
                    )
            elif _is_index_scalar(ind):
                raise NotImplementedError(
                    "GetItem2d: there are no sparse vectors; use x[a:b, c:d], x[a:b, c:c+1] "
                    "or x[a:b] instead of an integer index"
                )
            else:
                raise ValueError(
                    "GetItem2d: advanced indexing is not implemented for sparse matrices; "
                    f"index not supported: {ind!r}"
                )
        inputs += [Constant(generic, None) for _ in range(7 - len(inputs))]
        return Apply(self, inputs, [SparseTensorType(x.type.format, x.type.dtype, shape=static)()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """Not implemented (as in PyTensor)."""
        return [grad_not_implemented(self, 0, inputs[0], "sparse slicing")] + [
            disconnected_type() for _ in inputs[1:]
        ]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Only ``x`` carries values."""
        return [[i == 0] for i in range(len(node.inputs))]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The lengths of the two slices."""
        p = [_none_or_value(v) for v in node.inputs[1:]]
        rows = slice_length(p[0], p[1], p[2], shapes[0][0])
        cols = slice_length(p[3], p[4], p[5], shapes[0][1])
        return [(rows, cols)]


get_item_2d = GetItem2d()


class GetItemScalar(Op):
    """One value of a sparse matrix, ``x[i, j]``, as a 0-d tensor of its dtype (0 where
    nothing is stored; negative positions count from the end). No gradient, as in
    PyTensor."""

    __props__ = ()

    def make_node(self, x: Any, index: Any) -> Apply:
        """A sparse matrix and a pair of ints or 0-d integer variables.

        Raises
        ------
        ValueError
            For a slice, or another number of indices.
        """
        x = sparse_input(x, "GetItemScalar")
        if len(index) != 2:
            raise ValueError(f"GetItemScalar: expected 2 indices, got {len(index)}")
        inputs = [x]
        for what, ind in zip(("i", "j"), index, strict=True):
            if isinstance(ind, slice):
                raise ValueError("GetItemScalar: called with a slice as index (use GetItem2d)")
            inputs.append(_int_scalar(ind, "GetItemScalar", what))
        return Apply(self, inputs, [TensorType(x.type.dtype, shape=())()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """Not implemented (as in PyTensor)."""
        return [
            grad_not_implemented(self, 0, inputs[0], "sparse item"),
            disconnected_type(),
            disconnected_type(),
        ]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Only ``x`` carries values."""
        return [[True], [False], [False]]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``()``."""
        return [()]


get_item_scalar = GetItemScalar()


# ------------------------------------------------------------------ diagonal and cleaning


class Diag(Op):
    """The diagonal of a square sparse matrix, as a dense vector (the regular gradient,
    a sparse diagonal matrix)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix (square when computed)."""
        x = sparse_input(x, "Diag")
        return Apply(self, [x], [TensorType(x.type.dtype, shape=(None,))()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The sparse diagonal matrix of the gradient, in ``x``'s format."""
        (x,), (gz,) = inputs, grads
        square = square_diagonal(gz)
        gx: Any = square if getattr(x.type, "format", None) == "csc" else transpose(square)
        return [gx]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The shorter side (the sides are equal for the square matrices computed)."""
        return [(tm.minimum(*shapes[0]),)]


diag = Diag()


class EnsureSortedIndices(Op):
    """The sparse matrix with the indices of each row (CSR) or column (CSC) sorted.

    Parameters
    ----------
    inplace
        Sort the input's indices in place (the output is a view of the input).
    """

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        self.inplace = bool(inplace)
        if self.inplace:
            self.view_map = {0: [0]}

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{'inplace' if self.inplace else 'no_inplace'}}}"

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix."""
        x = sparse_input(x, "EnsureSortedIndices")
        return Apply(self, [x], [x.type()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The output gradient (the values do not change)."""
        return [grads[0]]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]


ensure_sorted_indices = EnsureSortedIndices(inplace=False)


class Remove0(Op):
    """The sparse matrix without its explicitly stored zeros.

    Parameters
    ----------
    inplace
        Remove them from the input itself (which the Op destroys).
    """

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        self.inplace = bool(inplace)
        if self.inplace:
            self.destroy_map = {0: [0]}

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{'inplace' if self.inplace else ''}}}"

    def make_node(self, x: Any) -> Apply:
        """One sparse matrix."""
        x = sparse_input(x, "Remove0")
        return Apply(self, [x], [x.type()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The output gradient (the values do not change)."""
        return [grads[0]]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]


remove0 = Remove0()


def clean(x: Any) -> Variable:
    """``x`` without explicitly stored zeros and with its indices sorted
    (``ensure_sorted_indices(remove0(x))``)."""
    cleaned: Any = ensure_sorted_indices(remove0(x))
    return cleaned  # type: ignore[no-any-return]


# ------------------------------------------------------------------ stacking


class Stack(Op):
    """The base of :class:`HStack` and :class:`VStack`.

    Parameters
    ----------
    format
        The output format, ``"csc"`` (default) or ``"csr"``.
    dtype
        The output dtype (required).
    """

    __props__ = ("format", "dtype")
    #: The axis the matrices are joined along.
    axis = 0

    def __init__(self, format: str | None = None, dtype: Any = None) -> None:
        format = "csc" if format is None else format
        if format not in SPARSE_FORMATS:
            raise ValueError(
                f"{type(self).__name__}: format must be one of {SPARSE_FORMATS}, got {format!r}"
            )
        if dtype is None:
            raise ValueError(f"{type(self).__name__}: the output dtype must be specified")
        self.format = format
        self.dtype = np.dtype(dtype).name

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.format},{self.dtype})"

    def make_node(self, *blocks: Any) -> Apply:
        """One or more sparse matrices.

        Raises
        ------
        ValueError
            For no matrix, or static lengths that differ along the other axis.
        """
        name = type(self).__name__
        if not blocks:
            raise ValueError(f"{name}: cannot join an empty list of sparse matrices")
        inputs: list[Any] = [sparse_input(b, name, f"blocks[{i}]") for i, b in enumerate(blocks)]
        other = 1 - self.axis
        known = {x.type.shape[other] for x in inputs if x.type.shape[other] is not None}
        if len(known) > 1:
            what = "rows" if other == 0 else "columns"
            raise ValueError(
                f"{name}: all matrices must have the same number of {what}; got {sorted(known)}"
            )
        lengths = [x.type.shape[self.axis] for x in inputs]
        shape: list[Any] = [None, None]
        shape[self.axis] = None if None in lengths else sum(lengths)
        shape[other] = known.pop() if known else None
        return Apply(self, inputs, [SparseTensorType(self.format, self.dtype, shape=shape)()])

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """Each block's part of the (dense) output gradient, sparse in the output's format;
        discrete inputs get none."""
        (gz,) = grads
        g: Any = dense_from_sparse(gz) if is_sparse_variable(gz) else gz
        result: list[Any] = []
        start: Any = 0
        x: Any
        for i, x in enumerate(inputs):
            dense_x: Any = dense_from_sparse(x)
            end = tm.add(start, dense_x.shape[self.axis])
            part = g[start:end] if self.axis == 0 else g[:, start:end]
            if x.type.dtype in tensor_continuous_dtypes:
                result.append(SparseFromDense(x.type.format)(part))
            else:
                result.append(grad_undefined(self, i, x, "a discrete input"))
            start = end
        return result

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sum of the lengths along the axis, the first input's along the other."""
        lengths = [s[self.axis] for s in shapes]
        out: list[Any] = [None, None]
        out[self.axis] = tm.add(*lengths) if len(lengths) > 1 else lengths[0]
        out[1 - self.axis] = shapes[0][1 - self.axis]
        return [tuple(out)]


class HStack(Stack):
    """Sparse matrices with one number of rows joined side by side
    (``scipy.sparse.hstack``)."""

    axis = 1


class VStack(Stack):
    """Sparse matrices with one number of columns joined one above the other
    (``scipy.sparse.vstack``)."""

    axis = 0


def _stack_args(blocks: Any, dtype: Any) -> tuple[list[Any], Any]:
    inputs: list[Any] = [sparse_input(b, "stack", "blocks") for b in blocks]
    if dtype is None:
        dtype = _upcast(*(x.type.dtype for x in inputs)) if inputs else None
    return inputs, dtype


def hstack(blocks: Sequence[Any], format: str | None = None, dtype: Any = None) -> Variable:
    """The sparse matrices ``blocks`` (one number of rows) joined side by side.

    Parameters
    ----------
    blocks
        Sparse variables or SciPy sparse matrices.
    format
        The result's format, ``"csc"`` (default) or ``"csr"``.
    dtype
        The result's dtype (default: the blocks' dtypes upcast).
    """
    inputs, dtype = _stack_args(blocks, dtype)
    joined: Any = HStack(format=format, dtype=dtype)(*inputs)
    return joined  # type: ignore[no-any-return]


def vstack(blocks: Sequence[Any], format: str | None = None, dtype: Any = None) -> Variable:
    """The sparse matrices ``blocks`` (one number of columns) joined one above the other.

    Parameters
    ----------
    blocks
        Sparse variables or SciPy sparse matrices.
    format
        The result's format, ``"csc"`` (default) or ``"csr"``.
    dtype
        The result's dtype (default: the blocks' dtypes upcast).
    """
    inputs, dtype = _stack_args(blocks, dtype)
    joined: Any = VStack(format=format, dtype=dtype)(*inputs)
    return joined  # type: ignore[no-any-return]


# ------------------------------------------------------------------ rows from a list


class ConstructSparseFromList(Op):
    """The CSC matrix of the shape of ``x`` holding row ``k`` of the dense matrix
    ``values`` in row ``ilist[k]`` (repeated rows add up): the sparse gradient of
    ``x[ilist]``. The node keeps ``x.shape``, not ``x``."""

    __props__ = ()

    def make_node(self, x: Any, values: Any, ilist: Any) -> Apply:
        """A dense matrix (for its shape and dtype), the dense rows and their positions.

        Raises
        ------
        TypeError
            If ``ilist`` is not an integer vector, or ``x`` or ``values`` not a matrix.
        """
        x_ = as_tensor_variable(x)
        values_ = as_tensor_variable(values)
        ilist_ = as_tensor_variable(ilist)
        if ilist_.type.dtype not in integer_dtypes:
            raise TypeError(f"ConstructSparseFromList: index must be integers, got {ilist_.type!r}")
        if ilist_.type.ndim != 1:
            raise TypeError(f"ConstructSparseFromList: index must be a vector, got {ilist_.type!r}")
        if x_.type.ndim != 2:
            raise TypeError(
                f"ConstructSparseFromList: cannot create a sparse matrix with {x_.type.ndim} "
                "dimensions"
            )
        if values_.type.ndim != 2:
            raise TypeError(
                "ConstructSparseFromList: cannot create a sparse matrix from values with "
                f"{values_.type.ndim} dimensions"
            )
        out = SparseTensorType("csc", x_.type.dtype, shape=x_.type.shape)()
        return Apply(self, [x_.shape, values_, ilist_], [out])

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Only ``values`` carries values."""
        return [[False], [True], [False]]

    def grad(self, inputs: Sequence[Variable], grads: Sequence[Variable]) -> list[Variable]:
        """The output gradient's rows at ``ilist`` for ``values``."""
        (_, _, ilist), (gz,) = inputs, grads
        g = dense_from_sparse(gz) if is_sparse_variable(gz) else gz
        return [disconnected_type(), advanced_subtensor1(g, ilist), disconnected_type()]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The shape input's two entries."""
        shape: Any = node.inputs[0]
        return [(shape[0], shape[1])]


construct_sparse_from_list = ConstructSparseFromList()
