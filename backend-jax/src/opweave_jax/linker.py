"""The ``jax`` linker: a graph lowered to one ``jax.jit`` function, run by XLA.

Linking asks the core's resolver for every node's lowering (:mod:`opweave_jax.program`),
builds one Python function of ``jax.numpy`` / ``jax.lax`` calls from them and wraps it in
``jax.jit`` once. A call passes the input cells' values (filtered by the core, as on every
linker) to the jitted function, which traces and compiles on the first call for each
combination of input shapes and dtypes, and stores NumPy arrays (writable copies) in the
output cells, so that results compare with other linkers' and may be changed by the caller.

64-bit values: linking turns JAX's ``jax_enable_x64`` flag on, process-wide, since opweave's
Types fix their dtypes (``float64`` and ``int64`` are common, and shapes are ``int64``); JAX
would otherwise compute them in 32 bits.

Shared variables live on the device between calls: the linker keeps, for each shared input,
the JAX array (or key) standing for the value its storage cell holds, and passes it to the
jitted function as long as the cell holds the same value (:class:`DeviceMirror`); a value
set with ``set_value`` (a new object in the cell) is copied to the device at the next call.
The inputs that ``updates`` write are donated (``donate_argnums``), and each new value is
kept on the device for the next call while the cell gets its NumPy form, a read-only array
(on the CPU a view of the device buffer, no copy), so that ``get_value`` and the functions
of other linkers read it as before. Random generators are JAX keys inside the function
(:mod:`opweave_jax.lowerings.random`) and ``numpy.random.Generator`` values in the cells
(:func:`~opweave_jax.values.generator_of`, :func:`~opweave_jax.values.key_data_of`).

The device is the one ``config.jax__device`` names (:func:`opweave_jax.options.jax_device`),
read when the function is linked.

This module imports no JAX: the plugin hands :class:`JAXLinker` to every opweave user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import Apply, Variable
from opweave.link.basic import Linker
from opweave.scalar.type import ScalarType
from opweave.tensor.random.type import RandomType

__all__ = ["DeviceMirror", "JAXLinker", "enable_x64"]


def enable_x64() -> None:
    """Turn on JAX's 64-bit mode (``jax_enable_x64``), once per process."""
    import jax

    if not jax.config.read("jax_enable_x64"):
        jax.config.update("jax_enable_x64", True)


def _to_host(value: Any, var: Variable) -> Any:
    """``value`` as a NumPy array of ``var``'s dtype that the caller owns."""
    dtype = getattr(var.type, "dtype", None)
    out = np.array(value, dtype=dtype, copy=True)
    return out[()] if isinstance(var.type, ScalarType) else out


class DeviceMirror:
    """The device value standing for what one shared input's storage cell holds.

    Parameters
    ----------
    device
        The JAX device (``None``: JAX's default one).
    is_rng
        Whether the input is a random generator (its device value is a JAX key).

    Attributes
    ----------
    host
        The cell value the device value stands for (compared by identity), or ``None``.
    value
        The device value.
    stamp
        For a generator, its key when it was taken (a generator advanced in place by
        another function no longer matches).
    """

    __slots__ = ("device", "host", "is_rng", "stamp", "value")

    def __init__(self, device: Any, is_rng: bool) -> None:
        self.device = device
        self.is_rng = is_rng
        self.host: Any = None
        self.value: Any = None
        self.stamp: tuple[int, ...] | None = None

    def get(self, cell: list[Any]) -> Any:
        """The device value of ``cell[0]``, copied to the device when it changed.

        A writable NumPy array is replaced in the cell by a read-only view of itself (no
        copy), so that ``set_value`` gives the cell a new array instead of writing into
        the one on the device already.
        """
        import jax

        from opweave_jax.values import key_data_of

        host = cell[0]
        value = self.value
        if host is self.host and value is not None and not value.is_deleted():
            if not self.is_rng or self._stamp_of(host) == self.stamp:
                return value
        if self.is_rng:
            data = key_data_of(host)
            self.stamp = tuple(int(w) for w in data)
            value = jax.device_put(data, self.device)
        else:
            if isinstance(host, np.ndarray) and host.flags.writeable:
                sealed = host.view()
                sealed.flags.writeable = False
                if cell[0] is host:  # not replaced meanwhile (set_value in another thread)
                    cell[0] = host = sealed
            value = jax.device_put(host, self.device)
        self.host, self.value = host, value
        return value

    @staticmethod
    def _stamp_of(host: Any) -> tuple[int, ...]:
        from opweave_jax.values import key_data_of

        return tuple(int(w) for w in key_data_of(host))

    def keep(self, value: Any, var: Variable, zero_copy: bool) -> Any:
        """Keep ``value`` (an update's result) and return its host form for the cell."""
        from opweave_jax.values import generator_of

        if self.is_rng:
            data = np.asarray(value)
            host: Any = generator_of(data)
            self.stamp = tuple(int(w) for w in data)
        elif isinstance(var.type, ScalarType):
            host = _to_host(value, var)
        else:
            host = np.asarray(value) if zero_copy else np.array(value, copy=True)
            if host.flags.writeable:
                host.flags.writeable = False
        self.host, self.value = host, value
        return host


