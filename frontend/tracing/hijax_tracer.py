"""Traced values of immutable hijax types, as JAX's traced code sees them.

In JAX a hi value inside a trace is a tracer whose aval is the HiType: reading the value
class's fields fails (they are the type's lo representation, not the tracer's), and the
type's `aval_method`s / `aval_property`s are what the tracer offers. mjax traces the lo
values (mjax/tracing/hijax_lowering.py), so its traced functions see a `HiTracer`: the hi type and
the lo tracers standing for the value (plus its tangent handle, hijax_vjp_hi), which the
boundaries of the transformations and the primitives' calls lower directly. The
primitives themselves (`expand` and the rules) keep getting the value class over lo
tracers, as in JAX, where they run on lowered values.

`HI_TYPES` is a process table of hi types by number, for what names a hi type in IR
attributes (the jaxpr printer's view of a traced function's hi arguments and results).
"""
from __future__ import annotations

import json
import types

from mjax.base import tree_util
from mjax.tracing.core import current_trace
from mjax.dialect.values import set_attr, string_attr
from mjax.specs.dtypes import hi_aval, hitype_rules
from mjax.tracing.tracer import Tracer

_HANDLE = "_mjax_tangent_handle"   # (a hi value's tangent handle: hijax_vjp_hi)


def handle_of(x):
    """The tangent handle a hi value carries, or None."""
    try:
        return object.__getattribute__(x, _HANDLE)
    except AttributeError:
        return None


def attach_handle(x, handle) -> None:
    """Makes `handle` the tangent handle hi value x carries."""
    try:
        object.__setattr__(x, _HANDLE, handle)
    except (AttributeError, TypeError):
        pass                    # (a value with slots: it carries none)


class aval_method:
    """Marks a method of a hi type's aval that tracers of that type expose (JAX:
    core.aval_method). Called on an aval, it is the method bound to that aval."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, obj, objtype=None):
        return self if obj is None else self.fun.__get__(obj, objtype)


class aval_property:
    """Marks a property of a hi type's aval that tracers expose (JAX: core.aval_property)."""

    def __init__(self, fget):
        self.fget = fget

    def __get__(self, obj, objtype=None):
        return self if obj is None else self.fget(obj)


class HiTracer:
    """A traced value of an immutable hi type: `aval` (the HiType) and `lo`, the tracers of
    its lo values."""
    __slots__ = ("aval", "lo", _HANDLE, "__weakref__")
    # JAX's name for its tracers in a staged trace, which its error messages show
    jax_name = "DynamicJaxprTracer"

    def __init__(self, aval, lo):
        object.__setattr__(self, "aval", aval)
        object.__setattr__(self, "lo", tuple(lo))

    def __getattr__(self, name):
        # (only names the class does not define get here: the type's aval_method and
        # aval_property, else JAX's AttributeError for a tracer)
        attr = getattr(type(object.__getattribute__(self, "aval")), name, None)
        if type(attr) is aval_property:
            return attr.fget(self)
        if type(attr) is aval_method:
            return types.MethodType(attr.fun, self)
        raise AttributeError(f"{self.jax_name} has no attribute {name}")

    def __repr__(self):
        if handle_of(self) is not None and not any(isinstance(v, Tracer) for v in self.lo):
            # (grad's differentiated argument outside jit: JAX's tracer shows its value)
            return (f"GradTracer(primal={self.aval.raise_val(*self.lo)!r}, "
                    f"typeof(tangent)={self.aval.to_tangent_aval().str_short()})")
        return f"JitTracer({self.aval.str_short()})"

    __str__ = __repr__

    def __hash__(self):
        raise TypeError(f"unhashable type: {self.jax_name}")

    def __bool__(self):
        raise TypeError(f"the truth value of a traced value of hi type "
                        f"{self.aval.str_short()} was requested")


def uses_tracers() -> None:
    """Makes HiTracers hi values for typeof and the transformations (once a hi type is
    registered: while none is, mjax's checks for hi values stay free)."""
    hitype_rules.setdefault(HiTracer, lambda t: t.aval)


# Hi types named by number in IR attributes (the printer reads them back).
HI_TYPES: list = []
_NUMBERS: dict = {}


def hi_type_number(aval) -> int:
    """The number of hi type `aval` in HI_TYPES (added the first time it, or an equal
    type, is asked for)."""
    try:
        key = ("type", aval)
        hash(key)
    except TypeError:        # (an unhashable type: by identity; HI_TYPES keeps it alive)
        key = ("id", id(aval))
    n = _NUMBERS.get(key)
    if n is None:
        n = _NUMBERS[key] = len(HI_TYPES)
        HI_TYPES.append(aval)
    return n


def check_constants(out) -> None:
    """A jit's results: a value of an immutable hi type that is not a HiTracer is a
    constant to JAX, so one built from this trace's tracers (the value class called on
    them) is JAX's TypeError."""
    trace = current_trace()
    for x in tree_util.tree_leaves(out):
        aval = None if type(x) is HiTracer else hi_aval(x)
        if aval is None or aval.has_qdd or not hasattr(type(aval), "lower_val"):
            continue
        for lo in tree_util.tree_leaves(list(aval.lower_val(x))):
            if isinstance(lo, Tracer) and lo.trace is trace:
                raise TypeError(f"No constant handler for type: {type(lo)}")


SIGNATURE = "mjax.hi_signature"


def _groups(specs, counts) -> list:
    return [[-1 if s is None else hi_type_number(s[0]), n] for s, n in zip(specs, counts)]


def mark_hi_signature(in_specs, in_counts, out_how) -> None:
    """Records on the function being traced (a jit's, over lo values) which of its
    arguments and results stand for one hi value each: [[hi type number or -1, how many
    lo values], ...] per argument and result leaf, for the jaxpr printer."""
    trace = current_trace()
    text = json.dumps({"args": _groups(in_specs, in_counts),
                       "results": _groups(out_how[1], out_how[2])})
    set_attr(trace.func, SIGNATURE, text)


def hi_signature(func_op):
    """(argument groups, result groups) a function's SIGNATURE gives, each a list of
    (hi type or None, count); None if it has none."""
    try:
        sig = json.loads(string_attr(func_op, SIGNATURE, ""))
    except ValueError:
        return None
    return tuple([(None if k < 0 else HI_TYPES[k], n) for k, n in sig[side]]
                 for side in ("args", "results"))


__all__ = ["HI_TYPES", "SIGNATURE", "HiTracer", "attach_handle", "aval_method",
           "aval_property", "check_constants", "handle_of", "hi_signature", "hi_type_number",
           "mark_hi_signature", "uses_tracers"]
