"""User-defined interpreters written against JAX's trace API (jax.extend.core's
`take_current_trace` / `set_current_trace`, subclasses of `jax.core.Trace` and
`jax.core.Tracer`, `Primitive.bind_with_trace`), as dm-haiku's `hk.to_dot` writes one.

mjax's own traces build MLIR (core.py); a user's trace only sees primitives:
- `set_current_trace(user_trace)` records it in core's trace state (with the depth of
  mjax's trace stack then). While it is current, `core.bind` and `Primitive.bind` hand
  every op to `user_trace.process_primitive(primitive_of(op), args, params)` (args: the
  user's tracers and plain values). An mjax trace entered later (a body being traced)
  takes the ops instead, until it is left.
- `primitive.bind_with_trace(parent, vals, avals, params)` binds with `parent` current:
  the mjax trace (or the eval trace, eagerly) that `take_current_trace` gave when the user
  trace was set, or an outer user trace.
- Higher-order calls (jit, lax's cond/switch/while_loop/scan) under a user trace are
  first traced by mjax to a jaxpr (the user trace set aside; tracers it closes over
  become the jaxpr's constants) whose equations are then evaluated with the user trace
  current: it sees them as JAX's equations show them (`jit` with `jaxpr` and `name`,
  `scan` with its ClosedJaxpr...), and their `bind_with_trace` runs them through mjax.
- A custom_jvp / custom_vjp call staged under a user trace (inside an mjax trace: eagerly
  mjax calls the function itself, so its ops reach the trace one by one) goes to
  `process_custom_jvp_call` / `process_custom_vjp_call`; their `fun`
  (`jax.extend.linear_util`) applies the staged call, rules kept; the rules themselves
  are not given out (calling them raises NotImplementedError).

Differences from JAX: `take_current_trace` does not make the eval trace current inside
its block (mjax's tracers must stay reachable); jnp functions are not jits in mjax (JAX
shows a `jit` equation for many), their primitives reach the trace directly; an op whose
operands are all Arrays, called eagerly (no mjax trace) under a user trace, may run on
mjax's C fast path without reaching `process_primitive` (same value, unseen by the
trace). vmap, grad, jvp and the jacobians of the user's tracers are staged calls as above
(the trace sees the transformed equations, as JAX's trace below a BatchTrace sees the
batched ones); vjp and linearize of them raise NotImplementedError (their results hold
functions over the user's tracers).
"""
from __future__ import annotations

import contextlib

import numpy as np

from mjax.tracing import registration
from mjax.base import tree_util
from mjax.arrays.array import Array
from mjax.config import config
from mjax.tracing.core import Trace, Tracer, _state, current_trace, refuse_user_tracers
from mjax.tracing.core import bind as core_bind
from mjax.dialect.ops import transforms as T
from mjax.extend import linear_util as lu
from mjax.jaxpr.api import make_jaxpr
from mjax.jaxpr.objects import eval_jaxpr
from mjax.tracing.primitive import OpPrimitive, Primitive, primitive_of
from mjax.tracing.staging import emit


class EvalTrace:
    """What take_current_trace gives outside every trace (JAX's EvalTrace): ops bound
    with it current run eagerly."""

    main = None

    def __repr__(self):
        return "EvalTrace"


EVAL_TRACE = EvalTrace()


def is_user_trace(trace) -> bool:
    """Whether `trace` is a user-defined interpreter (a jax.core.Trace subclass with
    process_primitive), not one of mjax's traces."""
    return isinstance(trace, Trace) and hasattr(type(trace), "process_primitive")


def _current_user():
    """The user trace ops go to now, or None (none set, or an mjax trace entered since)."""
    u = _state.user
    if u is None or u[1] != len(_state.stack):
        return None
    return u[0]


def current():
    """The trace current now, as JAX's take_current_trace gives it."""
    u = _current_user()
    if u is not None:
        return u
    top = current_trace()
    return top if top is not None else EVAL_TRACE


