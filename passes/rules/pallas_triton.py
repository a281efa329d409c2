"""Triton lowering rules for the ops of a Pallas kernel (`--jaxpr-pallas-to-triton`).

`TRITON` maps a jaxpr op name to `rule(kl, op, *operands, **params) -> [values]`. Operands
are Triton values: a rank-0 jaxpr tensor becomes a scalar (`f32`), any other a
`tensor<...>` of a power-of-2 size; integers are signless (`ui32` -> `i32`, the rule picks
the unsigned op). A ref operand is a `RefBlock`: the base `!tt.ptr` of the whole array and
where this program's block starts, so a ref op turns its indexer into a tensor of pointers
(`tt.splat` + `tt.make_range`/`tt.expand_dims`/`tt.broadcast` offsets, `tt.addptr`).
`kl` is the kernel lowering (passes/jaxpr_pallas_to_triton.py): program ids, grid, and
`lower_block` for nested regions.

    %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 128>, squeezed = array<i64>}
  ==>
    %p = tt.addptr %x, %block_start        ; scalar start of the block
    %r = tt.make_range {start = 0, end = 128} : tensor<128xi32>
    %v = tt.load (tt.addptr (tt.splat %p), %r)

An op without a rule here is an error naming the op at its line (the pass raises it).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, math as math_d, scf
from jaxlib.triton import dialect as tt

from mjax.dialect import attributes as A
from mjax.dialect.types import aval_of

TRITON: dict[str, Callable] = {}
# op name -> why there is no rule (shown in the error; the coverage test wants a rule or
# a reason for every op of the dialect).
TRITON_UNSUPPORTED: dict[str, str] = {}


def triton_rule(*names: str):
    """Decorator: `rule(kl, op, *operands, **params)` lowers `jaxpr.<name>` ops."""
    def wrap(rule):
        for name in names:
            TRITON["jaxpr." + name] = rule
        return rule
    return wrap


class TritonLoweringError(NotImplementedError):
    """A kernel uses something the Triton lowering cannot express (the pass adds the
    op's location)."""


@dataclasses.dataclass
class RefBlock:
    """A kernel ref: the array's base pointer and this program's block of it.

    `block_shape` has one entry per array dim (-1: squeezed, the kernel's ref lacks that
    dim); `starts` are the block's first element per array dim (i32 scalars)."""
    ptr: ir.Value
    array_shape: tuple
    dtype: np.dtype
    block_shape: tuple
    starts: list

    @property
    def ref_dims(self) -> list[int]:
        """Array dim of each dim of the kernel's ref."""
        return [d for d, b in enumerate(self.block_shape) if b != -1]


# ---- types ---------------------------------------------------------------------------
_FLOATS = {"float16": ir.F16Type, "bfloat16": ir.BF16Type, "float32": ir.F32Type,
           "float64": ir.F64Type, "float8_e4m3fn": ir.Float8E4M3FNType,
           "float8_e5m2": ir.Float8E5M2Type}


def elt_type(dtype) -> ir.Type:
    """Triton's element type for a dtype (signless integers, i1 for bool)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dt.kind in "iu" and dt.itemsize * 8 in (8, 16, 32, 64) and dt.name not in (
            "int4", "uint4"):
        return ir.IntegerType.get_signless(dt.itemsize * 8)
    if dt.name in _FLOATS:
        return _FLOATS[dt.name].get()
    raise TritonLoweringError(f"the Triton lowering does not support dtype {dt.name}")


def ttype(shape, dtype) -> ir.Type:
    e = elt_type(dtype)
    return e if not shape else ir.RankedTensorType.get(list(shape), e)


def ptr_elt_type(dtype) -> ir.Type:
    """What a ref's pointer points to: booleans live in memory as bytes."""
    return ir.IntegerType.get_signless(8) if np.dtype(dtype) == np.bool_ else elt_type(dtype)


def shape_of(v: ir.Value) -> tuple:
    return tuple(ir.RankedTensorType(v.type).shape) if isinstance(
        v.type, ir.RankedTensorType) else ()


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) in (
        np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn),
        np.dtype(ml_dtypes.float8_e5m2))


def _is_unsigned(dtype) -> bool:
    return np.dtype(dtype).kind in "ub"


def check_pow2(shape, what: str) -> None:
    """Triton tensors have power-of-2 sizes (tt.make_range and most ops insist)."""
    for d in shape:
        if d & (d - 1):
            raise TritonLoweringError(
                f"the Triton lowering needs power-of-2 block dimensions, but {what} has "
                f"shape {tuple(shape)}; pad the block or use interpret=True")


