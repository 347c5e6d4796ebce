"""The cache of rewritten graphs (``config.cache_rewrites``): a compile of a graph seen before
reuses its rewritten form, in this process or another, and never that of another graph.

Each test has its own compile directory, so what one test keeps is never what another
finds.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import In, Mode, Out, rewrite_cache
from opweave.graph.fg import FunctionGraph
from opweave.printing import debugprint


@pytest.fixture(autouse=True)
def own_compiledir(tmp_path: Path) -> Iterator[Path]:
    with opweave.config.change_flags(compiledir=str(tmp_path), cache_rewrites=True):
        yield tmp_path


def entries(compiledir: Path) -> list[Path]:
    folder = compiledir / "rewritten"
    return sorted(folder.glob("*.pickle")) if folder.exists() else []


def structure(f: Any) -> str:
    return debugprint(f, file="str", print_type=True)


def block_graph() -> tuple[list[Any], list[Any]]:
    x, y = ot.dvector("x"), ot.dmatrix("y")
    e = x
    for c in (1.5, 0.5, 2.0):
        e = ot.tanh(e * c + 0.1) + ot.mean(e) * 0.01
    return [x, y], [e, ot.dot(y, e) + ot.exp(x).sum()]


X = np.linspace(-1.0, 1.0, 4)
Y = np.arange(12.0).reshape(3, 4) / 10


@pytest.mark.parametrize("linker", ["py", "vm", "cvm", "c"])
def test_second_compile_reuses_the_rewritten_graph_with_the_same_values(linker: str) -> None:
    # Built twice by the same lines (creation traces are part of the key).
    first, second = (opweave.function(*block_graph(), mode=Mode(linker=linker)) for _ in "12")
    assert not first.maker.rewrites_reused
    assert second.maker.rewrites_reused
    assert structure(second) == structure(first)
    for a, b in zip(first(X, Y), second(X, Y), strict=True):
        np.testing.assert_array_equal(a, b)
    with opweave.config.change_flags(cache_rewrites=False):
        plain = opweave.function(*block_graph(), mode=Mode(linker=linker))
    assert not plain.maker.rewrites_reused
    # Another line builds it: the traces differ, so does the key.
    elsewhere = opweave.function(*block_graph(), mode=Mode(linker=linker))
    assert not elsewhere.maker.rewrites_reused
    for a, b in zip(plain(X, Y), second(X, Y), strict=True):
        np.testing.assert_array_equal(a, b)


def test_another_process_reuses_the_entry(own_compiledir: Path) -> None:
    script = textwrap.dedent(
        """
        import json, sys
        import numpy as np
        import opweave, opweave.tensor as ot
        x = ot.dvector("x")
        e = x
        for c in (1.5, 0.5, 2.0):
            e = ot.tanh(e * c + 0.1) + ot.mean(e) * 0.01
        f = opweave.function([x], e, mode=opweave.Mode(linker="cvm"))
        print(json.dumps([f.maker.rewrites_reused, f(np.linspace(-1, 1, 4)).tolist()]))
        """
    )
    env = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={own_compiledir}"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        ).stdout
        for _ in range(2)
    ]
    assert runs[0].startswith("[false,") and runs[1].startswith("[true,")
    assert runs[0][len("[false,") :] == runs[1][len("[true,") :]
    assert len(entries(own_compiledir)) == 1


VARIANTS = {
    "times 2": lambda: ([x := ot.dvector("x")], x * 2.0 + 1.0),
    "times 3": lambda: ([x := ot.dvector("x")], x * 3.0 + 1.0),
    "float32": lambda: ([x := ot.fvector("x")], x * 2.0 + 1.0),
    "static shape": lambda: ([x := ot.tensor("x", shape=(4,))], x * 2.0 + 1.0),
    "other name": lambda: ([x := ot.dvector("z")], x * 2.0 + 1.0),
    "other op": lambda: ([x := ot.dvector("x")], x * 2.0 - 1.0),
}


def test_graphs_that_differ_in_any_detail_never_share_an_entry(own_compiledir: Path) -> None:
    results: dict[str, list[Any]] = {name: [] for name in VARIANTS}
    for round_ in range(2):
        for name, build in VARIANTS.items():
            inputs, out = build()
            f = opweave.function(inputs, out, mode=Mode(linker="vm"))
            assert f.maker.rewrites_reused == (round_ == 1), name
            results[name].append(f(X.astype(inputs[0].dtype)))
        assert len(entries(own_compiledir)) == len(VARIANTS)
    np.testing.assert_allclose(results["times 2"][1], X * 2 + 1)
    np.testing.assert_allclose(results["times 3"][1], X * 3 + 1)
    np.testing.assert_allclose(results["other op"][1], X * 2 - 1)
    for name, (first, again) in results.items():
        np.testing.assert_array_equal(first, again, err_msg=name)


def test_mode_flags_and_declared_options_are_part_of_the_key(own_compiledir: Path) -> None:
    x = ot.dvector("x")
    out = ot.exp(x) * 2.0
    opweave.function([x], out, mode=Mode(linker="vm"))
    assert opweave.function([x], out, mode=Mode(linker="vm")).maker.rewrites_reused
    assert not opweave.function([x], out, mode=Mode(linker="py")).maker.rewrites_reused
    assert not opweave.function(
        [x], out, mode=Mode(linker="vm").excluding("fusion")
    ).maker.rewrites_reused
    with opweave.config.change_flags(floatX="float32"):
        assert not opweave.function([x], out, mode=Mode(linker="vm")).maker.rewrites_reused
    assert not opweave.function(
        [In(x, mutable=True)], out, mode=Mode(linker="vm")
    ).maker.rewrites_reused
    assert not opweave.function(
        [x], Out(out, borrow=True), mode=Mode(linker="vm")
    ).maker.rewrites_reused


def test_reused_graph_keeps_inputs_unmodified_and_outputs_unaliased() -> None:
    x = ot.dvector("x")
    outs = [x, ot.exp(x) + 1.0, (ot.exp(x) + 1.0) * 2.0]
    for _ in range(2):
        f = opweave.function([x], outs, mode=Mode(linker="cvm"))
        value = X.copy()
        got = f(value)
        np.testing.assert_array_equal(value, X)
        assert got[0] is not value
        np.testing.assert_allclose(got[2], (np.exp(X) + 1) * 2)
    assert f.maker.rewrites_reused


def test_reused_graph_with_shared_variables_and_updates() -> None:
    def build() -> Any:
        w = opweave.shared(np.zeros(4), name="w")
        x = ot.dvector("x")
        return w, opweave.function([x], ot.sum(w), updates=[(w, w + x * 0.5)])

    (w1, _f1), (w2, f2) = (build() for _ in "12")
    assert f2.maker.rewrites_reused
    f2(X)
    f2(X)
    np.testing.assert_allclose(w2.get_value(), X)
    np.testing.assert_allclose(w1.get_value(), np.zeros(4))  # the first function's own state
    assert f2(X) == pytest.approx(X.sum())


def test_reused_scan_runs_its_body_in_the_outer_mode() -> None:
    def build() -> Any:
        x = ot.dvector("x")
        ys, _ = opweave.scan(lambda v, acc: acc * 0.5 + v, sequences=x, outputs_info=ot.zeros(()))
        return opweave.function([x], ys[-1], mode=Mode(linker="cvm"))

    first, second = (build() for _ in "12")
    assert second.maker.rewrites_reused
    want = 0.0
    for v in X:
        want = want * 0.5 + v
    assert second(X) == pytest.approx(want) == first(X)


def exp_plus_one() -> Any:
    """``exp(x) + 1`` on ``vm``; its creation traces (part of the key) hold only the frame
    of this function, so every call has one key."""
    with opweave.config.change_flags(traceback__limit=1):
        x = ot.dvector("x")
        return opweave.function([x], ot.exp(x) + 1.0, mode=Mode(linker="vm"))


def test_unpicklable_graph_is_compiled_and_not_kept(own_compiledir: Path) -> None:
    x = ot.dvector("x")
    out = ot.exp(x)
    out.tag.callback = lambda: None
    f = opweave.function([x], out, mode=Mode(linker="vm"))
    np.testing.assert_allclose(f(X), np.exp(X))
    assert entries(own_compiledir) == []


def test_flag_off_keeps_nothing(own_compiledir: Path) -> None:
    x = ot.dvector("x")
    with opweave.config.change_flags(cache_rewrites=False):
        opweave.function([x], ot.exp(x), mode=Mode(linker="vm"))
    assert entries(own_compiledir) == []


def test_entry_another_user_could_write_is_ignored(own_compiledir: Path) -> None:
    exp_plus_one()
    (entry,) = entries(own_compiledir)
    entry.chmod(0o666)
    with pytest.warns(rewrite_cache.UnsafeRewriteCacheWarning, match="writable by group"):
        f = exp_plus_one()
    assert not f.maker.rewrites_reused
    np.testing.assert_allclose(f(X), np.exp(X) + 1)


def test_symbolic_link_entry_is_refused(own_compiledir: Path, tmp_path_factory: Any) -> None:
    exp_plus_one()
    (entry,) = entries(own_compiledir)
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "entry.pickle"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    with pytest.warns(rewrite_cache.UnsafeRewriteCacheWarning, match="symbolic link"):
        f = exp_plus_one()
    assert not f.maker.rewrites_reused


def test_damaged_entry_is_dropped_and_rebuilt(own_compiledir: Path) -> None:
    exp_plus_one()
    (entry,) = entries(own_compiledir)
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])
    entry.chmod(stat.S_IRUSR | stat.S_IWUSR)
    f = exp_plus_one()
    assert not f.maker.rewrites_reused
    np.testing.assert_allclose(f(X), np.exp(X) + 1)
    (rebuilt,) = entries(own_compiledir)
    assert len(rebuilt.read_bytes()) == len(data)
    assert exp_plus_one().maker.rewrites_reused


def test_least_recently_used_entries_go_beyond_the_limit(
    own_compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rewrite_cache, "MAX_ENTRIES", 2)

    def times(c: float) -> Any:
        with opweave.config.change_flags(traceback__limit=1):  # one key from any caller
            x = ot.dvector("x")
            return opweave.function([x], x * c, mode=Mode(linker="vm"))

    for c in (2.0, 3.0, 4.0):
        times(c)
    assert len(entries(own_compiledir)) == 2
    assert [times(c).maker.rewrites_reused for c in (4.0, 3.0, 2.0)] == [True, True, False]


USER_MODULE = """
from opweave.graph.basic import Apply
from opweave.graph.op import Op

