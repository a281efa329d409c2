"""Structured control flow: `jaxpr.cond`, `jaxpr.while`, `jaxpr.scan`, `jaxpr.yield`.

Every body is a region with one block, **isolated from above** (JAX's closed jaxprs):
a body uses only its block arguments and the ops inside it; every value it closes over is
an explicit operand of the op. Each body ends with `jaxpr.yield`. Layouts:

    jaxpr.cond  operands (index: i32[], *ops)                 results (*outs)
                regions: one per branch, branch i runs when index == i (the index is
                clamped by the frontend, as lax.switch does); every branch block takes
                (*ops) and yields (*outs). No attributes.
    jaxpr.while operands (*cond_consts, *body_consts, *init)  results (*carry)
                attrs cond_nconsts, body_nconsts
                region 0 (cond): block (*cond_consts, *carry) yields (pred: i1[])
                region 1 (body): block (*body_consts, *carry) yields (*carry)
    jaxpr.scan  operands (*consts, *init, *xs)                results (*carry, *ys)
                attrs length, reverse, unroll, num_consts, num_carry
                region 0 (body): block (*consts, *carry, *x) yields (*carry, *y), where
                each x drops the leading `length` axis of its xs and each ys is y
                stacked along a new leading axis of size `length`.

`infer_regions(avals, params, regions)` is the one inference rule (`regions` lists each
body's (argument avals, yield avals)); the tracer calls it after tracing the bodies and
`--jaxpr-verify` calls it (through `infer_at`) on parsed IR.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import InferError, JaxprOp
from mjax.dialect.types import ShapedArray, aval_of

Signature = tuple[list[ShapedArray], list[ShapedArray]]


def _strong(a: ShapedArray) -> ShapedArray:
    return a.strip_weak_type()


def _types(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _same(a, b) -> bool:
    return len(a) == len(b) and all(_strong(x) == _strong(y) for x, y in zip(a, b))


def _expect(op: str, what: str, found, expected) -> None:
    if not _same(found, expected):
        raise TypeError(f"{op} {what} have types {_types(found)}, expected "
                        f"{_types(expected)}")


def region_signature(region: ir.Region, op_name: str) -> Signature:
    """(block argument avals, yield operand avals) of a one-block region ending in
    jaxpr.yield."""
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise TypeError(f"{op_name} regions must have exactly one block, got {len(blocks)}")
    ops = list(blocks[0].operations)
    if not ops or ops[-1].operation.name != "jaxpr.yield":
        raise TypeError(f"{op_name} region must end with jaxpr.yield")
    return ([aval_of(a.type) for a in blocks[0].arguments],
            [aval_of(v.type) for v in ops[-1].operation.operands])


class RegionOp(JaxprOp):
    """Base of ops with body regions: result types come from the bodies' signatures."""

    num_operands = None

    @classmethod
    def infer(cls, *avals, **params):
        raise InferError(f"'{cls.OPERATION_NAME}' op result types depend on its regions "
                         f"(use infer_regions)")

    @classmethod
    def infer_regions(cls, avals, params, regions: list[Signature]):
        raise NotImplementedError

    @classmethod
    def infer_at(cls, op: ir.Operation, avals, params):
        """The verifier's entry: checks the region layout, then `infer_regions`."""
        if cls.num_regions is not None and len(op.regions) != cls.num_regions:
            raise TypeError(f"expects {cls.num_regions} regions, got {len(op.regions)}")
        sigs = [region_signature(r, cls.OPERATION_NAME) for r in op.regions]
        return cls.infer_regions(list(avals), params, sigs)

    @classmethod
    def build(cls, operands, result_avals, params, blocks, *, loc=None, ip=None):
        """Creates the op and moves `blocks` (traced bodies) into its regions, in order."""
        op = cls.create(operands, result_avals, params, loc=loc, ip=ip,
                        num_regions=len(blocks))
        for region, block in zip(op.regions, blocks):
            block.append_to(region)
        return op


class YieldOp(JaxprOp, name="yield"):
    """Terminates a body region of cond/while/scan, giving its results. JAX: a closed
    jaxpr's outvars."""

    num_operands = None
    pure = False  # a terminator: DCE must keep it although it has no results

    @classmethod
    def infer(cls, *avals):
        return ()

    @classmethod
    def infer_at(cls, op: ir.Operation, avals, params):
        parent = op.parent
        if parent is None or not isinstance(parent.opview, RegionOp):
            raise TypeError("expects its parent op to be jaxpr.cond, jaxpr.while or "
                            "jaxpr.scan")
        return ()