# ---- small builders ------------------------------------------------------------------
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
        if _is_float(src):
            return arith.cmpf(arith.CmpFPredicate.UNE, x, full(0, src, shape))
        return arith.cmpi(arith.CmpIPredicate.ne, x, full(0, src, shape))
    if _is_float(src) and _is_float(dst):
        if "float8" in src.name or "float8" in dst.name:
            if dst.itemsize < src.itemsize:
                return tt.fp_to_fp(out_t, x, rounding=tt.RoundingMode.RTNE)
            return tt.fp_to_fp(out_t, x)
        if {src.name, dst.name} == {"float16", "bfloat16"}:
            return convert(convert(x, src, np.float32), np.float32, dst)
        return (arith.extf(out_t, x) if dst.itemsize > src.itemsize
                else arith.truncf(out_t, x))
    if _is_float(dst):
        return (arith.uitofp(out_t, x) if _is_unsigned(src) else arith.sitofp(out_t, x))
    if _is_float(src):
        return (arith.fptoui(out_t, x) if _is_unsigned(dst) else arith.fptosi(out_t, x))
    sw = 1 if src == np.bool_ else src.itemsize * 8
    dw = dst.itemsize * 8
    if sw == dw:
        return x
    if dw < sw:
        return arith.trunci(out_t, x)
    return arith.extui(out_t, x) if _is_unsigned(src) else arith.extsi(out_t, x)


def _avals_in(op):
    return [aval_of(v.type) for v in op.operands]


def _aval_out(op, i=0):
    return aval_of(op.results[i].type)


# ---- elementwise ---------------------------------------------------------------------
# libdevice (CUDA) / ocml (ROCm) functions for f32 and f64; other float widths compute in
# f32. Triton lowers only a few math ops itself, so transcendental functions go through
# these libraries as JAX's Pallas does.
_LIBM = {"exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log1p": "log1p",
         "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt", "sin": "sin", "cos": "cos",
         "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
         "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
         "atanh": "atanh", "erf": "erf", "erfc": "erfc", "erf_inv": "erfinv",
         "lgamma": "lgamma", "floor": "floor", "ceil": "ceil", "atan2": "atan2",
         "pow": "pow"}


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


@triton_rule(*[n for n in _LIBM if n not in ("atan2", "pow")])
def _libm_unary(kl, op, x, **params):
    dtype = _avals_in(op)[0].dtype
    if not _is_float(dtype):
        raise TritonLoweringError(f"{op.name} of {np.dtype(dtype).name} is not supported")
    return [libm_call(kl, _LIBM[op.name[len("jaxpr."):]], [x], dtype)]


@triton_rule("atan2", "pow")
def _libm_binary(kl, op, x, y, **params):
    ax, ay = _avals_in(op)
    if op.name == "jaxpr.pow" and not _is_float(ay.dtype):
        y = convert(y, ay.dtype, ax.dtype)   # x ** int: the float pow is exact for ints
    return [libm_call(kl, _LIBM[op.name[len("jaxpr."):]], [x, y], ax.dtype)]


# name -> (float op, signed int op, unsigned int op); bool uses the unsigned column.
_BINARY = {
    "add": (arith.addf, arith.addi, arith.addi),
    "sub": (arith.subf, arith.subi, arith.subi),
    "mul": (arith.mulf, arith.muli, arith.muli),
    "div": (arith.divf, arith.divsi, arith.divui),
    "rem": (arith.remf, arith.remsi, arith.remui),
    "max": (arith.maximumf, arith.maxsi, arith.maxui),
    "min": (arith.minimumf, arith.minsi, arith.minui),
    "and": (None, arith.andi, arith.andi),
    "or": (None, arith.ori, arith.ori),
    "xor": (None, arith.xori, arith.xori),
}


def binary(name: str, x: ir.Value, y: ir.Value, dtype) -> ir.Value:
    f, s, u = _BINARY[name]
    fn = f if _is_float(dtype) else (u if _is_unsigned(dtype) else s)
    if fn is None:
        raise TritonLoweringError(f"jaxpr.{name} of {np.dtype(dtype).name} is not supported")
    return fn(x, y)


@triton_rule(*_BINARY)
def _binary(kl, op, x, y, **params):
    return [binary(op.name[len("jaxpr."):], x, y, _avals_in(op)[0].dtype)]


@triton_rule("shift_left", "shift_right_logical", "shift_right_arithmetic")
def _shift(kl, op, x, y, **params):
    # As lax (XLA) defines shifts by the bit width or more, which LLVM leaves undefined:
    # 0, or the sign for an arithmetic right shift. The amount compares as unsigned.
    dtype = _avals_in(op)[0].dtype
    bits = full_like(y, np.dtype(dtype).itemsize * 8, dtype)
    if op.name == "jaxpr.shift_right_arithmetic":
        return [arith.shrsi(x, arith.minui(y, arith.subi(bits, full_like(y, 1, dtype))))]
    fn = arith.shli if op.name == "jaxpr.shift_left" else arith.shrui
    in_range = arith.cmpi(arith.CmpIPredicate.ult, y, bits)
    return [arith.select(in_range, fn(x, y), full_like(x, 0, dtype))]


_CMP = {"eq": ("OEQ", "eq", "eq"), "ne": ("UNE", "ne", "ne"), "lt": ("OLT", "slt", "ult"),
        "le": ("OLE", "sle", "ule"), "gt": ("OGT", "sgt", "ugt"), "ge": ("OGE", "sge", "uge")}


