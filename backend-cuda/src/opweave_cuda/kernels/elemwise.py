"""Elementwise kernels generated from a scalar graph (a fused Composite is one kernel).

The kernels of a node, all grid-stride loops over the output's elements:

* the *contiguous* one indexes every operand with one flat index; an input is read at
  ``i * s`` (``s`` 1 for an input of the output's layout, 0 for a one-element input, or the
  one stride of a layout merged into one dimension). It comes twice: with 32-bit indices,
  taken whenever the element count and the operands' extents allow (cheaper index
  arithmetic, as CuPy's and libgpuarray's 32-bit indexers), and with 64-bit ones;
* the *broadcast* one, for launches that merge into two dimensions ``(m, n)`` with
  C-contiguous outputs and inputs that are full (strides ``(n, 1)``), a row (``(0, 1)``,
  read at ``i % n``), a column (``(1, 0)``, read at ``i / n``) or one element; generated per
  pattern of its inputs, with 32-bit or 64-bit indices;
* the *strided* one takes the shape and each operand's element strides (0 along broadcast
  dimensions) and turns the flat index into each operand's offset: any layout, negative
  strides and broadcasting included. :attr:`ElemwiseKernel.strided` has the node's rank and
  64-bit indices; a launch whose dimensions merge (:mod:`~opweave_cuda.kernels.layout`) runs
  the variant of the merged rank, with 32-bit indices when they fit.

:meth:`ElemwiseKernel.select` chooses the launch (see "How a launch is chosen" in the CUDA
backend's documentation); :meth:`ElemwiseKernel.plan` is the unmerged contiguous-or-strided
launch, every layout's reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from opweave_cuda.kernels.launch import (
    MAX_BLOCKS,
    MAX_NDIM,
    MAX_THREADS,
    broadcast_strides,
    element_strides,
    is_c_contiguous,
    launch_config,
)
from opweave_cuda.kernels.layout import fits_int32, merge_dims
from opweave_cuda.kernels.runtime import BoundLaunch, LaunchMemo, bind
from opweave_cuda.kernels.scalar import scalar_code, with_conversions
from opweave_cuda.kernels.source import (
    CUDA_DTYPES,
    CUDA_TYPE,
    MAX_PARAM_BYTES,
    KernelSource,
    convert,
    kernel_name,
    load,
    store,
    translation_unit,
)

__all__ = [
    "ElemwiseKernel",
    "ElemwiseLaunch",
    "ElemwiseVariants",
    "LaunchPlan",
    "elemwise_kernel",
]

#: One launch: the kernel, its grid and block, and its argument values (arrays for pointers).
LaunchPlan = tuple[KernelSource, tuple[int, int, int], tuple[int, int, int], list[Any]]

_LOOP = (
    "for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
    " i += (long long)blockDim.x * gridDim.x)"
)
_LOOP32 = "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)"
#: Most elements the 32-bit kernel takes: the last step of its grid-stride loop (at most
#: ``MAX_BLOCKS * MAX_THREADS`` past ``n``) must not overflow an ``int``.
INT32_ELEMENTS = 2**31 - 1 - MAX_BLOCKS * MAX_THREADS


def _dtype_name(dtype: Any) -> str:
    return np.dtype(dtype).name


class ElemwiseKernel:
    """The kernels of one Elemwise node and how to launch them.

    Parameters
    ----------
    contiguous, strided
        The 64-bit contiguous kernel and the strided one (see the module docstring).
    in_dtypes, out_dtypes
        The operands' dtypes.
    ndim
        The operands' rank.
    inplace_pattern
        ``{output: input}`` of the node: such an output is given the input itself.
    contiguous32
        The contiguous kernel with 32-bit indices (``None``: the 64-bit one always runs).
    variants
        The generator of the strided kernels of other ranks and index widths and of the
        broadcast kernels (``None``: :meth:`select` uses the unmerged :meth:`plan`).

    Attributes
    ----------
    sources
        ``(contiguous, strided)``, then ``contiguous32`` when given.
    """

    def __init__(
        self,
        contiguous: KernelSource,
        strided: KernelSource,
        in_dtypes: Sequence[str],
        out_dtypes: Sequence[str],
        ndim: int,
        inplace_pattern: Mapping[int, int] | None = None,
        contiguous32: KernelSource | None = None,
        variants: ElemwiseVariants | None = None,
    ) -> None:
        self.contiguous = contiguous
        self.variants = variants
        self.contiguous32 = contiguous32
        self.strided = strided
        self.sources: tuple[KernelSource, ...] = (contiguous, strided)
        if contiguous32 is not None:
            self.sources += (contiguous32,)
        self.in_dtypes = tuple(in_dtypes)
        self.out_dtypes = tuple(out_dtypes)
        self.ndim = ndim
        self.inplace_pattern = dict(inplace_pattern or {})
        self._memo = LaunchMemo()

    def _check(self, arrays: Sequence[Any], dtypes: Sequence[str], what: str) -> None:
        if len(arrays) != len(dtypes):
            raise TypeError(f"elementwise kernel takes {len(dtypes)} {what}s, got {len(arrays)}")
        for k, (a, dtype) in enumerate(zip(arrays, dtypes, strict=True)):
            if _dtype_name(a.dtype) != dtype or len(a.shape) != self.ndim:
                raise TypeError(
                    f"elementwise kernel {what} {k}: expected a {self.ndim}-d {dtype} array, "
                    f"got a {len(a.shape)}-d {_dtype_name(a.dtype)} one"
                )

    def _launch_shape(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> tuple[int, ...]:
        """The outputs' common shape, after checking every operand's dtype."""
        self._check(inputs, self.in_dtypes, "input")
        self._check(outputs, self.out_dtypes, "output")
        shape = tuple(int(d) for d in outputs[0].shape)
        for k, y in enumerate(outputs):
            if tuple(int(d) for d in y.shape) != shape:
                raise ValueError(f"elementwise kernel output {k} has shape {y.shape}, not {shape}")
        return shape

    def plan(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> LaunchPlan | None:
        """The launch that computes ``outputs`` from ``inputs`` (``None``: no element).

        Parameters
        ----------
        inputs, outputs
            Array-likes with ``shape``, ``strides`` (bytes) and ``dtype``; the outputs all
            have the broadcast shape.

        Returns
        -------
        (kernel, grid, block, values) or None
        """
        shape = self._launch_shape(inputs, outputs)
        n = math.prod(shape)
        if n == 0:
            return None
        grid, block = launch_config(n)

        def flat(a: Any) -> bool:
            size = math.prod(int(d) for d in a.shape)
            item = np.dtype(a.dtype).itemsize
            return size == 1 or (
                tuple(int(d) for d in a.shape) == shape
                and is_c_contiguous(a.shape, a.strides, item)
            )

        if all(flat(a) for a in (*inputs, *outputs)):
            values: list[Any] = [n]
            for x in inputs:
                values += [x, 0 if math.prod(int(d) for d in x.shape) == 1 else 1]
            values += list(outputs)
            if self.contiguous32 is not None and n <= INT32_ELEMENTS:
                return self.contiguous32, grid, block, values
            return self.contiguous, grid, block, values
        values = [n, *shape]
        for x in inputs:
            strides = element_strides(x.strides, np.dtype(x.dtype).itemsize)
            values += [x, *broadcast_strides(tuple(int(d) for d in x.shape), strides, shape)]
        for y in outputs:
            strides = element_strides(y.strides, np.dtype(y.dtype).itemsize)
            values += [y, *broadcast_strides(shape, strides, shape)]
        return self.strided, grid, block, values

    def select(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> ElemwiseLaunch | None:
        """The launch :meth:`__call__` runs: dimensions merged, then the contiguous,
        broadcast or strided kernel of the merged rank, with 32-bit indices when they fit.

        Parameters
        ----------
        inputs, outputs
            As for :meth:`plan`.

        Returns
        -------
        ElemwiseLaunch or None
            ``None`` when the output has no element.
        """
        shape = self._launch_shape(inputs, outputs)
        n = math.prod(shape)
        if n == 0:
            return None
        if self.variants is None:
            planned = self.plan(inputs, outputs)
            assert planned is not None
            path = "strided" if planned[0] is self.strided else "contiguous"
            bits = 32 if planned[0] is self.contiguous32 else 64
            return ElemwiseLaunch(path, shape, bits, *planned)
        strides = []
        for x in inputs:
            s = element_strides(x.strides, np.dtype(x.dtype).itemsize)
            strides.append(broadcast_strides(tuple(int(d) for d in x.shape), s, shape))
        for y in outputs:
            s = element_strides(y.strides, np.dtype(y.dtype).itemsize)
            strides.append(broadcast_strides(shape, s, shape))
        merged, mstrides = merge_dims(shape, strides, order_by=len(inputs))
        bits = 32 if fits_int32(n, merged, mstrides) else 64
        nin = len(inputs)
        grid, block = launch_config(n)
        rank = len(merged)
        if rank <= 1 and all(rank == 0 or s == (1,) for s in mstrides[nin:]):
            values: list[Any] = [n]
            for x, s in zip(inputs, mstrides, strict=False):
                values += [x, s[0] if rank else 0]
            values += list(outputs)
            if bits == 32 and self.contiguous32 is not None:
                return ElemwiseLaunch(
                    "contiguous", merged, 32, self.contiguous32, grid, block, values
                )
            return ElemwiseLaunch("contiguous", merged, 64, self.contiguous, grid, block, values)
        if rank == 2 and all(s == (merged[1], 1) for s in mstrides[nin:]):
            kinds = {(merged[1], 1): "f", (0, 1): "r", (1, 0): "c", (0, 0): "s"}
            pattern = "".join(kinds.get(s, "?") for s in mstrides[:nin])
            if "?" not in pattern:
                source = self.variants.broadcast(pattern, bits)
                values = [n, merged[1], *inputs, *outputs]
                return ElemwiseLaunch("broadcast", merged, bits, source, grid, block, values)
        source = self.variants.strided(rank, bits)
        values = [n, *merged]
        for a, s in zip((*inputs, *outputs), mstrides, strict=True):
            values += [a, *s]
        return ElemwiseLaunch("strided", merged, bits, source, grid, block, values)

    def __call__(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Compute ``outputs`` (preallocated ``GPUArray``s of the broadcast shape; an in-place
        output is the destroyed input itself) from ``inputs`` (``GPUArray``s), with the
        launch :meth:`select` chooses, remembered per layout of the operands
        (:class:`~opweave_cuda.kernels.runtime.LaunchMemo`)."""
        operands = (*inputs, *outputs)

        def make() -> BoundLaunch | None:
            chosen = self.select(inputs, outputs)
            return None if chosen is None else bind(*chosen.plan, operands)

        bound = self._memo.remembered(operands, make)
        if bound is not None:
            bound(operands)


