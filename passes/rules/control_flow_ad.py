"""Autodiff and batching rules of `jaxpr.cond`, `jaxpr.while`, `jaxpr.scan`.

Layouts are in dialect/ops/control_flow.py. Every rule builds the new op's bodies by
running a transformation over the old op's region blocks (passes/interpreter.py); the
transformation is the rule's first argument (passes/rules/tables.py):

    jvp     JVP_NESTED       (forward_mode.Jvp)         cond, while, scan
    pe      PARTIAL_EVAL     (partial_eval.PartialEval)  cond, scan: known op + unknown op
    tr      TRANSPOSE_NESTED (reverse_mode.Transposer)   cond, scan (scan transposed runs
                                                         reversed)
    batcher BATCH_NESTED     (batching.Batcher)         cond, while, scan

Bodies are built in a placeholder op's block (`_Scratch`) and moved into the new op once
its result types are known; a fixed point over loop carries (which get nonzero tangents,
which are unknown, which are batched) reruns the body until the set stops growing, as
JAX's `_scan_jvp`, `_scan_partial_eval`, `_scan_batching_rule` do.

Reverse mode through `jaxpr.while` is an error (JAX's wording): linearization keeps the
primal loop and a JVP loop, and the JVP loop cannot be transposed.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.ops import control_flow as C
from mjax.dialect.types import RefAval, ShapedArray, aval_of, tensor_type
from mjax.passes.interpreter import terminator
from mjax.passes.ir_util import clone_into, nested_ops, used_values
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules.ad_util import Linear, Unknown, instantiate
from mjax.passes.rules.batch_util import NOT_MAPPED, BatchBuilder, bdim_at, moveaxis
from mjax.passes.rules.control_flow import inline_body
from mjax.passes.rules.tables import (BATCH_NESTED, JVP_NESTED, PARTIAL_EVAL,
                                      TRANSPOSE_NESTED)

WHILE_REVERSE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
    "start/stop.")


# ---- building region ops -------------------------------------------------------------
class _Scratch:
    """A block (with `avals` arguments) inside a placeholder op at `ip`, to be moved into
    a region op (`_build`) or thrown away (`erase`)."""

    def __init__(self, ip: ir.InsertionPoint, avals, loc, regions: dict | None = None):
        # (`regions`: a linearization's checkpoint regions, op -> Region; ops of this
        # block recorded there are forgotten when it is thrown away, so no erased op
        # stays behind as a key that partial evaluation would read.)
        self.regions = regions
        with loc:
            self.holder = ir.Operation.create("mjax.region_holder", regions=1, ip=ip)
        self.block = ir.Block.create_at_start(self.holder.regions[0],
                                              [tensor_type(a) for a in avals])
        self.ip = ir.InsertionPoint(self.block)
        self.loc = loc

    @property
    def args(self) -> list[ir.Value]:
        return list(self.block.arguments)

    def builder(self) -> Builder:
        return Builder(self.ip, self.loc)

    def finish(self, values) -> None:
        """Ends the block with `jaxpr.yield values`."""
        with self.loc:
            ir.Operation.create("jaxpr.yield", operands=list(values), ip=self.ip)

    def erase(self) -> None:
        if self.regions:
            self.holder.operation.walk(self._forget)
        self.holder.erase()

    def _forget(self, op) -> ir.WalkResult:
        region = self.regions.pop(op.operation, None)
        if region is not None:
            region.recompute.discard(op.operation)
        return ir.WalkResult.ADVANCE


def _build(cls, operands, result_avals, params, scratches, ip, loc) -> list[ir.Value]:
    """Emits `cls` at `ip` with the scratches' blocks as its regions; returns its results."""
    op = cls.build(list(operands), list(result_avals), params,
                   [s.block for s in scratches], loc=loc, ip=ip)
    for s in scratches:
        s.erase()
    return list(op.results)


def _avals(values) -> list[ShapedArray]:
    return [aval_of(v.type) for v in values]


def _body(op, i=0) -> ir.Block:
    return op.regions[i].blocks[0]


def _params(op) -> dict:
    return dict(op.opview.params)


# ---- JVP -------------------------------------------------------------------------------
class _Layout:
    """Arguments of a JVP'd body: per group of old arguments (consts, carry, xs), their
    primals then the tangents of those in `nz`."""

    def __init__(self, avals, nz, sizes):
        self.n = len(avals)
        self.order = []
        start = 0
        for size in sizes:
            idx = range(start, start + size)
            self.order += [("p", i) for i in idx] + [("t", i) for i in idx if nz[i]]
            start += size
        self.avals = [avals[i] for _, i in self.order]

    def split(self, values):
        ps, ts = [None] * self.n, [None] * self.n
        for (kind, i), v in zip(self.order, values):
            (ps if kind == "p" else ts)[i] = v
        return ps, ts

    def join(self, ps, ts):
        return [ps[i] if kind == "p" else ts[i] for kind, i in self.order]


