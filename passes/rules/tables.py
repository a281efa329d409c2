"""One rule table per transformation, keyed by op class.

Rules of one primitive family live together in `rules/<family>.py` and register
themselves here through the decorators below; each pass is a short driver over its table.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from jaxlib.mlir import ir

from mjax.dialect.core import JaxprOp
from mjax.dialect.types import ShapedArray

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


@dataclass
class LowerCtx:
    """What a lowering rule may look at besides its operands."""

    op: ir.Operation
    avals_in: list[ShapedArray]
    avals_out: list[ShapedArray]
    backend: str = "xla"
    loc: ir.Location | None = None
    extra: dict = field(default_factory=dict)


def lowering(*ops: type[JaxprOp]):
    """Decorator: `rule(ctx, *operands, **params) -> Value | list[Value]` lowers `ops`."""
    def wrap(rule):
        for op in ops:
            LOWER[op] = rule
        return rule
    return wrap


def not_supported(table: str, op: type[JaxprOp], why: str) -> None:
    NOT_SUPPORTED[(table, op)] = why
