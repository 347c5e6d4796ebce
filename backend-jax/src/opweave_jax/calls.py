"""One call of a ``jax``-linker function: arguments in, the jitted function, outputs out.

:class:`LinkedGraph` holds what linking made (the jitted function, the shared inputs'
device mirrors, how each output comes back to the host) and runs calls two ways:

- :meth:`LinkedGraph.run`, the linker's ``fn()``: the input values from their storage
  cells (filtered by the core), the outputs stored in their cells;
- :meth:`LinkedGraph.fast_call`, what :meth:`~opweave_jax.linker.JAXLinker.make_fast_call`
  hands the compiled function: the arguments taken positionally and passed to the jitted
  function as they come (no storage cell in between), which JAX's C++ dispatch turns into
  device arrays itself (on the CPU without a copy when NumPy's buffer is aligned for XLA).

An argument that already is exactly a value of its input's Type (a plain NumPy array of
the Type's dtype and rank, for a Type without static lengths or finiteness check) is not
filtered again: the Type's ``filter`` would return it unchanged, or copy it when it is
misaligned, which JAX does itself. A Python ``float`` for a ``float64`` scalar Type goes
to JAX as it is (the program makes JAX's weakly typed scalar a ``float64``, what the
filter gives). A JAX array of the Type's
dtype and rank is passed as it is (it stays on its device, which must be the function's)
instead of coming to the host and going back.

Outputs are NumPy arrays the caller owns: writable, aliasing nothing. Small ones are copies
(``numpy.array`` of the JAX array: one copy from the device buffer); on the CPU, a large one
whose buffer no input or other output shares is a writable view of its device buffer, which
nothing else holds (:mod:`opweave_jax.adopt`). Those returned with ``Out(borrow=True)`` are
read-only NumPy views of the device buffer on the CPU (no copy).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Variable
from opweave.scalar.type import ScalarType
from opweave.sparse.type import SparseTensorType
from opweave.tensor.random.type import RandomType
from opweave.tensor.type import TensorType
from opweave.xtensor.type import XTensorType
from opweave_jax.adopt import MIN_BYTES, adopt, adoptable
from opweave_jax.lowerings.sparse_matrix import from_scipy, is_sparse_value, to_scipy
from opweave_jax.mirror import DeviceMirror, to_host

__all__ = ["FAILED_INPUT", "LinkedGraph"]

#: The attribute a refused argument's exception gets: the argument's position.
FAILED_INPUT = "opweave_jax_input"

Convert = Callable[[Any], Any]


def _owned_output(var: Variable, borrowed: bool) -> Convert:
    """How an output that is not an update comes back: a NumPy value of its dtype."""
    from opweave_jax.values import generator_of

    if isinstance(var.type, RandomType):
        return lambda value: generator_of(np.asarray(value))
    if isinstance(var.type, SparseTensorType):
        fmt, sparse_dtype = var.type.format, var.type.dtype
        return lambda value: to_scipy(value, fmt, sparse_dtype)
    if isinstance(var.type, ScalarType) or not isinstance(var.type, TensorType | XTensorType):
        return lambda value: to_host(value, var)
    dtype = np.dtype(var.type.dtype)
    if borrowed:

        def borrow(value: Any) -> Any:
            out = np.asarray(value)
            return out if out.dtype == dtype else out.astype(dtype)

        return borrow

    def copy(value: Any) -> Any:
        out = np.array(value)
        found = out.dtype
        return out if found is dtype or found == dtype else out.astype(dtype)

    return copy


def _may_be_large(var: Variable) -> bool:
    """Whether a value of ``var``'s Type may be large enough to adopt (a tensor whose
    static lengths do not bound it below :data:`~opweave_jax.adopt.MIN_BYTES`)."""
    typ = var.type
    if type(typ) is not TensorType or typ.ndim == 0:
        return False
    lengths = [length for length in typ.shape if length is not None]
    if len(lengths) < typ.ndim:
        return True
    return math.prod(lengths) * np.dtype(typ.dtype).itemsize >= MIN_BYTES


def _exact(var: Variable) -> tuple[np.dtype[Any], int] | None:
    """``(dtype, ndim)`` when a plain aligned NumPy array of that dtype and rank is exactly
    a value of ``var``'s Type (its ``filter`` returns it unchanged); ``None`` otherwise."""
    typ = var.type
    if type(typ) is not TensorType or getattr(typ, "filter_checks_isfinite", False):
        return None
    if any(length is not None for length in typ.shape):
        return None
    return np.dtype(typ.dtype), typ.ndim


