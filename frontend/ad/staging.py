"""Staging helpers shared by the AD APIs: trace a function into a private `@f` of the
module being built, emit transformation ops, and run as a jit when no trace is active
(for the differentiation APIs and vmap, one that traces on every call and reuses the
executable of the same program: `_Retraced`)."""
from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import io
import re
import threading

import numpy as np

from mjax.specs import dtypes as _dt
from mjax import lax
from mjax.tracing import staging
from mjax.base import trace_trees, tree_util
from mjax.ad import concrete, levels, op_by_op
from mjax.ad.tracer_text import showing_gradients
from mjax.config import config
from mjax.tracing.core import (Tracer, aval_of_value, collecting_traces, current_trace,
                               is_array_like, release_traces, user_staged)
from mjax.dialect.types import RefAval
from mjax.specs.float0 import hide_float0 as _hide_float0
from mjax.specs.float0 import is_float0 as _is_float0
from mjax.specs.float0 import restore_float0 as _restore_float0
from mjax.jit.cache_miss_log import arg_names
from mjax.arrays.host_callbacks import errors_for_caller
from mjax.jit.caches import CLEARERS
from mjax.jit.jitted import Jitted
from mjax.tracing.lowering import name_as_jax
from mjax.passes import custom_rules
from mjax.arrays.placement import device_buffer
from mjax.tracing.source_info import wraps
from mjax.tracing import fused_units
from mjax.tracing.staging import trace_function
from mjax.tracing.staging import call_args, emit, emit_call, put_back, set_apart  # noqa: F401


# ---- staging helpers ------------------------------------------------------------------
def stage_function(fun, args, kwargs=None, name=None, concrete_leaves=(), diff_leaves=None,
                   forward=False, tangents=None):
    """Traces fun(*args, **kwargs) into a private function of the current module
    (mjax.tracing.staging.stage_function).

    `diff_leaves` (for the functions a differentiation API traces): the indices of the
    argument leaves it differentiates; inside grad & co. called outside jit, fun's
    tracers then have the concrete values JAX would give them (mjax.ad.concrete), and
    fun runs one differentiation level deeper (mjax.ad.levels: custom rules it calls
    are traced at once), and its tracers print as JAX's (mjax.ad.tracer_text; `forward`:
    forward mode, whose `tangents` of the diff leaves, values of the trace around, its
    tracers' text shows)."""
    if diff_leaves is not None:
        fun = showing_gradients(fun, diff_leaves, reverse=not forward, tangents=tangents)
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

    `concrete_root` (differentiation APIs, vmap): called with no trace active, the traced
    arguments keep their concrete values (mjax.ad.concrete), and every call traces again
    (the user's Python runs each time, as JAX evaluates these op by op; a program that
    depends on the values Python asked for is simply another program), reusing the
    executable compiled for the same program (`_Retraced`)."""
    cache: dict = {}

    def make(tree, static, n):
        # Outputs that are Python objects, not values (a string in grad's aux, as JAX
        # passes them through): per argument signature, the output structure and those
        # objects, while the jit returns the arrays alone. Retraced, each call's trace
        # leaves them for that call, per thread (vmap's runner is shared by the wrappers
        # of a function, which threads may call at once).
        per_thread = _HeldPerThread() if concrete_root else None
        held_here: dict = {}

        def flat_impl(*dyn):
            held = per_thread.table if per_thread is not None else held_here
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
            if concrete_root:    # (an output that is an argument: that argument, as JAX's)
                passed = _passed_arguments(leaves, dyn)
                objects.update(passed)
                arrays = [x for i, x in enumerate(leaves) if i not in objects]
            if not objects:
                held.pop(_signature(dyn), None)   # (a retrace may drop them)
                return out
            held[_signature(dyn)] = (out_tree, objects)
            return arrays
        flat_impl.__name__ = getattr(impl, "__name__", "staged")
        jitted = _Retraced(flat_impl) if concrete_root else Jitted(flat_impl)

        def call(*dyn):
            out = jitted(*dyn)
            held = per_thread.table if per_thread is not None else held_here
            if not held:
                return out
            kept = held.get(_signature(dyn))
            if kept is None:
                return out
            objects = {i: dyn[o.position] if type(o) is _Passed else o
                       for i, o in kept[1].items()}
            return put_back(kept[0], objects, out)
        return call

    def run_here(*args, **kwargs):
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
                if concrete_root and len(cache) >= _MAX_RETRACED:
                    # (retraced jits keep nothing a call needs; vmap's runner, kept for
                    # its function, must not keep one per static value it was called on)
                    cache.clear()
                jitted = cache[key] = make(tree, static, len(leaves))
        except TypeError:  # an unhashable static leaf: no caching
            jitted = make(tree, static, len(leaves))
        if not concrete_root:
            return _restore_float0(jitted(*dyn))
        with concrete.root_call(dyn), errors_for_caller():
            out = jitted(*dyn)
        return _restore_float0(out)
    run = functools.wraps(impl)(user_staged(run_here))    # (under a user-defined trace)
    return run


class _HeldPerThread(threading.local):
    """A retraced staged function's held output objects (see `staged`), per thread."""

    def __init__(self):
        self.table: dict = {}