def _jvp_body(jvp, block, nz, sizes, ip, loc):
    """A scratch block running the JVP of `block` with tangents for the arguments in nz;
    returns (scratch, layout, (primal, tangent) per yielded value)."""
    avals = _avals(block.arguments)
    layout = _Layout(avals, nz, sizes)
    s = _Scratch(ip, layout.avals, loc, jvp.regions)
    ps, ts = layout.split(s.args)
    return s, layout, jvp.into(s.block).run(block, ps, ts)


def _nonzero(ts) -> list[bool]:
    return [t is not None for t in ts]


def _pairs(results, n, nz_out):
    it = iter(results[n:])
    return [(p, next(it) if nz else None) for p, nz in zip(results[:n], nz_out)]


def _cond_jvp(jvp, op, pairs):
    ps, ts = [p for p, _ in pairs], [t for _, t in pairs]
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    loc, n = op.location, len(op.results)
    nz = _nonzero(ts[1:])
    branches = [_jvp_body(jvp, region.blocks[0], nz, [len(nz)], jvp.ip, loc)
                for region in op.regions]
    out_nz = [any(outs[j][1] is not None for _, _, outs in branches) for j in range(n)]
    avals = _avals(op.results)
    for s, _, outs in branches:
        b = s.builder()
        s.finish([p for p, _ in outs] + [instantiate(b, outs[j][1], avals[j])
                                         for j in range(n) if out_nz[j]])
    layout = branches[0][1]
    operands = [ps[0]] + layout.join(ps[1:], ts[1:])
    result_avals = avals + [a for a, z in zip(avals, out_nz) if z]
    res = _build(C.CondOp, operands, result_avals, {}, [s for s, _, _ in branches], jvp.ip,
                 loc)
    return _pairs(res, n, out_nz)


def _carry_fixed_point(run, carry_nz):
    """Reruns `run(carry_nz) -> (scratch, ..., out_carry_nz)` until no new carry turns
    nonzero (unknown, batched); returns the last run's result."""
    while True:
        result = run(carry_nz)
        grown = [a or b for a, b in zip(carry_nz, result[-1])]
        if grown == carry_nz:
            return result
        result[0].erase()
        carry_nz = grown


def _scan_jvp(jvp, op, pairs):
    ps, ts = [p for p, _ in pairs], [t for _, t in pairs]
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    p, loc = _params(op), op.location
    nc, ncar = p["num_consts"], p["num_carry"]
    nx = len(ps) - nc - ncar
    body = _body(op)
    avals_in = _avals(body.arguments)
    nz = _nonzero(ts)

    def run(carry_nz):
        s, layout, outs = _jvp_body(jvp, body, nz[:nc] + carry_nz + nz[nc + ncar:],
                                    [nc, ncar, nx], jvp.ip, loc)
        return s, layout, outs, carry_nz, _nonzero([t for _, t in outs[:ncar]])
    s, layout, outs, carry_nz, _ = _carry_fixed_point(run, nz[nc:nc + ncar])
    b = s.builder()
    y_nz = _nonzero([t for _, t in outs[ncar:]])
    carry_avals = avals_in[nc:nc + ncar]
    s.finish([q for q, _ in outs[:ncar]]
             + [instantiate(b, t, a) for (_, t), a, z in zip(outs, carry_avals, carry_nz) if z]
             + [q for q, _ in outs[ncar:]] + [t for _, t in outs[ncar:] if t is not None])
    ob = Builder(jvp.ip, loc)
    ts = list(ts)
    for k, z in enumerate(carry_nz):
        if z:
            ts[nc + k] = instantiate(ob, ts[nc + k], carry_avals[k])
    avals = _avals(op.results)
    carry_out, ys_out = avals[:ncar], avals[ncar:]
    result_avals = (carry_out + [a for a, z in zip(carry_out, carry_nz) if z]
                    + ys_out + [a for a, z in zip(ys_out, y_nz) if z])
    params = dict(p, num_consts=nc + sum(nz[:nc]), num_carry=ncar + sum(carry_nz))
    res = _build(C.ScanOp, layout.join(ps, ts), result_avals, params, [s], jvp.ip, loc)
    nct = ncar + sum(carry_nz)
    return _pairs(res[:nct], ncar, carry_nz) + _pairs(res[nct:], len(ys_out), y_nz)


