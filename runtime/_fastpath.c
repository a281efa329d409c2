/* The cached `jit` call's fast path in C (frontend/jit/fast.py installs it; docs/performance.md,
 * "Cached `jit` dispatch, third pass").
 *
 * `JitCall` replaces `Jitted.__call__`. A call like the memo's (`Jitted._memo`, a
 * jit_entry.CallMemo; `Jitted._kmemo`, a KeyedMemo, for keyword and static arguments), made with its config (under config context managers too) and no trace, whose
 * leaves are `mjax.Array`s on their own device, committed to the program's or laid out over
 * its mesh, NumPy arrays or Python scalars with the memo's avals, goes from its arguments to
 * jaxlib's `execute_sharded(bufs).consume_with_handlers(handlers)` and wraps the outputs in
 * `mjax.Array`s here (committed as the entry says: frontend/jit/entry.py, whose named
 * fields it reads through their slots, as the Python fast path reads them; the general
 * path runs programs through frontend/arrays/dispatch.py, the one execute path). Anything else,
 * and any error of the execution, goes to the Python `__call__` (the same checks, then the
 * general path), so results and errors are the same. An exact NumPy array leaf takes its
 * aval and its put (jaxlib's batched_device_put) from the dicts jit_fast's host_key and
 * host_buf keep, without running them, where it needs no conversion (set_numpy). Only the
 * CPython C API is used; the package works without this module.
 */
#include "_mjax_fast.h"   /* array_type, Array's slots, new_array */

/* Set once by setup(): the config object, the trace state. */
static PyObject *config_obj = NULL, *trace_state = NULL;
/* Set by set_host(): the Python functions giving a NumPy array's or Python scalar's aval
 * (jit_fast.host_key) and its device buffer for an entry and that aval
 * (jit_fast.host_buf). */
static PyObject *host_key_fn = NULL, *host_buf_fn = NULL;
/* Set by set_host(): runtime.xla.LAYOUTS_IN_USE, [whether some array of the process has had
 * a non-default layout]: then committed Arrays take the Python path (its relayout). */
static PyObject *layouts_in_use = NULL;
/* Set by set_host(): jit_fast.override_epoch, the epoch under config context managers. */
static PyObject *override_epoch_fn = NULL;
static PyObject *s_memo, *s_kmemo, *s_trace_key, *s_overriding, *s_stack,
    *s_flatten_up_to, *s_consume, *s_unflatten, *s_values, *s_x64, *s_shape, *s_dtype,
    *s_backend;
/* Set by set_numpy() (NULL: every host leaf goes to host_key_fn and host_buf_fn): NumPy's
 * ndarray type; jit_fast._HOST_AVALS ((shape, dtype, x64) -> aval) and _PUTTERS
 * ((backend, shape, dtype) -> put), the dicts host_key and host_buf fill; HostPut
 * (runtime/backend.py) and the offsets of its slots `call`, `args`; CacheEntry.executable's
 * offset; the dtypes whose arrays never go to an entry's `host_run` (runtime/host_call.py's
 * X64_DTYPES). */
static PyTypeObject *ndarray_type = NULL, *hostput_type = NULL;
static PyObject *host_avals = NULL, *host_putters = NULL, *x64_dtypes = NULL;
static Py_ssize_t off_hp_call = -1, off_hp_args = -1, off_executable = -1;
/* raw_ndarray's answer for the last dtype it asked x64_dtypes about (a dtype is hashed in
 * Python each time; the next call's is most often the same). */
static PyObject *last_dtype = NULL;
static int last_in = 0;
/* Set by set_entry(): jit_entry.CacheEntry and the offsets of the named fields (slots) the
 * fast path reads: `fast` (True: it may run the entry), `run`, `handlers`, `out_avals`,
 * `out_canonical` (None: one bare array), `out_tuple`, `const_bufs`, `commit`, `host_run`
 * (None, or the program called with NumPy arrays among its buffers: runtime/host_call.py). */
static PyTypeObject *entry_type = NULL;
/* Set by set_memos(): jit_entry.CallMemo and KeyedMemo, and their fields' offsets. */
static PyTypeObject *memo_type = NULL, *kmemo_type = NULL;
static Py_ssize_t off_m_epoch = -1, off_m_tree = -1, off_m_avals = -1, off_m_entry = -1;
static Py_ssize_t off_k[8];   /* KeyedMemo: epoch, nargs, names, static, static_values,
                               * dynamic, avals, entry */
static Py_ssize_t off_fast = -1, off_run = -1, off_handlers = -1, off_out_avals = -1,
                  off_out_canonical = -1, off_out_tuple = -1, off_consts = -1,
                  off_commit = -1, off_host_run = -1;

static PyObject *setup(PyObject *mod, PyObject *args) {
    PyObject *atype, *cfg, *ts, *vtype = NULL;
    if (!PyArg_ParseTuple(args, "O!OO|O!", &PyType_Type, &atype, &cfg, &ts, &PyType_Type,
                          &vtype))
        return NULL;
    if (array_slots_setup((PyTypeObject *)atype, "_fastpath") < 0 ||
            (vtype != NULL && aval_slots_setup((PyTypeObject *)vtype, "_fastpath") < 0))
        return NULL;
    Py_INCREF(cfg); Py_XSETREF(config_obj, cfg);
    Py_INCREF(ts); Py_XSETREF(trace_state, ts);
    Py_RETURN_NONE;
}