_MAX_RETRACED = 64   # (argument structures a retraced staged function keeps a jit for)


# ---- eager calls: traced every time, compiled once per program ----------------------------
# (jit key, program text, what the text does not show) -> CacheEntry, least recently
# used first
_PROGRAMS: dict = {}
_MAX_PROGRAMS = 256
_PROGRAMS_LOCK = threading.Lock()
CLEARERS.append(_PROGRAMS.clear)     # (jax.clear_caches)
# The functions a module defines: named from a process-wide counter (@f_12), so two
# traces of one program differ there alone.
_DEFINED = re.compile(r"func\.func (?:private |public |nested )?@([\w$.\-]+)")
_USER_PRIMITIVE = '"jaxpr.custom_primitive"'      # (mjax.dialect.ops.user.UserPrimitiveOp)
# A custom call's rule handle (`rule = "f_jvp#3"`) and a traced rule's mark
# (`mjax.custom_rule = "f_jvp#3/jvp"`): numbered from a process-wide counter, a new
# number at every trace (passes/custom_rules.py).
_RULE_HANDLE = re.compile(r'\b(rule|mjax\.custom_rule) = "([^"\\]*?#\d+)(?=[/"])')


def program_text(module) -> str:
    """The module's text with locations, its defined functions renamed in the order they
    are defined (@main stays): equal for two traces of the same program."""
    text = module.operation.get_asm(enable_debug_info=True)
    names = [n for n in dict.fromkeys(_DEFINED.findall(text)) if n != "main"]
    if not names:
        return text
    # (a module refers only to the symbols it defines: longest names first, so @f_1
    # never rewrites part of @f_12)
    for name in sorted(names, key=len, reverse=True):
        text = text.replace("@" + name, f"@mjax_fn{names.index(name)}")
    return text


