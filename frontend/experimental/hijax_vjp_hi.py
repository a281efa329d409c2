"""A `VJPHiPrimitive` whose types mention hijax types (JAX's docs/hijax_types.md): a call
of `expand` over the arguments' lo values, as one custom_vjp call.

mjax lowers hi values to their lo values (mjax/tracing/hijax_lowering.py), but a hi type's tangent
type is its own choice (`to_tangent_aval`: a quantized array's tangents are f32 arrays, not
the tangents of its int8 payload). So a hi value whose tangent type is an array carries a
*tangent handle*: an array of its tangent type (zeros: it adds nothing to any value) that
differentiation sees in its place. A primitive's call takes the handles of its hi
arguments as inputs (each after its value's lo values) and gives each hi result a new handle; its backward rule passes the
handles' cotangents to the user's `vjp_bwd_retval` as the hi results' cotangents, and
gives the user's cotangents of hi arguments to their handles. grad/value_and_grad with
respect to such a hi argument differentiate a fresh handle (hijax_lowering), so the
gradient is a value of the tangent type, as in JAX.

Inside a trace the call's hi results are HiTracers (mjax/tracing/hijax_tracer.py) of the
primitive's declared types; `expand` and the rules get the value class over lo tracers.
The call records how jaxprs show it (one call_hi_primitive equation over hi values:
mjax/jaxpr/pretty.py). vmap calls the primitive's own `batch` rule if it has one (a batched
hi argument described by its type's `leading_axis_spec`, a hi result's lo values taken
as batched along their leading axis); otherwise mjax batches the lo ops.

Not implemented (NotImplementedError): differentiating a hi value whose tangent type is
itself a hi type, a primitive over hi types with `vjp_bwd` (accumulators) only or with
`jvp` only, jvp/linearize (forward mode) over hi types.
"""
from __future__ import annotations

import functools

from mjax import numpy as jnp
from mjax.base import tree_util
from mjax.ad.custom import _abstract, _trace_into, custom_vjp
from mjax.tracing.core import current_trace
from mjax.dialect import context
from mjax.tracing.hijax_lowering import (HandleSpec, Lowered, lower_results, lower_value,
                                         raise_results, tangent_array_aval)


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
        if not _overrides(prim, "vjp_bwd_retval"):
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
    if _overrides(prim, "batch"):
        fn.batch_tracer = functools.partial(_trace_batched, prim, lowered, record)
    flat = list(fn(*lo_leaves))
    n_out = sum(record["out"][2])
    # (how a jaxpr prints the call: one call_hi_primitive equation over hi values)
    fn.jaxpr_equation = ("call_hi_primitive", {"_prim": repr(prim)})
    fn.hi_view = _hi_view(prim, lowered, record, n_out)
    out_flat, out_handles = flat[:n_out], flat[n_out:]
    traced = current_trace() is not None
    if not traced:
        return raise_results(out_flat, record["out"])
    # (traced code sees HiTracers, as JAX's sees tracers of the hi types; each hi result
    # with an array tangent type carries the call's new tangent handle)
    treedef, specs, counts = record["out"]
    it, handles = iter(out_flat), iter(out_handles)
    lo_out, out_specs, out_counts = [], [], []
    for s, n, t in zip(specs, counts, record["out_handles"]):
        lo = [next(it) for _ in range(n)]
        if s is not None:
            if getattr(s, "handle", False):
                lo = lo[:-1]        # (an older handle expand's value carried: replaced)
            s = (s[0], s[1])
            if t is not None:
                lo.append(next(handles))
                s = HandleSpec(s)
        lo_out += lo
        out_specs.append(s)
        out_counts.append(len(lo))
    return raise_results(lo_out, (treedef, out_specs, out_counts), traced=True,
                         avals=prim.out_avals_flat)


def _overrides(prim, name: str) -> bool:
    """Whether prim's class defines `name` itself (not VJPHiPrimitive's default)."""
    for cls in type(prim).__mro__:
        if name in cls.__dict__:
            return cls.__name__ != "VJPHiPrimitive"
    return False


def _hi_view(prim, lowered, record, n_out):
    """How a jaxpr shows the call (mjax.jaxpr.pretty): per argument leaf and per result leaf,
    (its type: a hi type, an array type or None, and the call's operands / results
    standing for it); a hi result's tangent handle is one of the results after the lo
    ones."""
    ins, k = [], 0
    for s, n in zip(lowered.specs, lowered.counts):
        ins.append((None if s is None else s[0], list(range(k, k + n))))
        k += n
    outs, k, h = [], 0, n_out
    types = prim.out_avals_flat
    for s, n, t, ty in zip(record["out"][1], record["out"][2], record["out_handles"],
                           types):
        group = list(range(k, k + n))
        k += n
        if t is not None:
            group.append(h)
            h += 1
        outs.append((ty, group))
    return ins, outs


def _trace_batched(prim, lowered, record, call, module, dims, axis_size, axis_name):
    """vmap of the call with the primitive's own `batch` rule (JAX calls it for a
    call_hi_primitive): traced over the call's lo operands batched at `dims` (0 or None),
    every result at 0 (a hi result's lo values along their leading axis). None (mjax
    batches the call as any other) with closed-over operands, or a hi argument batched
    whose type has no `leading_axis_spec` to describe it to the rule."""
    if len(call.consts) or len(dims) != sum(lowered.counts):
        return None
    in_dims, k = [], 0
    for s, n in zip(lowered.specs, lowered.counts):
        ds = dims[k:k + n]
        k += n
        if s is None:
            in_dims.append(ds[0])
        elif all(d is None for d in ds):
            in_dims.append(None)
        elif hasattr(s[0], "leading_axis_spec"):
            in_dims.append(s[0].leading_axis_spec())
        else:
            return None
    avals = [a if d is None else a.update(shape=(axis_size, *a.shape))
             for a, d in zip(call.in_avals, dims)]

    def body(*flat):
        args = lowered.raise_flat(list(flat), traced=True, retype=True)[0]
        out, out_dims = prim.batch(AxisData(axis_name, axis_size), args,
                                   tree_util.tree_unflatten(lowered.treedef, in_dims))
        leaves = tree_util.tree_leaves(out)
        out_dims = prim.out_tree.flatten_up_to(out_dims)
        results, handles = [], []
        for x, d, s, t in zip(leaves, out_dims, record["out"][1], record["out_handles"]):
            lo = [x] if s is None else lower_value((s[0], s[1]), x)
            lo_dims = [d] if s is None else [None if d is None else 0] * len(lo)
            if getattr(s, "handle", False):
                lo.append(jnp.zeros(t.shape, t.dtype))
                lo_dims.append(None)
            results += [jnp.broadcast_to(v, (axis_size, *jnp.shape(v))) if e is None
                        else jnp.moveaxis(v, e, 0) for v, e in zip(lo, lo_dims)]
            if t is not None:
                handles.append(jnp.zeros((axis_size, *t.shape), t.dtype))
        return results + handles
    with context():
        return _trace_into(module, body, _abstract(avals),
                           f"{type(prim).__name__}_batched").name


class AxisData:
    """The vmap a `batch` rule is called for (JAX: batching.AxisData)."""

    def __init__(self, name, size, spmd_name=None, explicit_mesh_axis=None):
        self.name, self.size = name, size
        self.spmd_name, self.explicit_mesh_axis = spmd_name, explicit_mesh_axis

    def __repr__(self):
        return f"AxisData(name={self.name!r}, size={self.size})"


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


__all__ = ["AxisData", "call_hi"]
