"""`vmap`: trace the function once on one example and emit `jaxpr.vmap @f`; the
`--jaxpr-batch` pass (passes/batching.py) turns it into a batched copy of `@f`."""
from __future__ import annotations

import collections
import functools
import inspect
import threading
import types
import weakref

import numpy as np
from jaxlib.mlir import ir

from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.ad import concrete
from mjax.ad.staging import _check_callable, _jax_type, _wraps, stage_function, staged
from mjax.arrays.array import Array
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import _state, aval_of_value, current_trace, with_argument_sources
from mjax.dialect import ShapedArray, aval_of, context
from mjax.dialect.builder import static_avals
from mjax.dialect.types import RefAval
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.specs.dtypes import hitype_rules, is_inexact
from mjax.specs.sharding_impls import get_abstract_mesh
from mjax.tracing.hijax_lowering import check_vmap_hi
from mjax.passes.ir_util import callee_of, entry_block
from mjax.tracing.primitive import UndefinedPrimal
from mjax.tracing.staging import call_args, emit
from mjax.tracing.tracer import Tracer, arguments_reached, known_value
from mjax.tracing.source_info import user_location
from mjax.base.traceback_util import api_boundary
from mjax.vmap.vmap_val import BatchedBody


# ---- axis specifications ----------------------------------------------------------------
def _is_axis_leaf(x) -> bool:
    return x is None or isinstance(x, int)


def broadcast_prefix(name: str, prefix, tree) -> list:
    """One entry of the axis tree `prefix` per leaf of `tree` (a prefix of it, with None
    a leaf), as JAX's flatten_axes. ValueError names the first mismatch."""
    return tree_util.prefix_entries(name, prefix, tree, _is_axis_leaf)


def _in_axes_entries(in_axes, args, kwargs) -> list:
    """broadcast_prefix of vmap's in_axes (keyword arguments mapped over axis 0) over the
    arguments; for one axis for all (the common case, per call) without the walk."""
    if _is_axis_leaf(in_axes):
        return [in_axes] * len(tree_util.tree_leaves(args)) + \
            [0] * len(tree_util.tree_leaves(kwargs))
    return broadcast_prefix("vmap in_axes", (in_axes, 0), (args, kwargs))


def _check_axes_spec(in_axes, out_axes):
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    for what, axes in (("in_axes", in_axes), ("out_axes", out_axes)):
        leaves = trace_trees.tree_leaves(axes, is_leaf=lambda x: x is None)
        if not all(l is None or type(l) is int for l in leaves):
            raise TypeError(f"vmap {what} must be an int, None, or (nested) container with "
                            f"those types as leaves, but got {axes}.")


# ---- sizes --------------------------------------------------------------------------------
def _arg_names(fun, args, kwargs):
    """'argument x' / 'args[0]' labels of each leaf, for JAX's inconsistent-size error."""
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None
    labels = []
    for i, a in enumerate(args):
        paths = [p for p, _ in trace_trees.tree_leaves_with_path(a)]
        base = (f"argument {params[i]}" if params is not None and i < len(params)
                else f"args[{i}]")
        labels += [base + tree_util.keystr(p) for p in paths]
    for k, v in kwargs.items():
        paths = [p for p, _ in trace_trees.tree_leaves_with_path(v)]
        labels += [f"kwargs[{k!r}]" + tree_util.keystr(p) for p in paths]
    return labels


