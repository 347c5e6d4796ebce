"""Digests of sparse matrices (PyTensor's ``pytensor.sparse.utils`` names)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

__all__ = ["hash_from_sparse"]


def _digest(part: Any) -> str:
    raw = part.encode() if isinstance(part, str) else np.ascontiguousarray(part).tobytes()
    return f"m{hashlib.sha256(raw).hexdigest()}"


def hash_from_sparse(data: Any) -> str:
    """A hex digest of a SciPy CSR or CSC matrix: its stored values, indices, index
    pointers, shape, dtype and format.

    Matrices with the same buffers but another shape, dtype or format get different
    digests; a view and its copy get the same one. The value is PyTensor's: a SHA-256
    digest (prefixed ``"m"``) of the parts' digests.
    """
    parts = (data.data, data.indices, data.indptr, str(data.shape), str(data.dtype), data.format)
    return _digest("".join(_digest(part) for part in parts))
