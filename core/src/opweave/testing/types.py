"""``check_type``: a Type against Theano's documented Type contract."""

from __future__ import annotations

import copy
import inspect
import pickle
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from opweave.compile.debug.debugmode.checks import is_immutable
from opweave.compile.function import function
from opweave.compile.mode import Mode
from opweave.testing.errors import CheckReport, ContractViolation, describe
from opweave.testing.linkers import c_of_type

__all__ = ["check_type"]

_REFUSALS = (TypeError, ValueError)


def _refusal_kind(exc: BaseException) -> str:
    for kind in _REFUSALS:
        if isinstance(exc, kind):
            return kind.__name__
    return type(exc).__name__


def _filter_or_fail(type_: Any, value: Any, rule: str, **kwargs: Any) -> Any:
    try:
        return type_.filter(value, **kwargs)
    except Exception as exc:
        args = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        raise ContractViolation(
            rule,
            type_,
            f"filter({describe(value)}{', ' + args if args else ''}) raised "
            f"{type(exc).__name__}: {exc}",
            "filter accepts every good value (converting it when allowed)",
        ) from exc


def _refused(type_: Any, value: Any, rule: str, contract: str, **kwargs: Any) -> str:
    """Assert ``filter(value, **kwargs)`` raises TypeError/ValueError; return which."""
    args = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    call = f"filter({describe(value)}{', ' + args if args else ''})"
    try:
        result = type_.filter(value, **kwargs)
    except _REFUSALS as exc:
        return _refusal_kind(exc)
    except Exception as exc:
        raise ContractViolation(
            rule,
            type_,
            f"{call} raised {type(exc).__name__}: {exc}",
            "a refused value raises TypeError or ValueError",
        ) from exc
    raise ContractViolation(
        rule, type_, f"{call} returned {describe(result)} instead of raising", contract
    )


def _eq(type_: Any, a: Any, b: Any) -> bool:
    try:
        return bool(type_.values_eq(a, b))
    except Exception as exc:
        raise ContractViolation(
            "values_eq",
            type_,
            f"values_eq({describe(a)}, {describe(b)}) raised {type(exc).__name__}: {exc}",
            "values_eq answers True or False for any two values of the Type",
        ) from exc


def _check_good(type_: Any, values: Sequence[Any], report: CheckReport) -> list[Any]:
    filtered = []
    for value in values:
        kept = copy.deepcopy(value)
        once = _filter_or_fail(type_, value, "filter_accepts_good")
        report.ok("filter_accepts_good")
        if not type_.is_valid_value(once):
            raise ContractViolation(
                "filter_returns_valid",
                type_,
                f"filter({describe(kept)}) returned {describe(once)}, which is_valid_value "
                f"refuses ({type_.value_validity_msg(once)})",
                "filter returns values that is_valid_value accepts",
            )
        report.ok("filter_returns_valid")
        twice = _filter_or_fail(type_, once, "filter_idempotent")
        if not _eq(type_, once, twice) or type(once) is not type(twice):
            raise ContractViolation(
                "filter_idempotent",
                type_,
                f"filter({describe(kept)}) gave {describe(once)} but filtering that again "
                f"gave {describe(twice)}",
                "filter is idempotent: filter(filter(v)) equals filter(v)",
            )
        report.ok("filter_idempotent")
        strict = _filter_or_fail(type_, once, "strict_accepts_exact", strict=True)
        if not _eq(type_, strict, once):
            raise ContractViolation(
                "strict_accepts_exact",
                type_,
                f"filter({describe(once)}, strict=True) returned {describe(strict)}",
                "with strict=True a value already of the Type is returned unchanged",
            )
        report.ok("strict_accepts_exact")
        if type(once) is not type(value):
            _refused(
                type_,
                value,
                "strict_refuses_conversion",
                f"with strict=True only exact values pass: {type(value).__name__} needs a "
                f"conversion to {type(once).__name__}",
                strict=True,
            )
            report.ok("strict_refuses_conversion")
        filtered.append(once)
    return filtered


