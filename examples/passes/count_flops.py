"""A pass plugin that only looks: counts the ops of each kind and the flops of a program
(a matmul: 2 per multiply-add; an elementwise op: 1 per result element). docs/passes.md
walks through it.

    mjax-opt model.mlir --load-pass-plugin=examples/passes/count_flops.py \\
        --count-flops=report=true
    counter = CountFlops(); jit(f, passes=[counter])(x); counter.flops
"""
from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from mjax.dialect.ops.elementwise import ElementwiseBinary, ElementwiseUnary
from mjax.dialect.ops.structural import DotGeneralOp
from mjax.passes import Pass, register_pass, walk


def op_flops(op) -> int:
    """Floating-point operations of one `jaxpr` op (0 for data movement)."""
    if isinstance(op, DotGeneralOp):
        (lhs_contract, _), _ = op.params["dimension_numbers"]
        lhs = op.operand_avals[0]
        k = int(np.prod([lhs.shape[d] for d in lhs_contract]))
        return 2 * k * int(np.prod(op.result_avals[0].shape))
    if isinstance(op, (ElementwiseUnary, ElementwiseBinary)):
        return int(np.prod(op.result_avals[0].shape))
    return 0


@register_pass("count-flops")
@dataclass
class CountFlops(Pass):
    """Count ops by name and their flops (an analysis: the IR is unchanged)."""

    point = "before-lowering"    # what XLA will compile: transformations expanded
    report: bool = False         # print the counts to stderr
    # Results of the last run (not options: not part of jit's cache key).
    counts: Counter = field(default_factory=Counter, init=False, compare=False)
    flops: int = field(default=0, init=False, compare=False)

    def options(self) -> dict:
        return {"report": self.report}

    def run(self, module):
        self.counts, self.flops = Counter(), 0
        for op in walk(module):
            if op.operation.name.startswith("jaxpr."):
                self.counts[op.operation.name] += 1
                self.flops += op_flops(op)
        if self.report:
            print(f"count-flops: {self.flops} flops", file=sys.stderr)
            for name, n in sorted(self.counts.items()):
                print(f"count-flops: {name} {n}", file=sys.stderr)
