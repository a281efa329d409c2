"""Concrete values inside grad & co. called outside jit, as in JAX.

JAX evaluates `grad(f)(x)` outside jit on concrete values, so Python control flow on
the values f computes works (`if x < 3:` takes the branch for this x; JAX
differentiates the path taken). mjax stages f into the `jaxpr` dialect instead; to give
the same answers, a trace made by a differentiation API called outside jit (or nested
only in such traces) remembers where its arguments come from: concrete arrays, or
tracers of an enclosing such trace. When Python asks for a tracer's concrete value
(`bool`, `int`, `operator.index`, `.item()`, ...), the ops it depends on are evaluated
eagerly from those arguments (op by op through the eager path; ops with regions or
callees as a one-op program), memoized per trace. The staged program then holds only
the branch Python took, and the top-level call that asked is not cached (its program
depends on the values).

Under jit, vmap, make_jaxpr, control-flow bodies or checkpoint, nothing is registered:
the tracer methods raise JAX's errors as before. Costs nothing unless a tracer's
concrete value is asked for.
"""
from __future__ import annotations

import contextlib
import re
import threading
import weakref

from jaxlib.mlir import ir

from mjax.base import trace_trees
from mjax.arrays.array import Array
from mjax.config import config
from mjax.tracing.core import Tracer, current_trace
from mjax.dialect import aval_of, context
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import is_inexact
from mjax.dialect.types import KeyType
from mjax.arrays.dispatch import execute
from mjax.specs.dtypes import aval_of_value, to_numpy
from mjax.arrays.eager import apply_eager
from mjax.tracing.lowering import compile_for_buffers
from mjax.passes.rules.tables import has_zero_derivative
from mjax.arrays.placement import device_buffer, device_put_value
from mjax.runtime import get_backend
from mjax.specs import memory_kinds
from mjax.tracing.source_info import wraps
from mjax.tracing.value_prefix import prefix_ops


class _NotConcrete(Exception):
    """The value depends on something only known abstractly (a jit/vmap argument, a
    tangent)."""


class _Root:
    """One top-level call of a differentiation API (the traces of one call share it)."""

    __slots__ = ()


class _Known:
    """What is known about one trace (its `concrete` oracle, see core.Trace): where its
    arguments come from, and the values computed so far (`diff`: whether a value depends
    on a differentiated input, i.e. whether JAX would hold it in a JVP tracer)."""

    __slots__ = ("root", "sources", "diff_args", "values", "diff", "primal")

    def __init__(self, root, primal: bool = False):
        self.root = root
        self.primal = primal         # the arguments are primal values (a custom_vjp fwd's)
        self.sources: dict = {}      # argument number -> concrete value or outer Tracer
        self.diff_args: set = set()  # argument numbers differentiated by this trace
        self.values: dict = {}       # ir.Value -> Array
        self.diff: dict = {}         # ir.Value -> bool

    def value_of(self, tracer, differentiated_ok=True):
        """The concrete value (an mjax Array) JAX would have for `tracer` of this trace,
        or None. With differentiated_ok=False, None also for values that depend on a
        differentiated input (JAX holds those in JVP tracers, whose float()/np.asarray
        raise)."""
        trace = tracer.trace
        if not trace.active:
            return None
        try:
            value, diff = _value(trace, self, tracer.value)
        except _NotConcrete:
            return None
        if diff and not differentiated_ok:
            return None
        if value.aval != tracer.aval:      # e.g. the weak type
            value = Array(value._buf, tracer.aval)
        return value


# ---- registering traces ------------------------------------------------------------------
class _Pending(threading.local):
    def __init__(self):
        self.call = None     # (root, concrete arguments) of the top-level call starting
        self.runs_now = 0    # (depth of running_now blocks)


_pending = _Pending()


@contextlib.contextmanager
def root_call(values):
    """Around a top-level call of a differentiation API that runs as a jit of itself:
    its trace (if it traces) learns `values`, its arguments; yields the call's _Root."""
    root = _Root()
    saved = _pending.call
    _pending.call = (root, list(values))
    try:
        with running_now():
            yield root
    finally:
        _pending.call = saved


@contextlib.contextmanager
def running_now():
    """Around building (tracing, lowering) a program that runs as soon as it is built: an
    eager differentiation's. JAX evaluates those op by op, so a checkify.check whose
    predicate is not known while tracing (in a custom_vjp's bwd rule) is checked when
    the program runs (`runs_now`)."""
    _pending.runs_now += 1
    try:
        yield
    finally:
        _pending.runs_now -= 1