static PyObject *set_host(PyObject *mod, PyObject *args) {
    PyObject *key, *buf, *layouts = NULL, *epoch = NULL;
    if (!PyArg_ParseTuple(args, "OO|O!O", &key, &buf, &PyList_Type, &layouts, &epoch))
        return NULL;
    Py_XINCREF(epoch); Py_XSETREF(override_epoch_fn, epoch);
    Py_INCREF(key); Py_XSETREF(host_key_fn, key);
    Py_INCREF(buf); Py_XSETREF(host_buf_fn, buf);
    Py_XINCREF(layouts); Py_XSETREF(layouts_in_use, layouts);
    Py_RETURN_NONE;
}

static PyObject *set_numpy(PyObject *mod, PyObject *args) {
    PyObject *nd, *avals = NULL, *puts = NULL, *hp = NULL, *x64 = NULL;
    if (!PyArg_ParseTuple(args, "O|O!O!O!O!", &nd, &PyDict_Type, &avals, &PyDict_Type, &puts,
                          &PyType_Type, &hp, &PyFrozenSet_Type, &x64))
        return NULL;
    if (nd == Py_None) {    /* (off: host_key and host_buf take every host leaf) */
        Py_CLEAR(ndarray_type);
        Py_RETURN_NONE;
    }
    if (!PyType_Check(nd) || hp == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "set_numpy(ndarray, host_avals, putters, HostPut) or set_numpy(None)");
        return NULL;
    }
    if (entry_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fastpath.set_entry() was not called");
        return NULL;
    }
    Py_ssize_t c = slot_offset((PyTypeObject *)hp, "call", "_fastpath"),
               a = slot_offset((PyTypeObject *)hp, "args", "_fastpath"),
               e = slot_offset(entry_type, "executable", "_fastpath");
    if (c < 0 || a < 0 || e < 0)
        return NULL;
    off_hp_call = c; off_hp_args = a; off_executable = e;
    Py_INCREF(hp); Py_XSETREF(hostput_type, (PyTypeObject *)hp);
    Py_INCREF(avals); Py_XSETREF(host_avals, avals);
    Py_INCREF(puts); Py_XSETREF(host_putters, puts);
    Py_XINCREF(x64); Py_XSETREF(x64_dtypes, x64);
    Py_CLEAR(last_dtype);
    Py_INCREF(nd); Py_XSETREF(ndarray_type, (PyTypeObject *)nd);
    Py_RETURN_NONE;
}

static PyObject *set_entry(PyObject *mod, PyObject *args) {
    static const char *const names[9] = {"fast", "run", "handlers", "out_avals",
                                         "out_canonical", "out_tuple", "const_bufs", "commit",
                                         "host_run"};
    Py_ssize_t o[9];
    if (entry_setup(args, &entry_type, names, o, 9, "_fastpath") < 0)
        return NULL;
    off_fast = o[0]; off_run = o[1]; off_handlers = o[2]; off_out_avals = o[3];
    off_out_canonical = o[4]; off_out_tuple = o[5]; off_consts = o[6]; off_commit = o[7];
    off_host_run = o[8];
    Py_RETURN_NONE;
}

static PyObject *set_memos(PyObject *mod, PyObject *args) {
    static const char *const mnames[4] = {"epoch", "tree", "avals", "entry"};
    static const char *const knames[8] = {"epoch", "nargs", "names", "static",
                                          "static_values", "dynamic", "avals", "entry"};
    PyObject *mt, *kt;
    Py_ssize_t o[4];
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &mt, &PyType_Type, &kt))
        return NULL;
    for (int i = 0; i < 4; i++)
        if ((o[i] = slot_offset((PyTypeObject *)mt, mnames[i], "_fastpath")) < 0)
            return NULL;
    for (int i = 0; i < 8; i++)
        if ((off_k[i] = slot_offset((PyTypeObject *)kt, knames[i], "_fastpath")) < 0)
            return NULL;
    off_m_epoch = o[0]; off_m_tree = o[1]; off_m_avals = o[2]; off_m_entry = o[3];
    Py_INCREF(mt); Py_XSETREF(memo_type, (PyTypeObject *)mt);
    Py_INCREF(kt); Py_XSETREF(kmemo_type, (PyTypeObject *)kt);
    Py_RETURN_NONE;
}

/* Make an Array, for tests: the C construction must equal Array(buf, aval). */
static PyObject *make_array(PyObject *mod, PyObject *args) {
    PyObject *buf, *aval;
    if (!PyArg_ParseTuple(args, "OO", &buf, &aval))
        return NULL;
    if (array_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fastpath.setup() was not called");
        return NULL;
    }
    return new_array(buf, aval);
}

/* Result `i`: new_array, committed to `commits[i]` (a sharding) as Array(buf, aval,
 * commits[i]) is, unless `commits` is NULL or that item is None. */
