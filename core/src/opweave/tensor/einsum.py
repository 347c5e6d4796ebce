"""``einsum``: Einstein summation built from existing tensor Ops.

:func:`einsum` follows NumPy's subscript syntax (explicit ``->`` output, implicit output,
``...`` ellipsis, repeated indices within one operand for diagonals, indices summed away)
and builds its graph, as PyTensor does, from :func:`~opweave.tensor.blas.tensordot`,
:func:`~opweave.tensor.blas.matmul`, DimShuffle, :func:`~opweave.tensor.reductions.sum`,
:func:`~opweave.tensor.basic.diagonal` and elementwise multiplication. Gradients therefore
come from those Ops. The operands are contracted pairwise, in the order chosen by
``numpy.einsum_path`` when every static shape is known, else from left to right.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.tensor._typing import tensor_out
from opweave.tensor.basic import diagonal
from opweave.tensor.blas import matmul, tensordot
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.math import mul
from opweave.tensor.reductions import sum as _sum
from opweave.tensor.variable import TensorVariable

__all__ = ["CONTRACTION_STEP", "PATH", "einsum"]

#: A contraction order, as ``numpy.einsum_path`` gives it: per step, the positions (in
#: the current operand list) of the one or two operands contracted.
PATH = tuple[tuple[int] | tuple[int, int], ...]
#: One step of a contraction: the operand positions, the indices summed away and the
#: step's einsum subscripts.
CONTRACTION_STEP = tuple[tuple[int, ...], set[str], str]

_ELLIPSIS = "..."
_PATH_STRATEGIES = ("greedy", "optimal")


# ====================================================================== parsing


def _split_term(term: str, where: str) -> tuple[list[str], list[str]] | list[str]:
    """Split one subscript term into the labels before and after its ellipsis.

    Returns a plain list of labels when the term has no ellipsis.
    """
    if term.count(_ELLIPSIS) > 1:
        raise ValueError(f"einsum: {where} {term!r} has more than one ellipsis '...'")
    head, sep, tail = term.partition(_ELLIPSIS)
    for ch in head + tail:
        if ch not in string.ascii_letters:
            raise ValueError(
                f"einsum: {where} {term!r} holds the invalid character {ch!r}; "
                "subscripts are ASCII letters, ',' '->' and '...'"
            )
    return (list(head), list(tail)) if sep else list(head)


def _parse(subscripts: str, ndims: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Turn ``subscripts`` into one label list per operand and the output's labels.

    Ellipsis dimensions get fresh upper/lower-case letters not used elsewhere; the
    ellipsis dims of all operands are right-aligned, as NumPy broadcasts them.
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str, got {type(subscripts).__name__}")
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    lhs, arrow, rhs = spec.partition("->")
    if ("-" in lhs or ">" in lhs) or ("-" in rhs or ">" in rhs):
        raise ValueError(f"einsum: subscripts {subscripts!r} hold a misplaced '-' or '>'")
    if arrow and "," in rhs:
        raise ValueError(f"einsum: the output {rhs!r} may not hold ',' (one output only)")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) but "
            f"{len(ndims)} operand(s) were given"
        )
    used = set(spec)
    spare = [c for c in string.ascii_letters if c not in used]

    split = [_split_term(t, f"operand {i} subscript") for i, t in enumerate(terms)]
    n_ell = 0
    for i, (parts, nd) in enumerate(zip(split, ndims)):
        if isinstance(parts, list):
            if len(parts) != nd:
                raise ValueError(
                    f"einsum: operand {i} subscript {terms[i]!r} has {len(parts)} labels "
                    f"but operand {i} has {nd} dimension(s)"
                )
        else:
            k = nd - len(parts[0]) - len(parts[1])
            if k < 0:
                raise ValueError(
                    f"einsum: operand {i} subscript {terms[i]!r} has more labels than "
                    f"operand {i}'s {nd} dimension(s)"
                )
            n_ell = max(n_ell, k)
    if n_ell > len(spare):
        raise ValueError("einsum: too many dimensions in total for the available labels")
    ell = spare[:n_ell]  # ell[-1] labels the last ellipsis dim

    inputs: list[list[str]] = []
    for parts, nd in zip(split, ndims):
        if isinstance(parts, list):
            inputs.append(parts)
        else:
            k = nd - len(parts[0]) - len(parts[1])
            inputs.append(parts[0] + ell[n_ell - k :] + parts[1])

    counts: dict[str, int] = {}
    for labels in inputs:
        for c in labels:
            counts[c] = counts.get(c, 0) + 1
    if not arrow:
        output = ell + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
        return inputs, output

    out_parts = _split_term(rhs, "output subscript")
    if isinstance(out_parts, list):
        # The ellipsis dimensions left out of the output are summed, as in PyTensor and
        # numpy.einsum(..., optimize=True) (NumPy's unoptimized einsum refuses them).
        output = out_parts
    else:
        output = out_parts[0] + ell + out_parts[1]
    seen: set[str] = set()
    for c in output:
        if c in seen:
            raise ValueError(f"einsum: output subscript {rhs!r} repeats the label {c!r}")
        if c not in counts:
            raise ValueError(
                f"einsum: output subscript {rhs!r} holds the label {c!r}, which no operand has"
            )
        seen.add(c)
    return inputs, output


# ====================================================================== sizes and path


def _check_lengths(operands: Sequence[TensorVariable], inputs: Sequence[list[str]]) -> None:
    """Check that each label's static lengths agree (a length of 1 broadcasts, as in NumPy)."""
    seen: dict[str, tuple[int, int]] = {}  # label -> (length, operand)
    for i, (x, labels) in enumerate(zip(operands, inputs)):
        for c, n in zip(labels, x.type.shape):
            if n is None or n == 1:
                continue
            if c in seen and seen[c][0] != n:
                m, j = seen[c]
                raise ValueError(
                    f"einsum: label {c!r} has length {m} in operand {j} but {n} in operand {i}"
                )
            seen[c] = (n, i)