def _while_jvp(jvp, op, pairs):
    ps, ts = [p for p, _ in pairs], [t for _, t in pairs]
    p, loc = _params(op), op.location
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    ncar = len(ps) - nc - nb
    nz = _nonzero(ts)
    if not any(nz[nc:]):
        return jvp.copy(op, pairs)
    avals = _avals(op.results)

    def run(carry_nz):
        s, layout, outs = _jvp_body(jvp, _body(op, 1), nz[nc:nc + nb] + carry_nz, [nb, ncar],
                                    jvp.ip, loc)
        return s, layout, outs, carry_nz, _nonzero([t for _, t in outs])
    body, layout, outs, carry_nz, _ = _carry_fixed_point(run, nz[nc + nb:])
    b = body.builder()
    body.finish([q for q, _ in outs] + [instantiate(b, t, a) for (_, t), a, z
                                         in zip(outs, avals, carry_nz) if z])
    # The cond region takes the carry tangents too (and ignores them).
    cond_layout = _Layout(_avals(_body(op, 0).arguments), [False] * nc + carry_nz, [nc, ncar])
    cond = _Scratch(jvp.ip, cond_layout.avals, loc)
    cond.finish(inline_body(_body(op, 0), cond_layout.split(cond.args)[0], cond.ip))
    ob = Builder(jvp.ip, loc)
    ts = list(ts)
    for k, z in enumerate(carry_nz):
        if z:
            ts[nc + nb + k] = instantiate(ob, ts[nc + nb + k], avals[k])
    operands = ps[:nc] + layout.join(ps[nc:], ts[nc:])
    params = dict(p, body_nconsts=nb + sum(nz[nc:nc + nb]))
    result_avals = avals + [a for a, z in zip(avals, carry_nz) if z]
    res = _build(C.WhileOp, operands, result_avals, params, [cond, body], jvp.ip, loc)
    if jvp.linearize:
        # Reverse mode: the primal loop runs alone (its results are known); the JVP loop
        # is linear in the tangents but cannot be transposed (see _while_transpose).
        primal = jvp.copy(op, pairs)
        return [(q, t) for (q, _), (_, t) in zip(primal, _pairs(res, ncar, carry_nz))]
    return _pairs(res, ncar, carry_nz)


JVP_NESTED.update({C.CondOp: _cond_jvp, C.ScanOp: _scan_jvp, C.WhileOp: _while_jvp})


# ---- partial evaluation ----------------------------------------------------------------
def _is_unknown(e) -> bool:
    return isinstance(e, Linear)


def _classify(pe, block, unknown, loc) -> list[bool]:
    """Which of `block`'s yielded values are unknown when the arguments in `unknown` are
    (the known ops are emitted into a scratch block and thrown away)."""
    s = _Scratch(pe.known_ip, _avals(block.arguments), loc)
    try:
        entries = [Linear(aval_of(a.type)) if u else a for a, u in zip(s.args, unknown)]
        return [_is_unknown(e) for e in pe.nested(s.ip).run(block, entries)]
    finally:
        s.erase()


def _split_body(pe, block, unknown, loc):
    """Partial evaluation of a body: (known scratch, unknown scratch, inner pe, outs).
    The known scratch takes the known arguments, the unknown one the unknown arguments
    followed by the residuals `inner.residuals` (values of the known block)."""
    avals = _avals(block.arguments)
    known = _Scratch(pe.known_ip, [a for a, u in zip(avals, unknown) if not u], loc)
    unk = _Scratch(pe.known_ip, [a for a, u in zip(avals, unknown) if u], loc)
    kargs, uargs = iter(known.args), iter(unk.args)
    entries = [Unknown(next(uargs)) if u else next(kargs) for u in unknown]
    inner = pe.nested(known.ip, unk.block)
    outs = inner.run(block, entries)
    return known, unk, inner, outs


def _unknown_side(inner, block, outs, which):
    """The unknown block's values of the yielded values at indices `which` (known ones
    become residuals)."""
    term = terminator(block)
    return [inner.unknown_value(term.operands[j], outs[j]) for j in which]


def _variant_values(known_block, num_invariant_args) -> set:
    """Values of `known_block` that depend on its arguments past the first
    `num_invariant_args` (the loop-varying ones: carries and xs)."""
    variant = set(list(known_block.arguments)[num_invariant_args:])
    for op in known_block.operations:
        op = op.operation
        if any(v in variant for v in used_values(op)):
            variant.update(op.results)
    return variant


def _hoist(values, known_block, outer_args, ip) -> list[ir.Value]:
    """Clones the loop-invariant `values` of `known_block` (and what they depend on) at
    `ip`, its first arguments bound to `outer_args`: residuals computed once."""
    mapping = dict(zip(list(known_block.arguments), outer_args))
    needed, stack = set(), [v.owner for v in values if not isinstance(v.owner, ir.Block)]
    while stack:
        op = stack.pop().operation
        if op in needed:
            continue
        needed.add(op)
        stack += [v.owner for v in used_values(op) if not isinstance(v.owner, ir.Block)
                  and v.owner.operation.parent == known_block.owner]
    for op in known_block.operations:
        op = op.operation
        if op in needed:
            new = clone_into(op, ip, mapping)
            mapping.update(zip(op.results, new.results))
    return [mapping[v] for v in values]


