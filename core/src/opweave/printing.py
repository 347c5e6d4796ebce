"""Renderings of graphs: ``debugprint`` (``dprint``) and ``pprint`` as text, ``pydotprint`` as
a picture; the :class:`Print` Op, which prints values as they are computed.

``pprint`` is a :class:`PPrinter`: without printers assigned it renders a graph as one line
of math (see :meth:`PPrinter.process`); ``pprint.assign(op_or_class_or_condition, printer)``
with PyTensor's printer classes (:class:`OperatorPrinter`, :class:`PatternPrinter`,
:class:`FunctionPrinter`, :class:`IgnorePrinter`, :class:`LeafPrinter`,
:class:`ConstantPrinter`, :class:`DefaultPrinter`) changes how chosen variables print.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TextIO

from opweave.configdefaults import config
from opweave.graph.basic import AbstractApply, Apply, Constant, Node, NominalVariable, Variable
from opweave.graph.fg import FrozenFunctionGraph, FunctionGraph
from opweave.graph.op import Op
from opweave.graph.traversal import io_toposort
from opweave.graph_picture import graph_dot, graph_html, profile_notes, render_dot


def _roots(obj: Any) -> list[Variable]:
    if isinstance(obj, Variable):
        return [obj]
    if isinstance(obj, AbstractApply):
        return list(obj.outputs)
    if isinstance(obj, FunctionGraph | FrozenFunctionGraph):
        return list(obj.outputs)
    maker = getattr(obj, "maker", None)
    if maker is not None:
        return list(maker.fgraph.outputs)
    if isinstance(obj, list | tuple):
        return [v for item in obj for v in _roots(item)]
    raise TypeError(f"debugprint cannot print {type(obj).__name__}: {obj!r}")


def debugprint(
    obj: Any,
    file: TextIO | str | None = None,
    print_type: bool = False,
    depth: int = -1,
    ids: str = "id",
    print_destroy_map: bool = False,
    print_view_map: bool = False,
    used_ids: dict[Any, str] | None = None,
    done: dict[Any, str] | None = None,
) -> Any:
    """Print ``obj``'s graph as an indented tree, one node per line.

    Parameters
    ----------
    obj
        A Variable, Apply, FunctionGraph (frozen or not), compiled function, or a list of
        them. Ops print under the names PyTensor gives them (``Add``, ``Sum{axes=None}``,
        ``ExpandDims{axis=0}``).
    file
        Where to write; ``"str"`` returns the text without printing, ``None`` is stdout.
    print_type
        Append each variable's Type.
    depth
        Maximum depth (``-1``: unlimited).
    ids
        ``"id"`` labels nodes with short ids so shared subgraphs are recognisable;
        ``""`` prints none.
    print_destroy_map, print_view_map
        Append a node's ``destroy_map`` (`` d={0: [0]}``) or ``view_map``
        (`` v={0: [0]}``) when it has one, as PyTensor does: an in-place Op prints under
        the same name as the other.
    used_ids
        Filled with each printed Apply node and leaf Variable -> its label (``"[id A]"``),
        as :func:`get_node_by_id` reads them.
    done
        Each Apply node and leaf Variable printed -> its label, read and filled in
        (PyTensor's argument): several calls given the same dict share their labels, and a
        node an earlier call printed is written again, followed by ``...``, rather than in full.

    Returns
    -------
    str or stream
        The text when ``file="str"``; otherwise the stream written to (``sys.stdout``
        for ``None``), as PyTensor returns it.
    """
    shared = done
    labels: dict[int, str] = {id(node): text for node, text in (shared or {}).items()}
    done_ids: set[int] = {id(node) for node in shared or ()}
    lines: list[str] = []

    def label(node: Any) -> str:
        if not ids:
            return ""
        key = id(node)
        if key not in labels:
            labels[key] = f"[id {_letters(len(labels))}]"
            if used_ids is not None:
                used_ids[node] = labels[key]
            if shared is not None:
                shared[node] = labels[key]
        return " " + labels[key]

    def line(var: Variable, prefix: str, level: int) -> list[Variable]:
        """Write ``var``'s line; return the inputs to print below it."""
        typ = f" <{var.type}>" if print_type else ""
        owner = var.owner
        if owner is None:
            named = var.name or isinstance(var, Constant | NominalVariable)
            text = str(var) if named else f"<{var.type}>"
            lines.append(f"{prefix}{text}{label(var)}{typ}")
            return []
        out = "" if len(owner.outputs) == 1 else f".{var.index}"
        name = f" '{var.name}'" if var.name else ""
        seen = id(owner) in done_ids
        maps = ""
        for wanted, attr, tag in (
            (print_destroy_map, "destroy_map", "d"),
            (print_view_map, "view_map", "v"),
        ):
            mapping = getattr(owner.op, attr, None) if wanted else None
            if mapping:
                maps += f" {tag}={dict(mapping)}"
        lines.append(
            f"{prefix}{owner.op}{out}{label(owner)}{name}{typ}{maps}{' ...' if seen else ''}"
        )
        if seen or level == depth:
            return []
        done_ids.add(id(owner))
        return list(owner.inputs)

    # Depth first, each node before its inputs, with a stack of its own rather than
    # Python's: a graph thousands of nodes deep prints like a shallow one.
    stack = [(root, "", 0) for root in reversed(_roots(obj))]
    while stack:
        var, prefix, level = stack.pop()
        below = line(var, prefix, level)
        stack.extend((inp, prefix + " |", level + 1) for inp in reversed(below))
    text = "\n".join(lines)
    if file == "str":
        return text
    stream = sys.stdout if file is None else file
    print(text, file=stream)  # type: ignore[arg-type]
    return stream  # as PyTensor: the stream written to (a REPL does not echo the tree)


def _letters(n: int) -> str:
    letters = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        letters = chr(65 + r) + letters
    return letters


#: Short alias, as in PyTensor.
dprint = debugprint


def _dprint_method(self: Node | FunctionGraph, **kwargs: Any) -> Any:
    """:func:`~opweave.printing.debugprint` of this node or graph; ``kwargs`` go to it."""
    return debugprint(self, **kwargs)


# PyTensor offers ``dprint`` on every graph object (``var.dprint()``, ``fgraph.dprint()``);
# graphs are the floor below the printer, so the printer gives the method when it is imported
# (``import opweave`` imports it).
Node.dprint = _dprint_method  # type: ignore[method-assign]
FunctionGraph.dprint = _dprint_method  # type: ignore[method-assign]


#: Elementwise scalar Ops written as infix operators, by class name.
_INFIX = {
    "Add": "+",
    "Sub": "-",
    "Mul": "*",
    "TrueDiv": "/",
    "IntDiv": "//",
    "Mod": "%",
    "Pow": "**",
    "AND": "&",
    "OR": "|",
    "XOR": "^",
}
_PREFIX = {"Neg": "-", "Invert": "~"}


def _render_node(var: Variable, args: list[str]) -> str:
    """:func:`pprint`'s text of ``var`` (which has an owner), given its inputs' texts."""
    owner = var.owner
    assert owner is not None
    out = "" if len(owner.outputs) == 1 else f"[{var.index}]"
    kind = {c.__name__ for c in type(owner.op).__mro__}
    order = getattr(owner.op, "new_order", None)
    if "DimShuffle" in kind and order is not None:
        kept = [i for i in order if i != "x"]
        if kept == sorted(kept):  # only broadcastable axes added (or dropped)
            return args[0]
        if list(order) == list(range(len(order)))[::-1]:
            return f"{args[0]}.T"
    if "Dot" in kind and len(args) == 2:
        return f"({args[0]} \\dot {args[1]})"
    scalar_op = getattr(owner.op, "scalar_op", None) if "Elemwise" in kind else None
    if scalar_op is not None and not out:
        name = type(scalar_op).__name__
        if name in _INFIX and len(args) >= 2:
            return "(" + f" {_INFIX[name]} ".join(args) + ")"
        if name in _PREFIX and len(args) == 1:
            return f"{_PREFIX[name]}{args[0]}"
        if type(scalar_op).__module__.startswith("opweave.scalar"):
            return f"{str(scalar_op).lower()}({', '.join(args)})"
    text = str(owner.op)
    if type(owner.op).__name__ == "Subtensor" and len(args) == 1 and text.endswith("}"):
        return f"{args[0]}[{text[text.index('{') + 1 : -1]}]"
    return f"{text}({', '.join(args)}){out}"


def pydotprint(
    fct: Any,
    outfile: str | os.PathLike[str] | None = None,
    compact: bool = True,
    format: str = "png",
    with_ids: bool = False,
    high_contrast: bool = True,
    cond_highlight: Any = None,
    colorCodes: dict[str, str] | None = None,
    max_label_size: int = 70,
    scan_graphs: bool = False,
    var_with_name_simple: bool = False,
    print_output_file: bool = True,
    return_image: bool = False,
) -> Any:
    """Draw the graph of a compiled function (or of variables) with Graphviz.

    Nodes are boxes labelled with their Op; in a compiled function each is filled with the
    colour of the implementation that runs it (Python, C, CUDA), named under the label.
    Variables are ellipses with their name or Type and static shape (inputs green, outputs
    blue); an edge into a node is red when the node destroys that input, blue and dashed
    when its output is a view of it. :mod:`opweave.graph_picture` describes the drawing.

    Parameters
    ----------
    fct
        A compiled function, a FunctionGraph, a Variable or a list of Variables.
    outfile
        The file to write (default: ``opweave.pydotprint.<format>`` in ``config.compiledir``).
    compact
        Leave out unnamed intermediate variables (their Type labels the edge).
    format
        ``"dot"`` for the graph's description (no program needed), ``"html"`` for a page
        with the picture (when Graphviz is installed; else the description) and a table of
        the nodes, with each node's share of the time when ``fct`` was compiled with
        ``profile=True``, or any format of Graphviz's ``dot -T`` (``png``, ``svg``,
        ``pdf``...), which needs Graphviz installed.
    with_ids
        Prefix labels with ids.
    high_contrast
        Fill nodes with their colour (``False``: colour their outline).
    cond_highlight, scan_graphs
        Highlighting of conditional branches and drawing of loop bodies: not available;
        they must stay ``None``/``False``.
    colorCodes
        Op class name -> colour, overriding the implementation's colour.
    max_label_size
        Longest label (longer ones are cut).
    var_with_name_simple
        Label named variables with their name only.
    print_output_file
        Print the path written.
    return_image
        Return the rendered bytes instead of writing ``outfile``.

    Returns
    -------
    bytes or None
        The image when ``return_image``.

    Raises
    ------
    RuntimeError
        If the format needs Graphviz's ``dot`` program and it is missing (the message says
        how to install it), or it fails.
    NotImplementedError
        If ``cond_highlight`` or ``scan_graphs`` is asked for.
    """
    if cond_highlight:
        raise NotImplementedError("pydotprint: cond_highlight is not available")
    if scan_graphs:
        raise NotImplementedError("pydotprint: scan_graphs is not available")
    maker = getattr(fct, "maker", None)
    fgraph = maker.fgraph if maker is not None else fct
    if isinstance(fgraph, FunctionGraph | FrozenFunctionGraph):
        outputs, inputs = list(fgraph.outputs), list(fgraph.inputs)
    else:
        outputs, inputs = _roots(fct), None
    text_options: dict[str, Any] = {
        "compact": compact,
        "with_ids": with_ids,
        "high_contrast": high_contrast,
        "colour_codes": colorCodes,
        "max_label_size": max_label_size,
        "var_with_name_simple": var_with_name_simple,
    }
    text = graph_dot(
        outputs,
        inputs=inputs,
        node_impls=getattr(maker, "node_impls", None),
        **text_options,
    )
    if format == "html":
        page = _html_page(fct, outputs, inputs, maker, text_options)
        if return_image:
            return page.encode()
        if outfile is None:
            outfile = os.path.join(config.compiledir, "opweave.pydotprint.html")
        Path(outfile).write_text(page, encoding="utf-8")
        if print_output_file:
            print(f"The output file is available at {outfile}")
        return None
    if return_image:
        return render_dot(text, None, format)
    if outfile is None:
        outfile = os.path.join(config.compiledir, f"opweave.pydotprint.{format}")
    render_dot(text, outfile, format)
    if print_output_file:
        print(f"The output file is available at {outfile}")
    return None


def _html_page(
    fct: Any, outputs: list[Variable], inputs: Any, maker: Any, options: dict[str, Any]
) -> str:
    """The ``format="html"`` page of :func:`pydotprint`: the picture, with profile times
    on the nodes when ``fct`` is profiled, and a table of its nodes."""
    nodes = list(maker.fgraph.toposort()) if maker is not None else []
    profile = getattr(fct, "profile", None)
    notes = profile_notes(profile, nodes) if profile is not None else {}
    impls = getattr(maker, "node_impls", None) or {}
    text = graph_dot(outputs, inputs=inputs, node_impls=impls, node_notes=notes, **options)
    header = ("#", "node", "implementation", "profile")
    rows = [
        (str(i), str(node), impls.get(node, ""), notes.get(node, ""))
        for i, node in enumerate(nodes)
    ]
    title = f"opweave graph of {getattr(fct, 'name', None) or 'a function'}"
    return graph_html(text, title, rows, header)


# ====================================================================== small helpers

#: The id schemes of PyTensor's ``debugprint`` (opweave prints letters, ``"CHAR"``).
IDTypesType = Literal["id", "int", "CHAR", "auto", ""]

#: The associativities an :class:`OperatorPrinter` accepts.
VALID_ASSOC = frozenset({"left", "right", "either"})

#: Node colours of ``pydotprint`` by Op class name (PyTensor's defaults; pass a copy,
#: changed, as ``colorCodes``).
default_colorCodes: Mapping[str, str] = MappingProxyType(  # noqa: N816 - PyTensor's name
    {
        "Scan": "yellow",
        "Shape": "brown",
        "IfElse": "magenta",
        "Elemwise": "#FFAABB",
        "Subtensor": "#FFAAFF",
        "Alloc": "#FFAA22",
        "Output": "blue",
    }
)

#: Whether printers write Greek variable names and symbols in ASCII (``\\alpha``).
use_ascii = True
_GREEK = MappingProxyType(
    {name: f"\\{name}" for name in ("alpha", "beta", "gamma", "delta", "epsilon")}
)


def char_from_number(number: int) -> str:
    """``number`` in base 26 with the digits ``A``-``Z`` (0 is ``"A"``, 27 is ``"BB"``).

    Parameters
    ----------
    number
        A non-negative integer.
    """
    if number < 0:
        raise ValueError(f"char_from_number: expected a non-negative integer, got {number}")
    digits = []
    while True:
        number, digit = divmod(number, 26)
        digits.append(chr(ord("A") + digit))
        if number == 0:
            return "".join(reversed(digits))


@functools.singledispatch
def op_debug_information(op: Op, node: Apply) -> dict[Apply, dict[Variable, str]]:
    """Extra text about ``node``'s inputs and outputs, by Op type (PyTensor's hook).

    Register an implementation for an Op class with ``op_debug_information.register``; it
    returns ``{node: {variable: text}}``. The default has nothing to add. opweave's
    :func:`debugprint` does not print this information.
    """
    return {}


def get_node_by_id(
    graphs: Any, target_var_id: str, id_types: IDTypesType = "CHAR"
) -> Variable | Apply | None:
    """The Apply node or leaf Variable that :func:`debugprint` labels ``[id target_var_id]``.

    Parameters
    ----------
    graphs
        What :func:`debugprint` accepts (Variables, a FunctionGraph, a compiled function).
    target_var_id
        The label's letters (``"B"``).
    id_types
        ``"CHAR"`` (or ``"id"``/``"auto"``): the letter labels opweave prints.

    Raises
    ------
    ValueError
        For the ``"int"`` or ``""`` id schemes, which opweave does not print.
    """
    if id_types not in ("CHAR", "id", "auto"):
        raise ValueError(
            f"get_node_by_id: id_types={id_types!r} is not supported; opweave labels nodes "
            "with letters (id_types='CHAR')"
        )
    used: dict[Any, str] = {}
    debugprint(graphs, file="str", used_ids=used)
    wanted = f"[id {target_var_id}]"
    return next((obj for obj, label in used.items() if label == wanted), None)


def min_informative_str(
    obj: Any,
    indent_level: int = 0,
    _prev_obs: dict[int, str] | None = None,
    _tag_generator: Iterator[str] | None = None,
) -> str:
    """A short tree of ``obj``'s graph, expanded only down to named variables and constants.

    Each object gets a letter tag (``A.``, ``B.``, ...); one seen before prints as
    ``<A>``; each level of inputs is indented one more space.

    Parameters
    ----------
    obj
        A Variable (or any object; arrays print as ``<ndarray>``).
    indent_level
        The indentation of the first line.
    """
    seen = {} if _prev_obs is None else _prev_obs
    tags = _tag_generator if _tag_generator is not None else map(char_from_number, _count())
    indent = " " * indent_level
    if id(obj) in seen:
        return f"{indent}<{seen[id(obj)]}>"
    tag = next(tags)
    seen[id(obj)] = tag
    if hasattr(obj, "__array__"):
        name = "<ndarray>"
    elif getattr(obj, "name", None) is not None:
        name = obj.name
    elif getattr(obj, "owner", None) is not None:
        below = [min_informative_str(ipt, indent_level + 1, seen, tags) for ipt in obj.owner.inputs]
        name = "\n".join([str(obj.owner.op), *below])
    else:
        name = str(obj)
    return f"{indent}{tag}. {name}"


def _count() -> Iterator[int]:
    n = 0
    while True:
        yield n
        n += 1


# ====================================================================== the Print Op


def _print_fn(op: Print, xin: Any) -> None:
    """Print ``op.message``, then each attribute of ``op.attrs`` of the value (called if
    callable)."""
    for attr in op.attrs:
        value = getattr(xin, attr)
        print(op.message, attr, "=", value() if callable(value) else value)


class Print(Op):
    """The identity that prints its value when it runs.

    Each time the node is computed it calls ``global_fn(op, value)``; the default prints
    ``message`` and, for each name in ``attrs``, that attribute of the value (called when
    callable: ``"__str__"``, ``"shape"``, ...). The output is the input (a view). The node
    is never constant-folded; it can hide a pattern from rewrites
    (``log(1 + Print()(x))`` is not turned into ``log1p``).

    Parameters
    ----------
    message
        Printed before each attribute.
    attrs
        The attribute names printed.
    global_fn
        ``fn(op, value)``, called instead of the default printing.
    """

    view_map = {0: [0]}
    __props__ = ("message", "attrs", "global_fn")

    def __init__(
        self,
        message: str = "",
        attrs: Sequence[str] = ("__str__",),
        global_fn: Callable[[Print, Any], None] = _print_fn,
    ) -> None:
        if isinstance(attrs, str):
            raise TypeError(f"Print: attrs must be a sequence of names, got the string {attrs!r}")
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def make_node(self, xin: Any) -> Apply:
        """One Variable in, one of its Type out.

        Raises
        ------
        TypeError
            If ``xin`` is not a Variable.
        """
        if not isinstance(xin, Variable):
            raise TypeError(f"Print expects a symbolic Variable, got {type(xin).__name__} {xin!r}")
        return Apply(self, [xin], [xin.type()])

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The identity's: the output gradient."""
        return list(output_grads)

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The identity's: the eval point."""
        return list(eval_points)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return list(shapes)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Never: the printing must happen when the function runs."""
        return False


# ====================================================================== pretty printers


class PrinterState:
    """What printers share while rendering one graph: ``pprinter`` (the :class:`PPrinter`
    in use), ``memo`` (variable -> text already made), ``precedence`` and any other
    attribute given.

    Parameters
    ----------
    props
        A mapping or another PrinterState whose attributes are copied.
    **more_props
        More attributes.
    """

    pprinter: Any
    precedence: Any

    def __init__(self, props: Any = None, **more_props: Any) -> None:
        if isinstance(props, PrinterState):
            self.__dict__.update(props.__dict__)
        elif props is not None:
            self.__dict__.update(props)
        self.__dict__.update(more_props)
        self.memo: dict[Variable, str] = {}


class Printer(ABC):
    """Renders one kind of variable as text."""

    @abstractmethod
    def process(self, var: Variable, pstate: PrinterState) -> str:
        """The text of ``var`` (inputs rendered through ``pstate.pprinter``)."""


@contextlib.contextmanager
def set_precedence(pstate: PrinterState, precedence: int = -1000) -> Iterator[None]:
    """Set ``pstate.precedence`` for the duration of the block."""
    old = getattr(pstate, "precedence", None)
    pstate.precedence = precedence
    try:
        yield
    finally:
        pstate.precedence = old


def _owner_of(var: Variable, what: str) -> Apply:
    if var.owner is None:
        raise TypeError(
            f"{what} cannot represent {var}, a variable that is not the result of an operation"
        )
    return var.owner


def _inputs_text(pstate: PrinterState, node: Apply, precedences: Sequence[float]) -> list[str]:
    texts = []
    for inp, precedence in zip(node.inputs, precedences, strict=True):
        with set_precedence(pstate, precedence):  # type: ignore[arg-type]
            texts.append(pstate.pprinter.process(inp, pstate))
    return texts


class OperatorPrinter(Printer):
    """Renders a node as its inputs joined by an operator, in parentheses (``(a + b)``), or
    the operator before its single input (``-a``).

    Parameters
    ----------
    operator
        The operator's text.
    precedence
        Its precedence (given to the inputs' printers as ``pstate.precedence``).
    assoc
        ``"left"``, ``"right"`` or ``"either"``.
    """

    def __init__(self, operator: str, precedence: float, assoc: str = "left") -> None:
        if assoc not in VALID_ASSOC:
            raise ValueError(f"OperatorPrinter: assoc must be one of {sorted(VALID_ASSOC)}")
        self.operator = operator
        self.precedence = precedence
        self.assoc = assoc

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """``(a op b op ...)`` or ``(op a)``."""
        if var in pstate.memo:
            return pstate.memo[var]
        node = _owner_of(var, f"operator {self.operator}")
        last = len(node.inputs) - 1
        precedences = [
            self.precedence
            + (1e-6 if (self.assoc == "left" and i) or (self.assoc == "right" and i != last) else 0)
            for i in range(len(node.inputs))
        ]
        texts = _inputs_text(pstate, node, precedences)
        body = self.operator + texts[0] if len(texts) == 1 else f" {self.operator} ".join(texts)
        pstate.memo[var] = f"({body})"
        return pstate.memo[var]


class PatternPrinter(Printer):
    """Renders a node with a ``%``-pattern per output, its inputs named ``%(0)s``,
    ``%(1)s``, ...

    Parameters
    ----------
    *patterns
        One per output: a pattern string, or ``(pattern, precedence of input 0, ...)``.
    """

    def __init__(self, *patterns: str | tuple[Any, ...]) -> None:
        self.patterns = [(p, ()) if isinstance(p, str) else (p[0], tuple(p[1:])) for p in patterns]

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """The output's pattern with its inputs' texts."""
        if var in pstate.memo:
            return pstate.memo[var]
        node = _owner_of(var, f"patterns {self.patterns}")
        pattern, precedences = self.patterns[node.outputs.index(var)]
        precedences = precedences + (1000,) * (len(node.inputs) - len(precedences))
        texts = _inputs_text(pstate, node, precedences)
        pstate.memo[var] = pattern % {str(i): t for i, t in enumerate(texts)}
        return pstate.memo[var]


class FunctionPrinter(Printer):
    """Renders a node as a call, ``name(inputs, keyword=value)``.

    Parameters
    ----------
    names
        The function name for each output.
    keywords
        Op attributes written as keywords after the inputs.
    """

    def __init__(self, names: list[str], keywords: list[str] | None = None) -> None:
        self.names = names
        self.keywords = keywords or []

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """``name(a, b, kw=value)``."""
        if var in pstate.memo:
            return pstate.memo[var]
        node = _owner_of(var, f"function {self.names}")
        name = self.names[node.outputs.index(var)]
        texts = _inputs_text(pstate, node, [-1000] * len(node.inputs))
        texts += [f"{kw}={getattr(node.op, kw)}" for kw in self.keywords]
        pstate.memo[var] = f"{name}({', '.join(texts)})"
        return pstate.memo[var]


class IgnorePrinter(Printer):
    """Renders a node as its first input (for Ops that do not change the value's meaning)."""

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """The first input's text."""
        if var in pstate.memo:
            return pstate.memo[var]
        node = _owner_of(var, "IgnorePrinter")
        pstate.memo[var] = pstate.pprinter.process(node.inputs[0], pstate)
        return pstate.memo[var]


class LeafPrinter(Printer):
    """Renders a variable by its own text (Greek names as ``\\alpha``, ...)."""

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """``str(var)``, or the Greek letter its name spells."""
        if var in pstate.memo:
            return pstate.memo[var]
        pstate.memo[var] = _GREEK.get(var.name or "", str(var))
        return pstate.memo[var]


class ConstantPrinter(Printer):
    """Renders a constant by its value."""

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """``str(var.data)``."""
        if var in pstate.memo:
            return pstate.memo[var]
        pstate.memo[var] = str(var.data)  # type: ignore[attr-defined]
        return pstate.memo[var]


class DefaultPrinter(Printer):
    """Renders a node as ``Op(inputs)`` and a leaf as itself."""

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """``str(op)(a, b)``, or the leaf's text."""
        if var in pstate.memo:
            return pstate.memo[var]
        node = var.owner
        if node is None:
            return leaf_printer.process(var, pstate)
        texts = _inputs_text(pstate, node, [-1000] * len(node.inputs))
        pstate.memo[var] = f"{node.op}({', '.join(texts)})"
        return pstate.memo[var]


leaf_printer = LeafPrinter()
constant_printer = ConstantPrinter()
default_printer = DefaultPrinter()

Condition = Callable[[PrinterState, Variable], bool]


class PPrinter(Printer):
    """A pretty printer: the printer of a variable is the one assigned to its node's Op (or
    Op class), else the first condition (latest assigned first) that holds, else opweave's
    math rendering (infix arithmetic, ``exp(x)``, ``x[0]``, ``y.T``, ``Op(inputs)``).

    Graphs of any depth render: the variables below are rendered first, bottom up, without
    recursion.
    """

    def __init__(self) -> None:
        self.printers: list[tuple[Condition, Printer]] = []
        self.printers_dict: dict[Any, Printer] = {}

    def assign(self, condition: Op | type | Condition, printer: Printer) -> None:
        """Use ``printer`` for the outputs of an Op (or Op class), or for the variables
        where ``condition(pstate, var)`` holds."""
        if isinstance(condition, Op | type):
            self.printers_dict[condition] = printer
        else:
            self.printers.insert(0, (condition, printer))

    def clone(self) -> PPrinter:
        """A copy whose assignments can change independently."""
        new = copy.copy(self)
        new.printers = list(self.printers)
        new.printers_dict = dict(self.printers_dict)
        return new

    def clone_assign(self, condition: Op | type | Condition, printer: Printer) -> PPrinter:
        """A copy with one more assignment."""
        new = self.clone()
        new.assign(condition, printer)
        return new

    def _printer_for(self, pstate: PrinterState, var: Variable) -> Printer | None:
        owner = var.owner
        if owner is not None:
            for key in (owner.op, type(owner.op)):
                with contextlib.suppress(TypeError):  # unhashable Ops are never keys
                    if key in self.printers_dict:
                        return self.printers_dict[key]
        return next((p for cond, p in self.printers if cond(pstate, var)), None)

    def _state(self, pstate: Any) -> PrinterState:
        if pstate is None:
            return PrinterState(pprinter=self)
        if isinstance(pstate, dict):
            return PrinterState(pprinter=self, **pstate)
        return pstate  # type: ignore[no-any-return]

    def process(self, r: Variable, pstate: PrinterState | dict[str, Any] | None = None) -> str:
        """The text of ``r``.

        Parameters
        ----------
        r
            The variable.
        pstate
            The state shared with the printers (a new one when ``None``; a dict gives its
            attributes).
        """
        state = self._state(pstate)
        memo = state.memo
        if r in memo:
            return memo[r]
        uses: dict[Variable, int] = {}
        stack, found = [r], {r}
        while stack:
            owner = stack.pop().owner
            for inp in owner.inputs if owner is not None else ():
                uses[inp] = uses.get(inp, 0) + 1
                if inp not in found and inp not in memo:
                    found.add(inp)
                    stack.append(inp)
        made: set[Variable] = set()
        work = [(r, False)]
        while work:
            var, inputs_done = work.pop()
            if var in memo:
                continue
            owner = var.owner
            if owner is not None and not inputs_done:
                work.append((var, True))
                work.extend((inp, False) for inp in reversed(owner.inputs) if inp not in memo)
                continue
            memo[var] = self._render(var, state)
            made.add(var)
            for inp in owner.inputs if owner is not None else ():
                uses[inp] -= 1
                if uses[inp] == 0 and inp in made and inp is not r:
                    memo.pop(inp, None)  # a long chain keeps only what is still to be read
        return memo[r]

    def _render(self, var: Variable, pstate: PrinterState) -> str:
        printer = self._printer_for(pstate, var)
        if printer is not None:
            return printer.process(var, pstate)
        if var.owner is None:
            return str(var)
        args = [pstate.memo.get(i) or self.process(i, pstate) for i in var.owner.inputs]
        return _render_node(var, args)

    def process_graph(
        self,
        inputs: Any,
        outputs: Any,
        updates: Mapping[Variable, Variable] | None = None,
        display_inputs: bool = False,
    ) -> str:
        """A program-like rendering: one line per named variable and output
        (``name = text``, ``return text`` for a single output) and per update
        (``shared <- text``), named variables printed by name in the others' texts.

        Parameters
        ----------
        inputs, outputs
            A variable or a list of them.
        updates
            Shared variable -> its new value.
        display_inputs
            Start with a line listing the inputs.
        """
        updates = dict(updates or {})
        inputs = list(inputs) if isinstance(inputs, list | tuple) else [inputs]
        outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
        current: list[Variable | None] = [None]
        printer = self.clone_assign(
            lambda pstate, r: r.name is not None and r is not current[0], leaf_printer
        )
        lines: list[tuple[int, str]] = []
        if display_inputs:
            lines.append((0, "inputs: " + ", ".join(str(x) for x in [*inputs, *updates])))
        update_of = {new: old for old, new in updates.items()}
        counter = 1
        for node in io_toposort([*inputs, *updates], [*outputs, *updates.values()]):
            for out in node.outputs:
                if out in update_of:
                    lines.append((counter + 1000, f"{update_of[out]} <- {printer.process(out)}"))
                    counter += 1
                if out.name is None and out not in outputs:
                    continue
                current[0] = out
                position = counter if out not in outputs else 2000 + outputs.index(out)
                text = printer.process(out)
                if len(outputs) == 1 and outputs[0] is out:
                    lines.append((position, f"return {text}"))
                else:
                    name = out.name if out.name is not None else f"out[{outputs.index(out)}]"
                    lines.append((position, f"{name} = {text}"))
                counter += 1
        return "\n".join(text for _, text in sorted(lines, key=lambda item: item[0]))

    def __call__(self, *args: Any) -> str:
        """``pprint(var)``, ``pprint(var, pstate)`` or ``pprint(inputs, outputs, updates)``."""
        if len(args) == 1 or (len(args) == 2 and isinstance(args[1], PrinterState | dict)):
            return self.process(*args)
        if len(args) > 2:
            return self.process_graph(*args)
        raise TypeError(
            "pprint takes a variable (and optionally a PrinterState), or inputs, outputs "
            "and updates"
        )


#: The pretty printer: ``pprint(ot.exp(x) * 2)`` -> ``'(exp(x) * 2)'``.
pprint = PPrinter()
#: PyTensor's short name.
pp = pprint
