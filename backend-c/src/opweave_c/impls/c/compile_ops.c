#section tensor_deep_copy

Py_XDECREF(%(oname)s);
%(oname)s = (PyArrayObject*)PyArray_NewCopy(%(iname)s, NPY_ANYORDER);
if (!%(oname)s) %(fail)s

#section tensor_view

Py_XDECREF(%(oname)s);
%(oname)s = %(iname)s;
Py_XINCREF(%(oname)s);

#section tensor_shape

{
    npy_intp nd = PyArray_NDIM(%(iname)s);
    int k;
    if (opw_prep_output(&%(oname)s, 1, &nd, NPY_INT64) < 0) %(fail)s
    for (k = 0; k < nd; k++)
        ((npy_int64*)PyArray_DATA(%(oname)s))[k] = PyArray_DIMS(%(iname)s)[k];
}

#section tensor_shape_i

if (opw_prep_output(&%(oname)s, 0, NULL, NPY_INT64) < 0) %(fail)s
*(npy_int64*)PyArray_DATA(%(oname)s) = PyArray_DIMS(%(iname)s)[%(i)s];

#section tensor_shape_i_check

if (PyArray_NDIM(%(iname)s) <= %(i)s) {
    PyErr_Format(PyExc_IndexError, "Shape_i(%(i)s) of an array with %%d dimensions",
                 PyArray_NDIM(%(iname)s));
    %(fail)s
}

#section generic_view

Py_XDECREF(%(oname)s);
%(oname)s = %(iname)s;
Py_XINCREF(%(oname)s);

