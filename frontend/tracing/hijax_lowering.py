"""hijax's high-level types at mjax's transformation boundaries.

A hi value (an instance of a class given to `register_hitype`) never becomes an mjax
tracer: at a jit boundary it is lowered to its lo values (`lower_val`, or `read_loval`
with its current type state for a mutable type), the lo values are traced, and inside the
trace the traced function sees a HiTracer over them (mjax/tracing/hijax_tracer.py; a mutable
type's value raised again by `new_from_loval`). A `HiPrimitive` applies its `to_lojax` at
once (so mjax's IR only ever holds lo ops; its immutable hi results are HiTracers). After the traced function returns, its hi results are lowered to lo results and
raised again outside; each mutable argument's final lo state is an extra result, written
back into the caller's object with `update_from_loval`.

`Lowered` and `lower_results` / `raise_results` are the two halves, shared by jit
(`jit_dispatch`, `jit_call`, `jit_trace`), eval_shape (`eval_shape_hi`), value_and_grad
/ grad (`value_and_grad_hi`), vjp (`vjp_hi`) and lax.scan (`scan_values_hi`).

A mutable hi value a traced function closes over and mutates (through a HiPrimitive) is
found by `bind_hi` (CapturedHiError: the trace does not own it); jit, grad and scan then
trace again taking it over (its state in as a hidden argument or carry, its final state
out and written back). Elsewhere that error is the user's NotImplementedError.

A hi value whose tangent type is an array may carry a tangent handle (an array of that
type, zeros, that differentiation sees in its place: experimental/hijax_vjp_hi.py); it
travels with the value's lo values across these boundaries.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from mjax.base import tree_util
from mjax.tracing.core import current_trace
from mjax.specs.dtypes import aval_of_value, hi_aval, hitype_rules
from mjax.tracing.hijax_tracer import (HiTracer, attach_handle, check_constants, handle_of,
                                       mark_hi_signature)
from mjax.tracing.tracer import Tracer


def cur_qdd(x):
    """A mutable hi value's current type state (JAX: jax.experimental.cur_qdd). In mjax a
    hi value is always its own Python object (over tracers inside a trace), so this is
    what the value says."""
    return x.cur_qdd()


class HandleSpec(tuple):
    """The spec (hi type, None) of an immutable hi value that carries a tangent handle
    (hijax_vjp_hi): its handle travels as one more lo value, after the type's."""
    handle = True


def _spec(x):
    """(hi type, type state or None) of a hi value; None for anything else."""
    aval = hi_aval(x)
    if aval is None:
        return None
    if aval.has_qdd:
        return (aval, x.cur_qdd())
    return HandleSpec((aval, None)) if handle_of(x) is not None else (aval, None)


def lower_value(spec, x) -> list:
    aval, qdd = spec
    if qdd is not None:
        return list(aval.read_loval(qdd, x))
    if type(x) is HiTracer:      # (its lo values are at hand)
        return list(x.lo) + ([handle_of(x)] if getattr(spec, "handle", False) else [])
    lower = getattr(type(aval), "lower_val", None)
    if lower is None:
        raise NotImplementedError(f"passing a value of hi type {aval!r} through a "
                                  f"transformation: its type defines no lower_val")
    lo = list(aval.lower_val(x))
    return lo + [handle_of(x)] if getattr(spec, "handle", False) else lo


def raise_value(spec, lo, traced: bool = False, retype: bool = False, aval=None):
    """The hi value of `spec` over lo values `lo`: a HiTracer if `traced` (what traced
    user code sees of an immutable type) of type `aval` (default: the spec's, or with
    `retype` the one the lo values give), else the type's value class."""
    spec_aval, qdd = spec
    if qdd is not None:
        return spec_aval.new_from_loval(qdd, *lo)
    if traced:
        handle = getattr(spec, "handle", False)
        lo = list(lo)
        vals = lo[:-1] if handle else lo
        # (retyped: a shard_map body's or a scan body's values are per shard / per
        # iteration)
        if aval is None:
            aval = (retype and hi_aval(spec_aval.raise_val(*vals))) or spec_aval
        x = HiTracer(aval, vals)
        if handle:
            attach_handle(x, lo[-1])
        return x
    if getattr(spec, "handle", False):
        x = spec_aval.raise_val(*lo[:-1])
        attach_handle(x, lo[-1])
        return x
    return spec_aval.raise_val(*lo)


