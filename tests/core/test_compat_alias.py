"""The pytensor import alias (``opweave.compat``): what it gives, and when it refuses."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import opweave
import opweave.tensor
from opweave.compat import (
    ENVIRONMENT_SWITCH,
    PyTensorAliasError,
    alias_from_environment,
    pytensor_alias,
    pytensor_alias_active,
    remove_pytensor_alias,
)


@pytest.fixture
def alias() -> Iterator[None]:
    pytensor_alias()
    try:
        yield
    finally:
        remove_pytensor_alias()


def run_python(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != ENVIRONMENT_SWITCH} | env
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=environment
    )


def test_pytensor_modules_are_opweaves_own(alias: None) -> None:
    import pytensor
    import pytensor.tensor as pt
    from pytensor.graph.basic import Apply, Variable
    from pytensor.tensor.math import exp

    assert pytensor is opweave
    assert pt is opweave.tensor
    assert Variable is opweave.graph.basic.Variable
    assert Apply is opweave.graph.basic.Apply
    assert exp is opweave.tensor.math.exp
    x = pt.dvector("x")
    f = pytensor.function([x], exp(x))
    assert f([0.0, 1.0]).tolist() == [1.0, pytest.approx(2.718281828459045, rel=1e-15)]


def test_modules_keep_their_own_spec(alias: None) -> None:
    import pytensor.tensor.math

    assert pytensor.tensor.math.__name__ == "opweave.tensor.math"
    assert pytensor.tensor.math.__spec__.name == "opweave.tensor.math"


def test_a_path_opweave_lacks_names_both(alias: None) -> None:
    with pytest.raises(ModuleNotFoundError, match=r"pytensor\.no_such_module.*opweave") as info:
        import pytensor.no_such_module  # noqa: F401
    assert info.value.name == "pytensor.no_such_module"


def test_alias_is_idempotent_and_removable() -> None:
    pytensor_alias()
    pytensor_alias()
    assert pytensor_alias_active()
    assert sum(type(f).__name__ == "PyTensorAliasFinder" for f in sys.meta_path) == 1
    remove_pytensor_alias()
    assert not pytensor_alias_active()
    assert "pytensor" not in sys.modules


def test_environment_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENT_SWITCH, "0")
    assert alias_from_environment() is False
    monkeypatch.setenv(ENVIRONMENT_SWITCH, "1")
    try:
        assert alias_from_environment() is True
    finally:
        remove_pytensor_alias()


def test_refuses_when_a_real_pytensor_is_importable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pytensor").mkdir()
    (tmp_path / "pytensor" / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PyTensorAliasError, match="A real PyTensor is importable") as info:
        pytensor_alias()
    assert str(tmp_path / "pytensor") in str(info.value)
    assert not pytensor_alias_active()


def test_refuses_when_pytensor_is_already_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = type(sys)("pytensor")
    monkeypatch.setitem(sys.modules, "pytensor", fake)
    with pytest.raises(PyTensorAliasError, match="already imported"):
        pytensor_alias()


def test_command_line_runs_a_script_with_its_arguments(tmp_path: Path) -> None:
    script = tmp_path / "model.py"
    script.write_text(
        "import sys, os\n"
        "import pytensor, pytensor.tensor as pt\n"
        "x = pt.dscalar('x')\n"
        "f = pytensor.function([x], x * 2)\n"
        "print(pytensor.__name__, f(float(sys.argv[1])), os.environ['OPWEAVE_PYTENSOR_ALIAS'])\n"
    )
    done = run_python("-m", "opweave.compat", str(script), "21")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["opweave", "42.0", "1"]


def test_command_line_runs_a_module_and_code(tmp_path: Path) -> None:
    (tmp_path / "usercode.py").write_text("import pytensor\nprint(pytensor.__name__)\n")
    done = run_python("-m", "opweave.compat", "-m", "usercode", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "opweave"
    done = run_python("-m", "opweave.compat", "-c", "import pytensor.scan; print('ok')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_command_line_usage_and_refusal(tmp_path: Path) -> None:
    done = run_python("-m", "opweave.compat")
    assert done.returncode == 2
    assert "usage: python -m opweave.compat SCRIPT" in done.stderr
    (tmp_path / "pytensor").mkdir()
    (tmp_path / "pytensor" / "__init__.py").write_text("")
    done = run_python("-m", "opweave.compat", "-c", "pass", PYTHONPATH=str(tmp_path))
    assert done.returncode == 1
    assert "A real PyTensor is importable" in done.stderr


def test_importing_a_submodule_keeps_the_function_of_the_same_name(alias: None) -> None:
    import pytensor.tensor as pt
    import pytensor.tensor.shape  # noqa: F401 - a module and a function share the name

    assert callable(pt.shape) and not isinstance(pt.shape, type(sys))
    assert pt.shape is opweave.tensor.shape
    x = pt.dmatrix("x")
    assert pytensor_function_of_shape(x)(__import__("numpy").zeros((2, 3))).tolist() == [2, 3]


def pytensor_function_of_shape(x):
    import pytensor
    import pytensor.tensor as pt

    return pytensor.function([x], pt.shape(x))


STAND_INS = """
import pytest
from pytensor.link.numba import NumbaLinker
from pytensor.link.mlx import MLXLinker
from pytensor.link.numba.dispatch import numba_funcify
import pytensor.compile.mode as mode

assert not isinstance(mode.get_default_mode().linker, (MLXLinker, NumbaLinker))
for use in (NumbaLinker, lambda: numba_funcify.register, lambda: numba_funcify(None)):
    with pytest.raises(ModuleNotFoundError, match=r"opweave\\.link\\.(numba|mlx).*no installed"):
        use()
print("ok", NumbaLinker.__module__, numba_funcify.__module__)
"""


def test_pytensor_backend_paths_no_plugin_serves_give_stand_ins() -> None:
    """``from pytensor.link.numba import NumbaLinker`` imports (code written for PyTensor tests
    ``isinstance`` with it); using such a name raises the error saying how to get it."""
    done = run_python("-m", "opweave.compat", "-c", STAND_INS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "pytensor.link.numba", "pytensor.link.numba.dispatch"]


def test_other_missing_paths_stay_import_errors(alias: None) -> None:
    with pytest.raises(ModuleNotFoundError, match=r"opweave has no 'opweave\.sandbox'"):
        import pytensor.sandbox  # noqa: F401
