"""The tracing core: traces and `bind`.

`bind(op, *args, **params)` is the one door from Python into IR. Under a trace it emits
`jaxpr.<op>` into the function being built and returns tracers; with no trace active it
runs the op eagerly (see eager.py). Every op carries the user's `file:line:col`
(source_info.py). Tracers are in tracer.py, result types in abstract_eval.py; the names
of both stay importable from here.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import weakref

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.tracing.abstract_eval import infer_avals
from mjax.arrays.array import Array
from mjax.dialect import ShapedArray, tensor_type
from mjax.dialect.attributes import dense_elements
from mjax.dialect.blocks import (add_argument, emit_return, emit_yield, end_of, new_block,
                                 new_holder, op_maker, unit_attr)
from mjax.dialect.builder import _keyable, static_avals
from mjax.dialect.core import PURE_SHAPE_RULES, JaxprOp, encode_params
from mjax.dialect.functions import building, new_function, set_function_type
from mjax.dialect.ops.structural import ConstantOp
from mjax.dialect.types import RefAval
from mjax.dialect.values import unknown_location
from mjax.specs.dtypes import aval_of_value, pytype_aval_mappings, to_numpy  # noqa: F401 (jax.core)
from mjax.arrays.eager import apply_eager
from mjax.arrays.eager_fast import fast_bind
from mjax.base.errors import UnexpectedTracerError
from mjax.passes.analyses import Census
from mjax.dialect.shape_poly import max_dim, min_dim  # noqa: F401  (jax.core's)
from mjax.arrays.sharding_types import seed_captured_type, seed_region_types, trace_op_types
from mjax.tracing.source_info import (FUNCTION_AT, at_user_line, describe_location,  # noqa: F401
                                      named_scope, user_frame, user_location)
from mjax.tracing.tracer import Tracer, escaped_tracer_message, known_value  # noqa: F401


# ---- trace state -----------------------------------------------------------------
class _TraceState(threading.local):
    def __init__(self):
        self.stack: list[Trace] = []
        self.compile_time_eval = 0    # depth of ensure_compile_time_eval blocks
        self.user = None    # (a user-defined jax.core.Trace, stack depth): user_traces.py
        self.made = None    # (the traces entered under collecting_traces, or None)


_state = _TraceState()


class collecting_traces:
    """`with collecting_traces() as made:` lists in `made` weak references to the traces
    entered on this thread meanwhile, for release_traces. (Weak: the list keeps no trace
    alive, so the leak checker finds no chain of references through it.)"""

    __slots__ = ("_saved",)

    def __enter__(self) -> list:
        self._saved = _state.made
        made = _state.made = []
        return made

    def __exit__(self, *exc):
        _state.made = self._saved
        return False


def release_traces(traces) -> None:
    """Breaks the reference cycles of the finished traces of `traces` (collecting_traces'
    weak references) that nothing uses again (their
    argument tracers, and the tracers of the values they captured, refer back to them),
    so that reference counting frees them and their module at once instead of leaving
    them to the garbage collector: for a caller that traced a program only to look up its
    executable (an eager transformation's call, every call). Attributes are rebound, not
    emptied: copies of a trace kept elsewhere share its containers."""
    for ref in traces:
        t = ref()
        if t is not None and not t.active:
            t.args = None
            t._captured_ids = {}


def current_trace() -> "Trace | None":
    stack = _state.stack
    return stack[-1] if stack else None


class Carry:
    """A `Trace.sources` entry for a loop carry: it starts as `init`, and the loop body
    may change what it depends on."""

    __slots__ = ("init",)

    def __init__(self, init):
        self.init = init


def argument_sources(values) -> list:
    """`Trace.sources` for arguments given as `values`: tracers (and Carry entries) kept,
    abstract values None, constants False."""
    return [v if isinstance(v, (Tracer, Carry)) else None if _abstract(v) else False
            for v in values]


def _abstract(v) -> bool:
    """Whether `v` stands for a value only by its type (an aval, a ShapeDtypeStruct)."""
    return isinstance(v, ShapedArray) or (hasattr(v, "shape") or hasattr(v, "aval")) and \
        not hasattr(v, "__array__")


def with_argument_sources(fun, values):
    """`fun`, which when called first thing in its trace records that its arguments stand
    for `values` (a transformation tracing fun on abstract arguments: vmap)."""
    def sourced(*args, **kwargs):
        current_trace().sources = argument_sources(values)
        return fun(*args, **kwargs)
    return sourced


def trace_stack() -> tuple:
    """The traces being traced now, outermost first."""
    return tuple(_state.stack)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside, ops whose operands are all concrete run eagerly even while tracing
    (JAX: jax.ensure_compile_time_eval); ops on tracers are staged as usual."""
    _state.compile_time_eval += 1
    try:
        yield
    finally:
        _state.compile_time_eval -= 1


eval_context = ensure_compile_time_eval   # (JAX: jax.core.eval_context)


def evaluates_now(args) -> bool:
    """Whether a bind of `args` runs eagerly: no trace, or inside
    ensure_compile_time_eval with no tracer among them."""
    if not _state.stack:
        return True
    return bool(_state.compile_time_eval) and not any(isinstance(a, Tracer) for a in args)


class Trace:
    """One Python function being traced into a `func.func` of a module.

    Arguments are block arguments; values captured from outside (concrete arrays too big
    to inline, tracers of an enclosing trace) become extra arguments listed in
    `captured`, which the caller supplies.
    """

    # Scalars (and NumPy splat views) become jaxpr.constant ops; other arrays are captured,
    # as JAX makes them constvars.

    # Traced values' Explicit shardings, when the function got arrays of such types, and
    # in a shard_map body the mesh axes each value varies along (mjax.arrays.sharding_types;
    # None: none, so bind skips them).
    type_specs = None
    varying = None
    # Filled from the floors above for some traces (docs/design.md, registration points):
    # `concrete`, the oracle of the concrete values JAX would know for this trace's
    # tracers (mjax.ad.concrete, inside grad & co. called outside jit; Tracer.__bool__
    # and friends ask it), and `shows`, how its tracers print when not as JitTracer(...)
    # (mjax.spmd.shard_map: a body run outside jit prints its per-device blocks).
    concrete = None
    shows = None
    # While the trace is active, what its arguments stand for in the enclosing trace (one
    # per argument: a Tracer of it, None when only abstract, False when a constant), where
    # the caller knows (mjax.ad.symbolic_zeros follows values through them).
    sources = None
    # What the trace staged (passes/analyses.py): the module's op names and whether all
    # its ops are used, for the passes to skip their walks; None once finished (and for
    # bodies of region ops).
    census = None
    # (insertion point, {(value attribute, aval, location): the constant staged there})
    _consts = None

    def __init__(self, module=None, name: str = "", in_avals=(), *, visibility=None):
        if module is None:   # a user-defined trace's super().__init__() (user_traces.py)
            self.active = True
            return
        self.module = module
        self.name = name
        self.in_avals = list(in_avals)
        self.captured: list = []          # outer values (Arrays, ndarrays or Tracers)
        self._captured_ids: dict = {}
        self.active = True
        with building():
            ins = [tensor_type(a) for a in self.in_avals]
        self.func, self.block = new_function(module, name, ins, visibility=visibility)
        self.ip = end_of(self.block)
        self.args = [Tracer(self, v, a) for v, a in zip(self.block.arguments, self.in_avals)]
        self.capture_avals: list[ShapedArray] = []
        self.census = Census()

    # -- entering and leaving -----------------------------------------------------------
    def __enter__(self):
        _state.stack.append(self)
        made = _state.made
        if made is not None:
            made.append(weakref.ref(self))
        return self

    def __exit__(self, *exc):
        popped = _state.stack.pop()
        assert popped is self, "trace stack corrupted"
        self.active = False
        self.sources = None
        self._consts = None   # (its values would keep the module alive)
        if exc[0] is not None:
            self._abandon()

    def _abandon(self) -> None:
        """After the function raised: its unfinished body returns nothing, so the module
        stays valid (the function is dead: nothing calls it)."""
        self.census = None
        ops = self.block.operations
        if len(ops) == 0 or ops[len(ops) - 1].operation.name != "func.return":
            emit_return(self.ip, [])

    @property
    def main(self) -> "Trace":
        """JAX's name for what identifies a trace (libraries compare tracers' traces by
        it, `x._trace.main is main`): the trace itself."""
        return self

    # -- values ------------------------------------------------------------------------
    def _new_arg(self, aval: ShapedArray) -> Tracer:
        value = add_argument(self.block, tensor_type(aval))
        return Tracer(self, value, aval)

    def capture(self, outer) -> "Tracer":
        """A tracer standing for `outer` (a concrete array or an enclosing trace's tracer)."""
        key = id(outer)
        hit = self._captured_ids.get(key)
        if hit is not None:
            return hit[1]
        aval = aval_of_value(outer)
        t = self._new_arg(aval)
        self._captured_ids[key] = (outer, t)  # keeps `outer` alive, so ids stay unique
        if self.type_specs is not None or (isinstance(outer, Tracer) and
                                           outer.trace.type_specs is not None):
            seed_captured_type(self, outer, t)
        self.captured.append(outer)
        self.capture_avals.append(aval)
        return t

    def to_tracer(self, x, loc=None) -> "Tracer":
        """`x` as a tracer of this trace; a constant is staged at `loc` (default: the
        user's line)."""
        if isinstance(x, Tracer):
            if x.trace is self:
                return x
            if not x.trace.active:
                raise UnexpectedTracerError(escaped_tracer_message(x))
            return self.capture(x)
        aval = aval_of_value(x)
        if type(aval) is RefAval:       # a ref (mjax.Ref) from outside: a ref argument
            inner = getattr(x, "_tracer", None)     # (a Ref of a trace: its traced value)
            return self.to_tracer(inner) if inner is not None else self.capture(x)
        # (a device Array closed over is a constant argument, as in JAX: a constvar of
        # make_jaxpr, a runtime operand of the compiled program; the jnp constants a trace
        # makes are NumPy-backed literals)
        if (aval.ndim == 0 or is_splat_view(x)) and not isinstance(
                aval.dtype, dtypes.KeyType) and type(x) is not Array and literal_here(x, self):
            # (to_numpy(x), with the aval read above: np.asarray(x, its dtype))
            arr = np.asarray(x, dtype=aval.dtype) if not is_splat_view(x) else \
                np.asarray(x)   # (a plain ndarray: a literal's subclass indexes as mjax's)
            with unknown_location():
                value = dense_elements(arr)
                if loc is None:
                    loc = user_location()
                # (One op per constant, aval and line in this block: the copies lowering's
                # CSE would merge are never staged. Keyed by the insertion point too: a
                # copied trace (jit's kept traces) starts its own.)
                consts = self._consts
                if consts is None or consts[0] is not self.ip:
                    consts = self._consts = (self.ip, {})
                key = (value, aval, loc)
                res = consts[1].get(key)
                if res is not None:
                    return Tracer(self, res, aval)
                attrs = {"value": value}
                if aval.weak_type:   # (the jaxpr printer shows weak literals as JAX does)
                    attrs[_WEAK_TYPE] = unit_attr()
                res = ConstantOp.create([], [aval.strip_weak_type()], attrs, loc=loc,
                                        ip=self.ip).result
                consts[1][key] = res
            if self.census is not None:
                self.census.staged(ConstantOp, (), (res,))
            return Tracer(self, res, aval)
        return self.capture(x)

    def emit(self, opcls, tracers, params, out_avals, loc=None) -> list["Tracer"]:
        """`opcls`'s op on `tracers`, at `loc` (default: the user's line)."""
        if loc is None:
            loc = user_location()
        values = [t.value for t in tracers]
        op = opcls.create(values, out_avals, params, loc=loc, ip=self.ip)
        # (one result, most ops: read without listing the results)
        results = [op.result] if len(out_avals) == 1 else list(op.results)
        if self.census is not None:
            self.census.staged(opcls, values, results)
        return [Tracer(self, r, a, loc) for r, a in zip(results, out_avals)]

    def finish(self, outs) -> list[ShapedArray]:
        """Returns `outs` (tracers or constants) from the function; gives result avals."""
        outs = [self.to_tracer(o) for o in outs]
        emit_return(self.ip, [o.value for o in outs])
        set_function_type(self.func, [a.type for a in self.block.arguments],
                          [o.value.type for o in outs])
        census, self.census = self.census, None
        self._consts = None
        if census is not None:
            census.returned([o.value for o in outs])
            census.record_for(self.module, self.block)
        return [o.aval for o in outs]


class RegionTrace(Trace):
    """One body (cond branch, loop body) being traced into a block, inside the trace that
    is current when it starts (its parent).

    The block is built inside a placeholder op in the parent's block and moved into the
    region op afterwards (`block_with`, `emit_region_op`).
    Regions are isolated from above: tracers of enclosing traces and concrete arrays too
    big to inline become extra block arguments, listed in `captured`, which the caller
    passes as explicit operands of the region op. Small constants are inlined.
    """

    def __init__(self, parent: Trace, in_avals):
        self.parent = parent
        self.module = parent.module
        self.name = parent.name
        self.in_avals = [a.strip_weak_type() for a in in_avals]
        self.captured = []
        self._captured_ids = {}
        self.capture_avals = []
        self.active = True
        # A placeholder in the parent's block (so ops in the body can find the module,
        # e.g. a nested jit's callee); the body block moves into the region op once
        # every branch/body is traced, and the placeholder is erased.
        with building():
            types = [tensor_type(a) for a in self.in_avals]
        self._holder, self.block = new_holder(parent.ip, "mjax.region_holder", types)
        self.ip = end_of(self.block)
        self.args = [Tracer(self, v, a) for v, a in zip(self.block.arguments, in_avals)]

    @classmethod
    def reusing(cls, parent: Trace, holder, in_avals, captured,
                capture_avals) -> "RegionTrace":
        """A finished body made from `holder`, a copy (just inserted in the parent's
        block) of the placeholder of a body traced before: its block takes `in_avals`
        then the values `captured` (mjax.tracing.region_cache)."""
        body = cls.__new__(cls)
        body.parent, body.module, body.name = parent, parent.module, parent.name
        body.in_avals = [a.strip_weak_type() for a in in_avals]
        body.captured, body.capture_avals = list(captured), list(capture_avals)
        body._captured_ids = {}
        body.active = False
        body._holder = holder
        body.block = holder.regions[0].blocks[0]
        body.ip = end_of(body.block)
        body.args = [Tracer(body, v, a) for v, a in zip(body.block.arguments, in_avals)]
        return body

    def _abandon(self) -> None:
        """(the caller discards the body: `discard`)"""

    def finish(self, outs) -> list[ShapedArray]:
        """Ends the body with `jaxpr.yield outs`; gives the outputs' avals (weak types
        kept)."""
        outs = [self.to_tracer(o) for o in outs]
        emit_yield(self.ip, [o.value for o in outs])
        self._consts = None
        return [o.aval for o in outs]

    def discard(self) -> None:
        """Erases the placeholder (and what is left in it): after the body block moved
        into its region op, or when staging the op failed."""
        if self._holder is not None:
            self._holder.erase()
            self._holder = None

    def block_with(self, outer_values):
        """The body as a block taking (*outer_values, *own arguments): every captured
        value must be among `outer_values` (by identity); the others are unused."""
        pos = {}
        for i, v in enumerate(outer_values):
            pos.setdefault(id(v), i)
        types = [tensor_type(aval_of_value(v).strip_weak_type()) for v in outer_values]
        with building():
            types += [tensor_type(a) for a in self.in_avals]
        new = new_block(self._holder.regions[0], types)
        n_own = len(self.in_avals)
        old = list(self.block.arguments)
        for i in range(n_own):
            old[i].replace_all_uses_with(new.arguments[len(outer_values) + i])
        for j, v in enumerate(self.captured):
            old[n_own + j].replace_all_uses_with(new.arguments[pos[id(v)]])
        for op in list(self.block.operations):
            new.append(op)
        return new


def trace_region(fun, in_avals, args_tree=None, sources=None):
    """Traces fun(*args) as a body region of the current trace.

    `in_avals` are the flat argument avals (weak types kept); with `args_tree`, fun gets
    the unflattened pytree as its positional arguments; `sources`: the values of the
    current trace the arguments start as (`argument_sources`). Returns (region trace,
    flat outputs' avals, output treedef)."""
    parent = current_trace()
    body = RegionTrace(parent, in_avals)
    if sources is not None:
        body.sources = argument_sources(sources)
        if parent.type_specs is not None:
            seed_region_types(body, sources)
    try:
        with body:
            args = body.args if args_tree is None else tree_util.tree_unflatten(args_tree,
                                                                                 body.args)
            out = fun(*args)
            leaves, out_tree = trace_trees.tree_flatten(out)
            out_avals = body.finish(leaves)
            # (per output, the index of the argument it returns as it came, or None)
            body.forwarded = [next((i for i, a in enumerate(body.args) if a is v), None)
                              if isinstance(v, Tracer) and v.trace is body else None
                              for v in leaves]
    except BaseException:
        body.discard()
        raise
    return body, out_avals, out_tree


@contextlib.contextmanager
def discarding_on_error(bodies):
    """Erases the placeholders of traced bodies (a list filled inside the block) if
    staging their op fails, so a caught error leaves no stray op behind."""
    try:
        yield bodies
    except BaseException:
        for body in bodies:
            body.discard()
        raise


def emit_region_op(opcls, operands, params, bodies, outer, out_avals) -> list["Tracer"]:
    """Emits a region op (cond/while/scan) into the current trace; region i is bodies[i]
    taking (*outer[i], *its own arguments); `out_avals` (weak types kept) become the
    results' avals."""
    trace = current_trace()
    tracers = [trace.to_tracer(v) for v in operands]
    blocks = [b.block_with(o) for b, o in zip(bodies, outer)]
    op = opcls.build([t.value for t in tracers], [a.strip_weak_type() for a in out_avals],
                     params, blocks, loc=user_location(), ip=trace.ip)
    for body in bodies:
        body.discard()
    loc = user_location()
    return [Tracer(trace, r, a, loc) for r, a in zip(op.results, out_avals)]


_WEAK_TYPE = "mjax.weak_type"   # (a unit attribute on a weakly typed literal constant)


# ---- values ----------------------------------------------------------------------
def literal_here(x, trace) -> bool:
    """Whether the scalar (or splat) constant `x` is inlined in `trace` as a literal: yes
    unless it is a jnp constant another live trace made (`jnp.array(0)` under an outer
    jit), which JAX traced there: a function closing over it takes it as an argument (a
    const of make_jaxpr, a value closure_convert hoists)."""
    made_in = getattr(x, "_made_in", None)     # (a weak reference: see elementwise.py)
    if made_in is None:
        return True
    made_in = made_in()
    return made_in is None or made_in is trace or not made_in.active


def lift_literal(x):
    """`x`, or the current trace's tracer for it when it is a jnp constant another live
    trace made (see literal_here): folding it as a NumPy value here would inline it."""
    trace = current_trace()
    if trace is None or literal_here(x, trace):
        return x
    return trace.to_tracer(x)


def user_staged(fn):
    """`fn` (a transformation, lax's cond/switch/while_loop/scan), which under a
    user-defined trace is traced to a jaxpr whose equations, already transformed, the
    trace sees, as JAX's trace below a vmap or grad sees theirs (mjax/extend/user_traces.py)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _state.user is not None:
            return registration.USER_STAGED_CALL(fn, args, kwargs)
        return fn(*args, **kwargs)
    return call


def refuse_user_tracers(api: str, values) -> None:
    """Raises NotImplementedError when a user-defined trace's tracers (mjax/extend/user_traces.py;
    they have no IR value) reach `api`, which cannot hand them to the user's trace."""
    if _state.user is not None and any(isinstance(v, Tracer) and v.value is None
                                       for v in values):
        raise NotImplementedError(
            f"{api} of the values of a user-defined trace (a jax.core.Trace subclass made "
            f"current with set_current_trace) is not supported by mjax; jit, vmap, grad, "
            f"jvp, the jacobians, lax's control flow and custom_jvp/custom_vjp calls are")


