"""`mjax.experimental.hijax`: JAX's hijax API (high-level types and their primitives).

JAX 0.10's hijax lets a library define "high-level" types (immutable `HiType`s and mutable
`MutableHiType`s) that flow through jit/grad/vmap as single values and lower to ordinary
arrays, with `HiPrimitive`s that act on them. mjax keeps a hi value as the Python object
its type's methods make (inside a trace, for an immutable type, a HiTracer holding its lo
tracers: mjax/tracing/hijax_tracer.py) and lowers it at the boundary of each transformation (mjax/tracing/hijax_lowering.py):

- jit: a hi argument is lowered to its lo values (`lower_val`, or `read_loval` of its
  current type state for a mutable type), traced, and seen inside the trace as a tracer
  of its type (mjax/tracing/hijax_tracer.py's HiTracer; a mutable one raised by
  `new_from_loval`); hi results are lowered and raised outside; a mutable
  argument's final lo state comes back as extra results and is written into the
  caller's object (`update_from_loval`). A closed-over mutable value the function mutates
  is taken over the same way (found on the first trace: CapturedHiError). Programs are
  cached per hi types and type states. `jit(f).trace(...)`'s jaxpr shows hi values and
  `call_hi_primitive` equations as JAX's does (mjax/jaxpr/pretty.py groups their lo values).
- binding a `HiPrimitive` applies its `to_lojax` at once, eagerly and in every trace (JAX
  does the same when it lowers), so its `jvp`/`transpose`/batching rules are not
  consulted: mjax differentiates and batches the lo ops `to_lojax` produced.
- grad / value_and_grad: hi arguments are lowered around the differentiated function;
  mutable ones (and closed-over mutable values it mutates) are written back. A hi
  argument whose tangent type (`to_tangent_aval`) is an array is differentiated through
  a tangent handle (mjax.experimental.hijax_vjp_hi), so its gradient has that type; one
  whose tangent type is its own type gets the cotangents of its lo values raised.
- eval_shape: hi arguments lowered; a hi result comes back as its type.
- lax.scan: hi values in the carry, the scanned-over values and the results (lowered,
  sliced and stacked along the leading axis, raised by `raise_val`), and closed-over
  mutable values mutated by the body (carried).
- vmap over a hi value raises NotImplementedError (JAX 0.10.2 has no mapping specs);
  one passed with in_axes=None is closed over.
- shard_map: hi values cross it as their lo values, laid out by a `HiPspec`'s `to_lo()`
  specs (mjax/spmd/shard_map_hi.py). jvp/linearize through hi types are not
  implemented.

`VJPHiPrimitive` (user-defined primitives) works over arrays (mjax.experimental.hijax_vjp)
and over hi types (JAX's docs/hijax_types.md: mjax.experimental.hijax_vjp_hi).
flax.nnx's `Variable`s with `hijax=True` (and its `mutable_array` contexts) run on this.
"""
from __future__ import annotations

from mjax.tracing import core
from mjax.tracing.core import AbstractValue
from mjax.specs.dtypes import hitype_rules
from mjax.tracing.hijax_lowering import bind_hi
from mjax.tracing.hijax_tracer import aval_method, aval_property, uses_tracers
from mjax.tracing.primitive import UndefinedPrimal, Zero
from mjax.ref import AbstractRef
from mjax.arrays.sharding_types import ShardedAval
from mjax.experimental.pallas.ref import Ref as TransformedRef  # a ref seen through indexers
from mjax.experimental.hijax_vjp import VJPHiPrimitive
from mjax.spmd.shard_map_hi import HiPspec

# Value type -> its typeof function, as registered by register_hitype (mjax.dtypes'
# hitype_rules is the table typeof and the transformations read).
HITYPES = hitype_rules


def is_undefined_primal(x) -> bool:
    """Whether x is a transpose rule's linear operand (JAX: ad.is_undefined_primal)."""
    return type(x) is UndefinedPrimal


def instantiate_zeros(tangent):
    """A dense array for a symbolic zero (Zero, or custom_derivatives' SymbolicZero, a
    higher floor's class, known here by name); other tangents as they are."""
    if isinstance(tangent, Zero) or type(tangent).__name__ == "SymbolicZero":
        return tangent.instantiate()
    return tangent


