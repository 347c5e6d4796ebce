"""PyTensor's ``pytensor.link.c.params_type`` (``ParamsType``, ``Params``): not in opweave.

Importing this module raises a :class:`ModuleNotFoundError` that says what to use instead.
"""

from opweave.link._absent import absent_module

#: The path this module is imported under (PyTensor's, with ``opweave``).
PATH = "opweave.link.c.params_type"

raise absent_module(
    PATH,
    "PyTensor's ParamsType/Params, a C struct of an Op's parameters passed to its c_code",
    "In opweave an Op's parameters are its __props__: they are part of the Op's identity "
    "(so of the compiled module's key), and its c_code writes them into the C as literals "
    "(see 'Giving an Op or a Type C code' in docs/backend-c.md). Values known only at run "
    "time are inputs of a TensorType or ScalarType.",
)