def is_array_like(x) -> bool:
    return isinstance(x, (Tracer, Array, np.ndarray, np.generic, bool, int, float, complex))


def is_splat_view(x) -> bool:
    """A NumPy array broadcast from one value (all strides 0): inlined as a splat constant
    whatever its size, since its attribute holds one element. A size-1 one counts (a
    literal scalar broadcast to (1, 1) against a traced operand, JAX's scalar literal of
    that op: a Pallas kernel, which takes no captured constants, keeps it inline)."""
    return isinstance(x, np.ndarray) and x.ndim > 0 and x.size >= 1 and not any(x.strides)


# ---- bind ------------------------------------------------------------------------
_CARRY_AVAL = (Array, Tracer)   # types whose `aval` is always a ShapedArray


class _SpecialOperand(Exception):
    """Raised by _operand_aval for an operand bind must not stage as it is: a key array
    (its op goes to mjax.lax.key_ops) or an object with `__jax_array__` (converted first)."""


_PLAIN = {int, float, bool, complex, np.ndarray}


def _converts(a) -> bool:
    """Whether `a` is an operand bind takes through its `__jax_array__`."""
    t = type(a)
    return t not in _PLAIN and t not in _CARRY_AVAL and hasattr(a, "__jax_array__")


def _operand_aval(a):
    """The aval of an operand that is not an mjax array or tracer (a Python or NumPy value);
    special operands leave through _SpecialOperand (raised rather than tested in bind, so
    arrays and tracers pay nothing)."""
    if type(a) in registration.KEY_ARRAY_TYPES or _converts(a):
        raise _SpecialOperand
    return aval_of_value(a)