# ---- tangent handles (hijax_vjp_hi) -----------------------------------------------------
def tangent_array_aval(spec):
    """The tangent type of an immutable hi type when it is an array type (a handle can
    stand for the value's tangent), else None."""
    aval, qdd = spec
    if qdd is not None:
        return None
    try:
        t = aval.to_tangent_aval()
    except NotImplementedError:
        return None
    return None if getattr(t, "is_high", False) or not hasattr(t, "shape") else t


def has_hi(tree) -> bool:
    """Whether a pytree holds a hi value (cheap when no hi type is registered)."""
    if not hitype_rules:
        return False
    return any(hi_aval(x) is not None for x in tree_util.tree_leaves(tree))


class Lowered:
    """A pytree's hi leaves lowered: `packed` is the tree with each hi leaf replaced by the
    tuple of its lo values (so flattening it gives lo leaves only); `specs` and `counts`
    say, per leaf of the original tree, its hi type (None: an ordinary leaf) and how many
    lo leaves stand for it."""

    def __init__(self, tree):
        leaves, self.treedef = tree_util.tree_flatten(tree)
        self.specs = [_spec(x) for x in leaves]
        self.leaves = leaves
        self.packs, self.counts, self.raisers = [], [], {}
        for x, s in zip(leaves, self.specs):
            if s is None:
                self.packs.append(x)
                self.counts.append(1)
            else:
                lo = lower_value(s, x)
                self.packs.append(tuple(lo))
                self.counts.append(len(lo))
        self.packed = tree_util.tree_unflatten(self.treedef, self.packs)

    def substitute(self, k: int, value, raiser) -> None:
        """Leaf k travels as the one lo value `value`, and is raised by raiser(value)."""
        self.packs[k], self.counts[k], self.raisers[k] = value, 1, raiser
        self.packed = tree_util.tree_unflatten(self.treedef, self.packs)

    def key(self):
        """What a trace of the packed tree depends on: structure, hi types and states."""
        return (self.treedef, tuple(self.specs), tuple(self.counts))

    def raise_flat(self, lo_leaves, traced: bool = False, retype: bool = False):
        """The original tree over `lo_leaves` (the packed tree's leaves, e.g. tracers):
        each hi leaf raised from its lo values (see raise_value); also the raised hi
        leaves."""
        it = iter(lo_leaves)
        out, raised = [], []
        for k, (s, n) in enumerate(zip(self.specs, self.counts)):
            if k in self.raisers:
                x = self.raisers[k](next(it))
                out.append(x)
                raised.append((s, x))
            elif s is None:
                out.append(next(it))
            else:
                x = raise_value(s, [next(it) for _ in range(n)], traced, retype)
                out.append(x)
                raised.append((s, x))
        return tree_util.tree_unflatten(self.treedef, out), raised


def lower_results(out, handles: bool = True):
    """(flat lo results, how to raise them): a traced function's results with hi leaves
    lowered, in order (without their tangent handles if not `handles`)."""
    leaves, treedef = tree_util.tree_flatten(out)
    flat, specs, counts = [], [], []
    for x in leaves:
        s = _spec(x)
        if not handles and getattr(s, "handle", False):
            s = tuple(s)
        lo = [x] if s is None else lower_value(s, x)
        flat += lo
        specs.append(s)
        counts.append(len(lo))
    return flat, (treedef, specs, counts)


def raise_results(flat, how, traced: bool | None = None, avals=None):
    """The results `how` describes over lo values `flat`; hi ones as HiTracers under a
    trace (unless `traced` says otherwise), of types `avals` (one per leaf) if given."""
    treedef, specs, counts = how
    if traced is None:
        traced = current_trace() is not None
    it = iter(flat)
    leaves = []
    for k, (s, n) in enumerate(zip(specs, counts)):
        lo = [next(it) for _ in range(n)]
        leaves.append(lo[0] if s is None else raise_value(
            s, lo, traced, aval=None if avals is None else avals[k]))
    return tree_util.tree_unflatten(treedef, leaves)


