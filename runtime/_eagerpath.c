/* Eager ops' cache hit in C (frontend/arrays/eager_fast.py installs it; docs/performance.md,
 * "Eager ops, third pass").
 *
 * `EagerOp(fallback, opcls, keep)` is a callable that, on a call it can take, does what
 * `core.bind` + `eager.apply_eager` do for a cached op: finds the op's compiled program in
 * apply_eager's cache (`eager._CACHE`, key (opcls, (), None, *avals)), calls jaxlib's
 * `execute_sharded(bufs).consume_with_handlers(handlers)` and wraps the outputs in
 * `mjax.Array`s. It takes a call only when
 *   - no trace is active and no config context manager is active in any thread,
 *   - the config epoch (`config._trace_key`) is one that `validate()` accepted (no default
 *     device, no jax_no_execution, no jax_debug_nans/infs),
 *   - there are no keyword arguments and every operand is an `mjax.Array` on its own
 *     device (no sharding object), and
 *   - the program is in the cache.
 * opcls None: the bind form, `f(opcls, *operands)` (core.bind). opcls set: `f(*operands)`
 * binds opcls; `keep` (a frozenset of dtypes, or None) then also asks that all operands
 * have one aval, not weakly typed, of a dtype in `keep`: the condition under which a jnp
 * function or array operator is that one op (its promotion and broadcasting change
 * nothing). With `learn`, `f(x, s)` for such an x and a Python int/float s (`numpy`: or a
 * NumPy scalar) is the op on x and the constant learn(x, s) gives (memo per scalar type).
 * With `pair`, `f(x, y)` for Arrays whose avals differ is the call of the function (a
 * cached jit) pair(x, y) gives (memo: the last pair of avals); docs/performance.md,
 * "Eager ops, fourth pass". Anything else, and any failed execution, calls `fallback`
 * with the same arguments, so results and errors are the Python path's. Only the CPython
 * C API is used (runtime/_mjax_fast.h: what it shares with _fastpath.c); the package
 * works without this module.
 */
#include "_mjax_fast.h"   /* array_type, Array's slots, new_array, quiet_state */

static PyObject *config_obj = NULL, *trace_state = NULL, *cache = NULL, *validate = NULL;
static PyObject *ok_key = NULL, *bad_key = NULL;   /* the last epochs validate() judged */
static PyObject *plain_types = NULL;   /* param value types hashable() keeps as they are */
static PyObject *numpy_scalars = NULL;   /* NumPy scalar types (np.float32, ...) */
static unsigned long generation = 0;   /* bumped by invalidate() (eager.clear_cache) */
static PyObject *s_trace_key, *s_overriding, *s_stack, *s_consume, *s_pair, *empty_tuple;

/* By set_entry(): eager.EagerEntry (set once per op) and its named fields' offsets. */
static PyTypeObject *entry_type = NULL;
static Py_ssize_t e_off[3] = {-1, -1, -1};   /* out_avals (a list), run, handlers */
#define E_AVALS(e) SLOT(e, e_off[0])
#define E_RUN(e) SLOT(e, e_off[1])
#define E_HANDLERS(e) SLOT(e, e_off[2])
static inline int runnable_entry(PyObject *e) {   /* (a direct call, list avals) */
    return e != NULL && Py_TYPE(e) == entry_type && E_RUN(e) != NULL && E_RUN(e) != Py_None
           && E_HANDLERS(e) != NULL && E_AVALS(e) != NULL && PyList_CheckExact(E_AVALS(e));
}

#define MAXARGS 8

static PyObject *setup(PyObject *mod, PyObject *args) {
    PyObject *atype, *vtype, *cfg, *ts, *c, *val;
    if (!PyArg_ParseTuple(args, "O!O!OOO!O", &PyType_Type, &atype, &PyType_Type, &vtype,
                          &cfg, &ts, &PyDict_Type, &c, &val))
        return NULL;
    if (aval_slots_setup((PyTypeObject *)vtype, "_eagerpath") < 0 ||
            array_slots_setup((PyTypeObject *)atype, "_eagerpath") < 0)
        return NULL;
    Py_INCREF(cfg); Py_XSETREF(config_obj, cfg);
    Py_INCREF(ts); Py_XSETREF(trace_state, ts);
    Py_INCREF(c); Py_XSETREF(cache, c);
    Py_INCREF(val); Py_XSETREF(validate, val);
    Py_CLEAR(ok_key); Py_CLEAR(bad_key);
    generation++;
    Py_RETURN_NONE;
}