static PyObject *result_array(PyObject *buf, PyObject *aval, PyObject *commits, Py_ssize_t i) {
    PyObject *o = new_array(buf, aval);
    PyObject *commit = commits == NULL ? NULL : PyTuple_GET_ITEM(commits, i);
    if (o != NULL && commit != NULL && commit != Py_None) {
        Py_INCREF(commit);
        Py_SETREF(SLOT(o, off_sharding), commit);
        Py_INCREF(Py_True);
        SLOT(o, off_committed) = Py_True;
    }
    return o;
}

typedef struct {
    PyObject_HEAD
    PyObject *fallback;   /* the Python __call__(self, *args, **kwargs) */
    PyObject *on_error;   /* (self, args, leaves) -> result, after a failed execution */
    vectorcallfunc vectorcall;
} JitCall;

/* Whether `aval` (an Array's, NULL when unset) is `want`: 1, 0, or -1 with an error set. */
static int same_aval(PyObject *aval, PyObject *want) {
    return aval == NULL ? 0 : avals_equal(aval, want);
}

/* Whether the committed Array `x` (its `_sharding` is `s`) matches the memo's key `want`,
 * (aval, sharding) (jit_fast.host_key): 1, 0, or -1 with an error set. */
static int match_committed(PyObject *x, PyObject *s, PyObject *want) {
    if (!PyTuple_CheckExact(want) || PyTuple_GET_SIZE(want) != 2 || layouts_in_use == NULL ||
            PyList_GET_SIZE(layouts_in_use) != 1 ||
            PyList_GET_ITEM(layouts_in_use, 0) != Py_False)
        return 0;
    PyObject *ws = PyTuple_GET_ITEM(want, 1);
    if (s != ws) {
        int eq = PyObject_RichCompareBool(s, ws, Py_EQ);
        if (eq <= 0)
            return eq;
    }
    return same_aval(SLOT(x, off_aval), PyTuple_GET_ITEM(want, 0));
}

/* The aval of an exact ndarray `x` as jit_fast.host_key finds it in _HOST_AVALS, keyed by
 * (x.shape, x.dtype, config's jax_enable_x64), where no config context manager is active
 * (config._values holds the value host_key reads): a new reference, or NULL (no error set)
 * where host_key must say (not there yet; under a context manager; any error). */
static PyObject *numpy_aval(PyObject *x) {
    PyObject *t = PyObject_GetAttr(config_obj, s_overriding), *values = NULL, *shape = NULL,
             *dtype = NULL, *key = NULL, *aval = NULL;
    int quiet = t != NULL && PyList_CheckExact(t) && PyList_GET_SIZE(t) == 0;
    Py_XDECREF(t);
    if (!quiet)
        goto done;
    values = PyObject_GetAttr(config_obj, s_values);
    if (values == NULL || !PyDict_CheckExact(values))
        goto done;
    PyObject *x64 = PyDict_GetItemWithError(values, s_x64);
    if (x64 == NULL)
        goto done;
    Py_INCREF(x64);
    if ((shape = PyObject_GetAttr(x, s_shape)) != NULL &&
            (dtype = PyObject_GetAttr(x, s_dtype)) != NULL)
        key = PyTuple_Pack(3, shape, dtype, x64);
    Py_DECREF(x64);
    if (key == NULL)
        goto done;
    aval = PyDict_GetItemWithError(host_avals, key);     /* borrowed */
    Py_XINCREF(aval);
done:
    PyErr_Clear();
    Py_XDECREF(values); Py_XDECREF(shape); Py_XDECREF(dtype); Py_XDECREF(key);
    return aval;
}

/* The key of a host leaf `x` (jit_fast.host_key's answer, a new reference; NULL: an error). */
static PyObject *host_leaf_key(PyObject *x) {
    if (ndarray_type != NULL && Py_TYPE(x) == ndarray_type) {
        PyObject *k = numpy_aval(x);
        if (k != NULL)
            return k;
    }
    return PyObject_CallOneArg(host_key_fn, x);
}

/* 1: `x` is an exact ndarray whose dtype object is `aval`'s (np.asarray(x, dtype) is x,
 * nothing to convert); 0: not. */
