"""Bad and odd input values reach every linker the same way (DESIGN.md section 7).

One function takes an input of each dtype/rank class; each test replaces one input with a
generated value of some class (layouts, subclasses, Python objects, wrong ranks ...) and
calls the function on ``py``, ``vm``, ``c`` and ``cvm``:

* values every linker must accept give NumPy's results, as plain ndarrays of the
  outputs' symbolic dtype and rank, and leave the caller's value untouched;
* values every linker must refuse raise the same exception type everywhere, naming the
  input;
* for the remaining classes the linkers agree (same exception type, or the same values,
  equal to NumPy's on the value converted to the input's dtype).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from c_parity import outcome, strided

import opweave
import opweave.tensor as ot
from opweave.compile import Mode

LINKERS = ("py", "vm", "c", "cvm")

# np.matrix inputs are part of what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")

#: (name, dtype, ndim) of the function's inputs: every dtype, ranks 0 to 3.
INPUTS = [
    ("f64_matrix", "float64", 2),
    ("f32_tensor3", "float32", 3),
    ("f64_scalar", "float64", 0),
    ("i64_vector", "int64", 1),
    ("i32_scalar", "int32", 0),
    ("i8_matrix", "int8", 2),
    ("b_vector", "bool", 1),
    ("b_matrix", "bool", 2),
]

_FUNCTIONS: dict[str, Any] = {}


def symbolic() -> tuple[list[Any], list[Any]]:
    ins = [ot.tensor(name=name, dtype=dtype, shape=(None,) * ndim) for name, dtype, ndim in INPUTS]
    outs = []
    for x in ins:
        outs.extend([x + x, x * x, ot.sum(x), ot.sum(x, axis=-1 if x.ndim else None)])
    return ins, outs


def functions() -> dict[str, Any]:
    """The function on every linker (compiled once per test session)."""
    if not _FUNCTIONS:
        ins, outs = symbolic()
        for linker in LINKERS:
            _FUNCTIONS[linker] = opweave.function(ins, outs, mode=Mode(linker=linker))
    return _FUNCTIONS


#: Outputs per input in :func:`symbolic`.
N_OUTS = 4


def expected(k: int, value: np.ndarray) -> list[np.ndarray]:
    """NumPy's outputs for input ``k`` holding ``value`` (a plain ndarray of its dtype)."""
    _, outs = symbolic()
    plus, times, total, partial = outs[N_OUTS * k : N_OUTS * (k + 1)]
    with np.errstate(over="ignore"):
        return [
            np.asarray(np.add(value, value), dtype=plus.dtype),
            np.asarray(np.multiply(value, value), dtype=times.dtype),
            np.asarray(np.sum(value, dtype=total.dtype)),
            np.asarray(np.sum(value, axis=-1 if value.ndim else None, dtype=partial.dtype)),
        ]