def _mapped_size(fun, args, kwargs, avals, axes, axis_size):
    sizes = [None if d is None else a.shape[d] for a, d in zip(avals, axes)]
    distinct = {s for s in sizes if s is not None}
    if axis_size is not None:
        distinct.add(axis_size)
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        if not avals:
            raise ValueError(f"vmap wrapped function must be passed at least one argument "
                             f"containing an array or axis_size must be specified, got empty "
                             f"*args={args} and **kwargs={kwargs}")
        raise ValueError("vmap must have at least one non-None value in in_axes or "
                         "axis_size must be specified")
    labels = _arg_names(fun, args, kwargs)
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    msg = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};\n")
    for k, (sz, ct) in enumerate(counts):
        i = sizes.index(sz)
        ty = str(avals[i]) if type(avals[i]) is RefAval else _jax_type(avals[i])
        ex = f"{labels[i]} of type {ty}"
        if ct == 1:
            msg.append(f"  * one axis had size {sz}: axis {axes[i]} of {ex};\n")
        elif k == 0:
            msg.append(f"  * most axes ({ct} of them) had size {sz}, e.g. axis {axes[i]} "
                       f"of {ex};\n")
        else:
            msg.append(f"  * some axes ({ct} of them) had size {sz}, e.g. axis {axes[i]} "
                       f"of {ex};\n")
    raise ValueError("".join(msg)[:-2])


def _canonical_in_axis(aval, axis):
    if axis is None:
        return None
    nd = len(aval.shape)
    if not -nd <= axis < nd:
        min_rank = axis + 1 if axis >= 0 else -axis
        raise ValueError(f"vmap was requested to map its argument along axis {axis}, which "
                         f"implies that its rank should be at least {min_rank}, but is only "
                         f"{nd} (its shape is {aval.shape})")
    return axis % nd


def _passes_through(x, tracing: bool) -> bool:
    """Whether an unmapped leaf reaches the function as it is, as JAX's vmap hands every
    in_axes=None argument through untraced: Python scalars (`if flag:` works on an
    unmapped bool, an int can be a jit's static argument) and NumPy values (a 0-d integer
    exponent makes `power` an `integer_pow` in the base's dtype; the function sees the
    int64 array itself, NumPy's operations on it stay NumPy's). In the trace a NumPy
    array is a captured value, rebound per call, so it does not make a program per value.
    Called eagerly, unmapped floats (Python's, NumPy float scalars and 0-d arrays: trace
    literals) stay traced, their values known to Python through mjax.ad.concrete, so that
    a loop over float values does not compile one program per value; but not where an
    output is unmapped (`tracing` then): JAX returns such an output as the function made
    it, a Python float computed from a float argument stays one. An unmapped Array
    passes through when it is a 0-d integer or bool (concrete as in JAX: `power`'s
    exponent); others stay traced, their values known to Python as the floats'."""
    if type(x) in (bool, int):
        return True
    if type(x) in (float, complex):
        return tracing
    if isinstance(x, (np.ndarray, np.generic)):
        return tracing or np.ndim(x) != 0 or not is_inexact(x.dtype)
    if type(x) is Array:
        return x.ndim == 0 and x.dtype.kind in "biu"
    return False


def _has_unmapped_output(out_axes) -> bool:
    return any(d is None for d in trace_trees.tree_leaves(out_axes, is_leaf=_is_axis_leaf))


class _AsReturned:
    """An unmapped output that is no traced value (a Python float, a NumPy array, an
    Array the function closed over), which vmap returns as the function returned it, as
    JAX does. (staged keeps Python objects out of its jit and puts them back.)"""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _unwrap_returned(out):
    if not any(isinstance(x, _AsReturned) for x in trace_trees.tree_leaves(out)):
        return out
    return trace_trees.tree_map(lambda x: x.value if isinstance(x, _AsReturned) else x, out)


def _aval_unless_static(x, axis, floats_static=False):
    """x's aval; None for a non-array leaf left unmapped, or one that passes through."""
    if axis is None:
        if _passes_through(x, floats_static or current_trace() is not None) or \
                isinstance(x, UndefinedPrimal):    # (a transpose rule's, as JAX passes it)
            return None
        try:
            return aval_of_value(x)
        except TypeError:
            return None
    return aval_of_value(x)


def _with_static_leaves(fun, tree, leaves, avals):
    """fun of the array leaves only, with the static leaves put back in their places."""
    static = {i: x for i, (x, a) in enumerate(zip(leaves, avals)) if a is None}

    def fun_of_arrays(*arrays):
        it = iter(arrays)
        full = [static[i] if i in static else next(it) for i in range(len(leaves))]
        args, kwargs = tree_util.tree_unflatten(tree, full)
        return fun(*args, **kwargs)
    return fun_of_arrays


