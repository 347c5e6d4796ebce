"""The :class:`Mode` class and what it is made of: the optimizer names and queries of
:data:`optdb`, the linker names, and the graph rewriters a mode's query may include.

:mod:`opweave.compile.mode` (PyTensor's module, which re-exports all of this) adds the named
modes and :func:`~opweave.compile.mode.get_mode`; the debugging modes
(:mod:`opweave.compile.debug`) subclass :class:`Mode` from here, and ``get_mode`` builds
them, so the class sits below both.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from opweave.compile.aliasing import Supervisor
from opweave.compile.rewrite_registry import optdb
from opweave.graph.features import DestroyHandler
from opweave.graph.rewriting.db import RewriteDatabaseQuery
from opweave.graph.rewriting.graph import GraphRewriter
from opweave.link.lookup import (
    LinkerNotFoundError,
    available_linkers,
    resolve_linker,
    unusable_linkers,
)
from opweave.printing import debugprint

__all__ = [
    "FOREIGN_BACKENDS",
    "LINKER_ALIASES",
    "OPTIMIZER_TAGS",
    "OPT_FAST_COMPILE",
    "OPT_FAST_RUN",
    "OPT_FAST_RUN_STABLE",
    "OPT_MERGE",
    "OPT_MINIMUM",
    "OPT_NONE",
    "OPT_O2",
    "OPT_O3",
    "OPT_STABILIZE",
    "OPT_UNSAFE",
    "AddDestroyHandler",
    "AddFeatureOptimizer",
    "Mode",
    "PrintCurrentFunctionGraph",
    "RunnableQuery",
    "linker_from_name",
    "optdb",
    "predefined_linkers",
    "predefined_optimizers",
    "register_linker",
    "register_optimizer",
]

#: Rewrite tags each named optimizer selects.
OPTIMIZER_TAGS: dict[str, tuple[str, ...]] = {
    "fast_run": ("fast_run",),
    "fast_compile": ("fast_compile",),
    "merge": ("merge",),
    "minimum_compile": ("minimum_compile",),
}


class RunnableQuery(RewriteDatabaseQuery):
    """A query of :data:`optdb` that also rewrites a graph itself, as a mode's optimizer
    does in PyTensor (``mode.optimizer.rewrite(fgraph)``).

    The predefined queries (:data:`OPT_FAST_RUN` ..., ``JAX.optimizer``) are of this
    class; ``including``/``excluding``/``requiring`` give plain queries.
    """

    def rewrite(self, fgraph: Any) -> Any:
        """Run the rewrites this query selects (from the database the installed plugins
        build) on ``fgraph``, in place."""
        return optdb.query(self).rewrite(fgraph)


def _runnable(query: RewriteDatabaseQuery) -> RunnableQuery:
    """``query`` as a :class:`RunnableQuery`."""
    return RunnableQuery(
        query.include,
        query.require,
        query.exclude,
        query.subquery,
        query.position_cutoff,
        query.extra_rewrites,
    )


OPT_NONE = RunnableQuery(include=())
#: The rewrites a graph needs to run at all (entries tagged ``minimum_compile``; the
#: standard rewrites need none).
OPT_MINIMUM = RunnableQuery(include=OPTIMIZER_TAGS["minimum_compile"])
OPT_MERGE = RunnableQuery(include=OPTIMIZER_TAGS["merge"])
OPT_FAST_RUN = RunnableQuery(include=OPTIMIZER_TAGS["fast_run"])
OPT_FAST_COMPILE = RunnableQuery(include=OPTIMIZER_TAGS["fast_compile"])

#: ``fast_run`` restricted to the rewrites tagged ``stable``.
OPT_FAST_RUN_STABLE = _runnable(OPT_FAST_RUN.requiring("stable"))
#: ``fast_run`` up to and including the ``stabilize`` phase (no ``specialize``, no
#: in-place rewrites).
OPT_STABILIZE = RunnableQuery(include=OPTIMIZER_TAGS["fast_run"], position_cutoff=1.5000001)
#: ``fast_compile`` with elementwise fusion.
OPT_O2 = _runnable(OPT_FAST_COMPILE.including("fusion"))
#: ``fast_run`` without the in-place rewrites.
OPT_O3 = _runnable(OPT_FAST_RUN.excluding("inplace"))
#: :data:`OPT_O3` with the rewrites tagged ``unsafe`` (they may change results for
#: inputs outside the domain the graph expects).
OPT_UNSAFE = _runnable(OPT_O3.including("unsafe"))
for _name, _query in (
    ("OPT_NONE", OPT_NONE),
    ("OPT_MINIMUM", OPT_MINIMUM),
    ("OPT_MERGE", OPT_MERGE),
    ("OPT_FAST_RUN", OPT_FAST_RUN),
    ("OPT_FAST_RUN_STABLE", OPT_FAST_RUN_STABLE),
    ("OPT_FAST_COMPILE", OPT_FAST_COMPILE),
    ("OPT_STABILIZE", OPT_STABILIZE),
    ("OPT_O2", OPT_O2),
    ("OPT_O3", OPT_O3),
    ("OPT_UNSAFE", OPT_UNSAFE),
):
    _query.name = _name

#: Optimizer names a :class:`Mode` accepts, and the query of :data:`optdb` each stands for
#: (PyTensor's names; ``o1`` to ``o4`` range from ``fast_compile`` to ``fast_run``).
predefined_optimizers: dict[str | None, RewriteDatabaseQuery] = {
    None: OPT_NONE,
    "None": OPT_NONE,
    "merge": OPT_MERGE,
    "minimum_compile": OPT_MINIMUM,
    "o4": OPT_FAST_RUN,
    "o3": OPT_O3,
    "o2": OPT_O2,
    "o1": OPT_FAST_COMPILE,
    "unsafe": OPT_UNSAFE,
    "fast_run": OPT_FAST_RUN,
    "fast_compile": OPT_FAST_COMPILE,
    "fast_run_stable": OPT_FAST_RUN_STABLE,
    "stabilize": OPT_STABILIZE,
}

#: PyTensor's linker names that opweave provides under another name.
LINKER_ALIASES: dict[str, str] = {"c|py": "cvm"}

#: PyTensor backends opweave does not ship (JAX is the ``jax`` extra of ``opweave``): linker
#: or mode name -> what PyTensor calls it.
FOREIGN_BACKENDS: dict[str, str] = {
    "numba": "Numba",
    "pytorch": "PyTorch",
    "mlx": "MLX",
}

_NOGC = "_nogc"

#: Linkers added with :func:`register_linker`.
_registered_linkers: dict[str, Any] = {}


def register_linker(name: str, linker: Any) -> None:
    """Make ``linker`` (a Linker instance or class) usable as ``Mode(linker=name)``.

    Raises
    ------
    ValueError
        If ``name`` is already a registered or installed linker name.
    """
    if not isinstance(name, str):
        raise TypeError(f"register_linker: the name must be a string, got {name!r}")
    if name in _registered_linkers or name in available_linkers():
        raise ValueError(f"linker name {name!r} is already taken")
    _registered_linkers[name] = linker


def register_optimizer(name: str, query: RewriteDatabaseQuery) -> None:
    """Make ``query`` (a query of :data:`optdb`) usable as ``Mode(optimizer=name)``.

    Raises
    ------
    ValueError
        If ``name`` is already an optimizer name.
    """
    if not isinstance(query, RewriteDatabaseQuery):
        raise TypeError(
            f"register_optimizer: expected a RewriteDatabaseQuery, got {type(query).__name__}"
        )
    if name in predefined_optimizers:
        raise ValueError(f"optimizer name {name!r} is already taken")
    predefined_optimizers[name] = query


def _usable_linker_names() -> str:
    unusable = unusable_linkers()
    names = sorted(n for n in available_linkers() if n not in unusable)
    names += sorted(n for n in _registered_linkers if n not in names)
    return ", ".join(names) or "none"


def _foreign_backend_error(name: str, what: str) -> LinkerNotFoundError:
    backend = FOREIGN_BACKENDS[name.lower()]
    return LinkerNotFoundError(
        f"opweave ships no {backend} backend and no installed plugin provides one, so {what} "
        f"{name!r} (a PyTensor name) is not available; available linkers: "
        f"{_usable_linker_names()}.{_fastest_equivalent()} `python -m opweave info` lists the "
        "installed backends; a new backend is one plugin distribution."
    )


def _fastest_equivalent() -> str:
    """`` The fastest installed equivalent is ...`` naming the usable linker of highest
    ``priority``, or ``""`` when none is installed."""
    unusable = unusable_linkers()
    usable = [(n, cls) for n, cls in available_linkers().items() if n not in unusable]
    if not usable:
        return ""
    name, _ = max(usable, key=lambda item: getattr(item[1], "priority", 0))
    return f" The fastest installed equivalent is mode='FAST_RUN' with linker {name!r}."


def linker_from_name(name: str, fast_compile: bool = False) -> Any:
    """Return the Linker class (or instance) a linker name stands for.

    Parameters
    ----------
    name
        An installed linker (``"py"``, ``"vm"``, ``"c"``, ``"cvm"``, ``"auto"`` ...), a
        name given to :func:`register_linker`, PyTensor's ``"c|py"``, or one of them
        followed by ``"_nogc"`` (a linker instance with ``allow_gc=False``).
    fast_compile
        For ``"auto"``: rank the linkers by how quickly they compile.

    Raises
    ------
    opweave.link.lookup.LinkerNotFoundError
        For unknown names, and for PyTensor backends opweave does not ship (``numba``,
        ``jax``, ``pytorch``, ``mlx``), naming the available linkers.
    """
    if name in _registered_linkers:
        return _registered_linkers[name]
    installed = available_linkers()
    if name in installed or name == "auto":
        return resolve_linker(name, fast_compile=fast_compile)
    base, nogc = (name[: -len(_NOGC)], True) if name.endswith(_NOGC) else (name, False)
    if base.lower() in FOREIGN_BACKENDS:
        raise _foreign_backend_error(base, "linker")
    base = LINKER_ALIASES.get(base, base)
    if base in _registered_linkers:
        linker = _registered_linkers[base]
    else:
        linker = resolve_linker(base, fast_compile=fast_compile)
    if not nogc:
        return linker
    cls = linker if isinstance(linker, type) else type(linker)
    return cls(allow_gc=False)


class _LinkerTable(Mapping[str, Any]):
    """PyTensor's ``predefined_linkers``: linker name -> a Linker instance, read from the
    installed backends and :func:`register_linker` on each access (a view; register a
    linker with :func:`register_linker`)."""

    def _names(self) -> list[str]:
        names = [n for n in available_linkers() if n not in unusable_linkers()]
        names += [n for n in _registered_linkers if n not in names]
        names += [alias for alias, target in LINKER_ALIASES.items() if target in names]
        return names

    def __getitem__(self, name: str) -> Any:
        if name not in self._names() and not (
            name.endswith(_NOGC) and name[: -len(_NOGC)] in self._names()
        ):
            raise KeyError(name)
        linker = linker_from_name(name)
        return linker() if isinstance(linker, type) else linker

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return f"predefined_linkers({self._names()})"


#: PyTensor's table of linker names (a read-only view of the installed linkers).
predefined_linkers: Mapping[str, Any] = _LinkerTable()


class AddDestroyHandler(GraphRewriter):
    """A graph rewriter that changes nothing but attaches a
    :class:`~opweave.graph.features.DestroyHandler` to the graph (PyTensor's name and
    contract), which in-place rewrites placed after it require.

    It warns when the graph has no :class:`~opweave.compile.aliasing.Supervisor`, the
    feature that keeps in-place rewrites off the function's inputs and outputs.
    """

    def add_requirements(self, fgraph: Any) -> None:
        """Attach a DestroyHandler to ``fgraph`` (when it has none)."""
        super().add_requirements(fgraph)
        if not hasattr(fgraph, "destroyers"):
            fgraph.attach_feature(DestroyHandler())

    def apply(self, fgraph: Any) -> None:
        """Warn if ``fgraph`` has no Supervisor feature."""
        if not any(isinstance(f, Supervisor) for f in fgraph.features):
            warnings.warn(
                f"{fgraph} has no Supervisor feature, which in-place rewrites need; add one "
                "with opweave.compile.aliasing.add_supervisor_to_fgraph, or exclude the "
                "in-place rewrites",
                stacklevel=3,
            )


class AddFeatureOptimizer(GraphRewriter):
    """A graph rewriter that changes nothing but attaches ``feature`` to the graph.

    Placed in a rewrite database, it attaches the feature from that point on (for example
    :class:`~opweave.graph.features.NoOutputFromInplace`, to keep later in-place rewrites
    off some outputs).

    Parameters
    ----------
    feature
        The :class:`~opweave.graph.features.Feature` to attach.
    """

    def __init__(self, feature: Any) -> None:
        self.feature = feature

    def add_requirements(self, fgraph: Any) -> None:
        """Attach the feature to ``fgraph``."""
        super().add_requirements(fgraph)
        fgraph.attach_feature(self.feature)

    def apply(self, fgraph: Any) -> None:
        """Do nothing: attaching the feature is all."""


class PrintCurrentFunctionGraph(GraphRewriter):
    """A graph rewriter that changes nothing but prints the graph (to see it at one point
    of a rewrite pipeline).

    Parameters
    ----------
    header
        Printed before the graph.
    """

    def __init__(self, header: str) -> None:
        self.header = header

    def apply(self, fgraph: Any) -> None:
        """Print the header and ``fgraph``'s outputs with ``debugprint``."""
        print(f"{self.header}:")
        debugprint(fgraph.outputs)