def _check_bad(type_: Any, values: Sequence[Any], report: CheckReport) -> dict[int, str]:
    kinds = {}
    for i, value in enumerate(values):
        contract = (
            "filter refuses a bad value with TypeError or ValueError, whatever allow_downcast says"
        )
        kinds[i] = _refused(type_, value, "filter_refuses_bad", contract)
        _refused(type_, value, "filter_refuses_bad", contract, allow_downcast=True)
        if type_.is_valid_value(value):
            raise ContractViolation(
                "filter_refuses_bad",
                type_,
                f"is_valid_value({describe(value)}) is true for a bad value",
                "is_valid_value(v) is true iff filter(v, strict=True) succeeds",
            )
        report.ok("filter_refuses_bad")
    return kinds


def _check_downcast(type_: Any, values: Sequence[Any], report: CheckReport) -> None:
    for value in values:
        _refused(
            type_,
            value,
            "allow_downcast",
            "a value that needs a lossy conversion is refused unless allow_downcast is true",
            allow_downcast=False,
        )
        _refused(
            type_,
            value,
            "allow_downcast",
            "with strict=True a value needing a conversion is refused",
            strict=True,
        )
        converted = _filter_or_fail(type_, value, "allow_downcast", allow_downcast=True)
        if not type_.is_valid_value(converted):
            raise ContractViolation(
                "allow_downcast",
                type_,
                f"filter({describe(value)}, allow_downcast=True) returned {describe(converted)}, "
                "which is_valid_value refuses",
                "with allow_downcast=True the lossy conversion is made",
            )
        report.ok("allow_downcast")


def _check_values_eq(type_: Any, filtered: Sequence[Any], report: CheckReport) -> None:
    for a in filtered:
        for b, how in ((a, "itself"), (copy.deepcopy(a), "a copy of itself")):
            if not _eq(type_, a, b):
                raise ContractViolation(
                    "values_eq_reflexive",
                    type_,
                    f"values_eq({describe(a)}, {how}) is false",
                    "values_eq is reflexive: every value equals itself and its copies",
                )
            if not type_.values_eq_approx(a, b):
                raise ContractViolation(
                    "values_eq_reflexive",
                    type_,
                    f"values_eq_approx({describe(a)}, {how}) is false",
                    "values_eq_approx accepts what values_eq accepts",
                )
        report.ok("values_eq_reflexive")
    for i, a in enumerate(filtered):
        for b in filtered[i + 1 :]:
            if _eq(type_, a, b) != _eq(type_, b, a):
                raise ContractViolation(
                    "values_eq_symmetric",
                    type_,
                    f"values_eq({describe(a)}, {describe(b)}) differs from the swapped call",
                    "values_eq is symmetric",
                )
            report.ok("values_eq_symmetric")


def _without_nan(value: Any) -> Any:
    if isinstance(value, np.ndarray | np.generic):
        return np.where(np.isnan(value), np.zeros((), value.dtype), value).astype(value.dtype)[()]
    return 0.0


def _check_nan(
    type_: Any, values: Sequence[Any], nan_equal: bool | None, report: CheckReport
) -> None:
    takes_remove_nan = "allow_remove_nan" in inspect.signature(type_.values_eq_approx).parameters
    for value in values:
        valid = type_.is_valid_value(value)
        nan = value if valid else _filter_or_fail(type_, value, "values_eq_nan")
        other = type_.filter(_without_nan(nan))
        if _eq(type_, nan, other):
            raise ContractViolation(
                "values_eq_nan",
                type_,
                f"values_eq({describe(nan)}, {describe(other)}) is true",
                "NaN equals no number: a value with NaN differs from one with numbers there",
            )
        if nan_equal is not None and _eq(type_, nan, copy.deepcopy(nan)) != nan_equal:
            raise ContractViolation(
                "values_eq_nan",
                type_,
                f"values_eq({describe(nan)}, a copy of itself) is {not nan_equal}",
                f"this Type declares values_eq(nan, nan) is {nan_equal}",
            )
        report.ok("values_eq_nan")
        if not takes_remove_nan:
            report.skip("allow_remove_nan", "values_eq_approx takes no allow_remove_nan")
            continue
        if type_.values_eq_approx(nan, other):
            raise ContractViolation(
                "allow_remove_nan",
                type_,
                f"values_eq_approx({describe(nan)}, {describe(other)}) is true",
                "by default values_eq_approx does not accept a number where the first has NaN",
            )
        if not type_.values_eq_approx(nan, other, allow_remove_nan=True):
            raise ContractViolation(
                "allow_remove_nan",
                type_,
                f"values_eq_approx({describe(nan)}, {describe(other)}, allow_remove_nan=True) "
                "is false",
                "with allow_remove_nan=True any value is accepted where the first has NaN",
            )
        report.ok("allow_remove_nan")