def compare(name: str, x: ir.Value, y: ir.Value, dtype) -> ir.Value:
    f, s, u = _CMP[name]
    if _is_float(dtype):
        return arith.cmpf(getattr(arith.CmpFPredicate, f), x, y)
    return arith.cmpi(getattr(arith.CmpIPredicate, u if _is_unsigned(dtype) else s), x, y)


@triton_rule(*_CMP)
def _compare(kl, op, x, y, **params):
    return [compare(op.name[len("jaxpr."):], x, y, _avals_in(op)[0].dtype)]


@triton_rule("neg")
def _neg(kl, op, x, **params):
    dtype = _avals_in(op)[0].dtype
    if _is_float(dtype):
        return [arith.negf(x)]
    return [arith.subi(full_like(x, 0, dtype), x)]


@triton_rule("abs")
def _abs(kl, op, x, **params):
    return [math_d.absf(x) if _is_float(_avals_in(op)[0].dtype) else math_d.absi(x)]


@triton_rule("sign")
def _sign(kl, op, x, **params):
    dtype = _avals_in(op)[0].dtype
    zero, one, minus = (full_like(x, v, dtype) for v in (0, 1, -1))
    if _is_unsigned(dtype):
        return [arith.select(compare("gt", x, zero, dtype), one, zero)]
    neg = arith.select(compare("lt", x, zero, dtype), minus, x if _is_float(dtype) else zero)
    return [arith.select(compare("gt", x, zero, dtype), one, neg)]  # NaN, +-0 pass through


@triton_rule("round")
def _round(kl, op, x, *, rounding_method=0, **params):
    dtype = _avals_in(op)[0].dtype
    fn = "round" if rounding_method == 0 else "rint"
    return [libm_call(kl, fn, [x], dtype)]


@triton_rule("is_finite")
def _is_finite(kl, op, x, **params):
    dtype = _avals_in(op)[0].dtype
    return [arith.cmpf(arith.CmpFPredicate.OLT, math_d.absf(x),
                       full_like(x, float("inf"), dtype))]


@triton_rule("logistic")
def _logistic(kl, op, x, **params):
    dtype = _avals_in(op)[0].dtype
    one = full_like(x, 1, dtype)
    e = libm_call(kl, "exp", [arith.negf(x)], dtype)
    return [arith.divf(one, arith.addf(one, e))]


@triton_rule("not")
def _not(kl, op, x, **params):
    dtype = _avals_in(op)[0].dtype
    return [arith.xori(x, full_like(x, 1 if dtype == np.bool_ else -1, dtype))]


@triton_rule("population_count")
def _popcnt(kl, op, x, **params):
    return [math_d.ctpop(x)]


@triton_rule("clz")
def _clz(kl, op, x, **params):
    return [math_d.ctlz(x)]


@triton_rule("integer_pow")
def _integer_pow(kl, op, x, *, y, **params):
    dtype = _avals_in(op)[0].dtype
    if y == 0:
        return [full_like(x, 1, dtype)]
    acc, base, n = None, x, abs(y)
    while n:                                  # square-and-multiply
        if n & 1:
            acc = base if acc is None else binary("mul", acc, base, dtype)
        n >>= 1
        if n:
            base = binary("mul", base, base, dtype)
    if y < 0:
        acc = binary("div", full_like(x, 1, dtype), acc, dtype)
    return [acc]


@triton_rule("select_n")
def _select_n(kl, op, which, *cases, **params):
    wdtype = _avals_in(op)[0].dtype
    shape = shape_of(cases[0])
    if shape_of(which) != shape:
        which = broadcast_to(which, shape)
    if wdtype == np.bool_:
        return [arith.select(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]]
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):   # which == k ? cases[k] : (later cases)
        hit = arith.cmpi(arith.CmpIPredicate.eq, which, full_like(which, k, wdtype))
        out = arith.select(hit, cases[k], out)
    return [out]


@triton_rule("clamp")
def _clamp(kl, op, lo, x, hi, **params):
    dtype = _avals_in(op)[1].dtype
    shape = shape_of(x)
    lo, hi = broadcast_to(lo, shape), broadcast_to(hi, shape)
    return [binary("min", binary("max", x, lo, dtype), hi, dtype)]


@triton_rule("convert_element_type")
def _convert(kl, op, x, *, new_dtype, **params):
    return [convert(x, _avals_in(op)[0].dtype, new_dtype)]


@triton_rule("bitcast_convert_type")
def _bitcast(kl, op, x, *, new_dtype, **params):
    src = np.dtype(_avals_in(op)[0].dtype)
    if src.itemsize != np.dtype(new_dtype).itemsize:
        raise TritonLoweringError("bitcast_convert_type between widths is not supported "
                                  "by the Triton lowering")
    return [tt.bitcast(ttype(shape_of(x), new_dtype), x)]


@triton_rule("copy", "stop_gradient", "optimization_barrier")
def _identity(kl, op, *xs, **params):
    return list(xs)


