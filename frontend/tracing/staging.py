"""Staging a Python function into a module: trace it into `@name` of a fresh module
(jit, make_jaxpr, eval_shape) or into a private function of the module being built (a
nested jit, the function a transformation op names), and emit the ops that call it."""
from __future__ import annotations

import functools
import inspect
import itertools
import re
import weakref

import numpy as np

from mjax.specs import memory_kinds
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.arrays.array import Array
from mjax.tracing.axis_env import AXIS_ENV
from mjax.config import config
from mjax.tracing.core import Trace, Tracer, _state, argument_sources, current_trace
from mjax.dialect import Builder, ShapedArray, aval_of, context
from mjax.dialect.attributes import Symbol
from mjax.dialect.functions import new_module
from mjax.dialect.values import string_attr
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import KeyType, RefAval
from mjax.specs.dtypes import aval_of_value, hi_aval, hitype_rules
from mjax.tracing.hijax_lowering import HiResultError, eval_shape_hi, has_hi
from mjax.tracing.leak_check import check_tracer_leaks
from mjax.specs.float0 import contains_float0, hide_float0
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.specs.sharding_impls import current_mesh, get_abstract_mesh
from mjax.arrays.sharding_types import output_types, seed_trace_types, typeof_traced
from mjax.tracing.source_info import name_stack, user_location
from mjax.base.traceback_util import api_boundary


# ---- a function traced into a module ------------------------------------------------------
class TracedFunction:
    """A Python function traced to `@name` in a fresh module, plus what calling it needs."""

    def __init__(self, module, trace: Trace, in_tree, out_tree, out_avals):
        self.module = module
        self.name = trace.name
        self.trace = trace
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.out_avals = out_avals
        self.in_avals = trace.in_avals
        self.captured = trace.captured
        self.capture_avals = trace.capture_avals

    @property
    def arg_avals(self) -> list:
        """The arguments' avals with their weak types (`in_avals` are the module's argument
        types, which carry none)."""
        return [getattr(t, "aval", a) for t, a in zip(self.trace.args, self.in_avals)]


def _is_abstract_key(x) -> bool:
    return isinstance(x, ShapeDtypeStruct) and isinstance(x.dtype, KeyType)


def trace_function(fun, args, kwargs, *, name="main", module=None,
                   visibility=None, concrete_leaves=(), flat=None) -> TracedFunction:
    """Traces fun(*args, **kwargs) with every array leaf abstract, except the leaves
    whose indices are in `concrete_leaves`: fun sees those values themselves (their
    function arguments stay, unused, so leaf indices keep their meaning). `flat`: the
    arguments' (leaves, treedef, avals) where the caller has them."""
    if flat is not None:
        leaves, in_tree, in_avals = flat[0], flat[1], list(flat[2])
    else:
        leaves, in_tree = trace_trees.tree_flatten((args, kwargs))
        if any(map(_is_abstract_key, leaves)):
            leaves, in_tree = trace_trees.tree_flatten(tree_util.tree_unflatten(in_tree, [
                registration.KEY_ARRAY_OF_ABSTRACT(x) if _is_abstract_key(x) else x
                for x in leaves]))
        in_avals = [aval_of_value(x) if not isinstance(x, ShapedArray) else x
                    for x in leaves]
    fresh = module is None
    if fresh:
        module = new_module()
    trace = Trace(module, name, [a.strip_weak_type() for a in in_avals],
                  visibility=visibility)
    if fresh:    # (its one function is @name: what fresh_name would read from it)
        numbered = _NUMBERED.search(name)
        _NUMBERS[module] = (int(numbered.group(1)) + 1 if numbered else 0, 1)
    for t, a in zip(trace.args, in_avals):
        t.aval = a
    trace.sources = argument_sources(leaves)
    if memory_kinds.in_use():   # (grad's cotangents go to their primals' memory)
        trace.memory_kinds = [memory_kinds.known_kind(x) for x in leaves]
    if any(getattr(x, "_sharding", None) is not None or isinstance(x, Tracer) and
           x.trace.type_specs is not None for x in leaves):
        seed_trace_types(trace, leaves)
    with context(), trace:
        given = trace.args if not concrete_leaves else [
            leaves[i] if i in concrete_leaves else t for i, t in enumerate(trace.args)]
        if any(type(a) is RefAval for a in in_avals):   # (Refs passed in stay Refs)
            given = [registration.REF_OF_TRACER(t) if type(a) is RefAval else t
                     for t, a in zip(given, in_avals)]
        a, kw = tree_util.tree_unflatten(in_tree, given)
        out = hide_float0(fun(*a, **kw))
        out_leaves, out_tree = trace_trees.tree_flatten(out)
        # (a symbolic dimension returned is its value, as in JAX)
        out_leaves = [o.__jax_array__() if is_symbolic_dim(o) else o for o in out_leaves]
        for leaf in out_leaves:
            if hitype_rules and hi_aval(leaf) is not None:
                raise HiResultError(f"{getattr(fun, '__name__', fun)} returned a hijax "
                                    f"value of type {hi_aval(leaf)!r}")
            if not (isinstance(leaf, (Tracer, Array, np.ndarray, np.generic, bool, int, float,
                                      complex)) or hasattr(leaf, "aval")):
                raise TypeError(f"{getattr(fun, '__name__', fun)} returned a value of type "
                                f"{type(leaf).__name__}, which is not a valid mjax type")
        out_avals = trace.finish(out_leaves)
        out_avals = [getattr(o, "aval", a) if isinstance(o, Tracer) else
                     aval_of_value(o) for o, a in zip(out_leaves, out_avals)]
    traced = TracedFunction(module, trace, in_tree, out_tree, out_avals)
    if trace.type_specs is not None:        # (unreduced/reduced results: spmd/jit.py)
        traced.out_types = output_types(trace, out_leaves)
    traced.has_float0 = contains_float0(out)
    if config.read("jax_check_tracer_leaks"):
        a = kw = out = out_leaves = leaf = given = None   # (this frame's own references)
        check_tracer_leaks(trace, getattr(fun, "__qualname__", repr(fun)))
    return traced


