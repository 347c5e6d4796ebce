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
A query is a :class:`RewriteDatabaseQuery`, tag lists (``include=[...]``,
``exclude=[...]``, ``require=[...]``) or PyTensor's strings: ``db.query("+canonicalize",
"-local_useless")`` includes ``canonicalize`` and excludes ``local_useless`` (``"&tag"``
requires); a string without one of those prefixes is refused.

The kinds of database (PyTensor's classes), by what their query returns:

* :class:`RewriteDatabase` / :class:`SequenceDB`: a
  :class:`~opweave.graph.rewriting.graph.SequentialGraphRewriter`, entries in position
  order;
* :class:`EquilibriumDB`: an
  :class:`~opweave.graph.rewriting.graph.EquilibriumGraphRewriter`;
* :class:`LocalGroupDB` (node rewriters only): a
  :class:`~opweave.graph.rewriting.node.SequentialNodeRewriter`;
* :class:`TopoDB` (wrapping a ``LocalGroupDB``): a
  :class:`~opweave.graph.rewriting.graph.WalkingGraphRewriter` of that node rewriter;
* :class:`ProxyDB`: what the wrapped database's query returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union

from opweave.graph.rewriting.graph import (
    EquilibriumGraphRewriter,
    FailureCallback,
    GraphRewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
)
from opweave.graph.rewriting.merge import MergeOptimizer
from opweave.graph.rewriting.node import NodeRewriter, SequentialNodeRewriter
from opweave.plugins.manager import get_plugin_manager

if TYPE_CHECKING:
    import pluggy

__all__ = [
    "EquilibriumDB",
    "LocalGroupDB",
    "ProxyDB",
    "RewriteDatabase",
    "RewriteDatabaseQuery",
    "RewritesType",
    "SequenceDB",
    "TopoDB",
    "build_rewrite_database",
]

#: What can be registered: a node rewriter, a graph rewriter, or a nested database.
Registrable = Union[NodeRewriter, GraphRewriter, "RewriteDatabase"]
#: What a query produces for one selected entry.
Rewriter = NodeRewriter | GraphRewriter
#: PyTensor's name of the same union.
RewritesType = Rewriter

#: The prefixes of PyTensor's query strings: ``"+tag"`` includes, ``"&tag"`` requires,
#: ``"-tag"`` excludes.
_PREFIXES = {"+": "include", "&": "require", "-": "exclude"}
#: Keyword arguments of :meth:`RewriteDatabase.query` that are not subqueries.
_QUERY_KEYWORDS = ("include", "exclude", "require", "subquery", "position_cutoff")


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
    position_cutoff
        Only entries at a position below this are selected (in the database queried,
        not in the nested ones).
    extra_rewrites
        ``(rewriter, position)`` pairs run with the selected entries, at those positions
        (in the database queried, not in the nested ones).
    """

    def __init__(
        self,
        include: Iterable[str] = (),
        require: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        subquery: Mapping[str, RewriteDatabaseQuery] | None = None,
        position_cutoff: float = math.inf,
        extra_rewrites: Sequence[tuple[Rewriter, float]] | None = None,
    ) -> None:
        self.include = _tag_set(include, "include")
        self.require = _tag_set(require, "require")
        self.exclude = _tag_set(exclude, "exclude")
        self.subquery: dict[str, RewriteDatabaseQuery] = dict(subquery or {})
        for key, sub in self.subquery.items():
            if not isinstance(sub, RewriteDatabaseQuery):
                raise TypeError(
                    f"subquery {key!r}: expected a RewriteDatabaseQuery, got {type(sub).__name__}"
                )
        self.position_cutoff = float(position_cutoff)
        self.extra_rewrites: list[tuple[Rewriter, float]] = [
            _extra_rewrite(pair) for pair in (extra_rewrites or ())
        ]
        #: A display name (PyTensor's attribute).
        self.name: str | None = None

    def selects(self, tags: Iterable[str]) -> bool:
        """True if an entry with ``tags`` is selected."""
        tags = frozenset(tags)
        return bool(tags & self.include) and not tags & self.exclude and self.require <= tags

    def _copy(self) -> RewriteDatabaseQuery:
        new = RewriteDatabaseQuery(
            self.include,
            self.require,
            self.exclude,
            self.subquery,
            self.position_cutoff,
            self.extra_rewrites,
        )
        new.name = self.name
        return new

    def _with(self, **changes: frozenset[str]) -> RewriteDatabaseQuery:
        new = self._copy()
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

    def register(self, *rewrites: tuple[Rewriter, float]) -> RewriteDatabaseQuery:
        """Return a copy that also runs each ``(rewriter, position)`` of ``rewrites``."""
        new = self._copy()
        new.extra_rewrites = [*self.extra_rewrites, *(_extra_rewrite(p) for p in rewrites)]
        return new

    def for_nested(self) -> RewriteDatabaseQuery:
        """The query a selected nested database gets by default: this one without the
        position cutoff and the extra rewrites, which apply to one database only."""
        if self.position_cutoff == math.inf and not self.extra_rewrites:
            return self
        new = self._copy()
        new.position_cutoff = math.inf
        new.extra_rewrites = []
        return new

    def __repr__(self) -> str:
        cutoff = "" if self.position_cutoff == math.inf else f", cutoff={self.position_cutoff}"
        return (
            f"RewriteDatabaseQuery(include={sorted(self.include)}, "
            f"require={sorted(self.require)}, exclude={sorted(self.exclude)}, "
            f"subquery={self.subquery!r}{cutoff})"
        )


def _extra_rewrite(pair: Any) -> tuple[Rewriter, float]:
    """Check one ``(rewriter, position)`` pair of ``extra_rewrites``."""
    if (
        not isinstance(pair, tuple)
        or len(pair) != 2
        or not isinstance(pair[0], (NodeRewriter, GraphRewriter))
        or not isinstance(pair[1], (int, float))
    ):
        raise TypeError(
            f"an extra rewrite must be a (NodeRewriter or GraphRewriter, position) pair, "
            f"got {pair!r}"
        )
    return pair[0], float(pair[1])


def parse_query_tags(tags: Sequence[str]) -> dict[str, list[str]]:
    """Split PyTensor's query strings by prefix.

    Parameters
    ----------
    tags
        Strings ``"+tag"`` (include), ``"&tag"`` (require) and ``"-tag"`` (exclude).

    Returns
    -------
    dict
        ``{"include": [...], "require": [...], "exclude": [...]}``.

    Raises
    ------
    ValueError
        For a string without one of the three prefixes.
    """
    parsed: dict[str, list[str]] = {"include": [], "require": [], "exclude": []}
    for tag in tags:
        kind = _PREFIXES.get(tag[:1]) if isinstance(tag, str) else None
        if kind is None or len(tag) < 2:
            raise ValueError(
                f"query tag {tag!r}: every tag must start with '+' (include), '&' "
                "(require) or '-' (exclude), e.g. query('+fast_run', '-inplace'); or pass "
                "lists: query(include=[...], exclude=[...], require=[...])"
            )
        parsed[kind].append(tag[1:])
    return parsed


def as_query(args: tuple[Any, ...], kwargs: dict[str, Any]) -> RewriteDatabaseQuery:
    """The query that :meth:`RewriteDatabase.query`'s arguments stand for.

    Accepted forms: one :class:`RewriteDatabaseQuery`; PyTensor's strings
    (``"+canonicalize", "-inplace", "&stable"``) with subqueries as keyword arguments
    named after nested databases; tag lists, positionally (``include, exclude,
    require``) or by keyword (``include=``, ``exclude=``, ``require=``, ``subquery=``,
    ``position_cutoff=``).

    Raises
    ------
    TypeError
        For a query mixed with other arguments, or a subquery that is not a
        :class:`RewriteDatabaseQuery`.
    ValueError
        For a query string without a prefix.
    """
    if args and isinstance(args[0], RewriteDatabaseQuery):
        if len(args) > 1 or kwargs:
            raise TypeError("query: pass either a RewriteDatabaseQuery alone, or tags, not both")
        return args[0]
    options = {key: kwargs.pop(key) for key in _QUERY_KEYWORDS if key in kwargs}
    subquery = dict(options.pop("subquery", None) or {})
    subquery.update(kwargs)  # PyTensor: other keywords are subqueries by database name
    lists: dict[str, Any] = {}
    if args and all(isinstance(a, str) for a in args):
        lists = dict(parse_query_tags(args))
    elif args:
        if len(args) > 3:
            raise TypeError("query takes at most three tag lists: include, exclude, require")
        lists = dict(zip(("include", "exclude", "require"), args))
    for key in ("include", "exclude", "require"):
        if key in options:
            lists[key] = [*lists.get(key, ()), *_tag_set(options[key], key)]
    return RewriteDatabaseQuery(
        include=_tag_set(lists.get("include"), "include"),
        require=_tag_set(lists.get("require"), "require"),
        exclude=_tag_set(lists.get("exclude"), "exclude"),
        subquery=subquery,
        position_cutoff=options.get("position_cutoff", math.inf),
    )


@dataclass
class _Entry:
    name: str
    rewriter: Registrable
    tags: set[str] = field(default_factory=set)
    position: float = 0.0


#: What a database's selection is made of: ``(position, name, rewriter)``.
_Selected = tuple[float, str, Rewriter]


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
        position: float | Literal["last"] | None = None,
        use_db_name_as_tag: bool = True,
        overwrite_existing: bool = False,
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
            Where it runs (lower first); default (or ``"last"``): after every entry
            registered so far.
        use_db_name_as_tag
            Also tag the entry with this database's name, so including that name
            selects it.
        overwrite_existing
            Replace an entry already registered under ``name`` instead of refusing.

        Raises
        ------
        ValueError
            If ``name`` is already registered.
        TypeError
            If ``rewriter`` is not a rewriter or database, a tag is not a string, or
            ``position`` is not a number.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"a rewrite name must be a non-empty string, got {name!r}")
        if name in self._entries and not overwrite_existing:
            raise ValueError(
                f"a rewrite named {name!r} is already registered in {self._display()}; "
                "choose another name"
            )
        self._check_registrable(name, rewriter)
        if position == "last":
            position = None
        if position is not None and (
            isinstance(position, bool) or not isinstance(position, (int, float))
        ):
            raise TypeError(f"{name!r}: position must be a number or 'last', got {position!r}")
        if position is None:
            self._refuse_phase_tags(name, tags)
        if isinstance(rewriter, RewriteDatabase) and rewriter.name is None:
            rewriter.name = name
        entry_tags = set(_tag_set(tags, name)) | {name}
        if use_db_name_as_tag and self.name is not None:
            entry_tags.add(self.name)
        self._entries.pop(name, None)
        if position is None:
            position = max((e.position for e in self._entries.values()), default=-1.0) + 1
        self._entries[name] = _Entry(name, rewriter, entry_tags, float(position))

    def _check_registrable(self, name: str, rewriter: Any) -> None:
        """Refuse what this kind of database cannot run."""
        if not isinstance(rewriter, (NodeRewriter, GraphRewriter, RewriteDatabase)):
            raise TypeError(
                f"{name!r}: expected a NodeRewriter, GraphRewriter or RewriteDatabase, got "
                f"{rewriter!r}"
            )

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

    def query(self, *tags: Any, **kwtags: Any) -> Rewriter:
        """Return a rewriter running the selected entries.

        Parameters
        ----------
        tags
            One :class:`RewriteDatabaseQuery`; or PyTensor's strings ``"+tag"``
            (include), ``"-tag"`` (exclude), ``"&tag"`` (require); or tag lists
            ``include, exclude, require``.
        kwtags
            ``include=``, ``exclude=``, ``require=`` (tag lists), ``subquery=`` (a
            dict), ``position_cutoff=``; any other keyword is a subquery for the nested
            database of that name (PyTensor's form).

        Raises
        ------
        TypeError, ValueError
            See :func:`as_query`.

        Examples
        --------
        ``db.query("+canonicalize", "-local_useless")`` is
        ``db.query(include=["canonicalize"], exclude=["local_useless"])``.
        """
        q = as_query(tags, dict(kwtags))
        return self._build(self._resolve(q))

    def selected_names(self, q: RewriteDatabaseQuery) -> list[str]:
        """Return the names of the entries of this database ``q`` selects, in order."""
        return [
            e.name
            for e in self._sorted(self._entries.values())
            if q.selects(e.tags) and e.position < q.position_cutoff
        ]

    def _resolve(self, q: RewriteDatabaseQuery) -> list[_Selected]:
        """The selected entries, nested databases replaced by their query's result."""
        selected: list[_Selected] = []
        nested_default = q.for_nested()
        for name in self.selected_names(q):
            entry = self._entries[name]
            rewriter = entry.rewriter
            if isinstance(rewriter, RewriteDatabase):
                built = rewriter._query_nonempty(q.subquery.get(name, nested_default))
                if built is not None:
                    selected.append((entry.position, name, built))
            else:
                selected.append((entry.position, name, rewriter))
        for rewriter, position in q.extra_rewrites:
            if position < q.position_cutoff:
                selected.append((position, f"{type(rewriter).__name__}_{id(rewriter)}", rewriter))
        selected.sort(key=lambda item: (item[0], item[1]))
        return selected

    def _query_nonempty(self, q: RewriteDatabaseQuery) -> Rewriter | None:
        """The rewriter of ``q``, or ``None`` when ``q`` selects nothing here."""
        selected = self._resolve(q)
        return self._build(selected) if selected else None

    def _build(self, selected: list[_Selected]) -> Rewriter:
        return SequentialGraphRewriter(*(rw for _, _, rw in selected), name=self.name)

    def __repr__(self) -> str:
        entries = ", ".join(
            f"{e.name}@{e.position:g}{sorted(e.tags)}" for e in self._sorted(self._entries.values())
        )
        return f"{type(self).__name__}({self.name!r}: {entries})"


class SequenceDB(RewriteDatabase):
    """A database whose query runs the entries once, in position order, as
    :class:`RewriteDatabase` does, but by default goes on past a failing entry
    (PyTensor's class and default).

    Parameters
    ----------
    failure_callback
        The ``failure_callback`` of the
        :class:`~opweave.graph.rewriting.graph.SequentialGraphRewriter` the query
        returns: by default :meth:`SequentialGraphRewriter.warn
        <opweave.graph.rewriting.graph.SequentialGraphRewriter.warn>` (an entry that
        raises is reported with a warning and the next runs); ``None`` lets the
        exception propagate.
    name
        See :class:`RewriteDatabase`.
    """

    def __init__(
        self,
        failure_callback: FailureCallback | None = SequentialGraphRewriter.warn,
        *,
        name: str | None = None,
    ):
        super().__init__(name)
        self.failure_callback = failure_callback

    def _build(self, selected: list[_Selected]) -> Rewriter:
        return SequentialGraphRewriter(
            *(rw for _, _, rw in selected), name=self.name, failure_callback=self.failure_callback
        )


class EquilibriumDB(RewriteDatabase):
    """A database whose query applies the selected entries until a fixed point.

    The query returns an
    :class:`~opweave.graph.rewriting.graph.EquilibriumGraphRewriter` over the selected
    node rewriters, graph rewriters and nested databases' rewriters.

    Parameters
    ----------
    ignore_newtrees, tracks_on_change_inputs
        Accepted for PyTensor's signature: the equilibrium always shows the nodes a
        rewrite creates to the node rewriters.
    eq_rewriter_class
        The class of the rewriter the query returns (default
        :class:`~opweave.graph.rewriting.graph.EquilibriumGraphRewriter`); called as
        ``cls(rewriters, max_use_ratio=..., on_limit=..., name=...)``.
    name
        See :class:`RewriteDatabase`.
    max_use_ratio, on_limit
        Passed to :class:`~opweave.graph.rewriting.graph.EquilibriumGraphRewriter`.
    """

    def __init__(
        self,
        ignore_newtrees: bool = True,
        tracks_on_change_inputs: bool = False,
        eq_rewriter_class: type[EquilibriumGraphRewriter] | None = None,
        *,
        name: str | None = None,
        max_use_ratio: float = 8.0,
        on_limit: Literal["raise", "warn"] = "warn",
    ) -> None:
        super().__init__(name)
        self.ignore_newtrees = ignore_newtrees
        self.tracks_on_change_inputs = tracks_on_change_inputs
        self.eq_rewriter_class = eq_rewriter_class or EquilibriumGraphRewriter
        self.max_use_ratio = max_use_ratio
        self.on_limit: Literal["raise", "warn"] = on_limit
        self._last: set[str] = set()

    def register(
        self,
        name: str,
        rewriter: Registrable,
        *tags: str,
        final_rewriter: bool = False,
        cleanup: bool = False,
        **kwargs: Any,
    ) -> None:
        """Register as :meth:`RewriteDatabase.register` does.

        Parameters
        ----------
        final_rewriter, cleanup
            PyTensor's kinds of entries run after the others of each pass; here they
            are tried after the other entries.

        Raises
        ------
        ValueError
            If both ``final_rewriter`` and ``cleanup`` are true, or as
            :meth:`RewriteDatabase.register`.
        """
        if final_rewriter and cleanup:
            raise ValueError(f"{name!r}: final_rewriter and cleanup cannot both be true")
        super().register(name, rewriter, *tags, **kwargs)
        if final_rewriter or cleanup:
            self._last.add(name)
        else:
            self._last.discard(name)

    def _build(self, selected: list[_Selected]) -> Rewriter:
        first = [rw for _, name, rw in selected if name not in self._last]
        last = [rw for _, name, rw in selected if name in self._last]
        return self.eq_rewriter_class(
            [*first, *last],
            max_use_ratio=self.max_use_ratio,
            on_limit=self.on_limit,
            name=self.name,
        )


class LocalGroupDB(SequenceDB):
    """A database of node rewriters whose query is one node rewriter trying them in
    position order (a :class:`~opweave.graph.rewriting.node.SequentialNodeRewriter`).

    Parameters
    ----------
    apply_all_rewrites, profile
        Passed to the :class:`~opweave.graph.rewriting.node.SequentialNodeRewriter`.
    node_rewriter
        The class the query builds (default
        :class:`~opweave.graph.rewriting.node.SequentialNodeRewriter`).
    name
        See :class:`RewriteDatabase`.
    """

    def __init__(
        self,
        apply_all_rewrites: bool = False,
        profile: bool = False,
        node_rewriter: type[SequentialNodeRewriter] | None = None,
        *,
        name: str | None = None,
    ) -> None:
        super().__init__(None, name=name)
        self.apply_all_rewrites = apply_all_rewrites
        self.profile = profile
        self.node_rewriter = node_rewriter or SequentialNodeRewriter

    def _check_registrable(self, name: str, rewriter: Any) -> None:
        if not isinstance(rewriter, (NodeRewriter, LocalGroupDB)):
            raise TypeError(
                f"{name!r}: a LocalGroupDB holds node rewriters (and other LocalGroupDBs), "
                f"got {rewriter!r}"
            )

    def _build(self, selected: list[_Selected]) -> Rewriter:
        rewriters = [rw for _, _, rw in selected]
        assert all(isinstance(rw, NodeRewriter) for rw in rewriters)  # see _check_registrable
        return self.node_rewriter(
            *rewriters,  # type: ignore[arg-type]
            apply_all_rewrites=self.apply_all_rewrites,
            profile=self.profile,
            name=self.name,
        )


class _WrappingDB(RewriteDatabase):
    """A database that answers queries from another one (its own entries are unused)."""

    def __init__(self, db: RewriteDatabase, name: str | None = None) -> None:
        if not isinstance(db, RewriteDatabase):
            raise TypeError(
                f"{type(self).__name__}: expected a RewriteDatabase to wrap, got "
                f"{type(db).__name__}"
            )
        super().__init__(name)
        self.db = db

    def register(self, name: str, rewriter: Registrable, *tags: str, **kwargs: Any) -> None:
        """Refused: register into the wrapped database (``self.db``)."""
        raise TypeError(
            f"{type(self).__name__} answers queries from the database it wraps; register "
            f"{name!r} there (its .db)"
        )

    def __contains__(self, name: object) -> bool:
        return name in self.db

    def __getitem__(self, name: str) -> Any:
        return self.db[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.db)

    def __len__(self) -> int:
        return len(self.db)

    def _resolve(self, q: RewriteDatabaseQuery) -> list[_Selected]:
        return self.db._resolve(q)


class TopoDB(_WrappingDB):
    """A database whose query walks the graph once with the node rewriter that the
    wrapped database's query returns (a
    :class:`~opweave.graph.rewriting.graph.WalkingGraphRewriter`).

    Parameters
    ----------
    db
        The database of node rewriters (usually a :class:`LocalGroupDB`).
    order
        ``"in_to_out"``, ``"out_to_in"`` or ``"dfs"`` (see
        :class:`~opweave.graph.rewriting.graph.WalkingGraphRewriter`).
    ignore_newtrees
        If false, nodes created by a rewrite are visited too.
    failure_callback
        Accepted for PyTensor's signature; a failing rewrite raises.
    """

    def __init__(
        self,
        db: RewriteDatabase,
        order: Literal["in_to_out", "out_to_in", "dfs"] = "in_to_out",
        ignore_newtrees: bool = False,
        failure_callback: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(db)
        if order not in ("in_to_out", "out_to_in", "dfs"):
            raise ValueError(f"order must be 'in_to_out', 'out_to_in' or 'dfs', got {order!r}")
        self.order: Literal["in_to_out", "out_to_in", "dfs"] = order
        self.ignore_newtrees = ignore_newtrees
        self.failure_callback = failure_callback

    def _build(self, selected: list[_Selected]) -> Rewriter:
        inner = self.db._build(selected)
        if not isinstance(inner, NodeRewriter):
            raise TypeError(
                f"TopoDB {self.name!r}: the wrapped database's query gives {inner!r}, not a "
                "node rewriter; wrap a LocalGroupDB"
            )
        return WalkingGraphRewriter(
            inner, order=self.order, ignore_newtrees=self.ignore_newtrees, name=self.name
        )


class ProxyDB(_WrappingDB):
    """A database whose query is the wrapped database's, so that one database can be
    registered at several positions.

    Parameters
    ----------
    db
        The database queried.
    """

    def _build(self, selected: list[_Selected]) -> Rewriter:
        return self.db._build(selected)


def build_rewrite_database(pm: pluggy.PluginManager | None = None) -> RewriteDatabase:
    """Return a fresh database with the standard phases and every plugin's rewrites.

    Parameters
    ----------
    pm
        The plugin manager whose ``opweave_rewrites(db)`` hook is called; default:
        :func:`opweave.plugins.get_plugin_manager`.
    """
    if pm is None:
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