static int exact_ndarray(PyObject *x, PyObject *aval) {
    if (ndarray_type == NULL || Py_TYPE(x) != ndarray_type || aval_type == NULL ||
            Py_TYPE(aval) != aval_type)
        return 0;
    PyObject *dtype = SLOT(aval, off_dtype), *xd = PyObject_GetAttr(x, s_dtype);
    Py_XDECREF(xd);     /* (compared by identity: held by x) */
    if (xd == NULL || dtype == NULL || xd != dtype) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* 1: `x` is an exact ndarray whose aval is `want` (a ShapedArray, not weakly typed, of
 * x's dtype object and shape); 0: not, or not known here; -1: an error (comparing the
 * shapes). */
static int numpy_of_aval(PyObject *x, PyObject *want) {
    if (!exact_ndarray(x, want) || SLOT(want, off_weak) != Py_False)
        return 0;
    PyObject *shape = PyObject_GetAttr(x, s_shape), *ws = SLOT(want, off_shape);
    if (shape == NULL || ws == NULL) {
        Py_XDECREF(shape);
        PyErr_Clear();
        return 0;
    }
    int eq = PyObject_RichCompareBool(shape, ws, Py_EQ);
    Py_DECREF(shape);
    return eq;
}

/* 1: `aval`'s dtype is not one of x64_dtypes (an exact ndarray of it is one `host_run`
 * may put itself); 0: it is, or not known. */
static int narrow_dtype(PyObject *aval) {
    PyObject *dtype = SLOT(aval, off_dtype);
    if (x64_dtypes == NULL || dtype == NULL)
        return 0;
    if (dtype != last_dtype) {
        int in = PySet_Contains(x64_dtypes, dtype);
        if (in < 0) {
            PyErr_Clear();
            return 0;
        }
        Py_INCREF(dtype);
        Py_XSETREF(last_dtype, dtype);
        last_in = in;
    }
    return !last_in;
}

/* 1: `x` is an exact ndarray of `aval` that `host_run` may put itself; 0: not. */
static int raw_ndarray(PyObject *x, PyObject *aval) {
    return exact_ndarray(x, aval) && narrow_dtype(aval);
}

/* The device buffer of an exact ndarray leaf `x` of `aval` for `entry` as jit_fast.host_buf
 * makes it where x.dtype is aval.dtype (np.asarray(x, dtype) is x): the put kept in
 * _PUTTERS for (entry.executable.backend, shape, dtype), called with x (a HostPut's
 * batched_device_put called here with its arguments; jaxlib's put checks the transfer
 * guard). A new reference; NULL with an error: the put failed; NULL without: host_buf
 * must make it (a conversion, another kind of leaf, no put kept yet, ...). A program that
 * donates arguments gets a fresh buffer either way: a put makes one each call. */
static PyObject *numpy_buf(PyObject *entry, PyObject *x, PyObject *aval) {
    if (Py_TYPE(entry) != entry_type || !exact_ndarray(x, aval))
        return NULL;
    PyObject *shape = SLOT(aval, off_shape), *dtype = SLOT(aval, off_dtype),
             *exe = SLOT(entry, off_executable);
    if (shape == NULL || exe == NULL)
        return NULL;
    PyObject *backend = PyObject_GetAttr(exe, s_backend), *key = NULL, *put = NULL;
    if (backend == NULL || backend == Py_None || PyObject_IsTrue(backend) != 1 ||
            (key = PyTuple_Pack(3, backend, shape, dtype)) == NULL ||
            (put = PyDict_GetItemWithError(host_putters, key)) == NULL) {
        PyErr_Clear();
        Py_XDECREF(backend); Py_XDECREF(key);
        return NULL;
    }
    Py_INCREF(put);
    Py_DECREF(backend); Py_DECREF(key);
    PyObject *r, *call = NULL, *pargs = NULL;
    if (Py_TYPE(put) == hostput_type) {
        call = SLOT(put, off_hp_call);
        pargs = SLOT(put, off_hp_args);
    }
    if (call != NULL && pargs != NULL && PyTuple_CheckExact(pargs) &&
            PyTuple_GET_SIZE(pargs) >= 3 && PyTuple_GET_SIZE(pargs) <= 12) {
        PyObject *stack[12], *xs = PyList_New(1);
        if (xs == NULL) {
            Py_DECREF(put);
            return NULL;
        }
        Py_INCREF(x);
        PyList_SET_ITEM(xs, 0, x);
        Py_ssize_t n = PyTuple_GET_SIZE(pargs);
        for (Py_ssize_t i = 0; i < n; i++)
            stack[i] = PyTuple_GET_ITEM(pargs, i);
        stack[2] = xs;
        Py_INCREF(call);
        Py_INCREF(pargs);   /* (its items are the call's arguments) */
        r = PyObject_Vectorcall(call, stack, n, NULL);
        Py_DECREF(pargs);
        Py_DECREF(call);
        Py_DECREF(xs);
    } else {
        r = PyObject_CallOneArg(put, x);
    }
    Py_DECREF(put);
    return r;
}

/* 1: the leaves match the memo's avals; 0: they do not; -1: an error is set. `*renew`:
 * some Array's aval is equal to the memo's but another object; `*keys`: some memo entry
 * is a host leaf's or committed Array's key, not an Array's own aval; `*plain_leaves`: bit i
 * set where leaf i (of the first 64) is an exact ndarray of its aval (numpy_of_aval). */
static int match_leaves(PyObject *const *items, Py_ssize_t n, PyObject *avals,
                        int *renew, int *keys, unsigned long long *plain_leaves) {
    if (!PyTuple_CheckExact(avals) || PyTuple_GET_SIZE(avals) != n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = items[i];
        if (Py_TYPE(x) != array_type) {
            /* A NumPy array of the memo's aval (same dtype object, same shape, the aval
             * not weakly typed): host_key would give an equal aval (the epoch is the
             * memo's, so x64 is as it was). */
            int plain = numpy_of_aval(x, PyTuple_GET_ITEM(avals, i));
            if (plain < 0)
                return -1;
            if (plain) {
                *keys = 1;
                if (i < 64)
                    *plain_leaves |= 1ULL << i;
                continue;
            }
            /* A NumPy array or Python scalar: its aval is one object per kind of leaf. */
            if (host_key_fn == NULL)
                return 0;
            PyObject *k = host_leaf_key(x);
            int same = k != NULL && k == PyTuple_GET_ITEM(avals, i);
            Py_XDECREF(k);
            if (!same)
                return 0;   /* (an error: the Python path raises it) */
            *keys = 1;
            continue;
        }
        PyObject *s = SLOT(x, off_sharding), *want = PyTuple_GET_ITEM(avals, i);
        if (s != Py_None && SLOT(x, off_committed) != Py_True) {
            /* (uncommitted, its `.sharding` read: jit_fast.host_key says what it is) */
            if (host_key_fn == NULL)
                return 0;
            PyObject *k = PyObject_CallOneArg(host_key_fn, x);
            int ok = k == NULL ? -1 : same_aval(k, want);
            Py_XDECREF(k);
            if (ok <= 0)
                return ok;
            *keys = 1;
            continue;
        }
        if (s != Py_None) {    /* (committed to one device, or laid out by a sharding) */
            int ok = match_committed(x, s, want);
            if (ok <= 0)
                return ok;
            *keys = 1;
            continue;
        }
        PyObject *aval = SLOT(x, off_aval);
        if (aval == want)
            continue;
        int eq = same_aval(aval, want);
        if (eq <= 0)
            return eq;
        *renew = 1;
    }
    return 1;
}

/* The positional arguments as a tuple and the keywords as a dict (new references). */
static int pack_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     PyObject **argt, PyObject **kwargs) {
    if ((*argt = PyTuple_New(nargs)) == NULL || (*kwargs = PyDict_New()) == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(*argt, i, args[i]);
    }
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nk; i++)
        if (PyDict_SetItem(*kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0)
            return -1;
    return 0;
}