static PyObject *set_entry(PyObject *mod, PyObject *args) {
    static const char *const names[3] = {"out_avals", "run", "handlers"};
    generation++;   /* (memos made with another entry class) */
    if (entry_setup(args, &entry_type, names, e_off, 3, "_eagerpath") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *set_plain_types(PyObject *mod, PyObject *types) {
    if (!PyFrozenSet_CheckExact(types)) {
        PyErr_SetString(PyExc_TypeError, "set_plain_types: a frozenset of types");
        return NULL;
    }
    Py_INCREF(types);
    Py_XSETREF(plain_types, types);
    Py_RETURN_NONE;
}

static PyObject *set_numpy_scalars(PyObject *mod, PyObject *types) {
    if (!PyFrozenSet_CheckExact(types)) {
        PyErr_SetString(PyExc_TypeError, "set_numpy_scalars: a frozenset of types");
        return NULL;
    }
    Py_INCREF(types);
    Py_XSETREF(numpy_scalars, types);
    Py_RETURN_NONE;
}

static PyObject *invalidate(PyObject *mod, PyObject *unused) {
    generation++;
    Py_CLEAR(ok_key); Py_CLEAR(bad_key);
    Py_RETURN_NONE;
}

typedef struct {
    PyObject_HEAD
    PyObject *fallback;   /* the Python function this stands for */
    PyObject *opcls;      /* the op; NULL: the first argument is the op (bind) */
    PyObject *keep;       /* frozenset of dtypes, or NULL (no aval condition) */
    PyObject *memo;       /* opcls -> (epoch, generation, entry, aval, ...); scalar type ->
                             scalar_call's memo */
    PyObject *learn;      /* (x, scalar) -> the scalar's constant or None, or NULL */
    int reflected;        /* f(x, s) is bind(opcls, constant, x) (x.__radd__(s) = s + x) */
    int numpy;            /* learn also takes NumPy scalars (set_numpy_scalars' types) */
    PyObject *pair;       /* (x, y) -> the function the call is, or None; or NULL */
    PyObject *fused;      /* (*arrays, **plain) -> the jit the call is, or None; or NULL */
    PyObject *needs_values;   /* the errors after which that jit never takes the call */
    Py_ssize_t hits;      /* calls the C path completed (for tests) */
    PyObject *dict;       /* __dict__: __name__, __doc__, ... (functools.update_wrapper) */
    vectorcallfunc vectorcall;
} EagerOp;

/* The config epoch if eager ops may run here without Python (a new reference), else NULL
 * (no error set). */
static PyObject *fast_epoch(void) {
    if (!quiet_state(config_obj, trace_state, s_stack, s_overriding))
        return NULL;
    PyObject *key = PyObject_GetAttr(config_obj, s_trace_key);
    if (key == NULL || key == ok_key)
        return key;
    int bad = key == bad_key && key != Py_None;
    Py_DECREF(key);
    if (bad)
        return NULL;
    /* A new epoch: validate() -> (epoch, ok), the epoch being config.trace_state(). */
    PyObject *r = PyObject_CallNoArgs(validate);
    if (r == NULL || !PyTuple_CheckExact(r) || PyTuple_GET_SIZE(r) != 2) {
        Py_XDECREF(r);
        return NULL;
    }
    PyObject *epoch = PyTuple_GET_ITEM(r, 0);
    int ok = PyObject_IsTrue(PyTuple_GET_ITEM(r, 1)) == 1;
    Py_INCREF(epoch);
    if (ok) Py_XSETREF(ok_key, epoch); else Py_XSETREF(bad_key, epoch);
    Py_DECREF(r);
    key = PyObject_GetAttr(config_obj, s_trace_key);
    if (key != NULL && key != ok_key)
        Py_CLEAR(key);
    return key;
}

/* The EagerEntry (runnable_entry's) for opcls on avals: the memo, else the cache (new
 * reference), or NULL. */
static PyObject *find_entry(EagerOp *self, PyObject *opcls, PyObject *epoch,
                            PyObject **avals, Py_ssize_t n) {
    PyObject *m = PyDict_GetItemWithError(self->memo, opcls);   /* borrowed */
    if (m != NULL && PyTuple_GET_SIZE(m) == n + 3 && PyTuple_GET_ITEM(m, 0) == epoch &&
            PyLong_AsUnsignedLong(PyTuple_GET_ITEM(m, 1)) == generation) {
        Py_ssize_t i = 0;
        while (i < n && PyTuple_GET_ITEM(m, 3 + i) == avals[i])
            i++;
        if (i == n) {
            Py_INCREF(PyTuple_GET_ITEM(m, 2));
            return PyTuple_GET_ITEM(m, 2);
        }
    }
    if (PyErr_Occurred())
        return NULL;
    PyObject *key = PyTuple_New(3 + n);
    if (key == NULL)
        return NULL;
    Py_INCREF(opcls); PyTuple_SET_ITEM(key, 0, opcls);
    Py_INCREF(empty_tuple); PyTuple_SET_ITEM(key, 1, empty_tuple);
    Py_INCREF(Py_None); PyTuple_SET_ITEM(key, 2, Py_None);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(avals[i]);
        PyTuple_SET_ITEM(key, 3 + i, avals[i]);
    }
    PyObject *entry = PyDict_GetItemWithError(cache, key);   /* borrowed */
    Py_DECREF(key);
    if (!runnable_entry(entry))
        return NULL;
    Py_INCREF(entry);
    PyObject *gen = PyLong_FromUnsignedLong(generation);
    PyObject *nm = gen == NULL ? NULL : PyTuple_New(3 + n);
    if (nm == NULL) {
        Py_XDECREF(gen);
        return entry;   /* (no memo this time) */
    }
    Py_INCREF(epoch); PyTuple_SET_ITEM(nm, 0, epoch);
    PyTuple_SET_ITEM(nm, 1, gen);
    Py_INCREF(entry); PyTuple_SET_ITEM(nm, 2, entry);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(avals[i]);
        PyTuple_SET_ITEM(nm, 3 + i, avals[i]);
    }
    if (PyDict_SetItem(self->memo, opcls, nm) < 0)
        PyErr_Clear();
    Py_DECREF(nm);
    return entry;
}

