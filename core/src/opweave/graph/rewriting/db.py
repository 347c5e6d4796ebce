"""Rewrite databases: named, tagged, positioned rewriters, and queries that select them.

There is no global database. Every compilation calls :func:`build_rewrite_database`,
which makes a fresh :class:`RewriteDatabase`, registers the standard phases below, and
then asks every plugin to register its rewrites through the ``opweave_rewrites(db)``
hook (the core's own rewrites come through the same hook). A query such as
``db.query(include=["fast_run"], exclude=["inplace"])`` then returns one
:class:`~opweave.graph.rewriting.graph.GraphRewriter` to run on the graph.

Standard phases (registered before the hook is called; run in position order):

* ``merge1``, position 0, a :class:`MergeOptimizer`; tags fast_run, fast_compile, merge.
* ``canonicalize``, position 1, an :class:`EquilibriumDB`; tag fast_run.
* ``stabilize``, position 1.5, an :class:`EquilibriumDB`; tag fast_run.
* ``specialize``, position 2, an :class:`EquilibriumDB`; tag fast_run.
* ``merge2``, position 49, the final :class:`MergeOptimizer`; tags fast_run, fast_compile,
  merge.
* ``inplace``, position 50, a :class:`RewriteDatabase` (entries run once, in order); tags
  fast_run, inplace.

``inplace`` runs after the final merge, so that destructive Ops are introduced into a
graph whose duplicates are already merged, and nothing after it rewrites them.

A plugin registers into a phase with one call, ``db[phase].register(name, rewriter,
*tags)`` (PyTensor's ``optdb["canonicalize"].register(name, rewriter, "fast_run")``)::

    @hookimpl
    def opweave_rewrites(db):
        db["canonicalize"].register("local_neg_neg", local_neg_neg, "fast_run")
        db["inplace"].register("add_inplace", in2out(local_add_inplace), "fast_run")
        db.register("my_phase", MyGraphRewriter(), "fast_run", position=10)

A tag is not a place: ``db.register(name, rewriter, "canonicalize")`` without a
position would run the rewrite after every phase, so it is refused with a message
showing the call above. With an explicit ``position`` the entry is a phase of its own,
and a phase name among its tags only selects it (``excluding("inplace")`` turns off an
own-phase destructive rewrite tagged ``inplace``).

Selection: an entry is selected when its tags contain **any** included tag, **none**
of the excluded tags and **all** of the required tags. An entry's tags are the ones
given to :meth:`RewriteDatabase.register`, plus its own name, plus the name of the
database it is registered in (unless ``use_db_name_as_tag=False``). A nested database
that is selected is queried with the same query (or the one given for its name in
``subquery``), so a rewrite registered in ``canonicalize`` must carry ``fast_run`` to
run in ``FAST_RUN``; including ``"canonicalize"`` selects everything registered there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union

from opweave.graph.rewriting.graph import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    SequentialGraphRewriter,
)
from opweave.graph.rewriting.merge import MergeOptimizer
from opweave.graph.rewriting.node import NodeRewriter

if TYPE_CHECKING:
    import pluggy

__all__ = [
    "EquilibriumDB",
    "RewriteDatabase",
    "RewriteDatabaseQuery",
    "build_rewrite_database",
]

#: What can be registered: a node rewriter, a graph rewriter, or a nested database.
Registrable = Union[NodeRewriter, GraphRewriter, "RewriteDatabase"]


def _tag_set(tags: Iterable[str] | str | None, what: str) -> frozenset[str]:
    if tags is None:
        return frozenset()
    if isinstance(tags, str):
        tags = (tags,)
    tags = tuple(tags)
    for tag in tags:
        if not isinstance(tag, str):
            raise TypeError(f"{what} tags must be strings, got {tag!r}")
    return frozenset(tags)


class RewriteDatabaseQuery:
    """Which entries of a :class:`RewriteDatabase` to use.

    Parameters
    ----------
    include
        An entry is selected if it has at least one of these tags.
    require
        ... and all of these.
    exclude
        ... and none of these.
    subquery
        ``{nested database name: query}`` used for those nested databases instead of
        this query.
    """

    def __init__(
        self,
        include: Iterable[str] = (),
        require: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        subquery: Mapping[str, RewriteDatabaseQuery] | None = None,
    ) -> None:
        self.include = _tag_set(include, "include")
        self.require = _tag_set(require, "require")
        self.exclude = _tag_set(exclude, "exclude")
        self.subquery: dict[str, RewriteDatabaseQuery] = dict(subquery or {})

    def selects(self, tags: Iterable[str]) -> bool:
        """True if an entry with ``tags`` is selected."""
        tags = frozenset(tags)
        return bool(tags & self.include) and not tags & self.exclude and self.require <= tags

    def _with(self, **changes: frozenset[str]) -> RewriteDatabaseQuery:
        new = RewriteDatabaseQuery(self.include, self.require, self.exclude, self.subquery)
        for attr, tags in changes.items():
            setattr(new, attr, getattr(new, attr) | tags)
        return new

    def including(self, *tags: str) -> RewriteDatabaseQuery:
        """Return a copy that also includes ``tags``."""
        return self._with(include=_tag_set(tags, "include"))

    def excluding(self, *tags: str) -> RewriteDatabaseQuery:
        """Return a copy that also excludes ``tags``."""
        return self._with(exclude=_tag_set(tags, "exclude"))

    def requiring(self, *tags: str) -> RewriteDatabaseQuery:
        """Return a copy that also requires ``tags``."""
        return self._with(require=_tag_set(tags, "require"))

    def __repr__(self) -> str:
        return (
            f"RewriteDatabaseQuery(include={sorted(self.include)}, "
            f"require={sorted(self.require)}, exclude={sorted(self.exclude)}, "
            f"subquery={self.subquery!r})"
        )


@dataclass
class _Entry:
    name: str
    rewriter: Registrable
    tags: set[str] = field(default_factory=set)
    position: float = 0.0


class RewriteDatabase:
    """A set of named rewriters with tags and positions; queries run them in order.

    :meth:`query` returns a
    :class:`~opweave.graph.rewriting.graph.SequentialGraphRewriter` of the selected
    entries, ordered by position then name (node rewriters are wrapped in
    :func:`~opweave.graph.rewriting.graph.in2out`; nested databases contribute the
    result of their own query, or nothing if it selects nothing).

    Parameters
    ----------
    name
        The database's name; when registered in another database it defaults to the
        entry name. It is added as a tag to the entries registered here (see
        :meth:`register`).
    """

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._entries: dict[str, _Entry] = {}

    # ------------------------------------------------------------------ registration

    def register(
        self,
        name: str,
        rewriter: Registrable,
        *tags: str,
        position: float | None = None,
        use_db_name_as_tag: bool = True,
    ) -> None:
        """Register ``rewriter`` under ``name``.

        Parameters
        ----------
        name
            A name unique in this database; it is also a tag of the entry.
        rewriter
            A :class:`NodeRewriter`, a :class:`GraphRewriter` or a nested
            :class:`RewriteDatabase`.
        tags
            The entry's tags (``"fast_run"``, ``"fast_compile"``, ``"inplace"``, ...).
        position
            Where it runs (lower first); default: after every entry registered so far.
        use_db_name_as_tag
            Also tag the entry with this database's name, so including that name
            selects it.

        Raises
        ------
        ValueError
            If ``name`` is already registered.
        TypeError
            If ``rewriter`` is not a rewriter or database, or a tag is not a string.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"a rewrite name must be a non-empty string, got {name!r}")
        if name in self._entries:
            raise ValueError(
                f"a rewrite named {name!r} is already registered in {self._display()}; "
                "choose another name"
            )
        if not isinstance(rewriter, (NodeRewriter, GraphRewriter, RewriteDatabase)):
            raise TypeError(
                f"{name!r}: expected a NodeRewriter, GraphRewriter or RewriteDatabase, got "
                f"{rewriter!r}"
            )
        if position is None:
            self._refuse_phase_tags(name, tags)
        if isinstance(rewriter, RewriteDatabase) and rewriter.name is None:
            rewriter.name = name
        entry_tags = set(_tag_set(tags, name)) | {name}
        if use_db_name_as_tag and self.name is not None:
            entry_tags.add(self.name)
        if position is None:
            position = max((e.position for e in self._entries.values()), default=-1.0) + 1
        self._entries[name] = _Entry(name, rewriter, entry_tags, float(position))

    def phases(self) -> list[str]:
        """Return the names of the nested databases (the phases), in position order."""
        return [n for n in self if isinstance(self._entries[n].rewriter, RewriteDatabase)]

    def _refuse_phase_tags(self, name: str, tags: tuple[str, ...]) -> None:
        """Refuse a tag naming one of this database's phases on an unpositioned entry.

        Such an entry would not run in that phase but after every phase registered so far
        (after ``inplace``); the phase's own database is where it belongs.
        """
        for tag in tags:
            if isinstance(tag, str) and tag != name and tag in self.phases():
                others = ", ".join(repr(t) for t in tags if t != tag) or "'fast_run'"
                raise ValueError(
                    f"{name!r}: the tag {tag!r} names a phase of {self._display()}, but a "
                    "tag does not put a rewrite into a phase (registered here it would run "
                    f"after every phase). Register it in the phase: "
                    f"db[{tag!r}].register({name!r}, rewriter, {others}); or give a position "
                    "to run it as a phase of its own."
                )

    def add_tags(self, name: str, *tags: str) -> None:
        """Add ``tags`` to the entry ``name``."""
        self._entry(name).tags.update(_tag_set(tags, name))

    def remove_tags(self, name: str, *tags: str) -> None:
        """Remove ``tags`` from the entry ``name``."""
        self._entry(name).tags.difference_update(tags)

    def tags(self, name: str) -> frozenset[str]:
        """Return the tags of the entry ``name``."""
        return frozenset(self._entry(name).tags)

    def position(self, name: str) -> float:
        """Return the position of the entry ``name``."""
        return self._entry(name).position

    def _entry(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(
                f"no rewrite named {name!r} in {self._display()}; registered: "
                f"{', '.join(self) or '(none)'}"
            ) from None

    def _display(self) -> str:
        return f"rewrite database {self.name!r}" if self.name else "the rewrite database"

    # ------------------------------------------------------------------ mapping protocol

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> Any:
        """Return what is registered under ``name`` (a rewriter or a nested database)."""
        return self._entry(name).rewriter

    def __iter__(self) -> Iterator[str]:
        """Iterate over the entry names, in position order."""
        return iter(e.name for e in self._sorted(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    # ------------------------------------------------------------------ queries

    @staticmethod
    def _sorted(entries: Iterable[_Entry]) -> list[_Entry]:
        return sorted(entries, key=lambda e: (e.position, e.name))

    def query(
        self,
        include: Iterable[str] | RewriteDatabaseQuery = (),
        exclude: Iterable[str] = (),
        require: Iterable[str] = (),
        subquery: Mapping[str, RewriteDatabaseQuery] | None = None,
    ) -> GraphRewriter:
        """Return a graph rewriter running the selected entries.

        Parameters
        ----------
        include, exclude, require, subquery
            See :class:`RewriteDatabaseQuery`; ``include`` may also be a
            ``RewriteDatabaseQuery``, in which case the other arguments must be empty.
        """
        if isinstance(include, RewriteDatabaseQuery):
            if tuple(exclude) or tuple(require) or subquery:
                raise TypeError("pass either a RewriteDatabaseQuery or tag lists, not both")
            q = include
        else:
            q = RewriteDatabaseQuery(include, require=require, exclude=exclude, subquery=subquery)
        return self._build(self._resolve(q))

    def selected_names(self, q: RewriteDatabaseQuery) -> list[str]:
        """Return the names of the entries of this database ``q`` selects, in order."""
        return [e.name for e in self._sorted(self._entries.values()) if q.selects(e.tags)]

    def _resolve(self, q: RewriteDatabaseQuery) -> list[NodeRewriter | GraphRewriter]:
        rewriters: list[NodeRewriter | GraphRewriter] = []
        for name in self.selected_names(q):
            rewriter = self._entries[name].rewriter
            if isinstance(rewriter, RewriteDatabase):
                sub = rewriter._resolve(q.subquery.get(name, q))
                if sub:
                    rewriters.append(rewriter._build(sub))
            else:
                rewriters.append(rewriter)
        return rewriters

    def _build(self, rewriters: list[NodeRewriter | GraphRewriter]) -> GraphRewriter:
        return SequentialGraphRewriter(*rewriters, name=self.name)

    def __repr__(self) -> str:
        entries = ", ".join(
            f"{e.name}@{e.position:g}{sorted(e.tags)}" for e in self._sorted(self._entries.values())
        )
        return f"{type(self).__name__}({self.name!r}: {entries})"


class EquilibriumDB(RewriteDatabase):
    """A database whose query applies the selected entries until a fixed point.

    The query returns an
    :class:`~opweave.graph.rewriting.graph.EquilibriumGraphRewriter` over the selected
    node rewriters, graph rewriters and nested databases' rewriters.

    Parameters
    ----------
    name
        See :class:`RewriteDatabase`.
    max_use_ratio, on_limit
        Passed to :class:`~opweave.graph.rewriting.graph.EquilibriumGraphRewriter`.
    """

    def __init__(
        self,
        name: str | None = None,
        max_use_ratio: float = 8.0,
        on_limit: Literal["raise", "warn"] = "warn",
    ) -> None:
        super().__init__(name)
        self.max_use_ratio = max_use_ratio
        self.on_limit: Literal["raise", "warn"] = on_limit

    def _build(self, rewriters: list[NodeRewriter | GraphRewriter]) -> GraphRewriter:
        return EquilibriumGraphRewriter(
            rewriters, max_use_ratio=self.max_use_ratio, on_limit=self.on_limit, name=self.name
        )


def build_rewrite_database(pm: pluggy.PluginManager | None = None) -> RewriteDatabase:
    """Return a fresh database with the standard phases and every plugin's rewrites.

    Parameters
    ----------
    pm
        The plugin manager whose ``opweave_rewrites(db)`` hook is called; default:
        :func:`opweave.plugins.get_plugin_manager`.
    """
    if pm is None:
        # late: plugins (floor 2) sit above graph; only the default manager is looked up here
        from opweave.plugins.manager import get_plugin_manager

        pm = get_plugin_manager()
    db = RewriteDatabase()
    db.register(
        "merge1", MergeOptimizer(name="merge1"), "fast_run", "fast_compile", "merge", position=0
    )
    db.register("canonicalize", EquilibriumDB(), "fast_run", position=1)
    db.register("stabilize", EquilibriumDB(), "fast_run", position=1.5)
    db.register("specialize", EquilibriumDB(), "fast_run", position=2)
    db.register(
        "merge2", MergeOptimizer(name="merge2"), "fast_run", "fast_compile", "merge", position=49
    )
    db.register("inplace", RewriteDatabase(), "fast_run", "inplace", position=50)
    pm.hook.opweave_rewrites(db=db)
    return db