# ---- structural ----------------------------------------------------------------------
@triton_rule("constant")
def _constant(kl, op, *, value, **params):
    aval = _aval_out(op)
    arr = np.asarray(value)
    flat = arr.reshape(-1)
    if flat.size and not (flat == flat[0]).all() and not np.isnan(flat.astype(float)).all():
        raise TritonLoweringError("the Triton lowering supports scalar and splat constants "
                                  f"only, got a {aval.shape} array of distinct values")
    check_pow2(aval.shape, "a constant")
    return [full(flat[0].item() if flat.size else 0, aval.dtype, aval.shape)]


@triton_rule("iota")
def _iota(kl, op, *, dtype, shape, dimension=0, **params):
    check_pow2(shape, "an iota")
    r = expand_to(make_range(shape[dimension]), dimension, len(shape))
    return [convert(broadcast_to(r, shape), np.int32, dtype)]


@triton_rule("broadcast_in_dim")
def _broadcast_in_dim(kl, op, x, *, shape, broadcast_dimensions, **params):
    shape = tuple(shape)
    if not shape:
        return [x]
    check_pow2(shape, "a broadcast")
    if not isinstance(x.type, ir.RankedTensorType):
        return [broadcast_to(x, shape)]
    # Put x's dims where broadcast_dimensions says, size-1 dims elsewhere, then broadcast.
    for d in range(len(shape)):
        if d not in broadcast_dimensions:
            x = tt.expand_dims(x, d)
    return [broadcast_to(x, shape)]


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


@triton_rule("reshape", "squeeze", "expand_dims")
def _reshape(kl, op, x, **params):
    aval = _aval_out(op)
    return [reshape(x, aval.shape, aval.dtype)]


@triton_rule("concatenate")
def _concatenate(kl, op, *xs, dimension, **params):
    # Two equal halves: tt.join pairs them along a new last axis, which moves in front
    # of `dimension` so that a row-major reshape lays x before y.
    avals = _avals_in(op)
    if len(xs) != 2 or avals[0].shape != avals[1].shape:
        raise TritonLoweringError(
            f"the Triton lowering concatenates two values of one shape only, got "
            f"{', '.join(a.str_short() for a in avals)}")
    shape = list(shape_of(xs[0]))
    rank = len(shape)
    joined = tt.join(ir.RankedTensorType.get(shape + [2], elt_type(avals[0].dtype)), *xs)
    order = list(range(dimension)) + [rank] + list(range(dimension, rank))
    if order != list(range(rank + 1)):
        joined = tt.trans(joined, order)
    return [reshape(joined, _aval_out(op).shape, avals[0].dtype)]


@triton_rule("transpose")
def _transpose(kl, op, x, *, permutation, **params):
    if list(permutation) == sorted(permutation):
        return [x]
    return [tt.trans(x, list(permutation))]


@triton_rule("dot_general")
def _dot_general(kl, op, a, b, *, dimension_numbers, precision=None,
                 preferred_element_type=None, **params):
    (lc, rc), (lb, rb) = dimension_numbers
    a_aval, b_aval = _avals_in(op)
    out = _aval_out(op)
    batched = tuple(lb) == tuple(rb) == (0,) and a_aval.ndim == b_aval.ndim == 3
    if not (batched or (not lb and not rb and a_aval.ndim == b_aval.ndim == 2)) or len(
            lc) != 1:
        raise TritonLoweringError(
            f"the Triton lowering supports matrix products (tt.dot: 2-D, or 3-D batched "
            f"on the leading dim) only, got dot_general of {a_aval.str_short()} and "
            f"{b_aval.str_short()} with dimension_numbers {dimension_numbers}")
    if a_aval.dtype != b_aval.dtype:
        raise TritonLoweringError(f"tt.dot needs operands of one dtype, got "
                                  f"{a_aval.dtype} and {b_aval.dtype}")
    # tt.dot contracts a's last dim with b's second-to-last: transpose the others there.
    nb = 1 if batched else 0
    swap = [0, 2, 1] if batched else [1, 0]
    if lc[0] == nb:
        a = tt.trans(a, swap)
    if rc[0] == nb + 1:
        b = tt.trans(b, swap)
    (m, k), n = shape_of(a)[nb:], shape_of(b)[-1]
    if min(m, n, k) < 16:
        raise TritonLoweringError(f"tt.dot needs every dimension >= 16, got an "
                                  f"({m}, {k}) x ({k}, {n}) product; use larger blocks")
    in_dt = np.dtype(a_aval.dtype)
    if not _is_float(in_dt):
        if _is_unsigned(in_dt):
            raise TritonLoweringError("tt.dot treats integers as signed; cast unsigned "
                                      "operands to a signed dtype first")
        acc_dt = np.dtype(np.int32)
    else:
        acc_dt = np.dtype(np.float64 if in_dt == np.float64 else np.float32)
    kwargs = {}
    if in_dt == np.float32:
        # As JAX on GPU: TF32 tensor cores unless a HIGHEST precision asks for IEEE f32.
        exact = precision is not None and "HIGHEST" in tuple(precision)
        kwargs["input_precision"] = (tt.InputPrecision.IEEE if exact
                                     else tt.InputPrecision.TF32)
    acc = full(0, acc_dt, shape_of(a)[:nb] + (m, n))
    res = tt.dot(a, b, acc, **kwargs)
    return [convert(res, acc_dt, out.dtype)]