FACTOR = {factor}


class Scaled(Op):
    __props__ = ("fn",)

    def __init__(self, fn=None):
        self.fn = fn

    def make_node(self, x):
        return Apply(self, [x], [x.type()])
"""


def test_the_files_of_the_code_a_graph_refers_to_are_part_of_the_key(
    tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The module of an Op class of the graph, and that of a function an Op holds."""
    folder = tmp_path_factory.mktemp("user_code")
    op_file = folder / "user_ops_for_rewrite_cache.py"
    op_file.write_text(USER_MODULE.format(factor=2))
    fn_file = folder / "user_fns_for_rewrite_cache.py"
    fn_file.write_text("def shape_of(x):\n    return x.shape\n")
    monkeypatch.syspath_prepend(str(folder))
    import user_fns_for_rewrite_cache as user_fns
    import user_ops_for_rewrite_cache as user_ops

    x = ot.dvector("x")
    graph = FunctionGraph([x], [user_ops.Scaled(user_fns.shape_of)(x)])

    def key() -> str | None:
        rewrite_cache._module_stamp.cache_clear()  # what a new process would see
        return rewrite_cache.rewrite_key(graph, [()], [()], ((), (), ()), "vm")

    first = key()
    assert first is not None and first == key()
    fn_file.write_text("def shape_of(x):\n    return (x.shape[0] + 1,)\n")
    second = key()
    assert second != first
    op_file.write_text(USER_MODULE.format(factor=3))
    assert key() not in (first, second)


