"""Helpers for writing a pass: find ops, match patterns, build replacements, replace, erase.

    for dot in walk(module, DotGeneralOp):                   # typed views, nested regions too
        b = builder_before(dot)                              # at the op, with its location
        x = b.convert_element_type(dot.operands[0], new_dtype=np.float32)
        replace(dot, [b.emit(DotGeneralOp, x, y, **dot.params)[0]])

    F32_DOT = Pattern(DotGeneralOp, operands=[is_dtype("float32")] * 2,
                      preferred_element_type=None)
    for dot in F32_DOT.matches(module): ...

    raise op_error(op, "cannot do X")     # file:line:col: error: 'jaxpr.x' op cannot do X

On StableHLO (a pass whose point is "after-lowering"), `walk` takes op names and
`apply_patterns` runs upstream MLIR's greedy pattern driver.
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs._mlir import rewrite as _rewrite

from mjax.dialect.builder import Builder
from mjax.dialect.core import JaxprOp, op_class
from mjax.dialect.types import aval_of
from mjax.passes.ir_util import nested_ops, replace_op
from mjax.passes.registry import op_error


def _op_name(op: type[JaxprOp] | str) -> str:
    """The full op name of a jaxpr op class, 'dot_general', 'jaxpr.sin' or 'stablehlo.add'."""
    if isinstance(op, type):
        return op.OPERATION_NAME
    if "." in op:
        return op
    return op_class(op).OPERATION_NAME


def walk(root, *ops: type[JaxprOp] | str) -> list:
    """The ops nested in `root` (a module or op), at any depth and in program order, whose
    class or name is one of `ops` (all ops if none): `jaxpr` ops as their typed views
    (`.params`, `.operand_avals`). A list, so the IR may change while you go through it."""
    names = {_op_name(o) for o in ops}
    return [op.opview for op in nested_ops(root)
            if not names or op.name in names]


def is_dtype(*dtypes) -> Callable[[ir.Value], bool]:
    """An operand predicate: the value's element type is one of `dtypes`."""
    wanted = {np.dtype(d) for d in dtypes}
    return lambda v: aval_of(v.type).dtype in wanted


class Pattern:
    """An op class (or name) plus predicates; `match(op)` says whether `op` fits.

    `operands`: one predicate per operand (None: any), called with the ir.Value;
    keyword arguments: an attribute (JAX parameter name) and the value it must have (a
    dtype such as np.float32 included), or a predicate on that value; `where`: a
    predicate on the whole op.
    """

    def __init__(self, op: type[JaxprOp] | str, *, operands=None, where=None, **attrs):
        self.name = _op_name(op)
        self.operands = None if operands is None else list(operands)
        self.where = where
        self.attrs = attrs

    def match(self, op) -> bool:
        op = op.opview if isinstance(op, ir.Operation) else op
        if op.operation.name != self.name:
            return False
        operands = list(op.operation.operands)
        if self.operands is not None:
            if len(operands) != len(self.operands):
                return False
            if not all(p is None or p(v) for p, v in zip(self.operands, operands)):
                return False
        if self.attrs:
            params = op.params if isinstance(op, JaxprOp) else {
                a.name: a.attr for a in op.operation.attributes}
            for name, want in self.attrs.items():
                have = params.get(name)
                # (a class such as np.float32 is a value to compare, not a predicate)
                test = callable(want) and not isinstance(want, type)
                if not (want(have) if test else have == want):
                    return False
        return self.where is None or bool(self.where(op))

    def matches(self, root) -> list:
        """The ops in `root` this pattern matches (see `walk`)."""
        return [op for op in walk(root, self.name) if self.match(op)]


def builder_before(op) -> Builder:
    """A Builder that creates ops just before `op`, located where `op` is (so errors and
    profiles point at the user's line); result types come from each op's rule."""
    op = op.operation
    return Builder(ir.InsertionPoint(op), op.location)


def replace(op, values) -> None:
    """Every use of `op`'s results becomes the matching value of `values` (one value for a
    single-result op); then `op` is erased. Types must match: a PassError at `op` if not."""
    op = op.operation
    values = [values] if isinstance(values, ir.Value) else list(values)
    if len(values) != len(op.results):
        raise op_error(op, f"has {len(op.results)} results, replaced by {len(values)} "
                           f"values")
    for i, (old, new) in enumerate(zip(op.results, values)):
        if old.type != new.type:
            raise op_error(op, f"result {i} has type {old.type}, replaced by a value of "
                               f"type {new.type}")
    replace_op(op, values)


def erase(op) -> None:
    """Erases `op`; a PassError at `op` if one of its results is still used."""
    op = op.operation
    for i, r in enumerate(op.results):
        for _ in r.uses:
            raise op_error(op, f"cannot be erased: result {i} is still used")
    op.erase()


def apply_patterns(module, patterns: dict[str, Callable] | Iterable[tuple],
                   *, max_iterations: int | None = None) -> None:
    """Runs upstream MLIR's greedy pattern driver on `module` (StableHLO or any registered
    dialect): `patterns` maps an op name to `fn(op, rewriter)`, which rewrites the op with
    `rewriter` (`rewriter.ip`, `replace_op`, `erase_op`) and returns a falsy value, or
    returns True when the pattern does not apply. Pairs (name, fn) or (name, fn, benefit)
    are accepted too. Folding runs as part of the driver, as in MLIR."""
    items = patterns.items() if isinstance(patterns, dict) else patterns
    ctx = module.operation.context
    pset = _rewrite.RewritePatternSet(ctx)
    for item in items:
        name, fn, *benefit = item
        pset.add(name, fn, *benefit)
    config = None
    if max_iterations is not None:
        config = _rewrite.GreedyRewriteConfig()
        config.max_iterations = max_iterations
    _rewrite.apply_patterns_and_fold_greedily(module, pset.freeze(), config)


__all__ = ["Pattern", "apply_patterns", "builder_before", "erase", "is_dtype", "replace",
           "walk"]