def _scan_partial_eval(pe, op, entries):
    # JAX: _scan_partial_eval. Unknown carries by fixed point; the known scan also
    # yields the residuals the unknown one needs, stacked per iteration, except those
    # that depend on consts only, computed once outside the loop.
    if not any(_is_unknown(e) for e in entries):
        return pe._rule(op, entries)
    classify = pe.unknown_block is None   # only the known part is emitted
    p, loc = _params(op), op.location
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    body = _body(op)
    unk = [_is_unknown(e) for e in entries]
    carry_u = unk[nc:nc + ncar]
    while True:
        out_u = _classify(pe, body, unk[:nc] + carry_u + unk[nc + ncar:], loc)
        grown = [a or b for a, b in zip(carry_u, out_u[:ncar])]
        if grown == carry_u:
            break
        carry_u = grown
    unk = unk[:nc] + carry_u + unk[nc + ncar:]
    pe.unknown_ops.append(op)
    known, ublk, inner, outs = _split_body(pe, body, unk, loc)
    nys = len(outs) - ncar
    y_u = [_is_unknown(e) for e in outs[ncar:]]
    u_outs = _unknown_side(inner, body, outs, [j for j in range(ncar) if carry_u[j]]
                           + [ncar + k for k in range(nys) if y_u[k]])
    ublk.finish(u_outs)
    # Residuals: loop-invariant ones hoisted, the others stacked by the known scan.
    n_kconsts = sum(1 for u in unk[:nc] if not u)
    variant = _variant_values(known.block, n_kconsts)
    res = [] if classify else inner.residuals
    inv = [r for r in res if r not in variant]
    # A residual that is an x itself is read from the xs operand, not stacked again.
    kargs = list(known.block.arguments)
    n_kcarry = sum(1 for u in unk[nc:nc + ncar] if not u)
    kxs = [e for e, u in zip(entries[nc + ncar:], unk[nc + ncar:]) if not u]
    as_xs = {r: kxs[kargs.index(r) - n_kconsts - n_kcarry] for r in res
             if r in variant and r in kargs and kargs.index(r) >= n_kconsts + n_kcarry}
    per_iter = [r for r in res if r in variant and r not in as_xs]
    kconsts = [e for e, u in zip(entries[:nc], unk[:nc]) if not u]
    inv_outer = _hoist(inv, known.block, kconsts, pe.known_ip)
    k_carry = [j for j in range(ncar) if not carry_u[j]]
    k_ys = [k for k in range(nys) if not y_u[k]]
    known.finish([outs[j] for j in k_carry] + [outs[ncar + k] for k in k_ys] + per_iter)
    known_in = [e for e, u in zip(entries, unk) if not u]
    avals = _avals(op.results)
    known_avals = ([avals[j] for j in k_carry] + [avals[ncar + k] for k in k_ys]
                   + [_stacked(length, r) for r in per_iter])
    if known_avals:
        kres = _build(C.ScanOp, known_in, known_avals,
                      dict(p, num_consts=n_kconsts, num_carry=len(k_carry)), [known],
                      pe.known_ip, loc)
    else:
        kres = []
        known.erase()
    kcarry, kys, stacked = (kres[:len(k_carry)], kres[len(k_carry):len(k_carry) + len(k_ys)],
                            kres[len(k_carry) + len(k_ys):])
    if classify:
        ublk.erase()
        kit = iter(list(kcarry) + list(kys))
        return [Linear(a) if u else next(kit) for a, u in zip(avals, carry_u + y_u)]
    # The unknown scan: consts (invariant residuals, unknown consts), carry (unknown
    # carries), xs (stacked residuals, unknown xs).
    u_idx = [i for i, u in enumerate(unk) if u]
    u_consts = [i for i in u_idx if i < nc]
    u_carry = [i for i in u_idx if nc <= i < nc + ncar]
    u_xs = [i for i in u_idx if i >= nc + ncar]
    uavals = _avals(ublk.block.arguments)
    nu = len(u_idx)
    pos = {r: nu + k for k, r in enumerate(res)}
    order = ([pos[r] for r in inv] + list(range(len(u_consts)))
             + list(range(len(u_consts), len(u_consts) + len(u_carry)))
             + [pos[r] for r in per_iter] + [pos[r] for r in as_xs]
             + list(range(len(u_consts) + len(u_carry), nu)))
    final = _Scratch(pe.known_ip, [uavals[k] for k in order], loc)
    args = [None] * len(uavals)
    for a, k in zip(final.args, order):
        args[k] = a
    final.finish(inline_body(ublk.block, args, final.ip))
    ublk.erase()
    ub_ip = ir.InsertionPoint(pe.unknown_block)
    operands = ([pe.unknown_value(v, v) for v in inv_outer]
                + [pe.unknown_value(op.operands[i], entries[i]) for i in u_consts + u_carry]
                + [pe.unknown_value(v, v) for v in stacked]
                + [pe.unknown_value(xs, xs) for xs in as_xs.values()]
                + [pe.unknown_value(op.operands[i], entries[i]) for i in u_xs])
    u_avals = ([avals[j] for j in range(ncar) if carry_u[j]]
               + [avals[ncar + k] for k in range(nys) if y_u[k]])
    if u_avals:
        ures = _build(C.ScanOp, operands, u_avals,
                      dict(p, num_consts=len(inv) + len(u_consts), num_carry=len(u_carry)),
                      [final], ub_ip, loc)
    else:
        ures = []
        final.erase()
    kit, uit = iter(list(kcarry) + list(kys)), iter(ures)
    return [Unknown(next(uit)) if u else next(kit) for u in carry_u + y_u]


