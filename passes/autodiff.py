"""Automatic differentiation over `func.func`: the machinery behind --jaxpr-jvp,
--jaxpr-vjp and --jaxpr-expand-transforms, and the Python entry points the frontend uses.

    jvp_function(module, "f", diff_args=None, diff_results=None) -> "f_jvp"
        @f_jvp(primals..., tangents of diff_args...) -> (outs..., tangents of diff_results...)
    vjp_functions(module, "f", diff_args=None, diff_results=None) -> VjpInfo
        @f_fwd(primals...) -> (outs..., residuals...)
        @f_bwd(residuals..., cotangents of diff_results...) -> cotangents of diff_args
    split_vjp(module, "f") -> (fwd name, bwd name, VjpInfo)
    expand_transforms(module)   # every jaxpr.jvp / jaxpr.vjp, inner-first, any depth

`diff_args` / `diff_results` default to every float/complex argument / result; integer
and bool values never carry tangents (JAX's float0). Generated functions are private and
reused when asked for again (same callee, same diff_args/diff_results).

Forward mode is a small interpreter over the callee's body: an environment maps each old
value to a (primal, tangent) pair, with `None` a symbolic zero, and each op goes through
its JVP rule (passes/rules/*.py, table `JVP`). Ops without any nonzero tangent operand are
copied unchanged, so symbolic zeros emit nothing.

Reverse mode (JAX: ad.linearize + partial_eval + ad.backward_pass, over func.func):
1. linearize: the same interpreter builds the JVP of f into a temporary function, with
   calls inlined so that every tangent-carrying op is visible;
2. partial evaluation: an op is linear iff it consumes a tangent, transitively; the other
   ops form the forward function, and the primal values the linear ops use are its
   residuals (constants are rematerialized in the backward function instead);
3. transpose: the linear ops, in reverse, each through its transpose rule (table
   `TRANSPOSE`), accumulating cotangents with `jaxpr.add`.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d

from mjax.dialect import attributes as A
from mjax.dialect.builder import Builder
from mjax.dialect.context import context
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import ShapedArray, aval_of, tensor_type
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules import JVP, NOT_SUPPORTED, TRANSPOSE
from mjax.passes.rules.ad_util import Linear, has_tangent, instantiate

_MARK = "mjax.derived"  # attribute on generated functions: what they were derived from


@dataclass(frozen=True)
class VjpInfo:
    """What `vjp_functions` made. fwd: primals -> (outs, residuals); bwd: (residuals,
    cotangents of diff_results) -> cotangents of diff_args."""

    fwd: str
    bwd: str
    num_outputs: int
    residual_avals: tuple[ShapedArray, ...]
    diff_args: tuple[int, ...]
    diff_results: tuple[int, ...]

    @property
    def num_residuals(self) -> int:
        return len(self.residual_avals)


# ---- module helpers --------------------------------------------------------------
def _module_op(module) -> ir.Operation:
    return module.operation if isinstance(module, ir.Module) else module.operation


def _body(module) -> ir.Block:
    return _module_op(module).regions[0].blocks[0]


def entry_block(fn: ir.Operation) -> ir.Block:
    return fn.regions[0].blocks[0]


def symbol_name(fn: ir.Operation) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def clone_into(op: ir.Operation, ip: ir.InsertionPoint, mapping: dict) -> ir.Operation:
    """Clones `op` at `ip`, replacing operands (also inside its regions) per `mapping`."""
    new = op.clone(ip=ip)
    for i, v in enumerate(op.operands):
        if v in mapping:
            new.operands[i] = mapping[v]
    if len(new.regions):
        def visit(inner):
            for i, v in enumerate(inner.operands):
                if v in mapping:
                    inner.operands[i] = mapping[v]
            return ir.WalkResult.ADVANCE
        for region in new.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner.operation.walk(visit)
    return new


def callee_of(op: ir.Operation) -> str | None:
    """The function a call-like op (func.call, jaxpr.call, ...) names, if any."""
    if op.name == "func.call" or (op.name.startswith("jaxpr.") and "callee" in op.attributes):
        return ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    return None


class _Functions:
    """The module's functions by name, with signatures and new private functions."""

    def __init__(self, module):
        self.module = module
        self.body = _body(module)
        self.table = {}
        for op in self.body.operations:
            if op.operation.name == "func.func":
                self.table[symbol_name(op.operation)] = op.operation

    def get(self, name: str, where=None) -> ir.Operation:
        fn = self.table.get(str(name))
        if fn is None:
            raise PassError(where.location if where is not None else None,
                            f"no function named @{name} in the module")
        return fn

    def signature(self, name: str) -> T.Signature:
        fn = self.table.get(str(name))
        if fn is None:
            raise T.InferError(f"references @{name}, which is not a function in this module")
        return T.function_signature(fn)

    def derived(self, base: str, mark: str) -> str | None:
        """Name of an existing function derived as `mark`, if any."""
        for name, fn in self.table.items():
            if _MARK in fn.attributes and ir.StringAttr(fn.attributes[_MARK]).value == mark:
                return name
        return None

    def fresh_name(self, base: str) -> str:
        name, k = base, 1
        while name in self.table:
            name, k = f"{base}_{k}", k + 1
        return name

    def create(self, name: str, in_avals, out_avals, mark: str, after: ir.Operation):
        """A new private func.func right after `after`; returns (op, entry block)."""
        ins = [tensor_type(a) for a in in_avals]
        outs = [tensor_type(a) for a in out_avals]
        with after.location:
            fn = func_d.FuncOp(name, (ins, outs), visibility="private",
                               ip=ir.InsertionPoint.after(after))
            block = fn.add_entry_block()
        fn.attributes[_MARK] = ir.StringAttr.get(mark)
        self.table[name] = fn.operation
        return fn.operation, block


