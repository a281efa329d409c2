"""Rules for the PRNG ops (dialect/ops/random.py): lowering, JVP, batching.

Keys lower to their uint32 data (`key<threefry2x32>[*S]` -> `uint32[*S, 2]`): lowering
`random_wrap`/`random_seed`/`random_split`/`random_fold_in` yields that data, so the
rules of the ops that consume keys receive it already.

    %k = "jaxpr.random_wrap"(%d) {impl = "threefry2x32"}
           : (tensor<2xui32>) -> tensor<!jaxpr.key<threefry2x32>>
    %b = "jaxpr.random_bits"(%k) {bit_width = 32, shape = array<i64: 3>}
           : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<3xui32>
  ==>
    counters: a uint64 iota split in (hi, lo) words; stablehlo integer ops doing the
    20 threefry rounds on (k1, k2, hi, lo) (unrolled; for the CPU a while loop of five
    steps, as JAX's CPU rule); the two output words xor'ed together.

The threefry counter layout is JAX's partitionable one (`jax_threefry_partitionable`,
on by default in JAX 0.10): element i of a request of shape S hashes the pair
(i >> 32, i & 0xffffffff), whatever the other dimensions.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.ops import indexing as I
from mjax.dialect.ops import random as R
from mjax.dialect.ops import structural as St
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.dialect.types import KeyType, aval_of
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.batch_util import (NOT_MAPPED, batch_rule, bdim_to_front,
                                          broadcast_batcher, defvectorized, moveaxis)
from mjax.passes.rules.dynamic_shapes import defining_op, dim_value
from mjax.passes.rules.tables import BATCH, KEY_DATA, lowering, nan_checked, platform_rules

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


# ---- StableHLO helpers ------------------------------------------------------------
def _shape(x: ir.Value) -> tuple[int, ...]:
    return aval_of(x.type).shape


def _u32(value, shape) -> ir.Value:
    return H.constant(value, np.uint32, shape)


def _physical(x: ir.Value) -> ir.Value:
    """A key operand's uint32 data (what the rule of the op defining it produced)."""
    if isinstance(aval_of(x.type).dtype, KeyType):
        raise ValueError("a PRNG key value that does not come from a jaxpr.random_* op "
                         "(e.g. a function argument of key type) has no StableHLO form: "
                         "pass key data (uint32) and use jaxpr.random_wrap")
    return x