@api_boundary
def eval_shape(fun, *args, **kwargs):
    """Output shapes/dtypes of fun(*args) as ShapeDtypeStructs, without running it (an
    output that is a ShapeDtypeStruct already comes back as it is, as in JAX)."""
    if hitype_rules and has_hi((args, kwargs)):
        return eval_shape_hi(eval_shape, fun, args, kwargs)
    key = _eval_shape_key(args, kwargs)
    kept = kept_for(EVAL_SHAPES, fun) if key is not None else None
    hit = kept.get(key) if kept is not None else None
    if hit is not None:        # (traced before for these types: JAX's cached trace)
        return tree_util.tree_unflatten(hit[0], hit[1])
    given: dict = {}

    def outputs(*a, **kw):
        leaves, given["tree"] = trace_trees.tree_flatten(fun(*a, **kw))
        given["structs"], rest = set_apart(leaves, lambda x: isinstance(x, ShapeDtypeStruct))
        given["shardings"] = [_type_sharding(x) for x in rest]
        return rest
    traced = trace_function(outputs, args, kwargs)
    out = put_back(given["tree"], given["structs"], [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=s)
        for a, s in zip(traced.out_avals, given["shardings"])])
    if kept is not None and not traced.captured and traced.trace.type_specs is None:
        kept[key] = trace_trees.tree_flatten(out)[::-1]
    return out


def kept_for(table: weakref.WeakKeyDictionary, owner) -> dict | None:
    """The dict of traces `table` keeps for the function `owner` (made if new), or None
    when `owner` cannot be a weak key (unhashable, or not weakly referenceable)."""
    try:
        kept = table.get(owner)
        if kept is None:
            kept = table[owner] = {}
    except TypeError:
        return None
    return kept


# fun -> {key: (treedef, ShapeDtypeStruct leaves)} of eval_shape's results.
EVAL_SHAPES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def trace_key(*parts):
    """A key for a kept trace: `parts` and what else changes tracing (the options that
    affect it, the named axes, the meshes); None when something is unhashable."""
    k = parts + (config.trace_state(), tuple(AXIS_ENV.frames), get_abstract_mesh(),
                 id(current_mesh()))
    try:
        hash(k)
    except TypeError:
        return None
    return k


def _eval_shape_key(args, kwargs):
    """What eval_shape's result depends on besides the function (None: not kept)."""
    if current_trace() is not None:
        return None
    leaves, tree = trace_trees.tree_flatten((args, kwargs))
    try:
        avals = tuple(aval_of_value(x) for x in leaves)
    except TypeError:
        return None
    if any(type(a) is RefAval or getattr(x, "_sharding", None) is not None
           for a, x in zip(avals, leaves)):
        return None
    return trace_key(tree, avals, name_stack())


def _type_sharding(x):
    """The sharding an output's type carries (values over Explicit mesh axes), or None."""
    if not isinstance(x, Tracer):
        return None
    sharding = typeof_traced(x).sharding
    return None if sharding.mesh.empty else sharding


def set_apart(leaves, is_apart) -> tuple[dict, list]:
    """(position -> leaf for the leaves `is_apart` picks, the other leaves in order): the
    Python values a staged function's inputs or outputs carry beside its traced ones."""
    apart = {i: x for i, x in enumerate(leaves) if is_apart(x)}
    return apart, [x for i, x in enumerate(leaves) if i not in apart]


def put_back(tree, apart: dict, rest):
    """The pytree `tree` of the leaves `set_apart` split into `apart` and `rest`."""
    rest = iter(rest)
    return tree_util.tree_unflatten(tree, [apart[i] if i in apart else next(rest)
                                           for i in range(tree.num_leaves)])


