"""Compiled functions survive ``pickle`` (and ``copy``) by being compiled again, as in PyTensor.

The ``check_*`` helpers take a linker name; ``tests/backend_c/test_function_pickling_c.py``
runs them on the ``c`` and ``cvm`` linkers.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.compile.mode as mode_module
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.io import In
from opweave.compile.mode import linker_from_name, register_linker
from opweave.link.lookup import LinkerNotFoundError

LINKERS = ("py", "vm")


def roundtrip(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def check_values_roundtrip(linker: str) -> None:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    outs = [ot.exp(x) * y + ot.tanh(x) - 2.0, ot.sum(x * x, axis=0) + y]
    f = opweave.function([x, y], outs, mode=Mode(linker=linker), name="two")
    g = opweave.function([x, y], outs[1], mode=Mode(linker=linker), trust_input=True)
    xv, yv = np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.array([0.5, -1.5, 2.0])
    f2, g2 = roundtrip(f), roundtrip(g)
    assert f2 is not f and f2.name == "two" and g2.name is None
    assert f2.trust_input is False and g2.trust_input is True
    assert f2.maker.mode.linker == linker
    got = f2(xv, yv)
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_allclose(got[0], np.exp(xv) * yv + np.tanh(xv) - 2.0)
    np.testing.assert_allclose(got[1], (xv * xv).sum(axis=0) + yv)
    single = g2(xv, yv)
    assert isinstance(single, np.ndarray)
    np.testing.assert_allclose(single, (xv * xv).sum(axis=0) + yv)
    with pytest.raises(TypeError, match="bad input argument 0"):
        f2("not an array", yv)


def check_updates_continue(linker: str) -> None:
    x = ot.dvector("x")
    s = opweave.shared(np.zeros(3), name="s")
    f = opweave.function([x], s * 2.0, updates=[(s, s + x)], mode=Mode(linker=linker))
    step = np.array([1.0, 2.0, 3.0])
    f(step)
    f(step)
    f2 = roundtrip(f)
    s2 = f2.maker.implicit[0]
    assert s2 is not s and s2.name == "s"
    np.testing.assert_array_equal(s2.get_value(), 2 * step)
    np.testing.assert_array_equal(f2(step), 4 * step)
    np.testing.assert_array_equal(s2.get_value(), 3 * step)
    # The original and its unpickled copy no longer share state.
    np.testing.assert_array_equal(s.get_value(), 2 * step)
    np.testing.assert_array_equal(f(step), 4 * step)
    np.testing.assert_array_equal(s.get_value(), 3 * step)


def check_shared_stays_shared(linker: str) -> None:
    x = ot.dvector("x")
    s = opweave.shared(np.ones(2), name="s")
    inc = opweave.function([x], [], updates=[(s, s + x)], mode=Mode(linker=linker))
    read = opweave.function([], s.sum() * 10.0, mode=Mode(linker=linker))
    inc2, read2 = roundtrip([inc, read])
    assert inc2.maker.implicit[0] is read2.maker.implicit[0]
    assert inc2(np.array([1.0, 2.0])) == []
    assert float(read2()) == pytest.approx(50.0)
    assert float(read()) == pytest.approx(20.0)
    # Pickled separately, each gets its own copy of the shared variable.
    inc3, read3 = roundtrip(inc), roundtrip(read)
    assert inc3.maker.implicit[0] is not read3.maker.implicit[0]
    inc3(np.array([1.0, 1.0]))
    assert float(read3()) == pytest.approx(20.0)


def check_input_defaults(linker: str) -> None:
    x, y = ot.dvector("x"), ot.dscalar("y")
    acc = ot.dscalar("acc")
    f = opweave.function([x, In(y, value=3.0)], x * y, mode=Mode(linker=linker))
    np.testing.assert_array_equal(f(np.ones(2), 5.0), [5.0, 5.0])  # does not change the default
    f2 = roundtrip(f)
    np.testing.assert_array_equal(f2(np.ones(2)), [3.0, 3.0])
    np.testing.assert_array_equal(f2(np.ones(2), 2.0), [2.0, 2.0])
    np.testing.assert_array_equal(f2(np.ones(2)), [3.0, 3.0])
    # An input carrying state between calls is pickled with its current value.
    g = opweave.function(
        [x, In(acc, value=0.0, update=acc + x.sum())], acc * 1.0, mode=Mode(linker=linker)
    )
    g(np.array([1.0, 2.0]))
    g2 = roundtrip(g)
    assert float(g2(np.array([4.0]))) == pytest.approx(3.0)
    assert float(g2(np.array([0.0]))) == pytest.approx(7.0)


def check_givens(linker: str) -> None:
    x, z = ot.dvector("x"), ot.dvector("z")
    s = opweave.shared(np.array([1.0, 2.0]), name="s")
    f = opweave.function([x], z * 3.0 + x, givens={z: s * s}, mode=Mode(linker=linker))
    f2 = roundtrip(f)
    np.testing.assert_allclose(f2(np.array([0.5, 0.5])), [3.5, 12.5])
    f2.maker.implicit[0].set_value(np.array([2.0, 0.0]))
    np.testing.assert_allclose(f2(np.zeros(2)), [12.0, 0.0])


def check_copies(linker: str) -> None:
    x = ot.dvector("x")
    s = opweave.shared(np.zeros(2), name="s")
    f = opweave.function([x], s + x, updates=[(s, s + x)], mode=Mode(linker=linker), name="f")
    f(np.ones(2))
    # copy.copy is Function.copy: the same shared variable.
    c = copy.copy(f)
    assert c.name == "f copy" and c.maker.implicit[0] is s
    np.testing.assert_array_equal(c(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(s.get_value(), [2.0, 2.0])
    # copy.deepcopy goes through pickling: its own shared variable.
    d = copy.deepcopy(f)
    assert d.maker.implicit[0] is not s
    np.testing.assert_array_equal(d(np.ones(2)), [3.0, 3.0])
    np.testing.assert_array_equal(s.get_value(), [2.0, 2.0])
    # A copy, with updates deleted, pickles as it is.
    g = opweave.function([x], s * x, updates=[(s, s + 1.0)], mode=Mode(linker=linker))
    c2 = roundtrip(g.copy(delete_updates=True, name="no updates"))
    assert c2.name == "no updates" and len(c2.maker.fgraph.outputs) == 1
    np.testing.assert_array_equal(c2(np.array([1.0, 3.0])), [2.0, 6.0])
    np.testing.assert_array_equal(c2(np.array([1.0, 3.0])), [2.0, 6.0])
    np.testing.assert_array_equal(c2.maker.implicit[0].get_value(), [2.0, 2.0])


def check_fresh_process(
    linker: str, tmp_path: Any, env: dict[str, str] | None = None, prelude: str = ""
) -> str:
    """Pickle a function here, load and call it in a new process; return its stderr."""
    x = ot.dvector("x")
    s = opweave.shared(np.array([1.0, 2.0]), name="s")
    k = ot.dscalar("k")
    f = opweave.function(
        [x, In(k, value=4.0)],
        ot.exp(x) * s + k,
        updates=[(s, s + 1.0)],
        mode=Mode(linker=linker),
    )
    f(np.zeros(2))
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(f))
    code = (
        prelude + "import pickle, numpy as np\n"
        f"f = pickle.load(open({str(path)!r}, 'rb'))\n"
        "print(repr(f(np.array([0.0, 1.0])).tolist()), f.maker.mode.linker)\n"
        "print(repr(f.maker.implicit[0].get_value().tolist()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()[-2:]
    values, used = first.rsplit(" ", 1)
    np.testing.assert_allclose(eval(values), np.exp([0.0, 1.0]) * [2.0, 3.0] + 4.0)
    assert used == linker
    assert eval(second) == [3.0, 4.0]
    return done.stderr


@pytest.mark.parametrize("linker", LINKERS)
def test_values_roundtrip(linker: str) -> None:
    check_values_roundtrip(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_updates_continue_from_the_pickled_state(linker: str) -> None:
    check_updates_continue(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_shared_variable_stays_shared_between_functions_pickled_together(linker: str) -> None:
    check_shared_stays_shared(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_input_defaults_and_state_survive(linker: str) -> None:
    check_input_defaults(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_givens_compiled_graph_roundtrips(linker: str) -> None:
    check_givens(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_copy_deepcopy_and_pickled_copies(linker: str) -> None:
    check_copies(linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_loading_in_a_fresh_process(linker: str, tmp_path: Any) -> None:
    check_fresh_process(linker, tmp_path)


def test_nogc_linker_keeps_its_setting() -> None:
    x = ot.dvector("x")
    f = roundtrip(opweave.function([x], x + 1.0, mode=Mode(linker="vm_nogc")))
    assert f.maker.mode.linker == "vm_nogc"
    assert f.maker.linker.allow_gc is False
    np.testing.assert_array_equal(f(np.zeros(2)), [1.0, 1.0])


def test_linker_missing_where_unpickled_is_named(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Registered here only: a fresh process does not know it.
    monkeypatch.delitem(mode_module._registered_linkers, "py-for-pickle-test", raising=False)
    register_linker("py-for-pickle-test", linker_from_name("py"))
    x = ot.dvector("x")
    f = opweave.function([x], x * 2.0, mode=Mode(linker="py-for-pickle-test"))
    data = pickle.dumps(f)
    np.testing.assert_array_equal(pickle.loads(data)(np.ones(2)), [2.0, 2.0])
    path = tmp_path / "f.pkl"
    path.write_bytes(data)
    code = f"import pickle\npickle.load(open({str(path)!r}, 'rb'))\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode != 0
    assert LinkerNotFoundError.__name__ in done.stderr
    assert "py-for-pickle-test" in done.stderr
