"""Autodiff and batching of `jaxpr.shard_map @body` (dialect/ops/shard_map.py): the op
stays an op, its body transformed, as JAX's shard_map_p does under jvp, linearize and
transpose; --jaxpr-expand-transforms expands what is left at the end
(passes/rules/shard_map.py's `expand_shard_maps`).

    JVP_NESTED        forward mode: one shard_map over @body_jvp, the tangents laid out
                      as their primals (JAX: _shard_map_jvp);
                      reverse mode (linearize): a forward shard_map over @body_fwd
                      (residuals, then the results) and a tangent one over @body_lin
                      (residuals + tangents -> tangents), which direct linearize places
                      in the forward and linear parts (JAX: _shard_map_linearize).
                      Residuals that are the body's operands (or its results) are passed
                      from outside with their specs (JAX's in_fwd/out_fwd); the others
                      leave the forward shard_map split along the manual axes they may
                      vary along (an over-approximation of JAX's varying types; all
                      manual axes without check_vma) on their first dimension (scalars
                      as shape (1,)): JAX's `nospec`.
    TRANSPOSE_NESTED  one shard_map over the transposed body: (nonzero cotangents of the
                      results, residual operands) -> cotangents of the linear operands
                      (JAX: _shard_map_transpose). Specs of cotangents swap unreduced
                      and reduced (a reduced cotangent enters cast to varying: JAX's
                      reduced_vary_cast).
    BATCH_NESTED      vmap of a shard_map: the op is expanded into a function, batched
                      as a call (no shard_map equation stays under vmap).

mjax's bodies make no pvary casts (a value invariant along a manual axis is one per
member, equal), so the transposition is JAX's check_vma=False rule: a result's cotangent
is divided by the sizes of the manual axes its out_spec leaves unnamed (each member
holds the value) and an operand's cotangent is psum'd over the manual axes its in_spec
leaves unnamed (each member got the value). With check_vma, along an axis no op of the
body names and along which no such operand's cotangent varies, both are left out: the
equations JAX's typed transposition gives (`_replicated_axes`). The ops differentiation
makes have `stacked_outputs` (their bodies may read residuals split along axes their
results do not vary along).
"""
from __future__ import annotations

import math

from jaxlib.mlir import ir

from mjax.dialect.attributes import Symbol
from mjax.dialect.builder import Builder
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.shard_map import ShardMapOp, spec_axes
from mjax.dialect.ops.structural import CopyOp, ReshapeOp
from mjax.dialect.types import ShapedArray, aval_of
from mjax.passes.ir_util import (FunctionTable, callee_of, clone_into, dependent_results,
                                 entry_block, is_terminator, nested_ops,
                                 set_results, symbol_name)
from mjax.passes.jaxpr_inline import inline_body
from mjax.passes.reverse_mode import linearize_functions
from mjax.passes.rules.ad_util import Linear
from mjax.passes.rules.shard_map import expand_shard_maps
from mjax.passes.rules.tables import BATCH_NESTED, JVP_NESTED, TRANSPOSE_NESTED

# The discardable attribute of a forward shard_map with residuals: "<number of
# residuals>:<the differentiated op's body>" (make_jaxpr shows it in the differentiated
# op's place, as JAX's linearization has only it: passes/print_expansion.py).
FORWARD_OF = "mjax.forward_of"
# The discardable attribute of the copy casting a reduced cotangent to varying at the
# top of a transposed body (printed as JAX's reduced_vary_cast_p): the axes.
REDUCED_VARY_CAST = "mjax.reduced_vary_cast"


def _specs(p, n_operands: int) -> list:
    """One spec per operand: the captured operands' is () (replicated, JAX's P())."""
    return list(p["in_specs"]) + [()] * (n_operands - len(p["in_specs"]))


def _reduced(p, n_operands: int) -> list:
    """Per operand, the mesh axes its spec calls reduced (captured operands: none)."""
    return list(p["in_reduced"] or [()] * len(p["in_specs"])) + \
        [()] * (n_operands - len(p["in_specs"]))


def _unreduced(p) -> list:
    """Per result, the mesh axes its spec calls unreduced."""
    return list(p["out_unreduced"] or [()] * len(p["out_specs"]))


