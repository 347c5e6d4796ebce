"""Compile many cases into few functions, run them on every linker and compare.

Compiling C costs time per module and per node, so the cases checked together share one
function per linker (at most :data:`MAX_BATCH` cases each): each case brings its own input
variables and outputs. A case that fails on ``py`` is compiled alone on the other linkers;
when a batch still fails to compile or to run, it is split (into single cases on ``py`` and
``vm``, where compiling is cheap; in halves on the C linkers and ``jax``, which compile
each function whole) until the failing cases stand alone, so one case's error never hides
another case's values. Results are computed once per test run and linker.
"""

from __future__ import annotations

import functools
import os
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt

from .catalogue import (
    ELEMENTARY_ULPS,
    LINKER_DISAGREEMENTS,
    LINKER_ULPS,
    ElemwiseCase,
    MatrixCase,
    known_disagreement,
    linker_disagreement,
)
from .values import LAYOUTS, agree, cartesian, edge_values

__all__ = [
    "LINKERS",
    "LONG",
    "Item",
    "MatrixItem",
    "Outcome",
    "as_param",
    "describe_disagreements",
    "describe_matrix_disagreements",
    "elemwise_items",
    "elemwise_outcomes",
    "evaluate",
    "linker_ulps",
    "matrix_items",
    "matrix_outcomes",
    "refused",
    "usable_linkers",
    "without_known",
]


def as_param(item: Any) -> Any:
    """``item`` (an :class:`Item` or a :class:`MatrixItem`) as a pytest parameter named by
    its id, expected to fail (strictly) where it is a known disagreement."""
    marks = []
    if item.xfail is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=item.xfail))
    return pytest.param(item, id=item.id, marks=marks)


#: The linkers compared; ``py`` is the one the others must agree with. A linker's known
#: disagreements are in :data:`~.catalogue.LINKER_DISAGREEMENTS`.
LINKERS = ("py", "vm", "c", "cvm", "jax")

#: True in the long run (``make test-long``): every dtype combination, more values.
LONG = os.environ.get("OPWEAVE_RELIABILITY_LONG", "0") not in ("", "0")

#: Shares of the cases (drawn from their names) that the default run also checks on one
#: more dtype combination, and on 0-d inputs: compiling C for every combination costs
#: minutes, which the long run spends.
EXTRA_SHARE = 0.3
SCALAR_SHARE = 0.2

#: Most keys compiled into one function.
MAX_BATCH = 200

#: Columns of the 2-d inputs (their rows hold the remaining values).
COLUMNS = 4
#: Calls of an elementwise batch: the first pass the 2-d inputs in each layout, the rest
#: empty ones; each passes one combination of edge values to a case's 0-d inputs.
SCALAR_CALLS = 24 if LONG else 8


