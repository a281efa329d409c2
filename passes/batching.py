"""Batching over `func.func`: the machinery behind `--jaxpr-batch` (`jaxpr.vmap`).

    batch_function(ex, "f", in_dims=(0, None), axis_size=8) -> ("f_batched", out_dims)
        @f_batched takes f's arguments with a batch axis at in_dims[i] (None: unchanged)
        and returns f's results with one at out_dims[j] (wherever the rules left it, or
        None for results that do not depend on the batch; with force_out, always 0).

The body runs through the block interpreter (passes/interpreter.py) with entries
(new value, batch dim or None). Ops whose operands are all unbatched are copied
unchanged; the others go through their batching rule (table `BATCH`, signature in
passes/rules/batch_util.py). Ops with bodies have rules in `BATCH_NESTED`, with the
BATCH signature plus the transformation itself, `rule(batcher, op, vals, dims, b) ->
(outs, out_dims)`: calls, checkpoints and custom-derivative calls batch their callees
(and custom rules) into new functions, derived once per (callee, in dims, size, name)
(passes/derived.py); region ops (cond, while, scan) batch a region's block into a new
block with `batcher.run(region_block, pairs, b)`, b a BatchBuilder in that block.

    %ys = "jaxpr.vmap"(%xs, %w) {callee = @f, in_axes = array<i64: 0, -1>,
                                 out_axes = array<i64: 0>, axis_size = 8}
  ==>
    func.func private @f_batched(%xs: tensor<8x3xf32>, %w: tensor<3xf32>) -> ...
    %ys = "jaxpr.call"(%xs, %w) {callee = @f_batched}

JAX: interpreters/batching.py (batch_jaxpr), over func.func instead of a Jaxpr.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import OPS
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import aval_of
from mjax.passes import custom_rules
from mjax.passes.default_precision import READERS, under
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import (callee_of, clone_into, entry_block, has_effects,
                                 nested_ops, replace_op, set_results, symbol_name)
from mjax.passes.name_stacks import wrap_scopes
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules.ad_util import IMPLICIT_BROADCAST
from mjax.passes.rules.batch_util import (NOT_MAPPED, BatchBuilder, bdim_at,
                                          implicit_broadcast_batched, moveaxis, names_axis)
from mjax.passes.rules.tables import BATCH, BATCH_NESTED, EXPAND


class NoBatchingRuleError(PassError, NotImplementedError):
    """An op without a batching rule reached vmap: JAX's NotImplementedError ("Batching
    rule for ... not implemented")."""


class BatchError(PassError, ValueError):
    """A vmap that cannot be done as asked (e.g. a mapped output with out_axes=None);
    a ValueError, as JAX raises."""


# (the op lax's implicit broadcasts are staged as; the frontend marks them)
_BROADCAST = "jaxpr.broadcast_in_dim"

# (unbatched result type, batch dim, axis size) -> the batched type a rule gave for it
_WANT_TYPES: dict = {}


