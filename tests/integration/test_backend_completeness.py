"""Every installed backend implements every Op of its scope (``opweave info --ops``)."""

from __future__ import annotations

import io

import pytest

import opweave
import opweave.ifelse  # its IfElse is a core Op
import opweave.raise_op  # CheckAndRaise and Assert are core Ops
import opweave.scan  # its Scan is a core Op
import opweave.sparse  # the sparse Ops are core Ops
from opweave.cli import info
from opweave.graph.op import Op
from opweave.link.implementations import ImplementationTable, core_op_classes
from opweave.plugins import create_plugin_manager, hookimpl
from opweave.tensor.elemwise import CAReduce, Elemwise

TABLES = {
    info_["name"]: info_["implementations"]
    for info_ in create_plugin_manager().hook.opweave_backend_info()
    if info_.get("implementations") is not None
}


def test_the_shipped_backends_publish_their_tables() -> None:
    assert {"opweave-python", "opweave-c", "opweave-cuda"} <= set(TABLES)


@pytest.mark.parametrize("backend", sorted(TABLES))
def test_backend_implements_every_op_of_its_scope(backend: str) -> None:
    table = TABLES[backend]
    assert table.scope(), f"{backend} covers nothing"
    missing = [f"{cls.__module__}.{cls.__qualname__}" for cls in table.missing()]
    assert missing == [], f"{backend} ({table.backend}) lacks implementations of {missing}"


def test_the_core_scope_is_every_public_op_class_of_the_libraries() -> None:
    scope = core_op_classes()
    assert Elemwise in scope and CAReduce in scope
    assert Op not in scope
    assert all(not cls.__name__.startswith("_") for cls in scope)
    assert {cls.__module__.split(".")[1] for cls in scope} == {
        "compile",
        "ifelse",
        "printing",
        "raise_op",
        "scalar",
        "scan",
        "sparse",
        "tensor",
        "xtensor",  # its casts; its XOps are lowered before linking and left out
    }


class Base(Op):
    pass


class Child(Base):
    pass


class Other(Op):
    pass


class OwnsIt(Op):
    def perform(self, node, inputs, outputs):  # an Op carrying its implementation
        outputs[0][0] = inputs[0]


def test_table_looks_up_through_the_mro_and_reports_what_it_lacks() -> None:
    table = ImplementationTable(
        "py", {Base: "base impl"}, own_method="perform", scope=lambda: [Child, Other, OwnsIt]
    )
    assert table.lookup(Child()) == "base impl" and table.lookup(Child) == "base impl"
    assert table.lookup(Other()) is None
    assert table.implements(OwnsIt) and not table.implements(Other)
    assert table.missing() == [Other]
    assert dict(table) == {Base: "base impl"}
    with pytest.raises(TypeError):
        table[Other] = "no"  # read-only


def test_table_given_a_function_calls_it_once_at_the_first_lookup() -> None:
    calls = []

    def entries():
        calls.append(1)
        return {Base: "base impl"}

    table = ImplementationTable("py", entries, scope=lambda: [Child, Other])
    assert not table.loaded and calls == []
    assert repr(table) == "<ImplementationTable 'py': not loaded yet>"
    assert table.lookup(Child()) == "base impl" and table.loaded
    assert table.missing() == [Other] and dict(table) == {Base: "base impl"}
    assert calls == [1] and repr(table) == "<ImplementationTable 'py': 1 entries>"


def test_table_whose_function_fails_raises_at_each_lookup() -> None:
    def entries():
        raise ImportError("no such implementation module")

    table = ImplementationTable("py", entries)
    for _ in range(2):
        with pytest.raises(ImportError, match="no such implementation module"):
            table.lookup(Child)
    assert not table.loaded


def test_info_ops_names_what_a_backend_lacks(plugin_manager) -> None:
    class Partial:
        @hookimpl
        def opweave_backend_info(self):
            table = ImplementationTable("partial", {Base: 1}, scope=lambda: [Child, Other])
            return {
                "name": "opweave-partial",
                "linkers": [],
                "available": True,
                "reason": None,
                "implementations": table,
            }

    plugin_manager.register(Partial(), name="partial")
    out = io.StringIO()
    assert info(out, ops=True) == 0
    text = out.getvalue()
    assert "  opweave-partial (partial): 1 of 2 Op classes\n" in text
    assert f"    missing: {__name__}.Other\n" in text
    assert "  opweave-python (py): " in text
    assert opweave.cli.main(["info", "--ops"]) == 0