def _showing_batched(fun, axes, size, body=None):
    """fun, its tracers printing as JAX's print them in a vmap body while it runs
    (Tracer.__repr__/__str__, Trace.shows): a value computed from a mapped argument as
    `VmapTracer(aval=float32[], batched=float32[3])`, one whose value JAX knows (from
    eager vmap's unmapped arguments) as that value; others as before (JitTracer).
    `body` (a vmap_val.BatchedBody) gives them JAX's `.val` and `.batch_dim`."""
    def shown(*arrays):
        trace = current_trace()
        mapped = {x.value: d for x, d in zip(arrays, axes)
                  if d is not None and isinstance(x, Tracer) and x.trace is trace}
        previous = trace.shows
        trace.shows = functools.partial(_vmap_shows, mapped, size, previous)
        trace.vmap_body = body
        try:
            return fun(*arrays)
        finally:
            trace.shows, trace.vmap_body = previous, None
    return shown


def _vmap_shows(mapped, size, previous, t):
    reached = arguments_reached(t.value)
    axis = next((d for v, d in mapped.items()
                 if ir.BlockArgument(v).arg_number in reached), None)
    if axis is not None:
        a = t.aval
        axis = min(axis, a.ndim)    # (JAX's rules move the batch axis; mjax's stays put)
        batched = a.update(shape=a.shape[:axis] + (size,) + a.shape[axis:])
        return f"VmapTracer(aval={a}, batched={batched})"
    value = known_value(t)
    if value is not None:
        return value
    return previous(t) if previous is not None else None


def _returned_arguments(traced, n_args) -> dict:
    """{output position: argument position} for the outputs of the traced function that
    are its arguments (among the first n_args: not captured values), directly or through
    calls of functions returning their own (a custom_jvp function `x -> x`, as JAX's
    vmap passes the tracer through such a call)."""
    block = traced.trace.block
    returned = list(block.operations[len(block.operations) - 1].operands)
    symbols = []    # (the module's symbol table, made only when a call is looked into)
    found = {}
    for j, v in enumerate(returned):
        k = _argument_forwarded(traced.module, symbols, v, depth=4)
        if k is not None and k < n_args:
            found[j] = k
    return found


def _argument_forwarded(module, symbols, v, depth):
    """The argument number `v` is (through calls), or None."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return ir.BlockArgument(v).arg_number
    op = owner.operation
    if depth == 0 or op.name not in _FORWARDING_CALLS:
        return None
    if not symbols:
        symbols.append(ir.SymbolTable(module.operation))
    body = entry_block(symbols[0][callee_of(op)])
    inner = _argument_forwarded(module, symbols, list(
        body.operations[len(body.operations) - 1].operands)[ir.OpResult(v).result_number],
        depth - 1)
    return None if inner is None else _argument_forwarded(module, symbols,
                                                          op.operands[inner], depth - 1)


# (calls whose results are their callee's: a forwarded argument stays itself)
_FORWARDING_CALLS = ("jaxpr.call", "jaxpr.custom_jvp_call", "jaxpr.custom_vjp_call")


def _unbatched_aval(aval, axis):
    if axis is None:
        return aval
    shape = aval.shape[:axis] + aval.shape[axis + 1:]
    return aval.update(shape=shape)


# ---- the API --------------------------------------------------------------------------------
def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorizing map: `fun` mapped over the axes `in_axes` of its arguments, results
    stacked along `out_axes`. JAX: jax.vmap."""
    _check_callable(fun)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)   # JAX treats a list like a tuple here
    params = (in_axes, out_axes, axis_name, axis_size)
    # (plain parameters only: a bool equals an int, and in_axes=True must still raise)
    run = _kept_runner(fun, params) if spmd_axis_name is None and \
        _plain_params(params) else None
    if run is None:
        _check_axes_spec(in_axes, out_axes)
        if axis_name is not None and not isinstance(axis_name, str):
            raise NotImplementedError(f"vmap(axis_name={axis_name!r}): only string axis "
                                      f"names are supported")
        run = _new_runner(fun, params)
    if spmd_axis_name is not None:
        run = _without_mesh(run, spmd_axis_name)
    # (a new function per vmap call, as JAX's: only the runner behind it is shared)
    wrapped = _wraps(fun)(api_boundary(
        lambda *args, **kwargs: _call_runner(run, fun, args, kwargs)))
    return wrapped