def final_states(raised) -> tuple[list, list]:
    """For the mutable hi arguments raised in a trace: their final (type, state) and lo
    values, to write back after the trace."""
    specs, flat, counts = [], [], []
    for (aval, qdd), x in raised:
        if qdd is None:
            continue
        spec = (aval, x.cur_qdd())
        lo = lower_value(spec, x)
        specs.append(spec)
        counts.append(len(lo))
        flat += lo
    return flat, (specs, counts)


def write_back(lowered: Lowered, flat, how) -> None:
    """update_from_loval on the caller's mutable hi arguments, from their final lo
    values."""
    specs, counts = how
    mutable = [x for s, x in zip(lowered.specs, lowered.leaves)
               if s is not None and s[1] is not None]
    it = iter(flat)
    for x, (aval, qdd), n in zip(mutable, specs, counts):
        aval.update_from_loval(qdd, x, *[next(it) for _ in range(n)])


# ---- binding a HiPrimitive; mutable hi values a trace closes over ------------------------
# trace -> ids of the mutable hi values that trace may mutate: those it raised from its
# arguments, those a HiPrimitive made in it, those it took over as closed over.
_OWNED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# The key under which jit and grad pass the closed-over mutable values they took over.
HIDDEN = "__mjax_hijax_captured__"


class CapturedHiError(NotImplementedError):
    """A HiPrimitive mutated a mutable hi value that the current trace closed over (did
    not get as an argument). jit and grad catch it and trace again, taking the value over
    (its state in, its final state out); elsewhere (lax.scan, vmap, ...) it is the
    NotImplementedError the user sees."""

    def __init__(self, value):
        self.value = value
        super().__init__(
            f"a mutable hijax value of type {hi_aval(value)!r} closed over by a traced "
            f"function was mutated in it: mjax supports that under jit, grad and "
            f"value_and_grad only (pass the value as an argument instead)")


def _own(x) -> None:
    trace = current_trace()
    if trace is not None:
        _OWNED.setdefault(trace, set()).add(id(x))


def _state_snapshot(x) -> dict:
    """A hi value's attributes (its __dict__ and slots), read without its __getattr__."""
    try:
        snap = dict(object.__getattribute__(x, "__dict__"))
    except AttributeError:
        snap = {}
    for cls in type(x).__mro__:
        for name in cls.__dict__.get("__slots__", ()):
            slot = cls.__dict__.get(name)
            if name == "__weakref__" or slot is None or not hasattr(slot, "__get__"):
                continue
            try:
                snap[name] = slot.__get__(x, type(x))
            except AttributeError:
                continue
    return snap


def _state_tracers(snap: dict) -> set:
    """ids of the tracers a hi value's attributes hold."""
    return {id(t) for t in tree_util.tree_leaves(list(snap.values()))
            if isinstance(t, Tracer)}


def bind_hi(prim, args, params):
    """A HiPrimitive's bind: its to_lojax. Under a trace, a mutable hi argument the trace
    does not own that gains tracers is a closed-over value being mutated: it is put back
    as it was and CapturedHiError raised (jit and grad then take it over)."""
    trace = current_trace()
    watched = []
    if trace is not None:
        owned = _OWNED.setdefault(trace, set())
        for x in args:
            aval = hi_aval(x)
            if aval is not None and aval.has_qdd and id(x) not in owned:
                snap = _state_snapshot(x)
                watched.append((x, _state_tracers(snap), snap))
    out = prim.to_lojax(*args, **params)
    for x, before, snap in watched:
        if _state_tracers(_state_snapshot(x)) - before:
            for name, value in snap.items():
                object.__setattr__(x, name, value)
            raise CapturedHiError(x)
    if trace is None:
        return list(out) if prim.multiple_results else out
    outs = [_traced(y) for y in (out if prim.multiple_results else [out])]
    for y in outs:
        if hi_aval(y) is not None:
            _OWNED[trace].add(id(y))
    return outs if prim.multiple_results else outs[0]


def _traced(y):
    """A value traced code gets: an immutable hi value as a HiTracer over its lo values."""
    spec = _spec(y)
    if spec is None or spec[1] is not None or type(y) is HiTracer:
        return y
    return raise_value(spec, lower_value(spec, y), traced=True)