class _Retraced(Jitted):
    """A jit of an eager differentiation (or vmap) call: every call traces the function
    again, so its Python runs each time as under JAX, and runs the executable compiled
    before for the same program (keyed by the jit's cache key and the program's text),
    so lowering and compiling happen once per program. Nothing of a call is kept but
    that table's entry (a bounded table shared by every such jit)."""

    def __init__(self, fun):
        super().__init__(fun)
        self._fast_ok = False     # (the fast path would skip the trace)
        self._pending = None      # (the trace _fill made, for the _compile it calls)
        # (input structure, static key) -> the arguments' names, which every call's
        # program key holds: the same for the same structure, and ~15 us to work out
        self._arg_names: dict = {}

    def _names(self, in_tree, static_key) -> tuple:
        """(the jit's name, its arguments' names) for the program key."""
        key = (in_tree, static_key)
        names = self._arg_names.get(key)
        if names is None:
            names = tuple(arg_names(self.fun, in_tree, static_key))
            if len(self._arg_names) >= 64:
                self._arg_names.clear()
            self._arg_names[key] = names
        return self._name, names

    def _trace(self, dyn_args, dyn_kwargs, static_key, n_args, flat=None):
        traced, self._pending = self._pending, None
        if traced is not None:
            return traced
        traced = trace_function(self._bind_static(static_key, n_args), dyn_args, dyn_kwargs,
                                flat=flat)
        name_as_jax(traced.module, self._name, arg_names(self.fun, traced.in_tree,
                                                         static_key))
        return traced

    def _fill(self, key, dyn_args, dyn_kwargs, static_key, n_args, donated,
              mesh_layout=None, flat=None):
        # (`_call` never finds `key` in self._cache, which stays empty: it comes here.)
        with self._fill_lock:
            fused_before = fused_units.calls
            with collecting_traces() as made:
                traced = trace_function(self._bind_static(static_key, n_args), dyn_args,
                                        dyn_kwargs, flat=flat)
            # (the same text with calls of functions JAX jits compiles otherwise: op_by_op)
            fused_calls = fused_units.calls != fused_before
            # The module is named as JAX names it (name_as_jax) only when it is compiled:
            # the names are the jit's name and its arguments' (from the structure in
            # `key`), so the key holds them in place of the named module's text.
            names = self._names(traced.in_tree, static_key)
            program = _program_key((key, names, fused_calls), traced, mesh_layout)
            entry = recall_program(program) if program is not None else None
            if entry is not None:
                entry = _rebound(entry, traced, self._backend)
                # (the traces served only to find the program: freed now, not by the
                # garbage collector, whose collections they would trigger every few calls)
                release_traces(made)
                return entry
            name_as_jax(traced.module, *names)
            self._pending = traced
            runs = custom_rules.rule_runs()
            self._compiler_options = op_by_op.compiler_options(traced.module, self._backend,
                                                               fused_calls)
            try:
                entry = self._compile(dyn_args, dyn_kwargs, static_key, n_args, donated,
                                      mesh_layout, flat)
            finally:
                self._pending, self._compiler_options = None, {}
            if custom_rules.rule_runs() != runs:
                # The lowering traced Python rules (a custom_vjp's bwd): JAX runs them at
                # each call, which reusing this program would skip.
                program = None
            # (captured values are rebound per call on one device only; refs never)
            if program is not None and not entry.refs and (
                    not traced.captured or entry.out_shardings is None):
                remember_program(program, entry)
            return entry


def recall_program(program):
    """The entry stored for `program` (None if none), now the most recently used."""
    entry = _PROGRAMS.get(program)
    if entry is not None:
        with _PROGRAMS_LOCK:      # (the most recently used go last)
            _PROGRAMS[program] = _PROGRAMS.pop(program, entry)
    return entry


def remember_program(program, entry):
    """Stores `entry` for `program`, dropping the least recently used past the bound."""
    with _PROGRAMS_LOCK:
        _PROGRAMS[program] = entry
        while len(_PROGRAMS) > _MAX_PROGRAMS:
            del _PROGRAMS[next(iter(_PROGRAMS))]


def forget_program(program, entry) -> None:
    """Drops `program`'s entry if it is still `entry`."""
    with _PROGRAMS_LOCK:
        if _PROGRAMS.get(program) is entry:
            del _PROGRAMS[program]


def stable_rules(text: str):
    """(text, sources): the program's text with each custom rule handle replaced by its
    number in order of appearance, and what the text does not show of the handles'
    sources (their `stable_key`: the custom function, rules and static arguments); None
    when a handle's source cannot be described so (a user primitive's, an unknown one)."""
    if 'rule = "' not in text:      # (no handle: the regex costs a small program 11 us)
        return text, ()
    handles: dict = {}

    def number(m):
        k = handles.setdefault(m.group(2), len(handles))
        return f'{m.group(1)} = "rule{k}'
    text = _RULE_HANDLE.sub(number, text)
    keys = []
    for handle in handles:
        stable = getattr(custom_rules.source_of(handle), "stable_key", None)
        key = stable() if stable is not None else None
        if key is None:
            return None
        keys.append(key)
    return text, tuple(keys)


