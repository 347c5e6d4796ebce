/* opweave C runtime: its functions (the types, macros and inline helpers are in runtime.h).
 *
 * A module carries these functions itself, or is linked with the runtime object that holds
 * them once per compile directory and set of flags (opweave_c.prelude), compiled from
 * runtime.h, this text and tensor.h with OPW_RUNTIME_OBJECT defined. A module linked with
 * it is compiled with OPW_RUNTIME_LINKED defined, and then sees only the declarations:
 * GCC does not compile the runtime again for every module. Both ways run the same code.
 *
 * OPW_RT declares a function other C calls: static in a module that carries the runtime,
 * hidden (shared by the files of one shared object, never exported) otherwise. */
#ifndef OPW_RUNTIME_FUNCTIONS_H
#define OPW_RUNTIME_FUNCTIONS_H
#if defined(OPW_RUNTIME_LINKED) || defined(OPW_RUNTIME_OBJECT)
#define OPW_RT __attribute__((visibility("hidden")))
#else
#define OPW_RT static
#endif

/* Import NumPy's C API for the runtime's own functions (the runtime object is a file of
 * its own, with its own table): 0, or -1 with an exception set. */
OPW_RT int opw_runtime_init(void);
/* Pass ``*py`` through the Python callable ``filter`` (a Type's filter), in place.
 * Returns 0 on success, -1 with an exception set. */
OPW_RT int opw_filter(PyObject** py, PyObject* filter);
/* link(in_cells, out_cells, filters, failcell, n_args, upd_src, upd_dst, user_out, unpack,
 *      clear) -> (run, call) for one block. All cells are one-element lists, held by the
 * state; ``clear`` lists the cells call() empties when it returns. */
OPW_RT PyObject* opw_link(opw_block_fn block, Py_ssize_t n_in, Py_ssize_t n_out,
                          PyObject* args);
/* link_steps(...) -> (run, call): a sequence of steps (compiled blocks and Python
 * callables) run in order by C, the ``cvm`` linker's loop (see the definition below). */
OPW_RT PyObject* opw_link_steps(PyObject* self, PyObject* args);

#ifndef OPW_RUNTIME_LINKED
#include <pthread.h>
/* How many forks this process descends from since the runtime was loaded: a call flag set
 * under another count was set by a thread that a fork left behind (only the forking
 * thread goes on in a child), so a call in the child clears it instead of waiting for ever. */
static unsigned long opw_forks = 0;
static void opw_count_fork(void) { opw_forks++; }
static pthread_once_t opw_forks_once = PTHREAD_ONCE_INIT;
static void opw_watch_forks(void) { pthread_atfork(NULL, NULL, opw_count_fork); }

OPW_RT int opw_runtime_init(void) {
    return PyArray_API == NULL ? _import_array() : 0;
}

static void opw_state_free(PyObject* capsule) {
    opw_state* st = (opw_state*)PyCapsule_GetPointer(capsule, "opweave.state");
    if (st) { Py_XDECREF(st->keep); PyMem_Free(st); }
}

/* Record which label failed and make sure an exception is set. */
static PyObject* opw_failed(opw_state* st, int label) {
    PyObject *t, *v, *tb, *num;
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError,
                        "generated C code failed without setting an exception");
    PyErr_Fetch(&t, &v, &tb);
    num = PyLong_FromLong(label);
    if (num) PyList_SetItem(st->failcell, 0, num);
    PyErr_Restore(t, v, tb);
    return NULL;
}

OPW_RT int opw_filter(PyObject** py, PyObject* filter) {
    PyObject* r;
    if (filter == NULL || filter == Py_None) return 0;
    r = PyObject_CallOneArg(filter, *py);
    if (r == NULL) return -1;
    Py_DECREF(*py);
    *py = r;
    return 0;
}

/* Run a bound block on the values in its cells: 0, or -1 with an exception set and the
 * failing label in its failure cell. */
static int opw_run_state(opw_state* st) {
    PyObject* stack[OPW_STACK];
    PyObject** vals = stack;
    Py_ssize_t i;
    int rc;
    if (st->n_in > OPW_STACK) {
        vals = (PyObject**)PyMem_Malloc(sizeof(PyObject*) * st->n_in);
        if (!vals) { PyErr_NoMemory(); return -1; }
    }
    for (i = 0; i < st->n_in; i++) vals[i] = PyList_GET_ITEM(st->in_cells[i], 0);
    rc = st->block(vals, st);
    if (vals != stack) PyMem_Free(vals);
    if (rc) { opw_failed(st, rc); return -1; }
    return 0;
}

