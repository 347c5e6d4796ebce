"""What this backend puts into Dask graphs, pickled so that loading it without
opweave-dask says what to install.

A Dask graph built by the ``dask`` linker holds this package's callables (chunk kernels,
reduction steps, index checks). They pickle as a call of the core's
:func:`opweave.link._absent.rebuild` naming this distribution: a process that unpickles
the graph (a distributed worker, a later session loading a saved graph or a shared
variable's lazy value) without opweave-dask gets ``pip install opweave-dask`` in its
error instead of a bare "No module named 'opweave_dask'".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from opweave.link._absent import rebuild

__all__ = ["DISTRIBUTION", "Portable", "reduce_through_core"]

#: The distribution providing this package.
DISTRIBUTION = "opweave-dask"


def reduce_through_core(cls: type, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """The ``__reduce__`` value rebuilding ``cls(*args)`` through the core's
    :func:`~opweave.link._absent.rebuild` (``args`` must hold no object of this package)."""
    return rebuild, (DISTRIBUTION, cls.__module__, cls.__qualname__, args)


class Portable:
    """A module-level function of this package with keyword arguments bound, as
    :func:`functools.partial` binds them, that pickles through the core.

    Parameters
    ----------
    func
        A function defined at the top level of one of this package's modules.
    **keywords
        Keyword arguments given to every call (a call's own keywords win).
    """

    __slots__ = ("func", "keywords")

    def __init__(self, func: Callable[..., Any], /, **keywords: Any) -> None:
        self.func = func
        self.keywords = keywords

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **{**self.keywords, **kwargs})

    @classmethod
    def named(cls, module: str, qualname: str, keywords: dict[str, Any]) -> Portable:
        """The Portable of ``module.qualname`` (what unpickling calls)."""
        return cls(getattr(importlib.import_module(module), qualname), **keywords)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        func = self.func
        return rebuild, (
            DISTRIBUTION,
            __name__,
            "Portable.named",
            (func.__module__, func.__qualname__, self.keywords),
        )

    def __dask_tokenize__(self) -> tuple[Any, ...]:
        return (self.func.__module__, self.func.__qualname__, sorted(self.keywords.items()))

    def __repr__(self) -> str:
        bound = ", ".join(f"{k}={v!r}" for k, v in self.keywords.items())
        return f"Portable({self.func.__qualname__}{', ' if bound else ''}{bound})"