def _emit(b, fns, callee: str, operands, p, in_specs, out_specs, in_reduced, out_unreduced,
          num_captured=0, out_paths=None, stacked=True) -> list[ir.Value]:
    """A shard_map over `callee` with the mesh of the op whose params are `p`."""
    params = dict(p, callee=Symbol(callee), in_specs=tuple(in_specs),
                  out_specs=tuple(out_specs), num_captured=num_captured,
                  out_paths=out_paths,
                  in_reduced=tuple(in_reduced[:len(in_specs)]) if any(in_reduced) else None,
                  out_unreduced=tuple(out_unreduced) if any(out_unreduced) else None,
                  stacked_outputs=bool(stacked or p["stacked_outputs"]))
    return T.emit_transform(b, ShardMapOp, *operands, signature=fns.signature, **params)


def _paths(p, which):
    paths = p["out_paths"]
    return None if paths is None else tuple(paths) + tuple(paths[j] for j in which)


# ---- varying axes ---------------------------------------------------------------------
_REDUCING = frozenset({"jaxpr.psum", "jaxpr.pmax", "jaxpr.pmin"})
_NAMING = _REDUCING | {"jaxpr.all_gather", "jaxpr.psum_scatter", "jaxpr.all_to_all",
                       "jaxpr.ppermute", "jaxpr.axis_index"}
_CASTS = ("mjax.pvary", REDUCED_VARY_CAST)


def _op_axes(op) -> set:
    """The mesh axes an op names (a collective's, axis_index's, a pvary cast's)."""
    axes = set()
    keys = (("axes",) if op.name in _NAMING else ()) + _CASTS
    if op.name == ShardMapOp.OPERATION_NAME:
        keys += ("manual_axes",)
    for key in keys:
        if key in op.attributes:
            axes |= {str(a).strip('"') for a in ir.ArrayAttr(op.attributes[key])}
    return axes


def _named_inside(fns, op, seen, adding_only=False) -> set:
    """The mesh axes the ops inside `op` (its regions, the function it names, at any
    depth) name; `adding_only`: only those that make values vary (axis_index, casts)."""
    found = set()
    inner = list(nested_ops(op))
    callee = callee_of(op)
    if callee is not None and callee in fns and callee not in seen:
        seen.add(callee)
        inner += nested_ops(fns.get(callee))
    for o in inner:
        if not adding_only or o.name == "jaxpr.axis_index" or \
                any(c in o.attributes for c in _CASTS):
            found |= _op_axes(o)
        sub = callee_of(o)
        if sub is not None and sub in fns and sub not in seen:
            seen.add(sub)
            found |= _named_inside(fns, fns.get(sub), seen, adding_only)
    return found


def _block_varying(fns, block, arg_axes, manual) -> dict:
    """An over-approximation of the manual axes each value of `block` varies along (its
    arguments along `arg_axes`): what a value computes from varies along what its
    operands do, less what a psum reduces over, plus what axis_index, pcast and the
    bodies of loops and calls may add."""
    var = dict(zip(block.arguments, (frozenset(a) for a in arg_axes)))
    for op in block.operations:
        op = op.operation
        if is_terminator(op):
            break
        ins = frozenset().union(*[var.get(v, frozenset()) for v in op.operands])
        if op.name in _REDUCING:
            out = ins - _op_axes(op)
        elif op.name == "jaxpr.axis_index" or any(c in op.attributes for c in _CASTS):
            out = ins | _op_axes(op)
        elif len(op.regions) or callee_of(op) is not None:
            out = ins | _named_inside(fns, op, set(), adding_only=True)
        else:
            out = ins
        out &= manual
        for r in op.results:
            var[r] = out
    return var


def _varying(fns, name: str, arg_axes, manual) -> list:
    """`_block_varying` of @name's values it returns."""
    block = entry_block(fns.get(name))
    var = _block_varying(fns, block, arg_axes, manual)
    returned = list(block.operations)[-1].operation.operands
    return [var.get(v, frozenset()) for v in returned]


