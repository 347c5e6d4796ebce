"""The pytest plugin: its fixtures load through the ``pytest11`` entry point."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np

import opweave.tensor as pt
from opweave.testing import check_backend, check_op, check_type, usable_linkers


def test_the_entry_point_names_the_plugin_module() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert found.get("opweave") == "opweave.testing.pytest_plugin"


def test_the_fixtures_are_the_kit(
    opweave_linkers, opweave_check_type, opweave_check_op, opweave_check_backend
) -> None:
    assert opweave_linkers == usable_linkers()
    assert opweave_linkers[:2] == ["py", "vm"]
    assert opweave_check_type is check_type
    assert opweave_check_backend is check_backend
    assert opweave_check_op.func is check_op
    assert opweave_check_op.keywords == {"linkers": opweave_linkers}


def test_opweave_check_op_runs_on_the_fixture_linkers(opweave_check_op) -> None:
    report = opweave_check_op(pt.exp, [np.linspace(0.0, 1.0, 4)], grad=False, rop=False)
    assert {f"linker_{name}" for name in usable_linkers()} <= set(report.checked)


def test_neither_import_opweave_nor_the_kit_imports_pytest() -> None:
    code = (
        "import sys, opweave; assert 'pytest' not in sys.modules; "
        "assert 'opweave.testing' not in sys.modules; import opweave.testing; "
        "assert 'pytest' not in sys.modules, 'the kit imported pytest'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_project_gets_the_fixtures_without_a_conftest(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(
        textwrap.dedent(
            """
            def test_linkers(opweave_linkers):
                assert opweave_linkers == ["py"]

            def test_broken(opweave_check_type):
                from opweave.tensor.type import TensorType
                opweave_check_type(TensorType("float64", shape=(None,)), [[1.0]], [[1.0]])
            """
        )
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--opweave-linkers=py",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout
    assert "ContractViolation: [filter_refuses_bad]" in run.stdout
