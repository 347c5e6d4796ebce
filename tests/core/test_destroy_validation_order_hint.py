"""The DestroyHandler's validation against a caller's topological order (``order_hint``).

The in-place pass swaps nodes for in-place variants reading the same inputs and vouches
for a topological order, so the handler checks only what changed instead of sorting the
whole graph per candidate. These tests hold it to the same verdicts (and messages) as the
full check.
"""

from __future__ import annotations

import random

import pytest

from opweave.graph.basic import Apply, Variable
from opweave.graph.features import DestroyHandler, ReplaceValidate
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.type import Type
from opweave.graph.utils import InconsistencyError


class Scalar(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        return float(x)

    def __eq__(self, other):
        return type(other) is Scalar

    def __hash__(self):
        return hash(Scalar)


scalar = Scalar()


class Add(Op):
    __props__ = ()

    def make_node(self, x, y):
        return Apply(self, [x, y], [scalar()])


class AddInplace(Add):
    destroy_map = {0: [0]}


class View(Op):
    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        return Apply(self, [x], [scalar()])


add, add_inplace, view = Add(), AddInplace(), View()


def attach(fg: FunctionGraph, hinted: bool) -> DestroyHandler:
    fg.attach_feature(ReplaceValidate())
    handler = DestroyHandler()
    fg.attach_feature(handler)
    if hinted:
        handler.order_hint = {node: at for at, node in enumerate(fg.toposort())}
    return handler


def swap_in_place(fg: FunctionGraph, handler: DestroyHandler, node: Apply) -> str | None:
    """Replace ``node`` by its in-place variant as the in-place pass does; the refusal."""
    new = add_inplace.make_node(*node.inputs)
    order = handler.order_hint
    if order is not None:
        order[new] = order[node]
    try:
        fg.replace_all_validate([(node.outputs[0], new.outputs[0])], reason="test")
    except InconsistencyError as exc:
        if order is not None:
            del order[new]
        return str(exc)
    return None


def random_graph(seed: int) -> tuple[list[Variable], list[Variable]]:
    rng = random.Random(seed)
    inputs = [scalar(f"x{i}") for i in range(3)]
    inputs[0].tag.mutable = True
    pool = list(inputs)
    for _ in range(rng.randint(4, 14)):
        a, b = rng.choice(pool), rng.choice(pool)
        out = view(a) if rng.random() < 0.15 else add(a, b)
        pool.append(out)
    outputs = rng.sample(pool[3:], k=min(2, len(pool) - 3))
    return inputs, outputs


@pytest.mark.parametrize("seed", range(60))
def test_hinted_validation_gives_the_full_check_verdicts(seed: int) -> None:
    inputs, outputs = random_graph(seed)
    plain = FunctionGraph(inputs, outputs)
    hinted = FunctionGraph(inputs, outputs)
    plain_handler, hinted_handler = attach(plain, False), attach(hinted, True)
    plain_nodes, hinted_nodes = plain.toposort(), hinted.toposort()
    assert [str(n.op) for n in plain_nodes] == [str(n.op) for n in hinted_nodes]
    verdicts = []
    for plain_node, hinted_node in zip(plain_nodes, hinted_nodes, strict=True):
        if not isinstance(plain_node.op, Add) or isinstance(plain_node.op, AddInplace):
            continue
        expected = swap_in_place(plain, plain_handler, plain_node)
        got = swap_in_place(hinted, hinted_handler, hinted_node)
        assert (got is None) == (expected is None), (expected, got)
        verdicts.append(expected is None)
    assert [str(n.op) for n in plain.toposort()] == [str(n.op) for n in hinted.toposort()]
    hinted_handler.order_hint = None
    hinted.validate()  # what the hinted checks accepted, the full check accepts too


def test_random_graphs_exercise_both_verdicts() -> None:
    accepted = refused = 0
    for seed in range(60):
        inputs, outputs = random_graph(seed)
        fg = FunctionGraph(inputs, outputs)
        handler = attach(fg, True)
        for node in fg.toposort():
            if type(node.op) is Add:
                if swap_in_place(fg, handler, node) is None:
                    accepted += 1
                else:
                    refused += 1
    assert accepted > 20 and refused > 20


def graph_with_reader_after(hinted: bool) -> tuple[str | None, FunctionGraph]:
    x, y = scalar("x"), scalar("y")
    t = add(x, y)
    d = add(t, y)
    r = add(t, d)  # reads t and needs d: d cannot overwrite t
    fg = FunctionGraph([x, y], [r], clone=False)
    handler = attach(fg, hinted)
    return swap_in_place(fg, handler, d.owner), fg


def test_a_cycle_is_refused_with_the_full_checks_message() -> None:
    hinted, _ = graph_with_reader_after(True)
    plain, _ = graph_with_reader_after(False)
    assert hinted is not None and hinted == plain
    assert "cannot be scheduled" in hinted


def test_a_protected_input_is_refused_under_a_hint() -> None:
    x, y = scalar("x"), scalar("y")
    s = add(x, y)
    fg = FunctionGraph([x, y], [s], clone=False)
    handler = attach(fg, True)
    message = swap_in_place(fg, handler, s.owner)
    assert message is not None and "graph input not marked mutable" in message


def test_a_second_destroyer_of_one_value_is_refused_under_a_hint() -> None:
    x, y = scalar("x"), scalar("y")
    t = add(x, y)
    a = add(t, y)
    b = add(view(t), x)
    fg = FunctionGraph([x, y], [add(a, b)], clone=False)
    handler = attach(fg, True)
    first, second = sorted([a.owner, b.owner], key=handler.order_hint.__getitem__)
    assert swap_in_place(fg, handler, first) is None
    message = swap_in_place(fg, handler, second)
    assert message is not None and "destroyed" in message


def test_a_refused_candidate_leaves_nothing_to_recheck_wrongly() -> None:
    message, fg = graph_with_reader_after(True)
    assert message is not None
    fg.validate()  # the reverted graph is valid, under the hint or not
    fg.destroy_handler.order_hint = None
    fg.validate()
