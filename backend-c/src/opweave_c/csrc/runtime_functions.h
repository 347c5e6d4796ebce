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
 * callables) run by C, in order or on demand (a lazy graph), the ``cvm`` linker's loop
 * (see the definition below). */
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
 *            clear[, lazy]) -> (run, call)
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
 * does) and returns NotImplemented for another number of arguments.
 *
 * With ``lazy`` (not None), the steps of a lazy graph run in demand order instead, each
 * only when an output needs it (see opw_lazy_exec below); ``gc_cells`` are then its
 * intermediates, freed as its ``lazy`` tuple says and all emptied after the last node. */
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

struct opw_lazy;

typedef struct {
    Py_ssize_t n_steps, n_gc, n_release, n_args, n_updates, n_user, n_clear;
    opw_step* steps;
    struct opw_lazy* lazy; /* the demand-driven order of a lazy graph, or NULL */
    opw_exact_spec* exact;
    npy_intp* dims;
    PyObject **gc_cells, **gc_done, **rel_cells, **rel_done;
    PyObject **arg_cells, **filters, **upd_src, **upd_dst, **user_out, **clear;
    PyObject *on_failure, *failcell, *done;
    int unpack, busy;
    unsigned long owner, busy_forks;
} opw_steps;

static void opw_lazy_free(struct opw_lazy* L);

static void opw_steps_free(PyObject* capsule) {
    opw_steps* s = (opw_steps*)PyCapsule_GetPointer(capsule, "opweave.steps");
    if (s == NULL) return;
    opw_lazy_free(s->lazy);
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

/* ---- The demand-driven order of a lazy graph (``ifelse``) ----
 *
 * With its ``lazy`` argument, link_steps runs the steps as the core's lazy loop does
 * (opweave.link.lazy.run_lazy_loop), the same steps in the same order: starting from the
 * nodes computing the outputs, a node runs once the nodes it depends on ran, and a lazy
 * node first names the inputs it needs, which run before it is asked again; nodes no one
 * asks for (the branch an IfElse does not take) never run. ``lazy`` is the tuple
 *
 *   (kinds, roots, dep_ends, deps, pre_ends, pres, own_ends, owners, outc_ends, outc,
 *    free_ends, free_gc, reader_ends, readers, ifelse, deepcopy, stalled)
 *
 * built by opweave_c.linkers.lazy_plan: per node its kind (0 eager, 1 a lazy Python
 * thunk, called for the list of inputs it needs, 2 an IfElse the runtime runs itself),
 * the nodes it depends on (``deps``, the ordering constraints alone in ``pres``), its
 * inputs' owners (-1: none), its outputs' compute cells (0 at the start of a call, 1 once
 * it ran) and the intermediates it may free (an index into gc_cells, freed once every
 * node of its readers ran), all as flat tuples cut by ``*_ends`` (n + 1 offsets). For an
 * IfElse, ``ifelse[k]`` is (n_outs, as_view, input cells, input compute cells, output
 * cells): the condition counts as true when ``value != 0`` is, and the outputs become the
 * taken branch's values, copied (``ndarray.copy()``, else ``deepcopy``) unless ``as_view``
 * and the ``then`` branch is taken, as the Python kernel does. ``stalled(k, requires)``
 * gives the error of a lazy node asking only for inputs computed already. After the last
 * node, or a failure, every gc cell and release cell is emptied. */
typedef struct {
    Py_ssize_t n_outs;
    int as_view;
    PyObject **in_cells, **in_done, **out_cells;
} opw_ifelse;

typedef struct opw_lazy {
    Py_ssize_t n, n_roots;
    Py_ssize_t *kind, *roots, *dep_ends, *deps, *pre_ends, *pres, *own_ends, *owners;
    Py_ssize_t *outc_ends, *free_ends, *free_gc, *reader_ends, *readers;
    PyObject** outc;
    opw_ifelse* ifelse;
    PyObject *deepcopy, *stalled, *zero, *one;
} opw_lazy;

static void opw_lazy_free(opw_lazy* L) {
    if (L == NULL) return;
    PyMem_Free(L->kind);
    PyMem_Free(L->roots);
    PyMem_Free(L->dep_ends);
    PyMem_Free(L->deps);
    PyMem_Free(L->pre_ends);
    PyMem_Free(L->pres);
    PyMem_Free(L->own_ends);
    PyMem_Free(L->owners);
    PyMem_Free(L->outc_ends);
    PyMem_Free(L->free_ends);
    PyMem_Free(L->free_gc);
    PyMem_Free(L->reader_ends);
    PyMem_Free(L->readers);
    PyMem_Free(L->ifelse);
    Py_XDECREF(L->zero);
    Py_XDECREF(L->one);
    PyMem_Free(L);
}

/* Read a tuple of ints, each in [lo, hi), into a new array: 0, or -1 with an exception. */
static int opw_lazy_ints(PyObject* t, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t** out,
                         const char* what) {
    Py_ssize_t i, n;
    if (!PyTuple_Check(t)) {
        PyErr_Format(PyExc_TypeError, "lazy: %s must be a tuple", what);
        return -1;
    }
    n = PyTuple_GET_SIZE(t);
    *out = (Py_ssize_t*)PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    if (*out == NULL) { PyErr_NoMemory(); return -1; }
    for (i = 0; i < n; i++) {
        Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, i));
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < lo || v >= hi) {
            PyErr_Format(PyExc_ValueError, "lazy: %s[%zd] is out of range", what, i);
            return -1;
        }
        (*out)[i] = v;
    }
    return 0;
}

