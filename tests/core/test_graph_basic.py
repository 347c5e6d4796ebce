"""Variables, constants, Apply nodes and graph walking."""

from __future__ import annotations

import pytest

from opweave import graph as gof
from opweave.graph import (
    Apply,
    Constant,
    Op,
    Type,
    Variable,
    ancestors,
    clone,
    clone_replace,
    graph_inputs,
    io_toposort,
)


class Num(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        if strict and not isinstance(x, float):
            raise TypeError("Expected a float!")
        return float(x)

    def __eq__(self, other):
        return type(other) is Num

    def __hash__(self):
        return hash(Num)


num = Num()


class Bin(Op):
    __props__ = ("name",)

    def __init__(self, name):
        self.name = name

    def make_node(self, x, y):
        return Apply(self, [x, y], [num()])


add, mul = Bin("add"), Bin("mul")


def test_variable_fields_and_clone() -> None:
    v = num("v")
    v.tag.note = "hello"
    c = v.clone()
    assert c is not v and c.type is v.type and c.name == "v" and c.tag.note == "hello"
    assert c.owner is None and c.index is None
    c.tag.note = "changed"
    assert v.tag.note == "hello"


def test_variable_rejects_bad_fields() -> None:
    with pytest.raises(TypeError, match="name must be a str"):
        Variable(num, name=3)  # type: ignore[arg-type]


def test_constant_data_is_read_only_and_clone_shares_it() -> None:
    c = Constant(num, 2)
    assert c.data == 2.0 and c.value == 2.0 and c.owner is None
    with pytest.raises(AttributeError, match="read-only"):
        c.data = 3.0
    cc = c.clone()
    assert cc is not c and cc.data is c.data
    with pytest.raises(ValueError, match="cannot have an owner"):
        c.owner = Apply(add, [num(), num()], [num()])
    assert c.equals(Constant(num, 2.0)) and not c.equals(Constant(num, 3.0))


def test_apply_sets_owner_and_index() -> None:
    x, y = num("x"), num("y")
    node = add.make_node(x, y)
    out = node.outputs[0]
    assert out.owner is node and out.index == 0 and node.out is out
    with pytest.raises(TypeError, match="must be a Variable"):
        Apply(add, [x, 1.0], [num()])  # type: ignore[list-item]


def test_graph_walking() -> None:
    x, y, z = num("x"), num("y"), num("z")
    out = mul(add(x, y), z)
    assert set(graph_inputs([out])) == {x, y, z}
    assert {x, y, z, out} <= set(ancestors([out]))
    order = io_toposort([x, y, z], [out])
    assert [n.op for n in order] == [add, mul]


def test_io_toposort_respects_orderings() -> None:
    x = num("x")
    a = add(x, x)
    b = mul(x, x)
    out = add(a, b)
    order = io_toposort([x], [out], {a.owner: [b.owner]})
    assert order.index(b.owner) < order.index(a.owner)


def test_io_toposort_lists_what_the_lazy_walk_yields() -> None:
    """``io_toposort`` builds its list without the generator; the order is the same, with
    and without extra orderings, blockers inside the graph and shared subgraphs."""
    import random

    from opweave.graph.traversal import toposort_with_orderings

    rng = random.Random(3)
    x, y = num("x"), num("y")
    chains = []
    for start in (x, y):  # two independent chains with shared subgraphs inside each
        pool = [start]
        for _ in range(30):
            op = add if rng.random() < 0.5 else mul
            pool.append(op(rng.choice(pool), rng.choice(pool[-4:])))
        chains.append(pool)
    first, second = chains
    outputs = [add(first[-1], second[-1]), first[20], second[-3]]
    nodes = list(toposort_with_orderings(outputs, blockers=[x, y]))
    assert io_toposort([x, y], outputs) == nodes
    blockers = [x, y, first[10]]  # a computed variable taken as given
    assert io_toposort(blockers, outputs) == list(
        toposort_with_orderings(outputs, blockers=blockers)
    )
    # nodes of the second chain after nodes of the first (walked later): no cycle
    orderings = {
        second[5].owner: [first[25].owner],
        second[12].owner: [first[3].owner, first[28].owner],
    }
    ordered = io_toposort([x, y], outputs, orderings)
    assert ordered == list(toposort_with_orderings(outputs, blockers=[x, y], orderings=orderings))
    assert ordered != nodes
    assert ordered.index(first[25].owner) < ordered.index(second[5].owner)


def test_io_toposort_reports_a_cycle_of_orderings() -> None:
    x = num("x")
    a = add(x, x)
    out = mul(a, x)
    with pytest.raises(ValueError, match="cycle"):
        io_toposort([x], [out], {a.owner: [out.owner]})


def test_clone_and_clone_replace() -> None:
    x, y = num("x"), num("y")
    out = add(x, y)
    (nx, ny), (nout,) = clone([x, y], [out])
    assert nx is not x and nout.owner.inputs == [nx, ny]
    w = num("w")
    replaced = clone_replace(out, {y: w})
    assert replaced.owner.inputs[0] is x and replaced.owner.inputs[1] is w
    assert out.owner.inputs[1] is y


def test_gof_alias_names() -> None:
    for name in ("Type", "Generic", "Op", "Apply", "Variable", "Constant", "FunctionGraph"):
        assert hasattr(gof, name)


def test_a_node_input_takes_a_more_specific_type_but_not_another() -> None:
    import opweave.tensor as ot
    from opweave.graph.fg import FunctionGraph

    x = ot.dmatrix("x")
    exp = ot.exp(x)
    fg = FunctionGraph([x], [exp.sum()], clone=False)
    (sum_node,) = [n for n in fg.apply_nodes if "Sum" in str(n.op)]
    row = ot.specify_shape(x, (1, None))  # (1, None) is more specific than (None, None)
    fg.replace(exp, row)
    assert sum_node.inputs[0] is row  # as PyTensor allows
    with pytest.raises(TypeError, match="cannot convert variable f"):
        fg.replace(row, ot.fmatrix("f"))  # another dtype
    kept = FunctionGraph([x], [exp], clone=False)
    narrowed = ot.specify_shape(x, (1, None))
    kept.replace(exp, narrowed)  # outputs take a more specific type too, as in PyTensor
    assert kept.outputs[0] is narrowed
    with pytest.raises(TypeError, match="cannot convert variable f"):
        kept.replace(narrowed, ot.fmatrix("f"))