def _without_mesh(run, spmd_axis_name):
    """`run` for a vmap with spmd_axis_name: without a mesh the name changes nothing JAX
    computes (it only shards the batch axis over mesh axes), so mjax runs the plain vmap
    there; under a mesh, where JAX would shard, it refuses."""
    names = spmd_axis_name if isinstance(spmd_axis_name, tuple) else (spmd_axis_name,)

    def checked(*args, **kwargs):
        frozenset(names)     # (JAX's TypeError for an unhashable name, at the call)
        if not get_abstract_mesh().empty:
            raise NotImplementedError("vmap(spmd_axis_name=...) under a mesh: sharding "
                                      "the batch axis over mesh axes is not supported")
        return run(*args, **kwargs)
    return checked


def _call_runner(run, fun, args, kwargs):
    """A vmap wrapper's body. The wrapper passes `fun` so that it holds it (the runner
    holds it weakly, or not at all): it keeps its function alive, as JAX's does,
    whatever becomes of its __wrapped__; and a runner shared by the functions of one
    code object reads it from `_CALLING` while the call runs."""
    calling = _CALLING.funs
    calling.append(fun)
    try:
        return _unwrap_returned(run(*args, **kwargs))
    finally:
        calling.pop()


class _Calling(threading.local):
    """The functions whose vmap wrappers are running on this thread, innermost last."""

    def __init__(self):
        self.funs: list = []


_CALLING = _Calling()


def _calling_fun():
    """The function of the innermost vmap call running on this thread: a shared runner
    reads it before the function runs, so a vmap call inside it has returned (and popped
    its own) whenever the runner reads it again."""
    return _CALLING.funs[-1]


# ---- runners kept per function ----------------------------------------------------------
# `jax.vmap(f)(x)` in a loop makes a new wrapper each call; building its runner (the
# staged jit, ~30 us, and its first call's ~30 more) each time is most of what a cached
# program leaves to pay. So the runner of vmap(f, <axes>) is kept while f lives and
# shared by its wrappers. It keeps nothing of a call (every call traces f again: its
# Python runs each time, as JAX re-traces an eager vmap; programs are shared by text in
# mjax.ad.staging anyway), and holds f by a weak reference only, so a lambda made per
# call is not kept alive. A plain Python function's runner is kept for its code object
# instead and takes the function of each call from `_CALLING`: the closures one `lambda`
# or `def` makes (`vmap(lambda v: v * s)(x)` in a loop, a new function each time) share
# it, while their programs stay apart (different closed-over values trace to different
# programs, or to one program with the values as arguments).
# id(owner) -> (weakref to owner, {(in_axes, out_axes, axis_name, axis_size): runner}),
# the owner being f's code object or f itself (`_owner`)
_RUNNERS: dict = {}
_MAX_FUNCTIONS = 512      # (owners with kept runners; past it the table starts over)
_MAX_RUNNERS = 16         # (axis specifications kept per owner)


def _owner(fun):
    """What fun's runners are kept for: its code object for a plain Python function
    (not one of registration.PURE_OF_AVALS, whose runner is kept per function), else
    fun."""
    if type(fun) is types.FunctionType and \
            registration.PURE_OF_AVALS.get(id(fun)) is not fun:
        return fun.__code__
    return fun


def _plain_params(params) -> bool:
    """Whether the vmap parameters are ones a key can hold exactly: axes None, ints or
    flat tuples of them (not bools, which equal ints but are refused), an axis name that
    is a str, a size that is an int. Others (axes trees with lists or dicts, ...) get a
    runner of their own, as before."""
    in_axes, out_axes, axis_name, axis_size = params
    for axes in (in_axes, out_axes):
        entries = axes if type(axes) is tuple else (axes,)
        if not all(a is None or type(a) is int for a in entries):
            return False
    return (axis_name is None or type(axis_name) is str) and \
        (axis_size is None or type(axis_size) is int)