def enter_traced(raised, hidden_raised, originals) -> tuple[list, list]:
    """In a trace of lo values: makes the raised hi arguments owned by the trace and sets
    each taken-over closed-over value (`originals`) to the state of its raised copy.
    Gives the (spec, value) list for final_states (originals in their copies' places) and
    what `leave_traced` restores."""
    for _, x in raised:
        _own(x)
    swap = {id(r): x for r, x in zip(hidden_raised, originals)}
    restore = []
    for spec, r in raised:
        x = swap.get(id(r))
        if x is None:
            continue
        aval, qdd = spec
        saved = lower_value((aval, x.cur_qdd()), x)
        restore.append((x, (aval, x.cur_qdd()), saved))
        _own(x)
        aval.update_from_loval(qdd, x, *lower_value(spec, r))
    return [(s, swap.get(id(r), r)) for s, r in raised], restore


def leave_traced(restore) -> None:
    """Puts the taken-over closed-over values back to their states before the trace."""
    for x, (aval, qdd), saved in restore:
        aval.update_from_loval(qdd, x, *saved)


def guarded(fun, restore, *args, **kwargs):
    """fun(*args, **kwargs), putting the taken-over values back if it raises."""
    try:
        return fun(*args, **kwargs)
    except BaseException:
        leave_traced(restore)
        raise


def retrying(call, captured: list):
    """call(captured) until no new closed-over mutable value turns up (CapturedHiError):
    each one found is added to `captured` (a list the caller may keep)."""
    while True:
        try:
            return call(captured)
        except CapturedHiError as e:
            if any(e.value is c for c in captured):
                raise
            captured.append(e.value)


def vjp_hi(vjp, fun, primals, has_aux):
    """vjp with hi primal values (immutable): lowered as for grad (a hi primal whose
    tangent type is an array through a tangent handle); the returned function gives
    cotangents of the primals' types."""
    lowered = Lowered(tuple(primals))
    for k, spec in enumerate(lowered.specs):
        if spec is None:
            continue
        if spec[1] is not None:
            raise NotImplementedError(f"vjp with a mutable hijax primal of type {spec[0]!r}")
        t = tangent_array_aval(spec)
        if t is not None:
            lo = lower_value((spec[0], None), lowered.leaves[k])
            lowered.substitute(k, jnp_zeros(t), _handle_raiser(spec[0], lo))
    record = {}

    def lowered_fun(*a):
        hi, raised = lowered.raise_flat(tree_util.tree_leaves(a), traced=True)
        enter_traced(raised, (), ())
        out = fun(*hi)
        main, aux = out if has_aux else (out, None)
        if has_hi(main):
            raise NotImplementedError("vjp of a function returning hijax values")
        if not has_aux:
            return main
        aux_flat, record["aux"] = lower_results(aux, handles=False)
        return main, aux_flat

    res = vjp(lowered_fun, *tree_util.tree_unflatten(lowered.treedef, lowered.packs),
              has_aux=has_aux)
    pullback = res[1]

    def hi_pullback(ct):
        it = iter(tree_util.tree_leaves(pullback(ct)))
        leaves = []
        for k, (s, n) in enumerate(zip(lowered.specs, lowered.counts)):
            cts = [next(it) for _ in range(n)]
            leaves.append(cts[0] if s is None or k in lowered.raisers
                          else _raise_cotangent(s, cts))
        return tree_util.tree_unflatten(lowered.treedef, leaves)
    if has_aux:
        return res[0], hi_pullback, raise_results(res[2], record["aux"])
    return res[0], hi_pullback


# ---- vmap -------------------------------------------------------------------------------
def check_vmap_hi(leaves, axes) -> None:
    """vmap mapping a hi value: NotImplementedError (JAX 0.10.2's hijax has no mapping
    specs either; a hi value with in_axes None is closed over, and works)."""
    for x, d in zip(leaves, axes):
        if d is not None and hi_aval(x) is not None:
            raise NotImplementedError(
                f"vmap over a value of hi type {hi_aval(x)!r} (in_axes {d!r}): mjax does "
                f"not batch hijax values (pass it with in_axes=None to close over it)")