/* Runs entry's program on the operands' buffers; its outputs as bind returns them (one
 * Array, or a list), new reference; NULL: the fallback takes the call (an error may be set:
 * the caller clears it). */
static PyObject *run_entry(EagerOp *self, PyObject *entry, PyObject *const *ops,
                           Py_ssize_t n) {
    PyObject *bufs = PyList_New(n), *results = NULL, *outs = NULL, *ret = NULL;
    if (bufs == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = SLOT(ops[i], off_buf);   /* (read again: Python ran since the check) */
        if (b == NULL) {
            Py_DECREF(bufs);
            return NULL;
        }
        Py_INCREF(b);
        PyList_SET_ITEM(bufs, i, b);
    }
    results = PyObject_CallOneArg(E_RUN(entry), bufs);
    if (results == NULL)
        goto done;   /* (the fallback runs it again and explains the error) */
    outs = PyObject_CallMethodOneArg(results, s_consume, E_HANDLERS(entry));
    PyObject *out_avals = E_AVALS(entry);
    if (outs == NULL || !PyList_CheckExact(outs) ||
            PyList_GET_SIZE(outs) != PyList_GET_SIZE(out_avals))
        goto done;
    Py_ssize_t no = PyList_GET_SIZE(outs);
    PyObject *wrapped = no == 1 ? NULL : PyList_New(no);
    if (no != 1 && wrapped == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < no; i++) {
        PyObject *o = new_array(PyList_GET_ITEM(outs, i), PyList_GET_ITEM(out_avals, i));
        if (o == NULL) {
            Py_XDECREF(wrapped);
            goto done;
        }
        if (no == 1)
            ret = o;
        else
            PyList_SET_ITEM(wrapped, i, o);
    }
    if (no != 1)
        ret = wrapped;
done:
    /* (a failure after the execution cannot happen short of memory errors; the
     * fallback would then run the op once more, which has no other effect) */
    Py_XDECREF(bufs); Py_XDECREF(results); Py_XDECREF(outs);
    return ret;
}

/* An operand the C path takes: an Array on its own device whose aval (returned,
 * borrowed) is, with `keep`, not weak and of a dtype in keep. */
