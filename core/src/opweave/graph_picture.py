"""Pictures of graphs: the Graphviz description of a graph, and its rendering.

:func:`graph_dot` writes the description (the DOT language) itself, so no Python package is
needed; :func:`render_dot` turns it into SVG, PNG, PDF... with Graphviz's ``dot`` program.
:func:`opweave.printing.pydotprint` is the user-facing function, with PyTensor's arguments.

What a picture shows: every Apply node as a box labelled with its Op, filled with the colour
of the implementation that runs it in a compiled function (Python, C, CUDA...); variables as
ellipses labelled with their name or Type and static shape (inputs green, constants pale
green, outputs blue); edges from variables to the nodes that read them, numbered by input
position when a node has several, red for an input the node destroys and blue dashed for an
input its output is a view of. With ``compact=True`` unnamed intermediate variables are not
drawn: their edge goes from the node that computes them to the node that reads them,
labelled with their Type.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.traversal import io_toposort

__all__ = ["IMPL_COLOURS", "graph_dot", "graph_html", "profile_notes", "render_dot"]

#: Fill colour of a node per implementation that runs it (unknown ones are white).
IMPL_COLOURS: Mapping[str, str] = {
    "py": "#cfe2f3",
    "c": "#d9ead3",
    "cuda": "#fce5cd",
}
_INPUT, _CONSTANT, _OUTPUT = "#b6d7a8", "#e6f4ea", "#9fc5e8"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _clip(text: str, size: int) -> str:
    return text if size <= 0 or len(text) <= size else text[: max(size - 3, 1)] + "..."


def _type_label(var: Variable) -> str:
    shape = getattr(var.type, "shape", None)
    text = str(var.type)
    if shape is not None and all(n is not None for n in shape) and str(tuple(shape)) not in text:
        text += f" {tuple(shape)}"
    return text


def _var_label(var: Variable, simple: bool) -> str:
    if isinstance(var, Constant):
        return str(var) if simple else f"{var} {var.type}"
    if var.name:
        return var.name if simple else f"{var.name} {_type_label(var)}"
    return _type_label(var)


def graph_dot(
    outputs: list[Variable],
    *,
    inputs: list[Variable] | None = None,
    compact: bool = True,
    with_ids: bool = False,
    high_contrast: bool = True,
    colour_codes: Mapping[str, str] | None = None,
    max_label_size: int = 70,
    var_with_name_simple: bool = False,
    node_impls: Mapping[Apply, str] | None = None,
    node_notes: Mapping[Apply, str] | None = None,
) -> str:
    """The DOT description of the graph computing ``outputs``.

    Parameters
    ----------
    outputs
        The graph's outputs.
    inputs
        The graph's inputs (default: the variables without owner the outputs depend on).
    compact
        Leave out unnamed intermediate variables (their Type labels the edge instead).
    with_ids
        Prefix labels with an id per node/variable (``n3``, ``v7``).
    high_contrast
        Fill nodes with their colour (``False``: colour only their outline).
    colour_codes
        Op class name -> colour, overriding the implementation's colour.
    max_label_size
        Longest label; longer ones are cut with ``...`` (``0``: never).
    var_with_name_simple
        Label named variables with their name only.
    node_impls
        Node -> the implementation that runs it, for the fill colours.
    node_notes
        Node -> a line added under its label (a profile's time, say).

    Returns
    -------
    str
        A ``digraph`` in the DOT language.
    """
    outputs = list(outputs)
    order = io_toposort(inputs or [], outputs) if inputs else io_toposort([], outputs)
    impls = node_impls or {}
    codes = dict(colour_codes or {})
    ids: dict[int, str] = {}
    lines = ["digraph G {", '  graph [rankdir="TB"];']
    out_set = {id(v) for v in outputs}

    def ident(obj: Any, prefix: str) -> str:
        key = id(obj)
        if key not in ids:
            ids[key] = f"{prefix}{len(ids)}"
        return ids[key]

    def style(colour: str | None) -> str:
        if colour is None:
            return ""
        return f', style=filled, fillcolor="{colour}"' if high_contrast else f', color="{colour}"'

    def drawn(var: Variable) -> bool:
        if var.owner is None or id(var) in out_set:
            return True
        return not compact or bool(var.name)

    def var_node(var: Variable) -> str:
        name = ident(var, "v")
        label = _clip(_var_label(var, var_with_name_simple), max_label_size)
        if with_ids:
            label = f"{name} {label}"
        if isinstance(var, Constant):
            colour: str | None = _CONSTANT
        elif var.owner is None:
            colour = _INPUT
        elif id(var) in out_set:
            colour = _OUTPUT
        else:
            colour = None
        lines.append(f"  {name} [shape=ellipse, label={_quote(label)}{style(colour)}];")
        return name

    declared: set[str] = set()

    def ensure_var(var: Variable) -> str:
        name = ident(var, "v")
        if name not in declared:
            declared.add(name)
            var_node(var)
        return name

    for node in order:
        name = ident(node, "n")
        op_name = type(node.op).__name__
        label = _clip(str(node.op), max_label_size)
        if with_ids:
            label = f"{name} {label}"
        impl = impls.get(node)
        if impl is not None:
            label += f"\n[{impl}]"
        note = (node_notes or {}).get(node)
        if note:
            label += f"\n{note}"
        colour = codes.get(op_name, IMPL_COLOURS.get(impl or "", None))
        lines.append(f"  {name} [shape=box, label={_quote(label)}{style(colour)}];")
        destroyed = {i for outs in getattr(node.op, "destroy_map", {}).values() for i in outs}
        viewed = {i for outs in getattr(node.op, "view_map", {}).values() for i in outs}
        several = len(node.inputs) > 1
        for i, var in enumerate(node.inputs):
            words = [str(i)] if several else []
            if drawn(var):
                source = ensure_var(var)
            else:
                assert var.owner is not None
                source = ident(var.owner, "n")
                words.append(_clip(_type_label(var), max_label_size))
            attrs = [f"label={_quote(' '.join(words))}"] if words else []
            if i in destroyed:
                attrs.append('color="red"')
            elif i in viewed:
                attrs.append('color="blue", style=dashed')
            edge = f" [{', '.join(attrs)}]" if attrs else ""
            lines.append(f"  {source} -> {name}{edge};")
        for var in node.outputs:
            if drawn(var):
                lines.append(f"  {name} -> {ensure_var(var)};")
    for var in outputs:
        if var.owner is None:
            ensure_var(var)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(text: str, outfile: str | os.PathLike[str] | None, format: str) -> bytes:
    """Render DOT ``text`` to ``format`` with Graphviz's ``dot`` program.

    ``format="dot"`` needs no program: the description itself is the result.

    Parameters
    ----------
    text
        A graph in the DOT language.
    outfile
        Where to write the result (``None``: write nothing, only return it).
    format
        ``"dot"``, or any output format of ``dot -T`` (``png``, ``svg``, ``pdf``...).

    Returns
    -------
    bytes
        The rendered file's content.

    Raises
    ------
    RuntimeError
        If Graphviz's ``dot`` is not installed, or fails (its message is included).
    """
    if format == "dot":
        data = text.encode()
    else:
        program = shutil.which("dot")
        if program is None:
            raise RuntimeError(
                f"pydotprint: writing {format} needs Graphviz's `dot` program, which is not on "
                "PATH. Install Graphviz (apt install graphviz, brew install graphviz or conda "
                "install graphviz), or pass format='dot' to get the graph's description."
            )
        proc = subprocess.run(
            [program, f"-T{format}"], input=text.encode(), capture_output=True, check=False
        )
        if proc.returncode != 0:
            message = proc.stderr.decode(errors="replace").strip()
            raise RuntimeError(f"pydotprint: Graphviz's dot failed for format {format}: {message}")
        data = proc.stdout
    if outfile is not None:
        Path(outfile).write_bytes(data)
    return data


def profile_notes(profile: Any, nodes: list[Apply]) -> dict[Apply, str]:
    """Per node of ``nodes``: its share of ``profile``'s time, its time per call and calls
    (a :class:`~opweave.compile.profiling.ProfileStats`)."""
    per_node: dict[Apply, tuple[float, int]] = {}
    for (_fg, node), t in profile.apply_time.items():
        calls = profile.apply_callcount.get((_fg, node), 0)
        old = per_node.get(node, (0.0, 0))
        per_node[node] = (old[0] + t, old[1] + calls)
    total = sum(t for t, _ in per_node.values()) or 1.0
    notes = {}
    for node in nodes:
        if node in per_node:
            t, calls = per_node[node]
            mean = t / calls if calls else 0.0
            notes[node] = f"{100 * t / total:.1f}% {mean * 1e6:.1f} us x {calls}"
    return notes


def graph_html(
    text: str,
    title: str,
    rows: list[tuple[str, ...]],
    header: tuple[str, ...],
) -> str:
    """An HTML page: the graph drawn by Graphviz (inline SVG, or its DOT description when
    Graphviz's ``dot`` is missing) above a table of its nodes.

    Parameters
    ----------
    text
        The graph in the DOT language.
    title
        The page's title.
    rows, header
        The table: one row per node, cells as text.
    """
    try:
        picture = render_dot(text, None, "svg").decode()
        picture = picture[picture.find("<svg") :]
    except RuntimeError as exc:
        picture = f"<p>{html.escape(str(exc))}</p><pre>{html.escape(text)}</pre>"
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}'
        "</title><style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{picture}<table><tr>{head}</tr>{body}</table>"
        "</body></html>\n"
    )
