"""`fuse`: traces a function, finds its `fusible` call and calls the fusible's function
with the fusions of the surrounding program. JAX: jax.experimental.pallas.fuser.fuse.

The trace is read as JAX's jaxpr (mjax/jaxpr/objects.py). An input fusion is the part of
the program before the fusible that computes one of its inputs (from the traced
function's arguments and closed-over values); an output fusion, one per leaf of the
fusible's `output_fusion_prefix`, is the part after it that computes the program's
outputs from that group of the fusible's results (`None` where that is the identity).
The fusible must return the program's outputs, which `fuse` puts back in their order.
"""
from __future__ import annotations

import functools

from mjax.base import tree_util
from mjax.base.traceback_util import api_boundary
from mjax.jaxpr.objects import eval_jaxpr
from mjax.ref import Ref
from mjax.experimental.pallas.fuser import jaxpr_util
from mjax.experimental.pallas.fuser.fusible import FUSING, fusible_p
from mjax.experimental.pallas.fuser.fusion import Fusion


@functools.partial(api_boundary)
def fuse(f=None, *, resolve_fusion_dtypes: bool = True, debug: bool = False,
         strict_mode: bool = True):
    """Fuses the program around the one `fusible` call in `f` into that fusible."""
    def decorator(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            _check_no_refs(f, (args, kwargs))
            FUSING.depth += 1
            try:
                jaxpr, consts, _, out_tree = jaxpr_util.trace(f, *args, **kwargs)
            finally:
                FUSING.depth -= 1
            if debug:
                print("Jaxpr before fusion:")
                print(jaxpr)
            flat_args = tree_util.tree_leaves((args, kwargs))
            outs = fuse_jaxpr(jaxpr, out_tree, consts, *flat_args,
                              strict_mode=strict_mode)
            return tree_util.tree_unflatten(out_tree, outs)
        return wrapper

    if f is not None:
        return decorator(f)
    return decorator


def _check_no_refs(f, args):
    from_refs = [x for x in tree_util.tree_leaves(args) if isinstance(x, Ref)]
    if from_refs:
        raise NotImplementedError(
            f"Fused function {getattr(f, '__name__', f)} was passed an argument of type "
            f"{from_refs[0]}.  Fused functions cannot take Refs as arguments -- they must "
            "close over such Refs, instead.")


def _values_of(jaxpr, consts, args):
    """The traced function's constvars and invars as constvars of a sub-jaxpr, with
    their values."""
    return list(jaxpr.constvars) + list(jaxpr.invars), list(consts) + list(args)


def _input_fusion(jaxpr, idx, consts, args, var) -> Fusion:
    constvars, values = _values_of(jaxpr, consts, args)
    sub = jaxpr.replace(constvars=constvars, invars=[], eqns=jaxpr.eqns[:idx],
                        outvars=[var])
    sub, vals = jaxpr_util.prune_inputs(jaxpr_util.dce(sub), values)
    return Fusion(lambda: eval_jaxpr(sub, vals)[0], ((), {}), var.aval)


def fuse_jaxpr(jaxpr, out_tree, consts, *args, strict_mode: bool = True):
    """The outputs of `jaxpr` with its `fusible` equation given its fusions."""
    idx = next((i for i, e in enumerate(jaxpr.eqns) if e.primitive is fusible_p), None)
    if idx is None:
        raise ValueError("No fusible eqn found")
    eqn = jaxpr.eqns[idx]
    params = eqn.params
    constvars, values = _values_of(jaxpr, consts, args)
    rest = jaxpr.replace(constvars=constvars, invars=list(eqn.outvars),
                         eqns=jaxpr.eqns[:idx] + jaxpr.eqns[idx + 1:])
    if not any(jaxpr_util.downstream(rest, eqn.outvars, with_writes=True)):
        # (nothing needs the fusible: the program without it)
        independent = jaxpr.replace(constvars=constvars, invars=[],
                                    eqns=jaxpr.eqns[:idx] + jaxpr.eqns[idx + 1:])
        independent, vals = jaxpr_util.prune_inputs(jaxpr_util.dce(independent), values)
        return eval_jaxpr(independent, vals)

    in_fusions = tree_util.tree_unflatten(
        params["in_tree"], [_input_fusion(jaxpr, idx, consts, args, v)
                            for v in eqn.invars])
    out_fusions, permutation = _output_fusions(
        rest, values, eqn.outvars, params["out_tree"], params["output_fusion_prefix"],
        strict_mode)
    out = params["func"](*in_fusions, out_fusions)
    flat_out = tree_util.tree_leaves(out)
    if len(flat_out) != len(jaxpr.outvars):
        raise ValueError(
            f"fuse: the fusible returned {len(flat_out)} values, but the fused function "
            f"has {len(jaxpr.outvars)} outputs (each output must come from the fusible's "
            "results through its output fusions)")
    return [flat_out[i] for i in permutation]


def _output_fusions(rest, values, fusible_outvars, fusible_out_tree, prefix, strict_mode):
    """(output fusions as a pytree of `prefix`'s structure, the permutation putting the
    fusible's flattened results in the program's output order)."""
    unflat = tree_util.tree_unflatten(fusible_out_tree, list(fusible_outvars))
    groups = tree_util.tree_structure(prefix).flatten_up_to(unflat)
    n_out = len(rest.outvars)
    n_writes = len(jaxpr_util.written_refs(rest))
    if n_writes and len(groups) > 1:
        raise ValueError("Multiple output fusions are not currently supported for "
                         "fusions that write to Refs.")
    masks, claimed = [], set()
    for group in groups:
        # (each Ref written counts as an output after the program's own)
        mask = jaxpr_util.downstream(rest, tree_util.tree_leaves(group), with_writes=True)
        for i, used in enumerate(mask):
            if used and i in claimed:
                raise ValueError(
                    "Outputs must be disjoint in order to use separate output fusions")
            if used:
                claimed.add(i)
        masks.append(mask)
    if any(not any(m[n_out + k] for m in masks) for k in range(n_writes)):
        raise ValueError("A write to a Ref in a fusion must depend on an output of the "
                         "fusible")
    masks = [m[:n_out] for m in masks]
    order = [i for mask in masks for i, used in enumerate(mask) if used]
    if len(order) != len(rest.outvars):
        missing = sorted(set(range(len(rest.outvars))) - set(order))
        raise NotImplementedError(
            f"fuse: outputs {missing} of the fused function do not depend on the "
            "fusible's results; every output must be computed from them")
    permutation = [order.index(i) for i in range(len(order))]

    fusions = []
    for group, mask in zip(groups, masks):
        group_vars = tree_util.tree_leaves(group)
        sub = jaxpr_util.dce(rest.replace(invars=group_vars), mask)
        sub, vals = jaxpr_util.prune_inputs(sub, values)
        if not sub.eqns and list(sub.outvars) == list(sub.invars):
            fusions.append(None)
            continue
        fusions.append(Fusion(
            functools.partial(_run_output_fusion, sub, vals),
            (tree_util.tree_map(lambda v: v.aval, group), {}),
            tuple(v.aval for v in sub.outvars), strict_mode=strict_mode))
    return tree_util.tree_unflatten(tree_util.tree_structure(prefix), fusions), permutation


def _run_output_fusion(jaxpr, values, *args, **kwargs):
    return tuple(eval_jaxpr(jaxpr, values, *tree_util.tree_leaves((args, kwargs))))