class Batcher:
    """The batching transformation, emitting at `ip`; entries are (value, dim | None)."""

    def __init__(self, ex, ip: ir.InsertionPoint, axis_size: int, axis_name=None,
                 write_mask=None):
        self.ex = ex                  # the Expander: functions, derived table
        self.ip = ip
        self.axis_size = axis_size
        self.axis_name = axis_name
        # Inside a while_loop body whose predicate is batched: which elements still run
        # (bool[axis_size]); ref writes there leave the finished elements' parts as
        # they were (passes/rules/state.py).
        self.write_mask = write_mask

    @property
    def fns(self):
        return self.ex.fns

    def into(self, block: ir.Block) -> "Batcher":
        return self.at(ir.InsertionPoint(block))

    def at(self, ip: ir.InsertionPoint) -> "Batcher":
        return Batcher(self.ex, ip, self.axis_size, self.axis_name, self.write_mask)

    def builder(self, loc: ir.Location) -> BatchBuilder:
        b = BatchBuilder(self.ip, loc, self.axis_size, self.axis_name)
        b.write_mask = self.write_mask
        return b

    def run(self, block: ir.Block, pairs, b: BatchBuilder | None = None) -> list[tuple]:
        """Batches `block` given (value, dim) pairs for its arguments, emitting at `b`'s
        insertion point if given; returns (value, dim) pairs for the values its
        terminator gives."""
        if b is not None:
            return self.at(b.ip).run(block, pairs)
        return interpret(block, self.rule_for, Env(zip(block.arguments, pairs)))

    def rule_for(self, op: ir.Operation):
        name = op.name
        cls = OPS.get(name)     # (a jaxpr op's class from its name: no OpView made)
        if cls is None:
            cls = T.CallOp if name == "func.call" else type(op.opview)
        nested = BATCH_NESTED.get(cls)
        if nested is not None:
            return lambda op, pairs: self._nested_rule(nested, op, pairs)
        if issubclass(cls, T.TransformOp):
            raise op_error(op, "cannot vmap: no batching rule for this transformation op "
                               "(it must be expanded first)")
        return self._op_rule

    def _op_rule(self, op, pairs):
        vals, dims = [v for v, _ in pairs], [d for _, d in pairs]
        if all(d is NOT_MAPPED for d in dims) and (
                self.axis_name is None or not names_axis(op.opview, self.axis_name)):
            new = clone_into(op, self.ip, dict(zip(op.operands, vals)))
            return [(r, NOT_MAPPED) for r in new.results]
        cls = OPS.get(op.name)     # (a jaxpr op's class: no OpView made)
        if cls is None:
            raise op_error(op, "cannot batch a non-jaxpr op")
        rule = BATCH.get(cls)
        if rule is None:
            raise NoBatchingRuleError(op, f"'{op.name}' op cannot vmap: {BATCH.why(cls)}")
        loc = op.location
        if op.name == _BROADCAST and IMPLICIT_BROADCAST in op.attributes:
            with loc:
                return self._checked(op, [implicit_broadcast_batched(
                    self.builder(loc), vals[0], dims[0], cls.params_of(op)["shape"])])
        with loc:
            if cls in READERS:    # (its rule's dots: the default recorded on the op)
                outs, out_dims = under(op, lambda: rule(self.builder(loc), vals, dims,
                                                        **cls.params_of(op)))
            else:
                outs, out_dims = rule(self.builder(loc), vals, dims, **cls.params_of(op))
        return self._checked(op, list(zip(outs, out_dims)))

    def _nested_rule(self, rule, op, pairs):
        if rule is _call_batch and _dead_call(self.ex, op):
            # (grad's staged value call, left for make_jaxpr and dropped by --jaxpr-dce:
            # not batched, as nothing reads it)
            return [(None, NOT_MAPPED)] * len(op.results)
        vals, dims = [v for v, _ in pairs], [d for _, d in pairs]
        if all(d is NOT_MAPPED for d in dims) and not self.reads_axis(op):
            new = clone_into(op, self.ip, dict(zip(op.operands, vals)))
            return [(r, NOT_MAPPED) for r in new.results]
        with op.location:
            outs, out_dims = rule(self, op, vals, dims, self.builder(op.location))
        return self._checked(op, list(zip(outs, out_dims)))

    def _checked(self, op, pairs):
        # (The type a result must have, per (unbatched type, batch dim, size), made once:
        # types are uniqued, so the check is one comparison when it passes.)
        size = self.axis_size
        for old, (new, d) in zip(op.results, pairs):
            old_t, new_t = old.type, new.type
            key = (old_t, d, size)
            want_t = _WANT_TYPES.get(key)
            if want_t is not None and new_t == want_t:
                continue
            want = T.batched_aval(aval_of(old_t), -1 if d is None else d, size)
            got = aval_of(new_t)
            if (got.shape, got.dtype) != (want.shape, want.dtype):
                raise op_error(op, f"internal error: batching rule gave {got.str_short()} "
                                   f"with batch dim {d}, expected {want.str_short()}")
            if want_t is None:
                if len(_WANT_TYPES) >= 4096:
                    _WANT_TYPES.clear()
                _WANT_TYPES[key] = new_t
        return pairs

    def reads_axis(self, op) -> bool:
        """Whether `op` (its regions, or a function it calls) has a collective naming this
        vmap's axis: then it is batched even when no operand is (psum(1, "i") is the
        axis size)."""
        if self.axis_name is None:
            return False
        for inner in [op.operation] + nested_ops(op):
            if names_axis(inner.opview, self.axis_name):
                return True
            callee = callee_of(inner)
            if callee is not None and callee in self.ex.fns and self._callee_reads(callee):
                return True
        return False

    def _callee_reads(self, name: str) -> bool:
        cache = self.ex.state.setdefault("batch_reads_axis", {})
        key = (name, self.axis_name)
        if key not in cache:
            cache[key] = False  # recursion guard
            cache[key] = any(self.reads_axis(inner.operation)
                             for inner in entry_block(self.ex.fns.get(name)).operations)
        return cache[key]