class _ShapedArrayType(type):
    """ShapedArray's metaclass: instances are mjax's ShapedArrays; one built with a
    NamedSharding is the ShardedAval (the type `typeof` gives a sharded array), so a
    primitive's declared result types keep their shardings, as JAX's do (jaxprs print
    them)."""

    def __instancecheck__(cls, x):
        return isinstance(x, core.ShapedArray)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, core.ShapedArray)

    def __call__(cls, shape, dtype, weak_type=False, sharding=None, **jax_only):
        if getattr(sharding, "spec", None) is not None and not jax_only:
            return ShardedAval(shape, dtype, weak_type, sharding)
        return core.ShapedArray(shape, dtype, weak_type, sharding=sharding, **jax_only)


class ShapedArray(metaclass=_ShapedArrayType):
    """JAX's ShapedArray as jax.experimental.hijax exports it (see _ShapedArrayType)."""


class AvalQDD:
    """An aval with its quasi-dynamic data (a mutable hi type's current type state)."""

    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd

    def __repr__(self):
        return f"AvalQDD({self.aval!r}, {self.qdd!r})"


class AvalMutableQDD:
    """An aval with mutable quasi-dynamic data (JAX: core.AvalMutableQDD)."""

    def __init__(self, aval, mutable_qdd):
        self.aval, self.mutable_qdd = aval, mutable_qdd


class _EffectTypeSet:
    """A set of effect classes (JAX: effects.EffectTypeSet). mjax's control flow does not
    check effects by type, so membership only answers what was added."""

    def __init__(self):
        self._types: set[type] = set()

    def add_type(self, effect_type: type) -> None:
        self._types.add(effect_type)

    def contains(self, eff) -> bool:
        return any(isinstance(eff, t) for t in self._types)


control_flow_allowed_effects = _EffectTypeSet()


class _HiAval:
    """What both kinds of hi type answer alike."""

    def to_ct_aval(self):
        return self.to_tangent_aval()

    def normalize(self):
        return self

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return str(self)


class HiType(_HiAval):
    """Base class of an immutable high-level type. Subclasses define lo_ty, lower_val,
    raise_val (and to_tangent_aval, dec_rank/inc_rank...) as in JAX."""
    is_high = True
    has_qdd = False

    def lo_ty(self):
        raise NotImplementedError(f"{type(self).__name__}.lo_ty must be overridden")

    def lower_val(self, hi_val):
        raise NotImplementedError(f"{type(self).__name__}.lower_val must be overridden")

    def raise_val(self, *lo_vals):
        raise NotImplementedError(f"{type(self).__name__}.raise_val must be overridden")

    def to_tangent_aval(self):
        raise NotImplementedError(f"{type(self).__name__}.to_tangent_aval must be "
                                  f"overridden")


class MutableHiType(_HiAval):
    """Base class of a mutable high-level type (JAX's MutableHiType): lo_ty_qdd,
    new_from_loval, read_loval, update_from_loval of a type state (quasi-dynamic data)."""
    is_high = True
    has_qdd = True
    is_writer = False

    def lo_ty_qdd(self, state):
        raise NotImplementedError(f"{type(self).__name__}.lo_ty_qdd must be overridden")

    def lo_ty(self):
        raise NotImplementedError("mutable hi types use lo_ty_qdd instead of lo_ty")

    def read_loval_in(self, state, val):
        return self.read_loval(state, val)


class HiPrimitive:
    """Base class of a primitive over hi types. Subclasses define abstract_eval, to_lojax,
    jvp, transpose (and vmap) as in JAX; binding one raises NotImplementedError in mjax."""
    multiple_results = False

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name

    def is_high(self, *avals, **params) -> bool:
        return True

    def is_effectful(self, params) -> bool:
        return False

    def bind(self, *args, **params):
        """Applies `to_lojax` (eagerly or in a trace: mjax's IR holds only its lo ops)."""
        return bind_hi(self, args, params)

    def to_lojax(self, *args, **params):
        raise NotImplementedError(f"the hijax primitive {self.name!r} defines no "
                                  f"to_lojax")

    def abstract_eval(self, *avals, **params):
        raise NotImplementedError(f"{type(self).__name__}.abstract_eval must be "
                                  f"overridden")


def register_hitype(val_cls: type, typeof_fn) -> None:
    """Declare `val_cls` a hi type whose aval `typeof_fn` computes (JAX's register_hitype):
    typeof gives it, and jit/grad/vmap lower its values (mjax/tracing/hijax_lowering.py)."""
    hitype_rules[val_cls] = typeof_fn
    uses_tracers()


__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiPspec", "HiType", "MutableHiType", "ShapedArray", "TransformedRef",
           "VJPHiPrimitive", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]
