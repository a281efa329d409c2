"""Rules for pltpu.stochastic_round, pack_elementwise and unpack_elementwise
(dialect/ops/pallas_tpu_packing.py): interpret mode lowers them to StableHLO bit
arithmetic, on u32 words:

- pack_elementwise: each source's low bits(P) bits (f32 rounded to bf16 first) shifted
  to its field, OR-ed together.
- unpack_elementwise: the field shifted down and masked, sign-extended where P is
  signed (bf16: moved to the high half of an f32).
- stochastic_round: the neighbours of x in the target format below and above it in
  magnitude (lo, hi); hi when the high 24 bits of `bits` / 2**24 fall below
  (|x| - |lo|) / (|hi| - |lo|), else lo; x itself where it is exact, NaN where the
  nearest rounding is. So the result is one of JAX's two candidates and unbiased in
  expectation; which one a given `bits` picks is the interpreter's choice (the chip's
  tpu.stochastic_convert may use its bits differently).

All three are elementwise: vmap passes the batch axis through. JAX's TPU interpret mode
has no rule for them (its error: "MLIR translation rule for primitive ... not found").
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import bitwidth, is_int, is_signed
from mjax.dialect.ops import pallas_tpu_packing as PK
from mjax.dialect.types import aval_of
from mjax.passes.rules import batch_util as B
from mjax.passes.rules import hlo as H
from mjax.passes.rules.sharding import shard_elementwise
from mjax.passes.rules.tables import JVP, TRANSPOSE, TRITON, lowering

_U32 = np.dtype(np.uint32)


def _shape(x) -> tuple:
    return aval_of(x.type).shape


def _c(x, value, dtype=_U32):
    """`value` splat over x's shape."""
    return H.constant(np.asarray(value).astype(dtype), dtype, _shape(x))


def _and(x, mask):
    return hlo.and_(x, _c(x, mask))


def _u32_bits(x, dtype):
    """The element's bits, zero-extended into a u32 (floats bitcast first)."""
    dt, w = np.dtype(dtype), bitwidth(dtype)
    if not is_int(dt):
        x = hlo.bitcast_convert(H.ttype(_shape(x), np.dtype(f"uint{w}")), x)
    elif is_signed(dt):                         # (through i32: convert keeps the bits)
        x = hlo.convert(H.ttype(_shape(x), np.int32), x)
    y = hlo.convert(H.ttype(_shape(x), _U32), x)
    return _and(y, (1 << w) - 1) if w < 32 else y


@lowering(PK.PackElementwiseOp)
def _pack_lower(ctx, *xs, packed_dtype):
    src, out = ctx.avals_in[0], ctx.avals_out[0]
    pb = bitwidth(packed_dtype)
    word = None
    for i, x in enumerate(xs):
        if not is_int(src.dtype):                 # f32 -> bf16 (round to nearest even)
            x = hlo.convert(H.ttype(src.shape, packed_dtype), x)
            bits = _u32_bits(x, packed_dtype)
        else:                                     # integers: the low bits, truncated
            bits = _and(_u32_bits(x, src.dtype), (1 << pb) - 1)
        if i:
            bits = hlo.shift_left(bits, _c(bits, i * pb))
        word = bits if word is None else hlo.or_(word, bits)
    return hlo.convert(H.ttype(out.shape, out.dtype), word)


@lowering(PK.UnpackElementwiseOp)
def _unpack_lower(ctx, x, *, index, packed_dtype, unpacked_dtype):
    src, out = ctx.avals_in[0], ctx.avals_out[0]
    pb, packed = bitwidth(packed_dtype), np.dtype(packed_dtype)
    field = _and(hlo.shift_right_logical(_u32_bits(x, src.dtype), _c(x, index * pb)),
                 (1 << pb) - 1)
    if not is_int(packed):
        if pb != 16 or is_int(unpacked_dtype):
            raise NotImplementedError(f"unpack_elementwise of {packed.name} into "
                                      f"{np.dtype(unpacked_dtype).name} in interpret mode "
                                      f"(bfloat16 into float32 only)")
        f32 = hlo.bitcast_convert(H.ttype(out.shape, np.float32),
                                  hlo.shift_left(field, _c(field, 16)))
        return H.convert(f32, np.dtype(unpacked_dtype))
    if is_signed(packed):                         # sign-extend the field
        up = hlo.shift_left(field, _c(field, 32 - pb))
        s = hlo.convert(H.ttype(out.shape, np.int32), up)
        field = hlo.shift_right_arithmetic(s, _c(s, 32 - pb, np.int32))
    return hlo.convert(H.ttype(out.shape, unpacked_dtype), field)