static PyObject* opw_run(PyObject* self, PyObject* unused) {
    opw_state* st = (opw_state*)PyCapsule_GetPointer(self, "opweave.state");
    if (st == NULL || opw_run_state(st)) return NULL;
    Py_RETURN_NONE;
}

/* Enter a call that runs one at a time (``busy``, ``owner`` and ``forks`` are the call's
 * flag, the thread holding it and opw_forks when it was set): 0 once entered, -1 with an
 * exception set when the thread holding it calls again. Leave by clearing ``*busy``. */
static int opw_enter(int* busy, unsigned long* owner, unsigned long* forks) {
    unsigned long me = PyThread_get_thread_ident();
    if (*busy && *forks != opw_forks) *busy = 0; /* set before a fork */
    if (*busy) {
        if (*owner == me) {
            PyErr_SetString(PyExc_RuntimeError,
                            "an opweave function was called again from inside its own call "
                            "(from a filter or an Op it runs)");
            return -1;
        }
        /* Another thread is inside this call, with the GIL given away (a filter, or a
         * NumPy loop that releases it): give it the GIL until it is done. */
        while (*busy) {
            Py_BEGIN_ALLOW_THREADS
            sched_yield();
            Py_END_ALLOW_THREADS
        }
    }
    *busy = 1;
    *forks = opw_forks;
    *owner = me;
    return 0;
}

static PyObject* opw_call_held(opw_state* st, PyObject* const* args, Py_ssize_t nargs) {
    PyObject* stack[OPW_STACK];
    PyObject** vals = stack;
    PyObject* result;
    Py_ssize_t i;
    int rc;
    if (st->n_in > OPW_STACK) {
        vals = (PyObject**)PyMem_Malloc(sizeof(PyObject*) * st->n_in);
        if (!vals) return PyErr_NoMemory();
    }
    for (i = 0; i < nargs; i++) {
        opw_cell_set(st->in_cells[i], args[i]);
        vals[i] = args[i];
    }
    for (; i < st->n_in; i++) vals[i] = PyList_GET_ITEM(st->in_cells[i], 0);
    rc = st->block(vals, st);
    if (vals != stack) PyMem_Free(vals);
    if (rc) return opw_failed(st, rc);
    for (i = 0; i < st->n_updates; i++)
        opw_cell_set(st->upd_dst[i], PyList_GET_ITEM(st->upd_src[i], 0));
    if (st->unpack) {
        result = PyList_GET_ITEM(st->user_out[0], 0);
        Py_INCREF(result);
        return result;
    }
    result = PyList_New(st->n_user);
    if (!result) return NULL;
    for (i = 0; i < st->n_user; i++) {
        PyObject* v = PyList_GET_ITEM(st->user_out[i], 0);
        Py_INCREF(v);
        PyList_SET_ITEM(result, i, v);
    }
    return result;
}

static PyObject* opw_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    opw_state* st = (opw_state*)PyCapsule_GetPointer(self, "opweave.state");
    PyObject* result;
    Py_ssize_t i;
    if (st == NULL) return NULL;
    if (nargs != st->n_args) Py_RETURN_NOTIMPLEMENTED;
    if (opw_enter(&st->busy, &st->owner, &st->busy_forks)) return NULL;
    result = opw_call_held(st, args, nargs);
    /* On failure the cells stay for the caller to describe the failing node's inputs; it
     * empties them afterwards. */
    if (result != NULL)
        for (i = 0; i < st->n_clear; i++) opw_cell_set(st->clear[i], Py_None);
    st->busy = 0;
    return result;
}

static PyMethodDef opw_run_def = {"run", (PyCFunction)opw_run, METH_NOARGS,
                                  "Run the block on the values in its storage cells."};
static PyMethodDef opw_call_def = {"call", (PyCFunction)(void (*)(void))opw_call, METH_FASTCALL,
                                   "Run the block on the arguments; apply updates; return outputs."};

static int opw_check_cells(PyObject* t, const char* what) {
    Py_ssize_t i;
    if (!PyTuple_Check(t)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple", what);
        return -1;
    }
    for (i = 0; i < PyTuple_GET_SIZE(t); i++) {
        PyObject* c = PyTuple_GET_ITEM(t, i);
        if (!PyList_Check(c) || PyList_GET_SIZE(c) != 1) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be a one-element list", what, i);
            return -1;
        }
    }
    return 0;
}