def _dead_call(ex, op) -> bool:
    """Whether call `op` gives only unused results, reads no ref and has no effects (its
    callee's effects looked up once per expansion)."""
    for r in op.results:
        if next(iter(r.uses), None) is not None:
            return False
    if op.name != "jaxpr.call" or any(isinstance(v.type, ir.MemRefType)
                                      for v in op.operands):
        return False
    pure = ex.state.setdefault("batch_pure_callees", {})
    callee = callee_of(op)
    if callee not in pure:
        pure[callee] = ex.effect_free() or not has_effects(op)
    return pure[callee]


# ---- functions -----------------------------------------------------------------------
_OUT_DIMS = "mjax.batch_out_dims"   # on a batched function: its result batch dims (-1: none)


def batch_function(ex, name: str, in_dims, axis_size: int, axis_name=None,
                   force_out: bool = False, where=None):
    """(name of the batched copy of @name, its result batch dims)."""
    in_dims = tuple(in_dims)
    key = dict(in_dims=in_dims, axis_size=axis_size, axis_name=axis_name,
               force_out=force_out)
    hit = ex.derived.get(name, T.VmapOp, **key)
    if hit is not None:
        dims = ir.DenseI64ArrayAttr(ex.fns.get(hit).attributes[_OUT_DIMS])
        return hit, tuple(None if d == T.NOT_MAPPED else d for d in dims)
    fn = ex.fns.get(name, where)
    ex.expand_function(name)
    ins, outs = T.function_signature(fn)
    new_ins = [T.batched_aval(a, -1 if d is None else d, axis_size)
               for a, d in zip(ins, in_dims)]
    # Result types are known only after the body is batched: built with none, then set.
    # With force_out they are known up front, and the entry is registered before the body
    # is batched, so a function that names itself (a custom_jvp rule calling its own
    # function) finds it instead of recursing forever.
    new_outs = [T.batched_aval(a, 0, axis_size) for a in outs] if force_out else None
    new_fn, block = ex.fns.create(ex.fns.fresh_name(f"{name}_batched"), new_ins, new_outs,
                                  fn)
    if force_out:
        ex.derived.add(symbol_name(new_fn), name, T.VmapOp,
                       **key)
        new_fn.attributes[_OUT_DIMS] = ir.DenseI64ArrayAttr.get([0] * len(outs))
    batch = Batcher(ex, ir.InsertionPoint(block), axis_size, axis_name)
    results = batch.run(entry_block(fn), list(zip(block.arguments, in_dims)))
    b = BatchBuilder(batch.ip, fn.location, axis_size, axis_name)
    if force_out:
        results = [(bdim_at(b, v, d, 0), 0) for v, d in results]
    set_results(new_fn, [v for v, _ in results])
    wrap_scopes(new_fn, "vmap")     # (JAX's name stack: vmap(scope)/sin)
    new_name = symbol_name(new_fn)
    if not force_out:
        ex.derived.add(new_name, name, T.VmapOp, **key)
    out_dims = tuple(d for _, d in results)
    new_fn.attributes[_OUT_DIMS] = ir.DenseI64ArrayAttr.get(
        [T.NOT_MAPPED if d is None else d for d in out_dims])
    return new_name, out_dims


