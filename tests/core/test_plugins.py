"""Plugin discovery through entry points, broken plugins, opt-out, hand registration."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import opweave
from opweave.link.lookup import LinkerUnavailableError, available_linkers, resolve_linker
from opweave.plugins import (
    DISABLE_AUTOLOAD_ENV,
    PluginWarning,
    create_plugin_manager,
    hookimpl,
    use_plugin_manager,
)
from opweave_double import add, double

GOOD = """
from opweave.plugins import hookimpl
from opweave_python.linkers.perform_linker import PerformLinker

class EchoLinker(PerformLinker):
    name = "echo"

@hookimpl
def opweave_linkers():
    return {"echo": EchoLinker}

@hookimpl
def opweave_transfer(var, target):
    return var if target == "echo-device" else None
"""

BROKEN = """
raise RuntimeError("this plugin is broken on purpose")
"""

MISSPELLED = """
from opweave.plugins import hookimpl

@hookimpl
def opweave_linker():
    return {}
"""

BAD_ARGS = """
from opweave.plugins import hookimpl

@hookimpl
def opweave_transfer(variable, where):
    return None
"""


MINIMAL_BACKEND = """
from opweave.link.loop import LoopLinker
from opweave.plugins import hookimpl

ASKED = []


class StepLinker(LoopLinker):
    name = "step"
    priority = 1
    impls = ("step", "py")  # its own implementations first, then the Python backend's


@hookimpl
def opweave_linkers():
    return {"step": StepLinker}


@hookimpl
def opweave_backend_info():
    return {"name": "opweave-step", "linkers": ["step"], "available": True, "reason": None}


@hookimpl
def opweave_implementation(op, node, backend):
    if backend == "step":
        ASKED.append(type(op).__name__)  # it has no kernels of its own yet
    return None
"""


def make_dist(root: Path, dist: str, version: str, modules: dict[str, str]) -> None:
    """Write plugin modules and a ``*.dist-info`` declaring them as entry points."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = ["[opweave.plugins]"]
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))
        lines.append(f"{module} = {module}")
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def fake_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
    return tmp_path


def test_entry_point_plugin_is_discovered(fake_site: Path) -> None:
    make_dist(fake_site, "fake-good", "1.2.3", {"fake_good_plugin": GOOD})
    pm = create_plugin_manager()
    rec = next(r for r in pm.records if r.name == "fake_good_plugin")
    assert rec.loaded and rec.distribution == "fake-good" and rec.version == "1.2.3"
    assert "echo" in available_linkers(pm)
    with use_plugin_manager(pm):
        x = double("x")
        f = opweave.function([x], add(x, 1.0), mode=opweave.Mode(linker="echo"))
        assert f(1.0) == 2.0
        assert opweave.transfer(x, "echo-device") is x


def test_broken_plugin_is_skipped_with_a_warning(fake_site: Path) -> None:
    make_dist(fake_site, "fake-broken", "0.1", {"fake_broken_plugin": BROKEN})
    make_dist(fake_site, "fake-good", "1.0", {"fake_good_plugin": GOOD})
    with pytest.warns(
        PluginWarning, match=r"skipped plugin 'fake_broken_plugin'.*broken on purpose"
    ):
        pm = create_plugin_manager()
    failed = [r for r in pm.records if not r.loaded]
    assert [r.name for r in failed] == ["fake_broken_plugin"]
    assert "RuntimeError" in failed[0].error
    assert "echo" in available_linkers(pm)  # the other plugins still load
    with use_plugin_manager(pm):
        x = double("x")
        assert opweave.function([x], add(x, 1.0))(2.0) == 3.0  # and the core works


def _python_backend_and(fake_site: Path, dist: str, module: str, source: str):
    """A manager with the Python backend and one fake distribution's entry point."""
    from importlib import metadata

    import opweave_python.plugin

    make_dist(fake_site, dist, "0.1.0", {module: source})
    pm = create_plugin_manager(autoload=False)
    pm.register(opweave_python.plugin, name="python")
    ours = [ep for ep in metadata.entry_points(group="opweave.plugins") if ep.name == module]
    pm.load_entry_points(ours)
    return pm