def _kept_runner(fun, params):
    """The runner kept for vmap(fun, *params) (plain parameters), or None: then its
    parameters are checked and one made."""
    owner = _owner(fun)
    kept = _RUNNERS.get(id(owner))
    if kept is None or kept[0]() is not owner:
        return None
    return kept[1].get(params)


def _new_runner(fun, params):
    """A runner for vmap(fun, *params) (checked), kept for fun when it can be: its
    parameters are plain and fun can be weakly referenced."""
    if not _plain_params(params):
        return _make_runner(lambda: fun, *params)
    owner = _owner(fun)
    key = id(owner)
    if owner is not fun:     # (a code object: the runner reads each call's function)
        ref = weakref.ref(owner, _forgetting(key))
        run = _make_runner(_calling_fun, *params)
    else:
        try:
            ref = weakref.ref(fun, _forgetting(key))
        except TypeError:    # (no weak reference to it: a builtin, a ufunc, jnp.sin)
            if not type(fun).__module__.startswith("mjax."):
                return _make_runner(lambda: fun, *params)
            # (mjax's own functions, jnp.sin an EagerOp, live as long as the process)
            ref = functools.partial(_itself, fun)
        run = _make_runner(ref, *params, pure=registration.PURE_OF_AVALS.get(key) is fun)
    kept = _RUNNERS.get(key)
    if kept is None or kept[0]() is not owner:
        if len(_RUNNERS) >= _MAX_FUNCTIONS:
            _RUNNERS.clear()
        kept = _RUNNERS[key] = (ref, {})
    if len(kept[1]) >= _MAX_RUNNERS:
        kept[1].clear()
    kept[1][params] = run
    return run


def _itself(x):
    return x


def _forgetting(key):
    """The callback of a function's weakref: drops the dead function's runners, unless
    the table holds another reference there by now. (It holds the table itself: at
    interpreter exit this module's globals may be gone before the function dies.)"""
    runners = _RUNNERS

    def forget(ref) -> None:
        kept = runners.get(key)
        if kept is not None and kept[0] is ref:
            del runners[key]
    return forget


