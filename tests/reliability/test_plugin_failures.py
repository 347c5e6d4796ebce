"""A plugin whose hook fails or answers nonsense at call time is named, reported and skipped."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.cli import info
from opweave.link.lookup import available_linkers
from opweave.plugins import PluginWarning, hookimpl, use_plugin_manager

LINKERS = ["py", "vm", "c", "cvm"]


class RaisingRewrites:
    @hookimpl
    def opweave_rewrites(self, db):
        raise RuntimeError("boom in rewrites")


class RaisingBackendInfo:
    @hookimpl
    def opweave_backend_info(self):
        raise RuntimeError("boom in backend info")


class RaisingImplementation:
    @hookimpl(tryfirst=True)
    def opweave_implementation(self, op, node, backend):
        raise RuntimeError("boom in implementation")


class StringLinkers:
    @hookimpl
    def opweave_linkers(self):
        return "not a dict"


class MalformedBackendInfo:
    @hookimpl
    def opweave_backend_info(self):
        return ["opweave-odd"]


class AnsweringTransfer:
    """A first-result hook whose ValueError is its answer: it reaches the caller."""

    @hookimpl
    def opweave_transfer(self, var, target):
        if target == "odd-device":
            raise ValueError("odd-device needs float32 variables")
        return None


def _compile_everywhere() -> None:
    x = ot.dvector("x")
    for linker in LINKERS:
        f = opweave.function([x], ot.exp(x) + 1, mode=opweave.Mode(linker=linker))
        np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])


@pytest.mark.parametrize(
    ("plugin", "hook", "error"),
    [
        (RaisingRewrites(), "opweave_rewrites", "RuntimeError: boom in rewrites"),
        (
            RaisingImplementation(),
            "opweave_implementation",
            "RuntimeError: boom in implementation",
        ),
        (StringLinkers(), "opweave_linkers", "returned str, expected a dict {name: Linker class}"),
        (RaisingBackendInfo(), "opweave_backend_info", "RuntimeError: boom in backend info"),
    ],
    ids=["rewrites", "implementation", "linkers-str", "backend_info"],
)
def test_failing_hook_is_named_once_and_skipped(plugin_manager, plugin, hook, error) -> None:
    plugin_manager.register(plugin, name="clumsy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _compile_everywhere()
        _compile_everywhere()
    said = [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]
    assert said == [f"opweave: plugin 'clumsy' failed in hook {hook}: {error}; skipped its answer"]
    assert [(f.plugin, f.hook) for f in plugin_manager.failures] == [("clumsy", hook)]


@pytest.mark.parametrize(
    "plugin", [RaisingBackendInfo(), StringLinkers(), MalformedBackendInfo()], ids=type
)
def test_info_survives_a_failing_plugin(plugin_manager, plugin) -> None:
    plugin_manager.register(plugin, name="clumsy")
    out = io.StringIO()
    with pytest.warns(PluginWarning, match="plugin 'clumsy' failed"):
        assert info(out) == 0
    text = out.getvalue()
    # dask and jax: where installed
    assert "linkers: c, cvm, py, vm" in text.replace("dask, ", "").replace("jax, ", "")
    assert "skipped: plugin 'clumsy' failed in hook" in text


def test_other_plugins_linkers_survive_a_malformed_answer(plugin_manager) -> None:
    plugin_manager.register(StringLinkers(), name="clumsy")
    with pytest.warns(PluginWarning):
        assert {"py", "vm", "c", "cvm"} <= set(available_linkers())


def test_a_contract_error_is_the_plugins_answer_and_names_it(plugin_manager) -> None:
    plugin_manager.register(AnsweringTransfer(), name="odd")
    x = ot.dvector("x")
    with pytest.raises(ValueError, match="odd-device needs float32") as info_:
        opweave.transfer(x, "odd-device")
    assert "(raised by opweave plugin 'odd' in opweave_transfer)" in info_.value.__notes__
    assert plugin_manager.failures == []


def test_the_core_builtin_plugin_is_not_isolated(plugin_manager, monkeypatch) -> None:
    from opweave.plugins import builtin

    def broken(db):
        raise RuntimeError("a core bug must surface")

    impls = plugin_manager.hook.opweave_rewrites.get_hookimpls()
    (core,) = [impl for impl in impls if impl.plugin is builtin]
    monkeypatch.setattr(core, "function", broken)
    x = ot.dvector("x")
    with pytest.raises(RuntimeError, match="a core bug must surface"):
        opweave.function([x], x + 1)


# ---------------------------------------------------------------------- at load time


def test_a_plugin_failing_at_import_is_named_and_skipped() -> None:
    from importlib import metadata

    from opweave.plugins import create_plugin_manager

    pm = create_plugin_manager(autoload=False)
    broken = metadata.EntryPoint(
        name="broken", value="opweave_no_such_module_xyz", group="opweave.plugins"
    )
    with pytest.warns(PluginWarning, match=r"skipped plugin 'broken'.*ModuleNotFoundError"):
        pm.load_entry_points([broken])
    assert [(r.name, r.loaded) for r in pm.records] == [("broken", False)]
    x = ot.dvector("x")
    with use_plugin_manager(pm):  # the core still builds graphs
        assert opweave.grad(ot.sum(x**2), x).type == x.type


def test_a_hook_with_a_wrong_signature_is_refused_by_name(plugin_manager) -> None:
    import pluggy

    class WrongSignature:
        @hookimpl
        def opweave_transfer(self, variable, where):  # the hook's arguments are var, target
            return None

    with pytest.raises(pluggy.PluginValidationError, match="opweave_transfer"):
        plugin_manager.register(WrongSignature(), name="wrong")
    assert not plugin_manager.has_plugin("wrong")
    _compile_everywhere()
