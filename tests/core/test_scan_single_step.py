"""``scan(..., n_steps=1)``: as in PyTensor, no loop is built; ``fn`` is applied once to
the first entries of the sequences and the initial values.

Each case is compared with the same loop whose number of steps is a variable given 1 when
the function is called (a ``Scan`` node, run for one step).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.graph.traversal import ancestors
from opweave.scan import Scan, scan, until

X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
INIT = np.array([[0.5, -0.5], [0.25, 1.5]])


def _cases() -> dict[str, dict[str, Any]]:
    return {
        "state": dict(fn=lambda s, h: h * 2.0 + s, seqs=True, info=lambda x0: [x0[0]]),
        "taps": dict(
            fn=lambda s, hm2, hm1: hm2 - hm1 * s,
            seqs=True,
            info=lambda x0: [dict(initial=x0, taps=[-2, -1])],
        ),
        "sequence-taps": dict(
            fn=lambda s0, s2, h: h + s0 * s2,
            seqs="taps",
            info=lambda x0: [x0[1]],
        ),
        "per-step": dict(fn=lambda s: (s * 3.0, s.sum()), seqs=True, info=lambda x0: [None, None]),
        "backwards": dict(
            fn=lambda s, h: h - s, seqs=True, info=lambda x0: [x0[0]], go_backwards=True
        ),
        "until": dict(
            fn=lambda s, h: (h + s, until(pt.all(h > 100.0))),
            seqs=True,
            info=lambda x0: [x0[0]],
        ),
    }


def _build(case: dict[str, Any], x: Any, x0: Any, n_steps: Any) -> list[Any]:
    sequences = [dict(input=x, taps=[0, 2])] if case["seqs"] == "taps" else [x]
    outs, _ = scan(
        case["fn"],
        sequences=sequences,
        outputs_info=case["info"](x0),
        n_steps=n_steps,
        go_backwards=case.get("go_backwards", False),
        return_list=True,
    )
    return outs


@pytest.mark.parametrize("name", sorted(_cases()))
def test_one_step_is_the_loop_run_once(name: str) -> None:
    case = _cases()[name]
    x, x0, k = pt.matrix("x"), pt.matrix("x0"), pt.lscalar("k")
    single = _build(case, x, x0, 1)
    assert not any(v.owner is not None and isinstance(v.owner.op, Scan) for v in ancestors(single))
    looped = _build(case, x, x0, k)
    got = opweave.function([x, x0], single, on_unused_input="ignore")(X, INIT)
    want = opweave.function([x, x0, k], looped, on_unused_input="ignore")(X, INIT, 1)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_one_step_keeps_updates_and_the_initial_dtype_is_not_checked() -> None:
    # PyTensor's test_mintap_onestep: an int8 initial state, an int32 sum.
    seq = pt.ivector("seq")
    total = scan(
        lambda s, acc: acc + s,
        sequences=dict(input=seq, taps=[2]),
        outputs_info=0,
        n_steps=1,
        return_updates=False,
    )
    np.testing.assert_array_equal(opweave.function([seq], total)(np.arange(20, dtype="int32")), [2])
    count = opweave.shared(0.0, name="count")
    out, updates = scan(lambda: (count * 2.0, {count: count + 1.0}), n_steps=1)
    fn = opweave.function([], out, updates=updates)
    np.testing.assert_array_equal(fn(), [0.0])
    np.testing.assert_array_equal(fn(), [2.0])
    assert count.get_value() == 2.0


def test_an_empty_outputs_info_feeds_nothing_back() -> None:
    u = pt.vector("u")
    out = scan(lambda u_t: u_t + 3, sequences=u, outputs_info=[], return_updates=False)
    np.testing.assert_array_equal(opweave.function([u], out)(np.array([1.0, 2.0])), [4.0, 5.0])