@contextlib.contextmanager
def take_current_trace():
    """`with take_current_trace() as t`: the current trace (JAX also makes the eval trace
    current inside; mjax leaves the state as it is)."""
    yield current()


@contextlib.contextmanager
def set_current_trace(trace, check_leaks=False):
    """Makes `trace` current in the block: a user trace, or an mjax trace / the eval trace
    (which must be the innermost mjax trace / no mjax trace: mjax's own traces are entered
    only by mjax's transformations)."""
    del check_leaks
    saved = _state.user
    if is_user_trace(trace):
        _state.user = (trace, len(_state.stack))
    else:
        top = current_trace()
        if not (trace is top or (trace is None or trace is EVAL_TRACE) and top is None):
            raise NotImplementedError(
                f"set_current_trace({trace!r}): mjax makes current only a user-defined "
                f"trace or the innermost mjax trace ({top!r}, as take_current_trace gave "
                f"it)")
        _state.user = None
    try:
        yield trace
    finally:
        _state.user = saved


@contextlib.contextmanager
def _set_aside():
    """No user trace current in the block (mjax traces a function on its own)."""
    saved, _state.user = _state.user, None
    try:
        yield
    finally:
        _state.user = saved


@registration.USER_BIND.fill
def user_bind(op, args, params):
    """An op bound while a user trace is current: the trace's process_primitive, or
    NotImplemented when an mjax trace entered since takes it. `op` is an op class
    (core.bind: one result comes back alone) or a Primitive (its own convention)."""
    trace = _current_user()
    if trace is None:
        return NotImplemented
    if isinstance(op, Primitive):
        if op in _CUSTOM_PRIMS:   # (a custom call's equation, evaluated)
            return _custom_call(trace, op, list(args), params,
                                lambda xs: op.bind(*xs, **params))
        return trace.process_primitive(op, list(args), dict(params))
    prim = primitive_of(op)
    out = trace.process_primitive(prim, list(args), dict(params))
    if isinstance(out, (list, tuple)) and len(out) == 1:
        return out[0]    # (core.bind's convention: a single result alone)
    return out


@registration.BIND_WITH_TRACE.fill
def bind_with_trace(primitive, trace, args, params):
    """`primitive.bind(*args, **params)` with `trace` current (the user trace's parent)."""
    with set_current_trace(trace):
        if "_mjax_emit" in params:   # (a custom call user_emit made one primitive)
            cls, op_params = params["_mjax_emit"]
            return emit(cls, list(args), **op_params)
        if isinstance(primitive, OpPrimitive) and "_weak_type" in params:
            # (params of core.bind, as user_bind passed them on: bound there again)
            out = core_bind(primitive.op, *args, **params)
            if primitive.multiple_results and not isinstance(out, (list, tuple)):
                out = [out]
            return out
        return primitive.bind(*args, **params)


def _is_array(x) -> bool:
    return isinstance(x, (Tracer, Array, np.ndarray, np.generic))


@registration.USER_STAGED_CALL.fill
def staged_call(fun, args, kwargs):
    """`fun(*args, **kwargs)` (a jit, or one of lax's control-flow functions) under a user
    trace: traced by mjax to a jaxpr, the user trace set aside (array arguments abstract,
    others static), then that jaxpr evaluated with the user trace current, so the trace
    sees JAX's equations (`jit`, `scan`, `cond`, `while`, ...) rather than mjax's MLIR.
    (When an mjax trace entered since is current: the ordinary call.)"""
    trace = _current_user()
    if trace is None:
        with _set_aside():
            return fun(*args, **kwargs)
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    dyn = [i for i, x in enumerate(leaves) if _is_array(x)]

    def flat(*vals):
        full = list(leaves)
        for i, v in zip(dyn, vals):
            full[i] = v
        a, k = tree_util.tree_unflatten(tree, full)
        return fun(*a, **k)

    # (abstract arguments: the user's tracers never enter mjax's trace as arguments; ones
    # `fun` closes over become the jaxpr's constants, which the evaluation passes on)
    avals = [leaves[i].aval if isinstance(leaves[i], Tracer) else leaves[i] for i in dyn]
    with _set_aside():
        closed, shapes = make_jaxpr(flat, return_shape=True)(*avals)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *[leaves[i] for i in dyn])
    return tree_util.tree_unflatten(tree_util.tree_structure(shapes), outs)