@dataclass(frozen=True)
class Item:
    """One case on inputs of one dtype combination."""

    case: ElemwiseCase
    signature: tuple[str, ...]
    #: Whether the case also runs on 0-d inputs of these dtypes.
    scalar: bool = False

    @property
    def id(self) -> str:
        return f"{self.case.name}-{'-'.join(self.signature)}"

    def values(self) -> list[np.ndarray]:
        """Every combination of the edge values of the inputs' dtypes, as 1-d arrays."""
        columns = [edge_values(dtype) for dtype in self.signature]
        combos = cartesian(columns, self.case.edge_limit)
        if self.case.drop is not None:
            keep = ~np.asarray(self.case.drop(*combos), bool)
            combos = [c[keep] for c in combos]
        return combos

    def matrices(self) -> list[np.ndarray]:
        """:meth:`values` as C-contiguous ``(rows, COLUMNS)`` arrays (the last row padded
        with the first values)."""
        flat = self.values()
        rows = -(-len(flat[0]) // COLUMNS)
        return [np.resize(v, rows * COLUMNS).reshape(rows, COLUMNS) for v in flat]

    def scalars(self, call: int) -> list[np.ndarray]:
        """The 0-d inputs of call number ``call`` (combinations spread over the values)."""
        flat = self.values()
        k = (call * 7919) % len(flat[0])
        return [np.asarray(v[k]) for v in flat]

    @property
    def xfail(self) -> str | None:
        return known_disagreement(self.case.name, self.signature)


@dataclass
class Outcome:
    """What one linker gave for one item: output values by call, or the error."""

    values: dict[str, np.ndarray]
    error: BaseException | None = None


def _mode(linker: str) -> opweave.Mode:
    return opweave.Mode(linker=linker)


def evaluate(
    build: Callable[[Sequence[str]], list[tuple[list[Any], list[Any]]]],
    keys: Sequence[str],
    calls: dict[str, Callable[[str], list[np.ndarray]]],
    linker: str,
) -> dict[str, Outcome]:
    """Compile ``build(keys)`` (per key: its input variables and outputs) on ``linker`` and
    call it once per entry of ``calls`` (call name -> key -> its input arrays).

    Returns key -> :class:`Outcome` whose ``values[call]`` lists the key's outputs; failing
    batches are split until each error belongs to one key.
    """
    if not keys:
        return {}
    parts = build(keys)
    inputs = [var for ins, _ in parts for var in ins]
    outputs = [out for _, outs in parts for out in outs]
    results: dict[str, Outcome] = {key: Outcome({}) for key in keys}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = opweave.function(inputs, outputs, mode=_mode(linker))
        for call, arrays_of in calls.items():
            args = [a for key in keys for a in arrays_of(key)]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = iter(fn(*args))
            for key, (_, outs) in zip(keys, parts, strict=True):
                results[key].values[call] = [next(got) for _ in outs]
    except Exception as exc:
        if len(keys) == 1:
            return {keys[0]: Outcome({}, exc)}
        if linker in ("py", "vm"):  # compiling is cheap: one function per key
            for key in keys:
                results.update(evaluate(build, [key], calls, linker))
            return results
        half = len(keys) // 2
        results = evaluate(build, keys[:half], calls, linker)
        results.update(evaluate(build, keys[half:], calls, linker))
    return results


def evaluate_in_chunks(
    build: Callable[[Sequence[str]], list[tuple[list[Any], list[Any]]]],
    keys: Sequence[str],
    calls: dict[str, Callable[[str], list[np.ndarray]]],
    linker: str,
) -> dict[str, Outcome]:
    """:func:`evaluate` on at most :data:`MAX_BATCH` keys at a time, so that no generated
    module grows beyond what a compiler builds quickly."""
    results: dict[str, Outcome] = {}
    for start in range(0, len(keys), MAX_BATCH):
        results.update(evaluate(build, keys[start : start + MAX_BATCH], calls, linker))
    return results


def has_c_code(var: Any) -> bool:
    """Whether every node computing ``var`` has C code (what the ``c`` linker needs)."""
    try:
        from opweave_c.contract import NoCCode, c_op_of, c_type_of
    except ImportError:
        return False
    stack = [var]
    while stack:
        current = stack.pop()
        try:
            c_type_of(current.type)
            if current.owner is not None:
                c_op_of(current.owner)
        except NoCCode:
            return False
        if current.owner is not None:
            stack.extend(current.owner.inputs)
    return True


#: The errors by which a linker refuses a node it has no code for: ``c`` a node without C
#: code (``cvm`` runs such nodes in Python), ``jax`` a node without a lowering (the
#: capability matrix reports both).
REFUSALS: dict[str, tuple[str, ...]] = {
    "c": ("MissingCCodeError", "MissingCCode"),
    "jax": ("NoImplementationError",),
}


def refused(linker: str, error: BaseException | None) -> bool:
    """Whether ``error`` is ``linker`` refusing a node it has no code for.

    Parameters
    ----------
    linker
        The linker's name.
    error
        What compiling or calling the case on ``linker`` raised (``None``: nothing).

    Returns
    -------
    bool
        True for the refusals of :data:`REFUSALS`, which are no disagreement.
    """
    names = REFUSALS.get(linker, ())
    return error is not None and type(error).__name__ in names


# -- elementwise ----------------------------------------------------------------------------


def _sample(rng: np.random.Generator, pool: list[Any], k: int) -> list[Any]:
    if len(pool) <= k:
        return list(pool)
    picked = rng.choice(len(pool), size=k, replace=False)
    return [pool[i] for i in sorted(picked)]


def _signatures(case: ElemwiseCase, rng: np.random.Generator, long: bool) -> list[tuple]:
    """The dtype combinations checked: float64 always (float32 too in the long run), and,
    for a share of the cases, one more drawn (all of them in the long run; 30 when the
    arity is above 2); then the known disagreements and the case's ``checked`` ones (which
    do not change the draw)."""
    floats = ("float64", "float32") if long else ("float64",)
    base = [tuple([d] * case.arity) for d in floats]
    known = [sig for (name, sig) in _known_signatures() if name == case.name]
    known += [sig for sig in case.checked if sig not in known]
    if case.arity <= 2:
        pool = case.signatures()
        chosen = [sig for sig in base if sig in pool]
        rest = [sig for sig in pool if sig not in chosen]
        drawn = int(rng.random() < EXTRA_SHARE) or int(not chosen)
        chosen += rest if long else _sample(rng, rest, drawn)
    else:
        # Wider products are sampled without enumerating them.
        chosen = [sig for sig in base if case.accepts(sig)]
        drawn = int(rng.random() < EXTRA_SHARE) or int(not chosen)
        want = len(chosen) + (30 if long else drawn)
        for _ in range(2000):
            if len(chosen) >= want:
                break
            sig = tuple(str(rng.choice(options)) for options in case.args)
            if sig not in chosen and case.accepts(sig):
                chosen.append(sig)
    return chosen + [sig for sig in known if sig not in chosen]


def _known_signatures() -> list[tuple[str, tuple[str, ...]]]:
    from .catalogue import KNOWN_DISAGREEMENTS, LINKER_DISAGREEMENTS

    named = [(name, sig) for name, sig, _ in LINKER_DISAGREEMENTS]
    return list(KNOWN_DISAGREEMENTS) + [key for key in named if key not in KNOWN_DISAGREEMENTS]


def without_known(
    name: str, signature: tuple[str, ...], linkers: Sequence[str], problems: list[str]
) -> list[str]:
    """``problems`` less those of the linkers known to disagree on a case.

    Parameters
    ----------
    name
        The case's name.
    signature
        The dtypes of its inputs.
    linkers
        The linkers compared.
    problems
        The disagreements found, each line starting with its linker's name.

    Returns
    -------
    list of str
        The lines of the linkers without an entry in
        :data:`~.catalogue.LINKER_DISAGREEMENTS`, and a line for each linker with one that
        now agrees (its entry must go).
    """
    kept = list(problems)
    for linker in linkers:
        why = linker_disagreement(name, signature, linker)
        if why is None:
            continue
        own = [line for line in kept if line.startswith((f"{linker}:", f"{linker}/"))]
        if not own:
            kept.append(f"{linker}: agrees, yet is listed as a known disagreement: {why}")
        kept = [line for line in kept if line not in own]
    return kept


def elemwise_items(cases: Sequence[ElemwiseCase], long: bool = LONG) -> list[Item]:
    """The items checked (drawn from each case's name, so a run is reproducible)."""
    items = []
    for case in cases:
        rng = np.random.default_rng(zlib.crc32(case.name.encode()))
        scalar = long or rng.random() < SCALAR_SHARE
        signatures = _signatures(case, rng, long)
        items += [Item(case, sig, scalar=scalar and k == 0) for k, sig in enumerate(signatures)]
    return items


def _build_elemwise(items: dict[str, Item]) -> Callable[[Sequence[str]], list]:
    """Per key: 2-d and 0-d input variables, and the two outputs."""

    def build(keys: Sequence[str]) -> list[tuple[list[Any], list[Any]]]:
        parts = []
        for key in keys:
            item = items[key]
            matrices = [pt.matrix(dtype=d) for d in item.signature]
            if not item.scalar:
                parts.append((matrices, [item.case.build(*matrices)]))
                continue
            scalars = [pt.tensor(dtype=d, shape=()) for d in item.signature]
            outs = [item.case.build(*matrices), item.case.build(*scalars)]
            parts.append((matrices + scalars, outs))
        return parts

    return build


#: The calls of an elementwise batch: the 2-d inputs' layout in each (``"empty"``: no rows).
_CALL_LAYOUTS = (*LAYOUTS, *(["empty"] * max(1, SCALAR_CALLS - len(LAYOUTS))))


def _elemwise_call(item: Item, number: int) -> list[np.ndarray]:
    layout = _CALL_LAYOUTS[number]
    matrices = item.matrices()
    if layout == "empty":
        laid = [m[:0] for m in matrices]
    else:
        laid = [LAYOUTS[layout](m) for m in matrices]
    return laid + item.scalars(number) if item.scalar else laid


@functools.cache
def elemwise_outcomes(items: tuple[Item, ...], linker: str) -> dict[str, Outcome]:
    """Each item's outputs on ``linker``, computed once per test run: call ``k`` passes the
    2-d inputs in layout ``_CALL_LAYOUTS[k]`` (results under that layout's name) and the
    ``k``-th 0-d inputs (results under ``"0d-<k>"``)."""
    by_key = {item.id: item for item in items}
    keys = list(by_key)
    without_code: dict[str, Outcome] = {}
    if linker == "c":
        build = _build_elemwise(by_key)
        for key in keys:
            if not all(has_c_code(out) for out in build([key])[0][1]):
                without_code[key] = Outcome({}, MissingCCode(f"no C code for {key}"))
        keys = [key for key in keys if key not in without_code]
    calls = {
        str(k): (lambda key, k=k: _elemwise_call(by_key[key], k)) for k in range(len(_CALL_LAYOUTS))
    }
    build = _build_elemwise(by_key)
    # Cases that fail on py are compiled alone elsewhere, so their failure costs one
    # compile rather than a bisection of the whole batch.
    failing = set()
    if linker != "py":
        py = elemwise_outcomes(items, "py")
        failing = {key for key in keys if py[key].error is not None}
    results = evaluate_in_chunks(build, [key for key in keys if key not in failing], calls, linker)
    for key in failing:
        results.update(evaluate(build, [key], calls, linker))
    for outcome in results.values():
        raw, outcome.values = outcome.values, {}
        for k, outs in raw.items():
            layout = _CALL_LAYOUTS[int(k)]
            if layout not in outcome.values:
                outcome.values[layout] = outs[0]
            if len(outs) > 1:
                outcome.values[f"0d-{k}"] = outs[1]
    return {**results, **without_code}


class MissingCCode(Exception):
    """The ``c`` linker was not asked: a node of the case has no C code."""


def _inputs_of_call(item: Item, call: str) -> list[np.ndarray]:
    if call.startswith("0d-"):
        return item.scalars(int(call[3:]))
    if call == "empty":
        return [m[:0] for m in item.matrices()]
    return item.matrices()


def _keeps_precision(item: Item, dtypes: set[np.dtype]) -> bool:
    """Whether the output must have the inputs' float dtype, as in NumPy: all inputs of one
    float dtype and a float output (casts excepted)."""
    if len(dtypes) != 1 or next(iter(dtypes)).kind != "f":
        return False
    if item.case.op_class.__name__ == "Cast":
        return False
    out = item.case.build(*(pt.tensor(dtype=d, shape=()) for d in item.signature))
    return out.dtype.startswith("float")


def _positions(mask: np.ndarray) -> list[tuple[int, ...]]:
    if mask.ndim == 0:
        return [()] if mask else []
    return list(zip(*np.nonzero(mask), strict=True))


def _show(values: list[np.ndarray], index: tuple[int, ...]) -> str:
    return ", ".join(repr(v[index] if v.ndim else v[()]) for v in values)


def describe_disagreements(item: Item, outcomes: dict[str, Outcome], limit: int = 4) -> list[str]:
    """Every way the linkers' outputs for ``item`` differ from the reference and from
    ``py``'s, as readable lines (empty when everything agrees), less the known
    disagreements of a linker (:func:`without_known`)."""
    problems = _elemwise_problems(item, outcomes, limit)
    return without_known(item.case.name, item.signature, list(outcomes), problems)


def _elemwise_problems(item: Item, outcomes: dict[str, Outcome], limit: int) -> list[str]:
    """:func:`describe_disagreements` before the known disagreements are set apart."""
    problems: list[str] = []
    out_var = item.case.build(*(pt.tensor(dtype=d, shape=(None, None)) for d in item.signature))
    out_dtype = out_var.dtype
    py = outcomes.get("py", Outcome({}, RuntimeError("py not run")))
    for linker, outcome in outcomes.items():
        if outcome.error is not None:
            if not refused(linker, outcome.error):
                problems.append(
                    f"{linker}: raised {type(outcome.error).__name__}: {str(outcome.error)[:300]}"
                )
            continue
        known = LINKER_DISAGREEMENTS.get((item.case.name, item.signature, linker))
        known_seen = False
        for call, got in outcome.values.items():
            inputs = _inputs_of_call(item, call)
            where = f"{linker}/{call}"
            if type(got) is not np.ndarray or got.dtype != out_dtype:
                problems.append(
                    f"{where}: got {type(got).__name__} of dtype "
                    f"{getattr(got, 'dtype', None)}, expected {out_dtype}"
                )
                continue
            dtypes = {x.dtype for x in inputs}
            if _keeps_precision(item, dtypes) and np.dtype(out_dtype) != next(iter(dtypes)):
                problems.append(f"{where}: {dtypes.pop()} inputs give {out_dtype} (NumPy keeps it)")
                break
            shape = np.broadcast_shapes(*(x.shape for x in inputs))
            if got.shape != shape:
                problems.append(f"{where}: shape {got.shape}, expected {shape}")
                continue
            expected = item.case.expected(inputs, out_dtype)
            ulps, signed = linker_ulps(item.case, linker), item.case.signed_zero
            tol = item.case.tolerance(inputs, out_dtype)
            bad = ~agree(got, expected, ulps, tol, signed_zero=signed)
            if py.error is None and call in py.values and linker != "py":
                bad |= ~agree(got, py.values[call], ulps, tol, signed_zero=signed)
            bad &= item.case.mask(inputs)
            if known is not None and known.where is not None:
                with np.errstate(all="ignore"):
                    positions = np.broadcast_to(known.where(inputs, expected), bad.shape)
                known_seen |= bool((bad & positions).any())
                bad &= ~positions
            for index in _positions(bad)[:limit]:
                others = {
                    name: o.values[call][index] if o.values[call].ndim else o.values[call][()]
                    for name, o in outcomes.items()
                    if o.error is None and call in o.values
                }
                problems.append(
                    f"{where}: {item.case.name}({_show(inputs, index)}) -> "
                    f"{got[index] if got.ndim else got[()]!r}, reference "
                    f"{expected[index] if expected.ndim else expected[()]!r}; all: {others}"
                )
            if len(problems) > 4 * limit:
                return problems
        if known is not None and known.where is not None and not known_seen:
            problems.append(f"{linker}: agrees where it is known to disagree: {known.why}")
    return problems


def linker_ulps(case: ElemwiseCase, linker: str) -> float:
    """The tolerance, in ulps, of ``linker``'s values of ``case``: the case's, or the
    linker's own for the function where it is wider (:data:`~.catalogue.LINKER_ULPS`).

    Parameters
    ----------
    case
        The case.
    linker
        The linker's name.

    Returns
    -------
    float
        The tolerance.
    """
    return max(case.ulps, LINKER_ULPS.get((case.name, linker), 0))


def usable_linkers() -> tuple[str, ...]:
    """The linkers of :data:`LINKERS` installed and usable here (``c`` and ``cvm`` need
    opweave-c and a C compiler)."""
    from opweave.link.lookup import available_linkers, unusable_linkers

    installed, unusable = available_linkers(), unusable_linkers()
    return tuple(name for name in LINKERS if name in installed and name not in unusable)


# -- functions of one matrix (reductions, shape and indexing Ops) ------------------------


def reduction_matrix(dtype: str) -> np.ndarray:
    """An ``(8, 6)`` input whose rows are edge scenarios: ordinary values, a NaN, both
    infinities, one infinity, negative zeros, an overflowing pair, subnormals, all
    negative (for integers: extremes, an overflowing row, ±1 ...)."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        rows = [[1, 0, 1, 1, 0, 1], [1] * 6, [0] * 6, [0, 0, 0, 0, 0, 1]] * 2
        return np.array(rows, dtype=bool)
    if kind in "iu":
        info = np.iinfo(dtype)
        neg = (lambda v: v) if kind == "i" else (lambda v: abs(v))
        rows = [
            [3, neg(-2), 5, 1, 7, neg(-1)],
            [info.max, info.max, 1, 2, 3, 1],
            [info.min, 1, 2, 3, 4, 5],
            [info.max, info.min, 0, 1, 1, 1],
            [0, 0, 0, 0, 0, 0],
            [neg(-1)] * 6,
            [123, neg(-38), 109, 23, 56, neg(-68)],
            [info.max - 1, 1, info.min + 1, 0, 2, 2],
        ]
        return np.array(rows, dtype=dtype)
    info = np.finfo(dtype)
    rows = [
        [0.5, -1.5, 2.0, 3.25, -0.75, 1.0],
        [1.0, np.nan, 2.0, -1.0, 0.5, 3.0],
        [np.inf, 1.0, -np.inf, 2.0, 0.0, 1.0],
        [np.inf, 1.0, 2.0, 3.0, 4.0, 5.0],
        [-0.0] * 6,
        [info.max, info.max, 1.0, 1.0, 1.0, 1.0],
        [info.smallest_subnormal, -info.smallest_subnormal, info.smallest_normal, 0.0, 0.0, 0.0],
        [-2.0, -1.0, -3.0, -0.5, -4.0, -1.0],
    ]
    return np.array(rows, dtype=dtype)


@dataclass(frozen=True)
class MatrixItem:
    """One function of a matrix on inputs of one dtype."""

    case: MatrixCase
    dtype: str

    @property
    def id(self) -> str:
        return f"{self.case.name}-{self.dtype}"

    @property
    def xfail(self) -> str | None:
        return known_disagreement(self.case.name, (self.dtype,))


#: The empty inputs of a total reduction, by call (alternating which axis is empty).
_EMPTY_SHAPES = ((0, 6), (6, 0))


def matrix_items(cases: Sequence[MatrixCase], long: bool = LONG) -> list[MatrixItem]:
    """Every case on float64 inputs where it takes them, and, for a share of the cases,
    on one more dtype drawn from the case's name (every dtype it takes in the long run);
    the known disagreements always."""
    items = []
    known = {(name, sig[0]) for name, sig in _known_signatures()}
    for case in cases:
        rng = np.random.default_rng(zlib.crc32(case.name.encode()))
        chosen = [d for d in case.dtypes if d == "float64"]
        rest = [d for d in case.dtypes if d != "float64"]
        drawn = int(rng.random() < EXTRA_SHARE) or int(not chosen)
        chosen += rest if long else _sample(rng, rest, drawn)
        chosen += [d for (name, d) in known if name == case.name and d not in chosen]
        items += [MatrixItem(case, dtype) for dtype in chosen if dtype in case.dtypes]
    return items


def _build_matrix_cases(items: dict[str, MatrixItem]) -> Callable[[Sequence[str]], list]:
    def build(keys: Sequence[str]) -> list[tuple[list[Any], list[Any]]]:
        parts = []
        for key in keys:
            item = items[key]
            x, empty = pt.matrix(dtype=item.dtype), pt.matrix(dtype=item.dtype)
            outs = [item.case.build(x)]
            ins = [x]
            if not item.case.needs_elements:
                ins.append(empty)
                outs.append(item.case.build(empty))
            parts.append((ins, outs))
        return parts

    return build


def _matrix_call(item: MatrixItem, number: int) -> list[np.ndarray]:
    layout = list(LAYOUTS)[number]
    args = [LAYOUTS[layout](reduction_matrix(item.dtype))]
    if not item.case.needs_elements:
        args.append(np.zeros(_EMPTY_SHAPES[number % 2], dtype=item.dtype))
    return args


@functools.cache
def matrix_outcomes(items: tuple[MatrixItem, ...], linker: str) -> dict[str, Outcome]:
    """Each item's outputs on ``linker`` (computed once per test run): call ``k`` passes
    the reduction matrix in the ``k``-th layout of :data:`~.values.LAYOUTS` (results under
    that layout's name) and, to reductions with an identity, an empty matrix (results
    under ``"empty-<k>"``)."""
    by_key = {item.id: item for item in items}
    calls = {str(k): (lambda key, k=k: _matrix_call(by_key[key], k)) for k in range(len(LAYOUTS))}
    results = evaluate_in_chunks(_build_matrix_cases(by_key), list(by_key), calls, linker)
    for outcome in results.values():
        raw, outcome.values = outcome.values, {}
        for k, outs in raw.items():
            outcome.values[list(LAYOUTS)[int(k)]] = outs[0]
            if len(outs) > 1:
                outcome.values[f"empty-{k}"] = outs[1]
    return results


def _matrix_expected(item: MatrixItem, x: np.ndarray, out_dtype: str) -> tuple:
    """The reference and the absolute tolerance of a float result."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = x.astype(np.float64) if x.dtype.kind == "f" else x
        expected = np.asarray(item.case.reference(wide)).astype(out_dtype)
        if np.dtype(out_dtype).kind != "f":
            return expected, None
        terms = max(1, x.size)
        eps = np.finfo(out_dtype).eps
        if item.case.error_bound == "sum":
            scale = np.asarray(item.case.reference(np.abs(x.astype(np.float64))))
        else:
            scale = np.abs(expected.astype(np.float64))
        return expected, 2 * terms * eps * scale


def describe_matrix_disagreements(item: MatrixItem, outcomes: dict[str, Outcome]) -> list[str]:
    """Every way the linkers' outputs for ``item`` differ from NumPy's and from ``py``'s."""
    problems: list[str] = []
    out_dtype = item.case.build(pt.matrix(dtype=item.dtype)).dtype
    py = outcomes.get("py", Outcome({}, RuntimeError("py not run")))
    for linker, outcome in outcomes.items():
        if outcome.error is not None:
            if not refused(linker, outcome.error):
                problems.append(
                    f"{linker}: raised {type(outcome.error).__name__}: {str(outcome.error)[:300]}"
                )
            continue
        for call, got in outcome.values.items():
            k = int(call.rsplit("-", 1)[-1]) if call.startswith("empty") else 0
            x = (
                np.zeros(_EMPTY_SHAPES[k % 2], item.dtype)
                if call.startswith("empty")
                else reduction_matrix(item.dtype)
            )
            expected, tol = _matrix_expected(item, x, out_dtype)
            where = f"{linker}/{call}"
            if type(got) is not np.ndarray or got.dtype != out_dtype or got.shape != expected.shape:
                problems.append(
                    f"{where}: got {type(got).__name__} {getattr(got, 'dtype', None)} "
                    f"{np.shape(got)}, expected {out_dtype} {expected.shape}"
                )
                continue
            good = agree(got, expected, ELEMENTARY_ULPS, tol)
            if py.error is None and call in py.values and linker != "py":
                good &= agree(got, py.values[call], ELEMENTARY_ULPS, tol)
            for index in _positions(~good)[:4]:
                others = {
                    name: o.values[call][index]
                    for name, o in outcomes.items()
                    if o.error is None and call in o.values
                }
                problems.append(
                    f"{where}: {item.case.name} of {item.dtype} at {index}: "
                    f"{got[index]!r}, reference {expected[index]!r}; all: {others}"
                )
    problems = without_known(item.case.name, (item.dtype,), list(outcomes), problems)
    if problems:
        problems.append(f"input rows:\n{reduction_matrix(item.dtype)!r}")
    return problems