OPW_RT PyObject* opw_link(opw_block_fn block, Py_ssize_t n_in, Py_ssize_t n_out,
                          PyObject* args) {
    PyObject *in_cells, *out_cells, *filters, *failcell, *upd_src, *upd_dst, *user_out, *clear;
    PyObject *capsule = NULL, *run = NULL, *call = NULL, *result = NULL;
    Py_ssize_t n_args;
    int unpack;
    opw_state* st;
    if (!PyArg_ParseTuple(args, "O!O!O!O!nO!O!O!pO!", &PyTuple_Type, &in_cells, &PyTuple_Type,
                          &out_cells, &PyTuple_Type, &filters, &PyList_Type, &failcell, &n_args,
                          &PyTuple_Type, &upd_src, &PyTuple_Type, &upd_dst, &PyTuple_Type,
                          &user_out, &unpack, &PyTuple_Type, &clear))
        return NULL;
    if (opw_check_cells(in_cells, "in_cells") || opw_check_cells(out_cells, "out_cells") ||
        opw_check_cells(upd_src, "upd_src") || opw_check_cells(upd_dst, "upd_dst") ||
        opw_check_cells(user_out, "user_out") || opw_check_cells(clear, "clear"))
        return NULL;
    if (PyTuple_GET_SIZE(in_cells) != n_in || PyTuple_GET_SIZE(out_cells) != n_out ||
        PyTuple_GET_SIZE(filters) != n_in || PyList_GET_SIZE(failcell) != 1 || n_args < 0 ||
        n_args > n_in || PyTuple_GET_SIZE(upd_src) != PyTuple_GET_SIZE(upd_dst) ||
        (unpack && PyTuple_GET_SIZE(user_out) < 1)) {
        PyErr_Format(PyExc_ValueError,
                     "link: this block takes %zd input and %zd output cells", n_in, n_out);
        return NULL;
    }
    pthread_once(&opw_forks_once, opw_watch_forks);
    st = (opw_state*)PyMem_Calloc(1, sizeof(opw_state));
    if (!st) return PyErr_NoMemory();
    st->keep =
        PyTuple_Pack(8, in_cells, out_cells, filters, failcell, upd_src, upd_dst, user_out, clear);
    if (!st->keep) { PyMem_Free(st); return NULL; }
    st->block = block;
    st->n_in = n_in; st->n_out = n_out; st->n_args = n_args;
    st->n_updates = PyTuple_GET_SIZE(upd_src);
    st->n_user = PyTuple_GET_SIZE(user_out);
    st->unpack = unpack;
    st->in_cells = OPW_ITEMS(in_cells);
    st->out_cells = OPW_ITEMS(out_cells);
    st->filters = OPW_ITEMS(filters);
    st->failcell = failcell;
    st->upd_src = OPW_ITEMS(upd_src);
    st->upd_dst = OPW_ITEMS(upd_dst);
    st->user_out = OPW_ITEMS(user_out);
    st->clear = OPW_ITEMS(clear);
    st->n_clear = PyTuple_GET_SIZE(clear);
    capsule = PyCapsule_New(st, "opweave.state", opw_state_free);
    if (!capsule) { Py_DECREF(st->keep); PyMem_Free(st); return NULL; }
    run = PyCFunction_New(&opw_run_def, capsule);
    call = PyCFunction_New(&opw_call_def, capsule);
    if (run && call) result = PyTuple_Pack(2, run, call);
    Py_XDECREF(run);
    Py_XDECREF(call);
    Py_DECREF(capsule);
    return result;
}