def _diff_suffix(kind, da, dr, ins, outs) -> str:
    if da == T.default_diff(ins) and dr == T.default_diff(outs):
        return ""
    return f"_a{'_'.join(map(str, da)) or 'none'}_r{'_'.join(map(str, dr)) or 'none'}"


def _check_diff(name, what, idx, avals, where) -> tuple[int, ...]:
    try:
        return T._check_diff(f"jaxpr.{what.split('_')[0]}", what, idx, avals)
    except T.InferError as e:
        raise PassError(where, f"differentiating @{name}: {e}") from None


# ---- the AD driver ---------------------------------------------------------------
class AD:
    """Autodiff over one module: keeps its function table and what has been expanded."""

    def __init__(self, module):
        self.module = module
        self.fns = _Functions(module)
        self.expanded: set[str] = set()

    # -- expansion of transformation ops -----------------------------------------
    def expand_in(self, name: str, kinds=("jvp", "vjp", "vmap")) -> None:
        """Replaces jaxpr.jvp/jaxpr.vjp ops in @name (and the functions it references)
        by calls of materialized derivative functions, inner-first."""
        key = f"{name}:{','.join(kinds)}"
        if key in self.expanded:
            return
        self.expanded.add(key)
        fn = self.fns.get(name)
        ops = []

        def visit(op):
            ops.append(op)
            return ir.WalkResult.ADVANCE
        fn.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in ops[1:]:
            view = op.opview
            if not isinstance(view, T.TransformOp):
                callee = callee_of(op)
                if callee is not None and callee in self.fns.table:
                    self.expand_in(callee, kinds)
                continue
            for attr in type(view).callee_attributes:
                self.expand_in(str(view.params[attr]), kinds)
            if isinstance(view, T.JvpOp) and "jvp" in kinds:
                self._expand_jvp_op(op)
            elif isinstance(view, T.VjpOp) and "vjp" in kinds:
                self._expand_vjp_op(op)
            elif isinstance(view, T.VmapOp) and "vmap" in kinds:
                self._expand_vmap_op(op, kinds)

    def _expand_vmap_op(self, op, kinds):
        from mjax.passes.batching import Batcher, expand_vmap_op
        if not hasattr(self, "batcher"):
            self.batcher = Batcher(self.fns, lambda name: self.expand_in(name, kinds))
        expand_vmap_op(self.batcher, op)

    def _call(self, b: Builder, callee: str, operands, cls=T.CallOp) -> list[ir.Value]:
        return T.emit_transform(b, cls, *operands, signature=self.fns.signature,
                                callee=A.Symbol(callee))

    def _expand_jvp_op(self, op):
        p = op.opview.params
        new = self.jvp_function(str(p["callee"]), p["diff_args"], p["diff_results"], where=op)
        b = Builder(ir.InsertionPoint(op), op.location)
        results = self._call(b, new, list(op.operands))
        _replace(op, results)

    def _expand_vjp_op(self, op):
        p = op.opview.params
        info = self.vjp_functions(str(p["callee"]), p["diff_args"], p["diff_results"],
                                  where=op)
        n_in = len(self.fns.signature(str(p["callee"]))[0])
        operands = list(op.operands)
        b = Builder(ir.InsertionPoint(op), op.location)
        fwd_out = self._call(b, info.fwd, operands[:n_in])
        res = fwd_out[info.num_outputs:]
        results = self._call(b, info.bwd, res + operands[n_in:])
        _replace(op, results)

    def _prepare(self, kind, name, diff_args, diff_results, where):
        """@name expanded, its signature, checked diff indices, and the mark that names
        the derived function (so asking again reuses it)."""
        fn = self.fns.get(name, where)
        self.expand_in(name)
        ins, outs = T.function_signature(fn)
        loc = where.location if where is not None else fn.location
        da = _check_diff(name, f"{kind} diff_args", diff_args, ins, loc)
        dr = _check_diff(name, f"{kind} diff_results", diff_results, outs, loc)
        mark = f"{kind} of @{name} diff_args={list(da)} diff_results={list(dr)}"
        return fn, ins, outs, da, dr, mark

    # -- forward mode ------------------------------------------------------------
    def jvp_function(self, name: str, diff_args=None, diff_results=None, where=None) -> str:
        """Materializes the JVP of @name; returns the new function's name."""
        fn, ins, outs, da, dr, mark = self._prepare("jvp", name, diff_args, diff_results,
                                                    where)
        existing = self.fns.derived(name, mark)
        if existing:
            return existing
        new_name = self.fns.fresh_name(f"{name}_jvp{_diff_suffix('jvp', da, dr, ins, outs)}")
        new_fn, block = self.fns.create(new_name, list(ins) + [ins[i] for i in da],
                                        list(outs) + [outs[j] for j in dr], mark, fn)
        args = list(block.arguments)
        tangents = [None] * len(ins)
        for k, i in enumerate(da):
            tangents[i] = args[len(ins) + k]
        b = Builder(ir.InsertionPoint(block), fn.location)
        results = _JvpInterpreter(self, linearize=False).run(entry_block(fn), args[:len(ins)],
                                                             tangents, b)
        primal_outs = [p for p, _ in results]
        tangent_outs = [instantiate(b, results[j][1], outs[j]) for j in dr]
        with fn.location:
            func_d.ReturnOp(primal_outs + tangent_outs, ip=b.ip)
        return new_name

    # -- reverse mode ------------------------------------------------------------
    def vjp_functions(self, name: str, diff_args=None, diff_results=None,
                      where=None) -> VjpInfo:
        """Materializes forward and backward functions of @name (see module doc)."""
        fn, ins, outs, da, dr, mark = self._prepare("vjp", name, diff_args, diff_results,
                                                    where)
        fwd_name = self.fns.derived(name, "fwd " + mark)
        bwd_name = self.fns.derived(name, "bwd " + mark)
        if fwd_name and bwd_name:
            fwd_outs = T.function_signature(self.fns.get(fwd_name))[1]
            return VjpInfo(fwd_name, bwd_name, len(outs), tuple(fwd_outs[len(outs):]), da, dr)

        # 1. linearize into a temporary function.
        lin_fn, block = self.fns.create(self.fns.fresh_name(f"{name}_linearized"),
                                        list(ins) + [ins[i] for i in da],
                                        list(outs) + [outs[j] for j in dr], "temporary", fn)
        try:
            args = list(block.arguments)
            tangents = [None] * len(ins)
            for k, i in enumerate(da):
                tangents[i] = args[len(ins) + k]
            b = Builder(ir.InsertionPoint(block), fn.location)
            results = _JvpInterpreter(self, linearize=True).run(
                entry_block(fn), args[:len(ins)], tangents, b)
            primal_outs = [p for p, _ in results]
            tangent_outs = [results[j][1] for j in dr]   # None: zero
            suffix = _diff_suffix("vjp", da, dr, ins, outs)
            info = self._split(fn, name, block, args[:len(ins)], args[len(ins):], primal_outs,
                               tangent_outs, ins, outs, da, dr, suffix, mark)
        finally:
            del self.fns.table[symbol_name(lin_fn)]
            lin_fn.erase()
        return info

    def _split(self, fn, name, block, primal_args, tangent_args, primal_outs, tangent_outs,
               ins, outs, da, dr, suffix, mark) -> VjpInfo:
        # 2. partial evaluation: which ops are linear (consume a tangent, transitively).
        linear = set(tangent_args)
        ops = list(block.operations)
        lin_ops, primal_ops = [], []
        for op in ops:
            if any(v in linear for v in op.operands):
                lin_ops.append(op)
                linear.update(op.results)
            else:
                primal_ops.append(op)
        for v in primal_outs:
            if v in linear:
                raise PassError(fn.location, f"internal error linearizing @{name}: a primal "
                                             f"output depends on a tangent")
        residuals, seen = [], set()
        for op in lin_ops:
            for v in op.operands:
                if v not in linear and v not in seen and not _is_constant(v):
                    seen.add(v)
                    residuals.append(v)
        res_avals = [aval_of(v.type) for v in residuals]

        # forward: the primal ops, returning outputs and residuals.
        fwd_name = self.fns.fresh_name(f"{name}_fwd{suffix}")
        fwd, fblock = self.fns.create(fwd_name, ins, list(outs) + res_avals, "fwd " + mark, fn)
        fmap = dict(zip(primal_args, fblock.arguments))
        fip = ir.InsertionPoint(fblock)
        for op in primal_ops:
            new = clone_into(op, fip, fmap)
            fmap.update(zip(op.results, new.results))
        with fn.location:
            func_d.ReturnOp([fmap[v] for v in primal_outs] + [fmap[v] for v in residuals],
                            ip=fip)

        # 3. transpose: the linear ops in reverse.
        bwd_name = self.fns.fresh_name(f"{name}_bwd{suffix}")
        bwd, bblock = self.fns.create(bwd_name, res_avals + [outs[j] for j in dr],
                                      [ins[i] for i in da], "bwd " + mark, fwd)
        bargs = list(bblock.arguments)
        bmap = dict(zip(residuals, bargs[:len(residuals)]))
        bip = ir.InsertionPoint(bblock)
        ct_env: dict = {}

        def accumulate(b, v, ct):
            if ct is None:
                return
            want = aval_of(v.type)
            got = aval_of(ct.type)
            if (got.shape, got.dtype) != (want.shape, want.dtype):
                raise PassError(b.loc, f"internal error: cotangent of type {got.str_short()} "
                                       f"for a value of type {want.str_short()}")
            ct_env[v] = ct if v not in ct_env else b.add(ct_env[v], ct)

        def nonlinear(v):
            if v not in bmap:  # a constant: rematerialize it here
                new = clone_into(v.owner, bip, {})
                bmap[v] = new.results[0]
            return bmap[v]

        b0 = Builder(bip, fn.location)
        for t, ct in zip(tangent_outs, bargs[len(residuals):]):
            if t is not None and t in linear:
                accumulate(b0, t, ct)
        for op in reversed(lin_ops):
            cts = [ct_env.pop(r, None) for r in op.results]
            if all(c is None for c in cts):
                continue
            b = Builder(bip, op.location)
            view = op.opview
            cls = type(view) if isinstance(view, JaxprOp) else None
            rule = TRANSPOSE.get(cls) if cls is not None else None
            if rule is None:
                why = NOT_SUPPORTED.get(("transpose", cls),
                                        "no transpose rule (is the op linear?)")
                raise op_error(op, f"cannot transpose for reverse-mode autodiff of @{name}: "
                                   f"{why}")
            args = [Linear(aval_of(v.type)) if v in linear else nonlinear(v)
                    for v in op.operands]
            ct = cts[0] if len(cts) == 1 else cts
            if len(cts) == 1 and ct is None:
                continue
            with op.location:
                out = rule(b, ct, *args, **view.params)
            if len(out) != len(args):
                raise op_error(op, f"internal error: transpose rule returned {len(out)} "
                                   f"cotangents for {len(args)} operands")
            for v, a, c in zip(op.operands, args, out):
                if isinstance(a, Linear):
                    accumulate(b, v, c)
        b = Builder(bip, fn.location)
        results = [instantiate(b, ct_env.get(tangent_args[k]), ins[i]) for k, i in enumerate(da)]
        with fn.location:
            func_d.ReturnOp(results, ip=bip)
        # Transposed checkpoints emit jaxpr.vjp ops (rematerialization): expand them too.
        self.expand_in(bwd_name)
        return VjpInfo(fwd_name, bwd_name, len(outs), tuple(res_avals), da, dr)