@dataclass(frozen=True)
class ElemwiseLaunch:
    """One chosen elementwise launch.

    Attributes
    ----------
    path
        ``"contiguous"``, ``"broadcast"`` or ``"strided"``.
    shape
        The launch's dimensions after merging (``()``: one element).
    index_bits
        32 or 64: the width of the kernel's index arithmetic.
    kernel, grid, block, values
        The launch itself (:attr:`plan`).
    """

    path: str
    shape: tuple[int, ...]
    index_bits: int
    kernel: KernelSource
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    values: list[Any]

    @property
    def plan(self) -> LaunchPlan:
        """``(kernel, grid, block, values)``, as :func:`~opweave_cuda.kernels.runtime.launch`
        takes them."""
        return self.kernel, self.grid, self.block, self.values


class ElemwiseVariants:
    """Generates (once each) the strided kernels of any rank and index width, and the
    broadcast kernels of any input pattern, of one Elemwise node.

    Parameters
    ----------
    code
        The node's scalar code (:func:`~opweave_cuda.kernels.scalar.scalar_code`).
    in_dtypes, out_dtypes
        The operands' dtypes.
    base
        The kernels' name prefix (unique to the code).
    ndim
        The node's rank (its 64-bit strided kernel is named ``<base>_strided``).
    """

    def __init__(
        self, code: Any, in_dtypes: Sequence[str], out_dtypes: Sequence[str], base: str, ndim: int
    ) -> None:
        self.code = code
        self.ndim = ndim
        self.in_dtypes = tuple(in_dtypes)
        self.out_dtypes = tuple(out_dtypes)
        self.base = base
        self._made: dict[tuple[str, Any, int], KernelSource] = {}

    def _index(self, bits: int) -> tuple[str, str]:
        if bits not in (32, 64):
            raise ValueError(f"index width must be 32 or 64, got {bits}")
        return ("int", _LOOP32) if bits == 32 else ("long long", _LOOP)

    def strided(self, rank: int, bits: int) -> KernelSource:
        """The strided kernel of ``rank`` dimensions with ``bits``-bit index arithmetic
        (named ``<base>_strided`` for the node's rank and 64 bits, else
        ``<base>_strided<rank>_<bits>``)."""
        key = ("strided", rank, bits)
        if key in self._made:
            return self._made[key]
        index, loop = self._index(bits)
        nin, nout = len(self.in_dtypes), len(self.out_dtypes)
        dims = [f"s{d}" for d in range(rank)]
        head = [f"{index} n", *(f"{index} d{d}" for d in range(rank))]
        params = _params(self.in_dtypes, self.out_dtypes, dims, head, index=index)
        operands = [f"in{k}" for k in range(nin)] + [f"out{k}" for k in range(nout)]
        prologue = [f"{index} r = i;"] + [f"{index} o_{op} = 0;" for op in operands]
        for d in reversed(range(rank)):
            coord = "r" if d == 0 else f"(r % d{d})"
            adds = " ".join(f"o_{op} += c * {op}_s{d};" for op in operands)
            step = "" if d == 0 else f" r /= d{d};"
            prologue.append(f"{{ const {index} c = {coord};{step} {adds} }}")
        body = _body(
            self.code,
            self.in_dtypes,
            self.out_dtypes,
            [f"o_in{k}" for k in range(nin)],
            [f"o_out{k}" for k in range(nout)],
        )
        own = rank == self.ndim and bits == 64
        name = f"{self.base}_strided" if own else f"{self.base}_strided{rank}_{bits}"
        source = KernelSource(
            name=name,
            source=translation_unit(self.code.support, _kernel(name, params, prologue, body, loop)),
            params=tuple(params),
        )
        self._made[key] = source
        return source

    def broadcast(self, pattern: str, bits: int) -> KernelSource:
        """The broadcast kernel over ``(m, inner)`` for inputs read by ``pattern``: one
        letter per input, ``f`` (full, at ``i``), ``r`` (a row, at ``i % inner``), ``c`` (a
        column, at ``i / inner``) or ``s`` (one element); C-contiguous outputs."""
        if len(pattern) != len(self.in_dtypes) or set(pattern) - set("frcs"):
            raise ValueError(
                f"broadcast pattern {pattern!r}: expected one of f, r, c, s per input "
                f"({len(self.in_dtypes)})"
            )
        key = ("broadcast", pattern, bits)
        if key in self._made:
            return self._made[key]
        index, loop = self._index(bits)
        params = [f"{index} n", f"{index} inner"]
        params += [f"const {CUDA_TYPE[d]}* in{k}" for k, d in enumerate(self.in_dtypes)]
        params += [f"{CUDA_TYPE[d]}* out{k}" for k, d in enumerate(self.out_dtypes)]
        where = {"f": "i", "r": "i % inner", "c": "i / inner", "s": "0"}
        body = _body(
            self.code,
            self.in_dtypes,
            self.out_dtypes,
            [where[p] for p in pattern],
            ["i"] * len(self.out_dtypes),
        )
        name = f"{self.base}_bcast_{pattern}_{bits}"
        source = KernelSource(
            name=name,
            source=translation_unit(self.code.support, _kernel(name, params, [], body, loop)),
            params=tuple(params),
        )
        self._made[key] = source
        return source


