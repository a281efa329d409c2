"""JAX: jax.extend.core: primitives, jaxpr types and tracing hooks for JAX extensions.

mjax's jaxprs are functions of the `jaxpr` MLIR dialect, so what JAX exposes here as
Python objects exists in mjax only in part:
- `Primitive` has JAX's registration API (`def_impl`, `def_abstract_eval`,
  `multiple_results`, rules in `mjax.interpreters.ad/batching/mlir`): eagerly `bind`
  runs its `def_impl` rule; under `jit`, `grad`, `vmap`, ... it stages one
  `jaxpr.custom_primitive` op that every pass handles through the user's rules
  (mjax/tracing/primitive.py, docs/extending.md).
- `ClosedJaxpr` is what `mjax.make_jaxpr` returns; its `.jaxpr` is the trace read as
  JAX's `Jaxpr`, `JaxprEqn`, `Var` and `Literal` objects, which `jaxpr_as_fun` (and
  `jax.core.eval_jaxpr`) evaluate equation by equation (mjax/jaxpr/objects.py).
"""
from __future__ import annotations

import dataclasses
import weakref
from typing import Any

import numpy as np

from mjax.tracing import core as _core
from mjax.specs import dtypes
from mjax.extend import user_traces
from mjax.jaxpr.objects import (ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var,  # noqa: F401
                                 gensym, jaxpr_as_fun, jaxprs_in_params, new_jaxpr_eqn,
                                 subjaxprs)
from mjax.arrays.array import Array
from mjax.base.errors import (ConcretizationTypeError, InconclusiveDimensionOperation,  # noqa: F401
                              JaxprTypeError)
from mjax.ad.symbolic_zeros import primal_dtype_to_tangent_dtype  # noqa: F401
from mjax.tracing.primitive import Primitive, no_effects

from mjax.extend.core import primitives  # noqa: F401

__all__ = ["Primitive", "CallPrimitive", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Var",
           "Literal", "DropVar", "DebugInfo", "Effect", "Effects", "no_effects",
           "array_types", "valid_jaxtype", "primal_dtype_to_tangent_dtype",
           "concrete_or_error", "mapped_aval", "unmapped_aval", "jaxpr_as_fun",
           "new_jaxpr_eqn", "gensym", "jaxprs_in_params", "subjaxprs",
           "InconclusiveDimensionOperation", "JaxprTypeError", "TraceTag",
           "find_top_trace", "unsafe_am_i_under_a_jit_DO_NOT_USE",
           "unsafe_am_i_under_a_vmap_DO_NOT_USE", "unsafe_get_axis_names_DO_NOT_USE",
           "primitives"]

class CallPrimitive(Primitive):
    """A primitive whose first argument is a function to call (JAX's call_p family)."""
    call_primitive = True
    multiple_results = True


class Effect:
    """Base class of side effects a primitive may have."""


Effects = set


class TraceTag:
    """Identity of a transformation's trace (JAX: core.TraceTag)."""

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


@dataclasses.dataclass(frozen=True)
class DebugInfo:
    """Where a traced function comes from, for error messages (JAX: core.DebugInfo)."""
    traced_for: str
    func_src_info: str | None
    arg_names: tuple[str, ...] | None
    result_paths: tuple[str, ...] | None = None

    @property
    def func_name(self) -> str:
        return (self.func_src_info or "<unknown>").split(" ")[0]


array_types: set = {np.ndarray, np.bool_, np.int8, np.int16, np.int32, np.int64,
                    np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                    np.float64, np.complex64, np.complex128, dtypes.bfloat16, Array}


def valid_jaxtype(x) -> bool:
    """Whether `x` is a value mjax functions take as an array argument."""
    try:
        _core.aval_of_value(x)
    except TypeError:
        return False
    return True


def concrete_or_error(force: Any, val: Any, context: str = ""):
    """`force(val)` for a concrete value; for a tracer JAX knows the value of (under grad
    outside jit) its value; else ConcretizationTypeError naming `context`."""
    if force is None:
        force = lambda x: x  # noqa: E731
    if isinstance(val, _core.Tracer):
        known = _core.known_value(val)
        if known is None:
            raise ConcretizationTypeError(val, context)
        return force(known)
    return force(val)


def mapped_aval(size: int, axis: int | None, aval):
    """`aval` without its mapped axis (what a vmapped function sees per element)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped axis {axis} of {aval.str_short()} has size "
                         f"{aval.shape[axis]}, expected {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size: int, axis: int | None, aval, explicit_mesh_axis=None):
    """`aval` with a new axis of `size` at `axis` (a vmapped function's result)."""
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def find_top_trace(_):
    """The trace current now, as JAX's (whose tracers in `_` belong to it or to the
    traces it is nested in); outside every trace, an EvalTrace."""
    return user_traces.current()


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    """Whether Python is running inside a trace (jit, or any staging transformation)."""
    return _core.current_trace() is not None


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    raise NotImplementedError("jax.extend.core.unsafe_am_i_under_a_vmap_DO_NOT_USE: "
                              "mjax traces vmap bodies like any other function")


def unsafe_get_axis_names_DO_NOT_USE() -> list:
    raise NotImplementedError("jax.extend.core.unsafe_get_axis_names_DO_NOT_USE: "
                              "mjax's named axes are not queried from Python")



# JAX's trace-stack API, for interpreters written as jax.core.Trace subclasses (haiku's
# hk.to_dot): mjax/extend/user_traces.py.
take_current_trace = user_traces.take_current_trace
set_current_trace = user_traces.set_current_trace


class OpaqueTraceState:
    """The trace current when it was taken, as a token: two are equal exactly when taken
    under the same trace (haiku checks that no JAX transform sits between its frames).
    JAX: jax._src.core.OpaqueTraceState."""

    def __init__(self, trace):
        try:
            self._trace_ref = None if trace is None else weakref.ref(trace)
        except TypeError:   # (a trace class without weak references: held)
            self._trace_ref = trace

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    def __hash__(self):
        return hash(self._trace_ref)


def get_opaque_trace_state(convention=None) -> OpaqueTraceState:
    """A token of the current trace (outside any transformation: the eager one). JAX:
    jax.extend.core.get_opaque_trace_state."""
    del convention
    return OpaqueTraceState(user_traces.current())