def threefry_rounds(k1, k2, x1, x2, *, add, xor, rotl, const) -> list:
    """The Threefry-2x32 hash of counters (x1, x2) under key words (k1, k2): 20 rounds
    unrolled, in JAX's op order, over any op set. `add`, `xor`, `rotl(v, d)` and
    `const(value, like)` (a uint32 constant shaped as `like`) emit the ops, so the
    StableHLO rule below and the Mosaic kernel rule (passes/mosaic/threefry.py) share
    one schedule."""
    k12 = xor(k1, k2)      # (JAX's key1 ^ key2 ^ 0x1BD11BDA: the constant as their xor)
    ks = [k1, k2, xor(k12, const(0x1BD11BDA, k12))]
    a, b = add(x1, ks[0]), add(x2, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            a = add(a, b)
            b = xor(a, rotl(b, r))
        a = add(a, ks[(i + 1) % 3])
        b = add(b, ks[(i + 2) % 3])
        b = add(b, const(i + 1, b))
    return [a, b]


def threefry2x32_hlo(k1, k2, x1, x2) -> list[ir.Value]:
    """The Threefry-2x32 hash in StableHLO (uint32 operands broadcast to their common
    shape first, as the op broadcasts them: scalars, and dimensions of size 1). Lowered
    for the CPU, the rounds run in a loop (`_threefry_rolled`), as JAX's CPU rule does."""
    shape = R.broadcasting_shape("threefry2x32", *(aval_of(v.type) for v in (k1, k2, x1, x2)))
    if platform_rules().rolled_threefry:
        return _threefry_rolled(k1, k2, x1, x2, tuple(shape))
    k1, k2, x1, x2 = (_bcast(v, shape, range(len(_shape(v)))) for v in (k1, k2, x1, x2))

    def rotl(v, d):
        return hlo.or_(hlo.shift_left(v, _u32(d, shape)),
                       hlo.shift_right_logical(v, _u32(32 - d, shape)))

    return threefry_rounds(k1, k2, x1, x2, add=hlo.add, xor=hlo.xor, rotl=rotl,
                           const=lambda value, like: _u32(value, shape))


def _threefry_rolled(k1, k2, x1, x2, shape) -> list[ir.Value]:
    """threefry_rounds' schedule as JAX's CPU rule runs it: a stablehlo.while of five
    steps of four rounds, carrying the counters, the three key words (rotated a place each
    step; scalar keys stay scalars) and the two rotation tables (swapped each step).
    Unrolled, XLA's CPU compiler copies the rounds into every fusion that reads a random
    value: programs slicing one random array many ways took minutes to compile."""
    full = lambda v: _bcast(v, shape, range(len(_shape(v))))   # noqa: E731
    if _shape(k1) != () or _shape(k2) != ():    # (the carry's key words share a shape)
        k1, k2 = full(k1), full(k2)
    x1, x2 = full(x1), full(x2)
    k3 = hlo.xor(hlo.xor(k1, k2), H.constant(0x1BD11BDA, np.uint32, _shape(k1)))

    def spread(v):      # (a scalar key word or step number, as the counters' shape)
        return v if _shape(v) == shape else hlo.broadcast_in_dim(H.ttype(shape, np.uint32),
                                                                 v, [])
    a, b = hlo.add(x1, spread(k1)), hlo.add(x2, spread(k2))
    rots = [H.constant(np.array(r, np.uint32), np.uint32, (4,)) for r in _ROTATIONS]
    init = [H.constant(0, np.int32), a, b, k2, k3, k1] + rots
    types = [v.type for v in init]
    loop = hlo.WhileOp(types, init)
    cond = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cond):
        hlo.return_([H.compare(cond.arguments[0], H.constant(5, np.int32), "LT")])
    body = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body):
        i, a, b, ka, kb, kc, rot, rot_next = body.arguments
        for j in range(4):
            r = hlo.reshape(H.ttype((), np.uint32), hlo.slice(rot, [j], [j + 1], [1]))
            a = hlo.add(a, b)
            rotated = hlo.or_(hlo.shift_left(b, spread(r)), hlo.shift_right_logical(
                b, spread(hlo.subtract(H.constant(32, np.uint32), r))))
            b = hlo.xor(a, rotated)
        step = hlo.add(i, H.constant(1, np.int32))
        a = hlo.add(a, spread(ka))
        b = hlo.add(hlo.add(b, spread(kb)), spread(H.convert(step, np.uint32)))
        hlo.return_([step, a, b, kb, kc, ka, rot_next, rot])
    return [loop.results[1], loop.results[2]]