def test_linker_of_a_plugin_that_failed_to_load_is_installed_not_missing(fake_site: Path) -> None:
    with pytest.warns(PluginWarning, match="skipped plugin 'fake_c_plugin'"):
        pm = _python_backend_and(fake_site, "opweave-c", "fake_c_plugin", BROKEN)
    with pytest.raises(LinkerUnavailableError) as err:
        resolve_linker("c", pm)
    text = str(err.value)
    assert "opweave-c is installed, but its plugin 'fake_c_plugin' failed to load: " in text
    assert "RuntimeError: this plugin is broken on purpose" in text
    assert "not installed" not in text
    assert resolve_linker("auto", pm).__name__ == "VMLinker"


def test_misspelled_hook_is_caught(fake_site: Path) -> None:
    make_dist(fake_site, "fake-typo", "0.1", {"fake_typo_plugin": MISSPELLED})
    with pytest.warns(PluginWarning, match=r"unknown hook 'opweave_linker'"):
        pm = create_plugin_manager()
    assert not pm.has_plugin("fake_typo_plugin")


def test_hook_with_wrong_arguments_is_skipped(fake_site: Path) -> None:
    make_dist(fake_site, "fake-args", "0.1", {"fake_args_plugin": BAD_ARGS})
    with pytest.warns(PluginWarning, match="fake_args_plugin"):
        pm = create_plugin_manager()
    assert not pm.has_plugin("fake_args_plugin")


def test_autoload_can_be_turned_off(fake_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(fake_site, "fake-good", "1.0", {"fake_good_plugin": GOOD})
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "1")
    pm = create_plugin_manager()
    assert pm.records == []
    assert available_linkers(pm) == {}
    import fake_good_plugin  # type: ignore[import-not-found]

    pm.register(fake_good_plugin)
    assert set(available_linkers(pm)) == {"echo"}


def test_hand_registration_rejects_unknown_hooks(bare_plugin_manager) -> None:
    class Typo:
        @hookimpl
        def opweave_perfrom(self, op, node):
            return None

    import pluggy

    with pytest.raises(pluggy.PluginValidationError, match="unknown hook 'opweave_perfrom'"):
        bare_plugin_manager.register(Typo())
    assert bare_plugin_manager.get_plugins() == {bare_plugin_manager.get_plugin("opweave.builtin")}


def test_installed_distributions_are_found(plugin_manager) -> None:
    loaded = {r.name: r for r in plugin_manager.records if r.loaded}
    assert loaded["python"].distribution == "opweave-python"
    assert loaded["double"].distribution == "opweave-double"
    assert {"py", "vm"} <= set(available_linkers(plugin_manager))


def test_register_transfer_and_targets() -> None:
    x = double("x")
    assert opweave.transfer(x, "cpu") is x
    with pytest.raises(ValueError, match=r"cannot transfer x .* to target 'tpu'"):
        opweave.transfer(x, "tpu")

    def to_tpu(var, target):
        return add(var, 0.0) if target == "tpu" else None

    opweave.register_transfer(to_tpu)
    moved = opweave.transfer(x, "tpu")
    assert moved.owner.op is add and moved.owner.inputs[0] is x
    assert opweave.transfer(x, "cpu") is x
    with pytest.raises(TypeError, match="expects a Variable"):
        opweave.transfer(1.0, "cpu")
    with pytest.raises(TypeError, match="expects a callable"):
        opweave.register_transfer("nope")


def test_a_new_backend_is_one_small_distribution(fake_site: Path) -> None:
    """A backend whose linker runs every Op through Python: an entry point and a
    LoopLinker declaration, with no edit to the core."""
    import numpy as np

    import opweave.tensor as ot

    make_dist(fake_site, "opweave-step", "0.1.0", {"opweave_step_backend": MINIMAL_BACKEND})
    pm = create_plugin_manager()
    with use_plugin_manager(pm):
        x, t = ot.dmatrix("x"), ot.dvector("t")
        w = opweave.shared(np.zeros(3), name="w")
        loss = ot.mean((ot.dot(x, w) - t) ** 2)
        step = opweave.function(
            [x, t],
            loss,
            updates=[(w, w - 0.1 * opweave.grad(loss, w))],
            mode=opweave.Mode(linker="step"),
        )
        data, target = np.eye(3), np.array([1.0, 2.0, 3.0])
        assert step(data, target) == pytest.approx(14.0 / 3)
        np.testing.assert_allclose(w.get_value(), 0.2 / 3 * target)
    asked = sys.modules["opweave_step_backend"].ASKED
    assert len(asked) == len(step.maker.fgraph.apply_nodes) > 0
    assert type(step.maker.linker).__name__ == "StepLinker"
