"""Helpers of the tensor library: generalized-ufunc signatures, static broadcasting,
axes, hashing arrays and numeric shapes of a graph.

The names are PyTensor's (``pytensor.tensor.utils``). A gufunc signature is NumPy's
notation for the core dimensions of a function's inputs and outputs, e.g.
``"(m,n),(n,p)->(m,p)"`` for ``matmul``; an input without core dimensions is ``()``, and
a function without inputs writes nothing before ``->``.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from opweave.compile.maker import function
from opweave.graph.basic import Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.replace import graph_replace
from opweave.tensor.basic import get_scalar_constant_value
from opweave.tensor.exceptions import NotScalarConstantError
from opweave.tensor.rewriting.shape import ShapeFeature
from opweave.tensor.type import lscalar

__all__ = [
    "_parse_gufunc_signature",
    "broadcast_static_dim_lengths",
    "faster_broadcast_to",
    "faster_ndindex",
    "get_static_shape_from_size_variables",
    "hash_from_ndarray",
    "import_func_from_string",
    "normalize_reduce_axis",
    "safe_signature",
    "shape_of_variables",
]

_DIMENSION = r"\w+"
_DIMENSIONS = rf"(?:{_DIMENSION}(?:,{_DIMENSION})*)?"
_OPERAND = rf"\({_DIMENSIONS}\)"
_OPERANDS = rf"{_OPERAND}(?:,{_OPERAND})*"
_SIGNATURE = re.compile(rf"^(?:{_OPERANDS})?->{_OPERANDS}$")


def _parse_operands(text: str) -> list[tuple[str, ...]]:
    """The core dimension names of each operand of one side of a signature."""
    return [tuple(re.findall(_DIMENSION, operand)) for operand in re.findall(_OPERAND, text)]


def _parse_gufunc_signature(
    signature: str,
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The core dimension names of the inputs and of the outputs of a gufunc signature.

    Parameters
    ----------
    signature
        E.g. ``"(m,n),(n,p)->(m,p)"``; whitespace is ignored.

    Returns
    -------
    tuple
        ``(inputs, outputs)``, each a list with one tuple of dimension names per operand:
        ``([("m", "n"), ("n", "p")], [("m", "p")])``.

    Raises
    ------
    ValueError
        If ``signature`` is not a valid gufunc signature.
    """
    compact = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(compact):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = compact.split("->")
    return _parse_operands(inputs), _parse_operands(outputs)


def safe_signature(core_inputs_ndim: Sequence[int], core_outputs_ndim: Sequence[int]) -> str:
    """A gufunc signature giving every core dimension its own name.

    Parameters
    ----------
    core_inputs_ndim
        The number of core dimensions of each input.
    core_outputs_ndim
        The number of core dimensions of each output.

    Returns
    -------
    str
        E.g. ``safe_signature([2, 0], [1])`` is ``"(i00,i01),()->(o00)"``: dimension ``k``
        of input ``n`` is ``i<n><k>``, of output ``n`` is ``o<n><k>``.
    """

    def side(ndims: Sequence[int], prefix: str) -> str:
        return ",".join(
            "(" + ",".join(f"{prefix}{n}{k}" for k in range(ndim)) + ")"
            for n, ndim in enumerate(ndims)
        )

    return f"{side(core_inputs_ndim, 'i')}->{side(core_outputs_ndim, 'o')}"


def broadcast_static_dim_lengths(dim_lengths: Sequence[int | None]) -> int | None:
    """The static length of a dimension after broadcasting operands of these lengths.

    Parameters
    ----------
    dim_lengths
        Each operand's static length (``None`` where unknown).

    Returns
    -------
    int or None
        The common length; ``None`` when it is not known statically.

    Raises
    ------
    ValueError
        When two known lengths other than 1 differ.
    """
    lengths = set(dim_lengths)
    if len(lengths) == 1:
        return next(iter(lengths))
    if lengths == {None, 1}:
        return None
    known = {length for length in lengths if length is not None and length != 1}
    if len(known) > 1:
        raise ValueError(f"incompatible static dimension lengths {sorted(known)}")
    return next(iter(known))


def normalize_reduce_axis(
    axis: int | Sequence[int] | None, ndim: int, normalize_none: bool = False
) -> tuple[int, ...] | None:
    """The axes of a reduction as a tuple of non-negative ints.

    Parameters
    ----------
    axis
        An axis, a sequence of axes (negative ones count from the end), or ``None``.
    ndim
        The number of dimensions of the reduced tensor; a 0-d tensor accepts the axes of
        a 1-d one (``0`` and ``-1``).
    normalize_none
        Return every axis for ``None`` instead of ``None``.

    Raises
    ------
    numpy.exceptions.AxisError
        For an axis out of range, or repeated.
    """
    if axis is None:
        return tuple(range(ndim)) if normalize_none else None
    try:
        return tuple(normalize_axis_tuple(axis, ndim=max(1, ndim)))
    except np.exceptions.AxisError:
        raise np.exceptions.AxisError(axis, ndim=ndim) from None  # type: ignore[arg-type]