def _is_constant(v: ir.Value) -> bool:
    owner = v.owner
    return not isinstance(owner, ir.Block) and owner.name == "jaxpr.constant"


def _replace(op: ir.Operation, results) -> None:
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


# ---- the JVP interpreter ---------------------------------------------------------
class _JvpInterpreter:
    """Emits the JVP of a block. linearize=True is the mode --jaxpr-vjp uses: calls are
    inlined and checkpoint/custom_vjp get their linear tangent ops."""

    def __init__(self, ad: AD, linearize: bool):
        self.ad = ad
        self.linearize = linearize

    def run(self, block, primals, tangents, b: Builder):
        penv = dict(zip(block.arguments, primals))
        tenv = {a: t for a, t in zip(block.arguments, tangents) if t is not None}
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                return [(penv[v], tenv.get(v)) for v in op.operands]
            ps = [penv[v] for v in op.operands]
            ts = [tenv.get(v) for v in op.operands]
            outs, touts = self.op(op, ps, ts, b)
            for r, p, t in zip(op.results, outs, touts):
                penv[r] = p
                if t is not None and has_tangent(aval_of(r.type)):
                    tenv[r] = t
        raise PassError(block.owner.location, "function body has no func.return")

    def copy(self, op, ps, b):
        new = clone_into(op, b.ip, dict(zip(op.operands, ps)))
        return list(new.results), [None] * len(op.results)

    def op(self, op, ps, ts, b: Builder):
        view = op.opview
        nonzero = any(t is not None for t in ts)
        if op.name == "func.call" or isinstance(view, T.TransformOp):
            return self.call_like(op, view, ps, ts, b)
        if not nonzero:
            return self.copy(op, ps, b)
        if not isinstance(view, JaxprOp):
            raise op_error(op, "cannot differentiate a non-jaxpr op that has tangent inputs")
        rule = JVP.get(type(view))
        if rule is None:
            why = NOT_SUPPORTED.get(("jvp", type(view)), "no JVP rule for this op")
            raise op_error(op, f"cannot differentiate: {why}")
        rb = Builder(b.ip, op.location)
        with op.location:
            outs, touts = rule(rb, ps, ts, **view.params)
        return list(outs), list(touts)

    def call_like(self, op, view, ps, ts, b):
        nonzero = any(t is not None for t in ts)
        ad = self.ad
        if isinstance(view, (T.JvpOp, T.VjpOp, T.VmapOp)):
            raise op_error(op, "internal error: transformation op left unexpanded")
        if isinstance(view, (T.CheckpointTangentOp, T.CustomVjpTangentOp)):
            raise op_error(op, "is internal to --jaxpr-vjp and cannot be differentiated")
        if not nonzero:
            return self.copy(op, ps, b)
        rb = Builder(b.ip, op.location)
        callee = callee_of(op)
        ad.expand_in(callee)
        ins, outs = ad.fns.signature(callee)
        da = tuple(i for i, t in enumerate(ts) if t is not None)
        nz = [t for t in ts if t is not None]
        if isinstance(view, (T.CustomJvpCallOp, T.CustomVjpCallOp)):
            _check_closed_over_tangents(op, view, ts)
        if isinstance(view, T.CustomVjpCallOp):
            if not self.linearize:
                raise op_error(op, f"cannot apply forward-mode autodiff (jvp) to the "
                                   f"custom_vjp function @{callee}; use custom_jvp (JAX has "
                                   f"the same restriction)")
            p = view.params
            ad.expand_in(str(p["fwd"]))
            ad.expand_in(str(p["bwd"]))
            fwd_out = ad._call(rb, str(p["fwd"]), ps)
            res = fwd_out[len(outs):]
            tin = [instantiate(rb, t, a) for t, a in zip(ts, ins) if has_tangent(a)]
            tout = T.emit_transform(rb, T.CustomVjpTangentOp, *res, *tin,
                                    signature=ad.fns.signature, bwd=p["bwd"],
                                    num_residuals=len(res))
            it = iter(tout)
            return fwd_out[:len(outs)], [next(it) if has_tangent(a) else None for a in outs]
        if isinstance(view, T.CustomJvpCallOp):
            g = str(view.params["jvp"])
            ad.expand_in(g)
            tin = [instantiate(rb, t, a) for t, a in zip(ts, ins) if has_tangent(a)]
            if self.linearize:
                res = _inline(ad, g, ps + tin, rb)
            else:
                res = ad._call(rb, g, ps + tin)
            it = iter(res[len(outs):])
            return res[:len(outs)], [next(it) if has_tangent(a) else None for a in outs]
        # Only results that depend on a differentiated argument get tangents: asking for
        # the others would turn their symbolic zeros into real zero arrays.
        dependent = dependent_results(ad.fns.get(callee, op), da)
        dr = tuple(j for j in T.default_diff(outs) if j in dependent)
        if isinstance(view, T.CheckpointOp):
            if self.linearize:
                prim = clone_into(op, rb.ip, dict(zip(op.operands, ps)))
                tout = T.emit_transform(rb, T.CheckpointTangentOp, *ps, *nz,
                                        signature=ad.fns.signature, callee=A.Symbol(callee),
                                        diff_args=da, diff_results=dr,
                                        prevent_cse=view.params["prevent_cse"])
                it = iter(tout)
                return list(prim.results), [next(it) if j in dr else None
                                            for j in range(len(outs))]
            new = ad.jvp_function(callee, da, dr, where=op)
            res = T.emit_transform(rb, T.CheckpointOp, *ps, *nz, signature=ad.fns.signature,
                                   callee=A.Symbol(new),
                                   prevent_cse=view.params["prevent_cse"])
        elif self.linearize:  # plain call: inline its JVP so partial eval sees the ops
            sub = _JvpInterpreter(ad, True)
            pairs = sub.run(entry_block(ad.fns.get(callee, op)), ps, ts, rb)
            return [p for p, _ in pairs], [t for _, t in pairs]
        else:
            new = ad.jvp_function(callee, da, dr, where=op)
            res = ad._call(rb, new, ps + nz)
        it = iter(res[len(outs):])
        return res[:len(outs)], [next(it) if j in dr else None for j in range(len(outs))]


