"""``linker="auto"`` picks only usable linkers; a named unusable linker says why."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.link.lookup import (
    LinkerFallbackWarning,
    LinkerNotFoundError,
    LinkerUnavailableError,
    resolve_linker,
)


@pytest.fixture
def no_compiler_on_path(tmp_path, monkeypatch) -> None:
    """A PATH without any C compiler, and ``config.cxx`` at its default ``cc``."""
    monkeypatch.setenv("PATH", str(tmp_path))
    with opweave.config.change_flags(cxx="cc", linker="auto"):
        yield


def test_auto_skips_the_c_backend_without_a_compiler_and_says_why_once(
    no_compiler_on_path,
) -> None:
    x = ot.dvector("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = opweave.function([x], ot.exp(x))
        g = opweave.function([x], ot.exp(x) * 2)
    assert type(f.maker.linker).__name__ == "VMLinker"
    assert type(g.maker.linker).__name__ == "VMLinker"
    said = [str(w.message) for w in caught if issubclass(w.category, LinkerFallbackWarning)]
    assert said == [
        "linker='auto' skips 'cvm': opweave-c is installed but unavailable: "
        "C compiler 'cc' not found (set config.cxx or the CC variable)"
    ]
    np.testing.assert_allclose(g(np.zeros(2)), [2.0, 2.0])


@pytest.mark.parametrize("name", ["c", "cvm"])
def test_named_c_linker_without_a_compiler_says_it_is_installed(no_compiler_on_path, name) -> None:
    x = ot.dvector("x")
    with pytest.raises(LinkerUnavailableError) as err:
        opweave.function([x], x + 1, mode=opweave.Mode(linker=name))
    text = str(err.value)
    assert text.startswith(
        f"linker {name!r} cannot be used here: opweave-c is installed but unavailable: "
        "C compiler 'cc' not found"
    )
    # dask and jax, where installed, are usable without a compiler too
    assert "Usable linkers: py, vm." in text.replace("dask, ", "").replace("jax, ", "")
    assert "not installed" not in text


def test_auto_with_every_linker_unusable_lists_the_reasons(bare_plugin_manager) -> None:
    from opweave.plugins import hookimpl
    from opweave_python.linkers.vm import VMLinker

    class Dead:
        @hookimpl
        def opweave_linkers(self):
            return {"vm": VMLinker}

        @hookimpl
        def opweave_backend_info(self):
            return {
                "name": "dead-backend",
                "linkers": ["vm"],
                "available": False,
                "reason": "no lungs",
            }

    bare_plugin_manager.register(Dead(), name="dead")
    with pytest.warns(LinkerFallbackWarning), pytest.raises(LinkerNotFoundError) as err:
        resolve_linker("auto")
    assert "Installed but unavailable: vm: dead-backend is installed but unavailable: no lungs" in (
        str(err.value)
    )


def test_uninstalled_linker_still_names_its_distribution(bare_plugin_manager) -> None:
    with pytest.raises(
        LinkerNotFoundError,
        match=r"linker 'c' is not installed \(it is "
        r"provided by opweave-c: pip install opweave-c\)",
    ):
        resolve_linker("c")


def test_fast_compile_ranks_linkers_by_compile_priority(plugin_manager) -> None:
    from opweave.plugins import hookimpl
    from opweave_python.linkers.vm import VMLinker

    x = ot.dvector("x")
    f = opweave.function([x], x + 1, mode="FAST_COMPILE")
    assert type(f.maker.linker).__name__ == "VMLinker"

    class InstantLinker(VMLinker):
        name = "instant"
        priority = -1
        compile_priority = 99

    class Instant:
        @hookimpl
        def opweave_linkers(self):
            return {"instant": InstantLinker}

    plugin_manager.register(Instant(), name="instant")
    with opweave.config.change_flags(linker="auto"):
        fast_compile = opweave.function([x], x + 1, mode="FAST_COMPILE")
        fast_run = opweave.function([x], x + 1, mode="FAST_RUN")
    assert type(fast_compile.maker.linker) is InstantLinker
    assert type(fast_run.maker.linker).__name__ == "CVMLinker"
    np.testing.assert_allclose(fast_compile(np.zeros(2)), [1.0, 1.0])


def test_install_hints_come_from_the_extras_of_the_core_distribution() -> None:
    from importlib import metadata

    from opweave.link.lookup import linker_distributions

    found = linker_distributions()
    assert set(found) == set(metadata.metadata("opweave").get_all("Provides-Extra"))
    assert found["cvm"] == found["c"] == "opweave-c"
    assert found["vm"] == found["py"] == "opweave-python"
    assert found["cuda"] == "opweave-cuda"