# ---- lax.scan ---------------------------------------------------------------------------
def scan_hi(scan, f, init, xs):
    """lax.scan whose body mutates closed-over mutable hi values: their lo states become
    part of the carry (`scan(body, init, xs)` is the ordinary scan of the rest)."""
    return retrying(lambda c: _scan_hi(scan, f, init, xs, c), [])


def _with_handles(tree):
    """tree with a zero tangent handle on each immutable hi leaf whose tangent type is an
    array and which has none (so a loop carry's lo structure does not change)."""
    for x in tree_util.tree_leaves(tree):
        spec = _spec(x)
        t = None if spec is None else tangent_array_aval(spec)
        if t is not None and handle_of(x) is None:
            attach_handle(x, jnp_zeros(t))
    return tree


def scan_values_hi(scan, f, init, xs):
    """lax.scan with hi values in the carry, the scanned-over values or the stacked
    results: the loop runs over their lo values (a hi value's lo values are stacked or
    sliced along their leading axis, and raised by the type's raise_val)."""
    if any(_spec(x) is not None and _spec(x)[1] is not None
           for x in tree_util.tree_leaves((init, xs))):
        raise NotImplementedError("lax.scan with mutable hijax values in its carry or "
                                  "scanned-over values")
    carry_in = Lowered(_with_handles(init))
    xs_in = Lowered(xs)
    record = {}

    def body(c_lo, x_lo):
        c, _ = carry_in.raise_flat(tree_util.tree_leaves(c_lo), traced=True, retype=True)
        x, _ = xs_in.raise_flat(tree_util.tree_leaves(x_lo), traced=True, retype=True)
        c, y = f(c, x)
        c_out = Lowered(_with_handles(c))
        if c_out.key() != carry_in.key():
            raise TypeError(f"scan body function carry input and carry output must have "
                            f"the same hi types: {carry_in.specs} and {c_out.specs}")
        y_flat, record["ys"] = lower_results(_with_handles(y))
        return c_out.packed, y_flat

    c_lo, ys = scan(body, carry_in.packed, xs_in.packed)
    carry, _ = carry_in.raise_flat(tree_util.tree_leaves(c_lo),
                                   traced=current_trace() is not None, retype=True)
    return carry, raise_results(list(ys), record["ys"])


def _scan_hi(scan, f, init, xs, captured):
    specs = [(hi_aval(x), x.cur_qdd()) for x in captured]
    states = [lower_value(s, x) for s, x in zip(specs, captured)]

    def body(carry, x):
        c, lo = carry
        restore = []
        for (aval, qdd), obj, vals in zip(specs, captured, lo):
            now = (aval, obj.cur_qdd())
            restore.append((obj, now, lower_value(now, obj)))
            _own(obj)
            aval.update_from_loval(qdd, obj, *vals)
        c, y = guarded(f, restore, c, x)
        lo = [lower_value((aval, obj.cur_qdd()), obj) for (aval, _), obj in
              zip(specs, captured)]
        leave_traced(restore)
        return (c, lo), y

    (carry, states), ys = scan(body, (init, states), xs)
    for (aval, qdd), obj, vals in zip(specs, captured, states):
        aval.update_from_loval(qdd, obj, *vals)
    return carry, ys


# ---- jit --------------------------------------------------------------------------------
class HiResultError(TypeError):
    """A traced function returned a hi value where mjax traced it as a lo function: the
    jit that traced it retries through jit_call (and keeps doing so: HI_RESULTS)."""


# The jits whose functions return hi values or mutate closed-over ones: their calls all
# go through jit_call.
HI_RESULTS: weakref.WeakSet = weakref.WeakSet()
# The jits of lowered functions jit_call makes: their calls are ordinary.
LO_ONLY: weakref.WeakSet = weakref.WeakSet()

# Jitted -> {key: (the jit of the lowered function, its record of how to raise results)}
_JIT_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _lo_aval(x):
    try:
        return aval_of_value(x)
    except TypeError:
        return type(x)


def _dynamic(jitted, args, kwargs):
    static, names = set(jitted.static_argnums), set(jitted.static_argnames)
    return ([a for i, a in enumerate(args) if i not in static],
            {k: v for k, v in kwargs.items() if k not in names})


