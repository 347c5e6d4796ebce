#section check_and_raise

if (!(%(all_conds)s)) {
    PyObject* opw_module = PyImport_ImportModule(%(module)s);
    PyObject* opw_exc_type = opw_module ? PyObject_GetAttrString(opw_module, %(qualname)s) : NULL;
    Py_XDECREF(opw_module);
    if (opw_exc_type) {
        PyErr_SetString(opw_exc_type, %(msg)s);
        Py_DECREF(opw_exc_type);
    }
    %(fail)s
}
Py_XDECREF(%(z)s);
%(z)s = %(x)s;
Py_INCREF(%(z)s);
