"""The core's one resolver: which implementation runs a node on a backend, and the thunk
built from it (``opweave.link.resolver``, ``opweave.link.thunks``)."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.graph.utils import NoImplementationError
from opweave.link.capabilities import (
    CAPABILITY_ATTRIBUTE,
    FALLBACK,
    IMPLEMENTED,
    MISSING,
    PARTIAL,
    capability_matrix,
    op_class_name,
)
from opweave.link.implementations import ImplementationTable, core_op_classes
from opweave.link.perform import own_perform
from opweave.link.resolver import Resolution, class_capability, implementation_for, resolve
from opweave.link.thunks import build_thunk, make_node_thunk
from opweave.plugins import hookimpl
from opweave_double import double


class Owned(Op):
    """Carries its own ``perform``."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + 1.0


class Plain(Op):
    """No implementation of its own."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double()])


class Deferred(Plain):
    """Its table entry defers it to another backend."""


class OwnThunk(Plain):
    """Builds its own thunks (PyTensor's override point)."""

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        out = storage_map[node.outputs[0]]

        def thunk():
            out[0] = -1.0
            compute_map[node.outputs[0]][0] = 1

        return thunk


def from_table(node, inputs, out):
    out[0][0] = inputs[0] * 10.0


def from_plugin(node, inputs, out):
    out[0][0] = inputs[0] * 100.0


def deferred(op, node):
    return None


setattr(deferred, CAPABILITY_ATTRIBUTE, FALLBACK)

TABLE = ImplementationTable(
    "test", {Owned: from_table, Plain: from_table, Deferred: deferred}, own_method="perform"
)


class FakeBackend:
    """A backend ``test``: a table, and a fallback to ``py``."""

    def __init__(self) -> None:
        self.info_calls = 0

    @hookimpl
    def opweave_backend_info(self):
        self.info_calls += 1
        return {
            "name": "opweave-test",
            "linkers": [],
            "available": True,
            "reason": None,
            "implementations": TABLE,
            "falls_back_to": "py",
        }


class AnsweringPlugin:
    """Answers ``test`` for every Op, counting the questions."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    @hookimpl
    def opweave_implementation(self, op, node, backend):
        self.asked.append((type(op).__name__, backend))
        return from_plugin if backend == "test" else None


@pytest.fixture
def backend(bare_plugin_manager):
    found = FakeBackend()
    bare_plugin_manager.register(found, name="test-backend")
    return found


@pytest.fixture
def answering(bare_plugin_manager):
    found = AnsweringPlugin()
    bare_plugin_manager.register(found, name="answering")
    return found


def _node(op):
    return op(double("x")).owner


def _run(thunk, node, storage_map, value=2.0):
    storage_map[node.inputs[0]][0] = value
    thunk()
    return storage_map[node.outputs[0]][0]


def _cells(node):
    storage = {v: [None] for v in (*node.inputs, *node.outputs)}
    computed = {v: [0] for v in storage}
    return storage, computed


# ---------------------------------------------------------------------- the order


def test_the_ops_own_method_comes_first(backend, answering) -> None:
    found = implementation_for(_node(Owned()), "test")
    assert (found.what, found.origin, found.source) == ("kernel", "method", "perform")
    assert answering.asked == []  # the plugins are not asked


def test_a_plugin_answer_comes_before_the_table(backend, answering) -> None:
    node = _node(Plain())
    found = implementation_for(node, "test")
    assert found == Resolution("test", "kernel", from_plugin, "plugin", "answering")
    assert answering.asked == [("Plain", "test")]  # one question through the one hook


def test_the_table_answers_when_no_plugin_does(backend) -> None:
    found = implementation_for(_node(Plain()), "test")
    assert (found.what, found.implementation, found.origin, found.source) == (
        "kernel",
        from_table,
        "table",
        "opweave-test",
    )


def test_a_declared_fallback_names_the_backend_it_falls_back_to(backend) -> None:
    found = implementation_for(_node(Deferred()), "test")
    assert (found.what, found.falls_back_to, found.source) == ("fallback", "py", "opweave-test")
    with pytest.raises(NoImplementationError, match=r"falls back .* on 'py'"):
        build_thunk(found_op := Deferred(), _node(found_op), {}, {}, [], "test")


def test_nothing_found_is_none_with_a_message_naming_what_was_asked(backend, answering) -> None:
    class Unknown(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [double()])

    node = _node(Unknown())
    assert implementation_for(node, "py").what == "none"
    storage, computed = _cells(node)
    with pytest.raises(NoImplementationError) as raised:
        make_node_thunk(node, storage, computed, [], ["py"])
    message = str(raised.value)
    assert "no installed backend implements Unknown" in message
    assert "for backend 'py'" in message
    assert "the Op's own perform" in message and "the plugins (answering)" in message


# ---------------------------------------------------------------------- the thunks


def test_make_node_thunk_builds_from_the_resolved_kernel(backend, answering) -> None:
    node = _node(Plain())
    storage, computed = _cells(node)
    thunk = make_node_thunk(node, storage, computed, [], ["test", "py"])
    assert thunk.impl == "test" and thunk.perform is from_plugin
    assert _run(thunk, node, storage) == 200.0 and computed[node.outputs[0]] == [1]


def test_a_fallback_moves_on_to_the_next_implementation(backend) -> None:
    node = _node(Deferred())
    storage, computed = _cells(node)
    with pytest.raises(NoImplementationError, match="Deferred"):
        make_node_thunk(node, storage, computed, [], ["test", "py"])  # nothing on py either
    owned = _node(Owned())
    storage, computed = _cells(owned)
    thunk = make_node_thunk(owned, storage, computed, [], ["nothing-here", "py"])
    assert thunk.impl == "py" and _run(thunk, owned, storage) == 3.0


def test_an_op_overriding_make_thunk_builds_its_own(backend, answering) -> None:
    node = _node(OwnThunk())
    storage, computed = _cells(node)
    thunk = make_node_thunk(node, storage, computed, [], ["test"])
    assert _run(thunk, node, storage) == -1.0
    assert answering.asked == []  # the resolver was not asked


def test_op_make_thunk_goes_through_the_same_resolver(backend, answering) -> None:
    op = Plain()
    node = _node(op)
    storage, computed = _cells(node)
    thunk = op.make_thunk(node, storage, computed, [], impl="test")
    assert thunk.perform is from_plugin


def test_a_compile_asks_the_hook_once_per_node_and_the_backends_once(plugin_manager) -> None:
    backend, answering = FakeBackend(), AnsweringPlugin()
    plugin_manager.register(backend, name="test-backend")
    plugin_manager.register(answering, name="answering")
    x = opweave.tensor.dvector("x")
    y = x
    for _ in range(20):
        y = opweave.tensor.exp(y) * 0.5
    before = backend.info_calls
    f = opweave.function([x], y, mode=opweave.Mode(linker="vm", optimizer=None))
    nodes = f.maker.fgraph.apply_nodes
    without_own = [n for n in nodes if own_perform(n.op) is None]
    asked_py = [name for name, impl in answering.asked if impl == "py"]
    assert len(without_own) > 20
    assert sorted(asked_py) == sorted(type(n.op).__name__ for n in without_own)
    assert backend.info_calls - before < 5  # read once for the resolver, not per node
    np.testing.assert_allclose(f(np.zeros(2)), f(np.zeros(2)))


# ---------------------------------------------------------------------- the matrix


def _expected(found: Resolution, in_scope: bool) -> set[str]:
    if found.what == "kernel":
        return {IMPLEMENTED, PARTIAL}
    if found.what == "fallback":
        return {FALLBACK}
    return {MISSING} if in_scope else {FALLBACK}


@pytest.mark.parametrize("backend_name", ["py", "c"])
def test_the_matrix_agrees_with_the_resolver_for_every_core_op_class(
    bare_plugin_manager, plugin_manager, backend_name
) -> None:
    infos = [
        info
        for info in plugin_manager.hook.opweave_backend_info()
        if getattr(info.get("implementations"), "backend", None) in ("py", "c")
    ]
    table = next(
        i["implementations"] for i in infos if i["implementations"].backend == backend_name
    )

    class TableOnly:  # the backend's table alone: no plugin answers per node
        @hookimpl
        def opweave_backend_info(self):
            return {"name": "under-test", "linkers": [], "implementations": table}

    bare_plugin_manager.register(TableOnly(), name="under-test")
    matrix = capability_matrix(infos)
    scope = set(table.scope())
    checked = 0
    for cls in core_op_classes():
        try:
            op = cls.__new__(cls)  # the resolver reads only the class and the table here
        except TypeError:  # an abstract class
            continue
        found = resolve(op, None, backend_name, bare_plugin_manager)  # type: ignore[arg-type]
        status = class_capability(table, cls)
        assert status in _expected(found, True), (cls, found)
        row = matrix.get(op_class_name(cls))
        if row is not None and set(row.values()) != {MISSING}:
            assert row["opweave-python" if backend_name == "py" else "opweave-c"] in _expected(
                found, cls in scope
            ), (cls, found, row)
        checked += 1
    assert checked > 100