/* ---- A sequence of steps run by C: the cvm linker's loop ----
 *
 * link_steps(steps, gc_ends, gc_cells, gc_done, release_cells, release_done, on_failure,
 *            arg_cells, filters, exact, failcell, upd_src, upd_dst, user_out, unpack,
 *            clear) -> (run, call)
 *
 * ``steps`` holds, per step, the state capsule of a bound block (``opweave.state``: the
 * block's function is called directly) or a Python callable taking no argument (called
 * through the C API; what it returns is dropped). After step i, the cells
 * ``gc_cells[gc_ends[i - 1]:gc_ends[i]]`` are emptied (None) and their compute cells
 * (``gc_done``) set to 2: the intermediates whose last use that step was. After the last
 * step the release cells are emptied too, and their compute cells set to 2.
 *
 * When step i raises, ``failcell[0]`` becomes ``(1, i)``, ``on_failure(exc, i)`` is called
 * (to note what failed, while every cell still holds its value; an ``Exception`` only),
 * then every gc and release cell is emptied and the exception propagates. An exception
 * ``on_failure`` raises replaces the step's, which becomes its context.
 *
 * ``run()`` runs the steps on what the cells hold. ``call(*args)`` is a compiled function's
 * whole call: argument i goes through ``filters[i]`` (None: none) unless ``exact[i]``,
 * ``(typenum, ndim, static sizes or -1)``, says it already is exactly a value of its Type
 * (a plain, aligned, native-order ndarray of that type number, rank and static shape),
 * then into ``arg_cells[i]``; a filter that raises sets ``failcell[0]`` to ``(0, i)``.
 * Then the steps run, each ``upd_dst`` cell gets its ``upd_src`` cell's value, the
 * ``clear`` cells are emptied, and the ``user_out`` values are returned (the first alone
 * when ``unpack``). Only when it succeeds are the ``clear`` cells emptied: the caller
 * empties them after describing a failure. call() runs one call at a time (as opw_call
 * does) and returns NotImplemented for another number of arguments. */
typedef struct {
    int typenum; /* < 0: no test, the filter runs */
    int ndim;
    const npy_intp* dims; /* ndim sizes, -1 where the Type fixes none */
} opw_exact_spec;

typedef struct {
    opw_state* block; /* a bound block, or NULL */
    PyObject* thunk;  /* else: a Python callable */
    Py_ssize_t gc_end;
} opw_step;

typedef struct {
    Py_ssize_t n_steps, n_gc, n_release, n_args, n_updates, n_user, n_clear;
    opw_step* steps;
    opw_exact_spec* exact;
    npy_intp* dims;
    PyObject **gc_cells, **gc_done, **rel_cells, **rel_done;
    PyObject **arg_cells, **filters, **upd_src, **upd_dst, **user_out, **clear;
    PyObject *on_failure, *failcell, *done, *keep;
    int unpack, busy;
    unsigned long owner, busy_forks;
} opw_steps;

static void opw_steps_free(PyObject* capsule) {
    opw_steps* s = (opw_steps*)PyCapsule_GetPointer(capsule, "opweave.steps");
    if (s == NULL) return;
    Py_XDECREF(s->keep);
    Py_XDECREF(s->done);
    PyMem_Free(s->steps);
    PyMem_Free(s->exact);
    PyMem_Free(s->dims);
    PyMem_Free(s);
}

static void opw_empty(PyObject** cells, PyObject** done, Py_ssize_t n, PyObject* two) {
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
        opw_cell_set(cells[i], Py_None);
        opw_cell_set(done[i], two);
    }
}

/* Record ``(kind, i)`` in the failure cell (0: argument i was refused, 1: step i failed),
 * keeping the exception that is set. */
static void opw_steps_mark(opw_steps* s, int kind, Py_ssize_t i) {
    PyObject *t, *v, *tb, *where;
    PyErr_Fetch(&t, &v, &tb);
    where = Py_BuildValue("(in)", kind, i);
    if (where != NULL) PyList_SetItem(s->failcell, 0, where);
    else PyErr_Clear();
    PyErr_Restore(t, v, tb);
}

/* Step i raised: note it, report it to on_failure, empty every cell the loop frees. */
static void opw_steps_failed(opw_steps* s, Py_ssize_t i) {
    PyObject *t, *v, *tb;
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "an opweave step failed without an exception");
    opw_steps_mark(s, 1, i);
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (v != NULL && tb != NULL) PyException_SetTraceback(v, tb);
    if (v != NULL && s->on_failure != Py_None &&
        PyErr_GivenExceptionMatches(v, PyExc_Exception)) {
        PyObject* r = PyObject_CallFunction(s->on_failure, "On", v, i);
        if (r != NULL) {
            Py_DECREF(r);
        } else {
            PyObject *t2, *v2, *tb2;
            PyErr_Fetch(&t2, &v2, &tb2);
            PyErr_NormalizeException(&t2, &v2, &tb2);
            if (v2 != NULL && v2 != v) {
                if (tb2 != NULL) PyException_SetTraceback(v2, tb2);
                PyException_SetContext(v2, v); /* steals v */
                Py_XDECREF(t);
                Py_XDECREF(tb);
                t = t2; v = v2; tb = tb2;
            } else {
                Py_XDECREF(t2); Py_XDECREF(v2); Py_XDECREF(tb2);
            }
        }
    }
    opw_empty(s->gc_cells, s->gc_done, s->n_gc, s->done);
    opw_empty(s->rel_cells, s->rel_done, s->n_release, s->done);
    PyErr_Restore(t, v, tb);
}