def _iota_2x32(shape, near: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(hi, lo) uint32 words of a row-major uint64 iota of `shape`. JAX:
    prng.iota_2x32_shape. (near: a value of the function, for symbolic strides.)"""
    if not shape:
        return _u32(0, ()), _u32(0, ())
    t64 = H.ttype(shape, np.uint64)
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc = acc * d
    counts = None
    for d, s in enumerate(reversed(strides)):
        term = hlo.iota(t64, d)
        if is_symbolic_dim(s):
            stride = H.convert(dim_value(defining_op(near), s), np.uint64)
            term = hlo.multiply(term, hlo.broadcast_in_dim(t64, stride, []))
        elif s != 1:
            term = hlo.multiply(term, H.constant(int(s), np.uint64, shape))
        counts = term if counts is None else hlo.add(counts, term)
    hi = hlo.shift_right_logical(counts, H.constant(32, np.uint64, shape))
    return H.convert(hi, np.uint32), H.convert(counts, np.uint32)


def _word(data: ir.Value, j: int) -> ir.Value:
    """Word j of key data uint32[*K, n] as uint32[*K]."""
    shape = _shape(data)
    start = [0] * len(shape)
    limit = list(shape)
    start[-1], limit[-1] = j, j + 1
    piece = hlo.slice(data, start, limit, [1] * len(shape))
    return hlo.reshape(H.ttype(shape[:-1], np.uint32), piece)


def _stack_last(words) -> ir.Value:
    shape = _shape(words[0])
    parts = [hlo.reshape(H.ttype(shape + (1,), np.uint32), w) for w in words]
    return hlo.concatenate(parts, len(shape))


def _bcast(x: ir.Value, shape, dims) -> ir.Value:
    if _shape(x) == tuple(shape):
        return x
    return hlo.broadcast_in_dim(H.ttype(shape, aval_of(x.type).dtype), x, list(dims))


def _hash_keys(k1, k2, shape) -> list[ir.Value]:
    """threefry(k, iota counters of `shape`) for keys (k1, k2) of shape K: two words of
    shape K + shape."""
    kshape = _shape(k1)
    full = kshape + tuple(shape)
    kd = range(len(kshape))
    cd = range(len(kshape), len(full))
    hi, lo = _iota_2x32(tuple(shape), k1)
    return threefry2x32_hlo(k1, k2, _bcast(hi, full, cd), _bcast(lo, full, cd)) \
        if not kshape else threefry2x32_hlo(_bcast(k1, full, kd), _bcast(k2, full, kd),
                                            _bcast(hi, full, cd), _bcast(lo, full, cd))


# ---- threefry key operations (data uint32[*K, 2]) -----------------------------------
def _threefry_seed(seeds: ir.Value) -> ir.Value:
    aval = aval_of(seeds.type)
    lo = H.convert(seeds, np.uint32)
    if np.dtype(aval.dtype).itemsize == 8:
        hi = H.convert(hlo.shift_right_logical(
            seeds, H.constant(32, aval.dtype, aval.shape)), np.uint32)
    else:
        hi = _u32(0, aval.shape)  # JAX shifts a 32-bit seed right by 32: zero
    return _stack_last([hi, lo])


def _threefry_split(data: ir.Value, shape) -> ir.Value:
    return _stack_last(_hash_keys(_word(data, 0), _word(data, 1), shape))


def _threefry_fold_in(data: ir.Value, msgs: ir.Value) -> ir.Value:
    # JAX: threefry_2x32(key, threefry_seed(msg)), i.e. the counter pair (0, msg).
    k1, k2 = _word(data, 0), _word(data, 1)
    return _stack_last(threefry2x32_hlo(k1, k2, _u32(0, _shape(msgs)), msgs))


def _threefry_bits(data: ir.Value, bit_width: int, shape) -> ir.Value:
    b1, b2 = _hash_keys(_word(data, 0), _word(data, 1), shape)
    if bit_width == 64:
        full = _shape(b1)
        hi = hlo.shift_left(H.convert(b1, np.uint64), H.constant(32, np.uint64, full))
        return hlo.or_(hi, H.convert(b2, np.uint64))
    bits = hlo.xor(b1, b2)
    return bits if bit_width == 32 else H.convert(bits, R._UINT[bit_width])


# ---- rbg / unsafe_rbg (data uint32[*K, 4]) --------------------------------------------
def _halves(data):
    return [_stack_last([_word(data, 0), _word(data, 1)]),
            _stack_last([_word(data, 2), _word(data, 3)])]


def _join_halves(a, b):
    return _stack_last([_word(a, 0), _word(a, 1), _word(b, 0), _word(b, 1)])


def _rng_bit_generator(key: ir.Value, shape, dtype,
                       algorithm="DEFAULT") -> tuple[ir.Value, ir.Value]:
    """stablehlo.rng_bit_generator on one uint32[4] (or uint64[2]) key, as JAX lowers it:
    a uint32[4] key as uint64[2], uint8/16 requested directly. Returns (new key in the
    key's type, bits)."""
    words = _shape(key) == (4,)
    key64 = hlo.bitcast_convert(H.ttype((2,), np.uint64),
                                hlo.reshape(H.ttype((2, 2), np.uint32), key)) if words else key
    op = hlo.RngBitGeneratorOp(H.ttype((2,), np.uint64), H.ttype(shape, dtype),
                               hlo.RngAlgorithmAttr.get(algorithm), key64)
    new = op.results[0]
    if words:
        new = hlo.reshape(H.ttype((4,), np.uint32),
                          hlo.bitcast_convert(H.ttype((2, 2), np.uint32), new))
    return new, op.results[1]


def _rbg_seed(seeds):
    half = _threefry_seed(seeds)
    return _join_halves(half, half)


def _rbg_split(data, shape):
    a, b = (_threefry_split(h, shape) for h in _halves(data))
    return _join_halves(a, b)


def _rbg_fold_in(data, msgs):
    a, b = (_threefry_fold_in(h, msgs) for h in _halves(data))
    return _join_halves(a, b)


def _rbg_bits(data, bit_width, shape):
    """As JAX maps its rbg bits over several keys (through rng_bit_generator's batching
    rule): the first key draws the bits of all of them at once."""
    kshape = _shape(data)[:-1]
    if 0 in kshape:
        return H.constant(0, R._UINT[bit_width], kshape + tuple(shape))
    first = _first_key(data) if kshape else data
    return _rng_bit_generator(first, kshape + tuple(shape), R._UINT[bit_width])[1]


def _first_key(data):
    """The first key uint32[4] of data uint32[*K, 4] (K non-empty, no zero dims)."""
    n = len(_shape(data)) - 1
    return hlo.reshape(H.ttype((4,), np.uint32),
                       hlo.slice(data, [0] * (n + 1), [1] * n + [4], [1] * (n + 1)))


def _unsafe_rbg_split(data, shape):
    """JAX: ten rng_bit_generator draws per new key, keeping every tenth row. Several
    keys split as JAX maps the split over them (rng_bit_generator's batching rule): the
    first key draws the rows of all of them at once."""
    kshape = _shape(data)[:-1]
    num = int(np.prod(shape, dtype=np.int64))
    out = kshape + tuple(shape) + (4,)
    if num == 0 or 0 in kshape:
        return H.constant(0, np.uint32, out)
    key = _first_key(data) if kshape else data
    rows_shape = kshape + (10 * num, 4)
    _, rows = _rng_bit_generator(key, rows_shape, np.uint32)
    k = len(kshape)
    picked = hlo.slice(rows, [0] * (k + 2), list(rows_shape), [1] * k + [10, 1])
    return hlo.reshape(H.ttype(out, np.uint32), picked)


def _unsafe_rbg_fold_in(data, msgs):
    kshape = _shape(msgs)
    seeds = _rbg_seed(msgs)
    n = int(np.prod(kshape, dtype=np.int64))
    flat_seeds = hlo.reshape(H.ttype((n, 4), np.uint32), seeds)
    flat_keys = hlo.reshape(H.ttype((n, 4), np.uint32), data)
    outs = []
    for i in range(n):
        seed = hlo.reshape(H.ttype((4,), np.uint32),
                           hlo.slice(flat_seeds, [i, 0], [i + 1, 4], [1, 1]))
        _, rows = _rng_bit_generator(seed, (10, 4), np.uint32)
        last = hlo.reshape(H.ttype((1, 4), np.uint32), hlo.slice(rows, [9, 0], [10, 4], [1, 1]))
        key = hlo.slice(flat_keys, [i, 0], [i + 1, 4], [1, 1])
        outs.append(hlo.xor(key, last))
    if not outs:
        return data
    joined = outs[0] if n == 1 else hlo.concatenate(outs, 0)
    return hlo.reshape(H.ttype(kshape + (4,), np.uint32), joined)


# ---- pallas_tpu (data uint32[*K, 1, 2]): seeds of the TPU kernel PRNG ------------------
# Outside a Mosaic kernel its keys are made and folded as JAX's pallas_tpu PRNGImpl does;
# their bits come only from the chip's generator (passes/mosaic/random.py).
def _pallas_seed(seeds: ir.Value) -> ir.Value:
    # JAX: zeros(key_shape, int32) + seed, as uint32 (the seed in both words)
    shape = _shape(seeds)
    s32 = H.convert(seeds, np.int32) if aval_of(seeds.type).dtype != np.int32 else seeds
    return _bcast(H.convert(s32, np.uint32), shape + (1, 2), range(len(shape)))


def _pallas_fold_in(data: ir.Value, msgs: ir.Value) -> ir.Value:
    # JAX: key1 += msg, then one threefry round (rotation 13) mixes the two words
    flat = hlo.reshape(H.ttype(_shape(data)[:-2] + (2,), np.uint32), data)
    k0, k1 = _word(flat, 0), _word(flat, 1)
    k1 = hlo.add(k1, msgs)
    v0 = hlo.add(k0, k1)
    shape = _shape(k1)
    rot = hlo.or_(hlo.shift_left(k1, _u32(13, shape)),
                  hlo.shift_right_logical(k1, _u32(32 - 13, shape)))
    v1 = hlo.xor(v0, rot)
    return hlo.reshape(H.ttype(_shape(data), np.uint32), _stack_last([v0, v1]))


def _pallas_split(data, shape):
    raise NotImplementedError("Cannot split a Pallas key. Use fold_in instead to generate "
                              "new keys.")


def _pallas_bits(data, bit_width, shape):
    raise NotImplementedError(
        "random bits of a Pallas key (pltpu.to_pallas_key) come from the TPU's hardware "
        "PRNG: only a Pallas kernel compiled for a TPU draws them (interpret mode cannot; "
        "use threefry keys there)")


def _stateful_seed(seeds: ir.Value) -> ir.Value:
    return _u32(0, _shape(seeds))      # (a placeholder: JAX's is an empty int32 scalar)


def _stateful_unsupported(*args):
    raise NotImplementedError("the placeholder key of pltpu.stateful_* cannot be split "
                              "or folded")


_IMPL_RULES = {
    "_pallas_internal_stateful": dict(seed=_stateful_seed, split=_stateful_unsupported,
                                      fold_in=_stateful_unsupported, bits=_pallas_bits),
    "threefry2x32": dict(seed=_threefry_seed, split=_threefry_split,
                         fold_in=_threefry_fold_in, bits=_threefry_bits),
    "pallas_tpu": dict(seed=_pallas_seed, split=_pallas_split, fold_in=_pallas_fold_in,
                       bits=_pallas_bits),
    "rbg": dict(seed=_rbg_seed, split=_rbg_split, fold_in=_rbg_fold_in, bits=_rbg_bits),
    "unsafe_rbg": dict(seed=_rbg_seed, split=_unsafe_rbg_split,
                       fold_in=_unsafe_rbg_fold_in, bits=_rbg_bits),
}


# ---- lowering ------------------------------------------------------------------------
@lowering(R.RandomSeedOp)
def _random_seed_lower(ctx, seeds, *, impl):
    return _IMPL_RULES[impl]["seed"](seeds)


@lowering(R.RandomWrapOp)
def _random_wrap_lower(ctx, data, *, impl):
    return data


@lowering(R.RandomUnwrapOp, R.RandomCloneOp)
def _random_unwrap_lower(ctx, keys):
    return _physical(keys)


@lowering(R.RandomSplitOp)
def _random_split_lower(ctx, keys, *, shape):
    impl = ctx.avals_out[0].dtype.impl
    return _IMPL_RULES[impl]["split"](_physical(keys), tuple(shape))


@lowering(R.RandomFoldInOp)
def _random_fold_in_lower(ctx, keys, msgs):
    impl = ctx.avals_out[0].dtype.impl
    return _IMPL_RULES[impl]["fold_in"](_physical(keys), msgs)


@lowering(R.RandomBitsOp)
def _random_bits_lower(ctx, keys, *, bit_width, shape):
    data = _physical(keys)
    # The key data's trailing shape (past the keys' shape) names the family: rbg and
    # unsafe_rbg draw bits alike.
    n_keys = len(ctx.avals_out[0].shape) - len(shape)
    key_shape = _shape(data)[n_keys:]
    if key_shape in (R.KEY_SHAPES["pallas_tpu"], ()):       # (the chip's PRNG)
        return _pallas_bits(data, bit_width, shape)
    impl = "threefry2x32" if key_shape == (2,) else "rbg"
    return _IMPL_RULES[impl]["bits"](data, bit_width, tuple(shape))


@lowering(R.Threefry2x32Op)
def _threefry2x32_lower(ctx, k1, k2, x1, x2):
    # (any operands the op's shape rule takes, on every platform: JAX's CPU rule runs the
    # rounds in a fori_loop whose carry refuses key words of two shapes, or counters that
    # broadcast further in the rounds, with a TypeError; mjax's CPU loop broadcasts them
    # first and computes what JAX's other platforms do)
    return threefry2x32_hlo(k1, k2, x1, x2)


@lowering(R.RngBitGeneratorOp)
def _rng_bit_generator_lower(ctx, key, *, shape, dtype, algorithm="RNG_DEFAULT"):
    return list(_rng_bit_generator(key, tuple(shape), dtype,
                                   algorithm.removeprefix("RNG_")))


@lowering(R.RngUniformOp)
def _rng_uniform_lower(ctx, a, b, *, shape):
    dims = H.constant(np.asarray(shape, np.int64), np.int64, (len(shape),))
    return [hlo.RngOp(a, b, dims, hlo.RngDistributionAttr.get("UNIFORM")).result]


# (As JAX: rng_uniform has no derivative and no batching rule; a vmap whose bounds are
# unbatched leaves it unbatched, one draw for every member.)
AD.no_jvp(R.RngUniformOp, "stateful random numbers are not differentiable (as in JAX)")
AD.no_transpose(R.RngUniformOp)
BATCH.unsupported(R.RngUniformOp, "batched bounds of a stateful draw (as in JAX); "
                                  "unbatched bounds give one draw for every member")


# ---- JVP: integer and key outputs have no tangents ------------------------------------
for _op in (R.RandomSeedOp, R.RandomWrapOp, R.RandomUnwrapOp, R.RandomSplitOp,
            R.RandomFoldInOp, R.RandomBitsOp, R.RandomCloneOp, R.Threefry2x32Op,
            R.RngBitGeneratorOp):
    AD.defzero(_op, "integer or key outputs have no tangent (as in JAX)")


# ---- batching ----------------------------------------------------------------------
# Every key op maps over all key dimensions of its operand, so a batch axis inside
# them passes through. Axes are moved on the uint32 data (unwrap, move, wrap): the
# structural ops do not take key element types.
defvectorized(R.RandomSeedOp, R.RandomUnwrapOp, R.RandomSplitOp, R.RandomBitsOp,
              R.RandomCloneOp)


@batch_rule(R.RandomWrapOp)
def _random_wrap_batch(b, args, dims, *, impl):
    (data,), (d,) = args, dims
    nkey = len(R.key_shape(impl))
    if d >= len(_shape(data)) - nkey:
        data, d = moveaxis(b, data, d, 0), 0  # a batch axis among the key words
    return b.emit(R.RandomWrapOp, data, impl=impl), [d]


@batch_rule(R.RandomFoldInOp)
def _random_fold_in_batch(b, args, dims):
    (keys, msgs), (kd, md) = args, dims
    impl = aval_of(keys.type).dtype.impl
    data = b.emit(R.RandomUnwrapOp, keys)[0]
    if kd is NOT_MAPPED:
        data = bdim_to_front(b, data, NOT_MAPPED)
    else:
        data = moveaxis(b, data, kd, 0)
    msgs = bdim_to_front(b, msgs, md)
    keys = b.emit(R.RandomWrapOp, data, impl=impl)[0]
    return b.emit(R.RandomFoldInOp, keys, msgs), [0]


@batch_rule(R.Threefry2x32Op)
def _threefry2x32_batch(b, args, dims):
    # (JAX's broadcast_batcher; the op broadcasts its operands itself)
    return broadcast_batcher(b, R.Threefry2x32Op, args, dims, op_broadcasts=True)


@batch_rule(R.RngBitGeneratorOp)
def _rng_bit_generator_batch(b, args, dims, *, shape, dtype, algorithm="RNG_DEFAULT"):
    """As JAX's rule: the first key draws the bits of every batch member at once (a
    leading axis on `shape`) and only that key advances; the others come back as they
    were."""
    (keys,), (d,) = args, dims
    keys = moveaxis(b, keys, d, 0)
    (n, *kshape) = _shape(keys)
    zeros, ones = [0] * len(kshape), [1] * len(kshape)
    first = b.reshape(b.slice(keys, start_indices=(0, *zeros), limit_indices=(1, *kshape),
                              strides=(1, *ones)), new_sizes=tuple(kshape))
    new_key, bits = b.emit(R.RngBitGeneratorOp, first, shape=(n, *shape), dtype=dtype,
                           algorithm=algorithm)
    new_key = b.reshape(new_key, new_sizes=(1, *kshape))
    if n > 1:
        rest = b.slice(keys, start_indices=(1, *zeros), limit_indices=(n, *kshape),
                       strides=(1, *ones))
        new_key = b.concatenate(new_key, rest, dimension=0)
    return [new_key, bits], [0, 0]


# ---- checkify -------------------------------------------------------------------------
nan_checked(R.RngUniformOp)


# ---- key arrays: structural ops on their data (tables.KEY_DATA) -----------------------
# An op that only moves, copies or selects elements means the same op on a key array's
# uint32 data with the key shape K appended: its shape attributes get K's sizes, its
# dimension attributes K's trailing dims. Ops that compute on values have no rule here.
def _trailing(start: int, ks) -> tuple[int, ...]:
    return tuple(range(start, start + len(ks)))


@KEY_DATA.register(St.ConvertElementTypeOp)
def _convert_element_type_key_data(emit, op, ks, args, avals, params):
    new, old = params["new_dtype"], avals[0].dtype
    if not (isinstance(new, KeyType) and new.impl == old.impl):
        raise TypeError(f"cannot convert a key array of dtype {old} to {new}; use "
                        f"jax.random.key_data for its uint32 data")
    return args[0]


@KEY_DATA.register(St.CopyOp)
def _copy_key_data(emit, op, ks, args, avals, params):
    return emit(St.CopyOp, args[0])


@KEY_DATA.register(St.BroadcastInDimOp)
def _broadcast_in_dim_key_data(emit, op, ks, args, avals, params):
    shape = tuple(params["shape"])
    return emit(St.BroadcastInDimOp, args[0], shape=shape + ks,
                broadcast_dimensions=tuple(params["broadcast_dimensions"])
                + _trailing(len(shape), ks))


@KEY_DATA.register(St.ReshapeOp)
def _reshape_key_data(emit, op, ks, args, avals, params):
    dims = params.get("dimensions")
    return emit(St.ReshapeOp, args[0], new_sizes=tuple(params["new_sizes"]) + ks,
                dimensions=None if dims is None
                else tuple(dims) + _trailing(avals[0].ndim, ks))


@KEY_DATA.register(St.SqueezeOp, St.ExpandDimsOp, St.RevOp)
def _same_dims_key_data(emit, op, ks, args, avals, params):
    # (dimensions index the leading, logical dims, which the data shares)
    return emit(op, args[0], **params)


@KEY_DATA.register(St.TransposeOp)
def _transpose_key_data(emit, op, ks, args, avals, params):
    perm = tuple(params["permutation"])
    return emit(St.TransposeOp, args[0], permutation=perm + _trailing(len(perm), ks))


@KEY_DATA.register(St.TileOp)
def _tile_key_data(emit, op, ks, args, avals, params):
    # (each key's data is copied whole: the key dims are repeated once)
    return emit(St.TileOp, args[0], reps=tuple(params["reps"]) + (1,) * len(ks))


@KEY_DATA.register(St.ConcatenateOp)
def _concatenate_key_data(emit, op, ks, args, avals, params):
    return emit(St.ConcatenateOp, *args, **params)


@KEY_DATA.register(St.StackOp, St.UnstackOp, St.SplitOp)
def _stack_key_data(emit, op, ks, args, avals, params):
    # (the axis is one of the leading, logical dims, which the data shares)
    out = emit(op, *args, **params)
    return out if op is St.StackOp or isinstance(out, list) else [out]


@KEY_DATA.register(St.SliceOp)
def _slice_key_data(emit, op, ks, args, avals, params):
    strides = params.get("strides")
    return emit(St.SliceOp, args[0],
                start_indices=tuple(params["start_indices"]) + (0,) * len(ks),
                limit_indices=tuple(params["limit_indices"]) + ks,
                strides=None if strides is None else tuple(strides) + (1,) * len(ks))


def _zero_starts(starts, start_avals, ks) -> list:
    zero = np.zeros((), start_avals[0].dtype) if starts else np.int32(0)
    return list(starts) + [zero] * len(ks)


@KEY_DATA.register(I.DynamicSliceOp)
def _dynamic_slice_key_data(emit, op, ks, args, avals, params):
    x, *starts = args
    return emit(I.DynamicSliceOp, x, *_zero_starts(starts, avals[1:], ks),
                slice_sizes=tuple(params["slice_sizes"]) + ks)


@KEY_DATA.register(I.DynamicUpdateSliceOp)
def _dynamic_update_slice_key_data(emit, op, ks, args, avals, params):
    x, update, *starts = args
    return emit(I.DynamicUpdateSliceOp, x, update, *_zero_starts(starts, avals[2:], ks))


@KEY_DATA.register(St.SelectNOp)
def _select_n_key_data(emit, op, ks, args, avals, params):
    which, *cases = args
    w = avals[0]
    if w.ndim:   # (a per-element choice picks whole keys: broadcast over each key's data)
        which = emit(St.BroadcastInDimOp, which, shape=tuple(avals[1].shape) + ks,
                     broadcast_dimensions=tuple(range(w.ndim)))
    return emit(St.SelectNOp, which, *cases)


@KEY_DATA.register(I.GatherOp)
def _gather_key_data(emit, op, ks, args, avals, params):
    x, indices = args
    dn = dict(params["dimension_numbers"])
    out_rank = avals[1].ndim - 1 + len(dn["offset_dims"])
    dn["offset_dims"] = tuple(dn["offset_dims"]) + _trailing(out_rank, ks)
    return emit(I.GatherOp, x, indices, **{
        **params, "dimension_numbers": dn,
        "slice_sizes": tuple(params["slice_sizes"]) + ks, "fill_value": None})


@KEY_DATA.register(I.ScatterOp)
def _scatter_key_data(emit, op, ks, args, avals, params):
    x, indices, updates = args
    dn = dict(params["dimension_numbers"])
    dn["update_window_dims"] = tuple(dn["update_window_dims"]) + _trailing(avals[2].ndim, ks)
    return emit(I.ScatterOp, x, indices, updates, **{**params, "dimension_numbers": dn})