class JAXLinker(Linker):
    """``linker='jax'`` (mode ``JAX``): the whole graph as one ``jax.jit`` function.

    ``priority`` is negative: ``linker='auto'`` never picks it. Its random variables draw
    from JAX's generator (``random_generator = "jax"``), not NumPy's.

    Attributes
    ----------
    device
        The JAX device the last linked function runs on (``None``: JAX's default).
    """

    name: ClassVar[str] = "jax"
    priority: ClassVar[int] = -10
    compile_priority: ClassVar[int] = -10
    random_generator: ClassVar[str] = "jax"
    device: Any = None

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Lower and jit the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`.

        Raises
        ------
        opweave.graph.utils.NoImplementationError
            For a node whose Op has no ``jax`` lowering (the resolver's message).
        ValueError
            For a ``config.jax__device`` that names no device JAX has.
        """
        import jax

        from opweave_jax.options import jax_device
        from opweave_jax.program import GraphProgram
        from opweave_jax.values import generator_of, key_data_of

        fgraph, order, ins, outs, _smap = self.wire_storage(
            input_storage, output_storage, storage_map
        )
        enable_x64()
        device = jax_device()
        self.device = device
        zero_copy = (device or jax.devices()[0]).platform == "cpu"
        program = GraphProgram(fgraph, order)
        inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
        updates = sorted(fgraph.update_mapping.items())  # (output index, input index)
        mirrors: list[DeviceMirror | None] = [
            DeviceMirror(device, isinstance(v.type, RandomType))
            if isinstance(v, SharedVariable)
            else None
            for v in inputs
        ]
        donated = tuple(sorted({i for _, i in updates if mirrors[i] is not None}))
        jitted = jax.jit(program, donate_argnums=donated)
        rng_args = [
            m is None and isinstance(v.type, RandomType)
            for m, v in zip(mirrors, inputs, strict=True)
        ]
        steps = list(zip(ins, mirrors, rng_args, strict=True))
        kept = {o: (i, mirrors[i]) for o, i in updates if mirrors[i] is not None}

        def arguments() -> list[Any]:
            args = []
            for cell, mirror, is_rng in steps:
                if mirror is not None:
                    args.append(mirror.get(cell))
                elif is_rng:
                    args.append(key_data_of(cell[0]))
                else:
                    args.append(cell[0])
            return args

        def run() -> None:
            args = arguments()
            if device is None:
                results, conditions = jitted(*args)
            else:
                with jax.default_device(device):
                    results, conditions = jitted(*args)
            for key, condition in conditions.items():
                if not bool(condition):
                    check = program.checks[key]
                    raise check.exc_type(check.msg)
            for o, (cell, var, value) in enumerate(zip(outs, outputs, results, strict=True)):
                if o in kept:
                    i, mirror = kept[o]
                    cell[0] = mirror.keep(value, inputs[i], zero_copy)  # type: ignore[union-attr]
                elif isinstance(var.type, RandomType):
                    cell[0] = generator_of(np.asarray(value))
                else:
                    cell[0] = _to_host(value, var)

        run.impl = "jax"  # type: ignore[attr-defined]
        run.jitted = jitted  # type: ignore[attr-defined]
        run.program = program  # type: ignore[attr-defined]
        run.mirrors = mirrors  # type: ignore[attr-defined]
        run.donate_argnums = donated  # type: ignore[attr-defined]
        self.jitted = jitted
        return run, ins, outs, [run], order