def _check_eq_hash(
    type_: Any, equal: Iterable[Any], different: Iterable[Any], report: CheckReport
) -> None:
    copies = [("a copy", copy.copy(type_)), ("a deep copy", copy.deepcopy(type_))]
    copies.append(("a pickled and unpickled copy", pickle.loads(pickle.dumps(type_))))
    copies += [("an equal Type given", other) for other in equal]
    for how, other in copies:
        if not (type_ == other and other == type_) or type_ != other:
            raise ContractViolation(
                "eq_hash",
                type_,
                f"{type_!r} and {how} ({other!r}) compare unequal",
                "a Type equals its copies (pickled ones included) and the equal Types given",
            )
        if hash(type_) != hash(other):
            raise ContractViolation(
                "eq_hash",
                type_,
                f"{type_!r} and {how} ({other!r}) are equal but hash differently "
                f"({hash(type_)} != {hash(other)})",
                "equal Types hash equal",
            )
    for other in [*different, object(), None]:
        if type_ == other or other == type_:
            raise ContractViolation(
                "eq_hash",
                type_,
                f"{type_!r} compares equal to {other!r}",
                "a Type equals only Types whose variables can be used for one another",
            )
    report.ok("eq_hash")


def _check_variable_and_str(type_: Any, report: CheckReport) -> None:
    for var, how in ((type_.make_variable("x"), "make_variable('x')"), (type_("x"), "type_('x')")):
        if var.type != type_ or var.name != "x" or var.owner is not None:
            raise ContractViolation(
                "make_variable",
                type_,
                f"{how} returned {var!r} of type {var.type!r}, name {var.name!r}",
                "make_variable(name) returns a new ownerless Variable of this Type and name",
            )
    report.ok("make_variable")
    text = str(type_)
    if not isinstance(text, str) or not text or " object at 0x" in text:
        raise ContractViolation(
            "str", type_, f"str(type_) is {text!r}", "__str__ gives a short readable name"
        )
    report.ok("str")


def _check_memory_and_size(type_: Any, filtered: Sequence[Any], report: CheckReport) -> None:
    for value in filtered:
        if is_immutable(value):
            report.skip("may_share_memory", "immutable values share nothing")
        else:
            if not type_.may_share_memory(value, value):
                raise ContractViolation(
                    "may_share_memory",
                    type_,
                    f"may_share_memory(v, v) is false for v = {describe(value)}",
                    "a value shares memory with itself",
                )
            duplicate = copy.deepcopy(value)
            if type_.may_share_memory(value, duplicate):
                raise ContractViolation(
                    "may_share_memory",
                    type_,
                    f"may_share_memory(v, deepcopy(v)) is true for v = {describe(value)}",
                    "a deep copy shares no memory with the original",
                )
            report.ok("may_share_memory")
        nbytes = getattr(value, "nbytes", None)
        if not isinstance(nbytes, int | np.integer):
            report.skip("get_size", "the good values have no nbytes")
            continue
        size = type_.get_size(type_.get_shape_info(value))
        if size != nbytes:
            raise ContractViolation(
                "get_size",
                type_,
                f"get_size(get_shape_info(v)) is {size} but v.nbytes is {nbytes} for "
                f"v = {describe(value)}",
                "get_shape_info/get_size give the number of bytes of the value",
            )
        report.ok("get_size")