/* Read offsets cutting a flat tuple of ``total`` entries into ``n`` ranges. */
static int opw_lazy_ends(PyObject* t, Py_ssize_t n, Py_ssize_t total, Py_ssize_t** out,
                         const char* what) {
    Py_ssize_t i;
    if (opw_lazy_ints(t, 0, total + 1, out, what)) return -1;
    if (PyTuple_GET_SIZE(t) != n + 1 || (*out)[0] != 0 || (*out)[n] != total) {
        PyErr_Format(PyExc_ValueError, "lazy: %s must hold %zd offsets", what, n + 1);
        return -1;
    }
    for (i = 0; i < n; i++)
        if ((*out)[i + 1] < (*out)[i]) {
            PyErr_Format(PyExc_ValueError, "lazy: %s must grow", what);
            return -1;
        }
    return 0;
}

/* Read a flat tuple of ints in [lo, hi) and the offsets cutting it into n ranges. */
static int opw_lazy_ranges(PyObject* spec, int at, Py_ssize_t n, Py_ssize_t lo, Py_ssize_t hi,
                           Py_ssize_t** ends, Py_ssize_t** items, const char* what) {
    PyObject* flat = PyTuple_GET_ITEM(spec, at + 1);
    if (opw_lazy_ints(flat, lo, hi, items, what)) return -1;
    return opw_lazy_ends(PyTuple_GET_ITEM(spec, at), n, PyTuple_GET_SIZE(flat), ends, what);
}