def test_cache_command_lists_and_clears(own_compiledir: Path, capsys: Any) -> None:
    from opweave.cli import main

    exp_plus_one()
    assert main(["cache", "list"]) == 0
    assert capsys.readouterr().out.startswith("1 rewritten graphs (")
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == (
        f"removed 1 rewritten graphs from {own_compiledir / 'rewritten'}\n"
        f"removed 0 kept plugin lists from {own_compiledir / 'plugins'}\n"
    )
    assert entries(own_compiledir) == []
    assert not exp_plus_one().maker.rewrites_reused


def test_fast_compile_keeps_nothing(own_compiledir: Path) -> None:
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) + 1.0, mode="FAST_COMPILE")
    np.testing.assert_allclose(f(X), np.exp(X) + 1)
    assert entries(own_compiledir) == []


def test_large_constants_enter_the_key_by_digest(
    own_compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A constant of 80 000 doubles is hashed, not copied into the key; one changed element
    is another graph; a graph holding more than MAX_ENTRY_BYTES of constants is not kept."""

    def times_constant(value: np.ndarray) -> Any:
        with opweave.config.change_flags(traceback__limit=1):  # one key from any caller
            x = ot.dvector("x")
            return opweave.function([x], x * ot.constant(value), mode=Mode(linker="vm"))

    big = np.linspace(0.0, 1.0, 80_000)
    other = big.copy()
    other[-1] = 2.0
    first = times_constant(big)
    assert times_constant(big.copy()).maker.rewrites_reused
    changed = times_constant(other)
    assert not changed.maker.rewrites_reused
    ones = np.ones(80_000)
    np.testing.assert_array_equal(changed(ones), other)
    np.testing.assert_array_equal(first(ones), big)
    assert len(entries(own_compiledir)) == 2

    monkeypatch.setattr(rewrite_cache, "MAX_ENTRY_BYTES", 100_000)
    third = big.copy()
    third[0] = -1.0
    assert not times_constant(third).maker.rewrites_reused
    assert not times_constant(third).maker.rewrites_reused
    assert len(entries(own_compiledir)) == 2


def test_a_copied_function_says_its_graph_was_not_reused() -> None:
    f = exp_plus_one()
    copied = f.copy()
    assert copied.maker.rewrites_reused is False
    np.testing.assert_allclose(copied(X), np.exp(X) + 1)