/* Run the steps: 0, or -1 with an exception set (reported and cleaned up). */
static int opw_steps_exec(opw_steps* s) {
    Py_ssize_t i, g = 0;
    for (i = 0; i < s->n_steps; i++) {
        opw_step* step = s->steps + i;
        if (step->block != NULL) {
            if (opw_run_state(step->block)) goto failed;
        } else {
            PyObject* r = PyObject_CallNoArgs(step->thunk);
            if (r == NULL) goto failed;
            Py_DECREF(r);
        }
        for (; g < step->gc_end; g++) {
            opw_cell_set(s->gc_cells[g], Py_None);
            opw_cell_set(s->gc_done[g], s->done);
        }
    }
    opw_empty(s->rel_cells, s->rel_done, s->n_release, s->done);
    return 0;
failed:
    opw_steps_failed(s, i);
    return -1;
}

static PyObject* opw_steps_run(PyObject* self, PyObject* unused) {
    opw_steps* s = (opw_steps*)PyCapsule_GetPointer(self, "opweave.steps");
    if (s == NULL || opw_steps_exec(s)) return NULL;
    Py_RETURN_NONE;
}

static int opw_exact(const opw_exact_spec* e, PyObject* o) {
    PyArrayObject* a;
    int d;
    if (e->typenum < 0 || !PyArray_CheckExact(o)) return 0;
    a = (PyArrayObject*)o;
    if (PyArray_TYPE(a) != e->typenum || PyArray_NDIM(a) != e->ndim || !PyArray_ISALIGNED(a) ||
        !PyArray_ISNOTSWAPPED(a))
        return 0;
    for (d = 0; d < e->ndim; d++)
        if (e->dims[d] >= 0 && PyArray_DIMS(a)[d] != e->dims[d]) return 0;
    return 1;
}

static PyObject* opw_steps_call_held(opw_steps* s, PyObject* const* args, Py_ssize_t nargs) {
    PyObject* result;
    Py_ssize_t i;
    for (i = 0; i < nargs; i++) {
        PyObject* v = args[i];
        if (s->filters[i] != Py_None && !opw_exact(s->exact + i, v)) {
            v = PyObject_CallOneArg(s->filters[i], v);
            if (v == NULL) {
                opw_steps_mark(s, 0, i);
                return NULL;
            }
            opw_cell_set(s->arg_cells[i], v);
            Py_DECREF(v);
        } else {
            opw_cell_set(s->arg_cells[i], v);
        }
    }
    if (opw_steps_exec(s)) return NULL;
    for (i = 0; i < s->n_updates; i++)
        opw_cell_set(s->upd_dst[i], PyList_GET_ITEM(s->upd_src[i], 0));
    if (s->unpack) {
        result = PyList_GET_ITEM(s->user_out[0], 0);
        Py_INCREF(result);
    } else {
        result = PyList_New(s->n_user);
        if (result == NULL) return NULL;
        for (i = 0; i < s->n_user; i++) {
            PyObject* v = PyList_GET_ITEM(s->user_out[i], 0);
            Py_INCREF(v);
            PyList_SET_ITEM(result, i, v);
        }
    }
    for (i = 0; i < s->n_clear; i++) opw_cell_set(s->clear[i], Py_None);
    return result;
}

static PyObject* opw_steps_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    opw_steps* s = (opw_steps*)PyCapsule_GetPointer(self, "opweave.steps");
    PyObject* result;
    if (s == NULL) return NULL;
    if (nargs != s->n_args) Py_RETURN_NOTIMPLEMENTED;
    if (opw_enter(&s->busy, &s->owner, &s->busy_forks)) return NULL;
    result = opw_steps_call_held(s, args, nargs);
    s->busy = 0;
    return result;
}

static PyMethodDef opw_steps_run_def = {"run", (PyCFunction)opw_steps_run, METH_NOARGS,
                                        "Run the steps on the values in their cells."};