def _bind_special(opcls, args, params, weak):
    """bind for operands _operand_aval refused. An object with `__jax_array__` (a flax
    Variable, an equinox wrapper) is its array, as in JAX; staging the object itself as a
    constant would freeze a tracer it holds."""
    if any(type(a) in registration.KEY_ARRAY_TYPES for a in args):
        return registration.BIND_ON_KEYS(opcls, args, params)
    args = [a.__jax_array__() if _converts(a) else a for a in args]
    return bind(opcls, *args, **params, **({} if weak is None else {"_weak_type": weak}))


def bind(opcls: type[JaxprOp], *args, **params):
    """Applies `jaxpr.<op>` to args: staged under a trace, executed eagerly otherwise.

    Returns one value for single-result ops, else a list.
    """
    if _state.user is not None:   # a user-defined trace is current (mjax/extend/user_traces.py)
        out = registration.USER_BIND(opcls, args, params)
        if out is not NotImplemented:
            return out
    weak = params.pop("_weak_type", None) if params else None
    stack = _state.stack   # (current_trace(), inlined: this runs per op)
    trace = stack[-1] if stack else None
    # (Arrays and tracers carry their aval: read it directly.)
    try:
        if len(args) == 1:
            a = args[0]
            avals = [a.aval if type(a) in _CARRY_AVAL else _operand_aval(a)]
        else:
            avals = [a.aval if type(a) in _CARRY_AVAL else _operand_aval(a) for a in args]
    except _SpecialOperand:
        return _bind_special(opcls, args, params, weak)
    if trace is None or (_state.compile_time_eval and evaluates_now(args)):
        outs = apply_eager(opcls, args, avals, params, weak)
    else:
        key = hit = None
        if params or opcls.attributes:
            key = _staged_key(opcls, weak, avals, params)
            hit = None if key is None else _STAGED.get(key)
        if hit is None:
            params, out_avals = infer_avals(opcls, avals, params, weak)
        else:
            params, out_avals = hit[0], hit[1]
        # (The user's line found once: a constant operand and the op are both there.)
        loc = None
        tracers = []
        for a in args:
            if type(a) is not Tracer or a.trace is not trace:
                if loc is None:
                    loc = user_location()
                tracers.append(trace.to_tracer(a, loc))
            else:
                tracers.append(a)
        # (Trace.emit, inlined: the op is typed without weak types, its tracers carry
        # them; this runs per op)
        if loc is None:
            loc = user_location()
        values = [t.value for t in tracers]
        if hit is not None:       # (what create would make of the same op and avals)
            op = hit[2](values, loc, trace.ip)
            results = [op.result] if len(out_avals) == 1 else list(op.results)
            outs = [Tracer(trace, r, a, loc) for r, a in zip(results, out_avals)]
        elif len(out_avals) == 1:
            a = out_avals[0]
            results = [opcls.create(values, [a.strip_weak_type()], params, loc=loc,
                                    ip=trace.ip).result]
            outs = [Tracer(trace, results[0], a, loc)]
        else:
            results = list(opcls.create(values, [a.strip_weak_type() for a in out_avals],
                                        params, loc=loc, ip=trace.ip).results)
            outs = [Tracer(trace, r, a, loc) for r, a in zip(results, out_avals)]
        if key is not None and hit is None and static_avals(out_avals):
            if len(_STAGED) >= 4096:
                _STAGED.clear()
            _STAGED[key] = (params, tuple(out_avals), op_maker(
                opcls.OPERATION_NAME, [r.type for r in results],
                encode_params(params) if params else None, opcls.num_regions))
        if trace.census is not None:
            trace.census.staged(opcls, values, results)
        if trace.type_specs is not None or trace.varying is not None:
            trace_op_types(trace, opcls, tracers, outs, dict(params))
    return outs[0] if len(outs) == 1 else outs


