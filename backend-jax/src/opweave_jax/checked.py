"""A graph's deferred checks summed up in one integer the call reads back.

The :class:`~opweave_jax.program.GraphProgram` returns the condition of each deferred check
(:mod:`opweave_jax.context`: a ``CheckAndRaise`` on the values, the bounds of indices
computed from them). Reading each one back to the host costs a transfer per check and per
call (about 10 µs each on a CPU, so 100 µs for a graph with ten checks). The function the
linker jits is :class:`CheckedProgram`: it returns, next to the outputs, one integer that is
``-1`` when every condition holds and otherwise says which check failed first (in the
graph's order) in which trace; the call reads that one integer, and raises the check's
exception when it is not ``-1``.
"""

from __future__ import annotations

import threading
from typing import Any

import jax.numpy as jnp

from opweave_jax.context import DeferredCheck

__all__ = ["CheckedProgram"]

#: How many checks one trace may number (the code is ``trace * _SPAN + check``).
_SPAN = 1 << 24


class CheckedProgram:
    """``program`` returning ``(outputs, code)``: ``code`` is ``None`` when the trace has no
    deferred check, else a traced integer (``-1``: all passed).

    Parameters
    ----------
    program
        The :class:`~opweave_jax.program.GraphProgram`.
    """

    def __init__(self, program: Any) -> None:
        self.program = program
        #: The deferred checks of each trace, in the graph's order.
        self._traces: list[list[DeferredCheck]] = []
        self._lock = threading.Lock()

    def __call__(self, *args: Any) -> tuple[list[Any], Any]:
        outputs, conditions = self.program(*args)
        if not conditions:
            return outputs, None
        keys = sorted(conditions)  # the keys number the checks in the graph's order
        checks = [self.program.checks[key] for key in keys]
        if len(checks) >= _SPAN:
            raise ValueError(f"jax linker: {len(checks)} run-time checks in one graph")
        with self._lock:
            trace = len(self._traces)
            self._traces.append(checks)
        passed = jnp.stack([jnp.all(conditions[key]) for key in keys])
        first = jnp.argmin(passed.astype(jnp.int8))
        code = jnp.where(jnp.all(passed), -1, trace * _SPAN + first)
        return outputs, code

    def raise_failed(self, code: Any) -> None:
        """Raise the exception of the check ``code`` names; nothing for ``-1``."""
        value = int(code)
        if value < 0:
            return
        trace, index = divmod(value, _SPAN)
        check = self._traces[trace][index]
        raise check.exc_type(check.msg)