def _params(
    in_dtypes: Sequence[str],
    out_dtypes: Sequence[str],
    per_operand: Sequence[str],
    head: list[str],
    index: str = "long long",
) -> list[str]:
    params = list(head)
    for k, dtype in enumerate(in_dtypes):
        params.append(f"const {CUDA_TYPE[dtype]}* in{k}")
        params += [f"{index} in{k}_{s}" for s in per_operand]
    for k, dtype in enumerate(out_dtypes):
        params.append(f"{CUDA_TYPE[dtype]}* out{k}")
        params += [f"{index} out{k}_{s}" for s in per_operand if s != "s"]
    return params


def _body(
    code: Any,
    in_dtypes: Sequence[str],
    out_dtypes: Sequence[str],
    in_index: Sequence[str],
    out_index: Sequence[str],
) -> list[str]:
    lines = []
    for k, dtype in enumerate(in_dtypes):
        ctype = CUDA_TYPE[code.in_dtypes[k]]
        lines.append(f"const {ctype} x{k} = {load(f'in{k}[{in_index[k]}]', dtype)};")
    for k, dtype in enumerate(code.out_dtypes):
        lines.append(f"{CUDA_TYPE[dtype]} y{k};")
    lines += code.statements.splitlines()
    for k, dtype in enumerate(out_dtypes):
        value = store(convert(f"y{k}", code.out_dtypes[k], dtype), dtype)
        lines.append(f"out{k}[{out_index[k]}] = {value};")
    return lines


