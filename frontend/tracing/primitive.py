"""Primitive objects: JAX's `core.Primitive`, for user-defined primitives and as names of
mjax's own ops (`lax.add_p`).

A user's primitive (`Primitive("multiply_add")` with `def_impl`, `def_abstract_eval`)
runs its impl rule eagerly; under a trace, `bind` stages one `jaxpr.custom_primitive`
op (mjax.dialect.ops.user) whose result types come from the abstract-eval rule and
whose `rule` handle names a `_Binding`: this bind's primitive, parameters and operand
types, in the registry of rule sources (passes/custom_rules.py). The passes ask the
binding to trace the user's rules into the module when they need them
(passes/user_primitives.py): JVP, transpose, batching, and a `lower_fun` lowering.

The rule tables are here, below the transformations, and are the ones JAX's modules
expose: `jax.interpreters.ad.primitive_jvps` is `JVPS`, `primitive_transposes` is
`TRANSPOSES`, `batching.primitive_batchers` is `BATCHERS`, and `mlir.register_lowering`
fills `LOWERINGS`. `Zero` and `UndefinedPrimal` (JAX: ad.Zero, ad.UndefinedPrimal) are
what the rules receive for symbolic zero tangents and the linear operands of a transpose.

mjax's own ops get one `OpPrimitive` each, made from the op registry (`op_primitives`),
whose `bind` is `core.bind` of the op.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.tracing.core import Tracer, bind as bind_op, current_trace, evaluates_now, trace_stack
from mjax.tracing.core import _state as _trace_state
from mjax.dialect import OPS, ShapedArray, context
from mjax.dialect.functions import building
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops.elementwise import ElementwiseBinary
from mjax.dialect.ops.structural import BroadcastInDimOp, ConstantOp
from mjax.dialect.ops.user import UserPrimitiveOp
from mjax.dialect.values import defining_op, is_value, mark, set_attr, string_attr
from mjax.specs.dtypes import aval_of_value, to_numpy
from mjax.arrays.host_callbacks import register as register_callback
from mjax.base.jax_params import without_jax_only
from mjax.passes import custom_rules
from mjax.passes.user_primitives import OUT_DIMS
from mjax.runtime.backend import platform_record, target_platform
from mjax.tracing.source_info import user_location
from mjax.tracing.staging import emit_call, fresh_name, trace_function

# primitive -> rule, as JAX's tables (jax.interpreters.ad / batching / mlir fill them)
JVPS: dict = {}
TRANSPOSES: dict = {}
BATCHERS: dict = {}
LOWERINGS: dict = {}     # primitive -> {platform or None: rule}

no_effects: frozenset = frozenset()


class Primitive:
    """A named operation with rules registered by the user (JAX: `core.Primitive`)."""
    multiple_results = False
    call_primitive = False
    map_primitive = False
    ref_primitive = False
    is_effectful = None

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name

    def def_impl(self, impl):
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        self.abstract_eval = lambda *a, **kw: (abstract_eval(*a, **kw), no_effects)
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        self.abstract_eval = effectful_abstract_eval
        return effectful_abstract_eval

    def def_effectful_abstract_eval2(self, abstract_eval):
        return self.def_effectful_abstract_eval(abstract_eval)

    def impl(self, *args, **params):
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")

    def abstract_eval(self, *args, **params):
        raise NotImplementedError(f"Abstract evaluation for '{self.name}' not implemented")

    def bind(self, *args, **params):
        if _trace_state.user is not None:   # a user-defined trace is current
            out = registration.USER_BIND(self, args, params)
            if out is not NotImplemented:
                return out
        return self._bind(args, params)

    def _bind(self, args, params):
        """bind with no user-defined trace taking it: the impl now, or a staged op."""
        if evaluates_now(args):
            return self.impl(*args, **params)
        return _stage(self, args, params)

    def bind_with_trace(self, trace, args, *avals_params):
        """bind with `trace` (as take_current_trace gave it) current; JAX 0.10's
        (trace, args, avals, params) and the older (trace, args, params)."""
        return registration.BIND_WITH_TRACE(self, trace, args, avals_params[-1])

    def get_bind_params(self, params):
        """The parameters `bind` takes for an equation's `params` (JAX >= 0.9.2: one
        dict, with any functions under `subfuns`)."""
        return params


class OpPrimitive(Primitive):
    """The Primitive object of one of mjax's ops (JAX: lax.add_p and friends); `bind`
    applies the op (its parameters are the op's attributes; an op with bodies takes them
    as ClosedJaxprs, through `registration.REGION_BINDS`)."""

    def __init__(self, op: type):
        super().__init__(op.jax_name)
        self.op = op
        self.multiple_results = op.primitive in _MULTIPLE_RESULTS
        self.elementwise = issubclass(op, ElementwiseBinary) or op.primitive in _ELEMENTWISE

    def _bind(self, args, params):
        if params:
            params = without_jax_only(self.name, params, self.op.attributes)
        region_bind = registration.REGION_BINDS.get(self.op)
        if region_bind is not None:
            out = region_bind(*args, **params)
        else:
            if self.elementwise and len(args) > 1:
                args = _broadcast_scalars(args)
            out = bind_op(self.op, *args, **params)
        if self.multiple_results and not isinstance(out, (list, tuple)):
            return [out]
        return out

    impl = Primitive.bind     # (its own op, applied)

    def get_bind_params(self, params):
        rule = registration.BIND_PARAMS.get(self.op)
        return params if rule is None else rule(params)


# Elementwise ops beside ElementwiseBinary's: as JAX's primitives, their binds take
# scalar operands beside arrays (a jaxpr's `mul b 2.0:f32[]`).
_ELEMENTWISE = frozenset({"pow", "select_n", "clamp"})


def _broadcast_scalars(args):
    """Operands broadcast to one shape, as JAX's elementwise primitives take them: scalars
    beside arrays, and arrays of one rank whose dims are equal or 1 (a jaxpr's
    `add a:f32[2] b:f32[1]`). Other shapes: args as given (the op reports them)."""
    shapes = [np.shape(a) for a in args]
    ranked = {s for s in shapes if s != ()}
    if len(ranked) <= 1 and (not ranked or () not in shapes):
        return args
    ranks = {len(s) for s in ranked}
    if len(ranks) != 1:
        return args
    try:
        shape = np.broadcast_shapes(*ranked)
    except ValueError:
        return args
    rank = len(shape)
    return [a if s == shape else _implicit(a, bind_op(
                BroadcastInDimOp, a, shape=shape,
                broadcast_dimensions=() if s == () else tuple(range(rank))))
            for a, s in zip(args, shapes)]


def _implicit(x, out):
    """`out`, the broadcast of operand `x`, marked as lax's implicit broadcasts are (JAX's
    jaxpr has no equation there: the printer leaves it out and the Mosaic lowering only
    broadcasts, as JAX's lowering of the elementwise op does)."""
    if isinstance(out, Tracer) and out.value is not None and not (
            isinstance(x, Tracer) and out.value == x.value):
        owner = defining_op(out.value)
        if owner is not None:
            mark(owner, "mjax.implicit_broadcast")
    return out