static PyObject *operand_aval(EagerOp *self, PyObject *x, int check_keep) {
    if (!plain_array(x))
        return NULL;
    PyObject *av = SLOT(x, off_aval);
    if (av == NULL || !check_keep)
        return av;
    if (Py_TYPE(av) != aval_type || SLOT(av, off_weak) != Py_False ||
            SLOT(av, off_dtype) == NULL || PySet_Contains(self->keep, SLOT(av, off_dtype)) != 1)
        return NULL;
    return av;
}

/* Whether scalars a and b are the same key: one type, and equal ints, floats with the same
 * bits (-0.0 is not 0.0), or NumPy scalars with the same bytes. */
static int same_scalar(PyObject *a, PyObject *b) {
    if (Py_TYPE(a) != Py_TYPE(b))
        return 0;
    if (PyFloat_CheckExact(a)) {
        double x = PyFloat_AS_DOUBLE(a), y = PyFloat_AS_DOUBLE(b);
        return memcmp(&x, &y, sizeof x) == 0;
    }
    if (PyLong_CheckExact(a))
        return PyObject_RichCompareBool(a, b, Py_EQ) == 1;
    /* A NumPy scalar: its value's bytes (NaN payloads and signs of zero count). */
    Py_buffer va, vb;
    if (PyObject_GetBuffer(a, &va, PyBUF_SIMPLE) < 0)
        return 0;
    if (PyObject_GetBuffer(b, &vb, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&va);
        return 0;
    }
    int same = va.len == vb.len && memcmp(va.buf, vb.buf, (size_t)va.len) == 0;
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return same;
}

/* A scalar operand scalar_call takes: an exact Python int or float, or (self->numpy) a
 * NumPy scalar of set_numpy_scalars' types. */
static int takes_scalar(EagerOp *self, PyObject *s) {
    if (PyFloat_CheckExact(s) || PyLong_CheckExact(s))
        return 1;
    return self->numpy && numpy_scalars != NULL &&
           PySet_Contains(numpy_scalars, (PyObject *)Py_TYPE(s)) == 1;
}

/* `array <op> Python scalar`: the op on the array and the scalar's constant, which
 * learn(x, s) gives (promotion's cached constant, of x's aval) where the Python path
 * is exactly bind(opcls, x, constant). Memo per scalar type: (epoch, generation, aval,
 * scalar, constant, entry). */
static PyObject *scalar_call(EagerOp *self, PyObject *x, PyObject *s) {
    PyObject *av = operand_aval(self, x, 1);
    if (av == NULL)
        return NULL;
    PyObject *epoch = fast_epoch();
    if (epoch == NULL)
        return NULL;
    PyObject *key = (PyObject *)Py_TYPE(s), *m = PyDict_GetItemWithError(self->memo, key);
    PyObject *c = NULL, *entry = NULL, *ret = NULL;
    if (m != NULL && PyTuple_GET_ITEM(m, 0) == epoch && PyTuple_GET_ITEM(m, 2) == av &&
            PyLong_AsUnsignedLong(PyTuple_GET_ITEM(m, 1)) == generation &&
            same_scalar(PyTuple_GET_ITEM(m, 3), s)) {
        c = PyTuple_GET_ITEM(m, 4);
        entry = PyTuple_GET_ITEM(m, 5);
        Py_INCREF(c);
        Py_INCREF(entry);
    } else {
        PyErr_Clear();
        c = PyObject_CallFunctionObjArgs(self->learn, x, s, NULL);
        if (c == NULL || operand_aval(self, c, 0) == NULL ||
                PyObject_RichCompareBool(SLOT(c, off_aval), av, Py_EQ) != 1)
            goto done;
        PyObject *ka = PyTuple_Pack(5, self->opcls, empty_tuple, Py_None, av,
                                    SLOT(c, off_aval));
        if (ka == NULL)
            goto done;
        entry = PyDict_GetItemWithError(cache, ka);
        Py_DECREF(ka);
        if (!runnable_entry(entry)) {
            entry = NULL;
            goto done;
        }
        Py_INCREF(entry);
        PyObject *gen = PyLong_FromUnsignedLong(generation);
        PyObject *nm = gen == NULL ? NULL : PyTuple_Pack(6, epoch, gen, av, s, c, entry);
        Py_XDECREF(gen);
        if (nm == NULL || PyDict_SetItem(self->memo, key, nm) < 0)
            PyErr_Clear();
        Py_XDECREF(nm);
    }
    PyObject *ops[2] = {x, c};
    if (self->reflected) {
        ops[0] = c;
        ops[1] = x;
    }
    ret = run_entry(self, entry, ops, 2);
    self->hits += ret != NULL;
done:
    PyErr_Clear();
    Py_DECREF(epoch); Py_XDECREF(c); Py_XDECREF(entry);
    return ret;
}

