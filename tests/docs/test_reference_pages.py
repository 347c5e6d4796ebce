"""The generated pages of the documentation site say what the installed packages say.

The extensions in ``docs/_ext`` write the capability matrix, the flags page and one API page
per module before Sphinx reads its sources; these tests call their generators directly
(no Sphinx build), so they are fast. The full build runs in CI (``make docs``, warnings as
errors).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import opweave
from opweave.link.capabilities import capability_matrix

pytest.importorskip("sphinx")

EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"


@pytest.fixture(scope="module")
def ext() -> Iterator[tuple[ModuleType, ModuleType]]:
    """``(reference_pages, opweave_api)``, imported from ``docs/_ext``."""
    sys.path.insert(0, str(EXT))
    try:
        yield importlib.import_module("reference_pages"), importlib.import_module("opweave_api")
    finally:
        sys.path.remove(str(EXT))


def test_the_capability_page_lists_every_op_class_of_the_matrix(ext) -> None:
    reference_pages, _ = ext
    page = reference_pages.capability_page()
    matrix = capability_matrix(opweave.get_plugin_manager().hook.opweave_backend_info())
    assert len(matrix) > 100
    for cls, row in matrix.items():
        module, _, name = cls.rpartition(".")
        assert f"## `{module}`" in page
        cells = " | ".join(reference_pages.SYMBOLS[row[b]] for b in sorted(row))
        assert f"| {{py:class}}`{name} <{cls}>` | {cells} |" in page, cls
    assert "| `opweave-python` | py, vm |" in page


def test_the_flags_page_documents_every_flag_with_its_default(ext) -> None:
    reference_pages, _ = ext
    page = reference_pages.flags_page()
    opweave.get_plugin_manager()
    for info in opweave.config.flags():
        assert f"\n``{info.name}``\n" in page, info.name
    assert "Default: ``'auto'``" in page  # linker
    assert "``cxx``" in page  # a flag opweave-c adds


REQUIRED = [
    "opweave",
    "opweave.tensor",
    "opweave.tensor.basic",
    "opweave.tensor.math",
    "opweave.tensor.elemwise",
    "opweave.tensor.blas",
    "opweave.tensor.shape",
    "opweave.tensor.subtensor",
    "opweave.tensor.extra_ops",
    "opweave.tensor.linalg",
    "opweave.tensor.nlinalg",
    "opweave.tensor.slinalg",
    "opweave.tensor.special",
    "opweave.tensor.random",
    "opweave.scalar",
    "opweave.graph.basic",
    "opweave.graph.op",
    "opweave.graph.type",
    "opweave.graph.fg",
    "opweave.graph.rewriting",
    "opweave.compile",
    "opweave.gradient",
    "opweave.printing",
    "opweave.ifelse",
    "opweave.raise_op",
    "opweave.updates",
    "opweave.compat",
    "opweave.configuration",
    "opweave.plugins",
    "opweave.plugins.hookspecs",
    "opweave_python",
    "opweave_c",
    "opweave_cuda",
]


def test_the_api_reference_covers_the_public_modules(ext) -> None:
    _, opweave_api = ext
    listed = [m for modules in opweave_api.SECTIONS.values() for m in modules]
    assert len(listed) == len(set(listed))
    assert set(REQUIRED) <= set(listed)
    for modname in REQUIRED:
        assert opweave_api._import(modname) is not None, modname


def test_a_module_page_describes_its_own_objects_and_links_the_rest(ext) -> None:
    _, opweave_api = ext
    modules = {m: opweave_api._import(m) for m in [*REQUIRED, "opweave.compile.function"]}
    homes = opweave_api.documenting_modules(modules)
    fg = importlib.import_module("opweave.graph.fg")
    page = opweave_api.module_page("opweave.graph.fg", fg, homes)
    assert page.startswith("opweave.graph.fg\n================\n\n.. automodule:: opweave.graph.fg")
    assert ".. autoclass:: FunctionGraph\n   :members:" in page
    package = opweave_api.module_page("opweave", opweave, homes)
    assert "- :py:obj:`opweave.compile.function.function`" in package
    assert ".. autoclass::" not in package  # the package only re-exports
    # defined in an implementation module without a page: described where it is exported
    reductions_sum = importlib.import_module("opweave.tensor.reductions").sum
    assert homes[id(reductions_sum)] == "opweave.tensor.math"


def test_a_module_that_does_not_import_is_left_out(ext) -> None:
    _, opweave_api = ext
    assert opweave_api._import("opweave.no_such_module") is None
