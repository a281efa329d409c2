"""Tracers: the values a traced function computes with, each an `ir.Value` of the
function being built and its aval. The traces themselves are in core.py."""
from __future__ import annotations

import operator

from mjax.specs import basearray
from mjax.arrays.array_methods import ArrayMethods
from mjax.dialect import ShapedArray
from mjax.dialect.values import argument_number
from mjax.base.errors import (ConcretizationTypeError, TracerArrayConversionError,
                              TracerBoolConversionError, TracerIntegerConversionError)
from mjax.tracing.source_info import at_user_line, describe_location


class _VmapAttribute:
    """JAX's VmapTracer attributes `val` and `batch_dim` of a tracer of a vmap body (its
    trace's `vmap_body`, from mjax.vmap.batching, computes them: mjax.vmap.vmap_val); an
    AttributeError elsewhere. (No __set__: a user-defined tracer class may keep its own
    `val`, as JAX's docs' tracers do.)"""

    __slots__ = ("name",)

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, t, owner=None):
        if t is None:
            return self
        body = getattr(t.trace, "vmap_body", None)
        if body is None:
            raise AttributeError(f"'{type(t).__name__}' object has no attribute "
                                 f"'{self.name}'")
        return getattr(body, self.name)(t)


class Tracer(ArrayMethods):
    """A traced array: an `ir.Value` in the function being built, and its aval."""

    __slots__ = ("trace", "value", "aval", "loc", "__weakref__")  # (TFP caches by weakref)
    __array_priority__ = 1000

    def __init__(self, trace, value, aval: ShapedArray = None, loc=None):
        if aval is None:    # JAX's Tracer(trace, aval): a user-defined tracer (user_traces.py)
            value, aval = None, value
        self.trace = trace
        self.value = value
        self.aval = aval
        self.loc = loc  # the user's line that made it (None for arguments)

    val = _VmapAttribute()
    batch_dim = _VmapAttribute()

    @property
    def _trace(self):
        """JAX's name for a tracer's trace (read by libraries)."""
        return self.trace

    def __repr__(self):
        return self._shown(repr)

    def __str__(self):
        return self._shown(str)

    def _shown(self, form):
        shows = self.trace.shows
        if shows is not None and (shown := shows(self)) is not None:
            # (a shard_map body run outside jit: its blocks, after the run; in a vmap body
            # JAX's VmapTracer text, or the value JAX knows: an Array, shown by `form`)
            return shown if isinstance(shown, str) else form(shown)
        return jit_text(self.aval)

    # Inside grad & co. called outside jit, JAX knows the values (mjax.ad.concrete finds
    # them): bool/int/index/item always; float/complex/tolist/__array__ only for values
    # that do not depend on a differentiated input (JAX's JVP tracers refuse those).
    def __bool__(self):
        if (v := known_value(self)) is not None:
            return bool(v)
        raise TracerBoolConversionError(self, at_user_line(
            "The truth value of a traced array was requested (if/while/and/or on it)"))

    def __int__(self):    # (JAX: a ConcretizationTypeError for int(), as for float())
        if (v := known_value(self)) is not None:
            return int(v)
        raise ConcretizationTypeError(self, at_user_line("int() was called on a traced array"))

    def __index__(self):
        if (v := known_value(self)) is not None:
            return operator.index(v)
        raise TracerIntegerConversionError(self, at_user_line("used as an index"))

    def __float__(self):
        if (v := known_value(self, False)) is not None:
            return float(v)
        raise ConcretizationTypeError(self, at_user_line("float() was called on a traced array"))

    def __complex__(self):
        if (v := known_value(self, False)) is not None:
            return complex(v)
        raise ConcretizationTypeError(self, at_user_line("complex() was called on a traced "
                                                          "array"))

    def __array__(self, *args, **kwargs):
        if (v := known_value(self, False)) is not None:
            return v.__array__(*args, **kwargs)
        raise TracerArrayConversionError(self)

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__} ({self})")

    def item(self, *args):
        if (v := known_value(self)) is not None:
            return v.item(*args)
        raise ConcretizationTypeError(self, at_user_line(".item() was called on a traced array"))

    def tolist(self):
        if (v := known_value(self, False)) is not None:
            return v.tolist()
        raise ConcretizationTypeError(self, at_user_line(".tolist() was called on a traced "
                                                          "array"))


def jit_text(aval) -> str:
    """JAX's text for a traced value under jit: JitTracer(~float32[3]) (~: weak type)."""
    shape = ",".join(map(str, aval.shape))
    return f"JitTracer({'~' if aval.weak_type else ''}{aval.dtype.name}[{shape}])"


def known_value(t: Tracer, differentiated_ok: bool = True):
    """The concrete value (an Array) JAX would know for tracer `t`, or None: inside
    grad & co. called outside jit (not under jit/vmap), where mjax.ad.concrete gives the
    trace a `concrete` oracle. With differentiated_ok=False, None for values that depend
    on a differentiated input (JAX's JVP tracers)."""
    oracle = t.trace.concrete
    return None if oracle is None else oracle.value_of(t, differentiated_ok)


def arguments_reached(value) -> set[int]:
    """The numbers of the block arguments `value` is computed from (in its own block: a
    trace's function body), for how tracers print (which values a transformation maps or
    differentiates)."""
    reached, seen, stack = set(), set(), [value]
    while stack:
        v = stack.pop()
        n = argument_number(v)
        if n is not None:
            reached.add(n)
            continue
        if v in seen:
            continue
        seen.add(v)
        stack.extend(v.owner.operation.operands)
    return reached


def escaped_tracer_message(t) -> str:
    # Only the recorded location: the IR behind `t.value` may already be lowered or freed.
    loc = getattr(t, "loc", None)
    where = f"at {describe_location(loc)}" if loc is not None else "as a function argument"
    return (f"Encountered an unexpected tracer: {t}. A function transformed by mjax "
            f"(jit, grad, vmap, ...) saved one of its intermediate traced values outside "
            f"(for example in a global or a list), and it was used after that "
            f"transformation finished. The tracer was created {where}. Return values "
            f"from the transformed function instead of leaking them.")


basearray.Array.register(Tracer)   # isinstance(tracer, jax.Array) holds, as in JAX