static int same_aval(PyObject *a, PyObject *b) {
    return avals_equal(a, b) == 1;
}

/* `x <op> y` on Arrays whose avals are not one aval of `keep` (int32 + float32, x * weak):
 * pair(x, y) gives the function (a cached jit: the Python path's promotion and the op as
 * one program) the call is, or None. Memo (the last pair of avals): (epoch, generation,
 * aval x, aval y, function or None: the Python path). */
static PyObject *pair_call(EagerOp *self, PyObject *x, PyObject *y) {
    if (!plain_array(x) || !plain_array(y))
        return NULL;
    PyObject *ax = SLOT(x, off_aval), *ay = SLOT(y, off_aval);
    PyObject *epoch = fast_epoch();
    if (epoch == NULL)
        return NULL;
    /* (the memo is held before the avals' __eq__, Python code after which another thread
     * or a finalizer may have replaced it) */
    PyObject *m = PyDict_GetItemWithError(self->memo, s_pair), *ret = NULL, *plan = NULL;
    Py_XINCREF(m);
    if (m != NULL && PyTuple_GET_ITEM(m, 0) == epoch &&
            PyLong_AsUnsignedLong(PyTuple_GET_ITEM(m, 1)) == generation &&
            same_aval(PyTuple_GET_ITEM(m, 2), ax) && same_aval(PyTuple_GET_ITEM(m, 3), ay)) {
        plan = m;
    } else {
        Py_XDECREF(m);
        PyErr_Clear();
        PyObject *fn = PyObject_CallFunctionObjArgs(self->pair, x, y, NULL);
        if (fn == NULL)
            goto done;
        PyObject *gen = PyLong_FromUnsignedLong(generation);
        plan = gen == NULL ? NULL : PyTuple_Pack(5, epoch, gen, ax, ay, fn);
        Py_XDECREF(gen);
        Py_DECREF(fn);
        if (plan == NULL || PyDict_SetItem(self->memo, s_pair, plan) < 0)
            goto done;
    }
    PyObject *fn = PyTuple_GET_ITEM(plan, 4);
    if (fn == Py_None)   /* (a pair the Python path takes) */
        goto done;
    PyObject *ops[2] = {x, y};
    ret = PyObject_Vectorcall(fn, ops, 2, NULL);
    if (ret != NULL && Py_TYPE(ret) != array_type)
        Py_CLEAR(ret);
    self->hits += ret != NULL;
done:
    PyErr_Clear();
    Py_DECREF(epoch); Py_XDECREF(plan);
    return ret;
}

#define FUSED_MEMO_MAX 256

/* A fused_when_eager function's call on Arrays with keyword arguments that are exact ints,
 * bools, None or strings: the jit fused(*args, **kwargs) gives (what its Python `call`
 * runs), called with the Arrays. Memo: (number of arrays, keyword names, then each value's
 * type and value) -> the jit, or None after one of needs_values (the Python path). */