def _with_dynamic(jitted, args, kwargs, dyn_args, dyn_kwargs):
    static = set(jitted.static_argnums)
    it = iter(dyn_args)
    full = [a if i in static else next(it) for i, a in enumerate(args)]
    kw = {k: (dyn_kwargs[k] if k in dyn_kwargs else v) for k, v in kwargs.items()}
    return full, kw


def _lowered_jit(jitted, jit_cls, args, kwargs, captured):
    """The jit of `jitted`'s function over lo values for these arguments (and the
    closed-over mutable hi values it took over), the lowering of the arguments, and the
    record its trace fills."""
    if tree_util.tree_leaves((jitted._in_shardings, jitted._out_shardings)):
        raise NotImplementedError("jit with in_shardings/out_shardings of a function "
                                  "called with hijax values")
    if captured:
        kwargs = {**kwargs, HIDDEN: tuple(captured)}
    dyn_args, dyn_kwargs = _dynamic(jitted, args, kwargs)
    lowered = Lowered((dyn_args, dyn_kwargs))
    lo_leaves = tree_util.tree_leaves(lowered.packed)
    # (results keep their tangent handles only for an enclosing trace: hijax_vjp_hi)
    handles = current_trace() is not None
    key = (lowered.key(), jitted._split(args, kwargs)[2],
           tuple(_lo_aval(x) for x in lo_leaves), handles)
    table = _JIT_CACHES.setdefault(jitted, {})
    hit = table.get(key)
    if hit is None:
        record = {}
        fun = jitted.fun

        originals = tuple(captured)

        def lowered_fun(*a, **kw):
            dyn_a, dyn_kw = _dynamic(jitted, a, kw)
            (hi_a, hi_kw), raised = lowered.raise_flat(
                tree_util.tree_leaves((dyn_a, dyn_kw)), traced=True)
            raised, restore = enter_traced(raised, hi_kw.pop(HIDDEN, ()), originals)
            kw.pop(HIDDEN, None)
            full, full_kw = _with_dynamic(jitted, a, kw, hi_a, hi_kw)
            out = guarded(fun, restore, *full, **full_kw)
            guarded(check_constants, restore, out)
            flat, record["out"] = lower_results(out, handles)
            mark_hi_signature(lowered.specs, lowered.counts, record["out"])
            finals, record["finals"] = final_states(raised)
            leave_traced(restore)
            record["n_out"] = len(flat)
            return flat + finals

        lowered_fun.__name__ = getattr(fun, "__name__", "fun")
        inner = jit_cls(lowered_fun, static_argnums=jitted.static_argnums,
                        static_argnames=jitted.static_argnames,
                        donate_argnums=jitted.donate_argnums,
                        donate_argnames=jitted.donate_argnames)
        LO_ONLY.add(inner)
        hit = table[key] = (inner, record)
    dyn_lo_args, dyn_lo_kwargs = lowered.packed
    full, full_kw = _with_dynamic(jitted, args, kwargs, dyn_lo_args, dyn_lo_kwargs)
    return hit, lowered, full, full_kw


# Jitted -> the closed-over mutable hi values its function mutates (taken over: their
# states are passed in and come back on every call).
_CAPTURED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _jit_call_once(jitted, jit_cls, args, kwargs, captured):
    (inner, record), lowered, full, full_kw = _lowered_jit(jitted, jit_cls, args, kwargs,
                                                           captured)
    flat = inner(*full, **full_kw)
    n = record["n_out"]
    write_back(lowered, flat[n:], record["finals"])
    return raise_results(flat[:n], record["out"])


def jit_call(jitted, jit_cls, args, kwargs):
    """A call of `jitted` with hi values among its arguments or results, or mutating
    closed-over ones (see the module docstring)."""
    HI_RESULTS.add(jitted)
    captured = _CAPTURED.setdefault(jitted, [])
    return retrying(lambda c: _jit_call_once(jitted, jit_cls, args, kwargs, c), captured)


def hi_jit(jitted, args, kwargs) -> bool:
    """Whether a call of `jitted` goes through jit_call: hi arguments, or a function
    known to return hi values or mutate closed-over ones."""
    return bool(hitype_rules) and jitted not in LO_ONLY and (
        jitted in HI_RESULTS or has_hi((args, kwargs)))