static int opw_lazy_ifelse(opw_lazy* L, PyObject* specs) {
    Py_ssize_t k;
    if (!PyTuple_Check(specs) || PyTuple_GET_SIZE(specs) != L->n) {
        PyErr_SetString(PyExc_TypeError, "lazy: ifelse must hold one entry per step");
        return -1;
    }
    L->ifelse = (opw_ifelse*)PyMem_Calloc(L->n ? L->n : 1, sizeof(opw_ifelse));
    if (L->ifelse == NULL) { PyErr_NoMemory(); return -1; }
    for (k = 0; k < L->n; k++) {
        PyObject *e = PyTuple_GET_ITEM(specs, k), *ins, *dones, *outs;
        Py_ssize_t n_outs;
        if (L->kind[k] != 2) continue;
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 5) {
            PyErr_Format(PyExc_TypeError, "lazy: ifelse[%zd] must be a 5-tuple", k);
            return -1;
        }
        n_outs = PyLong_AsSsize_t(PyTuple_GET_ITEM(e, 0));
        if (n_outs == -1 && PyErr_Occurred()) return -1;
        ins = PyTuple_GET_ITEM(e, 2);
        dones = PyTuple_GET_ITEM(e, 3);
        outs = PyTuple_GET_ITEM(e, 4);
        if (opw_check_cells(ins, "ifelse inputs") || opw_check_cells(dones, "ifelse computed") ||
            opw_check_cells(outs, "ifelse outputs"))
            return -1;
        if (n_outs < 0 || PyTuple_GET_SIZE(ins) != 1 + 2 * n_outs ||
            PyTuple_GET_SIZE(dones) != 1 + 2 * n_outs || PyTuple_GET_SIZE(outs) != n_outs ||
            L->own_ends[k + 1] - L->own_ends[k] != 1 + 2 * n_outs) {
            PyErr_Format(PyExc_ValueError, "lazy: ifelse[%zd] has the wrong cells", k);
            return -1;
        }
        L->ifelse[k].n_outs = n_outs;
        L->ifelse[k].as_view = PyObject_IsTrue(PyTuple_GET_ITEM(e, 1));
        if (L->ifelse[k].as_view < 0) return -1;
        L->ifelse[k].in_cells = OPW_ITEMS(ins);
        L->ifelse[k].in_done = OPW_ITEMS(dones);
        L->ifelse[k].out_cells = OPW_ITEMS(outs);
    }
    return 0;
}

/* Read link_steps' ``lazy`` argument into s->lazy: 0, or -1 with an exception set. The
 * tuples it points into live as long as the steps (run() and call() hold link_steps'
 * arguments). */
static int opw_lazy_read(opw_steps* s, PyObject* spec) {
    opw_lazy* L;
    Py_ssize_t n = s->n_steps, k, n_free;
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 17) {
        PyErr_SetString(PyExc_TypeError, "link_steps: lazy must be None or a 17-tuple");
        return -1;
    }
    L = (opw_lazy*)PyMem_Calloc(1, sizeof(opw_lazy));
    if (L == NULL) { PyErr_NoMemory(); return -1; }
    s->lazy = L;
    L->n = n;
    L->zero = PyLong_FromLong(0);
    L->one = PyLong_FromLong(1);
    if (L->zero == NULL || L->one == NULL) return -1;
    if (opw_lazy_ints(PyTuple_GET_ITEM(spec, 0), 0, 3, &L->kind, "kinds")) return -1;
    if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 0)) != n) {
        PyErr_SetString(PyExc_ValueError, "lazy: kinds must hold one entry per step");
        return -1;
    }
    if (opw_lazy_ints(PyTuple_GET_ITEM(spec, 1), 0, n, &L->roots, "roots")) return -1;
    L->n_roots = PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 1));
    if (opw_lazy_ranges(spec, 2, n, 0, n, &L->dep_ends, &L->deps, "deps") ||
        opw_lazy_ranges(spec, 4, n, 0, n, &L->pre_ends, &L->pres, "prereqs") ||
        opw_lazy_ranges(spec, 6, n, -1, n, &L->own_ends, &L->owners, "owners"))
        return -1;
    if (opw_check_cells(PyTuple_GET_ITEM(spec, 9), "lazy outc") ||
        opw_lazy_ends(PyTuple_GET_ITEM(spec, 8), n, PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 9)),
                      &L->outc_ends, "outc"))
        return -1;
    L->outc = OPW_ITEMS(PyTuple_GET_ITEM(spec, 9));
    if (opw_lazy_ranges(spec, 10, n, 0, s->n_gc, &L->free_ends, &L->free_gc, "frees"))
        return -1;
    n_free = PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, 11));
    if (opw_lazy_ranges(spec, 12, n_free, 0, n, &L->reader_ends, &L->readers, "readers"))
        return -1;
    if (opw_lazy_ifelse(L, PyTuple_GET_ITEM(spec, 14))) return -1;
    L->deepcopy = PyTuple_GET_ITEM(spec, 15);
    L->stalled = PyTuple_GET_ITEM(spec, 16);
    if (!PyCallable_Check(L->deepcopy) || !PyCallable_Check(L->stalled)) {
        PyErr_SetString(PyExc_TypeError, "lazy: deepcopy and stalled must be callable");
        return -1;
    }
    for (k = 0; k < n; k++)
        if (L->kind[k] == 1 && s->steps[k].thunk == NULL) {
            PyErr_Format(PyExc_TypeError, "lazy: step %zd is lazy but not a callable", k);
            return -1;
        }
    return 0;
}

