"""What a backend of any name adds through plugins alone: module paths under ``opweave``
(``opweave_modules``), modes (``opweave_modes``), checks of its own hooks' answers and of its
implementations, and the install hints the core gives when something is missing."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import opweave.link
import opweave.tensor as ot
from opweave.compile import mode as mode_module
from opweave.compile.mode import Mode, fast_run_linkers_to_mode, get_mode, predefined_modes
from opweave.plugins import PluginWarning, hints, hookimpl, hookspec
from opweave.plugins.hints import extra_distributions, install_hint
from opweave.plugins.isolation import answer_check


@pytest.fixture
def toy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable package ``toy_backend_names`` with a submodule ``dispatch``."""
    package = tmp_path / "toy_backend_names"
    package.mkdir()
    (package / "__init__.py").write_text("LINKER = 'toy'\n")
    (package / "dispatch.py").write_text("def funcify(op):\n    return 'toy:' + str(op)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toy_backend_names"
    for name in [n for n in sys.modules if "toy_backend_names" in n or ".toylink" in n]:
        del sys.modules[name]
    if hasattr(opweave.link, "toylink"):
        delattr(opweave.link, "toylink")


class ServesToyModules:
    @hookimpl
    def opweave_modules(self) -> dict[str, str]:
        return {"opweave.link.toylink": "toy_backend_names"}


def test_a_plugin_serves_a_module_path_under_opweave(plugin_manager, toy_package) -> None:
    plugin_manager.register(ServesToyModules(), name="toy")
    served = importlib.import_module("opweave.link.toylink")
    assert served is importlib.import_module(toy_package) and served.LINKER == "toy"
    from opweave.link.toylink.dispatch import funcify

    assert funcify is sys.modules["toy_backend_names.dispatch"].funcify
    assert funcify("x") == "toy:x"


def test_a_backend_module_no_plugin_serves_says_how_to_get_it(plugin_manager) -> None:
    with pytest.raises(ModuleNotFoundError, match="no installed plugin provides it") as info:
        importlib.import_module("opweave.link.toylink_absent")
    assert info.value.name == "opweave.link.toylink_absent"
    assert "pytensor.link.toylink_absent" in str(info.value)
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'opweave\.nothing_here'$"):
        importlib.import_module("opweave.nothing_here")


class ProvidesToyModes:
    @hookimpl
    def opweave_modes(self) -> dict[str, Any]:
        return {
            "TOY": {"linker": "py", "optimizer": "fast_run"},
            "TOY_FAST": Mode(linker="vm", optimizer="fast_compile"),
        }


def test_a_plugin_provides_modes(plugin_manager) -> None:
    plugin_manager.register(ProvidesToyModes(), name="toy")
    toy = get_mode("toy")
    assert toy is get_mode("TOY") is mode_module.TOY
    assert (toy.linker, predefined_modes["TOY"]) == ("py", toy)
    assert get_mode("TOY_FAST").linker == "vm"
    assert fast_run_linkers_to_mode["py"] is toy
    from opweave.compile.mode import TOY

    assert TOY is toy
    with pytest.raises(ValueError, match="already taken"):
        mode_module.register_mode("TOY", Mode(linker="py"))


def test_mode_names_no_plugin_provides(plugin_manager) -> None:
    with pytest.raises(AttributeError, match="has no attribute 'NOT_A_MODE'"):
        mode_module.NOT_A_MODE  # noqa: B018
    with pytest.raises(ValueError, match="unknown mode 'not_a_mode'"):
        get_mode("not_a_mode")


@pytest.mark.skipif("cvm" not in extra_distributions(), reason="opweave's metadata unread")
def test_a_mode_of_an_absent_backend_names_what_to_install(bare_plugin_manager) -> None:
    dist = extra_distributions()["cvm"]  # installed here, but its plugin is not loaded
    with pytest.raises(ImportError, match=f"provided by {dist}, which is installed but whose"):
        exec("from opweave.compile.mode import CVM", {})
    with pytest.raises(ValueError, match=f"mode 'CVM' is not available: it is provided by {dist}"):
        get_mode("CVM")


def test_absent_hints_say_what_to_install_or_why_it_is_not_loaded(monkeypatch) -> None:
    monkeypatch.setattr(hints, "extra_distributions", lambda: {"toy": "opweave-no-such-dist"})
    assert hints.absent_hint("TOY") == (
        "it is provided by a plugin that is not installed here: pip install "
        "opweave-no-such-dist (or pip install 'opweave[toy]')"
    )
    assert hints.absent_hint("other") is None


def test_install_hints_come_from_the_metadata_extras() -> None:
    for extra, dist in extra_distributions().items():
        assert install_hint(extra).startswith(f"pip install {dist} ")
    assert "see opweave's documentation" in install_hint("no_such_extra")


class ToyHookspecs:
    @answer_check(lambda result, kwargs: None if isinstance(result, list) else "not a list")
    @hookspec
    def toy_entries(self) -> list[Any]:
        """Entries of the toy backend's own registry."""


class DeclaresToyHooks:
    @hookimpl
    def opweave_addhooks(self, pluginmanager: Any) -> None:
        pluginmanager.add_hookspecs(ToyHookspecs)

    @hookimpl
    def opweave_backend_info(self) -> dict[str, Any]:
        return {
            "name": "toy-backend",
            "linkers": [],
            "available": True,
            "reason": None,
            "implementation_checks": {
                "toy": lambda impl: None if hasattr(impl, "toy_kernel") else "a toy kernel"
            },
        }


class AnswersBadly:
    @hookimpl(optionalhook=True)
    def toy_entries(self) -> Any:
        return "not a list at all"

    @hookimpl
    def opweave_implementation(self, op: Any, node: Any, backend: str) -> Any:
        return 42 if backend in ("toy", "other") else None


class AnswersWell:
    @hookimpl(optionalhook=True)
    def toy_entries(self) -> Any:
        return [1]


def _answers(call: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


def test_a_backend_checks_the_answers_to_its_own_hooks(plugin_manager) -> None:
    plugin_manager.register(DeclaresToyHooks(), name="toy")
    plugin_manager.register(AnswersWell(), name="good")
    plugin_manager.register(AnswersBadly(), name="clumsy")
    result, said = _answers(plugin_manager.hook.toy_entries)
    assert result == [[1]]
    assert said == [
        "opweave: plugin 'clumsy' failed in hook toy_entries: not a list; skipped its answer"
    ]


def test_a_backend_declares_what_its_implementations_are(plugin_manager) -> None:
    plugin_manager.register(DeclaresToyHooks(), name="toy")
    plugin_manager.register(AnswersBadly(), name="clumsy")
    node = ot.exp(ot.dvector("x")).owner
    for backend, expected in (("toy", "a toy kernel"), ("other", "a perform-style callable")):
        result, said = _answers(
            lambda b=backend: plugin_manager.hook.opweave_implementation(
                op=node.op, node=node, backend=b
            )
        )
        assert result is None
        assert said == [
            "opweave: plugin 'clumsy' failed in hook opweave_implementation: returned 42 (int) "
            f"for backend {backend!r}, expected {expected} or None; skipped its answer"
        ]