@lowering(PK.StochasticRoundOp)
def _stochastic_round_lower(ctx, x, random_bits, *, target_dtype):
    target = np.dtype(target_dtype)
    shape, tb = ctx.avals_in[0].shape, bitwidth(target)
    f32, t_u = H.ttype(shape, np.float32), H.ttype(shape, np.dtype(f"uint{tb}"))
    cmp = H.compare
    t = hlo.convert(H.ttype(shape, target), x)              # the nearest (even) value
    # (XLA may fold convert(f32, convert(bf16, x)) back to x, which it allows itself on
    # a TPU: the barrier keeps t the value in the target format, so exact and rounded
    # cases stay apart there too.)
    t = hlo.optimization_barrier([t])
    tf = hlo.convert(f32, t)
    sign = hlo.select(cmp(x, H.constant_like(x, 0.0), "LT"),
                      _c(x, 1 << (tb - 1)), _c(x, 0))
    mag = _and(_u32_bits(t, target), (1 << (tb - 1)) - 1)
    away = hlo.or_(sign, hlo.add(mag, _c(x, 1)))
    down = hlo.subtract(mag, _c(x, 1))
    toward = hlo.or_(sign, down)
    if "fnuz" in target.name:                 # (no -0: sign | 0 is NaN there)
        toward = hlo.select(cmp(down, _c(x, 0), "EQ"), _c(x, 0), toward)
    as_t = lambda u: hlo.bitcast_convert(H.ttype(shape, target),   # noqa: E731
                                         hlo.convert(t_u, u))
    beyond = cmp(hlo.abs(tf), hlo.abs(x), "GT")             # t rounded away from zero
    lo = hlo.select(beyond, as_t(toward), t)
    hi = hlo.select(beyond, t, as_t(away))
    lo_m, hi_m = hlo.abs(hlo.convert(f32, lo)), hlo.abs(hlo.convert(f32, hi))
    p = hlo.divide(hlo.subtract(hlo.abs(x), lo_m), hlo.subtract(hi_m, lo_m))
    u = hlo.multiply(hlo.convert(f32, hlo.shift_right_logical(random_bits, _c(x, 8))),
                     H.constant_like(x, 2.0 ** -24))
    out = hlo.select(cmp(u, p, "LT"), hi, lo)
    keep = hlo.or_(cmp(tf, x, "EQ"), cmp(tf, tf, "NE"))     # exact, or NaN
    return hlo.select(keep, t, out)


B.defvectorized(PK.UnpackElementwiseOp)
B.defbroadcasting(PK.PackElementwiseOp, PK.StochasticRoundOp)
shard_elementwise(PK.StochasticRoundOp, PK.PackElementwiseOp, PK.UnpackElementwiseOp)
for _op, _name in ((PK.StochasticRoundOp, "pltpu.stochastic_round"),
                  (PK.PackElementwiseOp, "pltpu.pack_elementwise"),
                  (PK.UnpackElementwiseOp, "pltpu.unpack_elementwise")):
    JVP.unsupported(_op, f"{_name} has no derivative (JAX's primitive has no JVP rule "
                         f"either)")
    TRANSPOSE.unsupported(_op, f"{_name} is not linear (JAX's primitive has no "
                               f"transpose rule either)")
    TRITON.unsupported(_op, f"{_name} is a TPU op; JAX's Triton lowering has no rule "
                            f"for it either")

__all__: list[str] = []
