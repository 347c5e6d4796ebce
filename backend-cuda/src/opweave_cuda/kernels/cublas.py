"""cuBLAS matrix products, bound with cffi in ABI mode (no compiler, no pycuda import).

cuBLAS is column-major and opweave's arrays are row-major, so a row-major product
``C = A @ B`` is computed as the column-major ``C^T = B^T @ A^T``: a row-major matrix's buffer
*is* its transpose in column-major order. :func:`cublas_plan` works out the operations and
leading dimensions from the operands' strides (a pure function).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "LIBRARY_NAMES",
    "Cublas",
    "col_major_ld",
    "cublas_plan",
    "get_cublas",
    "row_major_ld",
    "wheel_library_paths",
]

#: Names tried, in order, when loading cuBLAS (through the loader's search path).
LIBRARY_NAMES: tuple[str, ...] = (
    "libcublas.so",
    "libcublas.so.13",
    "libcublas.so.12",
    "libcublas.so.11",
    "cublas64_13.dll",
    "cublas64_12.dll",
    "cublas64_11.dll",
)


def wheel_library_paths() -> tuple[str, ...]:
    """cuBLAS libraries of the ``nvidia-cublas-cu*`` wheels (what PyTorch and CuPy install),
    which the dynamic loader does not search: ``site-packages/nvidia/cublas/lib``.

    Nothing is imported: the directories come from the ``nvidia`` namespace package's path.
    """
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return ()
    if spec is None or spec.submodule_search_locations is None:
        return ()
    found: list[str] = []
    for root in spec.submodule_search_locations:
        lib = Path(root) / "cublas" / "lib"
        if lib.is_dir():
            found += sorted(
                (str(p) for p in lib.glob("libcublas.so.*") if "Lt" not in p.name), reverse=True
            )
    return tuple(found)


_CDEF = """
typedef void* cublasHandle_t;
int cublasCreate_v2(cublasHandle_t* handle);
int cublasDestroy_v2(cublasHandle_t handle);
int cublasSgemm_v2(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
                   const float* alpha, const void* A, int lda, const void* B, int ldb,
                   const float* beta, void* C, int ldc);
int cublasDgemm_v2(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
                   const double* alpha, const void* A, int lda, const void* B, int ldb,
                   const double* beta, void* C, int ldc);