def _stacked(length: int, v: ir.Value) -> ShapedArray:
    a = aval_of(v.type)
    return ShapedArray((length,) + a.shape, a.dtype)


def _cond_partial_eval(pe, op, entries):
    # JAX: _cond_partial_eval. Each branch splits; an output is unknown if it is in any
    # branch. The residuals of all branches are concatenated: branch i gives zeros for
    # the others' residuals.
    if not any(_is_unknown(e) for e in entries) or _is_unknown(entries[0]):
        return pe._rule(op, entries)
    classify = pe.unknown_block is None   # only the known part is emitted
    loc = op.location
    unk = [_is_unknown(e) for e in entries[1:]]
    blocks = [r.blocks[0] for r in op.regions]
    out_u = [any(col) for col in zip(*[_classify(pe, blk, unk, loc) for blk in blocks])]
    pe.unknown_ops.append(op)
    parts = []
    for blk in blocks:
        known, ublk, inner, outs = _split_body(pe, blk, unk, loc)
        ublk.finish(_unknown_side(inner, blk, outs, [j for j, u in enumerate(out_u) if u]))
        parts.append((known, ublk, inner, outs))
    res_avals = [[] if classify else _avals(inner.residuals) for _, _, inner, _ in parts]
    all_res = [a for avs in res_avals for a in avs]
    avals = _avals(op.results)
    for i, (known, _, inner, outs) in enumerate(parts):
        b = known.builder()
        filled = []
        for k, avs in enumerate(res_avals):
            filled += avs and (inner.residuals if k == i else [b.zeros(a) for a in avs])
        known.finish([outs[j] for j, u in enumerate(out_u) if not u] + filled)
    known_in = [entries[0]] + [e for e, u in zip(entries[1:], unk) if not u]
    known_avals = [a for a, u in zip(avals, out_u) if not u] + all_res
    if known_avals:
        kres = _build(C.CondOp, known_in, known_avals, {}, [k for k, _, _, _ in parts],
                      pe.known_ip, loc)
    else:
        kres = []
        for k, _, _, _ in parts:
            k.erase()
    nk = sum(1 for u in out_u if not u)
    kouts, residuals = kres[:nk], kres[nk:]
    if classify:
        for _, ublk, _, _ in parts:
            ublk.erase()
        kit = iter(kouts)
        return [Linear(a) if u else next(kit) for a, u in zip(avals, out_u)]
    n_unk = sum(unk)
    finals, start = [], 0
    for (_, ublk, _, _), avs in zip(parts, res_avals):
        s = _Scratch(pe.known_ip, all_res + [a for a, u in zip(_avals(op.operands[1:]), unk)
                                             if u], loc)
        mine = s.args[start:start + len(avs)]
        s.finish(inline_body(ublk.block, s.args[len(all_res):len(all_res) + n_unk] + mine,
                             s.ip))
        ublk.erase()
        finals.append(s)
        start += len(avs)
    ub_ip = ir.InsertionPoint(pe.unknown_block)
    operands = ([pe.unknown_value(op.operands[0], entries[0])]
                + [pe.unknown_value(v, v) for v in residuals]
                + [pe.unknown_value(v, e) for v, e, u in zip(list(op.operands)[1:], entries[1:],
                                                             unk) if u])
    if any(out_u):
        ures = _build(C.CondOp, operands, [a for a, u in zip(avals, out_u) if u], {}, finals,
                      ub_ip, loc)
    else:
        ures = []
        for s in finals:
            s.erase()
    kit, uit = iter(kouts), iter(ures)
    return [Unknown(next(uit)) if u else next(kit) for u in out_u]


PARTIAL_EVAL.update({C.ScanOp: _scan_partial_eval, C.CondOp: _cond_partial_eval})


