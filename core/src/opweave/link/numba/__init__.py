"""PyTensor's Numba backend names (``pytensor.link.numba``), for code that imports them.

opweave does not ship a Numba backend: :class:`NumbaLinker` exists so that such code
imports (``isinstance(linker, NumbaLinker)`` is simply false), and making one raises an
error that says which backends to use instead.
"""

from __future__ import annotations

from typing import Any

from opweave.link._absent import FOREIGN_BACKEND_ADVICE

__all__ = ["NumbaLinker"]


class NumbaLinker:
    """PyTensor's Numba linker: opweave has no Numba backend.

    Raises
    ------
    NotImplementedError
        Always, when made: the message names the backends to use instead.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "NumbaLinker: opweave has no Numba backend (pytensor.link.numba). "
            + FOREIGN_BACKEND_ADVICE
        )