# Ops whose JAX primitives always give a list of results.
_MULTIPLE_RESULTS = frozenset({
    "cond", "while", "scan", "call", "checkpoint", "custom_jvp_call", "custom_vjp_call",
    "sort", "reduce", "reduce_window", "callback", "optimization_barrier", "psum",
    "rng_bit_generator", "eigh", "svd", "qr", "lu", "eig", "top_k", "custom_linear_solve",
    "unstack", "split", "threefry2x32"})


class FunctionPrimitive(Primitive):
    """A JAX primitive that mjax composes from other ops (lax.tile_p: a broadcast):
    a named object libraries can key their tables by; `bind` calls the function."""

    def __init__(self, name: str, fun: Callable | None):
        super().__init__(name)
        self.fun = fun

    def bind(self, *args, **params):
        if self.fun is None:
            raise NotImplementedError(f"mjax has no primitive '{self.name}' to bind "
                                      f"(JAX's {self.name}_p)")
        return self.fun(*args, **params)

    impl = bind


def primitive_of(op: type) -> OpPrimitive:
    """The one Primitive object of op class `op`."""
    prim = _OP_PRIMITIVES.get(op)
    if prim is None:
        prim = _OP_PRIMITIVES[op] = OpPrimitive(op)
    return prim


def op_primitives() -> dict[str, OpPrimitive]:
    """`<name>_p` -> the Primitive of each op of the dialect (transformation ops and
    user primitives excluded: JAX's names for those are not one op's)."""
    return {f"{cls.primitive}_p": primitive_of(cls) for cls in OPS.values()
            if not issubclass(cls, (T.TransformOp, UserPrimitiveOp))}


_OP_PRIMITIVES: dict = {}


# ---- what the user's rules receive ----------------------------------------------------
def tangent_aval(aval) -> ShapedArray:
    """The aval of a tangent of a value of `aval` (float0 for integers and booleans)."""
    dt = np.dtype(aval.dtype)
    inexact = "float" in dt.name or "complex" in dt.name    # (bfloat16, float8_* too)
    return ShapedArray(aval.shape, dt if inexact else dtypes.float0)


