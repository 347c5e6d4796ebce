#section support

/* The function pointer of SciPy's LAPACK routine ``name`` (scipy.linalg.cython_lapack
 * exports its routines as capsules), or NULL with an exception. The module stays in
 * sys.modules, so the library holding the routine stays loaded. */
static void* opw_lapack_lookup(const char* name) {
    PyObject *mod, *capi, *cap;
    void* fn;
    mod = PyImport_ImportModule("scipy.linalg.cython_lapack");
    if (!mod) return NULL;
    capi = PyObject_GetAttrString(mod, "__pyx_capi__");
    Py_DECREF(mod);
    if (!capi) return NULL;
    cap = PyMapping_GetItemString(capi, name);
    Py_DECREF(capi);
    if (!cap) return NULL;
    fn = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
    Py_DECREF(cap);
    return fn;
}
