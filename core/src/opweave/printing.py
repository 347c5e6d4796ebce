"""Renderings of graphs: ``debugprint`` (``dprint``) and ``pprint`` as text, ``pydotprint`` as
a picture."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TextIO

from opweave.configdefaults import config
from opweave.graph.basic import AbstractApply, Constant, NominalVariable, Variable
from opweave.graph.fg import FrozenFunctionGraph, FunctionGraph
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

    Returns
    -------
    str or stream
        The text when ``file="str"``; otherwise the stream written to (``sys.stdout``
        for ``None``), as PyTensor returns it.
    """
    labels: dict[int, str] = {}
    done: set[int] = set()
    lines: list[str] = []

    def label(node: Any) -> str:
        if not ids:
            return ""
        key = id(node)
        if key not in labels:
            labels[key] = f"[id {_letters(len(labels))}]"
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
        seen = id(owner) in done
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
        done.add(id(owner))
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


def pprint(var: Variable) -> str:
    """Return a one-line rendering of ``var``'s graph as math, as PyTensor's ``pp`` does.

    Elementwise arithmetic is infix and fully parenthesised (``\\dot`` for a matrix
    product), other elementwise functions, comparisons included, are called by their
    lower-case name (``gt(a, b)``), basic indexing is written with brackets, and every other
    Op is called by its name::

        >>> pprint(ot.exp(x) * 2 + x[0])
        '((exp(x) * 2) + x[0])'

    Dimension shuffles that only add or drop broadcastable axes print as their input, a
    full reversal as ``.T``.
    """
    return _render_all(var)


def _render_all(var: Variable) -> str:
    """:func:`pprint`'s text, each variable rendered once after its inputs, with a stack
    of its own rather than Python's (a graph thousands of nodes deep renders too)."""
    # How many times each variable is still to be read: its text is dropped after the last.
    remaining: dict[Variable, int] = {}
    stack = [var]
    found = {var}
    while stack:
        owner = stack.pop().owner
        if owner is None:
            continue
        for inp in owner.inputs:
            remaining[inp] = remaining.get(inp, 0) + 1
            if inp not in found:
                found.add(inp)
                stack.append(inp)
    texts: dict[Variable, str] = {}
    work = [(var, False)]
    while work:
        current, inputs_ready = work.pop()
        if current in texts:
            continue
        owner = current.owner
        if owner is None:
            texts[current] = str(current)
            continue
        if not inputs_ready:
            work.append((current, True))
            work.extend((inp, False) for inp in reversed(owner.inputs) if inp not in texts)
            continue
        args = [texts[inp] for inp in owner.inputs]
        for inp in owner.inputs:
            remaining[inp] -= 1
            if remaining[inp] == 0:
                del texts[inp]
        texts[current] = _render_node(current, args)
    return texts[var]


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


#: PyTensor's short name.
pp = pprint


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