# ---- reductions ----------------------------------------------------------------------
_REDUCE = {"reduce_sum": "add", "reduce_prod": "mul", "reduce_max": "max",
           "reduce_min": "min", "reduce_and": "and", "reduce_or": "or", "reduce_xor": "xor"}


def reduce_axis(operands: list, axis: int, combine) -> list:
    """tt.reduce of `operands` along `axis`; combine(lhs scalars, rhs scalars) -> list."""
    red = tt.ReduceOp(operands, axis)
    elts = [ir.RankedTensorType(v.type).element_type for v in operands]
    block = red.regions[0].blocks.append(*elts, *elts)
    with ir.InsertionPoint(block):
        n = len(operands)
        tt.reduce_return(combine(list(block.arguments)[:n], list(block.arguments)[n:]))
    return list(red.results)


@triton_rule(*_REDUCE)
def _reduce(kl, op, x, *, axes, **params):
    dtype = _avals_in(op)[0].dtype
    name = _REDUCE[op.name[len("jaxpr."):]]
    if np.dtype(dtype) == np.bool_:
        name = {"max": "or", "min": "and", "add": "or", "mul": "and"}.get(name, name)
    for axis in sorted(axes, reverse=True):
        [x] = reduce_axis([x], axis, lambda l, r: [binary(name, l[0], r[0], dtype)])
    return [x]


@triton_rule("argmax", "argmin")
def _argminmax(kl, op, x, *, axes, index_dtype, **params):
    dtype = _avals_in(op)[0].dtype
    [axis] = axes
    shape = shape_of(x)
    idx = broadcast_to(expand_to(make_range(shape[axis]), axis, len(shape)), shape)
    better = "gt" if op.name == "jaxpr.argmax" else "lt"

    def combine(lhs, rhs):
        (lv, li), (rv, ri) = lhs, rhs
        first = arith.cmpi(arith.CmpIPredicate.slt, li, ri)
        wins = arith.ori(compare(better, lv, rv, dtype),
                         arith.andi(compare("eq", lv, rv, dtype), first))
        if _is_float(dtype):       # NaN wins, the first NaN among several (as JAX)
            lnan = arith.cmpf(arith.CmpFPredicate.UNO, lv, lv)
            rnan = arith.cmpf(arith.CmpFPredicate.UNO, rv, rv)
            not_r = arith.xori(rnan, full(1, np.bool_))
            wins = arith.select(lnan, arith.ori(not_r, first), arith.andi(not_r, wins))
        return [arith.select(wins, lv, rv), arith.select(wins, li, ri)]
    _, index = reduce_axis([x, idx], axis, combine)
    return [convert(index, np.int32, index_dtype)]


_CUMULATIVE = {"cumsum": "add", "cumprod": "mul", "cummax": "max", "cummin": "min"}


@triton_rule(*_CUMULATIVE)
def _cumulative(kl, op, x, *, axis, reverse=False, **params):
    dtype = _avals_in(op)[0].dtype
    name = _CUMULATIVE[op.name[len("jaxpr."):]]
    if np.dtype(dtype) == np.bool_:
        name = {"max": "or", "min": "and", "add": "or", "mul": "and"}[name]
    scan = tt.ScanOp([x], axis, reverse)
    elt = ir.RankedTensorType(x.type).element_type
    block = scan.regions[0].blocks.append(elt, elt)
    with ir.InsertionPoint(block):
        tt.scan_return([binary(name, block.arguments[0], block.arguments[1], dtype)])
    return [scan.results[0]]


# ---- Pallas ops ----------------------------------------------------------------------
@triton_rule("program_id")
def _program_id(kl, op, *, axis, **params):
    return [kl.program_id(axis)]


@triton_rule("num_programs")
def _num_programs(kl, op, *, axis, **params):
    return [i32(kl.grid[axis])]   # the grid is static


def _int_dtype(v: ir.Value):
    """The signed dtype of an integer scalar (indexer starts are i32; i64 tolerated)."""
    return np.int64 if ir.IntegerType(v.type).width == 64 else np.int32


