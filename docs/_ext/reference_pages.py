"""Sphinx extension: the generated reference pages (capability matrix and configuration flags).

Both are written before the build reads its sources, from the same data the command line
prints: ``python -m opweave matrix`` (:func:`opweave.link.capabilities.capability_matrix`
over the installed backends' ``opweave_backend_info`` answers) and ``python -m opweave info``
(the flags of :data:`opweave.config`, including those the installed plugins add).
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

SYMBOLS = {
    "implemented": "yes",
    "partial": "partly",
    "fallback": "via another",
    "missing": "**missing**",
}


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it already holds it (keeps incremental builds fast)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def capability_page() -> str:
    """The MyST page of every Op class against every installed backend."""
    import opweave
    from opweave.link.capabilities import capability_matrix

    infos = opweave.get_plugin_manager().hook.opweave_backend_info()
    matrix = capability_matrix(infos)
    backends = sorted({name for row in matrix.values() for name in row})
    linkers = {info["name"]: ", ".join(info.get("linkers", [])) for info in infos}
    groups: dict[str, list[tuple[str, dict[str, str]]]] = defaultdict(list)
    for cls, row in matrix.items():
        module, _, name = cls.rpartition(".")
        groups[module].append((name, row))
    lines = [
        "# Which backend implements which Op",
        "",
        "This page is generated when the site is built, from the same data as",
        "`python -m opweave matrix`: every Op class that some installed backend means to cover,",
        "against every installed backend.",
        "",
        "- *yes*: the backend's own implementation runs such nodes (the class defines the",
        "  backend's method, or the backend's table entry for it, found through the class's",
        "  MRO, produces an implementation);",
        "- *partly*: the backend's own implementation runs some of them (its table entry says",
        "  so); the others run as *via another*;",
        "- *via another*: another implementation runs them (`cvm` in Python, Dask on one",
        "  worker, the GPU linker on the host), and linkers that need the backend's own",
        "  (`c`) refuse them: the class is outside the backend's scope, or its table entry",
        "  never produces an implementation;",
        "- *missing*: nothing runs them there: the class is in the backend's scope without an",
        "  entry, or no installed backend implements it.",
        "",
        "| backend | linkers |",
        "| --- | --- |",
    ]
    lines += [f"| `{b}` | {linkers.get(b, '') or '-'} |" for b in backends]
    lines.append("")
    for module in sorted(groups):
        lines += [f"## `{module}`", ""]
        lines.append("| Op class | " + " | ".join(f"`{b}`" for b in backends) + " |")
        lines.append("| --- |" + " --- |" * len(backends))
        for name, row in groups[module]:
            cells = " | ".join(SYMBOLS[row[b]] for b in backends)
            lines.append(f"| {{py:class}}`{name} <{module}.{name}>` | {cells} |")
        lines.append("")
    return "\n".join(lines)


def flags_page() -> str:
    """The reStructuredText page of every configuration flag with its default and doc."""
    import opweave

    opweave.get_plugin_manager()  # the installed plugins add their flags
    config = opweave.config
    lines = [
        "Configuration flags",
        "===================",
        "",
        "Every flag of :data:`opweave.config` with the core and the installed plugins, generated",
        "when the site is built (``python -m opweave info`` prints the same with the values in",
        "effect and where each came from). Set them in code (``opweave.config.linker = 'vm'``),",
        "for a block (``with opweave.config.change_flags(linker='py'): ...``), in",
        "``[tool.opweave]`` of ``pyproject.toml``, in ``~/.config/opweave/config.toml`` or in",
        "``OPWEAVE_FLAGS``. A double underscore in a name is a section in TOML files",
        "(``compile__progress`` is ``progress`` under ``[tool.opweave.compile]``).",
        "",
    ]
    for info in config.flags():
        param = config.param(info.name)
        default = param.default
        if info.name == "compiledir":
            default = "a per-user cache folder"
        lines += [
            f".. _flag-{info.name}:",
            "",
            f"``{info.name}``",
            "-" * (len(info.name) + 4),
            "",
            f"Default: ``{default!r}``; accepts {param.expected}.",
            "",
            textwrap.dedent(info.doc).strip(),
            "",
        ]
    return "\n".join(lines)


def write_reference_pages(app: Sphinx) -> None:
    """Write ``reference/capabilities.md`` and ``reference/flags.rst`` into the sources."""
    reference = Path(app.srcdir) / "reference"
    write_if_changed(reference / "capabilities.md", capability_page())
    write_if_changed(reference / "flags.rst", flags_page())


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the page writer."""
    app.connect("builder-inited", write_reference_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