/* The leaves of a keyword/static call like the last one (`Jitted._kmemo`, a KeyedMemo), as
 * a new list; NULL (no error) when the call is not like it. */
static PyObject *keyed_leaves(PyObject *jitted, PyObject *epoch, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames, PyObject **avals,
                              PyObject **entry) {
    PyObject *km = PyObject_GenericGetAttr(jitted, s_kmemo), *out = NULL;
    if (km == NULL || Py_TYPE(km) != kmemo_type)
        goto miss;
    for (int i = 0; i < 8; i++)
        if (SLOT(km, off_k[i]) == NULL)
            goto miss;
    if (SLOT(km, off_k[0]) != epoch || PyLong_AsSsize_t(SLOT(km, off_k[1])) != nargs)
        goto miss;
    PyObject *names = SLOT(km, off_k[2]);
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (!PyTuple_CheckExact(names) || PyTuple_GET_SIZE(names) != nk)
        goto miss;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *a = PyTuple_GET_ITEM(names, i), *b = PyTuple_GET_ITEM(kwnames, i);
        if (a != b && PyObject_RichCompareBool(a, b, Py_EQ) != 1)
            goto miss;
    }
    PyObject *sidx = SLOT(km, off_k[3]), *svals = SLOT(km, off_k[4]);
    PyObject *didx = SLOT(km, off_k[5]);
    if (!PyTuple_CheckExact(sidx) || !PyTuple_CheckExact(svals) || !PyTuple_CheckExact(didx)
            || PyTuple_GET_SIZE(sidx) != PyTuple_GET_SIZE(svals))
        goto miss;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sidx); i++) {
        Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(sidx, i));
        if (k < 0 || k >= nargs + nk)
            goto miss;
        PyObject *v = args[k], *want = PyTuple_GET_ITEM(svals, i);
        /* (as the cache's dict compares keys: identity, else ==) */
        if (v != want && (Py_TYPE(v) != Py_TYPE(want) ||
                          PyObject_RichCompareBool(v, want, Py_EQ) != 1))
            goto miss;
    }
    Py_ssize_t nd = PyTuple_GET_SIZE(didx);
    out = PyList_New(nd);
    if (out == NULL)
        goto miss;
    for (Py_ssize_t i = 0; i < nd; i++) {
        Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(didx, i));
        if (k < 0 || k >= nargs + nk)
            goto miss;
        Py_INCREF(args[k]);
        PyList_SET_ITEM(out, i, args[k]);
    }
    *avals = SLOT(km, off_k[6]);
    *entry = SLOT(km, off_k[7]);
    Py_INCREF(*avals);
    Py_INCREF(*entry);
    Py_DECREF(km);
    return out;
miss:
    PyErr_Clear();
    Py_XDECREF(km);
    Py_XDECREF(out);
    return NULL;
}

#define FAIL ((PyObject *)-1)

/* The epoch of this call (a new reference; NULL, perhaps with an error set, where the fast
 * path does not apply): with no trace active, `config._trace_key`, or while some context
 * manager is active jit_fast.override_epoch()'s (this thread's config.trace_state() object,
 * or one object per such state and mesh context). */
