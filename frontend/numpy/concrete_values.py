"""Values that decide an output's shape (nonzero's count, unique's distinct values,
repeat's total, arange's bounds...). JAX needs them concrete: plain arrays, or traced
values it still knows (inside grad & co. called outside jit, see mjax.ad.concrete); under
jit/vmap they are abstract and JAX's errors are raised.
"""
from __future__ import annotations

import operator

import numpy as _onp

from mjax.tracing.core import Tracer, known_value
from mjax.base.errors import ConcretizationTypeError


def concrete_or_error(x, context, error=None):
    """`x` as a NumPy array when its value is known, else `error(x, context)` (default
    ConcretizationTypeError). Nested lists/tuples holding tracers are looked through."""
    if isinstance(x, Tracer):
        value = known_value(x)
        if value is None:
            raise (error or ConcretizationTypeError)(x, context)
        return _onp.asarray(value)
    if isinstance(x, (list, tuple)) and any(_holds_tracer(v) for v in x):
        return _onp.asarray([concrete_or_error(v, context, error) for v in x])
    return _onp.asarray(x)


def concrete_int(x, context):
    """operator.index(x), also for a traced integer scalar whose value is known; an
    unknown one raises ConcretizationTypeError (JAX's concrete_or_error(operator.index))."""
    if isinstance(x, Tracer):
        return operator.index(concrete_or_error(x, context).item())
    return operator.index(x)


def concrete_array(x, context, error=None):
    """`x` itself when not a tracer; a tracer's known value as an mjax Array (a constant:
    JAX's concrete_or_error drops the tangent too), else `error(x, context)`."""
    if not isinstance(x, Tracer):
        return x
    value = known_value(x)
    if value is None:
        concrete_or_error(x, context, error)
    return value


def known(x):
    """`x` with its concrete value (NumPy) in place of a known tracer; `x` unchanged when
    not a tracer or not known (the caller then keeps tracing)."""
    if isinstance(x, Tracer):
        value = known_value(x)
        return x if value is None else _onp.asarray(value)
    return x


def _holds_tracer(x) -> bool:
    if isinstance(x, Tracer):
        return True
    return isinstance(x, (list, tuple)) and any(_holds_tracer(v) for v in x)