"""
_OP = {"N": 0, "T": 1}
_INT_MAX = 2**31 - 1

#: ``(transa, transb, m, n, k, first, lda, second, ldb, ldc)``: the arguments of a cuBLAS
#: column-major gemm, ``first``/``second`` naming the operand (``"a"`` or ``"b"``) passed.
CublasPlan = tuple[str, str, int, int, int, str, int, str, int, int]


def row_major_ld(shape: Sequence[int], strides: Sequence[int]) -> int | None:
    """The leading dimension of a 2-d operand (element ``strides``) laid out row-major
    with unit column stride, or ``None``."""
    rows, cols = shape
    s0, s1 = strides
    if cols != 1 and s1 != 1:
        return None
    ld = s0 if rows > 1 else max(1, cols)
    return ld if ld >= max(1, cols) else None


def col_major_ld(shape: Sequence[int], strides: Sequence[int]) -> int | None:
    """The leading dimension of a 2-d operand laid out column-major, or ``None``."""
    return row_major_ld((shape[1], shape[0]), (strides[1], strides[0]))


def cublas_plan(
    a: tuple[Sequence[int], Sequence[int]],
    b: tuple[Sequence[int], Sequence[int]],
    c: tuple[Sequence[int], Sequence[int]],
) -> CublasPlan | None:
    """How cuBLAS computes ``c = a @ b`` for 2-d operands given as ``(shape, element
    strides)``, or ``None`` when a layout does not suit it (the caller then uses its own
    kernel): ``c`` must be row-major, ``a`` and ``b`` row- or column-major."""
    (m, k), (_, n) = a[0], b[0]
    ldc = row_major_ld(*c)
    if ldc is None or max(m, n, k, ldc) > _INT_MAX:
        return None
    layouts = []
    for operand in (b, a):
        ld = row_major_ld(*operand)
        if ld is not None:
            layouts.append(("N", ld))
            continue
        ld = col_major_ld(*operand)
        if ld is None:
            return None
        layouts.append(("T", ld))
    (op_b, ldb), (op_a, lda) = layouts
    if max(lda, ldb) > _INT_MAX:
        return None
    return (op_b, op_a, n, m, k, "b", ldb, "a", lda, ldc)


class Cublas:
    """A loaded cuBLAS library (``available`` is false when none loads).

    Parameters
    ----------
    names
        Library names or paths tried in order (default: :data:`LIBRARY_NAMES`, then
        :func:`wheel_library_paths`).

    Notes
    -----
    The handle is created on first use, in the CUDA context current then (the device's
    primary context, see :func:`~opweave_cuda.availability.import_gpuarray`), and keeps
    cuBLAS's default: the legacy default stream, on which every kernel of this backend is
    launched and every copy is made, so no synchronisation is needed between them. It is
    never destroyed (it lives as long as the process and its context). When it cannot be
    created (a cuBLAS newer than the driver, no context...), :meth:`usable` is false and the
    matrix products use the fallback kernel.
    """

    def __init__(self, names: Sequence[str] | None = None) -> None:
        import cffi

        self.ffi = cffi.FFI()
        self.ffi.cdef(_CDEF)
        self.lib: Any = None
        self.name: str | None = None
        if names is None:
            names = (*LIBRARY_NAMES, *wheel_library_paths())
        for name in names:
            try:
                self.lib = self.ffi.dlopen(name)
            except OSError:
                continue
            self.name = name
            break
        self._handle: Any = None
        #: Why the handle could not be created (``None``: not tried yet, or created).
        self.problem: str | None = None

    @property
    def available(self) -> bool:
        """Whether the library loaded."""
        return self.lib is not None

    def handle(self) -> Any:
        """The cuBLAS handle (created once).

        Raises
        ------
        RuntimeError
            If ``cublasCreate`` fails (the status is in the message and in :attr:`problem`).
        """
        if self._handle is None:
            if self.problem is not None:
                raise RuntimeError(self.problem)
            ptr = self.ffi.new("cublasHandle_t*")
            status = self.lib.cublasCreate_v2(ptr)
            if status != 0:
                self.problem = f"cublasCreate ({self.name}) failed with status {status}"
                raise RuntimeError(self.problem)
            self._handle = ptr[0]
        return self._handle

    def usable(self) -> bool:
        """Whether a handle exists or can be created now (tried once)."""
        if not self.available:
            return False
        try:
            self.handle()
        except RuntimeError:
            return False
        return True

    def gemm(self, dtype: str, plan: CublasPlan, pointers: dict[str, int], c_ptr: int) -> None:
        """Run a planned product on device addresses (``pointers`` maps ``"a"``/``"b"``)."""
        transa, transb, m, n, k, first, lda, second, ldb, ldc = plan
        ctype, fn = {
            "float32": ("float*", self.lib.cublasSgemm_v2),
            "float64": ("double*", self.lib.cublasDgemm_v2),
        }[dtype]
        alpha, beta = self.ffi.new(ctype, 1.0), self.ffi.new(ctype, 0.0)
        status = fn(
            self.handle(),
            _OP[transa],
            _OP[transb],
            m,
            n,
            k,
            alpha,
            self.ffi.cast("void*", pointers[first]),
            lda,
            self.ffi.cast("void*", pointers[second]),
            ldb,
            beta,
            self.ffi.cast("void*", c_ptr),
            ldc,
        )
        if status != 0:
            raise RuntimeError(f"cuBLAS gemm failed with status {status}")


@functools.lru_cache(maxsize=1)
def get_cublas() -> Cublas | None:
    """The process's cuBLAS, or ``None`` when it does not load."""
    lib = Cublas()
    return lib if lib.available else None
