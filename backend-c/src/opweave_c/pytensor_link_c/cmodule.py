"""PyTensor's ``pytensor.link.c.cmodule`` (the module cache and the C compiler): not in the
core.

Importing this module raises a :class:`ModuleNotFoundError` naming the C backend's
equivalents.
"""

from opweave.link._absent import absent_module

#: The path this module is imported under (PyTensor's, with ``opweave``).
PATH = "opweave.link.c.cmodule"

raise absent_module(
    PATH,
    "PyTensor's compiled-module cache (ModuleCache, get_module_cache) and C compiler "
    "(GCC_compiler)",
    "opweave's C backend is the opweave-c distribution: its module cache is "
    "opweave_c.cache.ModuleCache (under config.compiledir; `python -m opweave_c cache "
    "list|clear` lists or empties it) and its compiler opweave_c.compiler.CCompiler (the "
    "command config.cxx, extra flags config.gcc__cxxflags).",
)