def _make_runner(fun_of, in_axes, out_axes, axis_name, axis_size, pure=False):
    """The staged function an eager (or traced) call of vmap(fun, ...) runs: it traces
    fun (`fun_of()`: a weak reference, the function being alive while a wrapper of it
    calls this) on one example each call and emits `jaxpr.vmap @fun` (under `staged`: a
    jit that retraces every call when called outside any trace). `pure`: fun is in
    registration.PURE_OF_AVALS (jnp.sin): then, with every output mapped, the staged jit
    keeps its program per avals as any jit does, unmapped numbers traced too (JAX's
    jnp.sin is a jit, traced once per avals and batched from its kept jaxpr)."""
    floats_static = _has_unmapped_output(out_axes)

    def vmap_impl(*args, **kwargs):
        fun = fun_of()
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                             "corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        leaves, tree = trace_trees.tree_flatten((args, kwargs))
        axes = _in_axes_entries(in_axes, args, kwargs)
        if hitype_rules:
            check_vmap_hi(leaves, axes)
        avals = [_aval_unless_static(x, d, floats_static) for x, d in zip(leaves, axes)]
        axes = [_canonical_in_axis(a, d) for a, d in zip(avals, axes)]
        size = _mapped_size(fun, args, kwargs, avals, axes, axis_size)
        example = [_unbatched_aval(a, d) for a, d in zip(avals, axes)]
        # Non-array leaves with in_axes None are static; and the arguments are rebuilt
        # from tracers inside the trace, never from avals (a custom node's unflatten may
        # convert its children: jnp.asarray).
        traced_fun = _with_static_leaves(fun, tree, leaves, avals)
        leaves = [x for x, a in zip(leaves, avals) if a is not None]
        axes = [d for d, a in zip(axes, avals) if a is not None]
        traced_fun = _showing_batched(traced_fun, axes, size, BatchedBody(
            current_trace(), leaves, axes, size, axis_name))
        ex_args, ex_kwargs = tuple(a for a in example if a is not None), {}
        # Called outside jit (or inside grad & co. called outside jit), the values the
        # body closes over and the unmapped (in_axes=None) arguments stay known, as JAX
        # passes those in unbatched (`x[mask]` with an unmapped mask works); mapped
        # arguments are abstract.
        traced_fun = concrete.with_sources(
            traced_fun, [x if d is None else None for x, d in zip(leaves, axes)])
        traced_fun = with_argument_sources(traced_fun, leaves)
        returned = []       # (the function's output leaves, as it returned them)
        received = []       # (the tracers it was given)
        traced_fun = _recording_outputs(traced_fun, returned, received)
        with AXIS_ENV.bound(axis_name, size):
            traced = stage_function(traced_fun, ex_args, ex_kwargs,
                                    name=getattr(fun, "__name__", "fn"))
        if _is_axis_leaf(out_axes):   # (no example tree: custom unflattens see arrays)
            oaxes = [out_axes] * len(traced.out_avals)
        else:
            out_example = tree_util.tree_unflatten(traced.out_tree, traced.out_avals)
            oaxes = broadcast_prefix("vmap out_axes", out_axes, out_example)
        final_out = []
        for a, d in zip(traced.out_avals, oaxes):
            if d is not None:
                nd = len(a.shape) + 1
                if not -nd <= d < nd:   # JAX's message (from its moveaxis)
                    raise ValueError(f"axis {d} is out of bounds for array of dimension {nd}")
                d %= nd
            final_out.append(d)
        operands = call_args(traced, leaves)
        in_ir = [T.NOT_MAPPED if d is None else d for d in axes]
        in_ir += [T.NOT_MAPPED] * (len(operands) - len(leaves))
        outs = _emit_vmap(operands, traced, in_axes=tuple(in_ir),
                          out_axes=tuple(T.NOT_MAPPED if d is None else d for d in final_out),
                          axis_size=size, axis_name=axis_name,
                          out_paths=_out_paths(traced) if None in final_out else None)
        for t, a, d in zip(outs, traced.out_avals, final_out):
            if a.weak_type:
                t.aval = ShapedArray(t.aval.shape, t.aval.dtype, True)
        # An output that is an argument, on its own axis, is that argument, as in JAX
        # (eagerly: the very array passed in; staged keeps it out of its jit).
        # (Only the very tracer it was given, or one through a call returning its own: a
        # jnp function returning a fresh tracer on the argument's value makes a new array,
        # as JAX's jitted jnp functions do, in the canonical dtype.)
        given = received[-1] if received else set()
        mine = returned[-1] if returned and len(returned[-1]) == len(outs) else None
        for j, k in _returned_arguments(traced, len(leaves)).items():
            if mine is not None and isinstance(mine[j], _TracerSeen) and \
                    mine[j][0] not in given and mine[j][1]:
                continue
            if axes[k] == final_out[j] and isinstance(leaves[k], Tracer) and \
                    leaves[k].aval == outs[j].aval:
                outs[j] = leaves[k]
        if floats_static and returned and len(returned[-1]) == len(outs):
            outs = [_AsReturned(r) if d is None and not isinstance(r, _TracerSeen) else t
                    for t, r, d in zip(outs, returned[-1], final_out)]
        return tree_util.tree_unflatten(traced.out_tree, outs)

    def passed_through(args, kwargs) -> set:
        # (called eagerly: the leaves that stay as they are, kept out of staged's jit;
        # none when every leaf is mapped, as one int in_axes maps them all)
        if type(in_axes) is int:
            return set()
        leaves = trace_trees.tree_leaves((args, kwargs))
        try:
            axes = _in_axes_entries(in_axes, args, kwargs)
        except (ValueError, TypeError):
            return set()     # (vmap_impl reports it)
        return {i for i, (x, d) in enumerate(zip(leaves, axes))
                if d is None and _passes_through(x, floats_static)}

    if pure and not floats_static:
        # (every array and number leaf traced, unmapped ones too, as JAX's jitted jnp
        # function traces them: one program per avals, not one per unmapped int)
        return staged(vmap_impl)
    return staged(vmap_impl, concrete_root=True, static_leaves=passed_through)