def _sha256_text(data: Any) -> str:
    """``"m"`` and the hex SHA-256 digest of a string (UTF-8) or a buffer."""
    raw = data.encode() if isinstance(data, str) else data
    return f"m{hashlib.sha256(raw).hexdigest()}"


def hash_from_ndarray(data: np.ndarray) -> str:
    """A hex digest of an array's elements, shape, strides and dtype.

    Two arrays with the same bytes but another shape (``(1, 0)`` and ``(2, 0)``), another
    layout or another dtype get different digests. The value is PyTensor's: a SHA-256
    digest (prefixed ``"m"``) of the digests of the C-contiguous bytes and of the
    ``str`` of the shape, strides and dtype.

    Raises
    ------
    TypeError
        When ``data`` is not a ``numpy.ndarray``.
    """
    if not isinstance(data, np.ndarray):
        raise TypeError(f"hash_from_ndarray: expected a numpy.ndarray, got {type(data).__name__}")
    if not data.flags["C_CONTIGUOUS"]:
        data = np.ascontiguousarray(data)
    parts = (data, str(data.shape), str(data.strides), str(data.dtype))
    return _sha256_text("".join(_sha256_text(part) for part in parts))


def shape_of_variables(
    fgraph: FunctionGraph, input_shapes: Mapping[Variable, Sequence[int]]
) -> dict[Variable, tuple[Any, ...]]:
    """The numeric shape of every tensor of ``fgraph``, from the shapes of its inputs.

    Attaches a :class:`~opweave.tensor.rewriting.shape.ShapeFeature` to ``fgraph`` when it
    has none (so the graph is changed), and computes the shapes its ``infer_shape`` rules
    give.

    Parameters
    ----------
    fgraph
        The graph; a graph built with ``clone=False`` keeps the caller's variables.
    input_shapes
        ``{input: its shape}`` for every input of ``fgraph``.

    Returns
    -------
    dict
        ``{variable: tuple of 0-d int64 arrays}`` for each variable with a tensor shape.

    Raises
    ------
    ValueError
        When a key of ``input_shapes`` is not an input of ``fgraph`` (a graph cloned on
        construction has copies of the variables), or an input has no shape given.
    """
    unknown = [var for var in input_shapes if var not in fgraph.inputs]
    if unknown:
        raise ValueError(
            f"shape_of_variables: {unknown} are not inputs of the FunctionGraph (build it "
            "with clone=False to keep your variables)"
        )
    absent = [var for var in fgraph.inputs if var not in input_shapes]
    if absent:
        raise ValueError(f"shape_of_variables: no shape given for the inputs {absent}")
    if getattr(fgraph, "shape_feature", None) is None:
        fgraph.attach_feature(ShapeFeature())
    shape_of = fgraph.shape_feature.shape_of  # type: ignore[attr-defined]
    symbols: dict[Variable, Variable] = {}
    numbers: list[int] = []
    for var in fgraph.inputs:
        for dim, length in zip(shape_of[var], input_shapes[var], strict=True):
            if not isinstance(dim, Constant) and dim not in symbols:
                symbols[dim] = lscalar()
                numbers.append(int(length))
    shaped = [var for var in fgraph.variables if shape_of.get(var) is not None]
    dims = [dim for var in shaped for dim in shape_of[var]]
    compute = function(
        list(symbols.values()),
        graph_replace(dims, symbols) if dims else [],
        on_unused_input="ignore",
    )
    values = iter(compute(*numbers) if dims else [])
    return {var: tuple(next(values) for _ in shape_of[var]) for var in shaped}


def faster_broadcast_to(x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """A read-only view of ``x`` broadcast to ``shape`` (``numpy.broadcast_to`` without
    its argument checks).

    Raises
    ------
    ValueError
        When ``x`` cannot be broadcast to ``shape``.
    """
    it = np.nditer(
        (x,),
        flags=["multi_index", "zerosize_ok"],
        op_flags=[["readonly"]],
        itershape=tuple(shape),
        order="C",
    )
    view: np.ndarray = it.itviews[0]
    return view


def faster_ndindex(shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every index of an array of ``shape`` in C order (``numpy.ndindex(*shape)``)."""
    return itertools.product(*(range(length) for length in shape))


def import_func_from_string(func_string: str) -> Callable[..., Any] | None:
    """The NumPy function ``func_string`` names (``"cumsum"``), or the object a dotted
    path names (``"scipy.special.gammaln"``); ``None`` when there is none."""
    found = getattr(np, func_string, None)
    if found is not None:
        return found  # type: ignore[no-any-return]
    parts = func_string.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
            if obj is None:
                return None
        return obj  # type: ignore[no-any-return]
    return None


def get_static_shape_from_size_variables(size_vars: Sequence[Any]) -> tuple[int | None, ...]:
    """The static lengths that the symbolic lengths ``size_vars`` are known to have
    (``None`` where a length is not a known constant)."""
    lengths: list[int | None] = []
    for size in size_vars:
        try:
            lengths.append(int(get_scalar_constant_value(size)))
        except NotScalarConstantError:
            lengths.append(None)
    return tuple(lengths)