def random_value(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("int"):
        info = np.iinfo(dtype)
        low, high = max(int(info.min), -1000), min(int(info.max), 1000)
        return np.asarray(rng.integers(low, high, size=shape, dtype=dtype))
    return np.asarray(rng.standard_normal(shape) * 10, dtype=dtype)


def random_shape(rng: np.random.Generator, ndim: int, empty: bool = False) -> tuple[int, ...]:
    shape = [int(n) for n in rng.integers(1, 5, size=ndim)]
    if empty and ndim:
        shape[int(rng.integers(ndim))] = 0
    return tuple(shape)


def good_args(rng: np.random.Generator) -> list[np.ndarray]:
    return [random_value(rng, dtype, random_shape(rng, ndim)) for _, dtype, ndim in INPUTS]


# ---------------------------------------------------------------------- value classes
# Each maker takes (rng, dtype, ndim) and returns a value, or None when the class does not
# apply to that input.

Maker = Callable[[np.random.Generator, str, int], Any]

#: Stands for ``None`` (a maker returning ``None`` means "does not apply to this input").
_NONE = object()


def _fortran(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    if ndim < 2:
        return None
    return np.asfortranarray(random_value(rng, dtype, random_shape(rng, ndim)))


def _negative_strides(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    if ndim < 1:
        return None
    a = random_value(rng, dtype, random_shape(rng, ndim))
    return a[(slice(None, None, -1),) * ndim]


def _strided(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    if ndim < 1:
        return None
    return strided(random_value(rng, dtype, random_shape(rng, ndim)))


def _big_endian(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    a = random_value(rng, dtype, random_shape(rng, ndim))
    return a.astype(a.dtype.newbyteorder(">"))


def _read_only(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    a = random_value(rng, dtype, random_shape(rng, ndim))
    a.flags.writeable = False
    return a


def _unaligned(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    a = random_value(rng, dtype, random_shape(rng, ndim))
    if a.dtype.itemsize == 1:
        return None
    buf = np.empty(a.nbytes + 1, dtype=np.uint8)[1:].view(a.dtype).reshape(a.shape)
    buf[...] = a
    assert not buf.flags.aligned
    return buf


def _empty(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    if ndim < 1:
        return None
    return random_value(rng, dtype, random_shape(rng, ndim, empty=True))


def _zero_d_array(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return random_value(rng, dtype, ()) if ndim == 0 else None


def _numpy_scalar(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return random_value(rng, dtype, ())[()] if ndim == 0 else None


def _matrix(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    if ndim != 2:
        return None
    return np.asmatrix(random_value(rng, dtype, random_shape(rng, 2)))


def _masked(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    a = random_value(rng, dtype, random_shape(rng, ndim))
    return np.ma.masked_array(a, mask=rng.random(a.shape) < 0.5)


def _none(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return _NONE


def _object(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return object()


def _string(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return "1" if ndim == 0 else np.full(random_shape(rng, ndim), "1")


def _object_array(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return random_value(rng, dtype, random_shape(rng, ndim)).astype(object)


def _rank_up(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return random_value(rng, dtype, random_shape(rng, ndim + 1))


def _rank_down(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return random_value(rng, dtype, random_shape(rng, ndim - 1)) if ndim else None


def _huge_int(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    big = int(rng.integers(1, 10)) * 10**30 * (1 if rng.random() < 0.5 else -1)
    return big if ndim == 0 else np.full(random_shape(rng, ndim), big, dtype=object).tolist()


def _out_of_range_int(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    if not dtype.startswith("int"):
        return None
    value = int(np.iinfo(dtype).max) + int(rng.integers(1, 100))
    return value if ndim == 0 else np.full(random_shape(rng, ndim), value).tolist()


def _complex(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return random_value(rng, "float64", random_shape(rng, ndim)) * (1 + 1j)


def _list(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    return random_value(rng, dtype, random_shape(rng, ndim)).tolist()


def _other_dtype(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    others = [d for d in ("bool", "int8", "int32", "int64", "float32", "float64") if d != dtype]
    return random_value(rng, str(rng.choice(others)), random_shape(rng, ndim))


def _python_number(rng: np.random.Generator, dtype: str, ndim: int) -> Any:
    if ndim:
        return None
    return [True, 3, -7, 2.5, float("nan"), float("inf")][int(rng.integers(6))]


#: Classes every linker must accept, giving NumPy's values.
ACCEPTED: dict[str, Maker] = {
    "fortran_order": _fortran,
    "negative_strides": _negative_strides,
    "strided": _strided,
    "big_endian": _big_endian,
    "read_only": _read_only,
    "unaligned": _unaligned,
    "empty": _empty,
    "zero_d_array": _zero_d_array,
    "numpy_scalar": _numpy_scalar,
    "np_matrix": _matrix,
}

#: Classes every linker must refuse with TypeError.
REFUSED: dict[str, Maker] = {
    "masked_array": _masked,
    "none": _none,
    "python_object": _object,
    "string": _string,
    "object_array": _object_array,
    "rank_too_high": _rank_up,
    "rank_too_low": _rank_down,
    "complex": _complex,
}

#: Classes on which the linkers only have to agree (and be right when they accept).
AGREED: dict[str, Maker] = {
    "huge_int": _huge_int,
    "out_of_range_int": _out_of_range_int,
    "nested_list": _list,
    "other_dtype": _other_dtype,
    "python_number": _python_number,
}


def cases(maker: Maker, n_examples: int, salt: str) -> Iterator[tuple[int, Any, list[Any]]]:
    """``(input index, odd value, all arguments)`` for ``n_examples`` seeds and every input."""
    for seed in range(n_examples):
        rng = np.random.default_rng([seed, *salt.encode()])
        for k, (_, dtype, ndim) in enumerate(INPUTS):
            value = maker(rng, dtype, ndim)
            if value is None:
                continue
            if value is _NONE:
                value = None
            args: list[Any] = good_args(rng)
            args[k] = value
            yield k, value, args


def snapshot(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy(), value.flags.writeable
    return None


def run_everywhere(args: list[Any]) -> dict[str, tuple[str, Any]]:
    return {linker: outcome(f, args) for linker, f in functions().items()}


def describe(case: str, k: int, value: Any) -> str:
    name, dtype, ndim = INPUTS[k]
    return (
        f"{case}: input {k} ({name}, {dtype}, ndim {ndim}) given {type(value).__name__} "
        f"{getattr(value, 'dtype', '')} {np.shape(value) if value is not None else ''}: "
        f"{value!r:.200}"
    )


def assert_outputs_right(got: list[Any], args: list[Any], where: str) -> None:
    """Every output is a plain ndarray of its symbolic dtype and rank with NumPy's value."""
    _, outs = symbolic()
    assert len(got) == len(outs), where
    for j, (value, var) in enumerate(zip(got, outs, strict=True)):
        assert type(value) is np.ndarray, f"{where}: output {j} is a {type(value).__name__}"
        assert value.dtype == var.dtype and value.ndim == var.ndim, (
            f"{where}: output {j} is {value.dtype} ndim {value.ndim}, its Type is {var.type}"
        )
    for k, (_, dtype, _) in enumerate(INPUTS):
        converted = np.asarray(np.asarray(args[k]), dtype=dtype)
        for j, want in enumerate(expected(k, converted), start=N_OUTS * k):
            value = got[j]
            assert value.shape == want.shape, f"{where}: output {j} shape {value.shape}"
            if want.dtype.kind == "f":
                np.testing.assert_allclose(
                    value, want, rtol=1e-5, atol=1e-5, equal_nan=True, err_msg=where
                )
            else:
                np.testing.assert_array_equal(value, want, err_msg=where)


def check_untouched(before: Any, value: Any, where: str) -> None:
    if before is not None:
        data, writeable = before
        assert value.flags.writeable == writeable, f"{where}: the call changed the flags"
        np.testing.assert_array_equal(value, data, err_msg=f"{where}: the call changed the input")


@pytest.mark.reliability_long(default=3, long=60)
@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_layouts_every_linker_accepts_give_numpy_values(case: str, n_examples: int) -> None:
    seen = 0
    for k, value, args in cases(ACCEPTED[case], n_examples, case):
        where = describe(case, k, value)
        before = snapshot(value)
        for linker, (status, result) in run_everywhere(args).items():
            assert status == "ok", f"{where}: {linker} refused it: {result}"
            assert_outputs_right(result, args, f"{where} [{linker}]")
            check_untouched(before, value, f"{where} [{linker}]")
        seen += 1
    assert seen


@pytest.mark.reliability_long(default=3, long=60)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_values_every_linker_refuses_raise_typeerror_naming_the_input(
    case: str, n_examples: int
) -> None:
    seen = 0
    for k, value, args in cases(REFUSED[case], n_examples, case):
        where = describe(case, k, value)
        name = INPUTS[k][0]
        for linker, (status, result) in run_everywhere(args).items():
            assert status == "error", f"{where}: {linker} accepted it"
            exc_type, message = result
            assert exc_type is TypeError, f"{where}: {linker} raised {exc_type.__name__}: {message}"
            assert name in message, f"{where}: {linker}'s message does not name it: {message}"
        seen += 1
    assert seen


@pytest.mark.reliability_long(default=3, long=60)
@pytest.mark.parametrize("case", sorted(AGREED))
def test_other_odd_values_get_the_same_answer_on_every_linker(case: str, n_examples: int) -> None:
    seen = 0
    for k, value, args in cases(AGREED[case], n_examples, case):
        where = describe(case, k, value)
        name = INPUTS[k][0]
        results = run_everywhere(args)
        kinds = {
            linker: r[0] if r[0] == "ok" else r[1][0].__name__ for linker, r in results.items()
        }
        assert len(set(kinds.values())) == 1, f"{where}: the linkers disagree: {kinds}"
        status, result = results["py"]
        if status == "ok":
            for linker, (_, got) in results.items():
                assert_outputs_right(got, args, f"{where} [{linker}]")
        else:
            exc_type, message = result
            assert exc_type in (TypeError, ValueError), f"{where}: {exc_type.__name__}: {message}"
            assert name in message, f"{where}: the message does not name the input: {message}"
        seen += 1
    assert seen


def test_every_input_class_is_generated() -> None:
    """The generators are not vacuous: each class produces values for some input, and the
    classes cover every dtype and rank of :data:`INPUTS`."""
    makers = {**ACCEPTED, **REFUSED, **AGREED}
    for name, maker in makers.items():
        assert any(True for _ in cases(maker, 1, name)), name
    assert {d for _, d, _ in INPUTS} == {"bool", "int8", "int32", "int64", "float32", "float64"}
    assert {n for _, _, n in INPUTS} == {0, 1, 2, 3}