class LinkedGraph:
    """A linked graph: its jitted function and how its values come and go.

    Parameters
    ----------
    jitted
        ``jax.jit`` of the :class:`~opweave_jax.checked.CheckedProgram`: a function of the
        graph's input values returning ``(outputs, code)``.
    program
        The :class:`~opweave_jax.checked.CheckedProgram` (it raises the exception of the
        deferred check a ``code`` names).
    inputs, outputs
        The graph's inputs and outputs.
    input_cells, output_cells
        Their storage cells.
    mirrors
        Each input's :class:`~opweave_jax.mirror.DeviceMirror` (``None``: not shared).
    updates
        ``(output index, input index)`` of each update.
    device
        The JAX device the function runs on (``None``: JAX's default).
    zero_copy
        Whether an update's result may stay a view of its device buffer on the host.
    borrowed
        The indices of the outputs returned with ``Out(borrow=True)`` (by the fast call,
        which only compiled functions make; :meth:`run` returns copies of every output).
    """

    def __init__(
        self,
        jitted: Callable[..., Any],
        program: Any,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        input_cells: list[list[Any]],
        output_cells: list[list[Any]],
        mirrors: list[DeviceMirror | None],
        updates: Sequence[tuple[int, int]],
        device: Any,
        zero_copy: bool,
        borrowed: frozenset[int] = frozenset(),
    ) -> None:
        self.jitted = jitted
        self.program = program
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.input_cells = input_cells
        self.output_cells = output_cells
        self.mirrors = mirrors
        self.device = device
        self._borrowed = borrowed
        kept = {o: (i, mirrors[i]) for o, i in updates if mirrors[i] is not None}
        owned: list[Convert] = []
        returned: list[Convert] = []
        #: The outputs whose device buffer may become the caller's array (on the CPU).
        self.candidates: list[int] = []
        self.dtypes: dict[int, np.dtype[Any]] = {}
        for o, var in enumerate(self.outputs):
            if zero_copy and o not in kept and _may_be_large(var):
                self.candidates.append(o)
                self.dtypes[o] = np.dtype(var.type.dtype)  # type: ignore[attr-defined]
            if o in kept:
                i, mirror = kept[o]
                keeper = _keeper(mirror, self.inputs[i], zero_copy)  # type: ignore[arg-type]
                owned.append(keeper)
                returned.append(keeper)
            else:
                owned.append(_owned_output(var, False))
                returned.append(_owned_output(var, o in borrowed))
        #: How :meth:`run` brings each output back: copies the caller owns.
        self.owned = owned
        #: How the fast call brings each output back: borrowed outputs as views.
        self.returned = returned
        self.rng_args = [
            m is None and isinstance(v.type, RandomType)
            for m, v in zip(mirrors, self.inputs, strict=True)
        ]

    def _call_jitted(self, values: list[Any], converters: list[Convert]) -> list[Any]:
        """The jitted function on ``values``; its outputs on the host (``converters``),
        once the deferred checks passed."""
        device = self.device
        if device is None:
            results, code = self.jitted(*values)
        else:
            import jax

            with jax.default_device(device):
                results, code = self.jitted(*values)
        if code is not None:
            self.program.raise_failed(code)  # the first failing check, if any
        return self._host(results, converters, self.candidates, values)

    def _host(
        self,
        results: Sequence[Any],
        converters: list[Convert],
        candidates: list[int],
        inputs: Sequence[Any],
    ) -> list[Any]:
        """The outputs on the host: large ones among ``candidates`` adopted
        (:mod:`opweave_jax.adopt`), the others through their ``converters``."""
        chosen = adoptable(results, candidates, inputs) if candidates else {}
        if not chosen:
            return [convert(value) for convert, value in zip(converters, results, strict=True)]
        dtypes = self.dtypes
        return [
            adopt(value, chosen[o], dtypes[o]) if o in chosen else convert(value)
            for o, (convert, value) in enumerate(zip(converters, results, strict=True))
        ]

    def run(self) -> None:
        """Run the graph on the values of the input cells, into the output cells."""
        from opweave_jax.values import key_data_of

        cells = zip(self.input_cells, self.mirrors, self.rng_args, strict=True)
        outs = self._call_jitted(_cell_values(cells, key_data_of), self.owned)
        for cell, value in zip(self.output_cells, outs, strict=True):
            cell[0] = value

    def fast_call(
        self,
        arg_filters: list[Callable[[Any], Any]],
        update_cells: list[tuple[list[Any], list[Any]]],
        n_user_outputs: int,
        unpack_single: bool,
    ) -> Callable[..., Any]:
        """A compiled function's whole call (see
        :meth:`opweave.link.basic.Linker.make_fast_call`).

        The arguments go to the jitted function without passing through a storage cell
        (so no cell keeps them: the transient cells stay empty); an argument that is not
        exactly a value of its Type goes through ``arg_filters``; a refused one raises the
        filter's exception with attribute :data:`FAILED_INPUT` set to its position. Each
        update's result is stored in its input's cell and the user outputs are returned
        (their cells keep nothing, so XLA reuses their buffers at the next call). Calls
        may run in several threads at once (the mirrors of shared inputs are thread-safe;
        JAX's dispatch is).
        """
        import jax

        from opweave_jax.values import key_data_of

        n = len(arg_filters)
        device = self.device
        jitted = self.jitted
        exact = [_exact(var) for var in self.inputs[:n]]
        # The arguments a plain NumPy array may be exactly a value of: (k, dtype, ndim).
        checked = [(k, *want) for k, want in enumerate(exact) if want is not None]
        others = [k for k, want in enumerate(exact) if want is None]
        implicit = list(zip(self.input_cells[n:], self.mirrors[n:], self.rng_args[n:], strict=True))
        rng_args = self.rng_args
        ndarray = np.ndarray
        jax_array = jax.Array
        tracer = jax.core.Tracer
        float64 = np.dtype("float64")

        def prepare(k: int, value: Any) -> Any:
            """Argument ``k`` as the jitted function takes it: a JAX array of the Type's
            dtype and rank as it is, anything else filtered."""
            want = exact[k]
            if want is not None:
                if (
                    isinstance(value, jax_array)
                    and not isinstance(value, tracer)
                    and value.dtype == want[0]
                    and value.ndim == want[1]
                    and (device is None or value.devices() == {device})
                ):
                    return value
            value = arg_filters[k](value)
            if rng_args[k]:
                return key_data_of(value)
            return from_scipy(value) if is_sparse_value(value) else value

        output_cells = self.output_cells
        returned = self.returned
        host = self._host
        candidates = [o for o in self.candidates if o not in self._borrowed]
        n_cells = len(output_cells)
        check_failed = self.program.raise_failed
        # Every output a tensor copied into a new NumPy array (no update, none borrowed):
        # the program gives each its Type's dtype, so ``numpy.array`` is the whole copy.
        plain = (
            all(
                type(var.type) is TensorType and o not in self._borrowed
                for o, var in enumerate(self.outputs)
            )
            and not update_cells
        )
        np_array = np.array

        def call(*args: Any) -> Any:
            if len(args) != n:
                return NotImplemented
            # The arguments as they came while none needs converting (no copy).
            values: Sequence[Any] = args
            k = 0
            try:
                for k, dtype, ndim in checked:
                    value = values[k]
                    kind = type(value)
                    if kind is ndarray:
                        if value.dtype is dtype and value.ndim == ndim:
                            continue
                    elif kind is float and ndim == 0 and dtype is float64:
                        continue  # the program makes it a float64 (GraphProgram)
                    if values is args:
                        values = list(args)
                    values[k] = prepare(k, value)  # type: ignore[index]
                if others:
                    if values is args:
                        values = list(args)
                    for k in others:
                        values[k] = prepare(k, values[k])  # type: ignore[index]
            except (TypeError, ValueError) as exc:
                with contextlib.suppress(AttributeError):  # an exception class with slots
                    setattr(exc, FAILED_INPUT, k)
                raise
            if implicit:
                values = [*values, *_cell_values(implicit, key_data_of)]
            if device is None:
                results, code = jitted(*values)
            else:
                with jax.default_device(device):
                    results, code = jitted(*values)
            if code is not None:
                check_failed(code)
            if candidates:
                outs = host(results, returned, candidates, values)
            elif plain:
                outs = [np_array(value) for value in results]
            else:
                outs = [convert(value) for convert, value in zip(returned, results, strict=True)]
            # The user outputs are not kept in their cells: a cell holding the last
            # result would keep its buffer from XLA's allocator until the next call
            # returned, so each call would write into fresh memory (page faults).
            for o in range(n_user_outputs, n_cells):
                output_cells[o][0] = outs[o]
            for src, dst in update_cells:
                dst[0] = src[0]
            if unpack_single:
                return outs[0]
            return outs[:n_user_outputs]

        return call


def _cell_values(
    cells: Iterable[tuple[list[Any], DeviceMirror | None, bool]], key_data_of: Convert
) -> list[Any]:
    """The values the jitted function takes for inputs read from their storage cells
    (``(cell, mirror, is_rng)`` each): a shared input's device value from its mirror, a
    random generator's key data, or what the cell holds."""
    return [
        mirror.get(cell)
        if mirror is not None
        else key_data_of(cell[0])
        if is_rng
        else _plain(cell[0])
        for cell, mirror, is_rng in cells
    ]


def _plain(value: Any) -> Any:
    """A cell's value as the jitted function takes it: a SciPy sparse matrix as a
    :class:`~opweave_jax.lowerings.sparse_matrix.SparseMatrix`, anything else as it is."""
    return from_scipy(value) if is_sparse_value(value) else value


def _keeper(mirror: DeviceMirror, var: Variable, zero_copy: bool) -> Convert:
    """How an update's result comes back: kept on the device by ``mirror``, its host form
    in the cell."""

    def keep(value: Any) -> Any:
        return mirror.keep(value, var, zero_copy)

    return keep