def ref_pointers(ref: RefBlock, starts: list, sizes, squeezed) -> tuple[ir.Value, tuple]:
    """The pointers a ref indexer reads: (pointer scalar or tensor, value shape).

    Scalar parts (block start + indexer start) fold into one `tt.addptr` on the base;
    each sliced dim adds a `tt.make_range` laid along its own axis of the value."""
    dims = ref.ref_dims
    if len(starts) != len(dims) or len(sizes) != len(dims):
        raise TritonLoweringError(f"ref indexer has {len(starts)} starts and {len(sizes)} "
                                  f"sizes for a ref of rank {len(dims)}")
    strides = [int(np.prod(ref.array_shape[d + 1:], dtype=np.int64))
               for d in range(len(ref.array_shape))]
    n_elems = int(np.prod(ref.array_shape, dtype=np.int64))
    off_dt = np.int64 if n_elems >= 2 ** 31 else np.int32
    value_shape = tuple(s for k, s in enumerate(sizes) if k not in squeezed)
    check_pow2(value_shape, "a ref access")
    base = None
    ref_dim_of = {d: k for k, d in enumerate(dims)}
    for d, start in enumerate(ref.starts):
        s = convert(start, _int_dtype(start), off_dt)
        if d in ref_dim_of:
            k = starts[ref_dim_of[d]]
            s = binary("add", s, convert(k, _int_dtype(k), off_dt), off_dt)
        if strides[d] != 1:
            s = binary("mul", s, full(strides[d], off_dt), off_dt)
        base = s if base is None else binary("add", base, s, off_dt)
    ptr = ref.ptr if base is None else tt.addptr(ref.ptr.type, ref.ptr, base)
    if not value_shape:
        return ptr, value_shape
    ptrs = broadcast_to(ptr, value_shape)
    offsets = None
    pos = 0
    for k, size in enumerate(sizes):
        if k in squeezed:
            continue
        r = convert(make_range(size), np.int32, off_dt)
        stride = strides[dims[k]]
        if stride != 1:
            r = binary("mul", r, full(stride, off_dt, (size,)), off_dt)
        r = broadcast_to(expand_to(r, pos, len(value_shape)), value_shape)
        offsets = r if offsets is None else binary("add", offsets, r, off_dt)
        pos += 1
    return tt.addptr(ptrs.type, ptrs, offsets), value_shape


def load(ref: RefBlock, ptrs, mask=None, other=None) -> ir.Value:
    if ref.dtype == np.bool_ and other is not None:
        other = convert(other, np.bool_, np.int8)
    v = tt.load(ptrs, mask=mask, other=other, cache=tt.CacheModifier.NONE,
                evict=tt.EvictionPolicy.NORMAL, is_volatile=False)
    return convert(v, np.int8, np.bool_) if ref.dtype == np.bool_ else v


def store(ref: RefBlock, ptrs, value, mask=None) -> None:
    if ref.dtype == np.bool_:
        value = convert(value, np.bool_, np.uint8)
    tt.store(ptrs, value, mask=mask, cache=tt.CacheModifier.NONE,
             evict=tt.EvictionPolicy.NORMAL)


def _ref_operand(op, ref) -> RefBlock:
    if not isinstance(ref, RefBlock):
        raise TritonLoweringError(f"{op.name}: operand 0 is not a kernel ref (scratch "
                                  f"buffers and refs made inside kernels are not "
                                  f"supported by the Triton lowering)")
    return ref


@triton_rule("ref_get")
def _ref_get(kl, op, ref, *starts, sizes, squeezed=(), **params):
    ref = _ref_operand(op, ref)
    ptrs, _ = ref_pointers(ref, list(starts), sizes, squeezed)
    return [load(ref, ptrs)]


@triton_rule("masked_load")
def _masked_load(kl, op, ref, mask, other, *starts, sizes, squeezed=(), **params):
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    return [load(ref, ptrs, broadcast_to(mask, shape), broadcast_to(other, shape))]


def _swap(op, ref, val, mask, starts, sizes, squeezed) -> list:
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    val = broadcast_to(val, shape)
    if mask is not None:
        mask = broadcast_to(mask, shape)
    # The old value is read only when the kernel uses it (most stores ignore it).
    old = load(ref, ptrs, mask, val if mask is not None else None) if list(
        op.results[0].uses) else val
    store(ref, ptrs, val, mask)
    return [old]


@triton_rule("ref_swap")
def _ref_swap(kl, op, ref, val, *starts, sizes, squeezed=(), **params):
    return _swap(op, ref, val, None, starts, sizes, squeezed)


@triton_rule("masked_swap")
def _masked_swap(kl, op, ref, val, mask, *starts, sizes, squeezed=(), **params):
    return _swap(op, ref, val, mask, starts, sizes, squeezed)


_RMW_INT = {"add": "ADD", "max": "MAX", "min": "MIN", "and": "AND", "or": "OR",
            "xor": "XOR", "xchg": "XCHG"}
_RMW_UINT = {**_RMW_INT, "max": "UMAX", "min": "UMIN"}
_RMW_FLOAT = {"add": "FADD", "xchg": "XCHG"}


def atomic(ref: RefBlock, ptrs, val, mask, kind: str) -> ir.Value:
    dtype = np.dtype(ref.dtype)
    table = _RMW_FLOAT if _is_float(dtype) else _RMW_UINT if _is_unsigned(dtype) else _RMW_INT
    if kind not in table or dtype == np.bool_:
        raise TritonLoweringError(f"atomic {kind!r} on {dtype.name} is not supported by "
                                  f"Triton (kinds: {', '.join(sorted(table))})")
    return tt.atomic_rmw(val.type, getattr(tt.RMWOp, table[kind]), ptrs, val,
                         tt.MemSemantic.ACQUIRE_RELEASE, tt.MemSyncScope.GPU, mask=mask)


