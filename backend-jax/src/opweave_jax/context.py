"""State of one trace of a graph: the checks whose outcome is known only at run time.

A :class:`~opweave.raise_op.CheckAndRaise` whose condition depends on the function's
input values cannot raise while JAX traces the graph: its lowering records the condition
here (:func:`defer_check`), the traced function returns it next to the outputs, and the
linker raises the Op's exception on the host after the call when it is false.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["DeferredCheck", "defer_check", "tracing"]


class DeferredCheck:
    """A condition to test after the call, and the exception to raise when it is false.

    Parameters
    ----------
    exc_type
        The exception class.
    msg
        Its message.
    warn
        Whether ``jax_funcify``'s functions warn when they skip it under a JAX
        transformation (a graph's own ``CheckAndRaise``), or skip it silently (the bounds
        of indices, which PyTensor's JAX backend never checks).
    """

    __slots__ = ("exc_type", "msg", "warn")

    def __init__(self, exc_type: type[Exception], msg: str, warn: bool = True) -> None:
        self.exc_type = exc_type
        self.msg = msg
        self.warn = warn


#: The conditions of the trace under way: ``{key: (condition, check)}``.
_CHECKS: ContextVar[dict[str, tuple[Any, DeferredCheck]] | None] = ContextVar(
    "opweave_jax_checks", default=None
)


@contextmanager
def tracing() -> Iterator[dict[str, tuple[Any, DeferredCheck]]]:
    """Collect the deferred checks of one trace (the dictionary yielded)."""
    found: dict[str, tuple[Any, DeferredCheck]] = {}
    token = _CHECKS.set(found)
    try:
        yield found
    finally:
        _CHECKS.reset(token)


def defer_check(condition: Any, exc_type: type[Exception], msg: str, *, warn: bool = True) -> None:
    """Test ``condition`` (a traced boolean) after the call; raise ``exc_type(msg)`` if false
    (``warn``: see :class:`DeferredCheck`).

    Raises
    ------
    RuntimeError
        Outside a trace of the ``jax`` linker.
    """
    found = _CHECKS.get()
    if found is None:
        raise RuntimeError("defer_check is only available while the jax linker traces a graph")
    found[f"check{len(found):06d}"] = (condition, DeferredCheck(exc_type, msg, warn))