def _is_graph_rewriter(optimizer: Any) -> bool:
    """Whether ``optimizer`` is a graph rewriter object (it has ``rewrite``), not a query
    or a name."""
    return not isinstance(optimizer, RewriteDatabaseQuery | str) and callable(
        getattr(optimizer, "rewrite", None)
    )


def _is_optimizer_name(optimizer: Any) -> bool:
    """Whether ``optimizer`` is a key of :data:`predefined_optimizers`."""
    try:
        return optimizer in predefined_optimizers
    except TypeError:  # unhashable
        return False


class Mode:
    """A linker plus a rewrite query.

    Parameters
    ----------
    linker
        A linker name (``"py"``, ``"vm"``, ``"c"``, ``"cvm"``, ``"auto"``, PyTensor's
        ``"c|py"`` and ``*_nogc`` names, or any name a plugin adds; see
        :func:`linker_from_name`), a Linker instance, or ``None`` for ``config.linker``.
    optimizer
        A name of :data:`predefined_optimizers` (``"fast_run"``, ``"fast_compile"``,
        ``"merge"``, ``None`` or ``"None"`` for no rewrites), ``"default"``
        (``fast_run``), a :class:`~opweave.graph.rewriting.db.RewriteDatabaseQuery`, or a
        graph rewriter (an object with ``rewrite(fgraph)``, such as a
        :class:`~opweave.graph.rewriting.graph.GraphRewriter`), which then rewrites the
        function's graph instead of :data:`optdb`.
    including, excluding, requiring
        Rewrite tags added to the query.
    db
        A :class:`~opweave.graph.rewriting.db.RewriteDatabase` to query instead of
        :data:`optdb` (PyTensor's argument).
    """

    def __init__(
        self,
        linker: Any = None,
        optimizer: str | RewriteDatabaseQuery | None = "default",
        including: tuple[str, ...] = (),
        excluding: tuple[str, ...] = (),
        requiring: tuple[str, ...] = (),
        db: Any = None,
    ) -> None:
        if isinstance(optimizer, str) and optimizer == "default":
            optimizer = "fast_run"
        if not (
            isinstance(optimizer, RewriteDatabaseQuery)
            or _is_graph_rewriter(optimizer)
            or _is_optimizer_name(optimizer)
        ):
            names = ", ".join(sorted(str(k) for k in predefined_optimizers if k is not None))
            raise ValueError(
                f"unknown optimizer {optimizer!r}; expected one of {names}, None, a "
                "RewriteDatabaseQuery or a graph rewriter"
            )
        self.linker = linker
        self.optimizer = None if isinstance(optimizer, str) and optimizer == "None" else optimizer
        self._including = tuple(including)
        self._excluding = tuple(excluding)
        self._requiring = tuple(requiring)
        #: The rewrite database the mode's query selects from: :data:`optdb` (the database
        #: the installed plugins build, fresh for each compile) unless ``db`` was given.
        self.optdb = optdb if db is None else db

    def _with(self, **changes: tuple[str, ...]) -> Mode:
        new = Mode(
            self.linker,
            self.optimizer,
            self._including,
            self._excluding,
            self._requiring,
            db=None if self.optdb is optdb else self.optdb,
        )
        for key, tags in changes.items():
            setattr(new, key, getattr(new, key) + tuple(tags))
        return new

    def including(self, *tags: str) -> Mode:
        """Return a copy that also runs the rewrites tagged with any of ``tags``."""
        return self._with(_including=tags)

    def excluding(self, *tags: str) -> Mode:
        """Return a copy that skips the rewrites tagged with any of ``tags``."""
        return self._with(_excluding=tags)

    def requiring(self, *tags: str) -> Mode:
        """Return a copy that only runs rewrites carrying all of ``tags``."""
        return self._with(_requiring=tags)

    @property
    def graph_rewriter(self) -> Any:
        """The graph rewriter given as ``optimizer`` (an object with a ``rewrite(fgraph)``
        method, run as is on the function's graph), or ``None`` when the optimizer is a
        query of :data:`optdb` or a name."""
        return self.optimizer if _is_graph_rewriter(self.optimizer) else None

    @property
    def provided_optimizer(self) -> Any:
        """The mode's rewrite query, its ``including``/``excluding``/``requiring`` tags
        added (PyTensor's attribute: ``Mode(linker, mode.provided_optimizer.including(...))``
        is this mode with more rewrites); a graph rewriter given as ``optimizer`` is
        returned as is."""
        if self.graph_rewriter is not None:
            return self.graph_rewriter
        base = (
            self.optimizer
            if isinstance(self.optimizer, RewriteDatabaseQuery)
            else predefined_optimizers[self.optimizer]
        )
        return (
            base.including(*self._including).excluding(*self._excluding).requiring(*self._requiring)
        )

    @property
    def _optimizer(self) -> Any:
        """PyTensor's private name of :attr:`provided_optimizer` (its tests and some user
        code read ``mode._optimizer.exclude``)."""
        return self.provided_optimizer

    def rewrite_query(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
        """Return ``(include, exclude, require)`` tags, or ``None`` for no rewriting of
        :data:`optdb` (also when the optimizer is a graph rewriter: see
        :attr:`graph_rewriter`)."""
        if self.graph_rewriter is not None:
            return None
        if self.optimizer is None and not self._including:
            return None
        query = (
            self.optimizer
            if isinstance(self.optimizer, RewriteDatabaseQuery)
            else predefined_optimizers[self.optimizer]
        )
        return (
            tuple(sorted(query.include)) + self._including,
            tuple(sorted(query.exclude)) + self._excluding,
            tuple(sorted(query.require)) + self._requiring,
        )

    def position_cutoff(self) -> float:
        """The position in :data:`optdb` after which no rewrite runs (``inf``: none; see
        :data:`OPT_STABILIZE`)."""
        query = self.optimizer
        if isinstance(query, str) or query is None:
            query = predefined_optimizers.get(query)
        return float(getattr(query, "position_cutoff", math.inf))

    def __repr__(self) -> str:
        return (
            f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r}, "
            f"including={self._including}, excluding={self._excluding})"
        )

    def __str__(self) -> str:
        optimizer = self.provided_optimizer if self.optimizer is not None else None
        return f"{type(self).__name__}(linker={self.linker}, optimizer={optimizer})"

    def register(self, *optimizations: tuple[Any, float]) -> Mode:
        """Return a copy that also runs each ``(graph_rewriter, position)`` pair at that
        position of the rewrite sequence (PyTensor's contract; e.g. an
        :class:`AddFeatureOptimizer` at 49.9, before the in-place rewrites).

        Raises
        ------
        TypeError
            When the mode's optimizer is a graph rewriter (not a query of :data:`optdb`).
        """
        if self.graph_rewriter is not None:
            raise TypeError(
                "Mode.register adds rewrites to a query of optdb; this mode's optimizer is "
                f"the graph rewriter {self.graph_rewriter!r}"
            )
        base = (
            self.optimizer
            if isinstance(self.optimizer, RewriteDatabaseQuery)
            else predefined_optimizers[self.optimizer]
        )
        new = self._with()
        new.optimizer = base.register(*optimizations)
        return new

    def extra_rewrites(self) -> list[tuple[Any, float]]:
        """The ``(rewriter, position)`` pairs added with :meth:`register`."""
        query = self.optimizer
        return list(getattr(query, "extra_rewrites", ())) if not isinstance(query, str) else []

    def uses_custom_db(self) -> bool:
        """Whether the mode queries a database given as ``db`` rather than :data:`optdb`."""
        return self.optdb is not optdb
