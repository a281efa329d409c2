/* What mjax's C fast paths share (runtime/_fastpath.c: the cached jit call;
 * runtime/_eagerpath.c: eager ops' cache hit): reading and building `mjax.Array`s through
 * their slots, and the test that no trace and no config context manager is active.
 *
 * Each extension includes this header once and gets its own copy of the state below, set
 * by its setup() through array_slots_setup(). Only the CPython C API is used.
 */
#ifndef MJAX_FAST_H
#define MJAX_FAST_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* mjax.Array, and the offsets of its slots `_buf`, `aval`, `_npy`, `_sharding`,
 * `_committed`. */
static PyTypeObject *array_type = NULL;
static Py_ssize_t off_buf = -1, off_aval = -1, off_npy = -1, off_sharding = -1,
                  off_committed = -1;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* The offset of `tp.name`, an object slot (__slots__), or -1 with a TypeError naming
 * `who` (the extension). */
static inline Py_ssize_t slot_offset(PyTypeObject *tp, const char *name, const char *who) {
    PyObject *d = PyDict_GetItemString(tp->tp_dict, name);   /* borrowed */
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s: %s.%s is not an object slot", who, tp->tp_name,
                     name);
        return -1;
    }
    return ((PyMemberDescrObject *)d)->d_member->offset;
}

/* A path's set_entry(cls): keeps the frontend's cache entry class `cls` (args[0]) in
 * `*type` and the offsets of its named fields `names` (object slots) in `offs`: 0, or -1
 * with an error set. */
static inline int entry_setup(PyObject *args, PyTypeObject **type, const char *const *names,
                              Py_ssize_t *offs, int n, const char *who) {
    PyObject *tp;
    if (!PyArg_ParseTuple(args, "O!", &PyType_Type, &tp))
        return -1;
    for (int i = 0; i < n; i++)
        if ((offs[i] = slot_offset((PyTypeObject *)tp, names[i], who)) < 0)
            return -1;
    Py_INCREF(tp);
    Py_XSETREF(*type, (PyTypeObject *)tp);
    return 0;
}

/* tp_descr_get of the callables that stand in for methods (Jitted.__call__, Array
 * operators): the bound form when reached through an instance. */
static PyObject *method_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

/* Reads mjax.Array's slot offsets and keeps the type: 0, or -1 with an error set. */
static inline int array_slots_setup(PyTypeObject *tp, const char *who) {
    Py_ssize_t b = slot_offset(tp, "_buf", who), a = slot_offset(tp, "aval", who),
               n = slot_offset(tp, "_npy", who), s = slot_offset(tp, "_sharding", who),
               c = slot_offset(tp, "_committed", who);
    if (b < 0 || a < 0 || n < 0 || s < 0 || c < 0)
        return -1;
    off_buf = b; off_aval = a; off_npy = n; off_sharding = s; off_committed = c;
    Py_INCREF(tp);
    Py_XSETREF(array_type, tp);
    return 0;
}

/* mjax's ShapedArray (its slots `shape`, `dtype`, `weak_type`), set by aval_slots_setup. */
static PyTypeObject *aval_type = NULL;
static Py_ssize_t off_shape = -1, off_dtype = -1, off_weak = -1;

/* Reads ShapedArray's slot offsets and keeps the type: 0, or -1 with an error set. */
static inline int aval_slots_setup(PyTypeObject *tp, const char *who) {
    Py_ssize_t sh = slot_offset(tp, "shape", who), d = slot_offset(tp, "dtype", who),
               w = slot_offset(tp, "weak_type", who);
    if (sh < 0 || d < 0 || w < 0)
        return -1;
    off_shape = sh; off_dtype = d; off_weak = w;
    Py_INCREF(tp);
    Py_XSETREF(aval_type, tp);
    return 0;
}

/* ShapedArray.__eq__ without running it (Python code on every cached call): two exact
 * ShapedArrays are equal when their weak_type flags are one object and their shapes and
 * dtypes compare equal (tuples of ints and NumPy dtypes compare in C); anything else
 * through its own __eq__. 1, 0, or -1 with an error set. */
static inline int avals_equal(PyObject *a, PyObject *b) {
    if (a == b)
        return 1;
    if (aval_type != NULL && Py_TYPE(a) == aval_type && Py_TYPE(b) == aval_type) {
        PyObject *sa = SLOT(a, off_shape), *sb = SLOT(b, off_shape),
                 *da = SLOT(a, off_dtype), *db = SLOT(b, off_dtype);
        if (sa != NULL && sb != NULL && da != NULL && db != NULL &&
                SLOT(a, off_weak) != NULL && PyTuple_CheckExact(sa) && PyTuple_CheckExact(sb))
            return SLOT(a, off_weak) == SLOT(b, off_weak) &&
                   (da == db || PyObject_RichCompareBool(da, db, Py_EQ) == 1) &&
                   PyObject_RichCompareBool(sa, sb, Py_EQ) == 1;
    }
    return PyObject_RichCompareBool(a, b, Py_EQ);
}

/* A new mjax.Array over `buf` (as Array(buf, aval) does, without running __init__). */
static inline PyObject *new_array(PyObject *buf, PyObject *aval) {
    PyObject *o = array_type->tp_alloc(array_type, 0);
    if (o == NULL)
        return NULL;
    Py_INCREF(buf); SLOT(o, off_buf) = buf;
    Py_INCREF(aval); SLOT(o, off_aval) = aval;
    Py_INCREF(Py_None); SLOT(o, off_npy) = Py_None;
    Py_INCREF(Py_None); SLOT(o, off_sharding) = Py_None;
    return o;
}

/* An Array on its own device (no sharding object) whose buffer is set. */
static inline int plain_array(PyObject *x) {
    return Py_TYPE(x) == array_type && SLOT(x, off_sharding) == Py_None &&
           SLOT(x, off_buf) != NULL;
}

/* 1 when no trace is active (`trace_state.stack` empty, attribute name `s_stack`) and no
 * config context manager is active in any thread (`config._overriding` empty); else 0 (no
 * error set). */
static inline int quiet_state(PyObject *config_obj, PyObject *trace_state, PyObject *s_stack,
                       PyObject *s_overriding) {
    PyObject *t = PyObject_GetAttr(trace_state, s_stack);
    int quiet = t != NULL && PyList_CheckExact(t) && PyList_GET_SIZE(t) == 0;
    Py_XDECREF(t);
    if (quiet) {
        t = PyObject_GetAttr(config_obj, s_overriding);
        quiet = t != NULL && PyList_CheckExact(t) && PyList_GET_SIZE(t) == 0;
        Py_XDECREF(t);
    }
    if (!quiet)
        PyErr_Clear();
    return quiet;
}

#endif