# ---- ops with bodies -----------------------------------------------------------------
# BATCH_NESTED rule(batcher, op, vals, dims, b) -> (outs, out_dims), as BATCH rules plus
# the batcher. Called when an operand is batched or the op reads the vmap's named axis.


def _call_batch(batcher, op, vals, dims, b):
    ex = batcher.ex
    if batcher.write_mask is not None and any(isinstance(v.type, ir.MemRefType)
                                              for v in vals):
        raise PassError(op, "vmap of a while_loop whose predicate differs across the "
                            "batch and whose body passes a ref to a function call is not "
                            "implemented in mjax (inline the call)")
    new, out_dims = batch_function(ex, callee_of(op), dims, batcher.axis_size,
                                   batcher.axis_name, False, op)
    if isinstance(op.opview, T.CheckpointOp):
        p = op.opview.params     # the remat policy (and its names) survive batching
        kept = {k: p[k] for k in ("policy", "names") if p.get(k) is not None}
        res = ex.call(b, new, vals, cls=T.CheckpointOp, prevent_cse=p["prevent_cse"],
                      **kept)
    else:
        res = ex.call(b, new, vals)
    return res, out_dims


def _custom_call_batch(batcher, op, vals, dims, b):
    ex, view = batcher.ex, op.opview
    size, name = batcher.axis_size, batcher.axis_name
    callee = callee_of(op)
    # As JAX: batched inputs move to 0, unbatched ones stay unbatched (libraries check
    # this: equinox's `nonbatchable`); the rules are batched the same way, results at 0.
    vals = [moveaxis(b, v, d, 0) if d is not None else v for v, d in zip(vals, dims)]
    dims = [None if d is None else 0 for d in dims]
    ins, outs = ex.fns.signature(callee)
    users = custom_rules.user_batching(ex, op, dims, size, name)
    if users is not None:     # (a hijax primitive's own `batch`, a custom_vmap rule)
        users, user_dims = users
        return ex.call(b, users, vals), user_dims
    f, f_dims = batch_function(ex, callee, dims, size, name, True, op)
    p = view.params
    # Rules known only by their handle stay untraced: the batched call gets a handle of
    # the rules batched the same way once traced (passes/custom_rules.py).
    rule = batched_rules(p["rule"], dims, ins, size, name) if p["rule"] else None
    if isinstance(view, T.CustomJvpCallOp):
        g = None
        if p["jvp"] is not None:
            tan_dims = [d for d, a in zip(dims, ins) if T.differentiable(a)]
            g, _ = batch_function(ex, str(p["jvp"]), dims + tan_dims, size, name, True, op)
            rule = None
        res = ex.call(b, f, vals, cls=T.CustomJvpCallOp, jvp=_sym(g), rule=rule,
                      num_consts=p["num_consts"])
    else:
        fwd = bwd = None
        n_ct = sum(1 for a in outs if T.differentiable(a))
        if p["fwd"] is not None:
            fwd, res_dims = batched_fwd(ex, str(p["fwd"]), dims, len(outs), size, name, op)
            if rule is not None and None in res_dims:
                # bwd left to the handle: it must take the unbatched residuals unbatched
                rule = batched_rules(p["rule"], dims, ins, size, name,
                                     res_dims + [0] * n_ct)
        if p["bwd"] is not None:
            bwd = batched_bwd(ex, str(p["bwd"]), res_dims + [0] * n_ct, dims, size, name,
                              op, ins)
            rule = None
        res = ex.call(b, f, vals, cls=T.CustomVjpCallOp, fwd=_sym(fwd), bwd=_sym(bwd),
                      rule=rule, num_consts=p["num_consts"])
    return res, f_dims


def batched_fwd(ex, fwd: str, in_dims, n_outs: int, axis_size: int, axis_name, where):
    """(a custom_vjp fwd rule batched along `in_dims`, its residuals' batch dims): the
    outputs at 0, as the batched function's, and each residual at 0 or unbatched where
    batching leaves it unbatched, as JAX keeps them (bwd then sees them unbatched)."""
    inner, dims = batch_function(ex, fwd, in_dims, axis_size, axis_name, False, where)
    res_dims = [None if d is None else 0 for d in dims[n_outs:]]
    wanted = [0] * n_outs + res_dims
    if list(dims) == wanted:
        return inner, res_dims
    fixes = [None if w is None else (lambda b, v, d=d: bdim_at(b, v, d, 0))
             for d, w in zip(dims, wanted)]
    return _rewrapped(ex, inner, "fwd", fixes, axis_size, axis_name,
                      at_0=tuple(wanted)), res_dims