class CondOp(RegionOp, name="cond"):
    """Runs branch `index` (an i32 scalar in [0, #branches)) on the operands.

    Operands (index, *ops); one region per branch, each block taking (*ops) and yielding
    the results. JAX: lax.cond_p (branches = the regions). `select_ref`: a two-branch
    cond that pl.select_ref made around a DMA (branch 0 where index == 0, else branch 1;
    the Mosaic lowering tests `index == 0` as JAX's, where a cond's tests `index != 0`)."""

    num_regions = None  # one per branch
    min_operands = 1
    attributes = {"select_ref": A.Bool(default=False)}

    @classmethod
    def infer_regions(cls, avals, params, regions):
        if not regions:
            raise TypeError("jaxpr.cond needs at least one branch region")
        if params.get("select_ref") and (len(regions) != 2 or len(regions[0][1])):
            raise TypeError("a jaxpr.cond with select_ref has two branches and no results")
        index, ops = avals[0], avals[1:]
        if index.shape != () or str(index.dtype) != "int32":
            raise TypeError(f"jaxpr.cond index must be an int32 scalar, got "
                            f"{index.str_short()}")
        outs = regions[0][1]
        for i, (ins, yields) in enumerate(regions):
            _expect("jaxpr.cond", f"branch {i} arguments", ins, ops)
            if not _same(yields, outs):
                raise TypeError(f"jaxpr.cond branches must have equal output types, but "
                                f"branch 0 gives {_types(outs)} and branch {i} gives "
                                f"{_types(yields)}")
        return tuple(_strong(a) for a in outs)


class WhileOp(RegionOp, name="while"):
    """Repeats body while cond holds. Operands (*cond_consts, *body_consts, *init);
    region 0 (cond) takes (*cond_consts, *carry) and yields an i1 scalar; region 1 (body)
    takes (*body_consts, *carry) and yields the next carry. JAX: lax.while_p."""

    num_regions = 2
    attributes = {"cond_nconsts": A.Int(0), "body_nconsts": A.Int(0)}

    @classmethod
    def infer_regions(cls, avals, params, regions):
        nc, nb = params["cond_nconsts"], params["body_nconsts"]
        if nc < 0 or nb < 0 or nc + nb > len(avals):
            raise TypeError(f"jaxpr.while has {len(avals)} operands, fewer than "
                            f"cond_nconsts + body_nconsts = {nc} + {nb}")
        cconsts, bconsts, carry = avals[:nc], avals[nc:nc + nb], avals[nc + nb:]
        (cond_in, cond_out), (body_in, body_out) = regions
        _expect("jaxpr.while", "cond region arguments", cond_in, cconsts + carry)
        _expect("jaxpr.while", "body region arguments", body_in, bconsts + carry)
        if len(cond_out) != 1 or cond_out[0].shape != () or str(cond_out[0].dtype) != "bool":
            raise TypeError(f"jaxpr.while cond region must yield a boolean scalar, got "
                            f"{_types(cond_out)}")
        if not _same(body_out, carry):
            raise TypeError(f"jaxpr.while body carry input and output must have equal "
                            f"types, got input {_types(carry)} and output "
                            f"{_types(body_out)}")
        return tuple(_strong(a) for a in carry)


class ScanOp(RegionOp, name="scan"):
    """Loops body over the leading axis of xs. Operands (*consts, *init, *xs); the body
    takes (*consts, *carry, *x) and yields (*carry, *y); results (*carry, *ys) with each
    ys stacked along a new leading axis of size `length`. JAX: lax.scan_p."""

    num_regions = 1
    attributes = {"length": A.Dim(), "reverse": A.Bool(False), "unroll": A.Int(1),
                  "num_consts": A.Int(0), "num_carry": A.Int(0)}

    @classmethod
    def infer_regions(cls, avals, params, regions):
        length, nconsts, ncarry = params["length"], params["num_consts"], params["num_carry"]
        if length < 0:
            raise TypeError(f"jaxpr.scan length must be nonnegative, got {length}")
        if params["unroll"] < 1:
            raise TypeError(f"jaxpr.scan unroll must be a positive integer, got "
                            f"{params['unroll']}")
        if nconsts < 0 or ncarry < 0 or nconsts + ncarry > len(avals):
            raise TypeError(f"jaxpr.scan has {len(avals)} operands, fewer than "
                            f"num_consts + num_carry = {nconsts} + {ncarry}")
        consts, carry = avals[:nconsts], avals[nconsts:nconsts + ncarry]
        xs = avals[nconsts + ncarry:]
        for i, x in enumerate(xs):
            if not x.shape or x.shape[0] != length:
                raise TypeError(f"jaxpr.scan xs operand {i} has type {x.str_short()}, whose "
                                f"leading axis does not match length {length}")
        x_slices = [ShapedArray(x.shape[1:], x.dtype) for x in xs]
        ((body_in, body_out),) = regions
        _expect("jaxpr.scan", "body region arguments", body_in, consts + carry + x_slices)
        if len(body_out) < ncarry or not _same(body_out[:ncarry], carry):
            raise TypeError(f"jaxpr.scan body carry input and output must have equal "
                            f"types, got input {_types(carry)} and output "
                            f"{_types(body_out[:ncarry])}")
        ys = [ShapedArray((length,) + y.shape, y.dtype) for y in body_out[ncarry:]]
        return tuple(_strong(a) for a in carry) + tuple(ys)
