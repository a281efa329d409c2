"""Rules for `jaxpr.pallas_call` (dialect/ops/pallas.py): batching and JVP.

Batching (JAX: `_pallas_call_batching_rule`): a batched call gains a leading grid
dimension of the batch size. Every batched operand and every result moves its batch axis
first and gets a leading squeezed block dim, whose block index is the new grid index; the
index maps of unbatched operands ignore it. The kernel is the same except that its grid
queries count from axis 1 (`program_id(0)` becomes `program_id(1)`).

    %y = "jaxpr.pallas_call"(%x) {callee = @k, grid = array<i64: 2>,
                                 in_specs = [{block_shape = array<i64: 4>, index_map = @m}]}
  vmap over x: f32[8, 8] ==>
    %y = "jaxpr.pallas_call"(%x) {callee = @k_batched, grid = array<i64: 8, 2>,
             in_specs = [{block_shape = array<i64: -1, 4>, index_map = @m_batched}]}
    func.func private @m_batched(%b, %i) -> (%b, call @m(%i))

Unbatched scalar-prefetch operands stay as they are (every index map gets them after
the grid indices, as JAX's). With batched scalar-prefetch operands (JAX's explicit loop),
a dynamic grid or a spec in the "any" or "hbm" memory space (whole arrays that DMAs
index), vmap becomes a jaxpr.scan over the batch around the unbatched call (JAX folds
the batch into the grid but for batched scalar prefetch; the values agree), and jvp
raises NotImplementedError as JAX does. Over an axis of size 1 the call is not batched
(its batched operands squeezed, its results given a leading axis), as JAX's. A batched
call's dimension_semantics gain a leading "parallel" for the batch axis; its
cost_estimate is multiplied by the batch size, as JAX's.

JVP (JAX: `_pallas_call_jvp_rule`): the kernel is discharged into a pure function of its
blocks, that function is differentiated (passes/forward_mode.py), and a new kernel reads
all its refs (primal and tangent), runs the derivative inline and writes the results.
The call takes (inputs, input tangents) and gives (outputs, output tangents), each
tangent with its primal's BlockSpec; scratch buffers get tangent scratch buffers. Only
float inputs and outputs carry tangents.

Reverse mode: JAX's linearization error, pointing to custom_vjp (a pallas_call has no
transpose). Lowering: none here (`--jaxpr-pallas-interpret` / `--jaxpr-pallas-to-triton`).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d

from mjax.dialect.attributes import Symbol
from mjax.dialect.builder import Builder
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops import state as S
from mjax.dialect.ops import structural as St
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.pallas import SQUEEZED, PallasCallOp, emit_pallas_call
from mjax.dialect.types import ShapedArray, aval_of, tensor_type
from mjax.passes.interpreter import terminator
from mjax.passes.ir_util import entry_block, nested_ops, set_results, symbol_name
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules.ad_util import has_tangent
from mjax.passes.rules.batch_util import bdim_at
from mjax.passes.rules.tables import BATCH_NESTED, JVP_NESTED, LOWER, SHARD, TRANSPOSE

REVERSE_ERROR = (
    "Linearization failed to produce known values for all output primals. This is "
    "typically caused by attempting to differentiate a function uses an operation that "
    "does not support reverse-mode autodiff. (pallas_call has no reverse-mode rule: "
    "write the backward pass as a second kernel and combine both with jax.custom_vjp.)")


class PallasReverseError(PassError, ValueError):
    """Reverse mode through a pallas_call (a ValueError, as JAX raises)."""


class PallasNotImplemented(PassError, NotImplementedError):
    """A transformation of a pallas_call mjax (or JAX) does not implement."""


LOWER.unsupported(PallasCallOp, "a pallas_call is expanded first, by "
                                "--jaxpr-pallas-interpret (a loop over its grid) or "
                                "--jaxpr-pallas-to-triton")
SHARD.unsupported(PallasCallOp, "a Pallas kernel is opaque to sharding propagation")
TRANSPOSE.unsupported(PallasCallOp, "pallas_call has no reverse mode; wrap the kernel "
                                    "and its backward kernel in jax.custom_vjp")

I32 = ShapedArray((), np.int32)

# vmap along a shard_map mesh axis of an interpreted call whose kernel names it (its
# devices may talk to each other): passes/pallas_mesh.py's rule, registered there
MESH_BATCH: dict = {}


def _on_mesh(batcher, p) -> bool:
    return bool(p.get("interpret") and p.get("mesh_axes") and "rule" in MESH_BATCH
                and batcher.axis_name in tuple(p["mesh_axes"]))


def _fn_after(fns, name: str, in_avals, anchor: ir.Operation):
    return fns.create(fns.fresh_name(name), in_avals, None, anchor)


# ---- batching -----------------------------------------------------------------------------
def _batched_index_map(fns, imap: str, n_grid: int, batched: bool, anchor, loc) -> str:
    """@imap with the batch grid index first (and first among its results if batched);
    the scalar-prefetch refs after the grid indices, as @imap takes them. Its call has
    the unbatched pallas_call's location `loc`: the index map's named scopes are then
    the kernel's own, as in JAX's (no trace_start in the transform functions)."""
    prefetch = list(fns.signature(imap)[0][n_grid:])
    fn, block = _fn_after(fns, f"{imap}_batched" if batched else f"{imap}_unbatched",
                          [I32] * (n_grid + 1) + prefetch, anchor)
    args = list(block.arguments)
    b = Builder(ir.InsertionPoint(block), loc)
    idx = T.emit_transform(b, T.CallOp, *args[1:], signature=fns.signature,
                           callee=Symbol(imap))
    set_results(fn, ([args[0]] if batched else []) + list(idx))
    return symbol_name(fn)


def shifted_kernel(fns, callee: str, shift: int = 1) -> str:
    """A copy of kernel @callee whose grid queries name axis + shift."""
    old = fns.get(callee)
    new = old.clone(ip=ir.InsertionPoint.after(old))
    name = fns.fresh_name(f"{callee}_batched")
    new.attributes["sym_name"] = ir.StringAttr.get(name)
    fns.table[name] = new
    for op in nested_ops(new):
        if op.name in (S.ProgramIdOp.OPERATION_NAME, S.NumProgramsOp.OPERATION_NAME):
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            op.attributes["axis"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                       axis + shift)
    return name


def _batched_spec(spec, imap: str, batched: bool) -> dict:
    """A spec with (when batched) a leading squeezed block dim for the batch axis."""
    lead = (SQUEEZED,) if batched else ()
    out = {"block_shape": lead + tuple(spec["block_shape"]), "index_map": Symbol(imap)}
    if "element_padding" in spec:
        out["element_padding"] = (-1, -1)[:2 * len(lead)] + tuple(spec["element_padding"])
    return out


def _pallas_batch(batcher, op, vals, dims, b):
    fns, size = batcher.fns, batcher.axis_size
    p = dict(op.opview.params)
    if _on_mesh(batcher, p) and MESH_BATCH["applies"](batcher, op):
        return MESH_BATCH["rule"](batcher, op, vals, dims, b)
    if size == 1:
        return _batch_of_one(b, op, vals, dims, p)
    whole = any(spec.get("memory_space") in ("any", "hbm")
                for spec in list(p["in_specs"]) + list(p["out_specs"]))
    n_pre = int(p.get("num_scalar_prefetch") or 0)
    if any(g < 0 for g in p["grid"]) or any(d is not None for d in dims[:n_pre]) or whole:
        # (an "any"-space ref is the whole array, which DMAs index: no batch block dim;
        # batched scalar-prefetch operands are JAX's explicit loop too)
        return _batch_by_scan(batcher, op, vals, dims, b)
    # (the batch axis is a new parallel grid axis, the others "arbitrary" unless given,
    # as JAX's TPU lowering makes a vmapped dim's)
    sem = (p.get("compiler_params") or {}).get("dimension_semantics")
    if sem is None:
        sem = ("arbitrary",) * len(p["grid"])
    p["compiler_params"] = dict(p.get("compiler_params") or {},
                                dimension_semantics=("parallel",) + tuple(sem))
    aliases = p["input_output_aliases"] or ()
    aliased_ins = set(aliases[::2])
    anchor = fns.get(str(p["callee"]))
    n_grid = len(p["grid"])
    maps: dict = {}

    def batched_map(imap: str, batched: bool) -> str:
        if (imap, batched) not in maps:      # (one wrapper per index map, not per spec)
            maps[imap, batched] = _batched_index_map(fns, imap, n_grid, batched, anchor,
                                                     op.location)
        return maps[imap, batched]
    new_vals, in_specs = list(vals[:n_pre]), []     # (unbatched scalar prefetch: as is)
    for k, (v, d, spec) in enumerate(zip(vals[n_pre:], dims[n_pre:], p["in_specs"])):
        # (an aliased input must be batched; aliases count the scalar-prefetch operands)
        batched = d is not None or n_pre + k in aliased_ins
        if batched:
            v = bdim_at(b, v, d, 0)
        new_vals.append(v)
        imap = batched_map(str(spec["index_map"]), batched)
        in_specs.append(_batched_spec(spec, imap, batched))
    out_specs = [_batched_spec(spec, batched_map(str(spec["index_map"]), True), True)
                 for spec in p["out_specs"]]
    out_avals = [ShapedArray((size,) + a.shape, a.dtype)
                 for a in (aval_of(r.type) for r in op.results)]
    p.update(callee=Symbol(shifted_kernel(fns, str(p["callee"]))),
             grid=(size,) + tuple(p["grid"]), in_specs=in_specs, out_specs=out_specs)
    if p.get("cost_estimate"):       # (as JAX's: the batch's calls' costs)
        p["cost_estimate"] = {k: v * size for k, v in p["cost_estimate"].items()}
    outs = emit_pallas_call(b, new_vals, out_avals, **p)
    return outs, [0] * len(outs)


def _batch_of_one(b, op, vals, dims, p):
    """vmap over an axis of size 1, as JAX's: the batched operands squeezed, the call
    itself unbatched (its grid, its scalar prefetch as they were), its results given a
    leading axis of 1."""
    args = [v if d is None else b.emit(St.SqueezeOp, v, dimensions=(d,))[0]
            for v, d in zip(vals, dims)]
    outs = emit_pallas_call(b, args, [aval_of(r.type) for r in op.results], **p)
    outs = [b.emit(St.ExpandDimsOp, o, dimensions=(0,))[0] for o in outs]
    return outs, [0] * len(outs)


def _batch_by_scan(batcher, op, vals, dims, b):
    """vmap of a pallas_call with scalar prefetch or a dynamic grid: a jaxpr.scan over
    the batch whose body is the unbatched call (batched operands scanned over, the
    others constants). JAX folds the batch into the grid instead; the values agree."""
    size = batcher.axis_size
    p = dict(op.opview.params)
    consts, xs, where = [], [], []
    for v, d in zip(vals, dims):
        if d is None:
            where.append(("c", len(consts)))
            consts.append(v)
        else:
            where.append(("x", len(xs)))
            xs.append(bdim_at(b, v, d, 0))
    x_avals = [aval_of(x.type) for x in xs]
    slice_avals = [ShapedArray(a.shape[1:], a.dtype) for a in x_avals]
    out_avals = [aval_of(r.type) for r in op.results]
    loc = b.loc
    with loc:
        holder = ir.Operation.create("mjax.region_holder", regions=1, ip=b.ip)
    block = ir.Block.create_at_start(
        holder.regions[0], [c.type for c in consts] + [tensor_type(a) for a in slice_avals])
    bb = Builder(ir.InsertionPoint(block), loc)
    args = list(block.arguments)
    operands = [args[i] if kind == "c" else args[len(consts) + i] for kind, i in where]
    outs = emit_pallas_call(bb, operands, out_avals, **p)
    with loc:
        ir.Operation.create("jaxpr.yield", operands=outs, ip=bb.ip)
    scan = C.ScanOp.build(consts + xs, [ShapedArray((size,) + a.shape, a.dtype)
                                        for a in out_avals],
                          {"length": size, "reverse": False, "unroll": 1,
                           "num_consts": len(consts), "num_carry": 0}, [block],
                          loc=loc, ip=b.ip)
    holder.erase()
    results = list(scan.results)
    return results, [0] * len(results)


BATCH_NESTED[PallasCallOp] = _pallas_batch


# ---- JVP ------------------------------------------------------------------------------------
def _read_all(b: Builder, ref: ir.Value) -> ir.Value:
    a = aval_of(ref.type)
    zero = b.constant(np.int32(0))
    return b.emit(S.RefGetOp, ref, *[zero] * a.ndim, sizes=a.shape, squeezed=())[0]


def _write_all(b: Builder, ref: ir.Value, value: ir.Value) -> None:
    a = aval_of(ref.type)
    zero = b.constant(np.int32(0))
    b.emit(S.RefSwapOp, ref, value, *[zero] * a.ndim, sizes=a.shape, squeezed=())


def _jvp_kernel(jvp, callee: str, n_in: int, n_out: int, diff_in, diff_out,
                diff_scratch, where) -> str:
    """@callee_jvp over refs (ins, in tangents, outs, out tangents, scratch, scratch
    tangents): reads every ref, runs the JVP of the discharged kernel, writes back."""
    fns = jvp.ex.fns
    kernel = fns.get(callee)
    disc = jvp.discharged(callee)
    disc_name = symbol_name(disc)
    ref_avals = [aval_of(a.type) for a in entry_block(kernel).arguments]
    n_refs = len(ref_avals)
    d_all = (list(diff_in) + [n_in + j for j in diff_out]
             + [n_in + n_out + s for s in diff_scratch])
    jvp_name = jvp.function(disc_name, tuple(d_all), tuple(d_all), where=where)
    # Refs the kernel never writes need no write-back (keeps inputs read-only).
    disc_block = entry_block(disc)
    written = [terminator(disc_block).operands[k] != disc_block.arguments[k]
               for k in range(n_refs)]
    groups = [(range(n_in), diff_in), (range(n_in, n_in + n_out), [n_in + j for j in diff_out]),
              (range(n_in + n_out, n_refs), [n_in + n_out + s for s in diff_scratch])]
    order = []                     # kernel ref position -> ("p", k) or ("t", k)
    for prim, tang in groups:
        order += [("p", k) for k in prim] + [("t", k) for k in tang]
    avals = [ref_avals[k] for _, k in order]
    fn, block = _fn_after(fns, f"{callee}_jvp", avals, kernel)
    b = Builder(ir.InsertionPoint(block), kernel.location)
    refs = dict(zip(order, block.arguments))
    primals = [_read_all(b, refs[("p", k)]) for k in range(n_refs)]
    tangents = [_read_all(b, refs[("t", k)]) for k in d_all]
    results = jvp.inline(jvp_name, primals + tangents, b.ip)
    for k in range(n_refs):
        if written[k]:
            _write_all(b, refs[("p", k)], results[k])
    for t, k in enumerate(d_all):
        if written[k]:
            _write_all(b, refs[("t", k)], results[n_refs + t])
    with kernel.location:
        func_d.ReturnOp([], ip=ir.InsertionPoint(block))
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], []))
    return symbol_name(fn)


def _pallas_jvp(jvp, op, pairs):
    primals, tangents = [p for p, _ in pairs], [t for _, t in pairs]
    if all(t is None for t in tangents):
        return jvp.copy(op, pairs)
    if jvp.linearize:
        raise PallasReverseError(op, REVERSE_ERROR)
    p = dict(op.opview.params)
    if any(g < 0 for g in p["grid"]):
        raise PallasNotImplemented(op, "JVP of a pallas_call with a dynamic grid is not "
                                       "supported (as in JAX)")
    if p.get("num_scalar_prefetch"):
        raise PallasNotImplemented(op, "JVP of a pallas_call with scalar-prefetch operands "
                                       "(pltpu.PrefetchScalarGridSpec) is not supported "
                                       "(as in JAX)")
    if p["input_output_aliases"]:
        raise op_error(op, "JVP of a pallas_call with input_output_aliases is not "
                           "supported (as in JAX)")
    out_avals = [aval_of(r.type) for r in op.results]
    scratch = list(p["scratch_shapes"] or ())
    diff_in = [i for i, t in enumerate(tangents) if t is not None]
    diff_out = [j for j, a in enumerate(out_avals) if has_tangent(a)]
    # (a scratch ref's value type: the JVP kernel keeps a tangent scratch for a float one)
    diff_scratch = [s for s, a in enumerate(scratch)
                    if has_tangent(getattr(a, "inner_aval", a))]
    if not diff_out:
        return jvp.copy(op, pairs)
    b = jvp.builder(op)
    kernel = _jvp_kernel(jvp, str(p["callee"]), len(primals), len(out_avals), diff_in,
                         diff_out, diff_scratch, op)
    p.update(callee=Symbol(kernel),
             in_specs=list(p["in_specs"]) + [p["in_specs"][i] for i in diff_in],
             out_specs=list(p["out_specs"]) + [p["out_specs"][j] for j in diff_out],
             scratch_shapes=scratch + [scratch[s] for s in diff_scratch])
    if p.get("scratch_memory_spaces"):      # (a tangent buffer lives where its primal does)
        spaces = tuple(p["scratch_memory_spaces"])
        p["scratch_memory_spaces"] = spaces + tuple(spaces[s] for s in diff_scratch)
    outs = emit_pallas_call(b, primals + [tangents[i] for i in diff_in],
                            out_avals + [out_avals[j] for j in diff_out], **p)
    touts = dict(zip(diff_out, outs[len(out_avals):]))
    return [(o, touts.get(j)) for j, o in enumerate(outs[:len(out_avals)])]


JVP_NESTED[PallasCallOp] = _pallas_jvp

__all__ = ["MESH_BATCH", "PallasReverseError", "REVERSE_ERROR", "shifted_kernel"]
