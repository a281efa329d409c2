"""The one block interpreter every transformation runs (JAX: autodidax's `eval_jaxpr`).

    outs = interpret(block, rule_for, env)

walks `block` in order: for each op (up to its terminator, `func.return` or
`jaxpr.yield`), `rule = rule_for(op)` and `results = rule(op, [env.read(v) for v in
op.operands])`, then `env.write(r, x)` for each result `r`; it returns the terminator's
operands read through `env`. What an environment entry is belongs to the transformation:
a new `ir.Value` (inlining), a `(primal, tangent)` pair (JVP), a `(value, batch dim)`
pair (batching), a known value or `Unknown` (partial evaluation). The rule emits new IR
wherever its transformation's insertion point is; the interpreter never builds IR.

With `reverse=True` (transposition) the walk goes backwards: a rule gets the entries of
the op's *results* and returns one entry per *operand*, written back with `env.write`
(an `Env(accumulate=...)` sums them); a `rule_for` that returns None skips the op.
Afterwards the entries of the block's arguments are returned.

Nested regions. A rule for an op with regions interprets each region's block itself,
emitting into a block of the new op. Regions are isolated from above, so the region's
arguments are the only inputs, and the rule emits the new terminator itself. Each
transformation has a table for such ops (passes/rules/tables.py), whose rules get the
transformation object (e.g. `JVP_NESTED` rules get the `Jvp` of passes/forward_mode.py);
a JVP rule for `jaxpr.cond` (sketch):

    def _cond_jvp(jvp, op, pairs):       # pairs: (primal, tangent | None) per operand
        new = ...a jaxpr.cond at jvp.ip with len(op.regions) empty regions...
        for old, region in zip(op.regions, new.regions):
            old_block = old.blocks[0]
            block = region.blocks.append(*types_of_primals_and_tangents)
            outs = jvp.into(block).run(old_block, primal_args(block), tangent_args(block))
            emit_yield(block, [p for p, _ in outs] + [t for _, t in outs if t is not None])
        return pairs_of(new.results)
    JVP_NESTED[CondOp] = _cond_jvp

`jvp.into(block)` is the same transformation emitting at the end of `block`; the
transformations that emit into one place (`Jvp`, `Inline` in passes/jaxpr_inline.py,
the batcher) offer `into`, `rule_for` and a `run(block, inputs...)` shorthand;
`PartialEval` has a `PARTIAL_EVAL` table of custom rules for the same purpose (they
partially evaluate a region with `pe.nested(...)`), and transposition a
`TRANSPOSE_NESTED` table whose rules transpose a region's block with `tr.run` (the
`Transposer` of passes/reverse_mode.py). passes/rules/control_flow_ad.py has the rules of
cond, while and scan in every one of these tables.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from jaxlib.mlir import ir

from mjax.passes.ir_util import is_terminator
from mjax.passes.registry import PassError, op_error

Rule = Callable[[ir.Operation, list], list]


class Env:
    """Old values -> entries. `accumulate(a, b)` combines two writes to one value (for
    cotangents); without it a second write replaces the first. Reading a value never
    written gives `default` when one is set, else an internal error."""

    _NO_DEFAULT = object()

    def __init__(self, items: Iterable = (), *, default: Any = _NO_DEFAULT,
                 accumulate: Callable[[Any, Any], Any] | None = None):
        self.entries: dict = dict(items)
        self.default = default
        self.accumulate = accumulate

    def read(self, v: ir.Value):
        try:
            return self.entries[v]
        except KeyError:
            if self.default is not Env._NO_DEFAULT:
                return self.default
            raise PassError(None, f"internal error: value {v.get_name()} read before it was "
                                  f"written") from None

    def write(self, v: ir.Value, entry) -> None:
        if self.accumulate is not None and v in self.entries:
            entry = self.accumulate(self.entries[v], entry)
        self.entries[v] = entry

    def __contains__(self, v) -> bool:
        return v in self.entries


def terminator(block: ir.Block) -> ir.Operation:
    return _body_and_terminator(block)[1]


def _body_and_terminator(block: ir.Block) -> tuple[list, ir.Operation]:
    # (One listing of the block: iterating it makes a Python object per op.)
    ops = [op.operation for op in block.operations]
    if not ops or not is_terminator(ops[-1]):
        raise PassError(block.owner.location, "block has no func.return or jaxpr.yield "
                                              "terminator")
    end = ops.pop()
    return ops, end


def interpret(block: ir.Block, rule_for: Callable[[ir.Operation], Rule | None], env: Env,
              *, reverse: bool = False) -> list:
    """Runs `block` through `rule_for` (see the module docstring); returns the entries of
    the terminator's operands (forward) or of the block's arguments (reverse)."""
    ops, end = _body_and_terminator(block)
    read, write = env.read, env.write     # (bound once: this loop runs per op)
    if not reverse:
        # (The entries read and written directly: Env.read's default and error, and
        # Env.write's accumulation, only where they apply.)
        entries = env.entries
        if env.accumulate is None:
            write = entries.__setitem__
        for op in ops:
            results = op.results
            operands = op.operands
            try:
                ins = [entries[v] for v in operands]
            except KeyError:
                ins = [read(v) for v in operands]
            outs = rule_for(op)(op, ins)
            if len(outs) != len(results):
                raise op_error(op, f"internal error: rule gave {len(outs)} results for "
                                   f"{len(results)}")
            for r, x in zip(results, outs):
                write(r, x)
        return [read(v) for v in end.operands]
    for op in reversed(ops):
        rule = rule_for(op)
        if rule is None:
            continue
        outs = rule(op, [env.read(r) for r in op.results])
        if len(outs) != len(op.operands):
            raise op_error(op, f"internal error: transpose rule gave {len(outs)} entries "
                               f"for {len(op.operands)} operands")
        for v, x in zip(op.operands, outs):
            env.write(v, x)
    return [env.read(a) for a in block.arguments]


__all__ = ["Env", "Rule", "interpret", "terminator"]
