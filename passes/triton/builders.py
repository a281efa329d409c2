"""Small builders of Triton values the lowering rules share: constants, broadcasts,
casts, binary ops and comparisons by name, device math library calls, reductions."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith
from jaxlib.triton import dialect as tt

from mjax.passes.kernel_lowering.arith import ARITH_BINARY, op_for_dtype
from mjax.passes.triton.types import (TritonLoweringError, check_pow2, elt_type, is_float,
                                      is_unsigned, shape_of, ttype)


def full(value, dtype, shape=()) -> ir.Value:
    """A constant of `value` (scalar, or splat over `shape`)."""
    e = elt_type(dtype)
    dt = np.dtype(dtype)
    if dt.kind == "u":      # signless bits: 0xFFFFFFFF is -1 as an i32
        value = np.asarray(value, dt).view(np.dtype(f"int{dt.itemsize * 8}"))
    if isinstance(e, ir.IntegerType):
        attr = ir.IntegerAttr.get(e, int(value))
    else:
        attr = ir.FloatAttr.get(e, float(value))
    if not shape:
        return arith.constant(e, attr)
    t = ir.RankedTensorType.get(list(shape), e)
    return arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr))


def full_like(x: ir.Value, value, dtype) -> ir.Value:
    return full(value, dtype, shape_of(x))


def i32(value: int) -> ir.Value:
    return full(value, np.int32)


def broadcast_to(x: ir.Value, shape) -> ir.Value:
    """Broadcasts a scalar or a tensor (same rank, or fewer leading dims) to `shape`."""
    shape = tuple(shape)
    xs = shape_of(x)
    if xs == shape:
        return x
    if not isinstance(x.type, ir.RankedTensorType):
        return tt.splat(ir.RankedTensorType.get(list(shape), x.type), x)
    while len(shape_of(x)) < len(shape):
        x = tt.expand_dims(x, 0)
    elt = ir.RankedTensorType(x.type).element_type
    return tt.broadcast(ir.RankedTensorType.get(list(shape), elt), x)


def expand_to(x: ir.Value, keep: int, rank: int) -> ir.Value:
    """A 1-D tensor viewed as dim `keep` of a rank-`rank` tensor (size-1 elsewhere)."""
    for d in range(rank):
        if d != keep:
            x = tt.expand_dims(x, d)
    return x


def make_range(n: int) -> ir.Value:
    return tt.make_range(ir.RankedTensorType.get([n], ir.IntegerType.get_signless(32)), 0, n)


def convert(x: ir.Value, src, dst) -> ir.Value:
    """Casts between dtypes as lax.convert_element_type does (bool: != 0)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    shape = shape_of(x)
    out_t = ttype(shape, dst)
    if dst == np.bool_:
        if is_float(src):
            return arith.cmpf(arith.CmpFPredicate.UNE, x, full(0, src, shape))
        return arith.cmpi(arith.CmpIPredicate.ne, x, full(0, src, shape))
    if is_float(src) and is_float(dst):
        if "float8" in src.name or "float8" in dst.name:
            if dst.itemsize < src.itemsize:
                return tt.fp_to_fp(out_t, x, rounding=tt.RoundingMode.RTNE)
            return tt.fp_to_fp(out_t, x)
        if {src.name, dst.name} == {"float16", "bfloat16"}:
            return convert(convert(x, src, np.float32), np.float32, dst)
        return (arith.extf(out_t, x) if dst.itemsize > src.itemsize
                else arith.truncf(out_t, x))
    if is_float(dst):
        return (arith.uitofp(out_t, x) if is_unsigned(src) else arith.sitofp(out_t, x))
    if is_float(src):
        return (arith.fptoui(out_t, x) if is_unsigned(dst) else arith.fptosi(out_t, x))
    sw = 1 if src == np.bool_ else src.itemsize * 8
    dw = dst.itemsize * 8
    if sw == dw:
        return x
    if dw < sw:
        return arith.trunci(out_t, x)
    return arith.extui(out_t, x) if is_unsigned(src) else arith.extsi(out_t, x)


# libdevice (CUDA) / ocml (ROCm) functions for f32 and f64; other float widths compute in
# f32. Triton lowers only a few math ops itself, so transcendental functions go through
# these libraries as JAX's Pallas does.
def libm_call(kl, fn: str, args: list, dtype) -> ir.Value:
    """`fn` of float tensors via the platform's device math library."""
    dt = np.dtype(dtype)
    if dt.name not in ("float32", "float64"):
        outs = libm_call(kl, fn, [convert(a, dt, np.float32) for a in args], np.float32)
        return convert(outs, np.float32, dt)
    wide = dt.name == "float64"
    if kl.platform == "rocm":
        symbol = f"__ocml_{fn}_{'f64' if wide else 'f32'}"
    else:
        symbol = f"__nv_{fn}" if wide else f"__nv_{fn}f"
    return tt.extern_elementwise(args[0].type, args, libname="", libpath="", symbol=symbol,
                                 pure=True)


def binary(name: str, x: ir.Value, y: ir.Value, dtype) -> ir.Value:
    fn = op_for_dtype(ARITH_BINARY[name], dtype)
    if fn is None:
        raise TritonLoweringError(f"jaxpr.{name} of {np.dtype(dtype).name} is not supported")
    return fn(x, y)


_CMP = {"eq": ("OEQ", "eq", "eq"), "ne": ("UNE", "ne", "ne"), "lt": ("OLT", "slt", "ult"),
        "le": ("OLE", "sle", "ule"), "gt": ("OGT", "sgt", "ugt"), "ge": ("OGE", "sge", "uge")}


def compare(name: str, x: ir.Value, y: ir.Value, dtype) -> ir.Value:
    f, s, u = _CMP[name]
    if is_float(dtype):
        return arith.cmpf(getattr(arith.CmpFPredicate, f), x, y)
    return arith.cmpi(getattr(arith.CmpIPredicate, u if is_unsigned(dtype) else s), x, y)


def reshape(x: ir.Value, shape, dtype) -> ir.Value:
    shape = tuple(shape)
    if shape_of(x) == shape:
        return x
    if not shape:                        # tensor of one element -> scalar
        return tt.unsplat(elt_type(dtype), x)
    if not isinstance(x.type, ir.RankedTensorType):
        return broadcast_to(x, shape)    # scalar -> tensor of ones' shape
    check_pow2(shape, "a reshape")
    return tt.reshape(ttype(shape, dtype), x, allow_reorder=False)


def reduce_axis(operands: list, axis: int, combine) -> list:
    """tt.reduce of `operands` along `axis`; combine(lhs scalars, rhs scalars) -> list."""
    red = tt.ReduceOp(operands, axis)
    elts = [ir.RankedTensorType(v.type).element_type for v in operands]
    block = red.regions[0].blocks.append(*elts, *elts)
    with ir.InsertionPoint(block):
        n = len(operands)
        tt.reduce_return(combine(list(block.arguments)[:n], list(block.arguments)[n:]))
    return list(red.results)


__all__ = ["binary", "broadcast_to", "compare", "convert", "expand_to", "full", "full_like",
           "i32", "libm_call", "make_range", "reduce_axis", "reshape"]