def program_identity(module, refused=(_USER_PRIMITIVE,), hint=None):
    """(a digest of the module's canonical text, its custom rules' sources) for a table
    key, or None when the program must not be reused: it holds an op of `refused` (a
    user primitive: its Python rules run as the passes lower it, at each call as in
    JAX), or a rule handle `stable_rules` cannot describe. (A digest: the table must not
    hold every program's text.)

    A module identical to one seen before (the same bytecode: MLIR's exact serialization,
    locations included, which the printer takes twice as long to write) has the identity
    found then; `_identity_of_text` finds it from the text the first time. Identities
    with custom rule handles (they hold what the handles' sources are now) and refusals
    are not remembered; after one, calls with the same `hint` (the jit key) go straight
    to the text."""
    if hint is not None and hint in _TEXT_ONLY:
        return _identity_of_text(module, refused)
    try:
        blob = io.BytesIO()
        module.operation.write_bytecode(blob)
        blob = blob.getvalue()
    except Exception:   # noqa: BLE001 - (no bytecode for it: the text alone)
        return _identity_of_text(module, refused)
    seen = (refused, hashlib.blake2b(blob, digest_size=32).digest())
    identity = _IDENTITIES.get(seen)
    if identity is None:
        identity = _identity_of_text(module, refused)
        if identity is not None and not identity[1]:
            _bounded_put(_IDENTITIES, seen, identity)
        elif hint is not None:
            _bounded_put(_TEXT_ONLY, hint, None)
    return identity


def _bounded_put(table: dict, key, value) -> None:
    if len(table) >= _MAX_IDENTITIES:
        table.clear()
    table[key] = value


# (refused ops, the digest of a module's bytecode) -> its program_identity; and the
# hints of calls whose identity comes from the text alone (-> None)
_IDENTITIES: dict = {}
_TEXT_ONLY: dict = {}
_MAX_IDENTITIES = 1024
CLEARERS.extend([_IDENTITIES.clear, _TEXT_ONLY.clear])     # (jax.clear_caches)


def _identity_of_text(module, refused):
    """program_identity from the module's canonical text."""
    text = program_text(module)
    if any(op in text for op in refused):
        return None
    stable = stable_rules(text)
    if stable is None:
        return None
    text, rules = stable
    return hashlib.blake2b(text.encode(), digest_size=32).digest(), rules


def _program_key(key, traced, mesh_layout):
    """What decides a compiled entry besides the jit key: the program's text (custom
    rule handles described by their sources: `stable_rules`), the outputs' structure
    and avals (weak types are not in the text), the captured values' avals and the
    layout asked (None: not to be reused: refs, user primitives)."""
    if any(type(a) is RefAval for a in (*traced.in_avals, *traced.capture_avals)):
        return None
    identity = program_identity(traced.module, hint=key)
    if identity is None:
        return None
    try:
        program = (key, *identity, traced.out_tree,
                   tuple(traced.out_avals), traced.has_float0, tuple(traced.capture_avals),
                   mesh_layout)
        hash(program)
    except TypeError:
        return None
    return program


def _rebound(entry, traced, backend):
    """`entry` for this trace: its captured values (the same avals, maybe other values)
    as the constant buffers."""
    if not traced.captured:
        return entry
    entry = copy.copy(entry)
    entry.run = entry.fast = None
    entry.const_bufs = [device_buffer(c, a, backend)
                        for c, a in zip(traced.captured, traced.capture_avals)]
    return entry


class _Passed:
    """An output of an eager call that is its traced argument `position` itself."""
    __slots__ = ("position",)

    def __init__(self, position):
        self.position = position


def _passed_arguments(leaves, dyn) -> dict:
    """{output leaf position: _Passed(k)} for the output leaves that are argument k."""
    where = {id(x): k for k, x in enumerate(dyn) if isinstance(x, Tracer)}
    return {i: _Passed(where[id(x)]) for i, x in enumerate(leaves) if id(x) in where}


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


_wraps = wraps   # (mjax.tracing.source_info.wraps)


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _check_aux_pair(out_tree, out_avals):
    out = tree_util.tree_unflatten(out_tree, [_AvalLeaf(a) for a in out_avals])
    if not isinstance(out, (list, tuple)) or len(out) != 2:
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
