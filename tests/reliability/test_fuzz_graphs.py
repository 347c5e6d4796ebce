"""Differential fuzzing: random graphs give the same results on every linker and mode.

Each seed builds a random graph of elementwise Ops, reductions, ``dot``, DimShuffles and
basic slicing over random dtypes and shapes (empty dimensions and broadcasting included),
compiles it on ``py`` with FAST_COMPILE (the reference), on ``vm``, ``c`` and ``cvm`` with
FAST_RUN, and in DebugMode, and checks that

* every mode returns what the reference returns, or raises the same exception type;
* every output is a plain ndarray whose dtype and ndim are exactly its symbolic Type's
  (and whose shape agrees with the Type's static shape);
* values agree exactly for integers and booleans, and within a dtype-appropriate
  tolerance (NaN-aware) for floats.

Graphs are built so that they are well typed: an Op is only applied to operands it
accepts, so any error while building one is a failure, not something to skip. A failure
prints the seed and the graph.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from c_parity import outcome

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.debugmode import DebugMode

DTYPES = ("bool", "int8", "int32", "int64", "float32", "float64")

BINARY = "add sub mul true_div floor_div mod maximum minimum lt gt le ge eq neq".split()

#: Largest magnitude of a generated input value.
INPUT_BOUND = 10.0


def modes() -> dict[str, Any]:
    """The modes compared; the first is the reference."""
    return {
        "py/FAST_COMPILE": Mode(linker="py", optimizer="fast_compile"),
        "vm/FAST_RUN": Mode(linker="vm", optimizer="fast_run"),
        "c/FAST_RUN": Mode(linker="c", optimizer="fast_run"),
        "cvm/FAST_RUN": Mode(linker="cvm", optimizer="fast_run"),
        "DebugMode": DebugMode(check_isfinite=False),  # NaN and inf are legitimate values here
    }


@dataclass
class Term:
    """A variable of the graph being built, the shape its value will have at run time, and
    a bound on the magnitude of its (float) values (``inf`` when unknown)."""

    var: Any
    shape: tuple[int, ...]
    bound: float

    @property
    def dtype(self) -> str:
        return str(self.var.type.dtype)

    @property
    def static(self) -> tuple[int | None, ...]:
        return tuple(self.var.type.shape)


def broadcastable_together(terms: list[Term]) -> bool:
    """Whether an Elemwise accepts these operands: on every (right-aligned) axis the run-time
    lengths agree, or the ones that differ are length 1 with static shape 1."""
    ndim = max(len(t.shape) for t in terms)
    for axis in range(1, ndim + 1):
        lengths = {t.shape[-axis] for t in terms if len(t.shape) >= axis}
        if len(lengths) <= 1:
            continue
        if len(lengths - {1}) > 1:
            return False
        for t in terms:
            if len(t.shape) >= axis and t.shape[-axis] == 1 and t.static[-axis] != 1:
                return False
    return True


def out_shape(terms: list[Term]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(t.shape for t in terms)))


class GraphBuilder:
    """Builds one random, well-typed graph from a seed."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 20240611])
        self.inputs: list[Term] = []
        self.pool: list[Term] = []
        self.values: list[np.ndarray] = []

    # ------------------------------------------------------------------ inputs

    def choice(self, seq: Any) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def operand(self) -> Term:
        """A term of the pool, most often one of the newest (so that graphs grow deep)."""
        if len(self.pool) > len(self.inputs) and self.rng.random() < 0.6:
            return self.choice(self.pool[-2:])  # type: ignore[no-any-return]
        return self.choice(self.pool)  # type: ignore[no-any-return]

    def make_inputs(self) -> None:
        ndim = int(self.rng.integers(0, 4))
        base = [
            int(self.choice([0, 1, 2, 3, 4]))
            if self.rng.random() < 0.15
            else int(self.rng.integers(1, 5))
            for _ in range(ndim)
        ]
        for k in range(int(self.rng.integers(1, 4))):
            nd = int(self.rng.integers(0, ndim + 1))
            shape, static = [], []
            for n in base[ndim - nd :]:
                if self.rng.random() < 0.25:
                    shape.append(1)
                    static.append(1)
                else:
                    shape.append(n)
                    static.append(None)
            dtype = self.choice(DTYPES)
            var = ot.tensor(name=f"x{k}", dtype=dtype, shape=tuple(static))
            term = Term(var, tuple(shape), INPUT_BOUND)
            self.inputs.append(term)
            self.pool.append(term)
            self.values.append(self.random_value(dtype, tuple(shape)))

    def random_value(self, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        if dtype == "bool":
            return np.asarray(self.rng.random(shape) < 0.5)
        if dtype.startswith("int"):
            return np.asarray(self.rng.integers(-10, 11, size=shape), dtype=dtype)
        value = np.clip(np.asarray(self.rng.standard_normal(shape)) * 4, -INPUT_BOUND, INPUT_BOUND)
        value = np.where(self.rng.random(shape) < 0.1, 0.0, value)
        return np.asarray(value, dtype=dtype)

    # ------------------------------------------------------------------ ops

    def elemwise_binary(self) -> Term | None:
        name = self.choice(BINARY)
        a, b = self.operand(), self.operand()
        if not broadcastable_together([a, b]):
            return None
        if name == "sub" and a.dtype == b.dtype == "bool":
            return None  # NumPy and opweave refuse bool - bool (a type error)
        var = getattr(ot, name)(a.var, b.var)
        bound = {
            "add": a.bound + b.bound,
            "sub": a.bound + b.bound,
            "mul": a.bound * b.bound,
            "maximum": max(a.bound, b.bound),
            "minimum": max(a.bound, b.bound),
        }.get(name, 1.0 if name in ("lt", "gt", "le", "ge", "eq", "neq") else math.inf)
        return Term(var, out_shape([a, b]), bound)

    def elemwise_unary(self) -> Term | None:
        name = self.choice(["exp", "log", "tanh", "neg"])
        a = self.operand()
        if name == "neg" and a.dtype == "bool":
            return None  # opweave refuses -bool (a type error)
        bound = {"tanh": 1.0, "neg": a.bound}.get(name, math.inf)
        return Term(getattr(ot, name)(a.var), a.shape, bound)

    def switch(self) -> Term | None:
        c, a, b = self.operand(), self.operand(), self.operand()
        if not broadcastable_together([c, a, b]):
            return None
        return Term(ot.switch(c.var, a.var, b.var), out_shape([c, a, b]), max(a.bound, b.bound))

    def cast(self) -> Term | None:
        a = self.operand()
        dtype = self.choice(DTYPES)
        if a.dtype.startswith("float") and dtype.startswith("int") and not a.bound <= 100:
            return None  # float to int is undefined for NaN, inf and out-of-range values
        return Term(
            ot.cast(a.var, dtype), a.shape, min(a.bound, 1.0 if dtype == "bool" else a.bound)
        )

    def reduction(self) -> Term | None:
        name = self.choice(["sum", "prod", "max", "min", "mean"])
        a = self.operand()
        nd = len(a.shape)
        kind = self.choice(["none", "int", "tuple"]) if nd else "none"
        axis: Any
        if kind == "none":
            axis = None
            kept: tuple[int, ...] = ()
        elif kind == "int":
            axis = int(self.rng.integers(-nd, nd))
            kept = tuple(n for i, n in enumerate(a.shape) if i != axis % nd)
        else:
            picked = sorted(
                self.rng.choice(nd, size=int(self.rng.integers(1, nd + 1)), replace=False)
            )
            axis = tuple(int(i) - nd if self.rng.random() < 0.5 else int(i) for i in picked)
            kept = tuple(n for i, n in enumerate(a.shape) if i not in picked)
        size = math.prod(a.shape) / max(math.prod(kept), 1)
        bound = {"sum": a.bound * size, "max": a.bound, "min": a.bound, "mean": a.bound}.get(
            name, math.inf
        )
        return Term(getattr(ot, name)(a.var, axis=axis), kept, bound)

    def dot(self) -> Term | None:
        a, b = self.operand(), self.operand()
        if not (1 <= len(a.shape) <= 2 and 1 <= len(b.shape) <= 2):
            return None
        inner_a, inner_b = a.shape[-1], b.shape[0]
        if inner_a != inner_b:
            return None
        shape = a.shape[:-1] + b.shape[1:]
        return Term(ot.dot(a.var, b.var), shape, a.bound * b.bound * max(inner_a, 1))

    def dimshuffle(self) -> Term | None:
        a = self.operand()
        nd = len(a.shape)
        keep = [i for i in range(nd) if a.static[i] != 1 or self.rng.random() < 0.5]
        order: list[Any] = [int(i) for i in self.rng.permutation(keep)]
        for _ in range(int(self.rng.integers(0, 2))):
            order.insert(int(self.rng.integers(0, len(order) + 1)), "x")
        shape = tuple(1 if i == "x" else a.shape[i] for i in order)
        return Term(a.var.dimshuffle(*order), shape, a.bound)

    def transpose(self) -> Term | None:
        a = self.operand()
        return Term(a.var.T, a.shape[::-1], a.bound)

    def subtensor(self) -> Term | None:
        a = self.operand()
        nd = len(a.shape)
        if not nd:
            return None
        index: list[Any] = []
        for n in a.shape[: int(self.rng.integers(1, nd + 1))]:
            if n and self.rng.random() < 0.25:
                index.append(int(self.rng.integers(-n, n)))
                continue

            step = self.choice([None, 1, 2, -1, -2, 3])
            start, stop = (
                None if self.rng.random() < 0.3 else int(self.rng.integers(-n - 2, n + 3))
                for _ in range(2)
            )
            index.append(slice(start, stop, step))
        shape = np.empty(a.shape, dtype=bool)[tuple(index)].shape
        return Term(a.var[tuple(index)], shape, a.bound)

    # ------------------------------------------------------------------ graph

    def build(self) -> tuple[list[Any], list[Any], list[np.ndarray]]:
        """Return ``(inputs, outputs, input values)``."""
        self.make_inputs()
        makers: list[Callable[[], Term | None]] = [
            self.elemwise_binary,
            self.elemwise_binary,
            self.elemwise_unary,
            self.switch,
            self.cast,
            self.reduction,
            self.dot,
            self.dimshuffle,
            self.transpose,
            self.subtensor,
        ]
        made: list[Term] = []
        for _ in range(int(self.rng.integers(2, 9))):
            for _attempt in range(20):
                term = self.choice(makers)()
                if term is not None:
                    break
            else:
                continue
            assert len(term.shape) == len(term.static) and all(
                s is None or s == n for n, s in zip(term.shape, term.static, strict=True)
            ), f"the builder's shape {term.shape} contradicts {term.var.type}"
            self.pool.append(term)
            made.append(term)
        assert made, "the builder made no node"
        outputs = [made[-1].var]
        if len(made) > 1 and self.rng.random() < 0.5:
            extra = self.choice(made[:-1]).var
            if extra is not outputs[0]:
                outputs.append(extra)
        return [t.var for t in self.inputs], outputs, self.values


def tolerance(dtype: np.dtype[Any]) -> tuple[float, float]:
    return (1e-4, 1e-4) if dtype == np.float32 else (1e-9, 1e-9)


def compare(ref: list[Any], got: list[Any], outputs: list[Any], where: str) -> None:
    for j, (r, g, var) in enumerate(zip(ref, got, outputs, strict=True)):
        at = f"{where}, output {j} ({var.type})"
        assert type(g) is np.ndarray, f"{at}: got a {type(g).__name__}"
        assert g.dtype == var.type.dtype, f"{at}: got dtype {g.dtype}"
        assert g.ndim == var.type.ndim, f"{at}: got ndim {g.ndim}"
        assert all(s is None or s == n for s, n in zip(var.type.shape, g.shape, strict=True)), (
            f"{at}: got shape {g.shape}"
        )
        assert g.shape == np.shape(r), f"{at}: got shape {g.shape}, reference {np.shape(r)}"
        if g.dtype.kind == "f":
            rtol, atol = tolerance(g.dtype)
            finite = np.abs(np.asarray(r, dtype="float64"))
            finite = finite[np.isfinite(finite)]
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            np.testing.assert_allclose(
                g, r, rtol=rtol, atol=atol * scale, equal_nan=True, err_msg=at
            )
        else:
            np.testing.assert_array_equal(g, r, err_msg=at)


@pytest.mark.reliability_long(default=6, long=300)
def test_random_graph_agrees_on_every_linker_and_mode(reliability_seed: int) -> None:
    seed = reliability_seed
    inputs, outputs, values = GraphBuilder(seed).build()
    graph = opweave.dprint(outputs, file="str", print_type=True)
    shown = "\n".join(f"  {v.name} = {val!r}" for v, val in zip(inputs, values, strict=True))
    where = f"seed {seed}\ngraph:\n{graph}\ninputs:\n{shown}\n"
    results: dict[str, tuple[str, Any]] = {}
    with np.errstate(all="ignore"):
        for name, mode in modes().items():
            try:
                f = opweave.function(inputs, outputs, mode=mode, on_unused_input="ignore")
            except Exception as exc:  # compiling a well-typed graph must not fail
                raise AssertionError(f"{where}{name}: compilation failed: {exc!r}") from exc
            results[name] = outcome(f, [v.copy() for v in values])
    (ref_name, ref), *others = results.items()
    if ref[0] == "ok":
        compare(ref[1], ref[1], outputs, f"{where}{ref_name} (against its own Type)")
    for name, got in others:
        if ref[0] == "error" or got[0] == "error":
            assert (ref[0], ref[1][0]) == (got[0], got[1][0]), (
                f"{where}{name}: {got[0]} {got[1] if got[0] == 'error' else ''} but "
                f"{ref_name}: {ref[0]} {ref[1] if ref[0] == 'error' else ''}"
            )
            continue
        compare(ref[1], got[1], outputs, f"{where}{name} against {ref_name}")


def test_the_builder_covers_every_kind_of_node() -> None:
    """The generator is not vacuous: over a few dozen seeds it builds every kind of Op,
    every dtype, empty dimensions and broadcasting, and its graphs are deterministic."""
    seen_ops: set[str] = set()
    dtypes: set[str] = set()
    empty = broadcast = False
    for seed in range(60):
        inputs, outputs, values = GraphBuilder(seed).build()
        for node in opweave.graph.basic.io_toposort(inputs, outputs):
            op = node.op
            seen_ops.add(type(getattr(op, "scalar_op", op)).__name__.lower())
            seen_ops.add(type(op).__name__.lower())
        dtypes.update(str(v.dtype) for v in values)
        empty |= any(0 in v.shape for v in values)
        broadcast |= any(1 in v.type.shape for v in inputs)
    assert dtypes == set(DTYPES)
    assert empty and broadcast
    names = "add mul truediv intdiv mod exp log tanh maximum minimum switch cast dimshuffle"
    for name in [*names.split(), "subtensor", "sum", "prod", "max", "min", "dot"]:
        assert any(name in op for op in seen_ops), (name, sorted(seen_ops))
    a = opweave.dprint(GraphBuilder(3).build()[1], file="str")
    assert a == opweave.dprint(GraphBuilder(3).build()[1], file="str")
