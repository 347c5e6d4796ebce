"""``PYTENSOR_FLAGS`` under the pytensor alias: read as opweave's flags, never ignored
without a word."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compat import ENVIRONMENT_SWITCH
from opweave.compat.pytensor_flags import apply_pytensor_flags
from opweave.configdefaults import config


@pytest.fixture
def restored() -> object:
    """Restore the flags the tests set (values and sources)."""
    with config.change_flags(floatX=config.floatX, linker=config.linker):
        yield


def test_items_set_opweaves_flags_of_the_same_name(restored: object) -> None:
    names = apply_pytensor_flags({"PYTENSOR_FLAGS": "floatX=float32, linker=py"})
    assert names == ["floatX", "linker"]
    assert (config.floatX, config.linker) == ("float32", "py")
    assert config.source("floatX") == "PYTENSOR_FLAGS"
    x = ot.vector("x")
    assert x.dtype == "float32"
    f = opweave.function([x], x * 2)
    assert f.maker.linker.name == "py"
    np.testing.assert_array_equal(f(np.array([1.5], dtype="float32")), [3.0])


def test_opweave_flags_win_for_a_flag_both_set(restored: object) -> None:
    env = {"PYTENSOR_FLAGS": "floatX=float32,linker=py", "OPWEAVE_FLAGS": "floatX=float64"}
    before = config.floatX
    assert apply_pytensor_flags(env) == ["linker"]
    assert config.floatX == before


def test_items_opweave_cannot_take_are_named_in_one_warning(restored: object) -> None:
    env = {"PYTENSOR_FLAGS": "blas__ldflags=-lblas,floatX=float16x,floatX=float32"}
    with pytest.warns(RuntimeWarning) as caught:
        names = apply_pytensor_flags(env)
    assert names == ["floatX"] and config.floatX == "float32"
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "blas__ldflags (opweave has no such flag)" in message
    assert "floatX=float16x" in message and "OPWEAVE_FLAGS" in message


def test_a_malformed_item_is_refused_naming_the_variable() -> None:
    with pytest.raises(ValueError, match=r"PYTENSOR_FLAGS: malformed item 'floatX'"):
        apply_pytensor_flags({"PYTENSOR_FLAGS": "floatX"})


def test_nothing_set_without_the_variable(restored: object) -> None:
    assert apply_pytensor_flags({}) == []
    assert apply_pytensor_flags({"PYTENSOR_FLAGS": " "}) == []


def test_the_command_line_alias_reads_the_variable() -> None:
    environment = {
        k: v for k, v in os.environ.items() if k not in {ENVIRONMENT_SWITCH, "OPWEAVE_FLAGS"}
    }
    environment["PYTENSOR_FLAGS"] = "floatX=float32"
    code = (
        "import pytensor, pytensor.tensor as pt; "
        "print(pt.vector('x').dtype, pytensor.config.source('floatX'))"
    )
    done = subprocess.run(
        [sys.executable, "-m", "opweave.compat", "-c", code],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["float32", "PYTENSOR_FLAGS"]
