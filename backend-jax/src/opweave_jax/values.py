"""Helpers the lowerings share: telling values known while tracing from traced ones.

While the ``jax`` linker traces a graph, a value is either *traced* (it depends on the
function's input values: a :class:`jax.core.Tracer`) or *static* (a constant, or what
depends only on shapes, such as ``x.shape``): NumPy values and concrete JAX arrays.
Shapes, lengths and slice bounds must be static, as XLA compiles for fixed shapes.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave_jax.lowerings.sparse_matrix import SparseMatrix

__all__ = ["as_dtype", "generator_of", "is_static", "key_data_of", "static_int", "static_ints"]


def is_static(value: Any) -> bool:
    """Whether ``value`` is known while tracing (not a JAX tracer; for a sparse matrix,
    none of its arrays)."""
    if isinstance(value, SparseMatrix):
        return value.is_static()
    return not isinstance(value, jax.core.Tracer)


def static_int(value: Any, what: str) -> int:
    """``value`` as a Python ``int``.

    Raises
    ------
    NotImplementedError
        When ``value`` depends on the function's input values (XLA needs it to compile).
    """
    if not is_static(value):
        raise NotImplementedError(
            f"jax linker: {what} must be known when the graph is compiled (a constant, or "
            "computed from shapes only), but it depends on the input values; XLA compiles "
            "for fixed shapes"
        )
    return int(np.asarray(value))


def static_ints(values: Any, what: str) -> tuple[int, ...]:
    """``values`` (a sequence or a 1-d array of integers) as a tuple of ``int``."""
    if not is_static(values):
        raise NotImplementedError(
            f"jax linker: {what} must be known when the graph is compiled (a constant, or "
            "computed from shapes only), but it depends on the input values; XLA compiles "
            "for fixed shapes"
        )
    return tuple(int(v) for v in np.asarray(values).reshape(-1))


def as_dtype(value: Any, dtype: str | np.dtype[Any]) -> Any:
    """``value`` as a JAX array of ``dtype`` (unchanged when it has it already)."""
    wanted = np.dtype(dtype)
    if isinstance(value, jax.Array) and value.dtype == wanted:
        return value
    return jnp.asarray(value).astype(wanted)


#: The mask of a 32-bit word.
_WORD = 0xFFFFFFFF

#: The increment of the PCG64 generators that carry a JAX key (any odd number).
_KEY_INC = 0x9E3779B97F4A7C15F39CC0605CEDC835


def key_data_of(generator: np.random.Generator) -> np.ndarray:
    """The JAX key (``threefry2x32`` key data: two ``uint32``) a NumPy generator stands for.

    For a PCG64 generator (``numpy.random.default_rng``), the low 64 bits of its state, as
    PyTensor's JAX backend takes them; for another bit generator, two words drawn from a
    copy of it (the generator itself does not advance). :func:`generator_of` inverts it.
    """
    bits = generator.bit_generator
    state = bits.state
    if state.get("bit_generator") in ("PCG64", "PCG64DXSM"):
        low = int(state["state"]["state"]) & 0xFFFFFFFFFFFFFFFF
    else:
        clone = type(bits)()
        clone.state = state
        high, low_word = (int(v) for v in clone.random_raw(2))
        low = ((high & _WORD) << 32) | (low_word & _WORD)
    return np.array([(low >> 32) & _WORD, low & _WORD], dtype=np.uint32)


def generator_of(key_data: Any) -> np.random.Generator:
    """A PCG64 ``numpy.random.Generator`` standing for the JAX key ``key_data`` (two
    ``uint32``): :func:`key_data_of` gives the key back, and NumPy code can draw from it."""
    words = np.asarray(key_data, dtype=np.uint32).reshape(-1)
    bits = np.random.PCG64(0)
    bits.state = {
        "bit_generator": "PCG64",
        "state": {"state": (int(words[0]) << 32) | int(words[1]), "inc": _KEY_INC},
        "has_uint32": 0,
        "uinteger": 0,
    }
    return np.random.Generator(bits)