def batched_bwd(ex, bwd: str, arg_dims, in_dims, axis_size: int, axis_name, where,
                ins=None) -> str:
    """A custom_vjp bwd rule batched along `arg_dims` (residuals, cotangents), giving each
    input's cotangent batched at 0 where the call's input is batched (`in_dims`) and
    summed over the batch where it is not, as the batched call's inputs are. A bwd that
    gives cotangents of the differentiable inputs (`ins`: the call's input avals) only
    has those inputs' dims."""
    if ins is not None and len(ex.fns.signature(bwd)[1]) != len(in_dims):
        in_dims = [d for d, a in zip(in_dims, ins) if T.differentiable(a)]
    batched, _ = batch_function(ex, bwd, arg_dims, axis_size, axis_name, True, where)
    unbatched = tuple(k for k, d in enumerate(in_dims) if d is None)
    if not unbatched:
        return batched
    return _rewrapped(ex, batched, "summed",
                      [_summed if k in unbatched else None for k in range(len(in_dims))],
                      axis_size, axis_name, summed=unbatched)


def _rewrapped(ex, inner: str, suffix: str, fixes, axis_size, axis_name, **key) -> str:
    """A function calling @inner and passing its k-th result through fixes[k](b, value)
    (None: as it is); derived once per (inner, key)."""
    hit = ex.derived.get(inner, T.VmapOp, **key)
    if hit is not None:
        return hit
    ins, _ = ex.fns.signature(inner)
    where = ex.fns.get(inner)
    fn, block = ex.fns.create(ex.fns.fresh_name(f"{inner}_{suffix}"), ins, None, where)
    b = BatchBuilder(ir.InsertionPoint(block), where.location, axis_size, axis_name)
    results = ex.call(b, inner, list(block.arguments))
    set_results(fn, [v if fix is None else fix(b, v) for v, fix in zip(results, fixes)])
    ex.derived.add(symbol_name(fn), inner, T.VmapOp, **key)
    return symbol_name(fn)


def _summed(b, ct):
    aval = aval_of(ct.type)
    if T.differentiable(aval):
        return b.reduce_sum(ct, axes=(0,))
    return b.zeros(aval.update(shape=aval.shape[1:]))   # (float0: nothing to sum)


def _sym(name):
    return None if name is None else A.Symbol(name)


class _BatchedRules:
    """A custom call's rules `base` batched as vmap batches the call: batched arguments
    at 0, the unbatched ones unbatched, so the rules keep matching the batched function;
    bwd's arguments along `bwd_dims` when known (a fwd traced already; a pullback's bwd,
    custom_vjp_bwd), else all at 0. The source of a derived handle
    (passes/custom_rules.py): batched when a pass needs the rule."""

    def __init__(self, base, dims, ins, axis_size, axis_name, bwd_dims=None):
        self.base, self.dims, self.ins = base, tuple(dims), list(ins)
        self.axis_size, self.axis_name = axis_size, axis_name
        self.bwd_dims = bwd_dims

    def materialize(self, ex, part, where):
        rule = custom_rules.materialize(ex, self.base, part, where)
        kind, _ = custom_rules.split_part(part)    # (its symbolic zeros: the base's)
        if kind == "jvp":
            dims = list(self.dims) + [d for d, a in zip(self.dims, self.ins)
                                      if T.differentiable(a)]
        elif kind == "fwd":
            dims = list(self.dims)
        else:   # bwd: residuals and cotangents (fwd batched from the handle: all at 0)
            dims = self.bwd_dims or [0] * len(ex.fns.signature(rule)[0])
            return batched_bwd(ex, rule, dims, self.dims, self.axis_size, self.axis_name,
                               where, self.ins)
        return batch_function(ex, rule, dims, self.axis_size, self.axis_name, True, where)[0]


