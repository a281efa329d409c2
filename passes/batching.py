"""Batching over `func.func`: the machinery behind `--jaxpr-batch` (`jaxpr.vmap`).

    batch_function(fns, "f", in_dims=(0, None), axis_size=8) -> ("f_batched", out_dims)
        @f_batched takes f's arguments with a batch axis at in_dims[i] (None: unchanged)
        and returns f's results with one at out_dims[j] (wherever the rules left it, or
        None for results that do not depend on the batch; with force_out, always 0).

The body is interpreted op by op with an environment mapping each old value to a pair
(new value, batch dim or None). Ops whose operands are all unbatched are copied
unchanged; the others go through their batching rule (table `BATCH`, signature in
passes/rules/batch_util.py). Calls, checkpoints and custom-derivative calls batch their
callees (and custom rules) into new functions, cached by (callee, in dims, size, name).

    %ys = "jaxpr.vmap"(%xs, %w) {callee = @f, in_axes = array<i64: 0, -1>,
                                 out_axes = array<i64: 0>, axis_size = 8}
  ==>
    func.func private @f_batched(%xs: tensor<8x3xf32>, %w: tensor<3xf32>) -> ...
    %ys = "jaxpr.call"(%xs, %w) {callee = @f_batched}

JAX: interpreters/batching.py (batch_jaxpr), over func.func instead of a Jaxpr.
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d

from mjax.dialect import attributes as A
from mjax.dialect.builder import Builder
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import aval_of
from mjax.passes.autodiff import _replace, callee_of, clone_into
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules import BATCH, NOT_SUPPORTED
from mjax.passes.rules.batch_util import (NOT_MAPPED, BatchBuilder, bdim_at, moveaxis,
                                          names_axis)


class BatchError(PassError, ValueError):
    """A vmap that cannot be done as asked (e.g. a mapped output with out_axes=None);
    a ValueError, as JAX raises."""


# Batching rules of ops with bodies (cond, while, scan), keyed by op class:
# rule(batcher, op, vals, dims, b) -> (outs, out_dims); `batcher.run(block, pairs, b)`
# batches a region's block into the block at b's insertion point.
BATCH_NESTED: dict[type, object] = {}


def _dims_key(dims) -> str:
    return ",".join("n" if d is None else str(d) for d in dims)


class Batcher:
    """Batching over one module's functions (`fns`: the AD driver's function table)."""

    def __init__(self, fns, expand):
        self.fns = fns
        self.expand = expand          # expand(name): expand transformation ops in @name
        self.cache: dict = {}         # (callee, in dims, size, name, force) -> result
        self.reads_cache: dict = {}   # (callee, axis name) -> uses the name (reads_axis)

    # -- functions -------------------------------------------------------------------
    def batch_function(self, name: str, in_dims, axis_size: int, axis_name=None,
                       force_out: bool = False, where=None):
        """(name of the batched copy of @name, its result batch dims)."""
        in_dims = tuple(in_dims)
        key = (name, in_dims, axis_size, axis_name, force_out)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        fn = self.fns.get(name, where)
        self.expand(name)
        ins, outs = T.function_signature(fn)
        new_ins = [T.batched_aval(a, -1 if d is None else d, axis_size)
                   for a, d in zip(ins, in_dims)]
        block_fn = fn.regions[0].blocks[0]
        mark = (f"batch of @{name} in_dims=[{_dims_key(in_dims)}] size={axis_size}"
                f"{' name=' + axis_name if axis_name else ''}{' forced' if force_out else ''}")
        new_name = self.fns.fresh_name(f"{name}_batched")
        # Result types are known only after the body is batched: build with none, then set.
        new_fn, block = self.fns.create(new_name, new_ins, [], mark, fn)
        b = BatchBuilder(ir.InsertionPoint(block), fn.location, axis_size, axis_name)
        results = self.run(block_fn, list(zip(block.arguments, in_dims)), b)
        out_vals, out_dims = [], []
        for v, d in results:
            if force_out:
                v, d = bdim_at(b, v, d, 0), 0
            out_vals.append(v)
            out_dims.append(d)
        with fn.location:
            func_d.ReturnOp(out_vals, ip=b.ip)
        new_fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in block.arguments], [v.type for v in out_vals]))
        result = (new_name, tuple(out_dims))
        self.cache[key] = result
        return result

    # -- the interpreter ---------------------------------------------------------------
    def run(self, block: ir.Block, args, b: BatchBuilder):
        """Batches `block` given (value, dim) pairs for its arguments; returns (value,
        dim) pairs for the values it returns (terminator operands)."""
        env = dict(zip(block.arguments, args))
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "jaxpr.yield"):
                return [env[v] for v in op.operands]
            vals = [env[v][0] for v in op.operands]
            dims = [env[v][1] for v in op.operands]
            if all(d is NOT_MAPPED for d in dims) and not self.reads_axis(op, b.axis_name):
                new = clone_into(op, b.ip, dict(zip(op.operands, vals)))
                outs, out_dims = list(new.results), [NOT_MAPPED] * len(op.results)
            else:
                rb = BatchBuilder(b.ip, op.location, b.axis_size, b.axis_name)
                outs, out_dims = self.batch_op(op, vals, dims, rb)
            for r, v, d in zip(op.results, outs, out_dims):
                self._check_result(op, r, v, d, b.axis_size)
                env[r] = (v, d)
        raise PassError(block.owner.location, "body has no terminator")

    def reads_axis(self, op, axis_name) -> bool:
        """Whether `op` (or a function it calls) has a collective naming `axis_name`:
        then it is batched even when no operand is (psum(1, "i") is the axis size)."""
        if axis_name is None:
            return False
        view = op.opview
        if names_axis(view, axis_name):
            return True
        if not (op.name == "func.call" or isinstance(view, T.TransformOp)):
            return False
        key = (callee_of(op), axis_name)
        if key not in self.reads_cache:
            self.reads_cache[key] = False  # recursion guard
            fn = self.fns.get(key[0], op)
            self.reads_cache[key] = any(
                self.reads_axis(inner.operation, axis_name)
                for inner in fn.regions[0].blocks[0].operations)
        return self.reads_cache[key]

    def batch_op(self, op, vals, dims, b: BatchBuilder):
        view = op.opview
        if op.name == "func.call" or isinstance(view, T.TransformOp):
            return self.batch_call_like(op, view, vals, dims, b)
        if not isinstance(view, JaxprOp):
            raise op_error(op, "cannot batch a non-jaxpr op")
        nested = BATCH_NESTED.get(type(view))
        if nested is not None:   # ops with bodies: the rule batches its regions
            with op.location:
                outs, out_dims = nested(self, op, vals, dims, b)
            return list(outs), list(out_dims)
        rule = BATCH.get(type(view))
        if rule is None:
            why = NOT_SUPPORTED.get(("batch", type(view)), "no batching rule for this op")
            raise op_error(op, f"cannot vmap: {why}")
        with op.location:
            outs, out_dims = rule(b, vals, dims, **view.params)
        return list(outs), list(out_dims)

    def _check_result(self, op, old, new, d, size):
        want = aval_of(old.type)
        want = T.batched_aval(want, -1 if d is None else d, size)
        got = aval_of(new.type)
        if (got.shape, got.dtype) != (want.shape, want.dtype):
            raise op_error(op, f"internal error: batching rule gave {got.str_short()} with "
                               f"batch dim {d}, expected {want.str_short()}")

    # -- call-like ops -------------------------------------------------------------------
    def batch_call_like(self, op, view, vals, dims, b: BatchBuilder):
        if isinstance(view, (T.JvpOp, T.VjpOp, T.VmapOp)):
            raise op_error(op, "internal error: transformation op left unexpanded")
        if isinstance(view, (T.CheckpointTangentOp, T.CustomVjpTangentOp)):
            raise op_error(op, "is internal to --jaxpr-vjp and cannot be batched")
        size, name = b.axis_size, b.axis_name
        callee = callee_of(op)
        if isinstance(view, (T.CustomJvpCallOp, T.CustomVjpCallOp)):
            # Custom rules must keep matching their function: everything batched at 0.
            if isinstance(view, T.CustomVjpCallOp):
                # bwd gives one cotangent per input, batched like the input; batching
                # every input keeps them consistent (the broadcast's transpose then sums
                # the per-example cotangents of an unbatched input). JAX sums them too.
                vals = [bdim_at(b, v, d, 0) for v, d in zip(vals, dims)]
            else:
                vals = [moveaxis(b, v, d, 0) if d is not None else v
                        for v, d in zip(vals, dims)]
            dims = [None if d is None and isinstance(view, T.CustomJvpCallOp) else 0
                    for d in dims]
            ins, outs = self.fns.signature(callee)
            f, f_dims = self.batch_function(callee, dims, size, name, True, op)
            tan_dims = [d for d, a in zip(dims, ins) if T.differentiable(a)]
            p = view.params
            if isinstance(view, T.CustomJvpCallOp):
                g, _ = self.batch_function(str(p["jvp"]), dims + tan_dims, size, name, True, op)
                res = T.emit_transform(b, T.CustomJvpCallOp, *vals, signature=self.fns.signature,
                                       callee=A.Symbol(f), jvp=A.Symbol(g),
                                       num_consts=p["num_consts"])
            else:
                fwd, fwd_dims = self.batch_function(str(p["fwd"]), dims, size, name, True, op)
                n_res = len(fwd_dims) - len(outs)
                n_ct = sum(1 for a in outs if T.differentiable(a))
                bwd, _ = self.batch_function(str(p["bwd"]), [0] * (n_res + n_ct), size, name,
                                             True, op)
                res = T.emit_transform(b, T.CustomVjpCallOp, *vals, signature=self.fns.signature,
                                       callee=A.Symbol(f), fwd=A.Symbol(fwd), bwd=A.Symbol(bwd),
                                       num_consts=p["num_consts"])
            return res, list(f_dims)
        new, out_dims = self.batch_function(callee, dims, size, name, False, op)
        if isinstance(view, T.CheckpointOp):
            res = T.emit_transform(b, T.CheckpointOp, *vals, signature=self.fns.signature,
                                   callee=A.Symbol(new), prevent_cse=view.params["prevent_cse"])
        else:
            res = T.emit_transform(b, T.CallOp, *vals, signature=self.fns.signature,
                                   callee=A.Symbol(new))
        return res, list(out_dims)


def expand_vmap_op(batcher: Batcher, op: ir.Operation) -> None:
    """Replaces one `jaxpr.vmap` by a call of the batched callee, with results moved to
    `out_axes` (an unbatched result is broadcast; a batched one with out_axes -1 is an
    error, as in JAX)."""
    p = op.opview.params
    callee = str(p["callee"])
    in_dims = [None if a == T.NOT_MAPPED else a for a in p["in_axes"]]
    size, name = p["axis_size"], p["axis_name"]
    new, out_dims = batcher.batch_function(callee, in_dims, size, name, False, op)
    b = BatchBuilder(ir.InsertionPoint(op), op.location, size, name)
    results = T.emit_transform(b, T.CallOp, *op.operands, signature=batcher.fns.signature,
                               callee=A.Symbol(new))
    final = []
    for j, (v, d, want) in enumerate(zip(results, out_dims, p["out_axes"])):
        if want == T.NOT_MAPPED:
            if d is not NOT_MAPPED:
                raise BatchError(op, f"at vmap out_axes, got axis spec None but output was "
                                     f"batched on axis {d} (result {j} of @{callee})")
            final.append(v)
        else:
            final.append(bdim_at(b, v, d, want))
    _replace(op, final)


__all__ = ["BATCH_NESTED", "Batcher", "BatchError", "expand_vmap_op"]
