"""Staging helpers shared by the AD APIs: trace a function into a private `@f` of the
module being built, emit transformation ops, and run as a jit when no trace is active."""
from __future__ import annotations

import contextlib
import functools
import threading

import numpy as np

from mjax import dtypes as _dt
from mjax import lax, staging, trace_trees, tree_util
from mjax.ad import concrete, levels
from mjax.config import config
from mjax.core import aval_of_value, current_trace, is_array_like
from mjax.dialect.types import RefAval
from mjax.float0 import hide_float0 as _hide_float0
from mjax.float0 import is_float0 as _is_float0
from mjax.float0 import restore_float0 as _restore_float0
from mjax.jitted import Jitted
from mjax.source_info import wraps
from mjax.staging import call_args, emit, emit_call, put_back, set_apart  # noqa: F401


# ---- staging helpers ------------------------------------------------------------------
def stage_function(fun, args, kwargs=None, name=None, concrete_leaves=(), diff_leaves=None):
    """Traces fun(*args, **kwargs) into a private function of the current module
    (mjax.staging.stage_function).

    `diff_leaves` (for the functions a differentiation API traces): the indices of the
    argument leaves it differentiates; inside grad & co. called outside jit, fun's
    tracers then have the concrete values JAX would give them (mjax.ad.concrete), and
    fun runs one differentiation level deeper (mjax.ad.levels: custom rules it calls
    are traced at once)."""
    if diff_leaves is not None:
        fun = levels.differentiated(concrete.with_sources(
            fun, trace_trees.tree_leaves((args, kwargs or {})), diff_leaves), diff_leaves)
    return staging.stage_function(fun, args, kwargs, name=name,
                                  concrete_leaves=concrete_leaves)


def python_scalar_leaves(args, kwargs, diff_positions) -> frozenset:
    """Indices of the leaves of (args, kwargs) that are Python scalars outside the
    differentiated positional arguments: JAX's grad passes those through as they are."""
    leaves = trace_trees.tree_leaves((args, kwargs))
    positions = []
    for i, a in enumerate(args):
        positions += [i] * len(trace_trees.tree_leaves(a))
    positions += [None] * (len(leaves) - len(positions))
    return frozenset(k for k, (x, p) in enumerate(zip(leaves, positions))
                     if isinstance(x, (bool, int, float, complex)) and p not in diff_positions)


def _is_python_object(x) -> bool:
    """An output leaf that is neither a value nor a Python scalar (a string, a callable)."""
    return not (_is_dynamic(x) or _is_float0(x) or isinstance(x, (bool, int, float, complex)))


def _signature(args) -> tuple:
    return tuple((a.shape, a.dtype, a.weak_type) for a in map(aval_of_value, args))


def _is_dynamic(x) -> bool:
    return (hasattr(x, "aval") or is_array_like(x)) and not _is_float0(x)


