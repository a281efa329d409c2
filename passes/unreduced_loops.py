"""Partial sums carried through scan loops, for Shardy (`to_sdy` of
passes/jaxpr_propagate_shardings.py).

A scan whose carry starts unreduced (each device a partial sum over some mesh axes, e.g.
a gradient accumulator) and whose body adds to it values computed linearly from
contractions (a reduced weight's cotangent: dot_generals over split dimensions, their
transposes, reshapes, sums, nested scans of them) keeps the carry unreduced: the one
all-reduce comes where the program reshards the result, as in JAX. Shardy does not carry
unreduced axes through values it is not told about: every value of that chain inside
the loop bodies is laid out unreduced (as JAX lays out each value typed so), and the
scan's result too (the rows a scan's lowering writes into its stacked ys follow their
y's layout: _as_partial in passes/rules/control_flow.py). A chain that does not prove
linear (a nonlinear op, a value computed whole) leaves the loop as it was (Shardy
reduces inside it).
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.passes.ir_util import is_zero_constant
from mjax.passes.rules.tables import (CONTRACTION, PARTIAL_SUMS, PER_PARTIAL, PRODUCT, SUM,
                                      UPDATE)

SCAN = "jaxpr.scan"


def partial_sum_kind(op: ir.Operation) -> str | None:
    """How `op` treats operands that are partial sums (tables.PARTIAL_SUMS; None: it
    takes none, or it is no jaxpr op)."""
    return PARTIAL_SUMS.get(type(op.opview))


def _params(op) -> dict:
    return op.opview.params


class _Chains:
    """Which values are computed linearly from partial sums: `chain(v)` is the set of
    values inside loop bodies to lay out unreduced for `v` (empty when only top-level
    partial values or zeros feed it), or None when `v` is not such a value."""

    def __init__(self, partial: dict, top_block):
        self.partial = partial        # top-level values known unreduced
        self.top = top_block
        self.memo: dict = {}
        self.assumed: set = set()     # carry arguments assumed partial (loop-back)

    def chain(self, v):
        if v in self.memo:
            return self.memo[v]
        if v in self.assumed:
            return set()
        keys = set(self.memo)
        found = self._chain(v)
        if found is None:       # (entries made under a failed assumption go too)
            for k in set(self.memo) - keys:
                del self.memo[k]
        self.memo[v] = found
        return found

    def _either(self, v):
        """chain(v), or the empty set for a constant zero."""
        return set() if is_zero_constant(v) else self.chain(v)

    def _chain(self, v):
        if v in self.partial:
            return set()
        if isinstance(v, ir.BlockArgument):
            return self._argument(v)
        owner = v.owner.operation
        if owner.block == self.top:      # (a top-level value not known unreduced)
            return None
        kind = partial_sum_kind(owner)
        inside = {v}
        if kind == CONTRACTION:
            return inside
        if kind == PER_PARTIAL:
            found = self.chain(owner.operands[0])
        elif kind in (SUM, UPDATE):
            operands = list(owner.operands)[:2] if kind == UPDATE else list(owner.operands)
            parts = [self._either(x) for x in operands]
            if any(p is None for p in parts) or all(is_zero_constant(x) for x in operands):
                return None
            found = set().union(*parts)
        elif kind == PRODUCT:
            a, b = (self.chain(x) for x in owner.operands)
            found = a if b is None else (b if a is None else None)
        elif owner.name == SCAN:
            found = self._scan_result(owner, v.result_number)
        else:
            return None
        return None if found is None else found | inside

    def _argument(self, arg):
        """A scan body's argument: a const or x is partial as its operand is; a carry
        as its start value and what each step yields are."""
        block = arg.owner
        op = block.owner if hasattr(block, "owner") else None
        op = getattr(op, "operation", op)
        if op is None or op.name != SCAN:
            return None
        p = _params(op)
        i, nconsts, ncarry = arg.arg_number, p["num_consts"], p["num_carry"]
        if i < nconsts or i >= nconsts + ncarry:
            return self.chain(op.operands[i])
        return self.carry(op, i - nconsts)

    def carry(self, op, k):
        """The chain of carry `k` of scan `op` (its start value partial or zero, each
        step's new value computed linearly from it), or None."""
        p = _params(op)
        body = op.regions[0].blocks[0]
        arg = body.arguments[p["num_consts"] + k]
        init = self._either(op.operands[p["num_consts"] + k])
        if init is None:
            return None
        self.assumed.add(arg)
        try:
            step = self.chain(_yielded(body)[k])
        finally:
            self.assumed.discard(arg)
        return None if step is None else init | step

    def _scan_result(self, op, r):
        p = _params(op)
        if r < p["num_carry"]:
            return self.carry(op, r)
        return self.chain(_yielded(op.regions[0].blocks[0])[r])   # (a stacked y)


def _yielded(block) -> list:
    ops = list(block.operations)
    return list(ops[-1].operation.operands)


def scan_partials(op, partial: dict, nested: dict) -> None:
    """A top-level scan `op` whose carries start unreduced (in `partial`, {value: axes})
    and stay so: those results added to `partial`, and the values inside its body to lay
    out unreduced to `nested` ({value: axes})."""
    p = _params(op)
    chains = _Chains(partial, op.block)
    for k in range(p["num_carry"]):
        axes = partial.get(op.operands[p["num_consts"] + k])
        if not axes:
            continue
        found = chains.carry(op, k)
        if found is None:
            continue
        partial[op.results[k]] = axes
        for v in found:
            nested.setdefault(v, axes)
