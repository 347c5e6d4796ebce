"""C code for DeepCopyOp, ViewOp, Shape and Shape_i on the core's Types (seed 002).

These are the entries the C backend feeds to the ``opweave_register_*_c_code``
hooks; a plugin registers its own Types' code the same way (or with
``opweave.compile.ops.register_*_c_code``).
"""

from __future__ import annotations

from typing import Any

from opweave.graph.type import Generic
from opweave.scalar.type import ScalarType
from opweave.tensor.type import TensorType

VERSION = (1,)

TENSOR_DEEP_COPY = """
Py_XDECREF(%(oname)s);
%(oname)s = (PyArrayObject*)PyArray_NewCopy(%(iname)s, NPY_ANYORDER);
if (!%(oname)s) %(fail)s
"""

TENSOR_VIEW = """
Py_XDECREF(%(oname)s);
%(oname)s = %(iname)s;
Py_XINCREF(%(oname)s);
"""

TENSOR_SHAPE = """
{
    npy_intp nd = PyArray_NDIM(%(iname)s);
    int k;
    if (opw_prep_output(&%(oname)s, 1, &nd, NPY_INT64) < 0) %(fail)s
    for (k = 0; k < nd; k++)
        ((npy_int64*)PyArray_DATA(%(oname)s))[k] = PyArray_DIMS(%(iname)s)[k];
}
"""

TENSOR_SHAPE_I = """
if (opw_prep_output(&%(oname)s, 0, NULL, NPY_INT64) < 0) %(fail)s
*(npy_int64*)PyArray_DATA(%(oname)s) = PyArray_DIMS(%(iname)s)[%(i)s];
"""

TENSOR_SHAPE_I_CHECK = """
if (PyArray_NDIM(%(iname)s) <= %(i)s) {
    PyErr_Format(PyExc_IndexError, "Shape_i(%(i)s) of an array with %%d dimensions",
                 PyArray_NDIM(%(iname)s));
    %(fail)s
}
"""

SCALAR_COPY = "%(oname)s = %(iname)s;"

GENERIC_VIEW = """
Py_XDECREF(%(oname)s);
%(oname)s = %(iname)s;
Py_XINCREF(%(oname)s);
"""


def deep_copy_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """DeepCopyOp for arrays and scalars."""
    return [(TensorType, TENSOR_DEEP_COPY, VERSION), (ScalarType, SCALAR_COPY, VERSION)]


def view_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """ViewOp for arrays, scalars and generic objects."""
    return [
        (TensorType, TENSOR_VIEW, VERSION),
        (ScalarType, SCALAR_COPY, VERSION),
        (Generic, GENERIC_VIEW, VERSION),
    ]


def shape_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """Shape of arrays."""
    return [(TensorType, TENSOR_SHAPE, VERSION)]


def shape_i_entries() -> list[tuple[type, str, str, tuple[Any, ...]]]:
    """Shape_i of arrays, with the rank check."""
    return [(TensorType, TENSOR_SHAPE_I, TENSOR_SHAPE_I_CHECK, VERSION)]