class Zero:
    """A symbolic zero tangent of aval `aval` (JAX: ad_util.Zero)."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"

    @staticmethod
    def from_primal_value(val) -> "Zero":
        return Zero(tangent_aval(aval_of_value(val)))

    def instantiate(self):
        return zeros(self.aval)


class UndefinedPrimal:
    """A linear operand of a transpose rule (its primal value is not known)."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def zeros(aval):
    """Zeros of `aval`'s shape and dtype (a splat, which a trace inlines as a constant)."""
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


def _dense(x, aval):
    """A rule's tangent or cotangent: zeros for None or a symbolic zero."""
    # (rules may return the class Zero itself, as equinox's do)
    if x is None or x is Zero or isinstance(x, Zero) or type(x).__name__ == "SymbolicZero":
        return zeros(aval)
    return x


# ---- staging a bind ---------------------------------------------------------------------
def _stage(prim: Primitive, args, params) -> Any:
    trace = current_trace()
    avals = [a.aval if isinstance(a, Tracer) else aval_of_value(a) for a in args]
    out, effects = prim.abstract_eval(*avals, **params)
    out_avals = [_as_aval(a, prim) for a in (out if prim.multiple_results else [out])]
    attrs = UserPrimitiveOp.check_params(dict(
        name=prim.name, rule=_handle(prim, params, avals, out_avals, _eager_impl(prim)),
        params={k: _show(v) for k, v in params.items()} or None,
        result_shapes=tuple(a.shape for a in out_avals),
        result_dtypes=tuple(a.dtype for a in out_avals),
        effects=", ".join(sorted(type(e).__name__ for e in effects)) or None))

    def stage():
        tracers = [trace.to_tracer(a) for a in args]
        UserPrimitiveOp.staged = True
        with context():
            outs = trace.emit(UserPrimitiveOp, tracers, attrs,
                              [a.strip_weak_type() for a in out_avals])
        for t, a in zip(outs, out_avals):
            t.aval = a
        return outs
    outs = registration.EAGER_PRIMITIVE_JVP(prim, args, params, stage)
    return outs if prim.multiple_results else outs[0]


def _as_aval(a, prim) -> ShapedArray:
    if isinstance(a, ShapedArray):
        return a
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return ShapedArray(tuple(a.shape), np.dtype(a.dtype),
                           weak_type=bool(getattr(a, "weak_type", False)))
    raise TypeError(f"the abstract evaluation rule of primitive '{prim.name}' returned "
                    f"{a!r}, not a ShapedArray (or a list of them with "
                    f"multiple_results=True)")


def _show(v) -> str:
    """A parameter as the op shows it: one line, at most 80 characters (a function by
    its name; a jaxpr or a long value cut short)."""
    text = str(getattr(v, "__name__", v)) if callable(v) else str(v)
    lines = text.splitlines() or [""]
    return lines[0] if len(lines) == 1 and len(text) <= 80 else lines[0][:77] + "..."


_HANDLES: dict = {}


class _RulesOfEagerBinds(threading.local):
    on = False          # (tracing the rules of a bind made where JAX evaluates eagerly)


_eager_rules = _RulesOfEagerBinds()


def _eagerly() -> bool:
    """Whether a bind now is one JAX would evaluate op by op: inside grad, vmap & co.
    called outside jit (their outermost trace knows its arguments' values), or in the
    rules the passes trace for such a bind."""
    stack = trace_stack()
    return _eager_rules.on or bool(stack) and stack[0].concrete is not None


def _eager_impl(prim) -> bool:
    """Whether this bind runs `prim`'s impl rule when the program runs: bound where JAX
    evaluates eagerly, with an impl and no lowering. Then JAX runs the impl and the
    Python rules at each call (an eager call traces each time; its program is lowered
    each time too: frontend/ad/staging.py)."""
    return lowering_of(prim) is None and "impl" in vars(prim) and _eagerly()


def _handle(prim, params, avals, out_avals, eager=False) -> str:
    """The rule handle of this bind, shared by binds of the same primitive, parameters
    and operand types when the parameters can be hashed."""
    in_avals = tuple(a.strip_weak_type() for a in avals)
    try:
        key = (id(prim), tuple(sorted(params.items())), in_avals, eager)
        hash(key)
    except TypeError:
        key = None
    if key is not None:
        handle = _HANDLES.get(key)
        source = custom_rules.source_of(handle) if handle is not None else None
        if source is not None and source.prim is prim:
            return handle
    handle = custom_rules.register(_Binding(prim, params, in_avals, out_avals, eager),
                                   prim.name)
    if key is not None:
        if len(_HANDLES) > 4096:     # (the registry forgets old handles too)
            _HANDLES.clear()
        _HANDLES[key] = handle
    return handle