_LOCAL = threading.local()


def lo_call(jitted) -> bool:
    """Whether this call of `jitted._call` is an ordinary one: a lowered function's jit,
    or the call jit_dispatch makes (a one-time pass)."""
    if jitted in LO_ONLY:
        return True
    if getattr(_LOCAL, "ordinary", None) is jitted:
        _LOCAL.ordinary = None
        return True
    return False


def jit_dispatch(jitted, jit_cls, args, kwargs, found=None):
    """A jit call's general path once a hi type is registered: jit_call for hijax
    arguments or results (found when tracing raises HiResultError) or closed-over mutable
    values (CapturedHiError); else the ordinary path (`_call` again, let through, with
    the list `found` that collects the cache entry it runs)."""
    if hi_jit(jitted, args, kwargs):
        return jit_call(jitted, jit_cls, args, kwargs)
    _LOCAL.ordinary = jitted
    try:
        return jitted._call(args, kwargs, found)
    except (HiResultError, CapturedHiError):
        return jit_call(jitted, jit_cls, args, kwargs)
    finally:
        _LOCAL.ordinary = None


def jit_trace(jitted, jit_cls, args, kwargs):
    """`jit(f).trace(...)` with hi arguments: the trace of the lowered function (its jaxpr
    shows the lo values)."""
    (inner, _), _, full, full_kw = _lowered_jit(jitted, jit_cls, args, kwargs,
                                                _CAPTURED.get(jitted, []))
    return inner.trace(*full, **full_kw)


def trace_dispatch(jitted, jit_cls, args, kwargs):
    """`jit(f).trace(...)` once a hi type is registered: jit_trace for hi arguments or
    results (HiResultError); else the ordinary trace (`trace` again, let through)."""
    if hi_jit(jitted, args, kwargs):
        return jit_trace(jitted, jit_cls, args, kwargs)
    _LOCAL.ordinary = jitted
    try:
        return jitted.trace(*args, **kwargs)
    except HiResultError:
        HI_RESULTS.add(jitted)
        return jit_trace(jitted, jit_cls, args, kwargs)
    finally:
        _LOCAL.ordinary = None


# ---- eval_shape and grad ---------------------------------------------------------------
def eval_shape_hi(eval_shape, fun, args, kwargs):
    """eval_shape with hi arguments: the shapes of the lowered function's results; a hi
    result comes back as its type (JAX: the aval). The caller's mutable arguments are
    left as they are (nothing runs)."""
    lowered = Lowered((args, kwargs))
    record = {}

    def lowered_fun(*a, **kw):
        (hi_a, hi_kw), raised = lowered.raise_flat(tree_util.tree_leaves((a, kw)),
                                                   traced=True)
        enter_traced(raised, (), ())
        leaves, record["tree"] = tree_util.tree_flatten(fun(*hi_a, **hi_kw))
        record["hi"] = {i: hi_aval(x) for i, x in enumerate(leaves)
                        if hi_aval(x) is not None}
        return [x for i, x in enumerate(leaves) if i not in record["hi"]]

    a, kw = lowered.packed
    structs = iter(eval_shape(lowered_fun, *a, **kw))
    hi = record["hi"]
    return tree_util.tree_unflatten(record["tree"], [
        hi[i] if i in hi else next(structs) for i in range(record["tree"].num_leaves)])


def _handle_raiser(aval, lo):
    """Raises a differentiated hi argument from its (closed-over) lo values, with the
    traced handle its gradient comes back through."""
    def raiser(handle):
        x = HiTracer(aval, lo)
        attach_handle(x, handle)
        return x
    return raiser


def jnp_zeros(aval):
    return np.zeros(aval.shape, aval.dtype)