def runs_now() -> bool:
    """Whether the program being built runs as soon as it is built (`running_now`)."""
    return _pending.runs_now > 0


def adopt_root_arguments(tracers) -> None:
    """Called first thing inside the trace a `root_call` starts, with its argument
    tracers: they stand for the pending concrete values."""
    call = _pending.call
    trace = current_trace()
    if call is None or trace is None or trace.concrete is not None:
        return
    _pending.call = None
    root, values = call
    known = trace.concrete = _Known(root)
    for t, v in zip(tracers, values):
        if isinstance(t, Tracer) and t.trace is trace:
            known.values[t.value] = _as_array(v)
            known.diff[t.value] = False


def current_root():
    """The top-level call of a differentiation API the current trace belongs to (None
    when no concrete value is known here): for `with_sources(..., root=)` later."""
    trace = current_trace()
    parent = None if trace is None else trace.concrete
    return None if parent is None else parent.root


def with_sources(fun, sources, diff_leaves=(), new_root=False, root=None, primal=False):
    """`fun`, to be traced with leaves whose values come from `sources` (one per argument
    leaf: a concrete value, a tracer of a known trace, or None when unknown);
    `diff_leaves` are the leaf indices the transformation differentiates; `primal`: the
    arguments are the sources' primal values, not differentiated here even when the
    sources are (a custom_vjp's fwd, which JAX runs on the primals). Unchanged
    unless the current trace is itself known (or `new_root`: a top-level trace; or
    `root`, from `current_root()`: traced after that trace ended, e.g. a custom_vjp
    bwd traced by the passes)."""
    if new_root:
        root = _Root()
    elif root is None:
        trace = current_trace()
        parent = None if trace is None else trace.concrete
        if parent is None:
            return fun
        root = parent.root
    sources, diff_leaves = list(sources), frozenset(diff_leaves)

    @wraps(fun)
    def entered(*args, **kwargs):
        trace = current_trace()
        known = _Known(root, primal)
        for i, (got, src) in enumerate(zip(trace_trees.tree_leaves((args, kwargs)), sources)):
            if isinstance(got, Tracer) and got.trace is trace and \
                    isinstance(got.value, ir.BlockArgument) and src is not None:
                n = got.value.arg_number
                known.sources[n] = src
                if i in diff_leaves:
                    known.diff_args.add(n)
        trace.concrete = known
        return fun(*args, **kwargs)
    return entered


def result_tracers(traced, start=0):
    """Tracers standing for the results of a finished traced function (from `start`):
    sources for a trace that takes them (custom_vjp's bwd takes fwd's residuals)."""
    ret = traced.trace.block.operations[-1]
    avals = traced.out_avals
    return [Tracer(traced.trace, v, a)
            for v, a in zip(list(ret.operands)[start:], avals[start:])]


# ---- asking for values -------------------------------------------------------------------
def _as_array(x):
    if isinstance(x, Array):
        return x
    aval = aval_of_value(x)
    out = device_put_value(to_numpy(x))
    out.aval = aval
    return out


def _value(trace, known, v):
    """(value, depends on a differentiated input) of ir.Value `v` of `trace`."""
    hit = known.values.get(v)
    if hit is not None:
        return hit, known.diff[v]
    if isinstance(v, ir.BlockArgument):
        return _argument(trace, known, v)
    for op in _slice(trace, known, v):
        _evaluate(trace, known, op)
    return known.values[v], known.diff[v]


def _argument(trace, known, v):
    n = v.arg_number
    n_in = len(trace.in_avals)
    if n < n_in:
        if n not in known.sources:
            raise _NotConcrete
        src = known.sources[n]
    else:
        src = trace.captured[n - n_in]
    if isinstance(src, Tracer):
        outer = src.trace.concrete
        if outer is None:
            raise _NotConcrete
        value, diff = _value(src.trace, outer, src.value)
    else:
        value, diff = _as_array(src), False
    if known.primal and n < n_in:
        diff = False
    known.values[v] = value
    known.diff[v] = diff = diff or n in known.diff_args
    return value, diff


def _slice(trace, known, v):
    """The ops (in dependency order) computing `v` that have not run yet; arguments it
    needs are looked up on the way."""
    ops, arguments = prefix_ops(v, known.values)
    for a in arguments:
        _argument(trace, known, a)
    return ops