def dependent_results(fn: ir.Operation, args) -> set[int]:
    """Indices of fn's results that depend (through its body) on the arguments `args`."""
    block = entry_block(fn)
    dep = {block.arguments[i] for i in args}
    for op in block.operations:
        if op.name == "func.return":
            return {j for j, v in enumerate(op.operands) if v in dep}
        used = list(op.operands)
        if len(op.regions):  # values a region reads from outside count as operands
            def visit(inner):
                used.extend(inner.operands)
                return ir.WalkResult.ADVANCE
            op.walk(visit)
        if any(v in dep for v in used):
            dep.update(op.results)
    return set()


def _check_closed_over_tangents(op, view, ts) -> None:
    # JAX: ad.CustomJVPException / CustomVJPException.
    n = view.params["num_consts"] or 0
    if n and any(t is not None for t in ts[len(ts) - n:]):
        kind = "custom_jvp" if isinstance(view, T.CustomJvpCallOp) else "custom_vjp"
        rule = "JVP" if kind == "custom_jvp" else "VJP"
        raise op_error(op, f"Detected differentiation of a {kind} function with respect to "
                           f"a closed-over value. That isn't supported because the custom "
                           f"{rule} rule only specifies how to differentiate the {kind} "
                           f"function with respect to explicit input parameters. Try "
                           f"passing the closed-over value into the {kind} function as an "
                           f"argument, and adapting the {kind} rule.")


