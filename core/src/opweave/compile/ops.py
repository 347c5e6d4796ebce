"""Type-generic helper Ops: ``DeepCopyOp``, ``ViewOp``, and the C-code registries.

``Shape`` and ``Shape_i`` build int64 tensors, so they live where PyTensor has them, in
:mod:`opweave.tensor.shape` (a floor above this package, see :mod:`opweave._layers`); the
names ``opweave.compile.ops.Shape``, ``Shape_i`` and ``shape`` stay importable from here
as lazy re-exports.

Their kernels come from backends: Python implementations through the
``opweave_implementation`` hook, C code per Type from the ``register_*_c_code``
functions below or their hook siblings. The registrations live in the plugin
manager, like every other contribution.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.utils import MethodNotDefined
from opweave.plugins.manager import get_plugin_manager
from opweave.plugins.registration import CCodeEntryPlugin, register_plugin_object


def _register(hook: str, entry: tuple[Any, ...], type_class: type) -> None:
    if not isinstance(type_class, type):
        raise TypeError(f"expected a Type class, got {type_class!r}")
    register_plugin_object(CCodeEntryPlugin(hook, entry), f"{hook}:{type_class.__qualname__}")


def register_deep_copy_op_c_code(typ: type, code: str, version: tuple[Any, ...] = ()) -> None:
    """Register C code copying a value of Type class ``typ`` (``%(iname)s`` to ``%(oname)s``)."""
    _register("opweave_register_deep_copy_op_c_code", (typ, code, version), typ)


def register_view_op_c_code(typ: type, code: str, version: tuple[Any, ...] = ()) -> None:
    """Register C code making ``%(oname)s`` a view of ``%(iname)s`` for Type class ``typ``."""
    _register("opweave_register_view_op_c_code", (typ, code, version), typ)


def register_shape_c_code(typ: type, code: str, version: tuple[Any, ...] = ()) -> None:
    """Register C code putting the shape of ``%(iname)s`` in ``%(oname)s`` for ``typ``."""
    _register("opweave_register_shape_c_code", (typ, code, version), typ)


def register_shape_i_c_code(
    typ: type, code: str, check_input: str, version: tuple[Any, ...] = ()
) -> None:
    """Register C code for dimension ``%(i)s`` of ``%(iname)s``, with its ``CHECK_INPUT``."""
    _register("opweave_register_shape_i_c_code", (typ, code, check_input, version), typ)


def registered_c_code(hook_name: str, type_: Any) -> tuple[Any, ...] | None:
    """Return the newest entry registered through ``hook_name`` for ``type(type_)``.

    Entries for a base class apply to subclasses; an exact class match wins.
    """
    hook = getattr(get_plugin_manager().hook, hook_name)
    candidates: list[tuple[Any, ...]] = [entry for entries in hook() for entry in (entries or ())]
    for entry in candidates:
        if type(type_) is entry[0]:
            return entry
    for entry in candidates:
        if isinstance(type_, entry[0]):
            return entry
    return None


class _TypeDispatchedCOp(Op):
    """An Op whose C code is looked up per input Type in a registry hook."""

    __props__: tuple[str, ...] = ()
    _hook_name = ""

    if TYPE_CHECKING:
        # One input, one output: calling the Op gives that output.
        def __call__(self, x: Variable, **kwargs: Any) -> Variable: ...

    def _entry(self, node: Apply) -> tuple[Any, ...]:
        entry = registered_c_code(self._hook_name, node.inputs[0].type)
        if entry is None:
            raise MethodNotDefined(f"no C code registered for {self} on {node.inputs[0].type}")
        return entry

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Return the registered C code for the input's Type, templated."""
        code: str = self._entry(node)[1]
        return code % dict(sub, iname=inputs[0], oname=outputs[0], **self._template_extra())

    def c_code_cache_version_apply(self, node: Apply) -> tuple[Any, ...]:
        """The registered version (``()`` when nothing is registered)."""
        try:
            version = self._entry(node)[-1]
        except MethodNotDefined:
            return ()
        return (1, *tuple(version)) if version else ()

    def _template_extra(self) -> dict[str, Any]:
        return {}


class DeepCopyOp(_TypeDispatchedCOp):
    """Return a copy of the input that shares no memory with it.

    Used to keep the user's memory and opweave's apart: outputs that would
    alias an input or another output are copied.
    """

    __props__ = ()
    _hook_name = "opweave_register_deep_copy_op_c_code"

    def make_node(self, x: Variable) -> Apply:
        """One input, one output of the same Type."""
        if not isinstance(x, Variable):
            raise TypeError(f"DeepCopyOp expects a Variable, got {x!r}")
        return Apply(self, [x], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """Same shape as the input."""
        return list(shapes)

    def grad(self, inputs: Any, output_grads: Any) -> list[Any]:
        """The identity's gradient."""
        return list(output_grads)


deep_copy_op = DeepCopyOp()


class ViewOp(_TypeDispatchedCOp):
    """Return the input itself (an alias), declaring the view."""

    __props__ = ()
    view_map = {0: [0]}
    _hook_name = "opweave_register_view_op_c_code"

    def make_node(self, x: Variable) -> Apply:
        """One input, one output of the same Type."""
        if not isinstance(x, Variable):
            raise TypeError(f"ViewOp expects a Variable, got {x!r}")
        return Apply(self, [x], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """Same shape as the input."""
        return list(shapes)

    def grad(self, inputs: Any, output_grads: Any) -> list[Any]:
        """The identity's gradient."""
        return list(output_grads)


view_op = ViewOp()


def __getattr__(name: str) -> Any:
    # ``Shape``, ``Shape_i`` and the ``shape`` Op instance, re-exported from their home
    # :mod:`opweave.tensor.shape`, resolved on first use.
    if name in ("Shape", "Shape_i", "shape"):
        # late: tensor (which defines Shape/Shape_i) sits above compile; re-export only
        from opweave.tensor.shape import Shape, Shape_i, _shape

        return {"Shape": Shape, "Shape_i": Shape_i, "shape": _shape}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
