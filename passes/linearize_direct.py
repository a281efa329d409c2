"""Direct linearize (JAX's `ad.linearize_jaxpr` with direct linearization): one walk of
a function emits its primal ops straight into the forward part and its tangent ops into
the linear part, instead of building the whole linearized function and splitting it by
partial evaluation afterwards (passes/reverse_mode.py's general path).

An op a JVP rule emits through its Builder is placed as partial evaluation would place
it: into the linear part when an operand is a value there (a tangent), the known values
it reads becoming residuals (constants copied), else into the forward part; the
residuals come in the same order and the ops of each part in the same order as the
split gives, so the two parts are the same functions op for op. What a rule builds at
the insertion point itself (calls, inlined rule functions, ops with regions, whose
bodies partial evaluation splits with its own rules) goes into a scratch block, which
partial evaluation empties before the next op is placed, so the order still holds.

A selective checkpoint (its recomputation needs the whole linearized region), here or
in a body linearized whole, raises `NeedsRegions`, as does an op with regions not yet
filled when the next op is placed; reverse mode then takes the general path.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.builder import Builder, SharingBuilder
from mjax.dialect.ops.structural import ConstantOp
from mjax.passes.forward_mode import Jvp, NeedsRegions
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import clone_into
from mjax.passes.partial_eval import PartialEval
from mjax.passes.rules.ad_util import Unknown
from mjax.passes.rules.tables import PARTIAL_EVAL

_PE_RULE = PARTIAL_EVAL.get


class RoutedBuilder(Builder):
    """A rule's Builder under direct linearize: each op goes to the forward or the
    linear part by its operands; `ip` (a rule building ops itself) is the scratch
    block's."""

    def __init__(self, jvp: "DirectJvp", loc: ir.Location):
        self.jvp = jvp
        self.loc = loc

    @property
    def ip(self) -> ir.InsertionPoint:
        self.jvp.dirty = True
        return self.jvp.scratch_ip

    def emit_constant(self, rtype: ir.Type, attr: ir.Attribute, splat=None) -> ir.Value:
        jvp = self.jvp        # (a constant reads nothing: the forward part)
        if jvp.dirty:
            jvp.flush()
        b = jvp.consts     # (each constant made once there: SharingBuilder)
        b.loc = self.loc
        return b.emit_constant(rtype, attr, splat)

    def _emit(self, cls, operands, params) -> list[ir.Value]:
        jvp = self.jvp
        if not operands and cls is ConstantOp:
            if jvp.dirty:
                jvp.flush()
            b = jvp.consts
            b.loc = self.loc
            return b._emit(cls, operands, params)
        if cls.num_regions or _PE_RULE(cls) is not None:   # (its regions are filled later)
            jvp.dirty = True
            return Builder(jvp.scratch_ip, self.loc)._emit(cls, operands, params)
        if jvp.dirty:
            jvp.flush()
        if jvp.trans:
            operands = [jvp.trans.get(v, v) for v in operands]
        unknown = jvp.unknown
        for v in operands:
            if v in unknown:
                break
        else:
            b = jvp.plain      # (one Builder, pointed where each op goes: emit is not
            b.ip, b.loc = jvp.fwd_ip, self.loc        # re-entered)
            return b._emit(cls, operands, params)
        pe = jvp.pe
        operands = [v if v in unknown else pe.unknown_value(v, v) for v in operands]
        b = jvp.plain
        b.ip, b.loc = jvp.lin_ip, self.loc
        results = b._emit(cls, operands, params)
        unknown.update(results)
        return results


