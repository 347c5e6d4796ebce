"""Registering node rewriters into the standard phases, and constant folding, under
PyTensor's names.

Each ``register_*`` function registers a rewrite into one phase of
:data:`opweave.compile.mode.optdb`, so that every compilation (``FAST_RUN``) and
:func:`opweave.graph.rewrite_graph` made after it runs the rewrite. The rewrite is
registered on the current plugin manager (see :mod:`opweave.compile.rewrite_registry`).
It is used as a decorator, bare or with tags::

    @register_canonicalize
    @node_rewriter([Elemwise])
    def local_my_identity(fgraph, node): ...

    @register_specialize("my_tag", name="my_rewrite")
    @node_rewriter([Elemwise])
    def local_other(fgraph, node): ...

=========================== ============== =========================================
function                    phase          tags added
=========================== ============== =========================================
``register_canonicalize``   canonicalize   fast_run, fast_compile
``register_stabilize``      stabilize      fast_run
``register_specialize``     specialize     fast_run, fast_compile
``register_useless``        canonicalize   fast_run, useless
``register_infer_shape``    canonicalize   fast_run, infer_shape
``register_uncanonicalize`` specialize     fast_run, uncanonicalize
=========================== ============== =========================================

The named node rewriters of :mod:`~opweave.tensor.rewriting.simplify`
(``local_useless_alloc``, ``local_remove_useless_assert``, ...) and its helpers are
available here too, under PyTensor's names.

The phases run in ``FAST_RUN`` (the ``fast_run`` tag); ``fast_compile`` only marks the
entry, as PyTensor does. opweave has no ``useless`` or ``uncanonicalize`` phase: those
rewrites run in ``canonicalize`` and ``specialize``, tagged with the phase name
PyTensor uses, so that ``Mode.excluding("useless")`` still turns them off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from opweave.compile.rewrite_registry import optdb
from opweave.graph.rewriting.db import RewriteDatabase
from opweave.graph.rewriting.graph import GraphRewriter
from opweave.graph.rewriting.node import NodeRewriter
from opweave.tensor.rewriting.constant_folding import (
    constant_folding,
    topo_constant_folding,
    topo_unconditional_constant_folding,
    unconditional_constant_folding,
)
from opweave.tensor.rewriting.simplify import *  # noqa: F403 - PyTensor's names, here too
from opweave.tensor.rewriting.simplify import __all__ as _simplify_all

__all__ = [
    "constant_folding",
    "register_canonicalize",
    "register_infer_shape",
    "register_specialize",
    "register_stabilize",
    "register_uncanonicalize",
    "register_useless",
    "topo_constant_folding",
    "topo_unconditional_constant_folding",
    "unconditional_constant_folding",
    # the named rewrites and helpers (``register_simplify`` is the plugin hook's own)
    *(name for name in _simplify_all if name != "register_simplify"),
]

R = TypeVar("R", NodeRewriter, GraphRewriter, RewriteDatabase)


def _rewrite_name(rewriter: Any, given: str | None) -> str:
    if given is not None:
        return given
    name = getattr(rewriter, "__name__", None) or getattr(rewriter, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(
            f"cannot tell the name of {rewriter!r}; pass name='...' to the register function"
        )
    return name


def _register_in(
    phase: str,
    phase_tags: tuple[str, ...],
    rewriter: Any,
    tags: tuple[str, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Register ``rewriter`` into ``phase`` of :data:`optdb`, or return a decorator when
    ``rewriter`` is a string (the first tag)."""
    if isinstance(rewriter, str):
        first = rewriter

        def register(inner: R) -> R:
            return _register_in(phase, phase_tags, inner, (first, *tags), kwargs)

        return register
    if not isinstance(rewriter, (NodeRewriter, GraphRewriter, RewriteDatabase)):
        raise TypeError(
            f"register into {phase!r}: expected a NodeRewriter, GraphRewriter or "
            f"RewriteDatabase (e.g. made with @node_rewriter), got {type(rewriter).__name__}"
        )
    options = dict(kwargs)
    name = _rewrite_name(rewriter, options.pop("name", None))
    optdb[phase].register(name, rewriter, *phase_tags, *tags, **options)
    return rewriter


def register_canonicalize(
    node_rewriter: R | str, *tags: str, **kwargs: Any
) -> R | Callable[[R], R]:
    """Register ``node_rewriter`` into the ``canonicalize`` phase; return it.

    Parameters
    ----------
    node_rewriter
        The rewriter; or a tag, in which case a decorator taking the rewriter is
        returned.
    tags
        Further tags of the entry.
    kwargs
        ``name`` (default: the rewriter's ``__name__``), and the options of
        :meth:`~opweave.graph.rewriting.db.RewriteDatabase.register`
        (``use_db_name_as_tag``, ``position``, ...).

    Raises
    ------
    TypeError
        If ``node_rewriter`` is not a rewriter.
    ValueError
        If the name is already registered in the phase.
    """
    return _register_in("canonicalize", ("fast_run", "fast_compile"), node_rewriter, tags, kwargs)


def register_stabilize(node_rewriter: R | str, *tags: str, **kwargs: Any) -> R | Callable[[R], R]:
    """Register ``node_rewriter`` into the ``stabilize`` phase; return it (see
    :func:`register_canonicalize` for the parameters)."""
    return _register_in("stabilize", ("fast_run",), node_rewriter, tags, kwargs)


def register_specialize(node_rewriter: R | str, *tags: str, **kwargs: Any) -> R | Callable[[R], R]:
    """Register ``node_rewriter`` into the ``specialize`` phase; return it (see
    :func:`register_canonicalize` for the parameters)."""
    return _register_in("specialize", ("fast_run", "fast_compile"), node_rewriter, tags, kwargs)


def register_useless(node_rewriter: R | str, *tags: str, **kwargs: Any) -> R | Callable[[R], R]:
    """Register a rewrite that only removes nodes into ``canonicalize``, tagged
    ``useless``; return it (see :func:`register_canonicalize` for the parameters)."""
    return _register_in("canonicalize", ("fast_run", "useless"), node_rewriter, tags, kwargs)


def register_infer_shape(node_rewriter: R | str, *tags: str, **kwargs: Any) -> R | Callable[[R], R]:
    """Register a shape rewrite into ``canonicalize``, tagged ``infer_shape``; return it
    (see :func:`register_canonicalize` for the parameters)."""
    return _register_in("canonicalize", ("fast_run", "infer_shape"), node_rewriter, tags, kwargs)


def register_uncanonicalize(
    node_rewriter: R | str, *tags: str, **kwargs: Any
) -> R | Callable[[R], R]:
    """Register a rewrite that leaves the canonical form into ``specialize``, tagged
    ``uncanonicalize``; return it (see :func:`register_canonicalize` for the
    parameters)."""
    return _register_in("specialize", ("fast_run", "uncanonicalize"), node_rewriter, tags, kwargs)