def _evaluate(trace, known, op):
    operation = op.operation
    # (Ops whose derivative is zero: JAX's JVP drops the tangent, so their results are
    # concrete arrays there, not tracers: float(), np.asarray work.)
    diff = any(known.diff[x] for x in operation.operands) and \
        not has_zero_derivative(type(op))
    results = list(operation.results)
    if any(_is_key(r) for r in results):
        # A key-typed value has no array form: it is computed with the op that uses it.
        for r in results:
            known.values[r], known.diff[r] = _DEFERRED, False
        return
    args = [known.values[x] for x in operation.operands]
    if isinstance(op, JaxprOp) and not len(operation.regions) and \
            not _has_symbol(operation) and not any(a is _DEFERRED for a in args):
        with config.override(jax_debug_nans=False, jax_debug_infs=False):
            outs = apply_eager(type(op), args, [aval_of_value(a) for a in args],
                               dict(op.params))
    else:
        outs = _run_group(trace.module, _with_deferred(known, operation), known)
    for r, out in zip(results, outs):
        known.values[r] = out
        known.diff[r] = diff and is_inexact(aval_of(r.type).dtype)


_DEFERRED = object()    # the memo's entry for a key-typed value


def _is_key(value) -> bool:
    return isinstance(aval_of(value.type).dtype, KeyType)


def _with_deferred(known, operation) -> list:
    """`operation` preceded by the ops computing its deferred (key-typed) operands, in
    dependency order."""
    order, seen = [], set()

    def visit(o):
        if o in seen:
            return
        seen.add(o)
        for x in o.operands:
            if known.values.get(x) is _DEFERRED:
                visit(x.owner.operation)
        order.append(o)
    visit(operation)
    return order


def _has_symbol(operation) -> bool:
    attrs = operation.attributes
    return any(isinstance(attrs[i].attr, ir.FlatSymbolRefAttr) for i in range(len(attrs)))


_GROUP_CACHE: dict = {}


def _run_group(module, operations, known):
    """Runs `operations` (the last one's results are wanted) on concrete values, as a
    program of their own holding the functions they refer to: ops with regions or
    callees (cond, while, jaxpr.call/vjp/...), or using key-typed values."""
    from jaxlib.mlir.dialects import func
    inside = {r for o in operations for r in o.results}
    inputs = []
    for o in operations:
        for x in o.operands:
            if x not in inside and x not in inputs:
                inputs.append(x)
    last = operations[-1]
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        text = _functions_text(module, operations)
        program = ir.Module.parse("module {\n" + text + "\n}")
        with ir.InsertionPoint(program.body):
            main = func.FuncOp("main", ([x.type for x in inputs],
                                        [r.type for r in last.results]))
        block = main.add_entry_block()
        new = dict(zip(inputs, block.arguments))
        for o in operations:
            clone = o.clone(ip=ir.InsertionPoint(block))
            for i, x in enumerate(o.operands):
                clone.operands[i] = new[x]
            new.update(zip(o.results, clone.results))
        func.ReturnOp([new[r] for r in last.results], ip=ir.InsertionPoint(block))
        out_avals = [aval_of(r.type) for r in last.results]
        args = [known.values[x] for x in inputs]
        bufs = [device_buffer(a, a.aval) for a in args]
        # (parameters in the memory of the buffers handed over: a TPU refuses others)
        backend = get_backend()
        kinds = memory_kinds.buffer_kinds(bufs, backend)
        key = (str(program), kinds)
        exe = _GROUP_CACHE.get(key)
        if exe is None:
            exe = _GROUP_CACHE[key] = compile_for_buffers(program, out_avals, kinds)
    return execute(exe, bufs, out_avals, args)


def _functions_text(module, operations) -> str:
    """The functions of `module` that `operations` refer to, directly or not."""
    funcs = {}
    for op in module.body.operations:
        if op.operation.name == "func.func":
            funcs[ir.StringAttr(op.operation.attributes["sym_name"]).value] = op.operation
    texts, todo = [], [ref for o in operations for ref in symbol_refs(str(o))]
    seen = set(todo)
    while todo:
        name = todo.pop()
        if name not in funcs:
            continue
        text = str(funcs[name])
        texts.append(text)
        for ref in symbol_refs(text):
            if ref not in seen:
                seen.add(ref)
                todo.append(ref)
    return "\n".join(texts)


_SYMBOL = re.compile(r'@(?:"((?:[^"\\]|\\.)*)"|([\w$.]+))')


def symbol_refs(text) -> list:
    """The symbol names `text` refers to (`@f`, or quoted: `@"<lambda>_1"`)."""
    return [quoted or plain for quoted, plain in _SYMBOL.findall(text)]