static PyObject *call_epoch(void) {
    PyObject *t = PyObject_GetAttr(trace_state, s_stack);
    int traced = t == NULL || !PyList_CheckExact(t) || PyList_GET_SIZE(t) != 0;
    Py_XDECREF(t);
    if (traced)
        return NULL;
    t = PyObject_GetAttr(config_obj, s_overriding);
    int overrides = t == NULL || !PyList_CheckExact(t) || PyList_GET_SIZE(t) != 0;
    Py_XDECREF(t);
    if (!overrides)
        return PyObject_GetAttr(config_obj, s_trace_key);
    return override_epoch_fn == NULL ? NULL : PyObject_CallNoArgs(override_epoch_fn);
}

static PyObject *fast_call(JitCall *self, PyObject *jitted, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames) {
    /* A new reference; NULL with no error set: take the Python path; FAIL: raise. */
    PyObject *memo = NULL, *tmp = NULL, *flat = NULL, *leaves_list = NULL, *bufs = NULL,
             *results = NULL, *outs = NULL, *ret = NULL, *argt = NULL, *kwargs = NULL,
             *avals = NULL, *entry = NULL, *run = NULL, *handlers = NULL, *out_avals = NULL,
             *commits = NULL, *out_tree = NULL, *consts = NULL, *host_run = NULL;
    int raw = 0;   /* some NumPy array is left for host_run to put */
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    memo = PyObject_GenericGetAttr(jitted, s_memo);
    if (memo == NULL || Py_TYPE(memo) != memo_type || SLOT(memo, off_m_epoch) == NULL ||
            SLOT(memo, off_m_tree) == NULL || SLOT(memo, off_m_avals) == NULL ||
            SLOT(memo, off_m_entry) == NULL)
        goto miss;
    tmp = call_epoch();
    if (tmp == NULL || tmp != SLOT(memo, off_m_epoch))
        goto miss;
    Py_CLEAR(tmp);
    PyObject *tree = SLOT(memo, off_m_tree);
    PyObject *const *leaves;
    Py_ssize_t n;
    int renew = 0, keys = 0;
    int keyed = nk > 0 || PyTuple_Check(tree);   /* (tree is not read after Python ran) */
    if (keyed) {   /* keyword or static arguments */
        leaves_list = keyed_leaves(jitted, SLOT(memo, off_m_epoch), args, nargs, kwnames,
                                   &avals, &entry);
        if (leaves_list == NULL)
            goto miss;
        leaves = &PyList_GET_ITEM(leaves_list, 0);
        n = PyList_GET_SIZE(leaves_list);
    } else if (tree == Py_None) {
        avals = SLOT(memo, off_m_avals);
        entry = SLOT(memo, off_m_entry);
        Py_INCREF(avals);   /* (held: execution may release the GIL) */
        Py_INCREF(entry);
        leaves = args; n = nargs;
    } else {
        avals = SLOT(memo, off_m_avals);
        entry = SLOT(memo, off_m_entry);
        Py_INCREF(avals);
        Py_INCREF(entry);
        Py_INCREF(tree);
        argt = PyTuple_New(nargs);
        if (argt == NULL) { Py_DECREF(tree); goto miss; }
        for (Py_ssize_t i = 0; i < nargs; i++) {
            Py_INCREF(args[i]);
            PyTuple_SET_ITEM(argt, i, args[i]);
        }
        /* The arguments' leaves where they have the memo's structure (node types, dict
         * keys, custom nodes' data), else an error: a treedef's flatten_up_to checks the
         * structure as it goes (cheaper than a flatten and a treedef comparison). A
         * subtree where the memo has a leaf comes back as one: match_leaves refuses it. */
        flat = PyObject_CallMethodOneArg(tree, s_flatten_up_to, argt);
        Py_DECREF(tree);
        if (flat == NULL || !PyList_CheckExact(flat))
            goto miss;
        leaves_list = flat;
        flat = NULL;
        leaves = &PyList_GET_ITEM(leaves_list, 0);
        n = PyList_GET_SIZE(leaves_list);
    }
    unsigned long long plain = 0;   /* (leaves that are exact ndarrays of their avals) */
    if (match_leaves(leaves, n, avals, &renew, &keys, &plain) != 1)
        goto miss;
    /* The entry's named fields (jit_entry.CacheEntry), held: execution may release the
     * GIL. `commits`: per result the sharding it is committed to, or None; NULL: none. */
    if (Py_TYPE(entry) != entry_type || SLOT(entry, off_fast) != Py_True)
        goto miss;
    run = SLOT(entry, off_run);
    handlers = SLOT(entry, off_handlers);
    out_avals = SLOT(entry, off_out_avals);
    out_tree = SLOT(entry, off_out_canonical);
    commits = SLOT(entry, off_commit);
    consts = SLOT(entry, off_consts);
    host_run = SLOT(entry, off_host_run);
    if (host_run == Py_None)
        host_run = NULL;
    Py_XINCREF(host_run);
    PyObject *out_tuple = SLOT(entry, off_out_tuple);
    if (run == NULL || run == Py_None || handlers == NULL || out_tree == NULL ||
            out_tuple == NULL || consts == NULL || out_avals == NULL ||
            !(PyTuple_CheckExact(out_avals) || PyList_CheckExact(out_avals)) ||
            commits == NULL) {
        run = handlers = out_avals = out_tree = commits = consts = NULL;
        goto miss;
    }
    if (commits == Py_None)
        commits = NULL;
    else if (!PyTuple_CheckExact(commits) ||
             PyTuple_GET_SIZE(commits) != PySequence_Fast_GET_SIZE(out_avals)) {
        run = handlers = out_avals = out_tree = commits = consts = NULL;
        goto miss;
    }
    /* 0: one bare array; 1: a flat tuple of arrays; 2: out_tree.unflatten */
    long kind = out_tree == Py_None ? 0 : out_tuple == Py_True ? 1 : 2;
    Py_INCREF(run); Py_INCREF(handlers); Py_INCREF(out_avals); Py_INCREF(out_tree);
    Py_XINCREF(commits); Py_INCREF(consts);
    if (renew && !keys && !keyed) {
        /* Equal avals, other objects: keep these, so the next call compares pointers. */
        PyObject *now = PyTuple_New(n);
        if (now == NULL)
            goto miss;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *a = SLOT(leaves[i], off_aval);
            Py_INCREF(a);
            PyTuple_SET_ITEM(now, i, a);
        }
        Py_SETREF(SLOT(memo, off_m_avals), now);
    }
    Py_ssize_t nc = PyList_CheckExact(consts) ? PyList_GET_SIZE(consts) : 0;
    bufs = PyList_New(n + nc);
    if (bufs == NULL)
        goto miss;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b;
        if (Py_TYPE(leaves[i]) == array_type) {
            b = SLOT(leaves[i], off_buf);
            if (b == NULL)
                goto miss;
            Py_INCREF(b);
        } else if (host_run != NULL && (i < 64 ? ((plain >> i) & 1) &&
                                                 narrow_dtype(PyTuple_GET_ITEM(avals, i))
                                               : raw_ndarray(leaves[i],
                                                             PyTuple_GET_ITEM(avals, i)))) {
            b = leaves[i];      /* (host_run puts it: runtime/host_call.py) */
            Py_INCREF(b);
            raw = 1;
        } else {   /* (put on the device: a transfer guard's refusal takes the Python path) */
            b = numpy_buf(entry, leaves[i], PyTuple_GET_ITEM(avals, i));
            if (b == NULL && !PyErr_Occurred())
                b = PyObject_CallFunctionObjArgs(host_buf_fn, entry, leaves[i],
                                                 PyTuple_GET_ITEM(avals, i), NULL);
            if (b == NULL)
                goto miss;
        }
        PyList_SET_ITEM(bufs, i, b);
    }
    for (Py_ssize_t i = 0; i < nc; i++) {
        PyObject *b = PyList_GET_ITEM(consts, i);
        Py_INCREF(b);
        PyList_SET_ITEM(bufs, n + i, b);
    }
    if (raw) {
        outs = PyObject_Vectorcall(host_run, &PyList_GET_ITEM(bufs, 0), n + nc, NULL);
    } else {
        results = PyObject_CallOneArg(run, bufs);
        if (results != NULL)
            outs = PyObject_CallMethodOneArg(results, s_consume, handlers);
        else
            outs = NULL;
    }
    if (outs == NULL && (raw || results == NULL)) {
        /* The Python side explains the error (or runs the call elsewhere). */
        PyErr_Clear();
        Py_CLEAR(argt);
        if (pack_args(args, nargs, kwnames, &argt, &kwargs) < 0)
            goto fail;
        PyObject *lv = leaves_list != NULL ? leaves_list : argt;
        ret = PyObject_CallFunctionObjArgs(self->on_error, jitted, argt, kwargs, lv, NULL);
        goto done;
    }
    if (outs == NULL || !(PyList_CheckExact(outs) || PyTuple_CheckExact(outs)))
        goto fail;      /* (a list from consume_with_handlers, a tuple from host_run) */
    Py_ssize_t no = PySequence_Fast_GET_SIZE(outs);
    if (PySequence_Fast_GET_SIZE(out_avals) != no) {
        PyErr_SetString(PyExc_RuntimeError, "_fastpath: outputs and avals differ in number");
        goto fail;
    }
    if (kind == 0) {
        if (no != 1) {
            PyErr_SetString(PyExc_RuntimeError, "_fastpath: one output expected");
            goto fail;
        }
        ret = result_array(PySequence_Fast_GET_ITEM(outs, 0), PySequence_Fast_GET_ITEM(out_avals, 0),
                           commits, 0);
        goto done;
    }
    PyObject *wrapped = kind == 1 ? PyTuple_New(no) : PyList_New(no);
    if (wrapped == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < no; i++) {
        PyObject *a = result_array(PySequence_Fast_GET_ITEM(outs, i),
                                   PySequence_Fast_GET_ITEM(out_avals, i), commits, i);
        if (a == NULL) { Py_DECREF(wrapped); goto fail; }
        if (kind == 1)
            PyTuple_SET_ITEM(wrapped, i, a);
        else
            PyList_SET_ITEM(wrapped, i, a);
    }
    if (kind == 1) {
        ret = wrapped;
    } else {
        ret = PyObject_CallMethodOneArg(out_tree, s_unflatten, wrapped);
        Py_DECREF(wrapped);
    }
    goto done;