def _inline(ad: AD, name: str, args, b: Builder) -> list[ir.Value]:
    """Copies @name's body at b's insertion point (calls inside inlined too)."""
    block = entry_block(ad.fns.get(name))
    env = dict(zip(block.arguments, args))
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        callee = callee_of(op)
        if callee is not None and op.name in ("func.call", "jaxpr.call"):
            res = _inline(ad, callee, [env[v] for v in op.operands], b)
            env.update(zip(op.results, res))
            continue
        new = clone_into(op, b.ip, env)
        env.update(zip(op.results, new.results))
    raise PassError(None, f"@{name} has no func.return")


# ---- public entry points ---------------------------------------------------------
def jvp_function(module, name: str, diff_args=None, diff_results=None) -> str:
    """Adds @<name>_jvp: (primals..., tangents of diff_args...) -> (outs..., tangents of
    diff_results...) to `module`, or reuses it; returns its name."""
    with context(), ir.Location.unknown(context()):
        return AD(module).jvp_function(name, diff_args, diff_results)


def vjp_functions(module, name: str, diff_args=None, diff_results=None) -> VjpInfo:
    """Adds @<name>_fwd (primals -> outs + residuals) and @<name>_bwd (residuals +
    cotangents -> input cotangents) to `module`, or reuses them."""
    with context(), ir.Location.unknown(context()):
        return AD(module).vjp_functions(name, diff_args, diff_results)