class LowerFun:
    """A lowering that traces `fun(*operands, **params)` in the primitive's place
    (JAX: mlir.lower_fun)."""

    def __init__(self, fun: Callable, multiple_results: bool = True):
        self.fun, self.multiple_results = fun, multiple_results

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError("a lower_fun lowering is traced by mjax's passes, "
                                  "not called")


class LoweringRuleContext:
    """What a lowering rule written with MLIR's builders gets (JAX's
    mlir.LoweringRuleContext, in part): operand and result avals, the platform."""

    def __init__(self, avals_in, avals_out, platforms=("cpu",)):
        self.avals_in, self.avals_out = list(avals_in), list(avals_out)
        self.platforms = tuple(platforms)
        self.module_context = self
        self.tokens_in = self.tokens_out = None
        self.keepalives: list = []

    def set_tokens_out(self, tokens):
        self.tokens_out = tokens

    def add_keepalive(self, keepalive) -> None:
        """(JAX's module context keeps objects alive as long as the executable; mjax's
        host callbacks live in a process registry, so this only holds on to them)"""
        self.keepalives.append(keepalive)


def _platform() -> str:
    return str(target_platform()).lower()


def lowering_of(prim):
    """The lowering rule registered for `prim` on this platform (None: none)."""
    rules = LOWERINGS.get(prim, {})
    platform = _platform()
    for key in (platform, platform_record(platform).rule_family, None):
        if key in rules:
            return rules[key]
    return None