# ---- transpose -------------------------------------------------------------------------
def _scan_transpose(tr, op, cts, args, b):
    # JAX: _scan_transpose. Consts and xs are residuals (values) or linear; carries are
    # linear. The transposed scan runs the other way: consts (residual consts), carry
    # (cotangent accumulators of linear consts, carry cotangents), xs (residual xs,
    # nonzero ys cotangents); it yields (accumulators, carry cotangents, xs cotangents).
    p, loc = _params(op), op.location
    nc, ncar = p["num_consts"], p["num_carry"]
    body = _body(op)
    lin = [_is_unknown(a) for a in args]
    # A carry whose initial value is known (a zero constant) is still linear: its
    # cotangent is computed and dropped (JAX's _scan_transpose does the same).
    lin[nc:nc + ncar] = [True] * ncar
    avals_in = _avals(body.arguments)
    res_c = [i for i in range(nc) if not lin[i]]
    lin_c = [i for i in range(nc) if lin[i]]
    res_x = [i for i in range(nc + ncar, len(args)) if not lin[i]]
    lin_x = [i for i in range(nc + ncar, len(args)) if lin[i]]
    carry_avals = avals_in[nc:nc + ncar]
    ct_carry = [instantiate(b, c, a) for c, a in zip(cts[:ncar], carry_avals)]
    ys_ct = [(k, c) for k, c in enumerate(cts[ncar:]) if c is not None]
    body_avals = ([avals_in[i] for i in res_c] + [avals_in[i] for i in lin_c] + carry_avals
                  + [avals_in[i] for i in res_x] + [_slice_aval(c) for _, c in ys_ct])
    s = _Scratch(b.ip, body_avals, loc)
    a = iter(s.args)
    rc = [next(a) for _ in res_c]
    acc = [next(a) for _ in lin_c]
    cc = [next(a) for _ in range(ncar)]
    rx = [next(a) for _ in res_x]
    cy = [next(a) for _ in ys_ct]
    entries = [Linear(av) for av in avals_in]
    for i, v in zip(res_c + res_x, rc + rx):
        entries[i] = v
    nys = len(cts) - ncar
    out_cts = list(cc) + [None] * nys
    for (k, _), v in zip(ys_ct, cy):
        out_cts[ncar + k] = v
    got = tr.run(body, entries, out_cts, s.ip, loc)
    sb = s.builder()
    new_acc = [v if got[i] is None else sb.add(v, got[i]) for v, i in zip(acc, lin_c)]
    s.finish(new_acc + [instantiate(sb, got[nc + j], carry_avals[j]) for j in range(ncar)]
             + [instantiate(sb, got[i], avals_in[i]) for i in lin_x])
    operands = ([args[i] for i in res_c] + [b.zeros(avals_in[i]) for i in lin_c] + ct_carry
                + [args[i] for i in res_x] + [c for _, c in ys_ct])
    length = p["length"]
    result_avals = ([avals_in[i] for i in lin_c] + carry_avals
                    + [ShapedArray((length,) + avals_in[i].shape, avals_in[i].dtype)
                       for i in lin_x])
    params = dict(p, reverse=not p["reverse"], num_consts=len(res_c),
                  num_carry=len(lin_c) + ncar)
    res = _build(C.ScanOp, operands, result_avals, params, [s], b.ip, loc)
    out = [None] * len(args)
    for i, v in zip(lin_c + list(range(nc, nc + ncar)) + lin_x, res):
        out[i] = v
    return out


def _slice_aval(v: ir.Value) -> ShapedArray:
    a = aval_of(v.type)
    return ShapedArray(a.shape[1:], a.dtype)


def _cond_transpose(tr, op, cts, args, b):
    # JAX: _cond_transpose. Each branch transposed on its residual operands and the
    # nonzero cotangents; yields cotangents of the linear operands.
    loc = op.location
    ops = args[1:]
    lin = [_is_unknown(a) for a in ops]
    if _is_unknown(args[0]):
        raise op_error(op, "internal error: the index of a linear cond is linear")
    avals = [a.aval if _is_unknown(a) else aval_of(a.type) for a in ops]
    nz_cts = [c for c in cts if c is not None]
    if not nz_cts:
        return [None] * len(args)
    res = [a for a, u in zip(ops, lin) if not u]
    scratches = []
    for region in op.regions:
        s = _Scratch(b.ip, _avals(res) + _avals(nz_cts), loc)
        it_r, it_c = iter(s.args[:len(res)]), iter(s.args[len(res):])
        entries = [Linear(a) if u else next(it_r) for a, u in zip(avals, lin)]
        out_cts = [None if c is None else next(it_c) for c in cts]
        got = tr.run(region.blocks[0], entries, out_cts, s.ip, loc)
        sb = s.builder()
        s.finish([instantiate(sb, g, a) for g, a, u in zip(got, avals, lin) if u])
        scratches.append(s)
    outs = _build(C.CondOp, [args[0]] + res + nz_cts, [a for a, u in zip(avals, lin) if u],
                  {}, scratches, b.ip, loc)
    it = iter(outs)
    return [None] + [next(it) if u else None for u in lin]


class WhileReverseError(PassError, ValueError):
    """Reverse mode through a while loop (a ValueError, as in JAX)."""


def _while_transpose(tr, op, cts, args, b):
    raise WhileReverseError(op, WHILE_REVERSE_ERROR)


TRANSPOSE_NESTED.update({C.ScanOp: _scan_transpose, C.CondOp: _cond_transpose,
                         C.WhileOp: _while_transpose})


# ---- batching ----------------------------------------------------------------------------
def _batched(a: ShapedArray, d, size) -> ShapedArray:
    if d is NOT_MAPPED:
        return a
    shape = list(a.shape)
    shape.insert(d, size)
    return (RefAval if isinstance(a, RefAval) else ShapedArray)(tuple(shape), a.dtype)