def _check_c(
    type_: Any,
    good: Sequence[Any],
    filtered: Sequence[Any],
    bad: Sequence[Any],
    kinds: dict[int, str],
    report: CheckReport,
) -> None:
    if c_of_type(type_) is None:
        report.skip("c_filter", "no C interface (or no C backend is usable here)")
        return
    x = type_("x")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = function([x], x, mode=Mode(linker="c"))
    except Exception as exc:
        raise ContractViolation(
            "c_filter",
            type_,
            f"an identity function does not compile with linker 'c': {type(exc).__name__}: {exc}",
            "a Type with C code works on the c linker (register its DeepCopyOp C code)",
        ) from exc
    for value, expected in zip(good, filtered, strict=True):
        try:
            got = fn(copy.deepcopy(value))
        except Exception as exc:
            raise ContractViolation(
                "c_filter",
                type_,
                f"the c linker refused the good value {describe(value)}: {exc}",
                "every linker accepts what filter accepts",
            ) from exc
        if not _eq(type_, got, expected):
            raise ContractViolation(
                "c_filter",
                type_,
                f"the c linker's identity of {describe(value)} is {describe(got)}, "
                f"filter gives {describe(expected)}",
                "the C extraction converts what filter converts, to the same value",
            )
    for i, value in enumerate(bad):
        try:
            got = fn(value)
        except Exception as exc:
            if _refusal_kind(exc) != kinds[i]:
                raise ContractViolation(
                    "c_filter",
                    type_,
                    f"the c linker refused {describe(value)} with {type(exc).__name__} "
                    f"but filter raises {kinds[i]}",
                    "every linker refuses a bad value with the exception filter raises",
                ) from exc
            continue
        raise ContractViolation(
            "c_filter",
            type_,
            f"the c linker accepted the bad value {describe(value)}, returning {describe(got)}",
            "every linker refuses what filter refuses",
        )
    report.ok("c_filter")


def check_type(
    type_: Any,
    good_values: Sequence[Any],
    bad_values: Sequence[Any],
    *,
    downcast_values: Sequence[Any] = (),
    nan_values: Sequence[Any] = (),
    nan_equal: bool | None = None,
    equal_types: Sequence[Any] = (),
    different_types: Sequence[Any] = (),
    c: bool = True,
) -> CheckReport:
    """Check ``type_`` against every rule of Theano's documented Type contract.

    Parameters
    ----------
    type_
        The Type instance to check.
    good_values
        Values ``filter`` must accept (converting them where needed, without loss).
    bad_values
        Values ``filter`` must refuse with ``TypeError`` or ``ValueError``, whatever
        ``allow_downcast`` says.
    downcast_values
        Values that need a lossy conversion: refused unless ``allow_downcast=True``.
    nan_values
        Values holding NaN (for float Types): they differ from numbers under
        ``values_eq``, and ``values_eq_approx(..., allow_remove_nan=True)`` accepts any
        number in their place where the Type takes that argument.
    nan_equal
        What ``values_eq(v, copy(v))`` answers for a ``v`` holding NaN, when the Type
        documents it (``TensorType``: true, NaNs at the same places are equal; Python
        ``float`` comparison: false); ``None`` accepts either.
    equal_types, different_types
        Other Type instances that must compare equal (and hash equal) to ``type_``, or
        unequal.
    c
        Also run the good and bad values through an identity function on the ``c``
        linker, when a backend compiling C is usable and the Type has C code.

    Returns
    -------
    CheckReport
        The rules verified and the ones that did not apply.

    Raises
    ------
    ContractViolation
        At the first rule broken, naming it, the values and what the contract says.
    TypeError
        If ``good_values`` is empty.
    """
    if not good_values:
        raise TypeError("check_type needs at least one good value (good_values is empty)")
    report = CheckReport(type_)
    originals = [copy.deepcopy(v) for v in good_values]
    filtered = _check_good(type_, good_values, report)
    kinds = _check_bad(type_, bad_values, report)
    _check_downcast(type_, downcast_values, report)
    _check_values_eq(type_, filtered, report)
    _check_nan(type_, nan_values, nan_equal, report)
    _check_eq_hash(type_, equal_types, different_types, report)
    _check_variable_and_str(type_, report)
    _check_memory_and_size(type_, filtered, report)
    if c:
        _check_c(type_, originals, filtered, bad_values, kinds, report)
    else:
        report.skip("c_filter", "c=False")
    return report