static PyMethodDef opw_steps_call_def = {
    "call", (PyCFunction)(void (*)(void))opw_steps_call, METH_FASTCALL,
    "Store the arguments, run the steps, apply updates; return outputs."};

/* Read ``exact`` (per argument: None, or (typenum, ndim, sizes)) into s->exact and s->dims:
 * 0, or -1 with an exception set. */
static int opw_steps_exact(opw_steps* s, PyObject* exact) {
    Py_ssize_t i, d, total = 0, at = 0;
    for (i = 0; i < s->n_args; i++) {
        PyObject* e = PyTuple_GET_ITEM(exact, i);
        if (e == Py_None) continue;
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 3 ||
            !PyTuple_Check(PyTuple_GET_ITEM(e, 2))) {
            PyErr_SetString(PyExc_TypeError, "exact[i] must be None or (typenum, ndim, sizes)");
            return -1;
        }
        total += PyTuple_GET_SIZE(PyTuple_GET_ITEM(e, 2));
    }
    s->exact = (opw_exact_spec*)PyMem_Calloc(s->n_args ? s->n_args : 1, sizeof(opw_exact_spec));
    s->dims = (npy_intp*)PyMem_Calloc(total ? total : 1, sizeof(npy_intp));
    if (s->exact == NULL || s->dims == NULL) { PyErr_NoMemory(); return -1; }
    for (i = 0; i < s->n_args; i++) {
        PyObject* e = PyTuple_GET_ITEM(exact, i);
        PyObject* sizes;
        long typenum, ndim;
        s->exact[i].typenum = -1;
        if (e == Py_None) continue;
        sizes = PyTuple_GET_ITEM(e, 2);
        typenum = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
        ndim = PyLong_AsLong(PyTuple_GET_ITEM(e, 1));
        if (PyErr_Occurred()) return -1;
        if (typenum < 0 || ndim < 0 || ndim > NPY_MAXDIMS || ndim != PyTuple_GET_SIZE(sizes)) {
            PyErr_SetString(PyExc_ValueError, "exact[i]: bad type number, rank or sizes");
            return -1;
        }
        s->exact[i].typenum = (int)typenum;
        s->exact[i].ndim = (int)ndim;
        s->exact[i].dims = s->dims + at;
        for (d = 0; d < ndim; d++) {
            s->dims[at] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, d));
            if (PyErr_Occurred()) return -1;
            at++;
        }
    }
    return 0;
}

/* Read the steps and the sizes of their gc ranges: 0, or -1 with an exception set. */
static int opw_steps_read(opw_steps* s, PyObject* steps, PyObject* gc_ends) {
    Py_ssize_t i, last = 0;
    s->steps = (opw_step*)PyMem_Calloc(s->n_steps ? s->n_steps : 1, sizeof(opw_step));
    if (s->steps == NULL) { PyErr_NoMemory(); return -1; }
    for (i = 0; i < s->n_steps; i++) {
        PyObject* step = PyTuple_GET_ITEM(steps, i);
        Py_ssize_t end = PyLong_AsSsize_t(PyTuple_GET_ITEM(gc_ends, i));
        if (end == -1 && PyErr_Occurred()) return -1;
        if (end < last || end > s->n_gc) {
            PyErr_SetString(PyExc_ValueError, "gc_ends must grow and stay within gc_cells");
            return -1;
        }
        last = end;
        s->steps[i].gc_end = end;
        if (PyCapsule_IsValid(step, "opweave.state")) {
            s->steps[i].block = (opw_state*)PyCapsule_GetPointer(step, "opweave.state");
        } else if (PyCallable_Check(step)) {
            s->steps[i].thunk = step;
        } else {
            PyErr_Format(PyExc_TypeError,
                         "steps[%zd] must be a bound block's state or a callable", i);
            return -1;
        }
    }
    return 0;
}