class StateEffectVmapError(PassError, NotImplementedError):
    """JAX's NotImplementedError for control flow under vmap whose bodies use refs where
    batching would change which writes happen; located at the op for mjax-opt."""

    def __str__(self):
        return self.message


def _uses_refs(vals) -> bool:
    return any(isinstance(v.type, ir.MemRefType) for v in vals)


def _batch_body(batcher, block, dims, b, loc):
    """A scratch block running the batched `block` with its arguments batched at `dims`;
    returns (scratch, (value, dim) per yielded value)."""
    avals = [_batched(a, d, b.axis_size) for a, d in zip(_avals(block.arguments), dims)]
    s = _Scratch(b.ip, avals, loc)
    inner = BatchBuilder(s.ip, loc, b.axis_size, b.axis_name)
    return s, batcher.run(block, list(zip(s.args, dims)), inner)


def _yield_at(s, b, outs, want) -> None:
    """Ends scratch `s` yielding each (value, dim) of `outs` with its batch axis at
    `want[j]` (None: must be unbatched)."""
    inner = BatchBuilder(s.ip, s.loc, b.axis_size, b.axis_name)
    s.finish([v if w is NOT_MAPPED else bdim_at(inner, v, d, w)
              for (v, d), w in zip(outs, want)])


def _cond_batch(batcher, op, vals, dims, b):
    loc = op.location
    index, idim = vals[0], dims[0]
    ops, op_dims = vals[1:], dims[1:]
    blocks = [r.blocks[0] for r in op.regions]
    if _uses_refs(ops):     # (JAX refuses it for any batched operand)
        raise StateEffectVmapError(loc, "State effect not supported in vmap-of-cond.")
    if idim is not NOT_MAPPED:
        # JAX: _cond_batching_rule with a batched predicate: every branch runs, select_n
        # picks each element's result (the index is already clamped).
        idx = moveaxis(b, index, idim, 0)
        results = [_masked_branch(batcher, blk, k, idx, list(zip(ops, op_dims)), b)
                   for k, blk in enumerate(blocks)]
        outs = []
        for j in range(len(op.results)):
            cases = [bdim_at(b, res[j][0], res[j][1], 0) for res in results]
            shape = aval_of(cases[0].type).shape
            which = b.broadcast_in_dim(idx, shape=shape, broadcast_dimensions=(0,))
            if len(cases) == 2:
                which = b.ne(which, b.zeros(aval_of(which.type)))
            outs.append(b.select_n(which, *cases))
        return outs, [0] * len(outs)
    branches = [_batch_body(batcher, blk, op_dims, b, loc) for blk in blocks]
    want = [NOT_MAPPED if all(outs[j][1] is NOT_MAPPED for _, outs in branches) else 0
            for j in range(len(op.results))]
    for s, outs in branches:
        _yield_at(s, b, outs, want)
    avals = [_batched(a, w, b.axis_size) for a, w in zip(_avals(op.results), want)]
    res = _build(C.CondOp, vals, avals, {}, [s for s, _ in branches], b.ip, loc)
    return res, want


def _writes_remote(block) -> bool:
    """Whether `block` holds an interpreted kernel's remote write (jaxpr.remote_update)."""
    return any(inner.name == "jaxpr.remote_update" for top in block.operations
               for inner in [top.operation] + nested_ops(top.operation))


def _masked_branch(batcher, block, k, idx, pairs, b):
    """Branch `k` batched. One that writes into other devices' buffers (an interpreted
    Pallas kernel's remote DMA, passes/pallas_mesh.py, which runs such branches
    predicated instead) is refused: select_n would keep each device's own branch result
    and drop the writes of devices taking the branch into devices that do not."""
    if _writes_remote(block):
        raise StateEffectVmapError(block.owner.location,
                                   "a remote DMA or semaphore signal under control flow "
                                   "that differs across the devices (a pl.when on the "
                                   "device's id) in interpret mode is not supported by "
                                   "mjax")
    return batcher.run(block, pairs, b)


def _carry_dims(carry_b):
    return [0 if x else NOT_MAPPED for x in carry_b]


