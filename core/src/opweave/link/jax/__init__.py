"""PyTensor's JAX backend names (``pytensor.link.jax``), for code that imports them.

opweave's JAX backend is the separate distribution ``opweave-jax``. Without it these names
exist so that such code imports (and ``isinstance(linker, JAXLinker)`` is simply false),
but making a :class:`JAXLinker` raises an error that says what to install; so does calling
:func:`~opweave.link.jax.dispatch.jax_funcify` on an object with no registered conversion.
"""

from __future__ import annotations

from typing import Any

from opweave.link._absent import FOREIGN_BACKEND_ADVICE, absent_distribution

__all__ = ["JAXLinker", "jax_backend_missing"]


def jax_backend_missing(what: str) -> ModuleNotFoundError:
    """The error for using ``what`` of the JAX backend where it is not installed.

    Parameters
    ----------
    what
        What was used (completes "... needs the module ...").

    Returns
    -------
    ModuleNotFoundError
        Naming the ``opweave-jax`` distribution and the installed alternatives.
    """
    error = absent_distribution("opweave_jax", "opweave-jax", what)
    return ModuleNotFoundError(f"{error} {FOREIGN_BACKEND_ADVICE}", name="opweave_jax")


class JAXLinker:
    """PyTensor's JAX linker: its backend is not installed here.

    Raises
    ------
    ModuleNotFoundError
        Always, when made: it names the distribution to install.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise jax_backend_missing("JAXLinker (compiling with JAX)")