def batched_rules(handle: str, dims, ins, axis_size: int, axis_name, bwd_dims=None) -> str:
    """The handle of `handle`'s rules batched along `dims` (see _BatchedRules)."""
    dims = tuple(-1 if d is None else d for d in dims)
    key = f"{handle}|vmap{dims}x{axis_size}@{axis_name}"
    if bwd_dims is not None:
        bwd_dims = tuple(None if d is None or d == -1 else d for d in bwd_dims)
        key += f"bwd{tuple(-1 if d is None else d for d in bwd_dims)}"
    return custom_rules.derive(handle, key, lambda: _BatchedRules(
        handle, [None if d == -1 else d for d in dims], ins, axis_size, axis_name, bwd_dims))


def _custom_vjp_bwd_batch(batcher, op, vals, dims, b):
    # A pullback's bwd rule not traced yet (vmap of a pullback, as jacrev): it stays
    # untraced, the batched op naming the rules batched the same way once traced. Batched
    # residuals move to 0, cotangents all to 0 (they match the batched function's results,
    # whose signature gives the op's types), results come at 0.
    ex, p = batcher.ex, op.opview.params
    size, name = batcher.axis_size, batcher.axis_name
    n_res = p["num_residuals"]
    callee = str(p["callee"])
    ins, _ = ex.fns.signature(callee)
    f, _ = batch_function(ex, callee, [0] * len(ins), size, name, True, op)
    res = [moveaxis(b, v, d, 0) if d is not None else v
           for v, d in zip(vals[:n_res], dims[:n_res])]
    cts = [bdim_at(b, v, d, 0) for v, d in zip(vals[n_res:], dims[n_res:])]
    bwd_dims = [None if d is None else 0 for d in dims[:n_res]] + [0] * len(cts)
    rule = batched_rules(p["rule"], [0] * len(ins), ins, size, name, bwd_dims)
    outs = ex.call(b, f, res + cts, cls=T.CustomVjpBwdOp, rule=rule, num_residuals=n_res,
                   zero_cotangents=p["zero_cotangents"])
    return outs, [0] * len(outs)


def _internal(batcher, op, vals, dims, b):
    raise op_error(op, "is internal to --jaxpr-vjp and cannot be batched")


BATCH_NESTED.update({
    T.CallOp: _call_batch,
    T.CheckpointOp: _call_batch,
    T.CustomJvpCallOp: _custom_call_batch,
    T.CustomVjpCallOp: _custom_call_batch,
    T.CheckpointTangentOp: _internal,
    T.CustomVjpTangentOp: _internal,
    T.CustomVjpBwdOp: _custom_vjp_bwd_batch,
})


# ---- jaxpr.vmap ----------------------------------------------------------------------
def expand_vmap_op(ex, op: ir.Operation) -> None:
    """Replaces one `jaxpr.vmap` by a call of the batched callee, with results moved to
    `out_axes` (an unbatched result is broadcast; a batched one with out_axes -1 is an
    error, as in JAX)."""
    p = op.opview.params
    callee = str(p["callee"])
    in_dims = [None if a == T.NOT_MAPPED else a for a in p["in_axes"]]
    size, name = p["axis_size"], p["axis_name"]
    new, out_dims = batch_function(ex, callee, in_dims, size, name, False, op)
    b = BatchBuilder(ir.InsertionPoint(op), op.location, size, name)
    results = ex.call(b, new, op.operands)
    final = []
    paths = p.get("out_paths") or ("",) * len(results)
    for j, (v, d, want) in enumerate(zip(results, out_dims, p["out_axes"])):
        if want == T.NOT_MAPPED:
            if d is not NOT_MAPPED:
                raise BatchError(op, f"at vmap out_axes{paths[j]}, got axis spec None but "
                                     f"output was batched on axis {d} (result {j} of "
                                     f"@{callee})")
            final.append(v)
        else:
            final.append(bdim_at(b, v, d, want))
    replace_op(op, final)


EXPAND[T.VmapOp] = expand_vmap_op

__all__ = ["BatchError", "Batcher", "batch_function", "expand_vmap_op"]