# ---- a function staged into the module being built ---------------------------------------
_copies = itertools.count()
# module -> (the next number of its staged functions' names, how many top-level ops it
# had then). Names are unique within a module, not in the process, so a loop of eager
# transformations (each tracing into a fresh module) repeats its names: each new name
# would be a string interned in the process-wide MLIR context for good, and a loop of
# eager transformations would grow the process's memory without bound. Code
# reusing a function traced into another module must copy it in under a prefix
# (mjax.jit.nested_traces, mjax.tracing.region_cache).
_NUMBERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_NUMBERED = re.compile(r"_(\d+)$")


def fresh_name(module, base: str, taken=None) -> str:
    """A name `{base}_{n}` for a new function of `module` (which the caller adds next), n
    counted per module; `taken(name)`: whether the module already holds a function of
    that name (for a module whose functions were not all named here, e.g. a clone)."""
    ops = module.body.operations
    count = len(ops)
    n, expected = _NUMBERS.get(module, (0, None))
    if count != expected:
        # (a module parsed or cloned, or given functions by other code since, e.g. the
        # passes' copies: past every number its names end in)
        n = max(n, 1 + max((int(m.group(1)) for op in ops if "sym_name" in op.attributes
                            for m in [_NUMBERED.search(
                                string_attr(op, "sym_name"))] if m),
                           default=-1))
    while taken is not None and taken(f"{base}_{n}"):
        n += 1
    _NUMBERS[module] = (n + 1, count + 1)
    return f"{base}_{n}"


def copy_prefix() -> str:
    """A prefix for the names of traced functions copied into another module (a kept
    trace reused there: mjax.jit.nested_traces, mjax.tracing.region_cache)."""
    return f"jit{next(_copies)}"


def user_name(symbol: str) -> str:
    """The name of the Python function a traced function's symbol was made for (JAX's
    `name` of a nested jit): without the copy prefixes and the number that makes it
    unique."""
    return re.sub(r"_\d+$", "", re.sub(r"^(?:jit\d+_)+", "", symbol))


# ---- staging helpers ------------------------------------------------------------------
def stage_function(fun, args, kwargs=None, name=None, concrete_leaves=()):
    """Traces fun(*args, **kwargs) into a private function of the current module (a
    nested jit, a transformation's function, a custom rule)."""
    outer = current_trace()
    base = name or getattr(fun, "__name__", "fn").strip("<>").replace(".", "_")
    return trace_function(fun, args, kwargs or {}, name=fresh_name(outer.module, base),
                          module=outer.module, visibility="private",
                          concrete_leaves=concrete_leaves)


def emit(cls, operands, **params):
    """Emits a transformation op into the current trace; returns its result tracers."""
    if _state.user is not None and (out := registration.USER_EMIT(cls, operands, params)) \
            is not NotImplemented:     # (a user-defined trace is current: user_traces.py)
        return out
    outer = current_trace()
    values = [outer.to_tracer(v) for v in operands]
    with context():
        b = Builder(outer.ip, user_location())
        results = T.emit_transform(b, cls, *[v.value for v in values], **params)
    return [Tracer(outer, r, _aval_of(r)) for r in results]


def emit_call(callee: str, operands, out_avals=None, cls=None, **params):
    """`jaxpr.call @callee(operands)` (or another call-like op); results get `out_avals`
    (which carry weak types) when given."""
    outs = emit(cls or T.CallOp, operands, callee=Symbol(callee), **params)
    if out_avals is not None:
        for t, a in zip(outs, out_avals):
            t.aval = a
    return outs


def _aval_of(value):
    return aval_of(value.type)


def call_args(traced, leaves):
    """Operands of a call of `traced`: the argument leaves, then its captured values."""
    return list(leaves) + list(traced.captured)


# ---- one compiled program when called eagerly ----------------------------------------------
def jit_eagerly(*dynamic: str):
    """Runs the decorated function as one compiled program when called outside any trace
    (JAX jits its linalg and special functions the same way): the parameters named in
    `dynamic` are traced, the others are static and key the cache. Under a trace it is
    inlined. (registration.JIT: jit is floors above.)"""
    def wrap(fn):
        sig = inspect.signature(fn)
        cache = {}

        @functools.wraps(fn)
        def run(*args, **kwargs):
            if current_trace() is not None or config.read("jax_disable_jit"):
                return fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arrays = {k: v for k, v in bound.arguments.items() if k in dynamic}
            static = tuple((k, v) for k, v in bound.arguments.items() if k not in dynamic)
            try:
                key = (static, config.trace_state())
                hash(key)
            except TypeError:  # an unhashable static value (a list axis, an array tol)
                return fn(*args, **kwargs)
            jitted = cache.get(key)
            if jitted is None:
                jitted = cache[key] = registration.JIT(
                    lambda arrs: fn(**arrs, **dict(static)))
            return jitted(arrays)
        return run
    return wrap
