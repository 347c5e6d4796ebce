"""Sphinx extension: write the API reference pages before the build reads its sources.

One page per public module (``docs/api/<module>.rst``): the module's docstring, a summary
table of what it defines, then every class, function and data item with its docstring.
Names a module only re-exports are listed with a link to where they are defined, so each
object is described once. A module that does not import (a part of the library still being
written, or a backend whose optional dependency is absent) is left out of the reference
instead of failing the build; the index lists the modules that were documented.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from reference_pages import write_if_changed
from sphinx.application import Sphinx
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The sections of the reference and their modules, in reading order.
SECTIONS: dict[str, list[str]] = {
    "The opweave package": ["opweave"],
    "Tensors": [
        "opweave.tensor",
        "opweave.tensor.basic",
        "opweave.tensor.math",
        "opweave.tensor.elemwise",
        "opweave.tensor.blas",
        "opweave.tensor.shape",
        "opweave.tensor.subtensor",
        "opweave.tensor.extra_ops",
        "opweave.tensor.sort",
        "opweave.tensor.einsum",
        "opweave.tensor.linalg",
        "opweave.tensor.nlinalg",
        "opweave.tensor.slinalg",
        "opweave.tensor.special",
        "opweave.tensor.random",
        "opweave.tensor.random.basic",
        "opweave.tensor.random.utils",
        "opweave.tensor.random.rewriting",
        "opweave.tensor.blockwise",
        "opweave.tensor.functional",
        "opweave.tensor.type_other",
        "opweave.tensor.utils",
        "opweave.tensor.rewriting.basic",
        "opweave.raise_op",
        "opweave.sparse",
        "opweave.updates",
        "opweave.tensor.type",
        "opweave.tensor.variable",
        "opweave.tensor.sharedvar",
    ],
    "Named-dimension tensors": [
        "opweave.xtensor",
        "opweave.xtensor.type",
        "opweave.xtensor.basic",
        "opweave.xtensor.math",
        "opweave.xtensor.reduction",
        "opweave.xtensor.shape",
        "opweave.xtensor.indexing",
        "opweave.xtensor.random",
        "opweave.xtensor.linalg",
        "opweave.xtensor.signal",
        "opweave.xtensor.vectorization",
        "opweave.xtensor.rewriting.plugin",
    ],
    "Scalars": [
        "opweave.scalar",
        "opweave.scalar.basic",
        "opweave.scalar.math",
        "opweave.scalar.type",
        "opweave.scalar.composite",
    ],
    "Graphs and rewriting": [
        "opweave.graph",
        "opweave.graph.basic",
        "opweave.graph.op",
        "opweave.graph.type",
        "opweave.graph.fg",
        "opweave.graph.features",
        "opweave.graph.replace",
        "opweave.graph.rewriting",
        "opweave.graph.rewriting.basic",
        "opweave.graph.rewriting.node",
        "opweave.graph.rewriting.graph",
        "opweave.graph.rewriting.db",
        "opweave.graph.rewriting.pattern",
        "opweave.graph.rewriting.utils",
    ],
    "Compiling and running": [
        "opweave.compile",
        "opweave.compile.function",
        "opweave.compile.mode",
        "opweave.compile.io",
        "opweave.compile.sharedvalue",
        "opweave.compile.ops",
        "opweave.compile.debugmode",
        "opweave.compile.profiling",
        "opweave.compile.builders",
        "opweave.compile.rewrite_cache",
        "opweave.compile.collector",
        "opweave.scan",
        "opweave.scan.rewriting",
        "opweave.scan.push_out_dot",
        "opweave.scan.utils",
        "opweave.ifelse",
    ],
    "Gradients and printing": [
        "opweave.gradient",
        "opweave.gradient.verify",
        "opweave.printing",
    ],
    "Configuration": ["opweave.configuration", "opweave.configdefaults"],
    "Running PyTensor code": ["opweave.compat"],
    "Plugins and linking": [
        "opweave.plugins",
        "opweave.plugins.hookspecs",
        "opweave.transfer",
        "opweave.link.resolver",
        "opweave.link.perform",
        "opweave.link.thunks",
        "opweave.link.loop",
        "opweave.link.deferred",
        "opweave.link.implementations",
        "opweave.link.capabilities",
        "opweave.testing",
    ],
    "Backends and the example plugin": [
        "opweave_python",
        "opweave_c",
        "opweave_c.hookspecs",
        "opweave_cuda",
        "opweave_jax",
        "opweave_jax.pytensor_link_jax.dispatch",
        "opweave_double",
    ],
}


def _import(modname: str) -> ModuleType | None:
    """The module, or ``None`` (with an info line) when it does not import."""
    try:
        return importlib.import_module(modname)
    except Exception as exc:  # a module still being written must not break the site
        logger.info("opweave_api: %s left out of the reference (%s)", modname, exc)
        return None


def _public_names(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return [n for n in names if hasattr(module, n)]


def _assigned_here(module: ModuleType, name: str) -> bool:
    """Whether ``name`` is assigned at module level in the module's own source."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return False
    return re.search(rf"^{re.escape(name)}\s*(:[^=\n]*)?=", source, re.M) is not None


def _is_api_object(obj: Any) -> bool:
    """A class or function of the opweave distributions (not of the standard library)."""
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return False
    return (getattr(obj, "__module__", None) or "").split(".")[0].startswith("opweave")