static PyObject *fused_call(EagerOp *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs < 1 || nargs > MAXARGS)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (!plain_array(args[i]))
            return NULL;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *v = args[nargs + i];
        if (!PyLong_CheckExact(v) && !PyBool_Check(v) && v != Py_None &&
                !PyUnicode_CheckExact(v))
            return NULL;
    }
    PyObject *epoch = fast_epoch();
    if (epoch == NULL)
        return NULL;
    Py_DECREF(epoch);   /* (only its validity matters: each jit keys on the config) */
    PyObject *key = PyTuple_New(2 + 2 * nk), *fn = NULL, *ret = NULL;
    if (key == NULL)
        goto done;
    PyTuple_SET_ITEM(key, 0, PyLong_FromSsize_t(nargs));
    Py_INCREF(kwnames != NULL ? kwnames : empty_tuple);
    PyTuple_SET_ITEM(key, 1, kwnames != NULL ? kwnames : empty_tuple);
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *v = args[nargs + i];
        Py_INCREF(Py_TYPE(v)); PyTuple_SET_ITEM(key, 2 + 2 * i, (PyObject *)Py_TYPE(v));
        Py_INCREF(v); PyTuple_SET_ITEM(key, 3 + 2 * i, v);
    }
    if (PyTuple_GET_ITEM(key, 0) == NULL)
        goto done;
    fn = PyDict_GetItemWithError(self->memo, key);
    if (fn != NULL) {
        Py_INCREF(fn);
    } else {
        if (PyErr_Occurred())
            goto done;
        fn = PyObject_Vectorcall(self->fused, args, nargs, kwnames);
        if (fn == NULL || fn == Py_None)   /* (None: not compiled yet, ask next time) */
            goto done;
        if (PyDict_GET_SIZE(self->memo) >= FUSED_MEMO_MAX)
            PyDict_Clear(self->memo);
        if (PyDict_SetItem(self->memo, key, fn) < 0)
            goto done;
    }
    if (fn == Py_None)
        goto done;
    ret = PyObject_Vectorcall(fn, args, nargs, NULL);
    if (ret == NULL && self->needs_values != NULL &&
            PyErr_ExceptionMatches(self->needs_values) &&
            PyDict_SetItem(self->memo, key, Py_None) < 0)
        PyErr_Clear();
    self->hits += ret != NULL;
done:
    PyErr_Clear();
    Py_XDECREF(key); Py_XDECREF(fn);
    return ret;
}

static int is_plain(PyObject *v) {
    return PySet_Contains(plain_types, (PyObject *)Py_TYPE(v)) == 1;
}

/* eager.hashable(params) for keyword values that are plain, or tuples of plain values
 * (which it keeps as they are): ((name, value), ...) sorted by name; NULL otherwise. */
static PyObject *params_key(PyObject *kwnames, PyObject *const *values) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    if (plain_types == NULL)
        return NULL;
    PyObject *items = PyList_New(nk);
    if (items == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *v = values[i];
        if (PyTuple_CheckExact(v)) {
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(v); j++)
                if (!is_plain(PyTuple_GET_ITEM(v, j)))
                    goto fail;
        } else if (!is_plain(v)) {
            goto fail;
        }
        PyObject *pair = PyTuple_Pack(2, PyTuple_GET_ITEM(kwnames, i), v);
        if (pair == NULL)
            goto fail;
        PyList_SET_ITEM(items, i, pair);
    }
    /* (names differ: sorting compares names only, as sorted() in hashable) */
    if (PyList_Sort(items) < 0)
        goto fail;
    PyObject *key = PyList_AsTuple(items);
    Py_DECREF(items);
    return key;
fail:
    Py_DECREF(items);
    return NULL;
}

/* bind(opcls, *operands, **params) with plain params: the cache lookup (no memo). */
static PyObject *params_call(EagerOp *self, PyObject *opcls, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nk; i++)   /* (bind's own keyword: the Python path) */
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "_weak_type") == 0)
            return NULL;
    if (nargs < 1 || nargs > MAXARGS)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (operand_aval(self, args[i], 0) == NULL)
            return NULL;
    PyObject *epoch = fast_epoch();
    if (epoch == NULL)
        return NULL;
    Py_DECREF(epoch);   /* (only its validity matters: no memo here) */
    PyObject *pk = params_key(kwnames, args + nargs), *ret = NULL;
    if (pk == NULL)
        return NULL;
    PyObject *key = PyTuple_New(3 + nargs);
    if (key == NULL) {
        Py_DECREF(pk);
        return NULL;
    }
    Py_INCREF(opcls); PyTuple_SET_ITEM(key, 0, opcls);
    PyTuple_SET_ITEM(key, 1, pk);
    Py_INCREF(Py_None); PyTuple_SET_ITEM(key, 2, Py_None);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *av = SLOT(args[i], off_aval);   /* (read again: Python ran since) */
        if (av == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        Py_INCREF(av);
        PyTuple_SET_ITEM(key, 3 + i, av);
    }
    PyObject *entry = PyDict_GetItemWithError(cache, key);
    Py_DECREF(key);
    if (runnable_entry(entry)) {
        Py_INCREF(entry);
        ret = run_entry(self, entry, args, nargs);
        self->hits += ret != NULL;
        Py_DECREF(entry);
    }
    PyErr_Clear();
    return ret;
}

