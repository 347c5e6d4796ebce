"""Text renderings of graphs: ``debugprint`` (``dprint``) and ``pprint``."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from opweave.graph.basic import AbstractApply, Constant, NominalVariable, Variable
from opweave.graph.fg import FrozenFunctionGraph, FunctionGraph


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

    def visit(var: Variable, prefix: str, level: int) -> None:
        typ = f" <{var.type}>" if print_type else ""
        owner = var.owner
        if owner is None:
            named = var.name or isinstance(var, Constant | NominalVariable)
            text = str(var) if named else f"<{var.type}>"
            lines.append(f"{prefix}{text}{label(var)}{typ}")
            return
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
            return
        done.add(id(owner))
        for inp in owner.inputs:
            visit(inp, prefix + " |", level + 1)

    for root in _roots(obj):
        visit(root, "", 0)
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


def pprint(var: Variable) -> str:
    """Return a one-line functional rendering of ``var``'s graph, e.g. ``mul(add(x, y), z)``."""
    if var.owner is None:
        return str(var)
    args = ", ".join(pprint(i) for i in var.owner.inputs)
    out = "" if len(var.owner.outputs) == 1 else f"[{var.index}]"
    return f"{var.owner.op}({args}){out}"