# ---- the jaxpr.vmap op ----------------------------------------------------------------------
# (operand types, callee's function type, parameters) -> (result types, attributes) of a
# jaxpr.vmap op made before. An eager vmap makes the same op at every call; its parameters'
# checks, result inference and attribute encoding (~35 us of a call) give the same answer
# for the same types and parameters, as Builder._emit keeps them for the passes' ops.
_VMAP_OPS: dict = {}
_MAX_VMAP_OPS = 1024


def _emit_vmap(operands, traced, **params):
    """`emit(T.VmapOp, operands, callee=@traced, **params)` into the current trace: made
    from the entry of one made before for the same types and parameters, else by emit
    (whose checks raise the op's errors) and then kept if its types are all static."""
    callee = Symbol(traced.name)
    if _state.user is not None or type(params["axis_size"]) is not int:
        return emit(T.VmapOp, operands, callee=callee, **params)
    outer = current_trace()
    values = [outer.to_tracer(v).value for v in operands]
    key = (tuple([v.type for v in values]), traced.trace.func.attributes["function_type"],
           traced.name, *params.values())
    hit = _VMAP_OPS.get(key)
    if hit is None:
        outs = emit(T.VmapOp, operands, callee=callee, **params)
        if outs and static_avals([*map(aval_of, key[0]), *(t.aval for t in outs)]):
            attributes = outs[0].value.owner.operation.attributes
            if len(_VMAP_OPS) >= _MAX_VMAP_OPS:
                _VMAP_OPS.clear()
            _VMAP_OPS[key] = ([t.value.type for t in outs],
                              {name: attributes[name] for name in attributes})
        return outs
    with context():
        op = ir.Operation.create(T.VmapOp.OPERATION_NAME, results=hit[0], operands=values,
                                 attributes=hit[1], regions=T.VmapOp.num_regions,
                                 loc=user_location(), ip=outer.ip)
    return [Tracer(outer, r, aval_of(r.type)) for r in op.results]


def _out_paths(traced) -> tuple:
    """Each output's key path in the function's output (`[1]['broadcast']`), as JAX names
    an output that out_axes None does not fit."""
    example = tree_util.tree_unflatten(traced.out_tree, list(range(len(traced.out_avals))))
    paths = [""] * len(traced.out_avals)
    for path, i in tree_util.tree_flatten_with_path(example)[0]:
        if isinstance(i, int) and 0 <= i < len(paths):
            paths[i] = tree_util.keystr(path)
    return tuple(paths)


def _recording_outputs(fun, returned: list, received: list):
    """fun, appending what vmap needs to know of its results to `returned` (per leaf: a
    Tracer as (id, whether it is a block argument), any other value as itself) and the
    ids of its arguments to `received`. No tracer is held: the trace's leak check would
    report it."""
    def recorded(*args, **kwargs):
        received.append({id(t) for t in trace_trees.tree_leaves((args, kwargs))})
        out = fun(*args, **kwargs)
        returned.append([_TracerSeen(id(r), isinstance(getattr(r.value, "owner", None),
                                                        ir.Block))
                         if isinstance(r, Tracer) else r
                         for r in trace_trees.tree_leaves(out)])
        return out
    return recorded


class _TracerSeen(tuple):
    """(id, is a block argument) of a Tracer a vmapped function returned."""
    __slots__ = ()

    def __new__(cls, ident: int, block_argument: bool):
        return super().__new__(cls, (ident, block_argument))


__all__ = ["vmap", "broadcast_prefix", "AXIS_ENV"]

registration.VMAP.fill(vmap)
