"""JAX's `VJPHiPrimitive` (jax.experimental.hijax): a user-defined primitive given by its
implementation (`expand`) and its differentiation rules, built on mjax's custom_vjp and
custom_jvp.

A call stages the primitive's `expand` as the body of one custom call, so it evaluates
`expand` eagerly and traces it once under jit. The rule the call carries is chosen from
what the subclass defines, as JAX 0.10.2's hijax uses them:

- `vjp_fwd` with `vjp_bwd` (accumulators) or `vjp_bwd_retval` (returned cotangents): a
  custom_vjp. Reverse mode (grad, vjp) runs the user's forward with the per-input
  "nonzero tangent" flags `nzs_in` and the user's residuals, then the backward with one
  accumulator per input leaf (a `NullAccum` for inputs no cotangent is wanted for).
  Forward mode (jvp) uses the subclass's `jvp` (or `lin`/`linearized`) if it has one
  (passes/forward_mode asks custom_rules.has_jvp_rule), else raises as for any
  custom_vjp; jax.linearize of such a primitive raises too (it evaluates the linear
  map forward).
- else `jvp`, or `lin` with `linearized`: a custom_jvp (reverse mode transposes it,
  where JAX 0.10.2 asks for `vjp_fwd`).
- neither: differentiating it raises NotImplementedError naming the missing methods.

vmap calls the subclass's own `batch` (passes/batching asks custom_rules.user_batching),
with the batched operands moved to axis 0; with `batch_dim_rule` instead, mjax batches
`expand` and the rules as any custom call (what JAX's VmapOf computes), after calling
`batch_dim_rule`; with neither, vmap raises NotImplementedError as JAX does.
A staged call prints in jaxprs as JAX's `call_hi_primitive[_prim=...]` (mjax.jaxpr.pretty).
Not implemented: a subclass's `transpose` is never called (mjax transposes the rules
above); `dce` and `remat` are not consulted; a primitive with `effects` raises
NotImplementedError when called.
"""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.base import tree_util
from mjax.ad.custom import _abstract, _trace_into, custom_jvp, custom_vjp
from mjax.ad.custom_vjp_jvp import custom_vjp_with_jvp
from mjax.ad.symbolic_zeros import SymbolicZero
from mjax.dialect import context
from mjax.experimental.hijax_vjp_hi import AxisData, call_hi
from mjax.tracing.primitive import Zero, tangent_aval


class GradAccum:
    """Where a `vjp_bwd` puts one input's cotangent (JAX: ad.GradAccum)."""
    aval = None

    def accum(self, x) -> None:
        raise NotImplementedError


class _ValAccum(GradAccum):
    """Sums the cotangents given to `accum` (JAX 0.10.2's ad.ValAccum)."""

    def __init__(self, aval):
        self.aval = aval
        self.val = None

    def __repr__(self):
        return f"ValAccum({self.aval})"

    def accum(self, x) -> None:
        if x is None or x is Zero or isinstance(x, Zero) or _is_symbolic_zero(x):
            return
        self.val = x if self.val is None else self.val + x

    def freeze(self):
        return SymbolicZero(tangent_aval(self.aval)) if self.val is None else self.val