/* The op's outputs as bind returns them, new reference; NULL with no error set: the
 * fallback takes the call. */
static PyObject *fast_call(EagerOp *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
    PyObject *opcls = self->opcls;
    if (self->fused != NULL)
        return fused_call(self, args, nargs, kwnames);
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        if (opcls != NULL || nargs < 2)
            return NULL;
        return params_call(self, args[0], args + 1, nargs - 1, kwnames);
    }
    if (opcls == NULL) {
        if (nargs < 2)
            return NULL;
        opcls = args[0];
        args++; nargs--;
    } else if (self->learn != NULL && nargs == 2 && takes_scalar(self, args[1])) {
        return scalar_call(self, args[0], args[1]);
    } else if (self->reflected) {   /* (x.__rsub__(y) is y - x: the Python path) */
        return NULL;
    }
    if (nargs < 1 || nargs > MAXARGS)
        return NULL;
    PyObject *avals[MAXARGS];
    for (Py_ssize_t i = 0; i < nargs; i++)
        if ((avals[i] = operand_aval(self, args[i], i == 0 && self->keep != NULL)) == NULL)
            goto other_avals;
    /* With keep: one aval for all (checked once per aval object: the memo holds the
     * avals that passed). */
    for (Py_ssize_t i = 1; self->keep != NULL && i < nargs; i++)
        if (!same_aval(avals[i], avals[0]))
            goto other_avals;
    PyObject *epoch = fast_epoch();
    if (epoch == NULL)
        return NULL;
    PyObject *entry = find_entry(self, opcls, epoch, avals, nargs), *ret = NULL;
    if (entry != NULL)
        ret = run_entry(self, entry, args, nargs);
    self->hits += ret != NULL;
    PyErr_Clear();
    Py_DECREF(epoch); Py_XDECREF(entry);
    return ret;
other_avals:
    PyErr_Clear();
    return self->pair != NULL && nargs == 2 ? pair_call(self, args[0], args[1]) : NULL;
}