def _kernel(
    name: str,
    params: Sequence[str],
    prologue: Sequence[str],
    body: Sequence[str],
    loop: str = _LOOP,
) -> str:
    inner = "\n".join("        " + line for line in (*prologue, *body))
    sig = ",\n    ".join(params)
    return (
        f'extern "C" __global__ void {name}(\n    {sig})\n{{\n    {loop}\n    {{\n'
        f"{inner}\n    }}\n}}\n"
    )


def elemwise_kernel(
    scalar_op: Any,
    in_types: Sequence[Any],
    out_types: Sequence[Any],
    inplace_pattern: Mapping[int, int] | None = None,
) -> ElemwiseKernel:
    """Generate the kernels of an Elemwise node.

    Parameters
    ----------
    scalar_op
        The node's scalar Op (``Elemwise.scalar_op``), a
        :class:`~opweave.scalar.composite.Composite` included: its whole inner graph becomes
        the body of one kernel.
    in_types, out_types
        The node's tensor Types (with ``dtype`` and ``shape``; all of one rank).
    inplace_pattern
        The node's ``{output: input}`` in-place pattern.

    Returns
    -------
    ElemwiseKernel

    Raises
    ------
    NotImplementedError
        If a dtype or a scalar Op has no CUDA code, the rank exceeds
        :data:`~opweave_cuda.kernels.launch.MAX_NDIM`, or the strided kernel's parameters
        (shape and strides of every operand) exceed
        :data:`~opweave_cuda.kernels.source.MAX_PARAM_BYTES`.
    """
    in_dtypes = [str(t.dtype) for t in in_types]
    out_dtypes = [str(t.dtype) for t in out_types]
    bad = sorted(set(in_dtypes + out_dtypes) - CUDA_DTYPES)
    if bad:
        raise NotImplementedError(f"no CUDA elementwise code for dtype {', '.join(bad)}")
    ranks = {len(t.shape) for t in (*in_types, *out_types)}
    if len(ranks) != 1:
        raise ValueError(f"elementwise operands of different ranks {sorted(ranks)}")
    ndim = ranks.pop()
    if ndim > MAX_NDIM:
        raise NotImplementedError(
            f"CUDA elementwise kernels take at most {MAX_NDIM} dimensions, got {ndim}"
        )
    ins = [f"x{k}" for k in range(len(in_dtypes))]
    outs = [f"y{k}" for k in range(len(out_dtypes))]
    code = with_conversions(scalar_code(scalar_op, in_dtypes, ins, outs))
    if len(code.out_dtypes) != len(out_dtypes):
        raise ValueError(f"{scalar_op} has {len(code.out_dtypes)} outputs, not {len(out_dtypes)}")
    # The name covers everything the kernels' code depends on (helpers included), so that a
    # name is never shared by two different kernels.
    base = kernel_name(
        "opw_elemwise", code.statements, *code.support, *in_dtypes, "->", *out_dtypes, str(ndim)
    )
    nin, nout = len(in_dtypes), len(out_dtypes)

    c_params = _params(in_dtypes, out_dtypes, ["s"], ["long long n"])
    c_body = _body(code, in_dtypes, out_dtypes, [f"i * in{k}_s" for k in range(nin)], ["i"] * nout)
    contiguous = KernelSource(
        name=f"{base}_contig",
        source=translation_unit(code.support, _kernel(f"{base}_contig", c_params, [], c_body)),
        params=tuple(c_params),
    )
    c32_params = _params(in_dtypes, out_dtypes, ["s"], ["int n"], index="int")
    contiguous32 = KernelSource(
        name=f"{base}_contig32",
        source=translation_unit(
            code.support, _kernel(f"{base}_contig32", c32_params, [], c_body, _LOOP32)
        ),
        params=tuple(c32_params),
    )

    variants = ElemwiseVariants(code, in_dtypes, out_dtypes, base, ndim)
    strided = variants.strided(ndim, 64)
    if strided.param_bytes() > MAX_PARAM_BYTES:
        raise NotImplementedError(
            f"a CUDA elementwise kernel with {nin + nout} operands of rank {ndim} needs "
            f"{strided.param_bytes()} bytes of parameters (at most {MAX_PARAM_BYTES})"
        )
    return ElemwiseKernel(
        contiguous, strided, in_dtypes, out_dtypes, ndim, inplace_pattern, contiguous32, variants
    )