# Binding an op with parameters checks them, infers its result avals and encodes its
# attributes, all again for the same op on the same avals (a broadcast or a reduction per
# layer): for ops of the pure shape-rule modules with plain parameters on exact static
# avals, (op class, weak, parameters, avals) -> (checked parameters, result avals, a maker
# of the op with its result types and attributes), as the first bind made them
# (Builder._emit does the same for passes).
_STAGED: dict = {}


def _staged_key(opcls, weak, avals, params: dict):
    if opcls.__module__ not in PURE_SHAPE_RULES or type(opcls.num_regions) is not int \
            or not all(map(_keyable, params.values())) or not static_avals(avals):
        return None
    return (opcls, weak, tuple(params.items()), *avals)


# (A cached eager op on Arrays runs in C when built: runtime/_eagerpath.c.)
bind = fast_bind(bind, _state)


def eval_jaxpr(jaxpr, consts, *args, propagate_source_info=True) -> list:
    """Evaluates a Jaxpr object (`make_jaxpr(f)(...).jaxpr`) by binding each equation's
    primitive; staged under a trace (mjax/jaxpr/objects.py). JAX: jax.core.eval_jaxpr."""
    return registration.EVAL_JAXPR(jaxpr, consts, *args)


# ---- jax.core's names that libraries use in annotations ------------------------------
AbstractValue = ShapedArray  # JAX: the base class of avals; mjax's avals are ShapedArrays
Value = object               # JAX: a concrete value or a tracer
ParamDict = dict             # JAX: an equation's parameters by name
