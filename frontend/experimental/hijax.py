"""`mjax.experimental.hijax`: the names of JAX's hijax API, without its tracing machinery.

JAX 0.10's hijax lets a library define "high-level" types (immutable `HiType`s and mutable
`MutableHiType`s) that flow through jit/grad/vmap as single values and lower to ordinary
arrays, with `HiPrimitive`s that act on them. mjax does not implement that machinery: its
dialect has no hi types and no lowering of them to arrays. This module exists so that
libraries which *define* hijax types and primitives at import time but use them only when
asked (flax.nnx's `Variable`, behind `flax_hijax_variable`, off by default) import and run
on their ordinary path. Using a hi type or binding a `HiPrimitive` raises
NotImplementedError naming what is missing.

`VJPHiPrimitive` (user-defined primitives over ordinary arrays, JAX's custom-derivatives
page) works: see mjax.experimental.hijax_vjp.
"""
from __future__ import annotations

from mjax.core import AbstractValue, ShapedArray
from mjax.primitive import UndefinedPrimal, Zero
from mjax.ref import AbstractRef
from mjax.experimental.pallas.ref import Ref as TransformedRef  # a ref seen through indexers
from mjax.experimental.hijax_vjp import VJPHiPrimitive

_MISSING = ("mjax does not implement JAX's hijax machinery (high-level types lowered to "
            "arrays during tracing)")

# Value type -> its typeof function, as registered by register_hitype. Recorded only:
# mjax never calls these, because it cannot trace a hi-typed value.
HITYPES: dict[type, object] = {}


def is_undefined_primal(x) -> bool:
    """Whether x is a transpose rule's linear operand (JAX: ad.is_undefined_primal)."""
    return type(x) is UndefinedPrimal


def instantiate_zeros(tangent):
    """A dense array for a symbolic zero (Zero, or custom_derivatives' SymbolicZero, a
    higher floor's class, known here by name); other tangents as they are."""
    if isinstance(tangent, Zero) or type(tangent).__name__ == "SymbolicZero":
        return tangent.instantiate()
    return tangent


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


class HiType:
    """Base class of an immutable high-level type. Subclasses define lo_ty, lower_val,
    raise_val (and the tangent rules) as in JAX; mjax cannot trace values of them."""
    is_high = True
    has_qdd = False

    def lo_ty(self):
        raise NotImplementedError(f"{type(self).__name__}.lo_ty: {_MISSING}")


class MutableHiType:
    """Base class of a mutable high-level type (JAX's MutableHiType)."""
    is_high = True
    has_qdd = True
    is_writer = False

    def lo_ty_qdd(self, state):
        raise NotImplementedError(f"{type(self).__name__}.lo_ty_qdd: {_MISSING}")


class HiPspec:
    """A partition spec for a hi type's lowered arrays (JAX's HiPspec)."""

    def to_lo(self):
        raise NotImplementedError(f"{type(self).__name__}.to_lo must be overridden")


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
        raise NotImplementedError(f"binding the hijax primitive {self.name!r}: {_MISSING}")


def register_hitype(val_cls: type, typeof_fn) -> None:
    """Declare `val_cls` a hi type whose aval `typeof_fn` computes (JAX's register_hitype).
    Recorded; mjax raises NotImplementedError when such a value reaches a transformation."""
    HITYPES[val_cls] = typeof_fn


__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiPspec", "HiType", "MutableHiType", "ShapedArray", "TransformedRef",
           "VJPHiPrimitive", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]