def staged(impl, diff_argnums=None, concrete_root=False, static_leaves=None):
    """Runs `impl` under the current trace, or as a jit of itself when none is active.

    Array leaves of the arguments are traced; other leaves (strings, callables, float0
    arrays, ...) are static, as `grad(f)(x, mode="a")` needs. With `diff_argnums`
    (argnums -> positions differentiated), Python scalars outside those positions stay
    Python values too, as under JAX's grad (`if training:` in the function works).
    float0 outputs come back as NumPy float0 arrays, as in JAX. `static_leaves(args,
    kwargs)` names more leaves (indices) to keep as they are (vmap's unmapped ints).

    `concrete_root` (differentiation APIs): called with no trace active, the traced
    arguments keep their concrete values (mjax.ad.concrete); once Python asked for a
    value while tracing, the program depends on the values, so calls with those argument
    types trace again every time (as JAX re-runs the Python function)."""
    cache: dict = {}
    by_value: set = set()     # cache keys whose traced program depended on the values

    def make(tree, static, n):
        # Outputs that are Python objects, not values (a string in grad's aux, as JAX
        # passes them through): per argument signature, the output structure and those
        # objects, while the jit returns the arrays alone.
        held: dict = {}

        def flat_impl(*dyn):
            if concrete_root:
                concrete.adopt_root_arguments(dyn)
            it = iter(dyn)
            fixed = dict(static)
            full = [_restore_float0(fixed[i]) if i in fixed else next(it) for i in range(n)]
            a, kw = tree_util.tree_unflatten(tree, full)
            if _disabled_jit.on:     # the user's code runs with jit disabled, as they asked
                with config.override(jax_disable_jit=True):
                    out = _hide_float0(impl(*a, **kw))
            else:
                out = _hide_float0(impl(*a, **kw))
            leaves, out_tree = trace_trees.tree_flatten(out)
            objects, arrays = set_apart(leaves, _is_python_object)
            if not objects:
                return out
            held[_signature(dyn)] = (out_tree, objects)
            return arrays
        flat_impl.__name__ = getattr(impl, "__name__", "staged")
        jitted = Jitted(flat_impl)

        def call(*dyn):
            out = jitted(*dyn)
            if not held:
                return out
            kept = held.get(_signature(dyn))
            if kept is None:
                return out
            return put_back(kept[0], kept[1], out)
        return call

    @functools.wraps(impl)
    def run(*args, **kwargs):
        if current_trace() is not None:
            return impl(*args, **kwargs)
        if config.read("jax_disable_jit"):
            # JAX then runs the transformation in Python; mjax stages it all the same
            # (there is no other way to transform), with jit disabled inside it.
            with config.override(jax_disable_jit=False), _disabled_jit.set():
                return run(*args, **kwargs)
        leaves, tree = trace_trees.tree_flatten((args, kwargs))
        dynamic = [_is_dynamic(x) for x in leaves]
        if diff_argnums is not None:
            dynamic = _python_scalars_static(args, kwargs, dynamic, diff_argnums(len(args)))
        if static_leaves is not None:
            kept = static_leaves(args, kwargs)
            dynamic = [d and i not in kept for i, d in enumerate(dynamic)]
        dyn = [x for x, d in zip(leaves, dynamic) if d]
        static = tuple((i, _hide_float0(x)) for i, (x, d) in enumerate(zip(leaves, dynamic))
                       if not d)
        key = None
        try:
            # (with the static leaves' types: 2, 2.0 and True are equal, and hash alike)
            key = (tree, static, tuple(type(x) for _, x in static))
            jitted = cache.get(key)
            if jitted is None:
                jitted = cache[key] = make(tree, static, len(leaves))
        except TypeError:  # an unhashable static leaf: no caching
            jitted = make(tree, static, len(leaves))
        if not concrete_root:
            return _restore_float0(jitted(*dyn))
        if by_value and key is not None and (
                key, tuple(aval_of_value(x) for x in dyn)) in by_value:
            jitted = make(tree, static, len(leaves))     # traced afresh for these values
        with concrete.root_call(dyn) as root:
            out = jitted(*dyn)
        if root.used and key is not None:
            by_value.add((key, tuple(aval_of_value(x) for x in dyn)))
        return _restore_float0(out)
    return run


class _DisabledJit(threading.local):
    """Whether the user disabled jit around the top-level call being staged."""

    def __init__(self):
        self.on = False

    @contextlib.contextmanager
    def set(self):
        saved, self.on = self.on, True
        try:
            yield
        finally:
            self.on = saved


_disabled_jit = _DisabledJit()


def _python_scalars_static(args, kwargs, dynamic, diff_positions):
    """`dynamic` with Python scalar leaves outside the differentiated positional
    arguments (and in keyword arguments) made static."""
    keep = python_scalar_leaves(args, kwargs, diff_positions)
    return [d and k not in keep for k, d in enumerate(dynamic)]


def _is_inexact(aval):
    """Whether values of `aval` are differentiated: float and complex arrays (a Ref holds
    no tangent)."""
    return _dt.is_inexact(aval.dtype) and type(aval) is not RefAval


def _zeros(aval, float0_for_int=True):
    if float0_for_int and not _is_inexact(aval):
        return np.zeros(aval.shape, _dt.float0)
    return lax.full(aval.shape, 0, aval.dtype)


def _leaf_aval(x):
    """The aval of a tangent/cotangent leaf, or None for float0."""
    return None if _is_float0(x) else aval_of_value(x)


def _jax_type(aval) -> str:
    """An aval as JAX's messages print it: float32[3]."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


_wraps = wraps   # (mjax.source_info.wraps)


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _check_aux_pair(out_tree, out_avals):
    out = tree_util.tree_unflatten(out_tree, [_AvalLeaf(a) for a in out_avals])
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"expected function with aux output to return a two-element tuple, "
                        f"but got type {type(out)} with value {out}")
    return out_tree.children()[0]


class _AvalLeaf:
    """Shows an aval in error messages where JAX would show a tracer."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>"


class ShapedArrayArg:
    """An abstract argument for tracing: only its aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval
