"""Pattern rewrites: ``(op, "x", (op2, "y")) -> (op3, "y", "x")``.

Patterns are nested tuples. In an *input* pattern:

* a tuple ``(op, *sub_patterns)`` matches a variable computed by a node whose Op equals
  ``op`` (an Op instance) or is an instance of ``op`` (an Op class), and whose inputs
  match the sub-patterns one for one;
* a string binds the variable it meets; a string used twice must meet the same
  variable (or two equal constants);
* a :class:`~opweave.graph.basic.Constant` matches constants equal to it; another
  :class:`~opweave.graph.basic.Variable` matches only itself;
* a dict ``{"pattern": p, "constraint": fn}`` matches what ``p`` matches when
  ``fn(variable)`` is true.

In an *output* pattern a string is replaced by the variable bound to it, a tuple
``(fn, *args)`` by ``fn(*built args)`` (``fn`` is usually an Op instance), and any other
object is passed to ``fn`` as is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.rewriting.node import NodeRewriter, Track, TransformResult

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph

__all__ = ["PatternNodeRewriter"]


def _pattern_str(pattern: Any) -> str:
    if isinstance(pattern, tuple):
        head = pattern[0].__name__ if isinstance(pattern[0], type) else str(pattern[0])
        return f"{head}({', '.join(_pattern_str(p) for p in pattern[1:])})"
    if isinstance(pattern, dict):
        return _pattern_str(pattern["pattern"])
    return str(pattern)


class PatternNodeRewriter(NodeRewriter):
    """Replace what matches ``in_pattern`` with what ``out_pattern`` builds.

    Parameters
    ----------
    in_pattern
        A tuple whose head is an Op instance or class (see the module docstring).
    out_pattern
        The replacement: a bound name, a tuple ``(op, *args)``, or a Variable.
    allow_multiple_clients
        Also match inner nodes whose output has other clients (by default they are not
        matched, since rewriting would then duplicate work instead of removing it).
    name
        A display name; defaults to ``"in -> out"``.

    Example::

        PatternNodeRewriter((neg, (neg, "x")), "x")   # neg(neg(x)) -> x
    """

    def __init__(
        self,
        in_pattern: Any,
        out_pattern: Any,
        allow_multiple_clients: bool = False,
        name: str | None = None,
    ) -> None:
        top = in_pattern["pattern"] if isinstance(in_pattern, dict) else in_pattern
        if not isinstance(top, tuple) or not top:
            raise TypeError(
                f"in_pattern must be a tuple (op, *sub_patterns) (or a dict around one), got "
                f"{in_pattern!r}"
            )
        head = top[0]
        if not (isinstance(head, Op) or (isinstance(head, type) and issubclass(head, Op))):
            raise TypeError(f"the head of in_pattern must be an Op or Op class, got {head!r}")
        self.in_pattern = in_pattern
        self.out_pattern = out_pattern
        self.op: Track = head
        self.allow_multiple_clients = allow_multiple_clients
        self.name = name or f"{_pattern_str(in_pattern)} -> {_pattern_str(out_pattern)}"

    def tracks(self) -> list[Track]:
        """The head Op of the input pattern."""
        return [self.op]

    def op_key(self) -> Track:
        """The head Op of the input pattern (what :class:`OpKeyGraphRewriter
        <opweave.graph.rewriting.graph.OpKeyGraphRewriter>` selects nodes by)."""
        return self.op

    def match(
        self, fgraph: FunctionGraph, var: Variable, pattern: Any, bindings: dict[str, Variable]
    ) -> bool:
        """Match ``var`` against ``pattern``, adding names to ``bindings``; True on success."""
        return self._match(fgraph, var, pattern, bindings, top=True)

    def _match(
        self,
        fgraph: FunctionGraph,
        var: Variable,
        pattern: Any,
        bindings: dict[str, Variable],
        top: bool,
    ) -> bool:
        if isinstance(pattern, dict):
            constraint: Callable[[Variable], bool] = pattern.get("constraint", lambda v: True)
            return self._match(fgraph, var, pattern["pattern"], bindings, top) and bool(
                constraint(var)
            )
        if isinstance(pattern, str):
            bound = bindings.get(pattern)
            if bound is None:
                bindings[pattern] = var
                return True
            if bound is var:
                return True
            return isinstance(bound, Constant) and bound.equals(var)
        if isinstance(pattern, tuple):
            node = var.owner
            if node is None or len(node.inputs) != len(pattern) - 1:
                return False
            head = pattern[0]
            if isinstance(head, type):
                if not isinstance(node.op, head):
                    return False
            elif node.op != head:
                return False
            if not top and not self.allow_multiple_clients and len(fgraph.clients.get(var, ())) > 1:
                return False
            return all(
                self._match(fgraph, inp, sub, bindings, top=False)
                for inp, sub in zip(node.inputs, pattern[1:], strict=True)
            )
        if isinstance(pattern, Constant):
            return pattern.equals(var)
        if isinstance(pattern, Variable):
            return pattern is var
        raise TypeError(f"unsupported element in pattern: {pattern!r}")

    def build(self, pattern: Any, bindings: dict[str, Variable]) -> Any:
        """Instantiate the output ``pattern`` with ``bindings``."""
        if isinstance(pattern, str):
            if pattern not in bindings:
                raise KeyError(f"{self}: the output pattern uses {pattern!r}, which is not bound")
            return bindings[pattern]
        if isinstance(pattern, tuple):
            fn, *args = pattern
            return fn(*(self.build(a, bindings) for a in args))
        return pattern

    def transform(self, fgraph: FunctionGraph, node: Apply) -> TransformResult:
        """Return ``[replacement]`` if ``node``'s output matches the input pattern."""
        if len(node.outputs) != 1:
            return False
        out = node.outputs[0]
        bindings: dict[str, Variable] = {}
        if not self._match(fgraph, out, self.in_pattern, bindings, top=True):
            return False
        new = self.build(self.out_pattern, bindings)
        if isinstance(new, Apply):
            new = new.default_output()
        if not isinstance(new, Variable):
            raise TypeError(f"{self}: the output pattern built {new!r}, which is not a Variable")
        if new is out:
            return False
        return [new]