def _contraction_path(
    operands: Sequence[TensorVariable], inputs: Sequence[list[str]], strategy: str | bool
) -> list[tuple[int, ...]]:
    """Pairs of positions in the running operand list (results appended at its end)."""
    n = len(operands)
    shapes = [x.type.shape for x in operands]
    known = [tuple(s for s in sh if s is not None) for sh in shapes]
    if n > 2 and strategy and all(len(k) == len(sh) for k, sh in zip(known, shapes, strict=True)):
        dummies = [np.broadcast_to(np.empty((), dtype=np.int8), k) for k in known]
        spec = ",".join("".join(labels) for labels in inputs)
        path, _ = np.einsum_path(spec, *dummies, optimize=strategy)
        return [tuple(step) for step in path[1:]]
    steps: list[tuple[int, ...]] = []
    remaining = n
    if remaining >= 2:
        steps.append((0, 1))
        remaining -= 1
    while remaining >= 2:
        steps.append((0, remaining - 1))  # next original operand and the running result
        remaining -= 1
    return steps


# ====================================================================== building blocks


def _take_diagonals(x: TensorVariable, labels: list[str]) -> tuple[TensorVariable, list[str]]:
    """Collapse repeated labels of one operand to their diagonal (moved to the end)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        a1 = labels.index(c)
        a2 = labels.index(c, a1 + 1)
        x = diagonal(x, 0, a1, a2)
        labels = [lab for k, lab in enumerate(labels) if k not in (a1, a2)] + [c]
    return x, labels


def _sum_labels(
    x: TensorVariable, labels: list[str], drop: set[str]
) -> tuple[TensorVariable, list[str]]:
    """Sum ``x`` over the axes whose label is in ``drop``."""
    axes = [k for k, c in enumerate(labels) if c in drop]
    if not axes:
        return x, labels
    return _sum(x, axis=axes), [c for c in labels if c not in drop]


def _align(x: TensorVariable, labels: list[str], order: list[str]) -> TensorVariable:
    """Transpose ``x`` to ``order``, inserting broadcastable axes for absent labels."""
    pattern: list[Any] = [labels.index(c) if c in labels else "x" for c in order]
    if pattern == list(range(len(labels))):
        return x
    aligned: TensorVariable = x.dimshuffle(*pattern)
    return aligned


def _mismatched(a: TensorVariable, la: list[str], b: TensorVariable, lb: list[str], c: str) -> bool:
    """Whether label ``c`` may have different lengths (one of them 1) in ``a`` and ``b``."""
    na, nb = a.type.shape[la.index(c)], b.type.shape[lb.index(c)]
    return na != nb and (na == 1 or nb == 1)


def _contract_pair(
    a: TensorVariable, la: list[str], b: TensorVariable, lb: list[str], keep: set[str]
) -> tuple[TensorVariable, list[str]]:
    """Multiply ``a`` and ``b`` and sum over the shared labels not in ``keep``."""
    shared = [c for c in la if c in lb]
    contract = [c for c in shared if c not in keep]
    batch = [c for c in shared if c in keep]
    free_a = [c for c in la if c not in lb]
    free_b = [c for c in lb if c not in la]
    if contract and not any(_mismatched(a, la, b, lb, c) for c in shared):
        if not batch:
            axes = ([la.index(c) for c in contract], [lb.index(c) for c in contract])
            return tensordot(a, b, axes), free_a + free_b
        if len(contract) == 1 and len(free_a) <= 1 and len(free_b) <= 1:
            # a batched matrix product (batch, m, k) @ (batch, k, n); "_m" and "_n" are
            # placeholders (never letters) that become broadcastable axes
            a3 = _align(a, la, batch + (free_a or ["_m"]) + contract)
            b3 = _align(b, lb, batch + contract + (free_b or ["_n"]))
            out = matmul(a3, b3)
            nb = len(batch)
            drop = ([] if free_a else [nb]) + ([] if free_b else [nb + 1])
            if drop:
                out = out.dimshuffle(*[k for k in range(nb + 2) if k not in drop])
            return out, batch + free_a + free_b
    order = batch + free_a + free_b + contract
    prod = tensor_out(mul(_align(a, la, order), _align(b, lb, order)))
    return _sum_labels(prod, order, set(contract))


# ====================================================================== einsum


def einsum(subscripts: str, *operands: Any, optimize: bool | str | None = None) -> TensorVariable:
    """Multiply and sum tensors by the Einstein summation convention (``numpy.einsum``).

    Parameters
    ----------
    subscripts
        NumPy's subscript string: comma-separated labels, one term per operand, optionally
        ``->`` and the output's labels. Without ``->`` the output holds the labels that
        appear exactly once, sorted, after any ellipsis dimensions. ``...`` stands for the
        leading (broadcast) dimensions; a label repeated within one operand takes its
        diagonal; labels absent from the output are summed over. A label's length of 1
        broadcasts against other lengths when it is static (in the operand's type), as
        for elementwise Ops.
    *operands
        The tensors (anything :func:`~opweave.tensor.as_tensor_variable` accepts).
    optimize
        How the pairwise contraction order is chosen when every static shape is known:
        ``None`` or ``True`` (``"greedy"``), ``"greedy"`` or ``"optimal"``, passed to
        ``numpy.einsum_path``. ``False`` contracts from left to right, which is also what
        happens when a static shape is unknown.

    Returns
    -------
    TensorVariable
        The result, built from ``tensordot``, ``matmul``, DimShuffle, ``sum``, ``diagonal``
        and elementwise multiplication.

    Raises
    ------
    ValueError
        For malformed subscripts (invalid characters, wrong number of terms or labels,
        output labels that no operand has or that repeat, ellipsis dimensions missing from
        an explicit output), for no operands, or for labels whose static lengths disagree.
    TypeError
        If ``subscripts`` is not a string or ``optimize`` is not one of the values above.

    Examples
    --------
    >>> import opweave.tensor as ot
    >>> a, b = ot.dmatrix("a"), ot.dmatrix("b")
    >>> c = ot.einsum("ij,jk->ik", a, b)  # the matrix product
    >>> t = ot.einsum("ii", a)  # the trace
    """
    if optimize is None or optimize is True:
        strategy: str | bool = "greedy"
    elif optimize is False or optimize in _PATH_STRATEGIES:
        strategy = optimize
    else:
        raise TypeError(
            f"einsum: optimize must be None, a bool, 'greedy' or 'optimal', got {optimize!r}"
        )
    if not operands:
        raise ValueError("einsum: at least one operand is needed")
    tensors = [as_tensor_variable(x) for x in operands]
    inputs, output = _parse(subscripts, [x.type.ndim for x in tensors])
    _check_lengths(tensors, inputs)

    terms: list[tuple[TensorVariable, list[str]]] = []
    for i, (x, labels) in enumerate(zip(tensors, inputs)):
        x, labels = _take_diagonals(x, labels)
        elsewhere = set(output).union(*(inputs[j] for j in range(len(inputs)) if j != i))
        terms.append(_sum_labels(x, labels, set(labels) - elsewhere))

    path = _contraction_path([t[0] for t in terms], [t[1] for t in terms], strategy)
    for step in path:
        picked = [terms[k] for k in step]
        for k in sorted(step, reverse=True):
            del terms[k]
        x, labels = picked[0]
        for n, (y, ly) in enumerate(picked[1:], start=1):
            rest = [t[1] for t in picked[n + 1 :]] + [t[1] for t in terms]
            keep = set(output).union(*rest)
            x, labels = _contract_pair(x, labels, y, ly, keep)
        terms.append((x, labels))

    (x, labels) = terms[0]
    x, labels = _sum_labels(x, labels, set(labels) - set(output))
    return _align(x, labels, output)
