"""Compiling graphs into callables: ``function``, modes, ``In``/``Out``, shared variables.

The modules follow PyTensor's ``pytensor.compile``: :mod:`~opweave.compile.maker`
(``function``, ``FunctionMaker``), :mod:`~opweave.compile.executor` (``Function``),
:mod:`~opweave.compile.rebuild` (``givens``, updates, default updates),
:mod:`~opweave.compile.aliasing` (views and destroyed memory), :mod:`~opweave.compile.mode`
(modes, linker names, ``optdb``), :mod:`~opweave.compile.debug` (``DebugMode``,
``function_dump``), :mod:`~opweave.compile.io`, :mod:`~opweave.compile.ops` and
:mod:`~opweave.compile.sharedvalue`.

PyTensor also has ``Shape``, ``Shape_i`` (:mod:`opweave.tensor.shape`) and ``shared``
(:mod:`opweave.compile.shared_dispatch`) here. They build on the tensor library, a floor
above this package (see :mod:`opweave._layers`), so ``import opweave``, which runs before
any of its submodules, gives them here once the tensor library is loaded.
"""

from typing import TYPE_CHECKING

from opweave.compile import mode as _modes
from opweave.compile.aliasing import (
    Supervisor,
    add_supervisor_to_fgraph,
    alias_root,
    infer_reuse_pattern,
    insert_deepcopy,
    view_tree_set,
)
from opweave.compile.builders import OpFromGraph
from opweave.compile.debug import DebugMode, MonitorMode, function_dump
from opweave.compile.executor import AliasedMemoryError, Function

# ``function`` comes through the module of the same name, which must be loaded before the
# name is bound here (loading a submodule later would rebind the package attribute).
from opweave.compile.function import function
from opweave.compile.io import In, Out, SymbolicInput, SymbolicOutput
from opweave.compile.maker import FunctionMaker, UnusedInputError
from opweave.compile.mode import (
    FAST_COMPILE,
    FOREIGN_BACKENDS,
    OPT_FAST_COMPILE,
    OPT_FAST_RUN,
    OPT_FAST_RUN_STABLE,
    OPT_MERGE,
    OPT_NONE,
    OPT_O2,
    OPT_O3,
    OPT_STABILIZE,
    OPT_UNSAFE,
    VM,
    AddDestroyHandler,
    AddFeatureOptimizer,
    Mode,
    PrintCurrentFunctionGraph,
    get_default_mode,
    get_mode,
    optdb,
    predefined_linkers,
    predefined_modes,
    predefined_optimizers,
    register_linker,
    register_mode,
    register_optimizer,
)
from opweave.compile.ops import (
    DeepCopyOp,
    FromFunctionOp,
    ViewOp,
    as_op,
    deep_copy_op,
    register_deep_copy_op_c_code,
    register_shape_c_code,
    register_shape_i_c_code,
    register_view_op_c_code,
    view_op,
    wrap_py,
)
from opweave.compile.profiling import ProfileStats
from opweave.compile.rebuild import rebuild_collect_shared
from opweave.compile.sharedvalue import SharedVariable, collect_new_shareds, shared_constructor

if TYPE_CHECKING:
    # PyTensor's names for what the tensor library defines: ``import opweave`` gives them
    # here (see the package docstring), for type checkers.
    from opweave.compile.shared_dispatch import shared
    from opweave.tensor.shape import Shape, Shape_i

__all__ = [
    "FAST_COMPILE",
    "OPT_FAST_COMPILE",
    "OPT_FAST_RUN",
    "OPT_FAST_RUN_STABLE",
    "OPT_MERGE",
    "OPT_NONE",
    "OPT_O2",
    "OPT_O3",
    "OPT_STABILIZE",
    "OPT_UNSAFE",
    "VM",
    "AddDestroyHandler",
    "AddFeatureOptimizer",
    "AliasedMemoryError",
    "DebugMode",
    "DeepCopyOp",
    "FromFunctionOp",
    "Function",
    "FunctionMaker",
    "In",
    "Mode",
    "MonitorMode",
    "OpFromGraph",
    "Out",
    "PrintCurrentFunctionGraph",
    "ProfileStats",
    "Shape",
    "Shape_i",
    "SharedVariable",
    "Supervisor",
    "SymbolicInput",
    "SymbolicOutput",
    "UnusedInputError",
    "ViewOp",
    "add_supervisor_to_fgraph",
    "alias_root",
    "as_op",
    "collect_new_shareds",
    "deep_copy_op",
    "function",
    "function_dump",
    "get_default_mode",
    "get_mode",
    "infer_reuse_pattern",
    "insert_deepcopy",
    "optdb",
    "predefined_linkers",
    "predefined_modes",
    "predefined_optimizers",
    "rebuild_collect_shared",
    "register_deep_copy_op_c_code",
    "register_linker",
    "register_mode",
    "register_optimizer",
    "register_shape_c_code",
    "register_shape_i_c_code",
    "register_view_op_c_code",
    "shared",
    "shared_constructor",
    "view_op",
    "view_tree_set",
    "wrap_py",
]


def __getattr__(name: str) -> object:
    if name.isupper() and name in _modes.plugin_modes():
        return _modes.plugin_modes()[name]  # the installed plugins' modes (C, CVM, JAX ...)
    if name in ("JAX", "NUMBA"):
        # PyTensor's modes of backends that are not installed: they exist, so that code
        # reading them imports, and compiling with them says what to install.
        return getattr(_modes, name)
    if name.isupper() and name.lower() in FOREIGN_BACKENDS:
        # PyTensor's modes of the backends opweave does not ship: say what to use instead.
        raise ImportError(
            f"opweave ships no {FOREIGN_BACKENDS[name.lower()]} backend and no installed "
            f"plugin provides one, so opweave.compile has no {name} mode; mode='FAST_RUN' "
            "compiles with config.linker (`python -m opweave info` lists the installed "
            "linkers)",
            name=name,
        )
    if name.isupper():
        return getattr(_modes, name)  # a mode of a plugin that is not installed: says so
    raise AttributeError(f"module 'opweave.compile' has no attribute {name!r}")
