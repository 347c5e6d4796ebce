"""Hook answers of the wrong kind, and plugins' hook wrappers, are isolated at call time.

A plugin whose hook answers with something that cannot be what the hook asks for (a
Python implementation that is not callable, a C one without C code) is named in a warning
and skipped, and the next plugin answers; a plugin that wraps a hook neither turns isolation
off for the others nor breaks the call when it fails itself.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.plugins import PluginWarning, hookimpl

LINKERS = ["py", "vm", "c", "cvm"]


def _compile_everywhere() -> None:
    x = ot.dvector("x")
    values = np.array([0.0, -1.5, 2.0])
    for linker in LINKERS:
        f = opweave.function([x], ot.exp(x) + 1, mode=opweave.Mode(linker=linker))
        np.testing.assert_allclose(f(values), np.exp(values) + 1)


def _plugin_warnings(action: Callable[[], None]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


class ImplementationIsANumber:
    @hookimpl(tryfirst=True)
    def opweave_implementation(self, op, node, backend):
        return 42


class TransferIsAString:
    @hookimpl(tryfirst=True)
    def opweave_transfer(self, var, target):
        return "moved"


class RaisingRewrites:
    @hookimpl
    def opweave_rewrites(self, db):
        raise RuntimeError("boom in rewrites")


class PassThroughWrapper:
    """A well-behaved new-style wrapper around the rewrites hook."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(wrapper=True)
    def opweave_rewrites(self, db):
        self.calls += 1
        return (yield)


class OldStylePassThroughWrapper:
    @hookimpl(hookwrapper=True)
    def opweave_implementation(self, op, node, backend):
        yield


class WrapperFailingBeforeYield:
    @hookimpl(wrapper=True)
    def opweave_rewrites(self, db):
        raise RuntimeError("wrapper broke early")
        yield  # pragma: no cover


class WrapperFailingAfterYield:
    @hookimpl(wrapper=True)
    def opweave_implementation(self, op, node, backend):
        yield
        raise RuntimeError("wrapper broke late")


class OldStyleWrapperFailingAfterYield:
    @hookimpl(hookwrapper=True)
    def opweave_implementation(self, op, node, backend):
        yield
        raise KeyError("old wrapper broke late")


class WrapperReplacingTheImplementation:
    @hookimpl(wrapper=True)
    def opweave_implementation(self, op, node, backend):
        answer = yield
        return 42 if backend == "py" else answer


@pytest.mark.parametrize(
    ("plugin", "hook", "error"),
    [
        (
            ImplementationIsANumber(),
            "opweave_implementation",
            "returned 42 (int) for backend 'py', expected a perform-style callable or None",
        ),
    ],
    ids=["implementation"],
)
def test_an_answer_of_the_wrong_kind_is_named_and_skipped(
    plugin_manager, plugin, hook, error
) -> None:
    plugin_manager.register(plugin, name="clumsy")
    said = _plugin_warnings(_compile_everywhere)
    assert f"opweave: plugin 'clumsy' failed in hook {hook}: {error}; skipped its answer" in said
    assert all("'clumsy'" in message for message in said)
    assert {(f.plugin, f.hook) for f in plugin_manager.failures} == {("clumsy", hook)}


def test_a_c_implementation_without_c_code_is_skipped(plugin_manager) -> None:
    plugin_manager.register(ImplementationIsANumber(), name="clumsy")
    said = _plugin_warnings(_compile_everywhere)
    assert (
        "opweave: plugin 'clumsy' failed in hook opweave_implementation: returned 42 (int) "
        "for backend 'c', expected an object with a c_code method or None; skipped its answer"
    ) in said


def test_a_transfer_that_is_not_a_variable_is_skipped(plugin_manager) -> None:
    plugin_manager.register(TransferIsAString(), name="clumsy")
    x = ot.dvector("x")
    with pytest.warns(PluginWarning, match="'clumsy' failed in hook opweave_transfer: returned"):
        moved = opweave.transfer(x, "cpu")
    assert moved.type == x.type  # the malformed answer never reaches the caller
    assert [(f.plugin, f.hook) for f in plugin_manager.failures] == [("clumsy", "opweave_transfer")]


def test_a_wrapper_leaves_isolation_on_for_other_plugins(plugin_manager) -> None:
    wrapper = PassThroughWrapper()
    plugin_manager.register(wrapper, name="wrapping")
    plugin_manager.register(OldStylePassThroughWrapper(), name="old-wrapping")
    plugin_manager.register(RaisingRewrites(), name="clumsy")
    said = _plugin_warnings(_compile_everywhere)
    assert said == [
        "opweave: plugin 'clumsy' failed in hook opweave_rewrites: "
        "RuntimeError: boom in rewrites; skipped its answer"
    ]
    assert wrapper.calls > 0


@pytest.mark.parametrize(
    ("plugin", "hook", "error"),
    [
        (
            WrapperFailingBeforeYield(),
            "opweave_rewrites",
            "RuntimeError: wrapper broke early",
        ),
        (
            WrapperFailingAfterYield(),
            "opweave_implementation",
            "RuntimeError: wrapper broke late",
        ),
        (
            OldStyleWrapperFailingAfterYield(),
            "opweave_implementation",
            "KeyError: 'old wrapper broke late'",
        ),
        (
            WrapperReplacingTheImplementation(),
            "opweave_implementation",
            "returned 42 (int) for backend 'py', expected a perform-style callable or None",
        ),
    ],
    ids=["before-yield", "after-yield", "old-style-after-yield", "wrong-answer"],
)
def test_a_failing_wrapper_is_named_and_bypassed(plugin_manager, plugin, hook, error) -> None:
    plugin_manager.register(plugin, name="wrapping")
    said = _plugin_warnings(_compile_everywhere)
    expected = f"opweave: plugin 'wrapping' failed in hook {hook}: {error}; skipped its answer"
    assert said == [expected]


def test_a_nested_hook_error_names_only_the_plugin_that_raised_it(plugin_manager) -> None:
    class RefusingImplementation:
        @hookimpl(tryfirst=True)
        def opweave_implementation(self, op, node, backend):
            raise NotImplementedError("refused on purpose")

    plugin_manager.register(RefusingImplementation(), name="refusing")
    x = ot.dvector("x")
    with pytest.raises(NotImplementedError, match="refused on purpose") as raised:
        opweave.function([x], ot.exp(x), mode=opweave.Mode(linker="py"))
    notes = [note for note in raised.value.__notes__ if note.startswith("(raised by")]
    assert notes == ["(raised by opweave plugin 'refusing' in opweave_implementation)"]


def test_backend_versions_of_the_wrong_kind_are_skipped(plugin_manager) -> None:
    class OddVersions:
        @hookimpl
        def opweave_backend_info(self):
            return {"name": "opweave-odd", "linkers": [], "versions": {"odd": 1.5}}

    plugin_manager.register(OddVersions(), name="odd")
    with pytest.warns(PluginWarning, match="'odd' failed in hook opweave_backend_info"):
        names = [info["name"] for info in plugin_manager.hook.opweave_backend_info()]
    assert "opweave-odd" not in names and "opweave-python" in names
    assert [f.error for f in plugin_manager.failures] == [
        "returned 'versions' {'odd': 1.5}; expected a dict of str to str"
    ]