def _residual_spec(p, axes) -> tuple:
    """A residual made by the body: split along the axes it varies along, on its first
    dimension (JAX's `nospec`)."""
    named = ",".join(a for a in p["mesh_axes"] if a in axes)
    return (named,) if named else ()


# ---- JVP ------------------------------------------------------------------------------
def _shard_map_jvp(jvp, op, pairs):
    ps, ts = [q for q, _ in pairs], [t for _, t in pairs]
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    ex, p = jvp.ex, op.opview.params
    callee = callee_of(op)
    ex.expand_function(callee)
    ins, outs = ex.fns.signature(callee)
    da = tuple(i for i, t in enumerate(ts) if t is not None)
    dependent = dependent_results(ex.fns.get(callee, op), da)
    dr = tuple(j for j in T.default_diff(outs) if j in dependent)
    if not dr:
        return jvp.copy(op, pairs)
    specs = _specs(p, len(ps))
    b = jvp.builder(op)
    if jvp.linearize:
        return _linearized(jvp, op, b, callee, ps, ts, da, dr, specs)
    g = jvp.function(callee, da, dr, where=op)
    red, unr = _reduced(p, len(ps)), _unreduced(p)
    res = _emit(b, ex.fns, g, ps + [ts[i] for i in da], p,
                specs + [specs[i] for i in da],
                list(p["out_specs"]) + [p["out_specs"][j] for j in dr],
                red + [red[i] for i in da], unr + [unr[j] for j in dr],
                out_paths=_paths(p, dr))
    n = len(outs)
    it = iter(res[n:])
    return [(r, next(it) if j in dr else None) for j, r in enumerate(res[:n])]


def _linearized(jvp, op, b, callee, ps, ts, da, dr, specs):
    """Reverse mode: a forward shard_map and a tangent one (see the module doc)."""
    ex, p = jvp.ex, op.opview.params
    fns = ex.fns
    info = linearize_functions(ex, callee, da, dr, where=op)
    n = info.num_outputs
    fwd = fns.get(info.fwd)
    returned = list(list(entry_block(fwd).operations)[-1].operation.operands)
    fwd_args = list(entry_block(fwd).arguments)
    red, unr = _reduced(p, len(ps)), _unreduced(p)
    manual = frozenset(p["manual_axes"])
    # Where each residual comes from: ("in", operand) | ("out", result) | ("new", k).
    sources, new = [], []
    for r in returned[n:]:
        if isinstance(r.owner, ir.Block) and r in fwd_args:
            sources.append(("in", fwd_args.index(r)))
        elif r in returned[:n] and not unr[returned[:n].index(r)]:
            sources.append(("out", returned[:n].index(r)))
        else:
            sources.append(("new", len(new)))
            new.append(aval_of(r.type))
    ins, _ = fns.signature(callee)
    out_specs = list(p["out_specs"])
    if new:
        axes = _varying(fns, info.fwd, [spec_axes(s) for s in specs], manual)
        new_specs = [_residual_spec(p, a if p["check_vma"] else manual)
                     for a, (kind, _) in zip(axes[n:], sources) if kind == "new"]
        # @body_fwd: the new residuals (scalars as shape (1,)), then the primal outputs.
        fwd_body, blk = fns.create(fns.fresh_name(f"{callee}_fwd"), ins, None,
                                   fns.get(callee))
        ip = ir.InsertionPoint(blk)
        got = inline_body(fns, info.fwd, list(blk.arguments), ip)
        fb = Builder(ip, op.location)
        new_vals = [v for v, (kind, _) in zip(got[n:], sources) if kind == "new"]
        new_vals = [v if a.shape else
                    fb.emit(ReshapeOp, v, new_sizes=(1,), dimensions=None)[0]
                    for v, a in zip(new_vals, new)]
        set_results(fwd_body, new_vals + got[:n])
        fwd_res = _emit(b, fns, symbol_name(fwd_body), ps, p, p["in_specs"],
                        new_specs + out_specs, red, [()] * len(new) + unr,
                        num_captured=p["num_captured"], stacked=False,
                        out_paths=None if p["out_paths"] is None else
                        ("",) * len(new) + tuple(p["out_paths"]))
        made, primal_outs = fwd_res[:len(new)], fwd_res[len(new):]
        fwd_op = getattr(fwd_res[0].owner, "operation", fwd_res[0].owner)
        fwd_op.attributes[FORWARD_OF] = ir.StringAttr.get(f"{len(new)}:{callee}")
        lin_after = fwd_body
    else:   # (every residual is an operand or a result: the op itself runs forward)
        primal_outs = _emit(b, fns, callee, ps, p, p["in_specs"], out_specs, red, unr,
                            num_captured=p["num_captured"], out_paths=p["out_paths"],
                            stacked=False)
        made, new_specs, lin_after = [], [], fns.get(callee)
    # @body_lin: (residuals..., tangents...) -> tangents of dr.
    res_vals, res_specs, res_avals, res_red = [], [], [], []
    for kind, k in sources:
        if kind == "in":
            res_vals.append(ps[k])
            res_specs.append(specs[k])
            res_avals.append(ins[k])
            res_red.append(red[k])
        elif kind == "out":
            res_vals.append(primal_outs[k])
            res_specs.append(out_specs[k])
            res_avals.append(fns.signature(callee)[1][k])
            res_red.append(())
        else:
            res_vals.append(made[k])
            res_specs.append(new_specs[k])
            res_avals.append(new[k] if new[k].shape else ShapedArray((1,), new[k].dtype))
            res_red.append(())
    lin_body, lblk = fns.create(fns.fresh_name(f"{callee}_lin"),
                                res_avals + [ins[i] for i in da], None, lin_after)
    lip = ir.InsertionPoint(lblk)
    lb = Builder(lip, op.location)
    largs = list(lblk.arguments)
    res_args = []
    for (kind, k), a in zip(sources, largs):
        if kind == "new" and not new[k].shape:
            a = lb.emit(ReshapeOp, a, new_sizes=(), dimensions=None)[0]
        res_args.append(a)
    tangents = largs[len(sources):]
    set_results(lin_body, inline_body(fns, info.lin, tangents + res_args, lip))
    lin_out = _emit(b, fns, symbol_name(lin_body), res_vals + [ts[i] for i in da], p,
                    res_specs + [specs[i] for i in da], [out_specs[j] for j in dr],
                    res_red + [red[i] for i in da], [unr[j] for j in dr])
    it = iter(lin_out)
    return [(r, next(it) if j in dr else None) for j, r in enumerate(primal_outs)]