def documenting_modules(modules: dict[str, ModuleType]) -> dict[int, str]:
    """Where each class and function is described: ``id(obj)`` -> module name.

    An object is described on the page of the module defining it when that module has a
    page; otherwise (it is defined in an implementation module such as
    ``opweave.tensor.reductions``) on the page of the most specific module exporting it
    (``opweave.tensor.math`` rather than ``opweave.tensor``), so that it is described once.
    """
    homes: dict[int, str] = {}
    public = {modname: set(_public_names(module)) for modname, module in modules.items()}
    for modname, module in modules.items():
        for name in public[modname]:
            obj = getattr(module, name)
            if not _is_api_object(obj):
                continue
            defined_in = obj.__module__
            if defined_in in modules and name in public[defined_in]:
                homes[id(obj)] = defined_in
                continue
            current = homes.get(id(obj))
            if current is None or modname.count(".") > current.count("."):
                homes[id(obj)] = modname
    return homes


def classify(module: ModuleType, homes: dict[int, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """``(own, reexported)``: ``(directive, name)`` pairs described on this module's page;
    full names, on the page that describes them, of the rest."""
    own: list[tuple[str, str]] = []
    reexported: list[str] = []
    for name in _public_names(module):
        obj = getattr(module, name)
        if isinstance(obj, ModuleType):
            continue
        if _is_api_object(obj):
            home = homes.get(id(obj), obj.__module__)
            if home == module.__name__:
                own.append(("autoclass" if inspect.isclass(obj) else "autofunction", name))
            else:
                reexported.append(f"{home}.{name}")
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            continue  # a name of the standard library (typing, collections.abc ...)
        elif _assigned_here(module, name):
            own.append(("autodata", name))
    return own, reexported


def _entry(module: ModuleType, directive: str, name: str) -> list[str]:
    """The directive lines of one object of ``module``.

    A data item whose only docstring is its class's (a ``TensorType`` instance such as
    ``dmatrix``, an Op instance) is declared with its type instead of repeating the class's
    documentation, which would describe the class's attributes once per instance.
    """
    obj = getattr(module, name)
    if directive == "autoclass":
        return [f".. autoclass:: {name}", "   :members:", "   :show-inheritance:", ""]
    if directive == "autodata" and not _has_own_doc(module, name):
        cls = type(obj)
        return [
            f".. py:data:: {name}",
            f"   :type: {cls.__module__}.{cls.__qualname__}",
            "",
            f"   ``{_short_repr(obj)}``",
            "",
        ]
    return [f".. {directive}:: {name}", ""]


def _has_own_doc(module: ModuleType, name: str) -> bool:
    """Whether a data item has a ``#:`` comment or a docstring of its own (not its class's)."""
    try:
        attr_docs = ModuleAnalyzer.for_module(module.__name__).find_attr_docs()
    except PycodeError:
        attr_docs = {}
    if ("", name) in attr_docs:
        return True
    obj = getattr(module, name)
    own = obj.__dict__.get("__doc__") if hasattr(obj, "__dict__") else None
    return bool(own) and own != type(obj).__doc__


def _summarizable(obj: Any) -> bool:
    """Whether autosummary can cut the first sentence of ``obj``'s docstring cleanly.

    autosummary ends the sentence at the first ``". "``; one inside an inline literal
    (``"``a . b``"``) would cut the literal in two. Such objects are only in the reference.
    """
    first = (inspect.getdoc(obj) or "").split("\n\n")[0]
    return not any(re.search(r"\.(\s|$)", span) for span in re.findall(r"``(.*?)``", first, re.S))


def _short_repr(obj: Any) -> str:
    text = repr(obj).replace("`", "'").replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."


def module_page(modname: str, module: ModuleType, homes: dict[int, str]) -> str:
    """The reStructuredText of one module's page (``homes``: :func:`documenting_modules`)."""
    own, reexported = classify(module, homes)
    lines = [modname, "=" * len(modname), "", f".. automodule:: {modname}", ""]
    if own:
        lines += ["Summary", "-------", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [
            f"   {name}"
            for directive, name in own
            if (directive != "autodata" or _has_own_doc(module, name))
            and _summarizable(getattr(module, name))
        ]
        lines += [""]
    if own:
        lines[5:5] = [f".. currentmodule:: {modname}", ""]
    if reexported:
        lines += [
            "Re-exported names",
            "-----------------",
            "",
            "Described on the pages of the modules named here.",
            "",
        ]
        lines += [f"- :py:obj:`{full}`" for full in reexported]
        lines += [""]
    if own:
        lines += ["Reference", "---------", ""]
        for directive, name in own:
            lines += _entry(module, directive, name)
    return "\n".join(lines)


def write_api_pages(app: Sphinx) -> None:
    """Write ``api/<module>.rst`` for every importable module and ``api/index.rst``."""
    api = Path(app.srcdir) / "api"
    index = ["API reference", "=============", ""]
    index += [
        "One page per public module. Objects are described on the page of the module that",
        "defines them; packages list what they re-export with links.",
        "",
    ]
    written: set[str] = set()
    modules = {m: mod for ms in SECTIONS.values() for m in ms if (mod := _import(m)) is not None}
    homes = documenting_modules(modules)
    for section, modnames in SECTIONS.items():
        present = [(m, modules[m]) for m in modnames if m in modules]
        if not present:
            continue
        index += [section, "-" * len(section), "", ".. toctree::", "   :maxdepth: 1", ""]
        for modname, module in present:
            write_if_changed(api / f"{modname}.rst", module_page(modname, module, homes))
            index.append(f"   {modname}")
            written.add(f"{modname}.rst")
        index.append("")
    write_if_changed(api / "index.rst", "\n".join(index))
    for stale in api.glob("*.rst"):
        if stale.name != "index.rst" and stale.name not in written:
            stale.unlink()


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the page writer."""
    app.connect("builder-inited", write_api_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