class DirectJvp(Jvp):
    """The JVP transformation with linearize=True, emitting into the forward part at
    `fwd_block` and the linear part at `lin_block` (see the module doc)."""

    direct = True

    def __init__(self, ex, fwd_block: ir.Block, lin_block: ir.Block, make_scratch):
        self.ex = ex
        self.linearize = True
        self.regions = {}
        self.in_selective = 0
        self._rules: dict = {}
        self.fwd_ip = ir.InsertionPoint(fwd_block)
        self.lin_ip = ir.InsertionPoint(lin_block)
        self.plain = Builder()
        self.consts = SharingBuilder(self.fwd_ip, None, {})   # (the forward part's constants)
        self._make_scratch = make_scratch     # () -> a block (made on first use)
        self.scratch_block = None
        self._scratch_ip = None
        self.pe = PartialEval(self.fwd_ip, lin_block, None, move=True)
        self.pe.env = Env()
        self.unknown = set(lin_block.arguments)   # values of the linear part
        self.trans: dict = {}          # scratch value -> its value after partial eval
        self.dirty = False             # the scratch block may hold ops to place
        self._stale = 0                # ops left in the scratch block (copied from)
        self._depth = 0

    @property
    def scratch_ip(self) -> ir.InsertionPoint:
        if self._scratch_ip is None:
            self.scratch_block = self._make_scratch()
            self._scratch_ip = ir.InsertionPoint(self.scratch_block)
        return self._scratch_ip

    @property
    def ip(self) -> ir.InsertionPoint:
        self.dirty = True
        return self.scratch_ip

    def linear_constants(self) -> list[ir.Operation] | None:
        """The ops of the linear part that read no linear value, in order: the
        constants copied into it (every other op there reads a tangent), or None when
        partial evaluation's rules placed ops there (they may make others)."""
        if self.scratch_block is not None:
            return None
        return [v.owner.operation for v in self.pe._inputs.values()
                if not isinstance(v.owner, ir.Block)]

    def into(self, block: ir.Block) -> Jvp:
        # (a region's body: linearized whole, partial evaluation's rules split it)
        return Jvp(self.ex, ir.InsertionPoint(block), True, self.regions)

    def builder(self, op) -> Builder:
        return RoutedBuilder(self, op.location)

    def builder_at(self, loc: ir.Location) -> Builder:
        return RoutedBuilder(self, loc)

    def nested_rule(self, rule):
        def run(op, pairs):
            self._depth += 1
            try:
                out = rule(self, op, pairs)
            finally:
                self._depth -= 1
            return self.settle(out)
        return run

    @property
    def op_rule(self):
        return self._direct_op_rule

    def _direct_op_rule(self, op, pairs):
        out = self._op_rule(op, pairs)
        return self.settle(out) if self.dirty else out

    def settle(self, pairs) -> list[tuple]:
        """After an op's rule: the scratch block emptied, `pairs` read through it."""
        if self.dirty:
            self.flush()
            if not self._depth:
                self.dirty = False
        trans = self.trans
        if not trans:
            return pairs
        return [(trans.get(p, p), None if t is None else trans.get(t, t))
                for p, t in pairs]

    def copy(self, op, pairs) -> list[tuple]:
        if len(op.regions):
            self.dirty = True
            return Jvp.copy(self, op, pairs)
        if self.dirty:
            self.flush()
        trans, unknown = self.trans, self.unknown
        values = [p for p, _ in pairs]
        if trans:
            values = [trans.get(v, v) for v in values]
        if not any(v in unknown for v in values):
            new = clone_into(op, self.fwd_ip, dict(zip(op.operands, values)))
            return [(r, None) for r in new.results]
        pe = self.pe
        values = [v if v in unknown else pe.unknown_value(v, v) for v in values]
        new = clone_into(op, self.lin_ip, dict(zip(op.operands, values)))
        unknown.update(new.results)
        return [(r, None) for r in new.results]

    def flush(self) -> None:
        """Partial evaluation of the ops put into the scratch block since the last
        flush, in order (moved into a part, or split by their rules)."""
        if self.scratch_block is None:
            return
        if self.regions:     # (a selective checkpoint in a body linearized whole)
            raise NeedsRegions()
        ops = [o.operation for o in self.scratch_block.operations][self._stale:]
        if not ops:
            return
        pe, trans, unknown = self.pe, self.trans, self.unknown
        for op in ops:
            if len(op.regions) and any(not len(r.blocks) for r in op.regions):
                raise NeedsRegions()     # (a rule placing ops before filling its regions)
            entries = []
            for v in op.operands:
                v = trans.get(v, v)
                entries.append(Unknown(v) if v in unknown else v)
            outs = pe.rule_for(op)(op, entries)
            for r, e in zip(op.results, outs):
                if isinstance(e, Unknown):
                    e = e.value
                    unknown.add(e)
                if e != r:
                    trans[r] = e
        self._stale = len(self.scratch_block.operations)

    def run(self, block: ir.Block, primals, tangents) -> list[tuple]:
        env = Env(zip(block.arguments, zip(primals, tangents)))
        return interpret(block, self.rule_for, env)


__all__ = ["DirectJvp", "RoutedBuilder"]
