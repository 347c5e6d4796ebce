"""The ``opweave.plugins`` entry point of the C backend."""

from __future__ import annotations

from typing import Any

from opweave.plugins import hookimpl
from opweave_c import contract, hookspecs
from opweave_c.compiler import CCompiler, compiler_problem
from opweave_c.impls import C_OPS, c_code_for, c_type_for, compile_ops
from opweave_c.linkers import CLinker, CVMLinker
from opweave_c.linkers.shared_kinds import register_shared_kind_rewrites
from opweave_c.options import add_c_options
from opweave_c.thunk import c_implementation_of, c_thunk


@hookimpl
def opweave_addhooks(pluginmanager: Any) -> None:
    """Declare the C backend's own hooks (``opweave_c_type``, ``opweave_register_*``)."""
    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def opweave_addoption(config: Any) -> None:
    """Register the C backend's flags (``cxx``, ``gcc__cxxflags``, ``openmp`` ...)."""
    add_c_options(config)


@hookimpl
def opweave_modules() -> dict[str, str]:
    """PyTensor's ``pytensor.link.c`` paths, as ``opweave.link.c``."""
    return {"opweave.link.c": "opweave_c.pytensor_link_c"}


@hookimpl
def opweave_modes() -> dict[str, dict[str, str]]:
    """``C`` (the ``fast_run`` rewrites, linker ``c``) and ``CVM`` (linker ``cvm``)."""
    return {
        "C": {"linker": "c", "optimizer": "fast_run"},
        "CVM": {"linker": "cvm", "optimizer": "fast_run"},
    }


@hookimpl
def opweave_linkers() -> dict[str, type]:
    """``c`` (whole graph in C) and ``cvm`` (per-node C, Python fallback)."""
    return {"c": CLinker, "cvm": CVMLinker}


@hookimpl
def opweave_backend_info() -> dict[str, Any]:
    """Available when ``config.cxx`` names a working C compiler (whose path and
    ``--version`` line it reports). Its table's entries are factories ``fn(op, node)``;
    its thunks are one node's C (:func:`~opweave_c.thunk.c_thunk`); the nodes its table
    defers run in Python (``falls_back_to``)."""
    from opweave import config

    problem = compiler_problem(config.cxx)
    return {
        "name": "opweave-c",
        "linkers": ["c", "cvm"],
        "available": problem is None,
        "reason": problem,
        "implementations": C_OPS,
        "implementation_of": c_implementation_of,
        "make_thunk": c_thunk,
        "falls_back_to": "py",
        "implementation_checks": {"c": hookspecs.implementation_problem},
        "c_contract": contract,
        "versions": {
            "C compiler": CCompiler.from_config().identity if problem is None else problem
        },
    }


@hookimpl
def opweave_rewrites(db: Any) -> None:
    """``c_lift_fused_constants`` (tag ``c_lift_constants``, which the ``c`` linker asks for)."""
    register_shared_kind_rewrites(db)


@hookimpl
def opweave_c_type(type_: Any) -> Any:
    """C interfaces of the core's Types (TensorType, ScalarType, Generic)."""
    return c_type_for(type_)


@hookimpl
def opweave_implementation(op: Any, node: Any, backend: str) -> Any:
    """C implementations (``backend="c"``) of the core's standard Ops."""
    return c_code_for(op, node) if backend == "c" else None


@hookimpl
def opweave_register_deep_copy_op_c_code() -> list[tuple[type, str, tuple[Any, ...]]]:
    """DeepCopyOp C code for arrays and scalars."""
    return compile_ops.deep_copy_entries()


@hookimpl
def opweave_register_view_op_c_code() -> list[tuple[type, str, tuple[Any, ...]]]:
    """ViewOp C code for arrays, scalars and generic objects."""
    return compile_ops.view_entries()


@hookimpl
def opweave_register_shape_c_code() -> list[tuple[type, str, tuple[Any, ...]]]:
    """Shape C code for arrays."""
    return compile_ops.shape_entries()


@hookimpl
def opweave_register_shape_i_c_code() -> list[tuple[type, str, str, tuple[Any, ...]]]:
    """Shape_i C code for arrays."""
    return compile_ops.shape_i_entries()
