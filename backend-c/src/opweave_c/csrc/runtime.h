/* opweave C runtime: what every generated module shares.
 *
 * A compiled block reads its inputs from an array of borrowed PyObject* and writes its
 * outputs into one-element Python lists (the storage cells the Python backends use too).
 * The state of one linked block lives in a capsule; two entry points use it:
 *   run()       inputs from the input cells (the generic thunk protocol),
 *   call(*a)    the first n_args inputs from the arguments (a compiled function's whole
 *               call: run, apply updates, return the outputs).
 * call() is safe to use from several threads: one call runs at a time (a busy flag, set and
 * tested while holding the GIL; a thread finding it set gives the GIL away until it
 * clears), and when it returns, the cells it was told to clear (the caller's arguments)
 * hold None again, so a compiled function never keeps its caller's arrays alive.
 *
 * This header holds the types, macros and inline helpers; the runtime's functions are in
 * runtime_functions.h. The include guard lets a module include the header's precompiled
 * form first (opweave_c.prelude) and skip its own copy of this text.
 */
#ifndef OPW_RUNTIME_H
#define OPW_RUNTIME_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numpy/arrayobject.h>
#include <numpy/npy_math.h>
#include <math.h>
#include <sched.h>
#include <string.h>

/* OPW_HOT marks the functions that hold hot loops (Elemwise, reductions...). A module
 * made only of opweave's own C is built at -O1 with -DOPW_FAST_BUILD, and its hot
 * functions at -O3 (GCC's optimize attribute): the glue around the loops compiles in a
 * fraction of the time and runs as fast. Other modules are built at -O3 throughout. */
#if defined(OPW_FAST_BUILD) && defined(__GNUC__) && !defined(__clang__)
#define OPW_HOT __attribute__((optimize("O3")))
#else
#define OPW_HOT
#endif
/* OPW_GLUE marks a whole-graph function that only calls the functions of its nodes' kinds
 * and moves references (the ``c`` linker's): GCC compiles it without optimisation, whatever
 * the module's level, since it is long (one scope per variable: at -O3 it took 90 % of a
 * 480-node graph's build) and the functions it calls do the work. */
#if defined(__GNUC__) && !defined(__clang__)
#define OPW_GLUE __attribute__((optimize("O0")))
#else
#define OPW_GLUE
#endif

struct opw_state;
typedef int (*opw_block_fn)(PyObject* const* in_values, struct opw_state* st);

typedef struct opw_state {
    opw_block_fn block;
    Py_ssize_t n_in, n_out, n_args, n_updates, n_user;
    int unpack;
    PyObject** in_cells;
    PyObject** out_cells;
    PyObject** filters;
    PyObject** upd_src;
    PyObject** upd_dst;
    PyObject** user_out;
    PyObject** clear;
    Py_ssize_t n_clear;
    PyObject* failcell;
    PyObject* keep;
    int busy;
    unsigned long owner;
    unsigned long busy_forks; /* opw_forks when busy was set */
} opw_state;

#define OPW_ITEMS(t) (((PyTupleObject*)(t))->ob_item)
#define OPW_STACK 64

/* Replace the value of ``cell`` (a one-element list) with a new reference to ``v``. */
static inline void opw_cell_set(PyObject* cell, PyObject* v) {
    PyObject* old = PyList_GET_ITEM(cell, 0);
    Py_INCREF(v);
    PyList_SET_ITEM(cell, 0, v);
    Py_XDECREF(old);
}

#endif /* OPW_RUNTIME_H */