/* ``bool(v != 0)``, as the Python IfElse kernel reads its condition: 1, 0, or -1 with an
 * exception set. A native 0-d array of a boolean, integer or float dtype is read here. */
static int opw_nonzero(PyObject* v, PyObject* zero) {
    PyObject* r;
    int t;
    if (PyArray_CheckExact(v) && PyArray_NDIM((PyArrayObject*)v) == 0 &&
        PyArray_ISALIGNED((PyArrayObject*)v) && PyArray_ISNOTSWAPPED((PyArrayObject*)v)) {
        const void* p = PyArray_DATA((PyArrayObject*)v);
        switch (PyArray_TYPE((PyArrayObject*)v)) {
        case NPY_BOOL: return *(const npy_bool*)p != 0;
        case NPY_BYTE: return *(const npy_byte*)p != 0;
        case NPY_UBYTE: return *(const npy_ubyte*)p != 0;
        case NPY_SHORT: return *(const npy_short*)p != 0;
        case NPY_USHORT: return *(const npy_ushort*)p != 0;
        case NPY_INT: return *(const npy_int*)p != 0;
        case NPY_UINT: return *(const npy_uint*)p != 0;
        case NPY_LONG: return *(const npy_long*)p != 0;
        case NPY_ULONG: return *(const npy_ulong*)p != 0;
        case NPY_LONGLONG: return *(const npy_longlong*)p != 0;
        case NPY_ULONGLONG: return *(const npy_ulonglong*)p != 0;
        case NPY_FLOAT: return *(const npy_float*)p != 0; /* NaN: true, as in NumPy */
        case NPY_DOUBLE: return *(const npy_double*)p != 0;
        default: break;
        }
    }
    r = PyObject_RichCompare(v, zero, Py_NE);
    if (r == NULL) return -1;
    t = PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

/* The loop's stack of nodes to visit (grown on the heap past its first slots). */
typedef struct {
    Py_ssize_t *items, top, cap;
    Py_ssize_t first[128];
} opw_stack;

static int opw_push(opw_stack* st, Py_ssize_t k) {
    if (st->top == st->cap) {
        Py_ssize_t cap = 2 * st->cap;
        Py_ssize_t* grown;
        if (st->items == st->first) {
            grown = (Py_ssize_t*)PyMem_Malloc(sizeof(Py_ssize_t) * cap);
            if (grown != NULL) memcpy(grown, st->first, sizeof(Py_ssize_t) * st->top);
        } else {
            grown = (Py_ssize_t*)PyMem_Realloc(st->items, sizeof(Py_ssize_t) * cap);
        }
        if (grown == NULL) { PyErr_NoMemory(); return -1; }
        st->items = grown;
        st->cap = cap;
    }
    st->items[st->top++] = k;
    return 0;
}

/* The error of lazy node k asking for ``requires``, all computed: set, -1. */
static int opw_lazy_stalled(opw_lazy* L, Py_ssize_t k, PyObject* requires) {
    PyObject* exc = PyObject_CallFunction(L->stalled, "nO", k, requires);
    if (exc == NULL) return -1;
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
}

/* Ask for the inputs of node k in ``need`` (input positions, ``n_need`` of them) that are
 * not computed: push k and their owners not run yet. 1 when it asked, -1 with an exception
 * set when they are all computed by nodes that ran (the lazy protocol is broken). */
static int opw_lazy_ask(opw_lazy* L, opw_stack* st, const char* done, Py_ssize_t k,
                        const Py_ssize_t* need, Py_ssize_t n_need) {
    Py_ssize_t j, pushed = 0;
    const Py_ssize_t* own = L->owners + L->own_ends[k];
    if (opw_push(st, k)) return -1;
    for (j = 0; j < n_need; j++) {
        Py_ssize_t o = own[need[j]];
        if (o >= 0 && !done[o]) {
            if (opw_push(st, o)) return -1;
            pushed++;
        }
    }
    if (pushed) return 1;
    st->top--;
    {
        PyObject* requires = PyList_New(n_need);
        if (requires == NULL) return -1;
        for (j = 0; j < n_need; j++) {
            PyObject* r = PyLong_FromSsize_t(need[j]);
            if (r == NULL) { Py_DECREF(requires); return -1; }
            PyList_SET_ITEM(requires, j, r);
        }
        opw_lazy_stalled(L, k, requires);
        Py_DECREF(requires);
    }
    return -1;
}

/* Visit IfElse node k (its ordering constraints ran): as its lazy thunk with the Python
 * kernel does, ask for the condition, then for the taken branch's inputs not computed,
 * then set the outputs. 0 when it ran, 1 when it asked, -1 with an exception set. */
static int opw_lazy_ifelse_visit(opw_lazy* L, opw_stack* st, const char* done, Py_ssize_t k) {
    opw_ifelse* ie = L->ifelse + k;
    Py_ssize_t need[OPW_STACK], *needed = need, n_need = 0, i, lo, n = ie->n_outs;
    int take, computed, rc = 0;
    computed = PyObject_IsTrue(PyList_GET_ITEM(ie->in_done[0], 0));
    if (computed < 0) return -1;
    if (!computed) {
        need[0] = 0;
        return opw_lazy_ask(L, st, done, k, need, 1);
    }
    take = opw_nonzero(PyList_GET_ITEM(ie->in_cells[0], 0), L->zero);
    if (take < 0) return -1;
    lo = take ? 1 : 1 + n;
    if (n > OPW_STACK) {
        needed = (Py_ssize_t*)PyMem_Malloc(sizeof(Py_ssize_t) * n);
        if (needed == NULL) { PyErr_NoMemory(); return -1; }
    }
    for (i = lo; i < lo + n; i++) {
        computed = PyObject_IsTrue(PyList_GET_ITEM(ie->in_done[i], 0));
        if (computed < 0) { rc = -1; goto out; }
        if (!computed) needed[n_need++] = i;
    }
    if (n_need) {
        rc = opw_lazy_ask(L, st, done, k, needed, n_need);
        goto out;
    }
    for (i = 0; i < n; i++) {
        PyObject* v = PyList_GET_ITEM(ie->in_cells[lo + i], 0);
        if (ie->as_view && take) {
            opw_cell_set(ie->out_cells[i], v);
            continue;
        }
        if (PyArray_CheckExact(v)) v = PyArray_NewCopy((PyArrayObject*)v, NPY_CORDER);
        else if (PyArray_Check(v)) v = PyObject_CallMethod(v, "copy", NULL);
        else v = PyObject_CallOneArg(L->deepcopy, v);
        if (v == NULL) { rc = -1; goto out; }
        opw_cell_set(ie->out_cells[i], v);
        Py_DECREF(v);
    }
out:
    if (needed != need) PyMem_Free(needed);
    return rc;
}

/* Call lazy thunk k: 0 when it ran, 1 when it asked for inputs, -1 with an exception. */
static int opw_lazy_thunk_visit(opw_steps* s, opw_stack* st, const char* done, Py_ssize_t k) {
    opw_lazy* L = s->lazy;
    PyObject *r = PyObject_CallNoArgs(s->steps[k].thunk), *seq = NULL;
    Py_ssize_t j, m, n_in = L->own_ends[k + 1] - L->own_ends[k], pushed = 0;
    const Py_ssize_t* own = L->owners + L->own_ends[k];
    int t, rc = -1;
    if (r == NULL) return -1;
    t = PyObject_IsTrue(r);
    if (t <= 0) { Py_DECREF(r); return t; }
    seq = PySequence_Fast(r, "a lazy thunk must return a list of input indices");
    if (seq == NULL) goto out;
    m = PySequence_Fast_GET_SIZE(seq);
    if (opw_push(st, k)) goto out;
    for (j = 0; j < m; j++) {
        Py_ssize_t i = PyNumber_AsSsize_t(PySequence_Fast_GET_ITEM(seq, j), PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) goto out;
        if (i < 0) i += n_in;
        if (i < 0 || i >= n_in) {
            PyErr_SetString(PyExc_IndexError, "tuple index out of range");
            goto out;
        }
        if (own[i] >= 0 && !done[own[i]]) {
            if (opw_push(st, own[i])) goto out;
            pushed++;
        }
    }
    if (pushed) {
        rc = 1;
    } else {
        st->top--;
        opw_lazy_stalled(L, k, r);
    }
out:
    Py_XDECREF(seq);
    Py_DECREF(r);
    return rc;
}

/* Run a lazy graph's steps on demand: 0, or -1 with an exception set (reported, and
 * every gc and release cell emptied). */
static int opw_lazy_exec(opw_steps* s) {
    opw_lazy* L = s->lazy;
    opw_stack st;
    char first[256];
    char* done = first;
    Py_ssize_t k = 0, i, j, e;
    int rc = -1;
    st.items = st.first;
    st.top = 0;
    st.cap = (Py_ssize_t)(sizeof(st.first) / sizeof(st.first[0]));
    if (L->n > (Py_ssize_t)sizeof(first)) {
        done = (char*)PyMem_Malloc((size_t)L->n);
        if (done == NULL) { PyErr_NoMemory(); goto failed; }
    }
    memset(done, 0, (size_t)L->n);
    for (i = 0; i < L->outc_ends[L->n]; i++) opw_cell_set(L->outc[i], L->zero);
    for (i = 0; i < L->n_roots; i++)
        if (opw_push(&st, L->roots[i])) goto failed;
    while (st.top > 0) {
        k = st.items[--st.top];
        if (done[k]) continue;
        if (L->kind[k] != 0) {
            Py_ssize_t waiting = 0;
            for (j = L->pre_ends[k]; j < L->pre_ends[k + 1]; j++)
                if (!done[L->pres[j]]) waiting++;
            if (waiting) {
                if (opw_push(&st, k)) goto failed;
                for (j = L->pre_ends[k]; j < L->pre_ends[k + 1]; j++)
                    if (!done[L->pres[j]] && opw_push(&st, L->pres[j])) goto failed;
                continue;
            }
            rc = L->kind[k] == 2 ? opw_lazy_ifelse_visit(L, &st, done, k)
                                 : opw_lazy_thunk_visit(s, &st, done, k);
            if (rc < 0) goto failed;
            if (rc > 0) continue;
        } else {
            Py_ssize_t missing = 0;
            for (j = L->dep_ends[k]; j < L->dep_ends[k + 1]; j++)
                if (!done[L->deps[j]]) missing++;
            if (missing) {
                if (opw_push(&st, k)) goto failed;
                for (j = L->dep_ends[k]; j < L->dep_ends[k + 1]; j++)
                    if (!done[L->deps[j]] && opw_push(&st, L->deps[j])) goto failed;
                continue;
            }
            if (s->steps[k].block != NULL) {
                if (opw_run_state(s->steps[k].block)) goto failed;
            } else {
                PyObject* r = PyObject_CallNoArgs(s->steps[k].thunk);
                if (r == NULL) goto failed;
                Py_DECREF(r);
            }
        }
        for (i = L->outc_ends[k]; i < L->outc_ends[k + 1]; i++) opw_cell_set(L->outc[i], L->one);
        done[k] = 1;
        for (e = L->free_ends[k]; e < L->free_ends[k + 1]; e++) {
            for (j = L->reader_ends[e]; j < L->reader_ends[e + 1]; j++)
                if (!done[L->readers[j]]) break;
            if (j == L->reader_ends[e + 1]) {
                opw_cell_set(s->gc_cells[L->free_gc[e]], Py_None);
                opw_cell_set(s->gc_done[L->free_gc[e]], s->done);
            }
        }
    }
    if (done != first) PyMem_Free(done);
    if (st.items != st.first) PyMem_Free(st.items);
    opw_empty(s->gc_cells, s->gc_done, s->n_gc, s->done);
    opw_empty(s->rel_cells, s->rel_done, s->n_release, s->done);
    return 0;
failed:
    if (done != first) PyMem_Free(done);
    if (st.items != st.first) PyMem_Free(st.items);
    opw_steps_failed(s, k);
    return -1;
}

/* Run the steps: 0, or -1 with an exception set (reported and cleaned up). */
static int opw_steps_exec(opw_steps* s) {
    Py_ssize_t i, g = 0;
    if (s->lazy != NULL) return opw_lazy_exec(s);
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

/* The steps of run() and call(), whose ``self`` is (capsule, arguments). */
static opw_steps* opw_steps_of(PyObject* self) {
    if (!PyTuple_Check(self) || PyTuple_GET_SIZE(self) != 2) {
        PyErr_SetString(PyExc_TypeError, "opweave steps: bad self");
        return NULL;
    }
    return (opw_steps*)PyCapsule_GetPointer(PyTuple_GET_ITEM(self, 0), "opweave.steps");
}

static PyObject* opw_steps_run(PyObject* self, PyObject* unused) {
    opw_steps* s = opw_steps_of(self);
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
    opw_steps* s = opw_steps_of(self);
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
    PyObject *capsule = NULL, *self_ = NULL, *run = NULL, *call = NULL, *result = NULL;
    PyObject* lazy = Py_None;
    int unpack;
    opw_steps* s;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OO!O!O!O!O!O!O!pO!|O", &PyTuple_Type, &steps,
                          &PyTuple_Type, &gc_ends, &PyTuple_Type, &gc_cells, &PyTuple_Type,
                          &gc_done, &PyTuple_Type, &rel_cells, &PyTuple_Type, &rel_done,
                          &on_failure, &PyTuple_Type, &arg_cells, &PyTuple_Type, &filters,
                          &PyTuple_Type, &exact, &PyList_Type, &failcell, &PyTuple_Type,
                          &upd_src, &PyTuple_Type, &upd_dst, &PyTuple_Type, &user_out, &unpack,
                          &PyTuple_Type, &clear, &lazy))
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
        PyMem_Free(s);
        return NULL;
    }
    /* From here on the capsule owns ``s`` and frees what it holds. */
    if (s->done == NULL || opw_steps_read(s, steps, gc_ends) || opw_steps_exact(s, exact) ||
        (lazy != Py_None && opw_lazy_read(s, lazy)))
        goto done;
    /* ``s`` points into the arguments without holding them: run() and call() hold them,
     * in their ``self`` (capsule, args), which the garbage collector sees into, so that a
     * cycle through the arguments (a step's thunk reaching its graph, which reaches the
     * function) is collected at once, as if the loop were Python. */
    self_ = PyTuple_Pack(2, capsule, args);
    if (self_ == NULL) goto done;
    run = PyCFunction_New(&opw_steps_run_def, self_);
    call = PyCFunction_New(&opw_steps_call_def, self_);
    if (run && call) result = PyTuple_Pack(2, run, call);
done:
    Py_XDECREF(run);
    Py_XDECREF(call);
    Py_XDECREF(self_);
    Py_DECREF(capsule);
    return result;
}

#endif /* !OPW_RUNTIME_LINKED */
#endif /* OPW_RUNTIME_FUNCTIONS_H */
