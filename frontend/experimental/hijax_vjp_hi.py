"""A `VJPHiPrimitive` whose types mention hijax types (JAX's docs/hijax_types.md): a call
of `expand` over the arguments' lo values, as one custom_vjp call.

mjax lowers hi values to their lo values (mjax/hijax_lowering.py), but a hi type's tangent
type is its own choice (`to_tangent_aval`: a quantized array's tangents are f32 arrays, not
the tangents of its int8 payload). So a hi value whose tangent type is an array carries a
*tangent handle*: an array of its tangent type (zeros: it adds nothing to any value) that
differentiation sees in its place. A primitive's call takes the handles of its hi
arguments as inputs (each after its value's lo values) and gives each hi result a new handle; its backward rule passes the
handles' cotangents to the user's `vjp_bwd_retval` as the hi results' cotangents, and
gives the user's cotangents of hi arguments to their handles. grad/value_and_grad with
respect to such a hi argument differentiate a fresh handle (hijax_lowering), so the
gradient is a value of the tangent type, as in JAX.

Not implemented (NotImplementedError): differentiating a hi value whose tangent type is
itself a hi type, a primitive over hi types with `vjp_bwd` (accumulators) only or with
`jvp` only, jvp/linearize (forward mode) over hi types, and vmap of such a primitive.
"""
from __future__ import annotations

from mjax import numpy as jnp
from mjax import tree_util
from mjax.ad.custom import custom_vjp
from mjax.core import current_trace
from mjax.hijax_lowering import (Lowered, attach_handle, lower_results, raise_results,
                                 tangent_array_aval)


def _handle_avals(specs) -> list:
    """Per leaf: the tangent aval of a hi leaf that can carry a handle, else None."""
    return [None if s is None else tangent_array_aval(s) for s in specs]


def call_hi(prim, args):
    """prim(*args) for a VJPHiPrimitive whose in_avals/out_aval mention hi types."""
    lowered = Lowered(args)      # (a hi argument's handle is its last lo value)
    lo_leaves = tree_util.tree_leaves(lowered.packed)
    record = {}

    def outputs(out):
        """The lowered results, then a zero handle per hi result that carries one."""
        flat, how = lower_results(out)
        record["out"] = how
        record["out_handles"] = _handle_avals(how[1])
        zeros = [jnp.zeros(t.shape, t.dtype) for t in record["out_handles"] if t is not None]
        return tuple(flat) + tuple(zeros)

    def raised(lo):
        return lowered.raise_flat(lo)[0]

    def expand_lo(*inputs):
        return outputs(prim.expand(*raised(inputs)))

    def fwd(*inputs):
        hi_args = raised(inputs)
        nzs = tuple(tree_util.tree_map(lambda _: True, a) for a in hi_args)
        out, res, *_ = prim.vjp_fwd(nzs, *hi_args)
        res_flat, record["res"] = lower_results(res)
        return outputs(out), tuple(res_flat)

    def bwd(res_flat, cts):
        if not _overrides_retval(prim):
            raise NotImplementedError(
                f"differentiating the hijax primitive {type(prim).__name__} over hi types: "
                f"mjax calls its vjp_bwd_retval (it has none)")
        res = raise_results(list(res_flat), record["res"])
        treedef, specs, counts = record["out"]
        n_flat = sum(counts)
        flat_cts, handle_cts = list(cts[:n_flat]), iter(cts[n_flat:])
        g_leaves, it = [], iter(flat_cts)
        for s, n, t in zip(specs, counts, record["out_handles"]):
            leaf_cts = [next(it) for _ in range(n)]
            if s is None:
                g_leaves.append(leaf_cts[0])
            elif t is None:
                raise NotImplementedError(
                    f"differentiating {type(prim).__name__}: a result of hi type {s[0]!r} "
                    f"whose tangent type is not an array")
            else:
                g_leaves.append(next(handle_cts))
        g = tree_util.tree_unflatten(treedef, g_leaves)
        arg_cts = prim.vjp_bwd_retval(res, g)
        ct_leaves = _arg_leaves(lowered, arg_cts)
        lo_cts = []
        for s, n, ct in zip(lowered.specs, lowered.counts, ct_leaves):
            if s is None:
                lo_cts.append(ct)
            elif getattr(s, "handle", False):
                lo_cts += [None] * (n - 1) + [ct]
            else:
                lo_cts += [None] * n
        return tuple(lo_cts)

    expand_lo.__name__ = type(prim).__name__
    fn = custom_vjp(expand_lo)
    fn.defvjp(fwd, bwd)
    flat = list(fn(*lo_leaves))
    n_out = sum(record["out"][2])
    out_flat, out_handles = flat[:n_out], iter(flat[n_out:])
    out = raise_results(out_flat, record["out"])
    if current_trace() is None:
        return out          # (eager values: nothing differentiates them, no handles)
    for leaf, t in zip(tree_util.tree_leaves(out), record["out_handles"]):
        if t is not None:
            attach_handle(leaf, next(out_handles))
    return out


def _overrides_retval(prim) -> bool:
    for cls in type(prim).__mro__:
        if "vjp_bwd_retval" in cls.__dict__:
            return cls.__name__ != "VJPHiPrimitive"
    return False


def _arg_leaves(lowered, arg_cts) -> list:
    """The user's cotangents of the arguments, one per leaf of the arguments (a hi leaf's
    cotangent is one value of its tangent type; None or a symbolic zero: no cotangent)."""
    arg_cts = tuple(arg_cts)
    out = []
    treedef = lowered.treedef
    args_tree = tree_util.tree_unflatten(treedef, list(range(treedef.num_leaves)))
    for a, ct in zip(args_tree, arg_cts):
        n = len(tree_util.tree_leaves(a))
        if n == 1 and not isinstance(a, (tuple, list, dict)):
            out.append(ct)
        else:
            leaves = tree_util.tree_leaves(ct)
            out += leaves if len(leaves) == n else [None] * n
    return out


__all__ = ["call_hi"]
