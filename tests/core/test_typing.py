"""Typing of the graph objects: generic for type checkers, unchanged at run time.

``Variable`` is generic in its Type and owner, ``Apply`` in its Op (as in PyTensor), and
``TensorVariable`` is ``Variable[TensorType, ...]``. These tests check both sides: what
mypy (the checker of ``make lint``, from the dev dependency group) infers for user code,
and that the classes, instances and pickles are the plain ones they were.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import numpy as np
import pytest

import opweave
from opweave.compile.ops import DeepCopyOp
from opweave.graph.basic import Apply, Constant, NominalVariable, Variable
from opweave.graph.fg import FunctionGraph
from opweave.tensor.type import TensorType, dvector
from opweave.tensor.variable import TensorConstant, TensorVariable

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------- run time


def test_subscripts_are_aliases_of_the_plain_classes() -> None:
    alias = Variable[TensorType, None]
    assert typing.get_origin(alias) is Variable
    assert typing.get_args(alias) == (TensorType, type(None))
    assert typing.get_origin(Apply[DeepCopyOp]) is Apply
    assert typing.get_args(Apply[DeepCopyOp]) == (DeepCopyOp,)
    assert typing.get_origin(Constant[TensorType]) is Constant
    # Parameters: the Type and the owner of a variable, the Op of a node.
    assert [p.__name__ for p in Variable.__parameters__] == ["_TypeType", "OptionalApplyType"]
    assert [p.__name__ for p in Apply.__parameters__] == ["OpType"]
    assert [p.__name__ for p in TensorVariable.__parameters__] == ["OptionalApplyType"]
    assert TensorConstant.__parameters__ == ()


def test_class_hierarchy_is_unchanged_apart_from_generic_last() -> None:
    assert TensorVariable.__mro__[:4] == (
        TensorVariable,
        opweave.tensor.variable.TensorPyOperators,
        Variable,
        opweave.graph.basic.Node,
    )
    assert TensorConstant.__mro__[:5] == (
        TensorConstant,
        TensorVariable,
        opweave.tensor.variable.TensorPyOperators,
        Constant,
        Variable,
    )
    assert TensorConstant.__mro__[-2:] == (typing.Generic, object)
    x = dvector("x")
    assert type(x) is TensorVariable
    assert isinstance(x, Variable) and not isinstance(x, Constant)
    assert not hasattr(x, "__orig_class__")
    # Annotations only: the class-level declarations create no attributes.
    assert "type" not in Variable.__dict__ and "owner" not in Variable.__dict__


def test_nominal_variables_of_generic_classes_are_interned_and_typed() -> None:
    t = TensorType("float64", shape=(None,))
    nominal = NominalVariable(0, t)
    assert nominal is NominalVariable(0, t)
    assert isinstance(nominal, TensorVariable) and isinstance(nominal, NominalVariable)
    assert nominal.owner is None and nominal.index is None
    assert pickle.loads(pickle.dumps(nominal)) is nominal


def test_graphs_of_generic_classes_pickle_and_evaluate() -> None:
    x = dvector("x")
    c = opweave.tensor.constant(np.array([1.0, 2.0]))
    y = (x * c).sum()
    restored = pickle.loads(pickle.dumps(y))
    assert type(restored) is TensorVariable
    assert isinstance(restored.owner, Apply)
    (x2,) = [v for v in opweave.graph.traversal.graph_inputs([restored]) if v.name == "x"]
    np.testing.assert_allclose(restored.eval({x2: np.array([3.0, 4.0])}), 11.0)
    frozen = FunctionGraph([x], [y]).freeze()
    assert pickle.loads(pickle.dumps(frozen)) == frozen


def test_tagged_attributes_stay_free_form() -> None:
    x = dvector("x")
    x.tag.note = "kept"
    assert x.tag.note == "kept"
    with pytest.raises(AttributeError):
        _ = x.tag.missing


# ---------------------------------------------------------------------- type checker


def _mypy(tmp_path: Path, code: str) -> list[str]:
    """mypy's report lines for ``code`` (the opweave it reads is read for types only)."""
    pytest.importorskip("mypy", reason="mypy comes with the dev dependency group")
    (tmp_path / "user_code.py").write_text(textwrap.dedent(code), encoding="utf-8")
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\n"
        f"mypy_path = {ROOT / 'core' / 'src'}\n"
        "python_version = 3.11\n"
        "[mypy-opweave.*]\n"
        "follow_imports = silent\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            "--hide-error-context",
            "user_code.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.stderr == "", result.stderr
    return [line.split(": ", 1)[1] for line in result.stdout.splitlines()]


