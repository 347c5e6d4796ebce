"""Compiled functions on the ``c`` and ``cvm`` linkers survive ``pickle`` (and ``copy``);
unpickling rebuilds their C modules from the on-disk cache.

The checks are those of ``tests/core/test_function_pickling.py``, run on the C linkers.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

import opweave

_spec = importlib.util.spec_from_file_location(
    "_function_pickling_checks",
    Path(__file__).resolve().parents[1] / "core" / "test_function_pickling.py",
)
assert _spec is not None and _spec.loader is not None
checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(checks)

LINKERS = ("c", "cvm")


@pytest.mark.parametrize("linker", LINKERS)
def test_values_roundtrip(linker: str) -> None:
    checks.check_values_roundtrip(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_updates_continue_from_the_pickled_state(linker: str) -> None:
    checks.check_updates_continue(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_shared_variable_stays_shared_between_functions_pickled_together(linker: str) -> None:
    checks.check_shared_stays_shared(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_input_defaults_and_state_survive(linker: str) -> None:
    checks.check_input_defaults(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_givens_compiled_graph_roundtrips(linker: str) -> None:
    checks.check_givens(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_copy_deepcopy_and_pickled_copies(linker: str) -> None:
    checks.check_copies(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_fresh_process_loads_the_modules_from_the_cache(linker: str, tmp_path: Any) -> None:
    prelude = (
        "import logging, sys\n"
        "logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, "
        "format='%(name)s %(message)s')\n"
    )
    shared_dir = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={opweave.config.compiledir}"}
    stderr = checks.check_fresh_process(linker, tmp_path, env=shared_dir, prelude=prelude)
    assert "opweave_c.cache compiling" not in stderr
    # With an empty compile directory the same load has to build its modules.
    empty = tmp_path / "empty-compiledir"
    empty_dir = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={empty}"}
    stderr = checks.check_fresh_process(linker, tmp_path, env=empty_dir, prelude=prelude)
    assert "opweave_c.cache compiling" in stderr