miss:
    PyErr_Clear();
    ret = NULL;
    goto done;
fail:
    /* (an error is set: after the execution, it is the call's error) */
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "_fastpath: unexpected result");
    ret = FAIL;
done:
    Py_XDECREF(memo); Py_XDECREF(tmp); Py_XDECREF(flat); Py_XDECREF(leaves_list);
    Py_XDECREF(run); Py_XDECREF(handlers); Py_XDECREF(out_avals); Py_XDECREF(out_tree);
    Py_XDECREF(commits); Py_XDECREF(consts); Py_XDECREF(host_run); Py_XDECREF(bufs); Py_XDECREF(results); Py_XDECREF(outs);
    Py_XDECREF(argt); Py_XDECREF(kwargs); Py_XDECREF(avals); Py_XDECREF(entry);
    return ret;
}

static PyObject *jitcall_vectorcall(PyObject *callable, PyObject *const *args,
                                    size_t nargsf, PyObject *kwnames) {
    JitCall *self = (JitCall *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs >= 1 && array_type != NULL) {
        PyObject *r = fast_call(self, args[0], args + 1, nargs - 1, kwnames);
        if (r == FAIL)
            return NULL;
        if (r != NULL)
            return r;
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *jitcall_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *fallback, *on_error;
    if (!PyArg_ParseTuple(args, "OO:JitCall", &fallback, &on_error))
        return NULL;
    JitCall *self = (JitCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(fallback); self->fallback = fallback;
    Py_INCREF(on_error); self->on_error = on_error;
    self->vectorcall = jitcall_vectorcall;
    return (PyObject *)self;
}

static int jitcall_traverse(JitCall *self, visitproc visit, void *arg) {
    Py_VISIT(self->fallback);
    Py_VISIT(self->on_error);
    return 0;
}

static int jitcall_clear(JitCall *self) {
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->on_error);
    return 0;
}

static void jitcall_dealloc(JitCall *self) {
    PyObject_GC_UnTrack(self);
    jitcall_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef jitcall_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(JitCall, fallback), READONLY,
     "the Python __call__ this calls when the fast path does not apply"},
    {NULL}
};

