"""``pydotprint``: the Graphviz description of a graph, and its rendering by ``dot``."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.printing import pydotprint


def _lines(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def _function(linker: str) -> opweave.compile.function.Function:
    x, y = ot.dvector("x"), ot.dmatrix("y")
    return opweave.function([x, y], ot.exp(x) * 2 + y.sum(axis=0), mode=opweave.Mode(linker=linker))


def test_description_shows_ops_implementations_inputs_and_outputs() -> None:
    f = _function("cvm")
    text = pydotprint(f, format="dot", return_image=True).decode()
    assert text.startswith("digraph G {") and text.rstrip().endswith("}")
    boxes = _lines(text, "shape=box")
    assert len(boxes) == len(f.maker.fgraph.apply_nodes) == 2
    assert all("\\n[c]" in line and "#d9ead3" in line for line in boxes)
    inputs = _lines(text, "#b6d7a8")
    assert sorted(line.split('label="')[1].split(" ")[0] for line in inputs) == ["x", "y"]
    assert len(_lines(text, "#9fc5e8")) == 1  # the output
    # the fused node overwrites the sum's result in place: its edge is red, numbered 1
    assert len(_lines(text, 'color="red"')) == 1 and 'label="1 ' in _lines(text, "red")[0]


@pytest.mark.parametrize(("linker", "impl"), [("py", "py"), ("vm", "py"), ("c", "c")])
def test_node_colours_follow_the_implementation_that_runs_them(linker: str, impl: str) -> None:
    f = _function(linker)
    assert set(f.maker.node_impls.values()) == {impl}
    text = pydotprint(f, format="dot", return_image=True).decode()
    assert all(f"\\n[{impl}]" in line for line in _lines(text, "shape=box"))


def test_views_are_blue_dashed_and_compact_hides_unnamed_intermediates() -> None:
    x = ot.dmatrix("x")
    out = ot.exp(x.T)
    text = pydotprint([out], format="dot", return_image=True).decode()
    assert len(_lines(text, "style=dashed")) == 1  # the transpose is a view of x
    assert len(_lines(text, "shape=ellipse")) == 2  # x and the output only
    full = pydotprint([out], format="dot", return_image=True, compact=False).decode()
    assert len(_lines(full, "shape=ellipse")) == 3
    colours = pydotprint(
        [out], format="dot", return_image=True, colorCodes={"Elemwise": "magenta"}
    ).decode()
    assert len(_lines(colours, 'fillcolor="magenta"')) == 1
    outline = pydotprint(
        [out],
        format="dot",
        return_image=True,
        colorCodes={"Elemwise": "magenta"},
        high_contrast=False,
    ).decode()
    assert (
        len(_lines(outline, 'color="magenta"')) == 1
        and "fillcolor" not in outline.split("magenta")[0].splitlines()[-1]
    )


def test_labels_are_cut_and_ids_added() -> None:
    x = ot.dvector("a_rather_long_variable_name")
    text = pydotprint(
        [ot.exp(x)], format="dot", return_image=True, max_label_size=10, with_ids=True
    ).decode()
    assert 'label="v' in text and "a_rathe..." in text


def test_rendering_needs_graphviz_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("opweave.graph_picture.shutil.which", lambda name: None)
    with pytest.raises(RuntimeError, match=r"Graphviz's `dot` program.*format='dot'"):
        pydotprint(_function("py"), format="png", return_image=True)


def test_rendering_runs_dot_with_the_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in ``dot`` on PATH records its argument and echoes the description."""
    fake = tmp_path / "dot"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$1"\ncat\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "graph.svg"
    pydotprint(_function("py"), outfile=out, format="svg", print_output_file=False)
    written = out.read_text()
    assert written.startswith("-Tsvg\ndigraph G {")
    failing = tmp_path / "bin2"
    failing.mkdir()
    (failing / "dot").write_text("#!/bin/sh\necho 'Format: \"nope\" not recognized' >&2\nexit 1\n")
    (failing / "dot").chmod(0o755)
    monkeypatch.setenv("PATH", f"{failing}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(RuntimeError, match="not recognized"):
        pydotprint(_function("py"), outfile=tmp_path / "x.nope", format="nope")


def test_default_outfile_is_in_the_compiledir(capsys: pytest.CaptureFixture[str]) -> None:
    pydotprint(_function("py"), format="dot")
    path = Path(opweave.config.compiledir) / "opweave.pydotprint.dot"
    assert path.read_text().startswith("digraph G {")
    assert str(path) in capsys.readouterr().out


@pytest.mark.parametrize("option", ["cond_highlight", "scan_graphs"])
def test_unavailable_options_are_refused(option: str) -> None:
    with pytest.raises(NotImplementedError, match=option):
        pydotprint(_function("py"), format="dot", **{option: True})


def test_values_are_unchanged_by_drawing() -> None:
    f = _function("cvm")
    pydotprint(f, format="dot", return_image=True)
    x, y = np.arange(3.0), np.ones((2, 3))
    np.testing.assert_allclose(f(x, y), np.exp(x) * 2 + y.sum(axis=0))


def test_html_page_shows_profile_times_and_a_node_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x).sum() * 2, profile=True, mode=opweave.Mode(linker="cvm"))
    f(np.ones(10))
    monkeypatch.setattr("opweave.graph_picture.shutil.which", lambda name: None)
    page = pydotprint(f, format="html", return_image=True).decode()
    assert page.startswith("<!DOCTYPE html>") and "Graphviz" in page  # the description instead
    nodes = f.maker.fgraph.toposort()
    assert page.count("<tr><td>") == len(nodes)
    assert page.count("% ") >= len(nodes) and " x 1" in page  # share of time, calls
    fake = tmp_path / "dot"
    fake.write_text('#!/bin/sh\ncat >/dev/null\necho "<?xml?><svg id=drawn></svg>"\n')
    fake.chmod(0o755)
    monkeypatch.undo()
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "graph.html"
    pydotprint(f, outfile=out, format="html", print_output_file=False)
    written = out.read_text()
    assert "<svg id=drawn></svg>" in written and "<?xml" not in written
