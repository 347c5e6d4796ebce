"""``function(..., profile=...)`` and ``config.profile``: per-node and per-Op-class timing."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.executor import Function, ProfiledFunction
from opweave.compile.profiling import ProfileStats
from opweave.link import loop


def _graph():
    x = pt.vector("x")
    return x, pt.exp(x) * 2 + x.sum()


def _compile(linker: str, **kwargs):
    if linker in ("c", "cvm"):
        pytest.importorskip("opweave_c")
    x, y = _graph()
    return x, opweave.function([x], y, mode=opweave.Mode(linker=linker), **kwargs)


def _summary(profile: ProfileStats, **kwargs) -> str:
    out = io.StringIO()
    profile.summary(file=out, **kwargs)
    return out.getvalue()


def _table(text: str, title: str) -> list[str]:
    """The rows of one table of a summary."""
    block = text.split(f"\n{title}\n---\n", 1)[1]
    lines = block.split("\n\n", 1)[0].splitlines()[1:]  # skip the header line
    return [line for line in lines if line.strip() and not line.strip().startswith("...")]


def _seconds(row: str) -> float:
    return float(re.findall(r"([0-9.e+-]+)s", row)[0])


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_loop_linkers_time_every_node(linker: str) -> None:
    _, f = _compile(linker, profile=True, name="prof")
    value = np.linspace(-1.0, 1.0, 7)
    for _ in range(4):
        np.testing.assert_allclose(f(value), np.exp(value) * 2 + value.sum())
    prof = f.profile
    assert isinstance(prof, ProfileStats)
    assert isinstance(f, ProfiledFunction)
    assert prof.message == "prof"
    assert prof.fct_callcount == 4
    nodes = f.maker.fgraph.toposort()
    assert set(prof.apply_callcount) == {(f.maker.fgraph, node) for node in nodes}
    assert all(prof.apply_callcount[(f.maker.fgraph, node)] == 4 for node in nodes)
    times = [prof.apply_time[(f.maker.fgraph, node)] for node in nodes]
    assert all(t > 0 for t in times)
    assert sum(times) <= prof.vm_call_time <= prof.fct_call_time
    expected_impl = "c" if linker == "cvm" else "py"
    assert {prof.apply_impl[node] for node in nodes} == {expected_impl}
    assert prof.apply_cimpl == {node: linker == "cvm" for node in nodes}


def test_per_op_class_aggregation() -> None:
    x = pt.vector("x")
    y = pt.exp(pt.exp(x)) + pt.log(x.sum())
    f = opweave.function([x], y, profile=True)
    f(np.array([1.0, 2.0]))
    f(np.array([3.0, 4.0]))
    prof = f.profile
    nodes = f.maker.fgraph.toposort()
    by_class: dict[type, list] = {}
    for node in nodes:
        by_class.setdefault(type(node.op), []).append(node)
    fg = f.maker.fgraph
    class_time = prof.class_time()
    class_calls = prof.class_callcount()
    assert set(class_time) == set(by_class)
    for cls, members in by_class.items():
        assert class_time[cls] == pytest.approx(sum(prof.apply_time[(fg, n)] for n in members))
        assert class_calls[cls] == 2 * len(members)
        assert prof.class_nodes()[cls] == len(members)
        assert prof.class_impl()[cls] == "py"


def test_summary_tables_sorted_by_time() -> None:
    _, f = _compile("vm", profile=True, name="tables")
    f(np.arange(50.0))
    f(np.arange(50.0))
    prof = f.profile
    text = _summary(prof)
    assert "Message: tables" in text
    assert "Time in 2 calls to Function.__call__" in text
    fg = f.maker.fgraph
    # every node appears in the Apply table, slowest first, with its call count and impl
    rows = _table(text, "Apply")
    expected = sorted(fg.toposort(), key=lambda n: prof.apply_time[(fg, n)], reverse=True)
    assert [row.split(maxsplit=7)[-1] for row in rows] == [str(n) for n in expected]
    secs = [_seconds(row) for row in rows]
    assert secs == sorted(secs, reverse=True)
    assert all(row.split()[4] == "2" and row.split()[5] == "py" for row in rows)
    # the class table: slowest first, names of the Op classes
    class_rows = _table(text, "Class")
    classes = sorted(prof.class_time().items(), key=lambda kv: kv[1], reverse=True)
    assert [row.split()[-1] for row in class_rows] == [
        f"{cls.__module__}.{cls.__name__}" for cls, _ in classes
    ]
    # limits
    short = _summary(prof, n_ops_to_print=1, n_apply_to_print=2)
    assert len(_table(short, "Apply")) == 2
    assert len(_table(short, "Class")) == 1
    assert f"({len(rows) - 2} other nodes)" in short


def test_summary_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="n_apply_to_print must be an int >= 0"):
        ProfileStats().summary(file=io.StringIO(), n_apply_to_print=-1)


def test_profile_instance_accumulates_across_functions() -> None:
    shared = ProfileStats(message="both")
    _, f = _compile("vm", profile=shared)
    _, g = _compile("py", profile=shared)
    assert f.profile is shared and g.profile is shared
    f(np.ones(3))
    g(np.ones(3))
    g(np.ones(3))
    assert shared.fct_callcount == 3
    fgraphs = {fg for fg, _ in shared.apply_callcount}
    assert fgraphs == {f.maker.fgraph, g.maker.fgraph}
    for node in f.maker.fgraph.toposort():
        assert shared.apply_callcount[(f.maker.fgraph, node)] == 1
    for node in g.maker.fgraph.toposort():
        assert shared.apply_callcount[(g.maker.fgraph, node)] == 2
    rows = _table(_summary(shared), "Apply")
    assert len(rows) == len(f.maker.fgraph.apply_nodes) + len(g.maker.fgraph.apply_nodes)


def test_config_profile_profiles_every_function() -> None:
    with opweave.config.change_flags(profile=True):
        _, f = _compile("vm", name="cfg")
        _, off = _compile("vm", profile=False)
    assert isinstance(f.profile, ProfileStats) and f.profile.message == "cfg"
    assert off.profile is None and type(off) is Function
    f(np.ones(2))
    assert f.profile.fct_callcount == 1
    _, plain = _compile("vm")
    assert plain.profile is None


def test_c_linker_times_whole_calls_only() -> None:
    _, f = _compile("c", profile=True)
    value = np.arange(4.0)
    for _ in range(3):
        np.testing.assert_allclose(f(value), np.exp(value) * 2 + value.sum())
    prof = f.profile
    assert prof.fct_callcount == 3
    assert prof.fct_call_time > 0
    assert not prof.apply_callcount
    assert prof.untimed == ["c"]
    assert "Linker 'c' runs the whole graph in one call" in _summary(prof)


def test_unprofiled_function_links_the_untimed_loop(monkeypatch) -> None:
    used = []
    real_run, real_timed = loop.run_loop, loop.run_timed_loop

    def spy_run(*args, **kwargs):
        used.append("run_loop")
        return real_run(*args, **kwargs)

    def spy_timed(*args, **kwargs):
        used.append("run_timed_loop")
        return real_timed(*args, **kwargs)

    monkeypatch.setattr(loop, "run_loop", spy_run)
    monkeypatch.setattr(loop, "run_timed_loop", spy_timed)
    _, f = _compile("vm")
    assert used == ["run_loop"]
    assert type(f) is Function and f.profile is None
    assert not hasattr(f.fn, "profile")
    used.clear()
    _, g = _compile("vm", profile=True)
    assert used == ["run_timed_loop"]
    assert g.fn.profile is g.profile


def test_failing_node_still_counted_and_noted() -> None:
    x = pt.matrix("x")
    y = pt.dot(x, x)
    f = opweave.function([x], y, profile=True)
    with pytest.raises(ValueError) as info:
        f(np.ones((2, 3)))
    assert any("Apply node that caused the error" in note for note in info.value.__notes__)
    prof = f.profile
    assert prof.fct_callcount == 1
    assert sum(prof.apply_callcount.values()) == 1


def test_copy_keeps_profile_and_bad_profile_rejected() -> None:
    _, f = _compile("vm", profile=True)
    g = f.copy()
    g(np.ones(2))
    assert g.profile is f.profile and f.profile.fct_callcount == 1
    x, y = _graph()
    with pytest.raises(TypeError, match="profile must be a bool, a str"):
        opweave.function([x], y, profile=3)
    titled = opweave.function([x], y, profile="titled")
    assert titled.profile.message == "titled"


def test_reset_forgets_calls_and_keeps_recording() -> None:
    _, f = _compile("vm", profile=True)
    f(np.ones(2))
    f.profile.reset()
    assert f.profile.fct_callcount == 0 and not f.profile.apply_callcount
    f(np.ones(2))
    fg = f.maker.fgraph
    assert f.profile.fct_callcount == 1
    assert [f.profile.apply_callcount[(fg, n)] for n in fg.toposort()] == [1] * len(fg.apply_nodes)


def test_profile_stats_is_exported_where_pytensor_has_it() -> None:
    import opweave.compile
    from opweave.compile.profiling import ProfileStats

    assert opweave.compile.ProfileStats is ProfileStats
    assert "ProfileStats" in opweave.compile.__all__