def _raise_cotangent(spec, cts):
    """A hi argument's gradient from its lo values' cotangents, in the type's tangent
    type: the type itself (or a mutable type with to_tangent_qdd), or one array when the
    type lowers to one array."""
    aval, qdd = spec
    tangent = aval.to_tangent_aval()
    if type(tangent) is type(aval):
        if qdd is None:
            return tangent.raise_val(*cts)
        tqdd = qdd.to_tangent_qdd() if hasattr(qdd, "to_tangent_qdd") else qdd
        return tangent.new_from_loval(tqdd, *cts)
    if len(cts) == 1 and not getattr(tangent, "is_high", False):
        return cts[0]
    raise NotImplementedError(
        f"grad with respect to a value of hi type {aval!r}: mjax differentiates its lo "
        f"values, and cannot form its tangent type {tangent!r} from their cotangents")


def value_and_grad_hi(value_and_grad, fun, argnums, has_aux, options, args, kwargs):
    """value_and_grad with hi arguments, or mutating closed-over hi values (taken over as
    arguments not differentiated): see _value_and_grad_hi."""
    return retrying(lambda c: _value_and_grad_hi(value_and_grad, fun, argnums, has_aux,
                                                 options, args, kwargs, c), [])


def _value_and_grad_hi(value_and_grad, fun, argnums, has_aux, options, args, kwargs,
                       captured):
    """Differentiates the lowered function (w.r.t. the lo values of the arguments in
    argnums), writes mutable arguments' final states back, raises hi gradients into the
    tangent type (see _raise_cotangent)."""
    originals = tuple(captured)
    lowered = Lowered((args, {**kwargs, HIDDEN: originals} if captured else kwargs))
    record = {}
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    offsets, k = [], 0
    for a in args:
        offsets.append(k)
        k += tree_util.tree_structure(a).num_leaves
    for i in nums:
        for k in range(offsets[i], offsets[i] + tree_util.tree_structure(args[i]).num_leaves):
            spec = lowered.specs[k]
            t = None if spec is None else tangent_array_aval(spec)
            if t is not None:     # (differentiated through a tangent handle)
                lo = lower_value((spec[0], None), lowered.leaves[k])
                lowered.substitute(k, jnp_zeros(t), _handle_raiser(spec[0], lo))

    def lowered_fun(*a, **kw):
        (hi_a, hi_kw), raised = lowered.raise_flat(tree_util.tree_leaves((a, kw)),
                                                   traced=True)
        raised, restore = enter_traced(raised, hi_kw.pop(HIDDEN, ()), originals)
        out = guarded(fun, restore, *hi_a, **hi_kw)
        main, aux = out if has_aux else (out, None)
        aux_flat, record["aux"] = lower_results(aux)
        finals, record["finals"] = final_states(raised)
        leave_traced(restore)
        return main, (aux_flat, finals)
    lowered_fun._mjax_hi_lowered = True   # (its value_and_grad is an ordinary one)

    a, kw = lowered.packed
    (value, (aux_flat, finals)), g = value_and_grad(
        lowered_fun, argnums, has_aux=True, **options)(*a, **kw)
    write_back(lowered, finals, record["finals"])
    grads = [g] if single else list(g)
    # the hi leaves of each differentiated argument: raise their cotangents
    out_grads = []
    for i, gi in zip(nums, grads):
        treedef = tree_util.tree_structure(args[i])
        ks = range(offsets[i], offsets[i] + treedef.num_leaves)
        it = iter(tree_util.tree_leaves(gi))
        leaves = []
        for k in ks:
            s, n = lowered.specs[k], lowered.counts[k]
            cts = [next(it) for _ in range(n)]
            leaves.append(cts[0] if s is None or k in lowered.raisers
                          else _raise_cotangent(s, cts))
        out_grads.append(tree_util.tree_unflatten(treedef, leaves))
    out_g = out_grads[0] if single else tuple(out_grads)
    if has_aux:
        return (value, raise_results(aux_flat, record["aux"])), out_g
    return value, out_g


__all__ = ["hi_jit", "jit_dispatch", "trace_dispatch", "lo_call", "check_vmap_hi", "CapturedHiError", "HIDDEN", "HI_RESULTS", "LO_ONLY", "HiResultError", "bind_hi", "Lowered", "attach_handle", "cur_qdd", "handle_of", "tangent_array_aval", "final_states", "has_hi", "jit_call", "jit_trace",
           "lower_results", "lower_value", "eval_shape_hi", "vjp_hi", "scan_hi", "scan_values_hi", "value_and_grad_hi", "raise_results", "raise_value", "write_back"]
