"""Blocks and ops as the tracer makes them, by name: a function's or a region body's block,
its arguments, its terminator, and a maker of one cached op form (the tracer stages the
same op on the same types again and again).

    ip = end_of(block); v = add_argument(block, t)
    holder, block = new_holder(ip, "mjax.region_holder", arg_types)
    make = op_maker("jaxpr.sin", result_types, attributes, 0)
    op = make([x], loc, ip)
"""
from __future__ import annotations

import functools

from jaxlib.mlir import ir

from mjax.dialect.context import context


def end_of(block):
    """The insertion point at the end of `block`."""
    return ir.InsertionPoint(block)


def add_argument(block, type_):
    """A new last argument of `block`, of type `type_`."""
    return block.add_argument(type_, ir.Location.unknown(context()))


def new_holder(ip, name: str, arg_types):
    """An op `name` with one region (a placeholder at `ip`) and that region's block of
    `arg_types`: (op, block)."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        holder = ir.Operation.create(name, regions=1, ip=ip)
        block = ir.Block.create_at_start(holder.regions[0], list(arg_types))
    return holder, block


def new_block(region, arg_types):
    """A new first block of `region`, of `arg_types`."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        return ir.Block.create_at_start(region, list(arg_types))


def emit_return(ip, values) -> None:
    """func.return of `values` at `ip` (made as a generic operation: what func.ReturnOp
    makes, without its builder's cost)."""
    ctx = context()
    with ctx:
        ir.Operation.create("func.return", operands=list(values),
                            loc=ir.Location.unknown(ctx), ip=ip)


def emit_yield(ip, values) -> None:
    """jaxpr.yield of `values` at `ip`."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        ir.Operation.create("jaxpr.yield", operands=list(values), ip=ip)


def op_maker(name: str, result_types, attributes, regions: int):
    """make(operands, loc, ip) -> a new op `name` of these result types, attributes and
    number of regions. (A closure: as fast as calling the constructor directly, where a
    functools.partial of it with keywords costs about a microsecond more per op.)"""
    results = list(result_types)
    create = ir.Operation.create

    def make(operands, loc, ip):
        return create(name, results=results, operands=operands, attributes=attributes,
                      regions=regions, loc=loc, ip=ip)
    return make


@functools.cache
def unit_attr():
    return ir.UnitAttr.get(context())


__all__ = ["add_argument", "emit_return", "emit_yield", "end_of", "new_block", "new_holder",
           "op_maker", "unit_attr"]