class _Binding:
    """One bind of a user primitive (primitive, parameters, operand types) as the passes
    see it: a source of rules (passes/custom_rules.py) that traces a rule on demand."""

    def __init__(self, prim, params, in_avals, out_avals, eager=False):
        self.prim, self.params, self.eager = prim, dict(params), eager
        self.in_avals = list(in_avals)
        self.out_avals = [a.strip_weak_type() for a in out_avals]

    def _many(self, x) -> list:
        return list(x) if self.prim.multiple_results else [x]

    def _one(self, xs):
        return list(xs) if self.prim.multiple_results else xs[0]

    # -- rules written against MLIR's builders ----------------------------------------
    def lowers_directly(self) -> bool:
        rule = lowering_of(self.prim)
        return rule is not None and not isinstance(rule, LowerFun)

    def lower(self, ctx, operands) -> list:
        rule = lowering_of(self.prim)
        lctx = LoweringRuleContext(ctx.avals_in, ctx.avals_out, (_platform(),))
        out = rule(lctx, *operands, **self.params)
        if is_value(out):
            return [out]
        flat = []
        for x in out:
            flat.extend(x if isinstance(x, (list, tuple)) else [x])
        return flat

    # -- rules traced into the module ---------------------------------------------------
    def trace(self, module, part: str) -> str:
        kind, _, spec = part.partition(":")
        body, avals = getattr(self, f"_{kind}")(spec)
        saved, _eager_rules.on = _eager_rules.on, self.eager
        try:
            fn = _trace_into(module, body, avals, f"{self.prim.name}_{kind}")
        finally:
            _eager_rules.on = saved
        if kind == "batch":
            set_attr(fn, OUT_DIMS, tuple(-1 if d is None else int(d) for d in self._out_dims))
        return string_attr(fn, "sym_name")

    def _missing(self, what: str):
        return NotImplementedError(what.format(name=self.prim.name))

    def _lower(self, spec):
        rule = lowering_of(self.prim)
        if rule is None and self.eager:
            return self._impl_callback(), self.in_avals
        if rule is None:
            raise self._missing("MLIR translation rule for primitive '{name}' not found "
                                f"for platform {_platform()}")
        params = self.params

        def body(*xs):
            out = rule.fun(*xs, **params)
            return list(out) if rule.multiple_results else [out]
        return body, self.in_avals

    def _impl_callback(self):
        """A primitive without a lowering, bound where JAX evaluates op by op (grad,
        vmap, checkpoint... called outside jit): its impl rule, run on the operands'
        values each time the program runs, as JAX runs it at each call."""
        prim, params = self.prim, self.params
        cid = register_callback(lambda *xs: self._many(prim.impl(*xs, **params)),
                                "io_callback", ("impl", prim, tuple(sorted(params.items()))))
        avals = self.out_avals

        def body(*xs):
            outs = bind_op(CallbackOp, *xs, callback_id=cid, effect="ordered",
                           result_shapes=tuple(tuple(a.shape) for a in avals) or None,
                           result_dtypes=tuple(a.dtype for a in avals) or None,
                           _weak_type=False)
            return list(outs) if isinstance(outs, (list, tuple)) else [outs]
        return body

    def _jvp(self, spec):
        rule = JVPS.get(self.prim)
        if rule is None:
            raise self._missing("Differentiation rule for '{name}' not implemented")
        nonzero = [c == "1" for c in spec]
        n, params = len(self.in_avals), self.params
        t_avals = [tangent_aval(a) for a, nz in zip(self.in_avals, nonzero) if nz]

        def body(*xs):
            given = iter(xs[n:])
            tangents = [next(given) if nz else Zero(tangent_aval(a))
                        for a, nz in zip(self.in_avals, nonzero)]
            out, tout = rule(list(xs[:n]), tangents, **params)
            outs, touts = self._many(out), self._many(tout)
            return outs + [_dense(t, a) for t, a in zip(touts, self.out_avals)
                           if tangent_aval(a).dtype == a.dtype]
        return body, self.in_avals + t_avals

    def _transpose(self, spec):
        rule = TRANSPOSES.get(self.prim)
        if rule is None:
            raise self._missing("Transpose rule (for reverse-mode differentiation) for "
                                "'{name}' not implemented")
        lin_text, _, ct_text = spec.partition(":")
        linear, has_ct = [c == "1" for c in lin_text], [c == "1" for c in ct_text]
        params = self.params
        avals = ([a for a, lin in zip(self.in_avals, linear) if not lin]
                 + [a for a, c in zip(self.out_avals, has_ct) if c])

        def body(*xs):
            given = iter(xs)
            operands = [UndefinedPrimal(a) if lin else next(given)
                        for a, lin in zip(self.in_avals, linear)]
            cts = [next(given) if c else Zero(a) for a, c in zip(self.out_avals, has_ct)]
            got = list(rule(self._one(cts), *operands, **params))
            if len(got) != len(operands):
                raise ValueError(f"the transpose rule of '{self.prim.name}' returned "
                                 f"{len(got)} cotangents for {len(operands)} operands")
            return [_dense(g, a) for g, a, lin in zip(got, self.in_avals, linear) if lin]
        return body, avals

    def _batch(self, spec):
        rule = BATCHERS.get(self.prim)
        if rule is None:
            raise self._missing("Batching rule for '{name}' not implemented")
        dims_text, _, size = spec.partition(":")
        dims = tuple(None if d == "n" else int(d) for d in dims_text.split(",")) \
            if dims_text else ()
        avals = [a if d is None else ShapedArray(a.shape[:d] + (int(size),) + a.shape[d:],
                                                 a.dtype)
                 for a, d in zip(self.in_avals, dims)]
        params = self.params

        def body(*xs):
            out, out_dims = rule(list(xs), dims, **params)
            self._out_dims = self._many(out_dims)
            return self._many(out)
        return body, avals


def _trace_into(module, body, avals, base: str):
    """Traces body(*avals) into `module` as a private function; values it closes over
    become constants of the function. Returns the func.func."""
    traced = trace_function(body, tuple(avals), {}, name=fresh_name(module, base),
                            module=module, visibility="private")
    if traced.captured:
        consts, inner = traced.captured, traced.name

        def with_consts(*xs):
            return emit_call(inner, list(xs) + [_constant(c, base) for c in consts],
                             traced.out_avals)
        traced = trace_function(with_consts, tuple(avals), {},
                                name=fresh_name(module, base), module=module,
                                visibility="private")
    return traced.trace.func.operation


def _constant(value, base: str):
    """A jaxpr.constant of a concrete value a rule closed over."""
    if isinstance(value, Tracer):
        raise TypeError(f"a rule of user-defined primitive '{base.split('_')[0]}' closes "
                        f"over a traced value ({value.aval.str_short()}); pass it as an "
                        f"operand of the primitive")
    trace = current_trace()
    aval = aval_of_value(value).strip_weak_type()
    with building():
        res = ConstantOp.create([], [aval], {"value": np.asarray(to_numpy(value))},
                                loc=user_location(), ip=trace.ip).results[0]
    return Tracer(trace, res, aval)


__all__ = ["BATCHERS", "FunctionPrimitive", "JVPS", "LOWERINGS", "LowerFun",
           "LoweringRuleContext", "OpPrimitive", "Primitive", "TRANSPOSES",
           "UndefinedPrimal", "Zero", "lowering_of", "no_effects", "op_primitives",
           "primitive_of", "tangent_aval", "zeros"]