def split_vjp(module, name: str, diff_args=None, diff_results=None):
    """(fwd name, bwd name, VjpInfo): run fwd once, keep its residuals, run bwd per
    cotangent (the frontend's `vjp`)."""
    info = vjp_functions(module, name, diff_args, diff_results)
    return info.fwd, info.bwd, info


def expand_transforms(module, kinds=("jvp", "vjp", "vmap"),
                      lower_leftovers: bool = True) -> None:
    """Materializes every jaxpr.jvp/jaxpr.vjp op of `module` (inner-first, any depth);
    with lower_leftovers, custom_jvp_call/custom_vjp_call/checkpoint become jaxpr.call."""
    with context(), ir.Location.unknown(context()):
        ad = AD(module)
        for name in list(ad.fns.table):
            if name in ad.fns.table:
                ad.expand_in(name, kinds)
        if lower_leftovers:
            lower_custom_calls(module)


def lower_custom_calls(module) -> None:
    """custom_jvp_call / custom_vjp_call / checkpoint @f(x) -> jaxpr.call @f(x)."""
    with context(), ir.Location.unknown(context()):
        fns = _Functions(module)
        for fn in list(fns.table.values()):
            ops = []

            def visit(op):
                if isinstance(op.opview, (T.CustomJvpCallOp, T.CustomVjpCallOp,
                                          T.CheckpointOp)):
                    ops.append(op)
                return ir.WalkResult.ADVANCE
            fn.walk(visit)
            for op in ops:
                b = Builder(ir.InsertionPoint(op), op.location)
                res = T.emit_transform(b, T.CallOp, *op.operands, signature=fns.signature,
                                       callee=op.opview.params["callee"])
                _replace(op, res)


__all__ = ["AD", "VjpInfo", "jvp_function", "vjp_functions", "split_vjp",
           "expand_transforms", "lower_custom_calls", "clone_into", "callee_of",
           "entry_block", "symbol_name"]