@triton_rule("atomic_rmw")
def _atomic_rmw(kl, op, ref, val, mask, *starts, kind="add", sizes, squeezed=(), **params):
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    return [atomic(ref, ptrs, broadcast_to(val, shape), broadcast_to(mask, shape), kind)]


@triton_rule("ref_addupdate")
def _ref_addupdate(kl, op, ref, val, *starts, sizes, squeezed=(), **params):
    # Atomic, as in JAX: programs of a grid may add into the same block.
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    atomic(ref, ptrs, broadcast_to(val, shape), None, "add")
    return []


# ---- control flow and calls ----------------------------------------------------------
def _result_types(op) -> list[ir.Type]:
    return [ttype(a.shape, a.dtype) for a in (aval_of(r.type) for r in op.results)]


@triton_rule("cond")
def _cond(kl, op, index, *args, **params):
    branches = [r.blocks[0] for r in op.regions]
    types = _result_types(op)

    def build(k: int) -> list:
        if k == len(branches) - 1:
            return kl.lower_block(branches[k], list(args))
        hit = arith.cmpi(arith.CmpIPredicate.eq, index, i32(k))
        if_op = scf.IfOp(hit, types, has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            scf.yield_(kl.lower_block(branches[k], list(args)))
        with ir.InsertionPoint(if_op.else_block):
            scf.yield_(build(k + 1))
        return list(if_op.results)
    return build(0)


@triton_rule("while")
def _while(kl, op, *operands, cond_nconsts=0, body_nconsts=0, **params):
    cconsts = list(operands[:cond_nconsts])
    bconsts = list(operands[cond_nconsts:cond_nconsts + body_nconsts])
    init = list(operands[cond_nconsts + body_nconsts:])
    cond_block, body_block = (r.blocks[0] for r in op.regions)
    if not cconsts and _is_fori_while(cond_block, body_block, body_nconsts):
        return _fori_while(kl, body_block, bconsts, init)
    types = [v.type for v in init]
    loop = scf.WhileOp(types, init)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        [pred] = kl.lower_block(cond_block, cconsts + list(before.arguments))
        scf.condition(pred, list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.yield_(kl.lower_block(body_block, bconsts + list(after.arguments)))
    return list(loop.results)


def _defining_op(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _is_fori_while(cond: ir.Block, body: ir.Block, body_nconsts: int) -> bool:
    """Is this while a fori_loop with traced bounds: carry (i, upper, ...), cond
    `i < upper`, body yielding (i + 1, upper, ...)?"""
    cond_ops = [o.operation for o in cond.operations]
    if len(cond_ops) != 2 or len(cond.arguments) < 2 or cond_ops[0].name != "jaxpr.lt":
        return False
    i, upper = cond.arguments[0], cond.arguments[1]
    if (list(cond_ops[0].operands) != [i, upper]
            or cond_ops[1].operands[0] != cond_ops[0].result):
        return False
    if shape_of(i) or aval_of(i.type).dtype not in (np.int32, np.int64):
        return False
    yield_op = list(body.operations)[-1].operation
    bi, bu = body.arguments[body_nconsts], body.arguments[body_nconsts + 1]
    return yield_op.operands[1] == bu and _is_increment(yield_op.operands[0], bi)


def _is_increment(v: ir.Value, arg: ir.Value) -> bool:
    """Is `v` = jaxpr.add(arg, 1)?"""
    producer = _defining_op(v)
    if producer is None or producer.name != "jaxpr.add" or producer.operands[0] != arg:
        return False
    c = _defining_op(producer.operands[1])
    return c is not None and c.name == "jaxpr.constant" and int(
        np.asarray(op_params(c)["value"]).reshape(-1)[0]) == 1


def _fori_while(kl, body: ir.Block, bconsts: list, init: list) -> list:
    """The fori_loop-shaped while as scf.for (Triton pipelines for loops only)."""
    lo, hi, rest = init[0], init[1], init[2:]
    dtype = aval_of(body.arguments[len(bconsts)].type).dtype
    loop = scf.ForOp(lo, hi, full(1, dtype), rest)
    with ir.InsertionPoint(loop.body):
        outs = kl.lower_block(body, bconsts + [loop.induction_variable, hi]
                              + list(loop.inner_iter_args))
        scf.yield_(outs[2:])
    # The final index: `upper`, or `lower` when the loop never ran.
    return [binary("max", lo, hi, dtype), hi] + list(loop.results)


def _counter_carry(body: ir.Block, num_consts: int, num_carry: int) -> int | None:
    """The carry a fori_loop-style scan body increments by one (its loop index), if any:
    it becomes the scf.for induction variable, which Triton's pipeliner wants."""
    yield_op = list(body.operations)[-1].operation
    for j in range(num_carry):
        arg = body.arguments[num_consts + j]
        if shape_of(arg) or aval_of(arg.type).dtype not in (np.int32, np.int64):
            continue
        if _is_increment(yield_op.operands[j], arg):
            return j
    return None


@triton_rule("scan")
def _scan(kl, op, *operands, length, num_consts=0, num_carry=0, reverse=False, unroll=1,
          **params):
    consts = list(operands[:num_consts])
    init = list(operands[num_consts:num_consts + num_carry])
    if len(operands) > num_consts + num_carry or len(op.results) > num_carry:
        raise TritonLoweringError("the Triton lowering supports scans without xs and ys "
                                  "(fori_loop) only")
    body = op.regions[0].blocks[0]
    j = _counter_carry(body, num_consts, num_carry)
    # Without xs and ys the order of iterations is invisible: `reverse` changes nothing.
    if j is not None:
        lo = init[j]
        dtype = aval_of(body.arguments[num_consts + j].type).dtype
        hi = binary("add", lo, full(length, dtype), dtype)
        step = full(1, dtype)
        carried = init[:j] + init[j + 1:]
    else:
        lo, hi, step, carried = i32(0), i32(length), i32(1), init
    loop = scf.ForOp(lo, hi, step, carried)
    with ir.InsertionPoint(loop.body):
        iters = list(loop.inner_iter_args)
        if j is not None:
            iters.insert(j, loop.induction_variable)
        outs = kl.lower_block(body, consts + iters)
        if j is not None:
            outs = outs[:j] + outs[j + 1:]
        scf.yield_(outs)
    results = list(loop.results)
    if j is not None:
        results.insert(j, hi)
    return results


@triton_rule("call", "custom_jvp_call", "custom_vjp_call", "checkpoint")
def _call(kl, op, *args, callee, **params):
    # Kernels run forward only: a custom rule's primal function is the code to run.
    return kl.lower_function(op, str(callee), list(args))


@triton_rule("checkpoint_name", "sharding_constraint")
def _annotation(kl, op, x, **params):
    # Names for remat and sharding hints mean nothing inside one kernel program.
    return [x]


def _unsupported(why: str, *names: str) -> None:
    for name in names:
        TRITON_UNSUPPORTED["jaxpr." + name] = why


_unsupported("collectives run across devices; a Pallas kernel is one device's program",
             "all_gather", "all_to_all", "axis_index", "pmax", "pmin", "ppermute", "psum",
             "psum_scatter")
_unsupported("host callbacks and exported modules cannot run inside a GPU kernel",
             "callback", "call_exported")
_unsupported("transformations are expanded before kernels are compiled "
             "(--jaxpr-expand-transforms)", "jvp", "vjp", "vmap", "checkpoint_tangent",
             "custom_vjp_tangent", "custom_vjp_bwd")
_unsupported("checkify inside a Pallas kernel is not supported: checks are functionalized "
             "by --jaxpr-checkify outside kernels", "check", "checkify")
_unsupported("Triton has no complex numbers", "complex", "conj", "real", "imag")
_unsupported("the device math libraries have no digamma/polygamma", "digamma", "polygamma")
_unsupported("Triton cannot slice, pad, reverse or concatenate values held in registers; "
             "index the ref instead (ref[pl.ds(start, size)])", "pad",
             "rev", "slice", "dynamic_slice", "dynamic_update_slice", "gather", "scatter",
             "scatter_add", "scatter_max", "scatter_min", "scatter_mul")
_unsupported("random numbers inside Triton kernels are not supported; pass them in",
             "random_bits", "random_clone", "random_fold_in", "random_seed", "random_split",
             "random_unwrap", "random_wrap", "threefry2x32")
_unsupported("no Triton lowering for this op inside kernels", "cholesky", "eig", "eigh",
             "fft", "geqrf", "householder_product", "lu", "qr", "svd", "triangular_solve",
             "conv_general_dilated", "cumlogsumexp", "sort", "top_k", "reduce",
             "reduce_window", "reduce_window_max", "reduce_window_min", "reduce_window_sum",
             "select_and_gather_add", "select_and_scatter_add", "reduce_precision")
_unsupported("a pallas_call inside a Pallas kernel is not supported", "pallas_call")
_unsupported("a region terminator, lowered by the op that owns the region", "yield")


# ---- attributes of ops the Python dialect may not define yet -------------------------
def op_params(op: ir.Operation) -> dict:
    """The op's attributes as Python values: its class's decoding when it has one, else
    each attribute decoded on its own (ops parsed from text before their class exists)."""
    from mjax.dialect.core import JaxprOp
    view = op.opview
    if isinstance(view, JaxprOp):
        return view.params
    params = {}
    for named in op.attributes:
        try:
            params[named.name] = A.decode(named.attr)
        except TypeError:
            params[named.name] = named.attr
    return params


__all__ = ["TRITON", "TRITON_UNSUPPORTED", "RefBlock", "TritonLoweringError", "elt_type", "ttype", "ptr_elt_type",
           "op_params", "triton_rule", "convert", "full", "i32", "binary"]
