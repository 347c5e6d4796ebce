"""``optdb``: the rewrite database under PyTensor's name.

opweave keeps no global rewrite database: every compilation builds a fresh one with
:func:`~opweave.graph.rewriting.build_rewrite_database`, from the standard phases and the
``opweave_rewrites(db)`` hook of every plugin. :data:`optdb` presents that database the
way PyTensor's ``pytensor.compile.mode.optdb`` is used:

* reading (``"canonicalize" in optdb``, ``optdb.query(...)``, ``list(optdb)``,
  ``optdb.tags(name)``) answers from the database the current plugin manager builds;
* registering (``optdb.register(name, rewriter, *tags, position=...)``, or into a phase:
  ``optdb["canonicalize"].register(name, rewriter, "fast_run")``) checks the entry against
  that database, then adds a small plugin to the current plugin manager whose
  ``opweave_rewrites`` hook registers it into every database built from then on, exactly
  as a plugin's own rewrites are registered. That plugin is attributed to the module
  holding the rewrite's code, so that the key under which rewritten graphs are kept
  (:mod:`opweave.compile.rewrite_cache`) changes when that code does.

:mod:`opweave.tensor.rewriting.basic` has PyTensor's decorators registering into the
phases (``register_canonicalize``, ``register_stabilize``, ``register_specialize``, ...).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from opweave.graph.rewriting.db import RewriteDatabase, build_rewrite_database
from opweave.graph.rewriting.graph import GraphRewriter
from opweave.plugins.hookspecs import hookimpl
from opweave.plugins.registration import register_plugin_object

__all__ = ["OptimizationDatabase", "optdb"]


class RewriteEntryPlugin:
    """A plugin registering one rewrite into every rewrite database (after the others).

    Parameters
    ----------
    phase
        The phase to register into (``None``: the top level).
    name, rewriter, tags, options
        The arguments of :meth:`~opweave.graph.rewriting.db.RewriteDatabase.register`.
    """

    def __init__(
        self,
        phase: str | None,
        name: str,
        rewriter: Any,
        tags: tuple[str, ...],
        options: dict[str, Any],
    ) -> None:
        self.phase = phase
        self.name = name
        self.rewriter = rewriter
        self.tags = tags
        self.options = options

    def register_into(self, db: RewriteDatabase) -> None:
        """Register the entry into ``db`` (into its phase, when one is named)."""
        target = db if self.phase is None else db[self.phase]
        target.register(self.name, self.rewriter, *self.tags, **self.options)

    @hookimpl(trylast=True)
    def opweave_rewrites(self, db: RewriteDatabase) -> None:
        """Register the entry into ``db``."""
        self.register_into(db)


def _code_module(rewriter: Any, depth: int = 0) -> str | None:
    """The module holding the code of ``rewriter`` when it is not opweave's own: the
    module of its function (``@node_rewriter``, ``@graph_rewriter``), of its class, or of
    a rewriter it runs (a walk or sequence of them); ``None`` when all are opweave's."""
    candidates = [getattr(getattr(rewriter, "fn", None), "__module__", None)]
    candidates.append(type(rewriter).__module__)
    for found in candidates:
        if isinstance(found, str) and found.split(".")[0] != "opweave":
            return found
    if depth < 4:
        for attr in ("node_rewriters", "graph_rewriters", "rewriters"):
            for inner in getattr(rewriter, attr, None) or ():
                found = _code_module(inner, depth + 1)
                if found is not None:
                    return found
    return None


def _entry_plugin(
    phase: str | None, name: str, rewriter: Any, tags: tuple[str, ...], options: dict[str, Any]
) -> RewriteEntryPlugin:
    """A :class:`RewriteEntryPlugin` whose class is attributed to the module holding the
    rewriter's code, so that the files of that code are part of the key under which
    rewritten graphs are kept (:mod:`opweave.compile.rewrite_cache` stamps the code of
    every plugin's package): editing the rewrite changes the key."""
    module = _code_module(rewriter)
    cls = RewriteEntryPlugin
    if module is not None:
        # type() with three arguments makes a subclass of its bases; its stub says ``type``.
        cls = cast(
            "type[RewriteEntryPlugin]",
            type("RewriteEntryPlugin", (RewriteEntryPlugin,), {"__module__": module}),
        )
    return cls(phase, name, rewriter, tags, options)


class _Phase:
    """One phase of :data:`optdb`: reads answer from the built database, registrations
    go through :meth:`OptimizationDatabase.register`."""

    def __init__(self, parent: OptimizationDatabase, name: str) -> None:
        self._parent = parent
        self._name = name

    def register(self, name: str, rewriter: Any, *tags: str, **options: Any) -> None:
        """Register ``rewriter`` into this phase of every database built from now on."""
        self._parent._add(_entry_plugin(self._name, name, rewriter, tags, options))

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self._parent.database()[self._name], attr)

    def __contains__(self, name: object) -> bool:
        return name in self._parent.database()[self._name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._parent.database()[self._name])

    def __len__(self) -> int:
        return len(self._parent.database()[self._name])

    def __getitem__(self, name: str) -> Any:
        return self._parent.database()[self._name][name]

    def __repr__(self) -> str:
        return f"<optdb phase {self._name!r}: {', '.join(self) or '(empty)'}>"


class OptimizationDatabase:
    """The rewrite database as one object (see the module docstring)."""

    def database(self) -> RewriteDatabase:
        """A fresh database built for the current plugin manager (what a compilation uses)."""
        return build_rewrite_database()

    def _add(self, plugin: RewriteEntryPlugin) -> None:
        plugin.register_into(self.database())  # raises now for a bad entry
        where = plugin.name if plugin.phase is None else f"{plugin.phase}.{plugin.name}"
        register_plugin_object(plugin, f"optdb:{where}")

    def register(self, name: str, rewriter: Any, *tags: str, **options: Any) -> None:
        """Register ``rewriter`` at the top level of every database built from now on.

        Parameters
        ----------
        name, rewriter, tags, options
            As for :meth:`~opweave.graph.rewriting.db.RewriteDatabase.register`
            (``position=...`` makes the entry a phase of its own).

        Raises
        ------
        ValueError, TypeError
            What registering into a fresh database raises (a name already taken, a phase
            name given as a tag without a position, a rewriter of the wrong kind).
        """
        self._add(_entry_plugin(None, name, rewriter, tags, options))

    def __getitem__(self, name: str) -> Any:
        """A phase (whose ``register`` adds to every database), or a registered rewriter."""
        entry = self.database()[name]
        if isinstance(entry, RewriteDatabase):
            return _Phase(self, name)
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self.database()

    def __iter__(self) -> Iterator[str]:
        return iter(self.database())

    def __len__(self) -> int:
        return len(self.database())

    def query(self, *args: Any, **kwargs: Any) -> GraphRewriter:
        """:meth:`~opweave.graph.rewriting.db.RewriteDatabase.query` of a fresh database."""
        # The top-level database runs its phases in sequence: its query is a graph rewriter.
        return cast(GraphRewriter, self.database().query(*args, **kwargs))

    def phases(self) -> list[str]:
        """The names of the phases, in position order."""
        return self.database().phases()

    def tags(self, name: str) -> frozenset[str]:
        """The tags of the entry ``name``."""
        return self.database().tags(name)

    def position(self, name: str) -> float:
        """The position of the entry ``name``."""
        return self.database().position(name)

    def __repr__(self) -> str:
        return f"<optdb: {', '.join(self)}>"


#: The rewrite database (PyTensor's ``optdb``).
optdb = OptimizationDatabase()
