"""Elementwise kernels generated from a scalar graph (a fused Composite is one kernel).

Three kernels per node, all grid-stride loops over the output's elements:

* the *contiguous* one indexes every operand with one flat index; an input is read at
  ``i * s`` with ``s`` 1 (a C-contiguous input of the output's shape) or 0 (a one-element
  input, broadcast). It comes twice: with 32-bit indices, taken whenever the element count
  allows (cheaper index arithmetic, as CuPy's and libgpuarray's 32-bit indexers), and with
  64-bit ones;
* the *strided* one takes the output's shape and each operand's element strides (0 along
  broadcast dimensions) and turns the flat index into each operand's offset: any layout,
  negative strides and broadcasting included.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
from opweave_cuda.kernels.runtime import launch
from opweave_cuda.kernels.scalar import scalar_code
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

__all__ = ["ElemwiseKernel", "LaunchPlan", "elemwise_kernel"]

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
    ) -> None:
        self.contiguous = contiguous
        self.contiguous32 = contiguous32
        self.strided = strided
        self.sources: tuple[KernelSource, ...] = (contiguous, strided)
        if contiguous32 is not None:
            self.sources += (contiguous32,)
        self.in_dtypes = tuple(in_dtypes)
        self.out_dtypes = tuple(out_dtypes)
        self.ndim = ndim
        self.inplace_pattern = dict(inplace_pattern or {})

    def _check(self, arrays: Sequence[Any], dtypes: Sequence[str], what: str) -> None:
        if len(arrays) != len(dtypes):
            raise TypeError(f"elementwise kernel takes {len(dtypes)} {what}s, got {len(arrays)}")
        for k, (a, dtype) in enumerate(zip(arrays, dtypes, strict=True)):
            if _dtype_name(a.dtype) != dtype or len(a.shape) != self.ndim:
                raise TypeError(
                    f"elementwise kernel {what} {k}: expected a {self.ndim}-d {dtype} array, "
                    f"got a {len(a.shape)}-d {_dtype_name(a.dtype)} one"
                )

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
        self._check(inputs, self.in_dtypes, "input")
        self._check(outputs, self.out_dtypes, "output")
        shape = tuple(int(d) for d in outputs[0].shape)
        for k, y in enumerate(outputs):
            if tuple(int(d) for d in y.shape) != shape:
                raise ValueError(f"elementwise kernel output {k} has shape {y.shape}, not {shape}")
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

    def __call__(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Compute ``outputs`` (preallocated ``GPUArray``s of the broadcast shape; an in-place
        output is the destroyed input itself) from ``inputs`` (``GPUArray``s)."""
        planned = self.plan(inputs, outputs)
        if planned is not None:
            launch(*planned)


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
    code = scalar_code(scalar_op, in_dtypes, ins, outs)
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

    dims = [f"s{d}" for d in range(ndim)]
    s_params = _params(
        in_dtypes, out_dtypes, dims, ["long long n", *(f"long long d{d}" for d in range(ndim))]
    )
    operands = [f"in{k}" for k in range(nin)] + [f"out{k}" for k in range(nout)]
    prologue = ["long long r = i;"] + [f"long long o_{op} = 0;" for op in operands]
    for d in reversed(range(ndim)):
        coord = "r" if d == 0 else f"(r % d{d})"
        adds = " ".join(f"o_{op} += c * {op}_s{d};" for op in operands)
        step = "" if d == 0 else f" r /= d{d};"
        prologue.append(f"{{ const long long c = {coord};{step} {adds} }}")
    s_body = _body(
        code,
        in_dtypes,
        out_dtypes,
        [f"o_in{k}" for k in range(nin)],
        [f"o_out{k}" for k in range(nout)],
    )
    strided = KernelSource(
        name=f"{base}_strided",
        source=translation_unit(
            code.support, _kernel(f"{base}_strided", s_params, prologue, s_body)
        ),
        params=tuple(s_params),
    )
    if strided.param_bytes() > MAX_PARAM_BYTES:
        raise NotImplementedError(
            f"a CUDA elementwise kernel with {nin + nout} operands of rank {ndim} needs "
            f"{strided.param_bytes()} bytes of parameters (at most {MAX_PARAM_BYTES})"
        )
    return ElemwiseKernel(
        contiguous, strided, in_dtypes, out_dtypes, ndim, inplace_pattern, contiguous32
    )