static PyTypeObject JitCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mjax.runtime._fastpath.JitCall",
    .tp_basicsize = sizeof(JitCall),
    .tp_dealloc = (destructor)jitcall_dealloc,
    .tp_vectorcall_offset = offsetof(JitCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "Jitted.__call__ with the cached call's fast path in C.",
    .tp_traverse = (traverseproc)jitcall_traverse,
    .tp_clear = (inquiry)jitcall_clear,
    .tp_members = jitcall_members,
    .tp_descr_get = method_get,
    .tp_new = jitcall_new,
};

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(Array, config, trace_state): the objects the fast path reads."},
    {"set_memos", set_memos, METH_VARARGS,
     "set_memos(CallMemo, KeyedMemo): the memo classes whose named fields the fast path reads."},
    {"set_entry", set_entry, METH_VARARGS,
     "set_entry(CacheEntry): the cache entry class whose named fields the fast path reads."},
    {"make_array", make_array, METH_VARARGS, "Array(buf, aval) as the fast path builds it."},
    {"set_numpy", set_numpy, METH_VARARGS,
     "set_numpy(ndarray, host_avals, putters, HostPut) (after set_entry): exact NumPy array "
     "leaves take their avals and puts from those dicts here; set_numpy(None): host_key and "
     "host_buf take them."},
    {"set_host", set_host, METH_VARARGS,
     "set_host(host_key, host_buf[, layouts_in_use, override_epoch]): how NumPy array and "
     "Python scalar leaves are taken, when committed Arrays are, and the epoch under config "
     "context managers."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastpath", "The cached jit call's fast path in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__fastpath(void) {
    if (PyType_Ready(&JitCallType) < 0)
        return NULL;
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    INTERN(s_memo, "_memo");
    INTERN(s_kmemo, "_kmemo");
    INTERN(s_trace_key, "_trace_key");
    INTERN(s_overriding, "_overriding");
    INTERN(s_stack, "stack");
    INTERN(s_consume, "consume_with_handlers");
    INTERN(s_unflatten, "unflatten");
    INTERN(s_flatten_up_to, "flatten_up_to");
    INTERN(s_values, "_values");
    INTERN(s_x64, "jax_enable_x64");
    INTERN(s_shape, "shape");
    INTERN(s_dtype, "dtype");
    INTERN(s_backend, "backend");
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&JitCallType);
    if (PyModule_AddObject(m, "JitCall", (PyObject *)&JitCallType) < 0) {
        Py_DECREF(&JitCallType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