@registration.UNSTAGED_JIT_CALL.fill
def unstaged_jit_call(jitted, args, kwargs):
    """A jit's call under jax_disable_jit (its function, as it is: under a user trace, its
    ops reach the trace one by one) or under a user trace (a `jit` equation)."""
    if config.read("jax_disable_jit"):
        return jitted.fun(*args, **kwargs)
    if _current_user() is None:    # (an mjax trace entered since: an ordinary call)
        with _set_aside():
            return jitted(*args, **kwargs)
    return staged_call(jitted, args, kwargs)


# ---- custom_jvp / custom_vjp calls --------------------------------------------------
_CUSTOM_CALLS = {T.CustomJvpCallOp: primitive_of(T.CustomJvpCallOp),
                 T.CustomVjpCallOp: primitive_of(T.CustomVjpCallOp)}
_CUSTOM_PRIMS = frozenset(_CUSTOM_CALLS.values())


@registration.USER_EMIT.fill
def user_emit(cls, operands, params):
    """A transformation op emitted with a user trace current (mjax traced the call's
    function into the module already). A custom_jvp/custom_vjp call goes to the trace's
    process_custom_jvp_call / process_custom_vjp_call, whose `fun` emits the same op (the
    rules kept) on the values it is given; other ops on the user's tracers are refused."""
    trace = _current_user()
    if trace is None:
        return NotImplemented
    prim = _CUSTOM_CALLS.get(cls)
    if prim is None:
        refuse_user_tracers(getattr(cls, "OPERATION_NAME", cls.__name__), operands)
        return NotImplemented
    return _custom_call(trace, prim, list(operands), {"_mjax_emit": (cls, params)},
                        lambda xs: emit(cls, list(xs), **params))


def _custom_call(trace, prim, operands, params, apply):
    """trace.process_custom_jvp_call / process_custom_vjp_call of a call `apply(values)`
    applies (with no user trace current). Its `fun` applies the call (its rules kept);
    the rules themselves are not given out (mjax keeps them in the staged op)."""
    def fun(*xs):
        # (a trace handing its own tracers back while its parent is current, as haiku's
        # DotTrace does: re-entered, so they never reach mjax's traces)
        if _current_user() is not trace and any(
                isinstance(x, Tracer) and x.trace is trace for x in xs):
            with set_current_trace(trace):
                return fun(*xs)
        user = _current_user()
        if user is not None:   # (then the call is one primitive for the trace)
            return user.process_primitive(prim, list(xs), dict(params))
        return apply(xs)

    def no_rule(*_):
        raise NotImplementedError(
            f"mjax keeps the rules of {prim} in its staged op: differentiate the call "
            "(fun) rather than calling its rules from a user trace")

    if prim is _CUSTOM_CALLS[T.CustomJvpCallOp]:
        return trace.process_custom_jvp_call(prim, lu.wrap_init(fun), lu.wrap_init(no_rule),
                                             operands, symbolic_zeros=False)
    return trace.process_custom_vjp_call(prim, lu.wrap_init(fun), lu.wrap_init(no_rule),
                                         no_rule, operands, out_trees=no_rule,
                                         symbolic_zeros=False)


__all__ = ["EVAL_TRACE", "EvalTrace", "bind_with_trace", "current", "is_user_trace",
           "set_current_trace", "staged_call", "take_current_trace", "unstaged_jit_call",
           "user_bind", "user_emit"]