def test_type_checker_sees_the_type_and_owner_of_variables(tmp_path: Path) -> None:
    report = _mypy(
        tmp_path,
        """
        from opweave.compile.ops import DeepCopyOp
        from opweave.graph.basic import Apply, Variable
        from opweave.tensor.type import dvector
        from opweave.tensor.variable import TensorConstant, TensorVariable

        x = dvector("x")
        reveal_type(x)
        reveal_type(x.type)
        reveal_type(x.type.dtype)

        def f(v: Variable, c: TensorConstant, n: Apply[DeepCopyOp], t: TensorVariable) -> None:
            reveal_type(v.type)
            reveal_type(v.owner)
            reveal_type(c.owner)
            reveal_type(n.op)
            reveal_type(t.clone())
            if v.owner is not None:
                reveal_type(v.owner.op)
        """,
    )
    assert report == [
        'note: Revealed type is "opweave.tensor.variable.TensorVariable[None]"',
        'note: Revealed type is "opweave.tensor.type.TensorType"',
        'note: Revealed type is "str"',
        'note: Revealed type is "opweave.graph.type.Type"',
        'note: Revealed type is "opweave.graph.basic.Apply[opweave.graph.op.Op] | None"',
        'note: Revealed type is "None"',
        'note: Revealed type is "opweave.compile.ops.DeepCopyOp"',
        'note: Revealed type is "opweave.tensor.variable.TensorVariable[opweave.graph.basic.'
        'Apply[opweave.graph.op.Op] | None]"',
        'note: Revealed type is "opweave.graph.op.Op"',
    ]


def test_type_checker_sees_tensor_type_attributes_through_variable_type(
    tmp_path: Path,
) -> None:
    # ``TensorVariable`` is ``Variable[TensorType, ...]``: ``x.type`` is a TensorType, so its
    # ``ndim``, ``shape`` and ``dtype`` type-check without a cast, for roots, results of
    # operations and function parameters alike.
    report = _mypy(
        tmp_path,
        """
        from opweave.graph.basic import Variable
        from opweave.tensor.type import TensorType, dmatrix
        from opweave.tensor.variable import TensorVariable

        x = dmatrix("x")
        reveal_type(x.type.ndim)
        reveal_type(x.type.shape)

        def rank(t: TensorVariable, v: Variable[TensorType]) -> int:
            reveal_type(v.type)
            return t.type.ndim + v.type.ndim
        """,
    )
    assert report == [
        'note: Revealed type is "int"',
        'note: Revealed type is "tuple[int | None, ...]"',
        'note: Revealed type is "opweave.tensor.type.TensorType"',
    ]


def test_type_checker_rejects_what_the_types_do_not_allow(tmp_path: Path) -> None:
    report = _mypy(
        tmp_path,
        """
        from opweave.graph.basic import Variable
        from opweave.tensor.type import TensorType, dvector

        def f(v: Variable) -> None:
            ok: Variable = dvector("x")  # a tensor variable is a variable
            root: Variable[TensorType, None] = dvector("y")
            bad: Variable[TensorType, None] = v
            v.type.dtype
        """,
    )
    assert len(report) == 2, report
    assert report[0].startswith("error: Incompatible types in assignment")
    assert 'variable has type "Variable[TensorType, None]"' in report[0]
    assert report[1] == 'error: "Type" has no attribute "dtype"  [attr-defined]'


def test_public_surface_passes_the_configured_checker(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy comes with the dev dependency group")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")