def _scan_batch(batcher, op, vals, dims, b):
    # JAX: _scan_batching_rule. xs batched at axis 1 (each x slice at 0), batched carries
    # at 0 (fixed point: a carry becomes batched if the body makes it so), ys at 1.
    p, loc = _params(op), op.location
    nc, ncar = p["num_consts"], p["num_carry"]
    body = _body(op)
    xs = [v if d is NOT_MAPPED else moveaxis(b, v, d, 1)
          for v, d in zip(vals[nc + ncar:], dims[nc + ncar:])]
    x_dims = [NOT_MAPPED if d is NOT_MAPPED else 0 for d in dims[nc + ncar:]]

    def run(carry_b):
        s, outs = _batch_body(batcher, body, list(dims[:nc]) + _carry_dims(carry_b) + x_dims,
                              b, loc)
        return s, outs, carry_b, [d is not NOT_MAPPED for _, d in outs[:ncar]]
    s, outs, carry_b, _ = _carry_fixed_point(run, [d is not NOT_MAPPED
                                                   for d in dims[nc:nc + ncar]])
    y_want = [NOT_MAPPED if d is NOT_MAPPED else 0 for _, d in outs[ncar:]]
    _yield_at(s, b, outs, _carry_dims(carry_b) + y_want)
    init = [bdim_at(b, v, d, 0) if cb else v
            for v, d, cb in zip(vals[nc:nc + ncar], dims[nc:nc + ncar], carry_b)]
    avals = _avals(op.results)
    out_dims = _carry_dims(carry_b) + [NOT_MAPPED if w is NOT_MAPPED else 1 for w in y_want]
    res = _build(C.ScanOp, list(vals[:nc]) + init + xs,
                 [_batched(a, d, b.axis_size) for a, d in zip(avals, out_dims)], p, [s],
                 b.ip, loc)
    return res, out_dims


def _while_batch(batcher, op, vals, dims, b):
    # JAX: _while_loop_batching_rule. With a batched predicate every carry is batched and
    # the loop runs while any element's predicate holds; finished elements keep their
    # carry (select_n of old and new).
    p, loc = _params(op), op.location
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cdims, bdims, init_dims = list(dims[:nc]), list(dims[nc:nc + nb]), list(dims[nc + nb:])
    cond_blk, body_blk = _body(op, 0), _body(op, 1)
    carry_b = [d is not NOT_MAPPED for d in init_dims]
    while True:
        s, outs = _batch_body(batcher, body_blk, bdims + _carry_dims(carry_b), b, loc)
        s.erase()
        c, cout = _batch_body(batcher, cond_blk, cdims + _carry_dims(carry_b), b, loc)
        c.erase()
        pred_b = cout[0][1] is not NOT_MAPPED
        grown = [x or d is not NOT_MAPPED or pred_b for x, (_, d) in zip(carry_b, outs)]
        if grown == carry_b:
            break
        carry_b = grown
    init = [bdim_at(b, v, d, 0) if cb else v
            for v, d, cb in zip(vals[nc + nb:], init_dims, carry_b)]
    out_dims = _carry_dims(carry_b)
    avals = [_batched(a, d, b.axis_size) for a, d in zip(_avals(op.results), out_dims)]
    if not pred_b:
        body, outs = _batch_body(batcher, body_blk, bdims + out_dims, b, loc)
        _yield_at(body, b, outs, out_dims)
        cond, cout = _batch_body(batcher, cond_blk, cdims + out_dims, b, loc)
        cond.finish([cout[0][0]])
        res = _build(C.WhileOp, vals[:nc + nb] + init, avals, p, [cond, body], b.ip, loc)
        return res, out_dims
    # Batched predicate: cond = any(pred); body takes (cond consts, body consts, carry).
    # Ref writes in the body are masked by each element's predicate (Batcher.write_mask).
    cond, cout = _batch_body(batcher, cond_blk, cdims + out_dims, b, loc)
    cb = cond.builder()
    pred = moveaxis(cb, cout[0][0], cout[0][1], 0)
    cond.finish([cb.reduce_or(pred, axes=(0,))])
    cavals = [_batched(a, d, b.axis_size) for a, d in zip(_avals(cond_blk.arguments), cdims)]
    bavals = [_batched(a, d, b.axis_size) for a, d in zip(_avals(body_blk.arguments), bdims)]
    body = _Scratch(b.ip, cavals[:nc] + bavals[:nb] + avals, loc)
    args = body.args
    ib = BatchBuilder(body.ip, loc, b.axis_size, b.axis_name)
    carry = args[nc + nb:]
    (pv, pd), = batcher.run(cond_blk, list(zip(args[:nc] + carry, cdims + out_dims)), ib)
    pv = moveaxis(ib, pv, pd, 0)
    masked = batcher.at(ib.ip)
    # (a remote write's rule refuses a mask: passes/rules/pallas_remote.py)
    masked.write_mask = pv if (_uses_refs(vals[nc:nc + nb])
                               or _writes_remote(body_blk)) else None
    new = masked.run(body_blk, list(zip(args[nc:nc + nb] + carry, bdims + out_dims)))
    nexts = []
    for old, (v, d) in zip(carry, new):
        v = bdim_at(ib, v, d, 0)
        shape = aval_of(v.type).shape
        which = ib.broadcast_in_dim(pv, shape=shape, broadcast_dimensions=(0,))
        nexts.append(ib.select_n(which, old, v))
    body.finish(nexts)
    res = _build(C.WhileOp, vals[:nc] + vals[:nc] + vals[nc:nc + nb] + init, avals,
                 dict(p, body_nconsts=nc + nb), [cond, body], b.ip, loc)
    return res, out_dims


BATCH_NESTED.update({C.CondOp: _cond_batch, C.ScanOp: _scan_batch, C.WhileOp: _while_batch})