# ---- transpose ------------------------------------------------------------------------
def _functions(tr, op) -> FunctionTable:
    if tr.ex is not None:
        return tr.ex.fns
    module = op.operation
    while module.parent is not None:
        module = module.parent
    return FunctionTable(module)


def _replicated_axes(fns, op, blk, specs, red, unr, nz, res, lin, got, manual) -> set:
    """With check_vma, the manual axes the transposition may treat as JAX's types do:
    no op of the body names them, and the cotangent of each linear operand whose spec
    leaves one unnamed does not vary along it (transposed body's types). Along those
    axes a result's cotangent is whole on each member (not divided) and an operand's
    needs no psum: the equations JAX's check_vma transposition gives. Along the others
    the transposition is the one without check_vma (see the module doc)."""
    p = op.opview.params
    if not p["check_vma"]:
        return set()
    clean = set(manual) - _named_inside(fns, op, set())
    if not clean:
        return clean
    arg_axes = [spec_axes(p["out_specs"][j]) for j in nz] + \
        [spec_axes(specs[i]) for i in res]
    var = _block_varying(fns, blk, arg_axes, frozenset(manual))
    for i, u in enumerate(lin):
        if u and got[i] is not None:
            unnamed = clean - spec_axes(specs[i]) - set(red[i])
            clean -= unnamed & var.get(got[i], frozenset())
    return clean


