"""Node rewriters: rewrites that look at one :class:`~opweave.graph.basic.Apply` node.

A :class:`NodeRewriter` proposes replacements for the outputs of one node; a graph
rewriter (:mod:`opweave.graph.rewriting.graph`) decides which nodes to show it and
applies what it returns.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from opweave.graph.basic import Apply, Variable
from opweave.graph.features import DestroyHandler
from opweave.graph.op import Op
from opweave.graph.trace import traces_of

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph

#: What :meth:`NodeRewriter.transform` returns: ``False``/``None`` (no change), one
#: replacement per output (``None`` keeps that output), or ``{old: new}`` (the key
#: ``"remove"`` may list nodes that must leave the graph).
TransformResult = Sequence[Variable | None] | dict[Any, Any] | bool | None
#: A tracked Op: an Op instance (matched by equality) or an Op class (by isinstance).
Track = Op | type
#: A requirement: a Feature class (attached fresh) or a callable ``req(fgraph)``.
Requirement = type | Callable[["FunctionGraph"], Any]

__all__ = [
    "FromFunctionNodeRewriter",
    "NodeRewriter",
    "OpPattern",
    "Rewriter",
    "SequentialNodeRewriter",
    "check_stack_trace",
    "copy_stack_trace",
    "node_rewriter",
    "op_matches",
]


class OpPattern:
    """A track matching the Ops of class ``op_type`` whose ``scalar_op`` is an instance of
    ``scalar_op`` (a class, a union of classes, or an instance, whose class is used).

    :func:`node_rewriter` turns it into ``tracks=[op_type]`` and
    ``scalar_tracks=(classes of scalar_op)``.
    """

    def __init__(self, op_type: type, scalar_op: Any = None) -> None:
        if not isinstance(op_type, type):
            raise TypeError(f"OpPattern: op_type must be an Op class, got {op_type!r}")
        self.op_type = op_type
        self.scalar_op = scalar_op

    def scalar_classes(self) -> tuple[type, ...] | None:
        """The scalar Op classes matched, or ``None`` for any."""
        sop = self.scalar_op
        if sop is None:
            return None
        if isinstance(sop, type):
            return (sop,)
        args = getattr(sop, "__args__", None)
        if args is not None and all(isinstance(a, type) for a in args):
            return tuple(args)
        return (type(sop),)

    def matches(self, op: Any) -> bool:
        """True if ``op`` is matched."""
        if not isinstance(op, self.op_type):
            return False
        classes = self.scalar_classes()
        return classes is None or isinstance(getattr(op, "scalar_op", None), classes)

    def __repr__(self) -> str:
        return f"OpPattern({self.op_type.__name__}, scalar_op={self.scalar_op!r})"


def _expand_patterns(
    tracks: list[Any], scalar_tracks: Sequence[type] | None
) -> tuple[list[Any], Sequence[type] | None]:
    """Replace the :class:`OpPattern` tracks by their Op class, folding their scalar
    classes into ``scalar_tracks`` (only when every track is a pattern with them)."""
    patterns = [t for t in tracks if isinstance(t, OpPattern)]
    if not patterns:
        return tracks, scalar_tracks
    classes: list[type] = []
    for t in patterns:
        found = t.scalar_classes()
        if found is None:
            classes = []
            break
        classes.extend(found)
    expanded = [t.op_type if isinstance(t, OpPattern) else t for t in tracks]
    if scalar_tracks is None and classes and len(patterns) == len(tracks):
        scalar_tracks = tuple(classes)
    return expanded, scalar_tracks


def op_matches(tracks: Sequence[Track] | None, op: Any) -> bool:
    """True if ``op`` is one of ``tracks`` (``None`` tracks every Op).

    An Op class in ``tracks`` matches its instances (and subclasses' instances); an
    Op instance matches Ops equal to it.
    """
    if tracks is None:
        return True
    for track in tracks:
        if isinstance(track, type):
            if isinstance(op, track):
                return True
        elif op == track:
            return True
    return False


def attach_requirements(fgraph: FunctionGraph, requirements: Sequence[Requirement]) -> None:
    """Attach each requirement to ``fgraph``.

    A Feature class is instantiated and attached (features already present make the
    attachment a no-op); any other callable is called with ``fgraph``.
    """
    for req in requirements:
        if isinstance(req, type):
            fgraph.attach_feature(req())
        elif callable(req):
            req(fgraph)
        else:
            raise TypeError(
                f"a rewrite requirement must be a Feature class or a callable taking the "
                f"FunctionGraph, got {req!r}"
            )


class Rewriter:
    """The common base of node and graph rewriters (PyTensor's name).

    Rewriters compare by identity.
    """

    name: str | None = None

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features the rewriter needs (default: none)."""

    def print_summary(self, stream: Any = None, level: int = 0, depth: int = -1) -> None:
        """Print one indented line naming the rewriter to ``stream`` (default stdout)."""
        print(f"{' ' * level}{type(self).__name__} {self} id={id(self)}", file=stream)


class NodeRewriter(Rewriter):
    """Base class of rewriters that replace the outputs of one node.

    Subclasses define :meth:`transform` and usually :meth:`tracks`.
    """

    def tracks(self) -> list[Track] | None:
        """Return the Ops (instances or classes) this rewriter applies to, or ``None`` for all."""
        return None

    def scalar_tracks(self) -> tuple[type, ...] | None:
        """Return the scalar Op classes this rewriter applies to, or ``None`` (the default)
        for no such condition.

        When given, the graph rewriters show the rewriter only the nodes whose Op wraps a
        scalar Op (has a ``scalar_op``, as an Elemwise does) that is an instance of one
        of these classes: a filter on top of :meth:`tracks`, which saves calling the
        rewriter on every other elementwise node. It must let through every node the
        rewriter could change.
        """
        return None

    def transform(self, fgraph: FunctionGraph, node: Apply) -> TransformResult:
        """Return replacements for ``node``'s outputs, or ``False``/``None`` for no change.

        Parameters
        ----------
        fgraph
            The graph ``node`` belongs to (read-only here: do not edit it).
        node
            The node to rewrite.

        Returns
        -------
        TransformResult
            ``False`` or ``None`` to leave the node alone; a list with one variable per
            output of ``node`` (``None`` keeps that output); or a dict
            ``{old variable: new variable}``, optionally with a ``"remove"`` key listing
            nodes that must be gone after the replacement.
        """
        raise NotImplementedError(f"{type(self).__name__}.transform is not defined")

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features this rewriter needs (default: none)."""

    def __str__(self) -> str:
        return getattr(self, "name", None) or type(self).__name__

    def __repr__(self) -> str:
        return str(self)


class FromFunctionNodeRewriter(NodeRewriter):
    """A :class:`NodeRewriter` made from a function ``fn(fgraph, node)``.

    Usually built with the :func:`node_rewriter` decorator.

    Parameters
    ----------
    fn
        The transform function.
    tracks
        The Ops it applies to, or ``None`` for every Op.
    requirements
        Feature classes or callables ``req(fgraph)`` to attach before rewriting.
    inplace
        The rewrite introduces destructive Ops: a
        :class:`~opweave.graph.features.DestroyHandler` is required too.
    name
        Defaults to ``fn.__name__``.
    scalar_tracks
        Scalar Op classes (see :meth:`NodeRewriter.scalar_tracks`), or ``None``.
    """

    def __init__(
        self,
        fn: Callable[[FunctionGraph, Apply], TransformResult],
        tracks: Sequence[Track] | None,
        requirements: Sequence[Requirement] = (),
        inplace: bool = False,
        name: str | None = None,
        scalar_tracks: Sequence[type] | None = None,
    ) -> None:
        self.fn = fn
        self._tracks = list(tracks) if tracks is not None else None
        self._scalar_tracks = tuple(scalar_tracks) if scalar_tracks is not None else None
        self.inplace = inplace
        requirements = list(requirements)
        if inplace:
            requirements.append(DestroyHandler)
        self.requirements = requirements
        self.name: str = str(name or getattr(fn, "__name__", None) or "FromFunctionNodeRewriter")
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def __name__(self) -> str:
        """The rewrite's name, as a function's ``__name__`` (follows :attr:`name`)."""
        return self.name

    def tracks(self) -> list[Track] | None:
        """Return the tracked Ops."""
        return self._tracks

    def scalar_tracks(self) -> tuple[type, ...] | None:
        """Return the tracked scalar Op classes."""
        return self._scalar_tracks

    def transform(
        self, fgraph: FunctionGraph, node: Apply, enforce_tracks: bool = True
    ) -> TransformResult:
        """Call the wrapped function; ``False`` for a node whose Op is not tracked.

        ``enforce_tracks=False`` calls the function whatever the node's Op.
        """
        if enforce_tracks and not op_matches(self._tracks, node.op):
            return False
        return self.fn(fgraph, node)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the requirements."""
        attach_requirements(fgraph, self.requirements)

    def __call__(self, fgraph: FunctionGraph, node: Apply) -> TransformResult:
        """Call the wrapped function (the decorated name stays usable as a function)."""
        return self.fn(fgraph, node)


def node_rewriter(
    tracks: Sequence[Track] | None,
    inplace: bool = False,
    requirements: Sequence[Requirement] = (),
    scalar_tracks: Sequence[type] | None = None,
) -> Callable[[Callable[[FunctionGraph, Apply], TransformResult]], FromFunctionNodeRewriter]:
    """Decorator turning ``fn(fgraph, node)`` into a :class:`NodeRewriter`.

    Parameters
    ----------
    tracks
        Op instances (matched by equality) or Op classes (matched by ``isinstance``)
        whose nodes the rewriter is shown; ``None`` for every node.
    inplace
        The rewrite introduces destructive Ops; requires a DestroyHandler.
    requirements
        Feature classes or callables ``req(fgraph)`` attached before rewriting.
    scalar_tracks
        Scalar Op classes: the graph rewriters show the rewriter only nodes whose Op's
        ``scalar_op`` is an instance of one (see :meth:`NodeRewriter.scalar_tracks`);
        ``None`` for no such condition.

    Examples
    --------
    ::

        @node_rewriter([neg])
        def local_neg_neg(fgraph, node):
            x = node.inputs[0]
            if x.owner is not None and x.owner.op == neg:
                return [x.owner.inputs[0]]
            return False
    """
    if tracks is not None:
        tracks, scalar_tracks = _expand_patterns(list(tracks), scalar_tracks)
        if not tracks:
            raise ValueError("tracks must list at least one Op; use None to track every Op")
        for track in tracks:
            if not (isinstance(track, Op) or (isinstance(track, type) and issubclass(track, Op))):
                raise TypeError(f"tracks must hold Op instances or Op classes, got {track!r}")

    def decorator(
        fn: Callable[[FunctionGraph, Apply], TransformResult],
    ) -> FromFunctionNodeRewriter:
        return FromFunctionNodeRewriter(
            fn, tracks, requirements=requirements, inplace=inplace, scalar_tracks=scalar_tracks
        )

    return decorator


class SequentialNodeRewriter(NodeRewriter):
    """Tries several node rewriters in turn; the first that changes the node wins.

    Parameters
    ----------
    rewriters
        The node rewriters, in the order they are tried.
    apply_all_rewrites
        PyTensor's flag: after a rewriter replaces the node's single output, the
        remaining rewriters are tried on the node computing the replacement, and the
        last replacement is returned.
    profile
        Accepted for PyTensor's signature; nothing is profiled.
    name
        A display name.
    """

    def __init__(
        self,
        *rewriters: NodeRewriter,
        apply_all_rewrites: bool = False,
        profile: bool = False,
        name: str | None = None,
    ) -> None:
        for rw in rewriters:
            if not isinstance(rw, NodeRewriter):
                raise TypeError(f"SequentialNodeRewriter takes NodeRewriters, got {rw!r}")
        self.rewriters = list(rewriters)
        self.apply_all_rewrites = bool(apply_all_rewrites)
        self.profile = bool(profile)
        self.name = name or "SequentialNodeRewriter(" + ", ".join(map(str, rewriters)) + ")"

    def tracks(self) -> list[Track] | None:
        """The union of the children's tracks (``None`` if any tracks everything)."""
        union: list[Track] = []
        for rw in self.rewriters:
            tracks = rw.tracks()
            if tracks is None:
                return None
            union.extend(t for t in tracks if not any(t is u for u in union))
        return union

    def transform(self, fgraph: FunctionGraph, node: Apply) -> TransformResult:
        """Return the result of the first child that proposes a change (with
        ``apply_all_rewrites``, of the last child in a chain of changes)."""
        for i, rw in enumerate(self.rewriters):
            if not op_matches(rw.tracks(), node.op):
                continue
            result = rw.transform(fgraph, node)
            if result is not False and result is not None:
                if self.apply_all_rewrites:
                    return self._chain(fgraph, result, self.rewriters[i + 1 :])
                return result
        return False

    @staticmethod
    def _chain(
        fgraph: FunctionGraph, result: TransformResult, rest: Sequence[NodeRewriter]
    ) -> TransformResult:
        """Try ``rest`` in turn on the node computing a single replacement."""
        for rw in rest:
            if not isinstance(result, Sequence) or len(result) != 1:
                break
            (new,) = result
            owner = getattr(new, "owner", None)
            if owner is None or not op_matches(rw.tracks(), owner.op):
                continue
            further = rw.transform(fgraph, owner)
            if (
                isinstance(further, Sequence)
                and len(further) == 1
                and further[0] is not None
                and len(owner.outputs) == 1
            ):
                result = further
        return result

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach every child's requirements."""
        for rw in self.rewriters:
            rw.add_requirements(fgraph)


def _variables(value: Any, what: str) -> list[Variable]:
    items = [value] if isinstance(value, Variable) else value
    if not isinstance(items, Sequence) or not all(isinstance(v, Variable) for v in items):
        raise TypeError(
            f"copy_stack_trace takes Variables or sequences of them; {what} is "
            f"{type(value).__name__} {value!r}"
        )
    return list(items)


def copy_stack_trace(
    from_var: Variable | Sequence[Variable], to_var: Variable | Sequence[Variable]
) -> Variable | Sequence[Variable]:
    """Append the creation traces of ``from_var`` to those of ``to_var``; return ``to_var``.

    A node rewriter calls it on its replacements so that errors about them can point to
    where the replaced variables were built. Traces live in ``var.tag.trace`` (a list of
    traces, each a list of frame tuples), as in PyTensor (:mod:`opweave.graph.trace` records
    them where variables are created).

    Parameters
    ----------
    from_var, to_var
        A variable or a sequence of variables.

    Raises
    ------
    TypeError
        If either argument is not a Variable or a sequence of Variables.
    """
    sources, targets = _variables(from_var, "from_var"), _variables(to_var, "to_var")
    traces = [trace for var in sources for trace in traces_of(var)]
    for var in targets:
        var.tag.trace = traces_of(var) + traces
    return to_var


def _nodes_to_check(fgraph: FunctionGraph, ops_to_check: Any) -> list[Apply]:
    """The nodes of ``fgraph`` that :func:`check_stack_trace` looks at."""
    if isinstance(ops_to_check, Op) or (
        isinstance(ops_to_check, type) and issubclass(ops_to_check, Op)
    ):
        ops_to_check = (ops_to_check,)
    if isinstance(ops_to_check, str):
        if ops_to_check == "last":
            return [out.owner for out in fgraph.outputs if out.owner is not None]
        if ops_to_check == "all":
            return list(fgraph.apply_nodes)
        raise ValueError(f"ops_to_check: expected 'last' or 'all', got {ops_to_check!r}")
    if isinstance(ops_to_check, tuple | list):
        instances = [o for o in ops_to_check if isinstance(o, Op)]
        classes = tuple(o for o in ops_to_check if isinstance(o, type))
        return [
            node
            for node in fgraph.apply_nodes
            if any(node.op == op for op in instances)
            or isinstance(node.op, classes)
            or isinstance(getattr(node.op, "scalar_op", None), classes)
        ]
    if callable(ops_to_check):
        return [node for node in fgraph.apply_nodes if ops_to_check(node)]
    raise ValueError(
        "ops_to_check must be 'last', 'all', an Op or Op class, a list of them, or a "
        f"function of a node; got {ops_to_check!r}"
    )


def check_stack_trace(
    f_or_fgraph: Any, ops_to_check: Any = "last", bug_print: str = "raise"
) -> bool:
    """True if every output of the nodes checked has a creation trace (PyTensor's function).

    Parameters
    ----------
    f_or_fgraph
        A :class:`~opweave.graph.fg.FunctionGraph`, or a compiled function (its
        ``maker.fgraph`` is checked).
    ops_to_check
        ``"last"`` (the nodes computing the outputs), ``"all"``, an Op instance or class,
        a list of them (a class also matches an ``Elemwise`` of that scalar Op), or a
        function ``f(node) -> bool``.
    bug_print
        What happens when no node is checked: ``"raise"`` (a ``ValueError``), ``"warn"``
        or ``"ignore"``.

    Raises
    ------
    ValueError
        For arguments of another kind, and (``bug_print="raise"``) when there is no node
        to check.
    """
    # A compiled function is recognised by its maker (compile sits above graph).
    maker = getattr(f_or_fgraph, "maker", None)
    fgraph = getattr(maker, "fgraph", None) if maker is not None else f_or_fgraph
    if not hasattr(fgraph, "apply_nodes") or not hasattr(fgraph, "outputs"):
        raise ValueError(
            "check_stack_trace: expected a FunctionGraph or a compiled function, got "
            f"{type(f_or_fgraph).__name__}"
        )
    # The checks above accept anything shaped like a FunctionGraph.
    nodes = _nodes_to_check(cast("FunctionGraph", fgraph), ops_to_check)
    if not nodes:
        msg = "check_stack_trace: none of the Ops to check is in the graph (or it is empty)"
        if bug_print == "raise":
            raise ValueError(msg)
        if bug_print == "warn":
            warnings.warn(msg, stacklevel=2)
        elif bug_print != "ignore":
            raise ValueError(f"bug_print: expected 'raise', 'warn' or 'ignore', got {bug_print!r}")
    return all(traces_of(out) for node in nodes for out in node.outputs)