static PyObject *eagerop_vectorcall(PyObject *callable, PyObject *const *args,
                                    size_t nargsf, PyObject *kwnames) {
    EagerOp *self = (EagerOp *)callable;
    if (array_type != NULL) {
        PyObject *r = fast_call(self, args, PyVectorcall_NARGS(nargsf), kwnames);
        if (r != NULL)
            return r;
        PyErr_Clear();
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *eagerop_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *fallback, *opcls = Py_None, *keep = Py_None, *learn = Py_None;
    PyObject *pair = Py_None, *fused = Py_None, *needs_values = Py_None;
    int reflected = 0, numpy = 0;
    if (!PyArg_ParseTuple(args, "O|OOOppOOO:EagerOp", &fallback, &opcls, &keep, &learn,
                          &reflected, &numpy, &pair, &fused, &needs_values))
        return NULL;
    if (fused != Py_None && (opcls != Py_None || learn != Py_None || pair != Py_None)) {
        PyErr_SetString(PyExc_TypeError, "EagerOp: fused takes no op, learn or pair");
        return NULL;
    }
    if (pair != Py_None && (keep == Py_None || reflected)) {
        PyErr_SetString(PyExc_TypeError, "EagerOp: pair needs keep, and not reflected");
        return NULL;
    }
    if (learn != Py_None && keep == Py_None) {
        PyErr_SetString(PyExc_TypeError, "EagerOp: learn needs keep");
        return NULL;
    }
    if (keep != Py_None && !PyFrozenSet_CheckExact(keep)) {
        PyErr_SetString(PyExc_TypeError, "EagerOp: keep must be a frozenset or None");
        return NULL;
    }
    if (keep != Py_None && opcls == Py_None) {
        PyErr_SetString(PyExc_TypeError, "EagerOp: keep needs an op");
        return NULL;
    }
    EagerOp *self = (EagerOp *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->memo = PyDict_New();
    if (self->memo == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    Py_INCREF(fallback); self->fallback = fallback;
    if (opcls != Py_None) { Py_INCREF(opcls); self->opcls = opcls; }
    if (keep != Py_None) { Py_INCREF(keep); self->keep = keep; }
    if (learn != Py_None) { Py_INCREF(learn); self->learn = learn; }
    self->reflected = reflected;
    self->numpy = numpy && learn != Py_None;
    if (pair != Py_None) { Py_INCREF(pair); self->pair = pair; }
    if (fused != Py_None) { Py_INCREF(fused); self->fused = fused; }
    if (needs_values != Py_None) { Py_INCREF(needs_values); self->needs_values = needs_values; }
    self->vectorcall = eagerop_vectorcall;
    return (PyObject *)self;
}

static int eagerop_traverse(EagerOp *self, visitproc visit, void *arg) {
    Py_VISIT(self->fallback);
    Py_VISIT(self->opcls);
    Py_VISIT(self->keep);
    Py_VISIT(self->memo);
    Py_VISIT(self->learn);
    Py_VISIT(self->pair);
    Py_VISIT(self->fused);
    Py_VISIT(self->needs_values);
    Py_VISIT(self->dict);
    return 0;
}

static int eagerop_clear(EagerOp *self) {
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->opcls);
    Py_CLEAR(self->keep);
    Py_CLEAR(self->memo);
    Py_CLEAR(self->learn);
    Py_CLEAR(self->pair);
    Py_CLEAR(self->fused);
    Py_CLEAR(self->needs_values);
    Py_CLEAR(self->dict);
    return 0;
}

static void eagerop_dealloc(EagerOp *self) {
    PyObject_GC_UnTrack(self);
    eagerop_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *eagerop_repr(EagerOp *self) {
    return PyUnicode_FromFormat("<EagerOp of %R>", self->fallback);
}

/* Attributes the object lacks (__name__, __doc__, __qualname__, ...) are the fallback's. */
static PyObject *eagerop_getattro(PyObject *self, PyObject *name) {
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(((EagerOp *)self)->fallback, name);
}

static PyMemberDef eagerop_members[] = {
    {"fallback", T_OBJECT, offsetof(EagerOp, fallback), READONLY,
     "the Python function this calls when the C path does not take a call"},
    {"memo", T_OBJECT, offsetof(EagerOp, memo), READONLY,
     "the memo of recent cache hits (scalar constants included)"},
    {"hits", T_PYSSIZET, offsetof(EagerOp, hits), READONLY,
     "calls the C path completed"},
    {NULL}
};

static PyTypeObject EagerOpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mjax.runtime._eagerpath.EagerOp",
    .tp_basicsize = sizeof(EagerOp),
    .tp_dealloc = (destructor)eagerop_dealloc,
    .tp_vectorcall_offset = offsetof(EagerOp, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = eagerop_getattro,
    .tp_repr = (reprfunc)eagerop_repr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_dictoffset = offsetof(EagerOp, dict),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "An eager op (or bind) whose cache hit runs in C.",
    .tp_traverse = (traverseproc)eagerop_traverse,
    .tp_clear = (inquiry)eagerop_clear,
    .tp_members = eagerop_members,
    .tp_descr_get = method_get,
    .tp_new = eagerop_new,
};

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(Array, ShapedArray, config, trace_state, cache, validate)."},
    {"set_entry", set_entry, METH_VARARGS, "set_entry(EagerEntry): the entries' class."},
    {"set_plain_types", set_plain_types, METH_O,
     "The types of param values that eager.hashable leaves as they are."},
    {"set_numpy_scalars", set_numpy_scalars, METH_O,
     "The NumPy scalar types that EagerOps made with numpy=True take as scalar operands."},
    {"invalidate", invalidate, METH_NOARGS, "Forget every memo (the cache was cleared)."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_eagerpath", "Eager ops' cache hit in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__eagerpath(void) {
    if (PyType_Ready(&EagerOpType) < 0)
        return NULL;
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    INTERN(s_trace_key, "_trace_key");
    INTERN(s_overriding, "_overriding");
    INTERN(s_stack, "stack");
    INTERN(s_consume, "consume_with_handlers");
    INTERN(s_pair, "pair");
    if ((empty_tuple = PyTuple_New(0)) == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&EagerOpType);
    if (PyModule_AddObject(m, "EagerOp", (PyObject *)&EagerOpType) < 0) {
        Py_DECREF(&EagerOpType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