def _shard_map_transpose(tr, op, cts, args, b):
    if all(c is None for c in cts):
        return [None] * len(args)
    p = op.opview.params
    fns = _functions(tr, op)
    callee = callee_of(op)
    ins, outs = fns.signature(callee)
    specs = _specs(p, len(args))
    sizes = dict(zip(p["mesh_axes"], p["mesh_shape"]))
    manual = [a for a in p["mesh_axes"] if a in set(p["manual_axes"])]
    red, unr = _reduced(p, len(args)), _unreduced(p)
    lin = [isinstance(a, Linear) for a in args]
    nz = [j for j, c in enumerate(cts) if c is not None]
    res = [i for i, u in enumerate(lin) if not u]
    t_fn, blk = fns.create(fns.fresh_name(f"{callee}_transpose"),
                           [outs[j] for j in nz] + [ins[i] for i in res], None,
                           fns.get(callee))
    bargs = list(blk.arguments)
    entries = [Linear(ins[i]) for i in range(len(args))]
    for i, v in zip(res, bargs[len(nz):]):
        entries[i] = v
    out_cts = [None] * len(outs)
    ip = ir.InsertionPoint(blk)
    tb = Builder(ip, op.location)
    for j, v in zip(nz, bargs):
        if unr[j]:   # (a reduced cotangent, cast to varying: JAX's reduced_vary_cast)
            v = tb.emit(CopyOp, v)[0]
            cast = getattr(v.owner, "operation", v.owner)
            cast.attributes[REDUCED_VARY_CAST] = ir.ArrayAttr.get(
                [ir.StringAttr.get(a) for a in unr[j]])
        out_cts[j] = v
    got = tr.run(entry_block(fns.get(callee)), entries, out_cts, ip, op.location)
    replicated = _replicated_axes(fns, op, blk, specs, red, unr, nz, res, lin, got, manual)
    kept, values = [], []
    for i, u in enumerate(lin):
        if not u or got[i] is None:
            continue
        ct = got[i]
        unnamed = tuple(a for a in manual if a not in spec_axes(specs[i])
                        and a not in red[i] and a not in replicated)
        if unnamed:
            ct = tb.psum(ct, axes=unnamed)
        kept.append(i)
        values.append(ct)
    if not kept:
        fns.erase(symbol_name(t_fn))
        return [None] * len(args)
    set_results(t_fn, values)
    cts_in = []
    for j in nz:
        ct = cts[j]
        k = math.prod(sizes[a] for a in manual if a not in spec_axes(p["out_specs"][j])
                      and a not in unr[j] and a not in replicated)
        if k != 1:
            a = aval_of(ct.type)
            ct = b.div(ct, b.constant(k, a.dtype, a.shape))
        cts_in.append(ct)
    got = _emit(b, fns, symbol_name(t_fn),
                cts_in + [args[i] for i in res], p,
                [p["out_specs"][j] for j in nz] + [specs[i] for i in res],
                [specs[i] for i in kept],
                [unr[j] for j in nz] + [red[i] for i in res], [red[i] for i in kept])
    out = [None] * len(args)
    for i, v in zip(kept, got):
        out[i] = v
    return out


# ---- batching -------------------------------------------------------------------------
def _shard_map_batch(batcher, op, vals, dims, b):
    """The op expanded into a function (its body's shard_maps first), batched as a call
    of it."""
    ex = batcher.ex
    callee = callee_of(op)
    avals = [aval_of(v.type) for v in op.operands]
    fn, blk = ex.fns.create(ex.fns.fresh_name(f"{callee}_expanded"), avals, None,
                            ex.fns.get(callee))
    copy = clone_into(op, ir.InsertionPoint(blk), dict(zip(op.operands, blk.arguments)))
    set_results(fn, list(copy.results))
    name = symbol_name(fn)
    expand_shard_maps(ex, [name])
    call = ex.call(Builder(ir.InsertionPoint(op), op.location), name, list(op.operands))
    call_op = call[0].owner.operation if call else None
    try:
        return BATCH_NESTED[T.CallOp](batcher, call_op, vals, dims, b)
    finally:
        if call_op is not None:
            call_op.erase()


JVP_NESTED[ShardMapOp] = _shard_map_jvp
TRANSPOSE_NESTED[ShardMapOp] = _shard_map_transpose
BATCH_NESTED[ShardMapOp] = _shard_map_batch

__all__ = ["expand_shard_maps"]
