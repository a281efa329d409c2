"""Partial evaluation of a block: known ops run now, ops that read an unknown wait.

    pe = PartialEval(known_ip, unknown_block)        # unknown_block: None to only classify
    outs = pe.run(block, [x, Linear(aval_of_t)])     # an entry per block argument

Entries are a known value (an `ir.Value` at `known_ip`) or unknown (`Linear`, JAX's
UndefinedPrimal / PartialVal.unknown). An op reading any unknown entry is unknown: its
results are unknown and, with an `unknown_block`, it is copied there. The known values
an unknown op reads become `residuals`, new arguments appended to `unknown_block`;
constants are copied into `unknown_block` instead (cheaper than saving them). Known
values of a selective checkpoint that its policy does not let reverse mode save are
recomputed in `unknown_block` instead (`regions`, passes/rules/remat.py).

    %y = sin(%x); %c = cos(%x); %t2 = mul(%t, %c)       x known, t unknown
  ==>
    known:   %y = sin(%x); %c = cos(%x)                  residuals: [%c]
    unknown: ^bb(%t, %r): %t2 = mul(%t, %r)

JAX: partial_eval.partial_eval_jaxpr_nounits. Reverse mode uses it to split a
linearized function into its forward and linear parts, and transposition to evaluate
the non-linear ops of a linear function before walking the linear ones backwards.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.core import op_class_of
from mjax.dialect.ops.structural import OptimizationBarrierOp
from mjax.dialect.types import aval_of
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import clone_into, has_effects, is_constant
from mjax.passes.rules.ad_util import Linear, Unknown
from mjax.passes.rules.remat import recomputed_by
from mjax.passes.rules.tables import PARTIAL_EVAL


class PartialEval:
    """Partial evaluation emitting known ops at `known_ip` and (if given) unknown ops at
    the end of `unknown_block`."""

    def __init__(self, known_ip: ir.InsertionPoint, unknown_block: ir.Block | None = None,
                 regions: dict | None = None, move: bool = False):
        self.known_ip = known_ip
        self.unknown_block = unknown_block
        # `move`: the block partially evaluated is thrown away afterwards (reverse mode's
        # linearized function), so its ops without regions are moved, not copied; not
        # with selective checkpoints, whose recomputations read their producers' operands
        # as they were in that block.
        self.move = move and not regions
        self._unknown_ip = None if unknown_block is None else ir.InsertionPoint(unknown_block)
        self.unknown_ops: list[ir.Operation] = []
        self.residuals: list[ir.Value] = []       # known values, one per new block argument
        self._inputs: dict = {}                   # old value -> its value in unknown_block
        self.env: Env | None = None
        # Selective checkpoints' ops (passes/rules/remat.py): op -> Region. Known values
        # their linear ops read are recomputed in the unknown block unless saveable.
        self.regions = regions or {}
        self._recomputed: dict = {}               # old value -> its recomputation
        self._barriers: dict = {}                 # residual -> it through a barrier

    def run(self, block: ir.Block, entries) -> list:
        self.env = Env(zip(block.arguments, entries))
        return interpret(block, self.rule_for, self.env)

    def nested(self, known_ip: ir.InsertionPoint,
               unknown_block: ir.Block | None = None) -> "PartialEval":
        """A new partial evaluation (of a region's block, for PARTIAL_EVAL rules),
        emitting at `known_ip` and `unknown_block`; selective checkpoints in the region
        recompute as they do outside it."""
        return PartialEval(known_ip, unknown_block, self.regions)

    def rule_for(self, op):
        custom = PARTIAL_EVAL.get(op_class_of(op))
        if custom is not None:
            return lambda op, entries: custom(self, op, entries)
        return self._rule

    def _rule(self, op, entries):
        if not any(isinstance(e, Linear) for e in entries):
            if self.move and not len(op.regions):
                return _moved(op, entries, self.known_ip)
            new = clone_into(op, self.known_ip, dict(zip(op.operands, entries)))
            return list(new.results)
        self.unknown_ops.append(op)
        if self.unknown_block is None:
            return [Linear(aval_of(r.type)) for r in op.results]
        values = [self.unknown_value(v, e, op) for v, e in zip(op.operands, entries)]
        if self.move and not len(op.regions):
            return [Unknown(r) for r in _moved(op, values, self._unknown_ip)]
        new = clone_into(op, self._unknown_ip, dict(zip(op.operands, values)))
        return [Unknown(r) for r in new.results]

    def unknown_value(self, old: ir.Value, entry, consumer=None) -> ir.Value:
        """`old`'s value inside the unknown block (a residual argument for known ones,
        or its recomputation where a selective checkpoint says so for `consumer`)."""
        if isinstance(entry, Unknown):
            return entry.value
        region = recomputed_by(self.regions, consumer, old) if self.regions else None
        if region is not None and self._all_known(old.owner.operation) and not \
                has_effects(old.owner.operation):   # (a ref read is saved, not redone)
            return self._recompute(old, region)
        if old not in self._inputs:
            if is_constant(old):
                new = clone_into(old.owner, ir.InsertionPoint(self.unknown_block), {})
                self._inputs[old] = new.results[0]
            else:
                self._inputs[old] = self.unknown_block.add_argument(entry.type,
                                                                    ir.Location.unknown())
                self.residuals.append(entry)
        return self._inputs[old]

    def erase_dead_recomputed(self) -> None:
        """Erases the known copies of recomputed ops that nothing reads (their values
        were only needed by linear ops, which recompute them). JAX: DCE of the known
        jaxpr in remat_partial_eval."""
        copies = set()
        for op, region in self.regions.items():
            if op in region.recompute and op.results:
                new = self.env.entries.get(op.results[0])
                if isinstance(new, ir.Value) and not isinstance(new.owner, ir.Block):
                    copies.add(new.owner.operation)
        if not copies:
            return
        for op in reversed([o.operation for o in self.known_ip.block.operations]):
            if (op in copies and not has_effects(op)
                    and not any(True for r in op.results for _ in r.uses)):
                op.erase()

    def _all_known(self, op) -> bool:
        # (A known result of an op that also read unknowns, split by a custom rule such
        # as scan's, is saved: recomputing the op would recompute its linear part too.)
        return not any(isinstance(self.env.read(v), Linear) for v in op.operands)

    def _recompute(self, old: ir.Value, region) -> ir.Value:
        """`old` computed again in the unknown block by its known producer, which reads
        recomputed values of the same region, else residuals (through an optimization
        barrier with prevent_cse). JAX: the staged copy of a non-saveable equation."""
        if old not in self._recomputed:
            producer = old.owner.operation
            mapping = {}
            for v in producer.operands:
                new = self.unknown_value(v, self.env.read(v), producer)
                if (region.prevent_cse and isinstance(new.owner, ir.Block)   # a residual
                        and not isinstance(new.type, ir.MemRefType)):
                    if new not in self._barriers:
                        b = Builder(ir.InsertionPoint(self.unknown_block), producer.location)
                        self._barriers[new] = b.emit(OptimizationBarrierOp, new)[0]
                    new = self._barriers[new]
                mapping[v] = new
            clone = clone_into(producer, ir.InsertionPoint(self.unknown_block), mapping)
            self._recomputed.update(zip(producer.results, clone.results))
        return self._recomputed[old]


def _moved(op: ir.Operation, values, ip: ir.InsertionPoint) -> list[ir.Value]:
    """`op` moved to `ip` (the end of a block), reading `values`; its results (the same
    values as before the move)."""
    op.detach_from_parent()
    ip.insert(op)
    operands = op.operands
    for i, (old, new) in enumerate(zip(list(operands), values)):
        if new != old:
            operands[i] = new
    return list(op.results)


__all__ = ["PartialEval", "Unknown"]
