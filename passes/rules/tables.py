"""One rule table per transformation, keyed by op class.

Rules of one primitive family live together in `rules/<family>.py` and register
themselves here through the decorators below; each pass is a short driver over its table.
"""
from __future__ import annotations

from typing import Callable

from jaxlib.mlir import ir

from mjax.dialect.core import JaxprOp
from mjax.dialect.types import ShapedArray, aval_of

# op class -> rule. A rule may be missing on purpose: see NOT_SUPPORTED.
LOWER: dict[type[JaxprOp], Callable] = {}
JVP: dict[type[JaxprOp], Callable] = {}
TRANSPOSE: dict[type[JaxprOp], Callable] = {}
BATCH: dict[type[JaxprOp], Callable] = {}
# Sharding rules (passes/rules/sharding.py): op -> its dimension factors.
SHARD: dict[type[JaxprOp], Callable] = {}

# (table name, op class) -> why the rule does not exist; shown to users and in the
# coverage table.
NOT_SUPPORTED: dict[tuple[str, type[JaxprOp]], str] = {}


class LowerCtx:
    """What a lowering rule may look at besides its operands. The avals are read off the
    op's types when a rule first asks: most one-to-one rules never do, and building them
    for every op was a tenth of lowering a long chain of small ops."""

    __slots__ = ("op", "backend", "loc", "_avals_in", "_avals_out", "_extra")

    def __init__(self, op: ir.Operation, avals_in: list[ShapedArray] | None = None,
                 avals_out: list[ShapedArray] | None = None, backend: str = "xla",
                 loc: ir.Location | None = None, extra: dict | None = None):
        self.op, self.backend, self.loc = op, backend, loc
        self._avals_in, self._avals_out, self._extra = avals_in, avals_out, extra

    @property
    def avals_in(self) -> list[ShapedArray]:
        if self._avals_in is None:
            self._avals_in = [aval_of(v.type) for v in self.op.operands]
        return self._avals_in

    @property
    def avals_out(self) -> list[ShapedArray]:
        if self._avals_out is None:
            self._avals_out = [aval_of(r.type) for r in self.op.results]
        return self._avals_out

    @property
    def extra(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra


def lowering(*ops: type[JaxprOp]):
    """Decorator: `rule(ctx, *operands, **params) -> Value | list[Value]` lowers `ops`."""
    def wrap(rule):
        for op in ops:
            LOWER[op] = rule
        return rule
    return wrap


def not_supported(table: str, op: type[JaxprOp], why: str) -> None:
    NOT_SUPPORTED[(table, op)] = why