OPW_RT PyObject* opw_link_steps(PyObject* self, PyObject* args) {
    PyObject *steps, *gc_ends, *gc_cells, *gc_done, *rel_cells, *rel_done, *on_failure;
    PyObject *arg_cells, *filters, *exact, *failcell, *upd_src, *upd_dst, *user_out, *clear;
    PyObject *capsule = NULL, *run = NULL, *call = NULL, *result = NULL;
    int unpack;
    opw_steps* s;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OO!O!O!O!O!O!O!pO!", &PyTuple_Type, &steps,
                          &PyTuple_Type, &gc_ends, &PyTuple_Type, &gc_cells, &PyTuple_Type,
                          &gc_done, &PyTuple_Type, &rel_cells, &PyTuple_Type, &rel_done,
                          &on_failure, &PyTuple_Type, &arg_cells, &PyTuple_Type, &filters,
                          &PyTuple_Type, &exact, &PyList_Type, &failcell, &PyTuple_Type,
                          &upd_src, &PyTuple_Type, &upd_dst, &PyTuple_Type, &user_out, &unpack,
                          &PyTuple_Type, &clear))
        return NULL;
    if (opw_check_cells(gc_cells, "gc_cells") || opw_check_cells(gc_done, "gc_done") ||
        opw_check_cells(rel_cells, "release_cells") ||
        opw_check_cells(rel_done, "release_done") || opw_check_cells(arg_cells, "arg_cells") ||
        opw_check_cells(upd_src, "upd_src") || opw_check_cells(upd_dst, "upd_dst") ||
        opw_check_cells(user_out, "user_out") || opw_check_cells(clear, "clear"))
        return NULL;
    if (PyTuple_GET_SIZE(gc_ends) != PyTuple_GET_SIZE(steps) ||
        PyTuple_GET_SIZE(gc_done) != PyTuple_GET_SIZE(gc_cells) ||
        PyTuple_GET_SIZE(rel_done) != PyTuple_GET_SIZE(rel_cells) ||
        PyTuple_GET_SIZE(filters) != PyTuple_GET_SIZE(arg_cells) ||
        PyTuple_GET_SIZE(exact) != PyTuple_GET_SIZE(arg_cells) ||
        PyList_GET_SIZE(failcell) != 1 ||
        PyTuple_GET_SIZE(upd_src) != PyTuple_GET_SIZE(upd_dst) ||
        (unpack && PyTuple_GET_SIZE(user_out) < 1) ||
        (on_failure != Py_None && !PyCallable_Check(on_failure))) {
        PyErr_SetString(PyExc_ValueError, "link_steps: inconsistent arguments");
        return NULL;
    }
    pthread_once(&opw_forks_once, opw_watch_forks);
    s = (opw_steps*)PyMem_Calloc(1, sizeof(opw_steps));
    if (s == NULL) return PyErr_NoMemory();
    Py_INCREF(args);
    s->keep = args;
    s->n_steps = PyTuple_GET_SIZE(steps);
    s->n_gc = PyTuple_GET_SIZE(gc_cells);
    s->n_release = PyTuple_GET_SIZE(rel_cells);
    s->n_args = PyTuple_GET_SIZE(arg_cells);
    s->n_updates = PyTuple_GET_SIZE(upd_src);
    s->n_user = PyTuple_GET_SIZE(user_out);
    s->n_clear = PyTuple_GET_SIZE(clear);
    s->gc_cells = OPW_ITEMS(gc_cells);
    s->gc_done = OPW_ITEMS(gc_done);
    s->rel_cells = OPW_ITEMS(rel_cells);
    s->rel_done = OPW_ITEMS(rel_done);
    s->arg_cells = OPW_ITEMS(arg_cells);
    s->filters = OPW_ITEMS(filters);
    s->upd_src = OPW_ITEMS(upd_src);
    s->upd_dst = OPW_ITEMS(upd_dst);
    s->user_out = OPW_ITEMS(user_out);
    s->clear = OPW_ITEMS(clear);
    s->on_failure = on_failure;
    s->failcell = failcell;
    s->unpack = unpack;
    s->done = PyLong_FromLong(2);
    capsule = PyCapsule_New(s, "opweave.steps", opw_steps_free);
    if (capsule == NULL) {
        Py_XDECREF(s->done);
        Py_DECREF(s->keep);
        PyMem_Free(s);
        return NULL;
    }
    /* From here on the capsule owns ``s`` and frees what it holds. */
    if (s->done == NULL || opw_steps_read(s, steps, gc_ends) || opw_steps_exact(s, exact))
        goto done;
    run = PyCFunction_New(&opw_steps_run_def, capsule);
    call = PyCFunction_New(&opw_steps_call_def, capsule);
    if (run && call) result = PyTuple_Pack(2, run, call);
done:
    Py_XDECREF(run);
    Py_XDECREF(call);
    Py_DECREF(capsule);
    return result;
}

#endif /* !OPW_RUNTIME_LINKED */
#endif /* OPW_RUNTIME_FUNCTIONS_H */