class _NullAccum(GradAccum):
    """An input whose cotangent is not wanted: `accum` drops it (JAX: ad.NullAccum)."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"NullAccum({self.aval})"

    def accum(self, x) -> None:
        return None

    def freeze(self):
        return SymbolicZero(tangent_aval(self.aval))


def _is_symbolic_zero(x) -> bool:
    return type(x).__name__ == "SymbolicZero"


class _Static:
    """A pytree with no leaves carrying a Python value through residuals."""

    def __init__(self, val):
        self.val = val


tree_util.register_pytree_node(_Static, lambda s: ((), s.val), lambda val, _: _Static(val))


def _overrides(obj, name: str) -> bool:
    return getattr(type(obj), name) is not getattr(VJPHiPrimitive, name)


def _flatten_checked(tree, x, what: str) -> list:
    leaves, got = tree_util.tree_flatten(x)
    if got != tree:
        raise TypeError(f"{what}: expected a value of structure {tree}, got {got}")
    return leaves


class VJPHiPrimitive:
    """Base class of a user-defined primitive (JAX: jax.experimental.hijax.VJPHiPrimitive).

    A subclass's `__init__` sets `in_avals` (a tuple, one aval pytree per argument),
    `out_aval` (an aval pytree) and `params` (static parameters, also readable as
    attributes), then calls `super().__init__()`. It defines `expand` and, as needed,
    `vjp_fwd` with `vjp_bwd` or `vjp_bwd_retval`, `jvp`, `lin` with `linearized`."""
    params: dict = {}
    effects: frozenset = frozenset()

    def __init__(self):
        for attr in ("in_avals", "out_aval", "params"):
            if not hasattr(self, attr):
                raise AttributeError(f"subclass __init__ should set `self.{attr}`")
        if _overrides(self, "vjp_bwd") and _overrides(self, "vjp_bwd_retval"):
            raise AttributeError(f"subclass {type(self)} should not override both "
                                 "`vjp_bwd` and `vjp_bwd_retval`")
        self.in_avals_flat, self.in_tree = tree_util.tree_flatten(self.in_avals)
        self.out_avals_flat, self.out_tree = tree_util.tree_flatten(self.out_aval)
        self.__dict__.update(self.params)
        self.check(*self.in_avals)

    # -- what a subclass defines ---------------------------------------------------------
    def expand(self, *args):
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    def vjp_fwd(self, nzs_in, /, *args):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_fwd`")

    def vjp_bwd(self, res, outgrad, /, *arg_accums):
        args_grad = self.vjp_bwd_retval(res, outgrad)
        accums, accums_tree = tree_util.tree_flatten(arg_accums)
        grads = accums_tree.flatten_up_to(tuple(args_grad))
        for acc, g in zip(accums, grads):
            if isinstance(acc, GradAccum):
                acc.accum(g)

    def vjp_bwd_retval(self, res, outgrad, /):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_bwd` or `vjp_bwd_retval`")

    def jvp(self, primals, tangents):
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must "
                                  "implement `jvp`")

    def lin(self, nzs_in, *primals):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} "
                                  "must implement `lin` and `linearized`")

    def linearized(self, residuals, *tangents):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} "
                                  "must implement `lin` and `linearized`")

    def transpose(self, out_ct, *maybe_accums):
        raise NotImplementedError(f"for transpose support, subclass {type(self)} "
                                  "must implement `transpose`")

    def batch(self, axis_data, args, dims):
        out_dim = self.batch_dim_rule(axis_data, dims)
        raise NotImplementedError(
            f"calling {type(self).__name__}.batch: mjax batches a hijax primitive's "
            f"`expand` and rules itself (out dim {out_dim!r}) and has no VmapOf primitive")

    def batch_dim_rule(self, axis_data, dims, /):
        raise NotImplementedError(f"for vmap support, subclass {type(self)} must "
                                  "implement `batch` or `batch_dim_rule`")

    def dce(self, used_outs):
        used = tree_util.tree_leaves(used_outs)
        return (False, False, None) if not any(used) else (True, True, self)

    def remat(self, _policy, *args):
        return self(*args), self

    def check(self, *arg_tys):
        return None

    # -- calling -------------------------------------------------------------------------
    def __call__(self, *args):
        _flatten_checked(self.in_tree, args, f"arguments of {self}")
        if self.effects:
            raise NotImplementedError(f"calling the hijax primitive {self}: mjax does not "
                                      f"implement effectful VJPHiPrimitives (effects "
                                      f"{set(self.effects)})")
        if any(getattr(a, "is_high", False) for a in
               tree_util.tree_leaves((self.in_avals, self.out_aval))):
            return self._call_hi(args)
        out = self._custom()(*args)
        _flatten_checked(self.out_tree, out, f"result of {self}")
        return out

    def _call_hi(self, args):
        """A call whose types mention hi types: mjax.experimental.hijax_vjp_hi."""
        return call_hi(self, args)

    def _custom(self):
        """The custom_vjp/custom_jvp function this primitive's calls go through (one per
        primitive, so a rule's own call of the primitive is recognised as such)."""
        fn = self.__dict__.get("_mjax_custom")
        if fn is not None:
            return fn

        def expand(*args):
            return self.expand(*args)
        expand.__name__ = expand.__qualname__ = type(self).__name__
        if _overrides(self, "vjp_fwd"):
            fn = custom_vjp_with_jvp(expand)
            fn.defvjp(self._fwd_rule, self._bwd_rule, symbolic_zeros=True)
            if _overrides(self, "jvp") or _overrides(self, "lin"):
                fn.jvp_companion = custom_jvp(expand)
                fn.jvp_companion.defjvp(self._jvp_rule)
        else:
            fn = custom_jvp(expand)
            fn.defjvp(self._jvp_rule)
        fn.batch_tracer = self._trace_batched
        # (how a jaxpr prints the call: mjax.jaxpr.pretty)
        fn.jaxpr_equation = ("call_hi_primitive", {"_prim": repr(self)})
        fn.hi_primitive = self        # (its fuser rules: mjax.experimental.pallas.fuser)
        self.__dict__["_mjax_custom"] = fn
        return fn

    def _fwd_rule(self, *args):
        leaves, tree = tree_util.tree_flatten(args, is_leaf=_is_primal)
        nzs = [bool(x.perturbed) if _is_primal(x) else False for x in leaves]
        values = [x.value if _is_primal(x) else x for x in leaves]
        args = tree_util.tree_unflatten(tree, values)
        nzs_in = tree_util.tree_unflatten(tree, nzs)
        out, res, *maybe_nzs_out = self.vjp_fwd(nzs_in, *args)
        return out, (res, _Static(tuple(nzs)))

    def _bwd_rule(self, packed, g):
        res, nzs = packed[0], packed[1].val
        g = tree_util.tree_map(lambda x: Zero(x.aval) if _is_symbolic_zero(x) else x, g,
                               is_leaf=_is_symbolic_zero)
        accums = [_ValAccum(a) if nz else _NullAccum(a)
                  for a, nz in zip(self.in_avals_flat, nzs)]
        ret = self.vjp_bwd(res, g, *tree_util.tree_unflatten(self.in_tree, accums))
        del ret  # (JAX ignores what vjp_bwd returns)
        cts = [acc.freeze() for acc in accums]
        return tuple(tree_util.tree_unflatten(self.in_tree, cts))

    def _jvp_rule(self, primals, tangents):
        if _overrides(self, "jvp"):
            tangents = tuple(tree_util.tree_map(_instantiate, tangents))
            return self.jvp(tuple(primals), tangents)
        if _overrides(self, "lin"):
            nzs = tree_util.tree_map(lambda t: True, tangents)
            out, residuals, *_ = self.lin(nzs, *primals)
            return out, self.linearized(residuals, *tangents)
        raise NotImplementedError(
            f"differentiating the hijax primitive {type(self).__name__}: the subclass "
            f"must implement `jvp` (forward mode), `lin` and `linearized`, or `vjp_fwd` "
            f"and `vjp_bwd`/`vjp_bwd_retval` (reverse mode)")

    def _trace_batched(self, call, module, dims, axis_size, axis_name):
        """Traces `batch` for a vmap of a staged call (passes/custom_rules.user_batching):
        a function of the call's operands, batched at `dims` (0 or None), whose results
        are batched at 0. None (batch the call as any other) if it has closed-over
        operands."""
        axis_data = AxisData(axis_name, axis_size)
        if not _overrides(self, "batch"):
            # (JAX's VmapOf: expand and the rules batched, which mjax's batching of the
            # call does; batch_dim_rule checks the dims, or raises where JAX does)
            self.batch_dim_rule(axis_data, tree_util.tree_unflatten(call.tree, list(dims)))
            return None
        if len(call.consts):
            return None
        avals = [a if d is None else a.update(shape=(axis_size, *a.shape))
                 for a, d in zip(call.in_avals, dims)]

        def body(*flat):
            args = tree_util.tree_unflatten(call.tree, list(flat))
            in_dims = tree_util.tree_unflatten(call.tree, list(dims))
            out, out_dims = self.batch(axis_data, args, in_dims)
            outs = _flatten_checked(self.out_tree, out, f"result of {self}.batch")
            out_dims = self.out_tree.flatten_up_to(out_dims)
            return [jnp.broadcast_to(x, (axis_size, *jnp.shape(x))) if d is None
                    else jnp.moveaxis(x, d, 0) for x, d in zip(outs, out_dims)]
        with context():
            return _trace_into(module, body, _abstract(avals),
                               f"{type(self).__name__}_batched").name

    # -- identity ------------------------------------------------------------------------
    def __repr__(self):
        return f"{self.__class__.__name__}[{self.params}]"

    def __hash__(self):
        return hash((self.__class__.__name__, tuple(self.params.items()), self.effects))

    def __eq__(self, other):
        return (type(self) is type(other) and self.params == other.params
                and self.effects == other.effects)


def _is_primal(x) -> bool:
    return type(x).__name__ == "CustomVJPPrimal"


def _instantiate(t):
    return t.instantiate() if isinstance(t, Zero) or _is_symbolic_zero(t) else t
