"""Fixtures shared by the whole suite."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import opweave
from opweave.plugins import OpweavePluginManager, create_plugin_manager, use_plugin_manager


@pytest.fixture(autouse=True, scope="session")
def session_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The suite's configuration: a private compile directory shared by every test (so C
    modules compiled once are reused), and the ``vm`` linker by default so that only the
    tests that ask for ``c`` or ``cvm`` pay for compiling C. Compiles are not tiered
    (``compile__tiered``), so a function asked for on ``c`` or ``cvm`` runs there as soon
    as it is returned; tests/core/test_tiered_compile.py turns tiering on. The Python
    processes the tests start read the same in their user config file
    (``XDG_CONFIG_HOME``), whatever ``OPWEAVE_FLAGS`` they are given.
    """
    compiledir = tmp_path_factory.mktemp("compiledir")
    user_config = tmp_path_factory.mktemp("user_config")
    (user_config / "opweave").mkdir()
    (user_config / "opweave" / "config.toml").write_text("compile__tiered = false\n")
    with (
        pytest.MonkeyPatch.context() as env,
        opweave.config.change_flags(compiledir=str(compiledir), linker="vm", compile__tiered=False),
    ):
        env.setenv("XDG_CONFIG_HOME", str(user_config))
        yield compiledir


@pytest.fixture(autouse=True)
def plugin_manager() -> Iterator[OpweavePluginManager]:
    """Give each test its own plugin manager (installed plugins loaded), so registrations
    made by one test (``register_transfer``, hand-registered plugins) never leak into another.
    """
    with use_plugin_manager(create_plugin_manager()) as pm:
        yield pm


@pytest.fixture
def bare_plugin_manager() -> Iterator[OpweavePluginManager]:
    """A plugin manager with only the core's built-in plugin: no backend is installed."""
    with use_plugin_manager(create_plugin_manager(autoload=False)) as pm:
        yield pm


@pytest.fixture
def fresh_python() -> Callable[..., str]:
    """Run Python code in a new interpreter (``python -c code *args``) and return what it
    printed; a non-zero exit fails the test. Keyword arguments go to :func:`subprocess.run`
    (``env``, ``cwd``)."""

    def run(code: str, *args: str, **kwargs: object) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            check=True,
            **kwargs,  # type: ignore[call-overload]
        )
        return done.stdout

    return run
