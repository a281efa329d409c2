"""pltpu.stochastic_round, pack_elementwise, unpack_elementwise, einshape and int4/uint4
values in Pallas TPU kernels (issue 55), against JAX 0.10.2: each kernel's Mosaic module
against JAX's export for the TPU (decoded as test_mosaic_differential.py does), and its
values in TPU interpret mode against JAX's TPU interpreter where it runs the kernel and
NumPy (JAX's interpreter has no rule for the three packing primitives: that refusal is
asserted too).
"""
from __future__ import annotations

import os
import re

import ml_dtypes
import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
import jax.numpy as jjnp  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.experimental.pallas import tpu_info as mjax_tpu_info  # noqa: E402

from test_mosaic_differential import (assert_compiled_as_jax, assert_same_mosaic,  # noqa: E402
                                      cpu_as_v5e, custom_calls, decode, jax_tpu_info,
                                      jax_tpu_text, tpu_mosaic)

ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")   # (conftest.py's)
I4, U4, I2 = (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4),
              np.dtype(ml_dtypes.int2))
BF16 = np.dtype(ml_dtypes.bfloat16)
SR_TARGETS = ("bfloat16", "float8_e5m2", "float8_e4m3fn", "float8_e4m3b11fnuz")
PACK_CONFIGS = [(np.float32, BF16), (np.int32, np.int16), (np.int32, np.int8),
                (np.int32, I4), (np.int16, np.int8), (np.int8, I4), (np.int16, I4),
                (I4, I2)]


def _bits(dtype) -> int:
    return {"int4": 4, "uint4": 4, "int2": 2}.get(np.dtype(dtype).name,
                                                  np.dtype(dtype).itemsize * 8)


def corpus(J, pl, pltpu) -> dict:
    """name -> (f, [(shape, dtype), ...])."""
    jnp = J.numpy
    K = {}

    def call(kernel, shape, dtype):
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(shape, dtype))

    for t in SR_TARGETS:
        def sr(x, b, t=t):
            def k(x_ref, b_ref, o_ref):
                o_ref[...] = pltpu.stochastic_round(x_ref[...], b_ref[...],
                                                    target_dtype=getattr(jnp, t))
            return call(k, x.shape, getattr(jnp, t))(x, b)
        K[f"stochastic_round_{t}"] = (sr, [((8, 128), np.float32), ((8, 128), np.uint32)])

    for src, dst in PACK_CONFIGS:
        n = _bits(src) // _bits(dst)
        tag = f"{np.dtype(src).name}_{np.dtype(dst).name}"

        def pack(xs, n=n, dst=dst, src=src):
            def k(xs_ref, o_ref):
                o_ref[...] = pltpu.pack_elementwise([xs_ref[i] for i in range(n)],
                                                    packed_dtype=dst)
            return call(k, xs.shape[1:], np.dtype(f"uint{_bits(src)}"))(xs)
        K[f"pack_{tag}"] = (pack, [((n, 16, 256), src)])

        def unpack(x, n=n, dst=dst, src=src):
            def k(x_ref, o_ref):
                o_ref[...] = pltpu.unpack_elementwise(x_ref[...], index=n - 1,
                                                      packed_dtype=dst, unpacked_dtype=src)
            return call(k, x.shape, src)(x)
        K[f"unpack_{tag}"] = (unpack, [((16, 256), np.dtype(f"uint{_bits(src)}"))])

    for dt in (I4, U4):                    # JAX's tpu_ops_test int4 upcast and matmul
        def matmul(x):
            def k(x_ref, o_ref):
                ux = J.lax.convert_element_type(x_ref[...], jnp.int8)
                o_ref[...] = J.lax.dot(ux, ux, preferred_element_type=jnp.int32)
            return call(k, (128, 128), jnp.int32)(x)
        K[f"{dt.name}_upcast_matmul"] = (matmul, [((128, 128), dt)])

    def row_broadcast(x):                  # JAX's tpu_ops_test row broadcast of int4
        def k(x_ref, y_ref):
            y_ref[...] = jnp.broadcast_to(x_ref[pl.ds(3, 1)],
                                          y_ref.shape).astype(y_ref.dtype)
        return call(k, (4, 1152), jnp.int32)(x)
    K["int4_row_broadcast"] = (row_broadcast, [((4, 1152), I4)])

    def int4_store(x):                     # an int4 output: arith.trunci, an i4 store
        def k(x_ref, o_ref):
            o_ref[...] = (x_ref[...] + 1).astype(jnp.int4)
        return call(k, (16, 128), jnp.int4)(x)
    K["int4_store"] = (int4_store, [((16, 128), np.int8)])

    def int4_to_uint4(x):                  # a same-width cast and an i4 -> f32 convert
        def k(x_ref, o_ref, f_ref):
            o_ref[...] = x_ref[...].astype(jnp.uint4)
            f_ref[...] = x_ref[...].astype(jnp.float32)
        return pl.pallas_call(k, out_shape=(J.ShapeDtypeStruct(x.shape, jnp.uint4),
                                            J.ShapeDtypeStruct(x.shape, jnp.float32)))(x)
    K["int4_casts"] = (int4_to_uint4, [((16, 128), I4)])

    for dt in (I4, U4):                    # JAX's tpu_pallas_test sub-byte kernels
        def add(x):
            def k(x_ref, y_ref):
                y_ref[...] = x_ref[...] + x_ref[...]
            return call(k, x.shape, x.dtype)(x)
        K[f"{dt.name}_vector_addition"] = (add, [((128, 16), dt)])

        def select(c, x):
            def k(c_ref, x_ref, o_ref):
                o_ref[...] = jnp.where(c_ref[...], x_ref[...], 0)
            return call(k, x.shape, x.dtype)(c, x)
        K[f"{dt.name}_bool_select"] = (select, [((8, 128), np.bool_), ((8, 128), dt)])

    def scalar_load_upcast(x):
        def k(x_ref, o_ref):
            o_ref[0, 0] = x_ref[0, 0].astype(o_ref.dtype)
        return pl.pallas_call(k, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                              out_specs=pl.BlockSpec(memory_space=pltpu.SMEM),
                              out_shape=J.ShapeDtypeStruct((1, 1), jnp.int32))(x)
    K["int4_scalar_load_upcast"] = (scalar_load_upcast, [((1, 1), I4)])

    def scalar_indirect_load(x):
        def k(x_ref, o_ref):
            o_ref[0, 0] = x_ref[0, x_ref[0, 0].astype(jnp.int32)].astype(o_ref.dtype)
        return pl.pallas_call(k, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                              out_specs=pl.BlockSpec(memory_space=pltpu.SMEM),
                              out_shape=J.ShapeDtypeStruct((1, 1), jnp.int32))(x)
    K["int4_scalar_indirect_load"] = (scalar_indirect_load, [((1, 4), I4)])

    for axis, shape in ((0, (8, 3, 256)), (1, (16, 256))):
        def roll(x, axis=axis):
            def k(x_ref, o_ref):
                o_ref[...] = pltpu.roll(x_ref[...], shift=3, axis=axis)
            return call(k, x.shape, x.dtype)(x)
        K[f"int4_roll_axis{axis}"] = (roll, [(shape, I4)])

    def bitcasts(x):                       # int4 <-> int32/int8 bits: pltpu.bitcast
        def k(x_ref, w_ref, b_ref):
            w_ref[...] = pltpu.bitcast(x_ref[...], jnp.int32)
            b_ref[...] = pltpu.bitcast(x_ref[...], jnp.int8)
        return pl.pallas_call(k, out_shape=(J.ShapeDtypeStruct((8, 128), jnp.int32),
                                            J.ShapeDtypeStruct((32, 128), jnp.int8)))(x)
    K["int4_bitcasts"] = (bitcasts, [((64, 128), I4)])

    def ref_bitcast(x):                    # an int4 ref's bits read as int32 (Ref.bitcast)
        def k(x_ref, o_ref):
            o_ref[...] = x_ref.bitcast(jnp.int32)[...]
        return call(k, (8, 128), jnp.int32)(x)
    K["int4_ref_bitcast"] = (ref_bitcast, [((64, 128), I4)])

    def rank1(x):                          # rank-1 int4 blocks: 1024 = 128 * (32 // 4)
        def k(x_ref, o_ref):
            o_ref[...] = x_ref[...].astype(jnp.int32)
        return pl.pallas_call(k, out_shape=J.ShapeDtypeStruct(x.shape, jnp.int32),
                              grid=(2,), in_specs=[pl.BlockSpec((1024,), lambda i: (i,))],
                              out_specs=pl.BlockSpec((1024,), lambda i: (i,)))(x)
    K["int4_rank1_blocks"] = (rank1, [((2048,), I4)])

    for name, eq, shape, out, sizes in (
            ("split", "a(bc)->abc", (8, 256), (8, 2, 128), {"b": 2}),
            ("merge", "abc->a(bc)", (8, 2, 128), (8, 256), {}),
            ("transpose", "ab->ba", (128, 256), (256, 128), {}),
            ("split_merge", "(ab)c->a(bc)", (16, 128), (8, 256), {"a": 8}),
            # several steps that keep (8, 128) tiles whole: JAX moves whole tiles
            ("tiles_split_transpose", "a(bc)->bac", (8, 256), (2, 8, 128), {"b": 2}),
            ("tiles_rows_to_lanes", "(ab)c->b(ac)", (16, 128), (8, 256), {"a": 2}),
            ("tiles_3d", "ab(cd)->(ca)bd", (2, 8, 512), (8, 8, 128), {"c": 4}),
            ("tiles_major", "a(bc)d->b(ac)d", (3, 32, 128), (2, 48, 128), {"b": 2}),
            ("tiles_bf16", "(ab)cd->b(ac)d", (4, 16, 256), (2, 32, 256), {"a": 2})):
        dt = "bfloat16" if name.endswith("bf16") else np.float32

        def es(x, eq=eq, out=out, sizes=sizes):
            def k(x_ref, o_ref):
                o_ref[...] = pltpu.einshape(eq, x_ref[...], **sizes)
            return call(k, out, x.dtype)(x)
        K[f"einshape_{name}"] = (es, [(shape, dt)])
    return K


JAX_KERNELS = corpus(jax, jpl, jpltpu)
MJAX_KERNELS = corpus(mjax, pl, pltpu)
# kernel -> how JAX's Mosaic differs from mjax's before canonicalize,cse (which folds
# it): none, every kernel's Mosaic is JAX's exactly
CANONICALIZE: dict = {}


def _mosaic(J, f, shapes):
    """(custom call attributes, Mosaic text) of `f` lowered for a TPU v5e (einshape asks
    the chip's tiling)."""
    return tpu_mosaic(J, f, shapes, v5e=True)


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_mosaic_matches_jax(name):
    jax_config, jax_text = _mosaic(jax, *JAX_KERNELS[name])
    mjax_config, mjax_text = _mosaic(mjax, *MJAX_KERNELS[name])
    assert mjax_config == jax_config
    assert_same_mosaic(jax_text, mjax_text, canonical=name in CANONICALIZE)


@pytest.mark.parametrize("name", sorted(set(JAX_KERNELS) - set(CANONICALIZE)))
def test_mjax_export_for_tpu_matches_jax(name):
    """The same kernels through mjax.export(..., platforms=["tpu"]): JAX's module."""
    f, shapes = MJAX_KERNELS[name]
    avals = [mjax.ShapeDtypeStruct(s, d) for s, d in shapes]
    check = mjax.export.DisabledSafetyCheck.custom_call("tpu_custom_call")
    with cpu_as_v5e(mjax_tpu_info):
        exp = mjax.export.export(mjax.jit(f), platforms=["tpu"], disabled_checks=[check])(
            *avals)
    with context():
        module = ir.Module.parse(exp.mlir_module())
        (call,) = custom_calls(module)
        config, text = decode(call)
    # (JAX's export too: on the chip a jit lowers the chip's serde version, 15, where
    # export writes 11 on every machine)
    jf, jshapes = JAX_KERNELS[name]
    with cpu_as_v5e(jax_tpu_info), context():
        module = ir.Module.parse(jax_tpu_text(
            jf, [jax.ShapeDtypeStruct(s, d) for s, d in jshapes], export=True))
        (jcall,) = [c for c in custom_calls(module)
                    if ir.StringAttr(c.attributes["call_target_name"]).value
                    == "tpu_custom_call"]
        jax_config, jax_text = decode(jcall)
    assert config == jax_config
    assert_same_mosaic(jax_text, text)


def _args(name, seed=0):
    if name == "int4_scalar_indirect_load":          # (JAX's test's: in-bounds indices)
        return [np.array([[3, 0, 0, 1]], I4)]
    rng = np.random.default_rng(seed)
    out = []
    for s, d in JAX_KERNELS[name][1]:
        d = np.dtype(d)
        if d in (I4, U4) or np.dtype(d).kind in "iu":
            lo, hi = ((-8, 8) if d == I4 else (0, 16) if d == U4 else
                      (np.iinfo(d).min, int(np.iinfo(d).max) + 1))
            out.append(rng.integers(lo, hi, s).astype(d))
        else:
            out.append((rng.standard_normal(s) * 3).astype(d))
    return out


def _mjax_interpret(name, args):
    with pltpu.force_tpu_interpret_mode():
        return [np.asarray(r) for r in mjax.tree.leaves(MJAX_KERNELS[name][0](*args))]


def _jax_interpret(name, args):
    with jpltpu.force_tpu_interpret_mode():
        return [np.asarray(r) for r in jax.tree.leaves(JAX_KERNELS[name][0](*args))]


def _packed(sources, packed_dtype):
    """NumPy: the sources cast to packed_dtype, their bits interleaved (JAX's test data)."""
    pb = _bits(packed_dtype)
    words = np.zeros(sources.shape[1:], np.uint64)
    for i, s in enumerate(sources):
        if np.dtype(packed_dtype) == BF16:
            field = s.astype(BF16).view(np.uint16).astype(np.uint64)
        else:
            field = s.astype(np.int64).astype(np.uint64) & ((1 << pb) - 1)
        words |= field << np.uint64(i * pb)
    return words


def _refused_by_jax_interpreter(name, args):
    with pytest.raises(NotImplementedError, match="MLIR translation rule for primitive"):
        _jax_interpret(name, args)


@pytest.mark.parametrize("src,dst", PACK_CONFIGS)
def test_pack_unpack_interpreted_values(src, dst):
    tag = f"{np.dtype(src).name}_{np.dtype(dst).name}"
    (xs,) = _args(f"pack_{tag}")
    (got,) = _mjax_interpret(f"pack_{tag}", [xs])
    want = _packed(xs, dst)
    np.testing.assert_array_equal(got.astype(np.uint64), want)
    n = _bits(src) // _bits(dst)
    (back,) = _mjax_interpret(f"unpack_{tag}", [got])
    if np.dtype(dst) == BF16:
        want = xs[n - 1].astype(dst).astype(src)
    else:                                # (wrapped to dst's range; ml_dtypes has no int4
        pb = _bits(dst)                  # -> int2 cast)
        v = xs[n - 1].astype(np.int64) & ((1 << pb) - 1)
        want = np.where(v >= 1 << (pb - 1), v - (1 << pb), v).astype(src)
    np.testing.assert_array_equal(back, want)
    _refused_by_jax_interpreter(f"pack_{tag}", [xs])
    _refused_by_jax_interpreter(f"unpack_{tag}", [got])


@pytest.mark.parametrize("target", SR_TARGETS)
def test_stochastic_round_interpreted_values(target):
    """Each result is one of x's two neighbours in the target format (JAX's
    tpu_ops_test check); over many draws the mean is x (unbiased rounding)."""
    name = f"stochastic_round_{target}"
    t = np.dtype(getattr(ml_dtypes, target))
    x, _ = _args(name)
    bits = np.random.default_rng(1).integers(0, 2**32, x.shape, dtype=np.uint64)
    bits = bits.astype(np.uint32)
    (got,) = _mjax_interpret(name, [x, bits])
    assert got.dtype == t
    near = x.astype(t)
    info = ml_dtypes.finfo(t)
    lower = np.where(near.astype(np.float32) > x, np.nextafter(near, info.min), near)
    upper = np.where(near.astype(np.float32) < x, np.nextafter(near, info.max), near)
    u = f"uint{t.itemsize * 8}"
    ok = (got.view(u) == lower.view(u)) | (got.view(u) == upper.view(u))
    assert np.where(np.isnan(near.astype(np.float32)), np.isnan(got.astype(np.float32)),
                    ok).all()
    # one value between two neighbours, 1024 draws: the mean is the value
    lo, hi = np.float32(1.0), np.float32(np.nextafter(np.array(1.0, t), np.array(2.0, t)))
    v = np.full((8, 128), lo + (hi - lo) * np.float32(0.3), np.float32)
    bits = np.random.default_rng(2).integers(0, 2**32, v.shape, dtype=np.uint64)
    (r,) = _mjax_interpret(name, [v, bits.astype(np.uint32)])
    frac_up = (r.astype(np.float32) == hi).mean()
    assert set(np.unique(r.astype(np.float32))) <= {lo, hi}
    assert abs(frac_up - 0.3) < 0.05, frac_up
    _refused_by_jax_interpreter(name, [x, bits.astype(np.uint32)])


# kernel -> the error JAX's TPU interpreter stops with (mjax's values are checked
# against NumPy only)
JAX_INTERPRETER_FAILS = {
    "int4_ref_bitcast": "'BitcastTransform' object has no attribute 'indices'",
}


def _rows_packed(x, dtype):
    """NumPy: k = bits(dtype) / bits(x) rows of each column packed into one element of
    `dtype`, the first row in the low bits (pltpu.bitcast's layout)."""
    xb, k = _bits(x.dtype), _bits(dtype) // _bits(x.dtype)
    fields = (x.astype(np.int64) & ((1 << xb) - 1)).astype(np.uint64)
    fields = fields.reshape(x.shape[0] // k, k, x.shape[1])
    words = sum(fields[:, j] << np.uint64(j * xb) for j in range(k))
    return words.astype(np.dtype(f"uint{_bits(dtype)}")).view(dtype)


@pytest.mark.parametrize("name", ["int4_upcast_matmul", "uint4_upcast_matmul",
                                  "int4_vector_addition", "uint4_vector_addition",
                                  "int4_bool_select", "uint4_bool_select",
                                  "int4_scalar_load_upcast", "int4_scalar_indirect_load",
                                  "int4_roll_axis0", "int4_roll_axis1", "int4_bitcasts",
                                  "int4_ref_bitcast", "int4_rank1_blocks",
                                  "int4_row_broadcast", "int4_store", "int4_casts",
                                  "einshape_split", "einshape_merge",
                                  "einshape_transpose", "einshape_split_merge"])
def test_interpreted_values_match_jax(name):
    args = _args(name)
    got = _mjax_interpret(name, args)
    if name in JAX_INTERPRETER_FAILS:
        with pytest.raises(Exception, match=JAX_INTERPRETER_FAILS[name]):
            _jax_interpret(name, args)
    else:
        want = _jax_interpret(name, args)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    x = args[-1]
    wide = x.astype(np.int32)
    expect = {
        "int4_vector_addition": lambda: [(wide + wide).astype(I4)],
        "uint4_vector_addition": lambda: [((wide + wide) & 15).astype(U4)],
        "int4_bool_select": lambda: [np.where(args[0], x, np.zeros((), x.dtype))],
        "uint4_bool_select": lambda: [np.where(args[0], x, np.zeros((), x.dtype))],
        "int4_scalar_load_upcast": lambda: [wide],
        "int4_scalar_indirect_load": lambda: [wide[:1, wide[0, 0] % 4][:, None]],
        "int4_roll_axis0": lambda: [np.roll(x, 3, 0)],
        "int4_roll_axis1": lambda: [np.roll(x, 3, 1)],
        "int4_ref_bitcast": lambda: [_rows_packed(x, np.int32)],
        "int4_rank1_blocks": lambda: [wide],
        "int4_bitcasts": lambda: [_rows_packed(x, np.int32),
                                  _rows_packed(x, np.int8)],
        "int4_upcast_matmul": lambda: [x.astype(np.int32) @ x.astype(np.int32)],
        "uint4_upcast_matmul": lambda: [x.astype(np.int32) @ x.astype(np.int32)],
        "int4_row_broadcast": lambda: [np.broadcast_to(x[3:4].astype(np.int32),
                                                       x.shape)],
        "int4_store": lambda: [(x.astype(np.int32) + 1).astype(I4)],
        "int4_casts": lambda: [(x.astype(np.int32) & 15).astype(U4),
                               x.astype(np.float32)],
        "einshape_split": lambda: [x.reshape(8, 2, 128)],
        "einshape_merge": lambda: [x.reshape(8, 256)],
        "einshape_transpose": lambda: [x.T],
        "einshape_split_merge": lambda: [x.reshape(8, 256)],
    }[name]()
    for g, e in zip(got, expect):
        np.testing.assert_array_equal(g, e)


def _error(J, P, fn):
    """The error tracing `fn` raises (under jit: JAX's primitives have no eager rule),
    dtypes named (JAX prints the jnp scalar type it was given)."""
    try:
        J.jit(lambda: fn(J.numpy, P)).trace()
    except Exception as e:               # noqa: BLE001  (compared with JAX's below)
        return type(e), re.sub(r"<class '[\w.]*\.(\w+)'>", r"\1", str(e))
    return None


@pytest.mark.parametrize("case", [
    lambda jnp, P: P.stochastic_round(jnp.zeros((8, 128)), jnp.zeros((8, 64), jnp.uint32),
                                      target_dtype=jnp.bfloat16),
    lambda jnp, P: P.stochastic_round(jnp.zeros((8, 128)), jnp.zeros((8, 128), jnp.int32),
                                      target_dtype=jnp.bfloat16),
    lambda jnp, P: P.pack_elementwise([], packed_dtype=jnp.int8),
    lambda jnp, P: P.pack_elementwise([jnp.zeros((8, 128), jnp.int32)] * 3,
                                      packed_dtype=jnp.int8),
    lambda jnp, P: P.pack_elementwise([jnp.zeros((8, 128), jnp.float32)] * 2,
                                      packed_dtype=jnp.int16),
    lambda jnp, P: P.pack_elementwise([jnp.zeros((8, 128), jnp.int32),
                                       jnp.zeros((8, 64), jnp.int32)],
                                      packed_dtype=jnp.int16),
    lambda jnp, P: P.unpack_elementwise(jnp.zeros((8, 128), jnp.uint32), index=4,
                                        packed_dtype=jnp.int8, unpacked_dtype=jnp.int32),
    lambda jnp, P: P.unpack_elementwise(jnp.zeros((8, 128), jnp.uint16), index=0,
                                        packed_dtype=jnp.int8, unpacked_dtype=jnp.int32),
    lambda jnp, P: P.einshape("ab->ba->ab", jnp.zeros((8, 128))),
    lambda jnp, P: P.einshape("(ab)c->abc", jnp.zeros((8, 128))),
    lambda jnp, P: P.einshape("a(bc->abc", jnp.zeros((8, 128))),
    lambda jnp, P: P.einshape("abc->ab", jnp.zeros((8, 128))),
    lambda jnp, P: P.einshape("ab->abc", jnp.zeros((8, 128))),
    lambda jnp, P: P.einshape("(ab)c->abc", jnp.zeros((8, 128)), a=3),
])
def test_errors_are_jax(case):
    want = _error(jax, jpltpu, case)
    got = _error(mjax, pltpu, case)
    assert want is not None
    assert got == want


def test_einshape_outside_kernels_matches_jax():
    x = np.arange(2 * 3 * 20, dtype=np.float32).reshape(2, 3, 20)
    for eq, sizes in (("ab(cd)->(ca)bd", {"c": 4}), ("abc->cba", {}),
                      ("ab(cd)->a(bc)d", {"d": 5})):
        want = np.asarray(jpltpu.einshape(eq, x, **sizes))
        got = np.asarray(pltpu.einshape(eq, x, **sizes))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.asarray(mjax.jit(
            lambda v, eq=eq, sizes=sizes: pltpu.einshape(eq, v, **sizes))(x)), want)



def test_int4_bitcast_convert_type_matches_jax():
    """lax.bitcast_convert_type counts int4 as 4 bits (8 to an int32), as JAX's."""
    x = np.arange(-8, 8, dtype=np.int8).astype(I4).reshape(2, 8)
    w = np.array([0x12345678, -1], np.int32)
    for f, arg in ((lambda L, v: L.bitcast_convert_type(v, np.int32), x),
                   (lambda L, v: L.bitcast_convert_type(v, I4), w)):
        want = np.asarray(f(jax.lax, arg))
        got = np.asarray(f(mjax.lax, arg))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(n for n in JAX_KERNELS if n.startswith("einshape")))
def test_einshape_interpreted_values(name):
    """In interpret mode on a TPU-less machine both libraries run the general kernel;
    with the chip told (v5e), mjax traces the whole-tile kernel: the same values as
    JAX's interpreter and JAX's einshape outside kernels."""
    (x,) = _args(name)
    want = _jax_interpret(name, [x])
    got = _mjax_interpret(name, [x])
    with cpu_as_v5e(mjax_tpu_info):
        tiles = _mjax_interpret(name, [x])
    for g in (got, tiles):
        assert g[0].dtype == want[0].dtype
        np.testing.assert_array_equal(g[0], want[0])


def test_einshape_assert_tile_preserving_is_jax_error():
    """A two-step equation that splits the sublane tile, asserted tile preserving: JAX's
    TPU lowering and mjax's kernel trace raise the same ValueError."""
    def kernel(J, P, x):
        def k(x_ref, o_ref):
            o_ref[...] = P.einshape("(ab)c->a(bc)", x_ref[...], assert_is_tile_preserving=True,
                                    a=8)
        return J.experimental.pallas.pallas_call(
            k, out_shape=J.ShapeDtypeStruct((8, 256), J.numpy.float32))(x)
    aval = [((16, 128), np.float32)]
    with pytest.raises(ValueError, match="Tile preserving check failed") as want:
        _mosaic(jax, lambda x: kernel(jax, jpltpu, x), aval)
    with pytest.raises(ValueError) as got:
        _mosaic(mjax, lambda x: kernel(mjax, pltpu, x), aval)
    message = ("Tile preserving check failed for einshape kernel with equation: "
               "(ab)c->a(bc) and shape (16, 128) and tiling (8, 128).")
    assert message in str(want.value) and message in str(got.value)


def test_vmap_of_packing_kernels():
    """vmap of pallas_calls using the packing ops (mjax batches the discharged kernel,
    so each op's batching rule runs): each example as the unbatched kernel gives it."""
    pack, _ = MJAX_KERNELS["pack_int32_int8"]
    xs = np.stack([_args("pack_int32_int8", seed=s)[0] for s in range(3)])
    unpack, _ = MJAX_KERNELS["unpack_int32_int8"]
    sr, _ = MJAX_KERNELS["stochastic_round_bfloat16"]
    bits = np.random.default_rng(3).integers(0, 2**32, (3, 8, 128), np.uint64)
    bits = bits.astype(np.uint32)
    vals = (np.random.default_rng(4).standard_normal((3, 8, 128))).astype(np.float32)
    with pltpu.force_tpu_interpret_mode():
        packed = np.asarray(mjax.vmap(pack)(xs))
        back = np.asarray(mjax.vmap(unpack)(packed[:, :16]))
        rounded = np.asarray(mjax.vmap(sr, in_axes=(0, None))(vals, bits[0]))
        for i in range(3):
            np.testing.assert_array_equal(packed[i], np.asarray(pack(xs[i])))
            np.testing.assert_array_equal(back[i], np.asarray(unpack(packed[i, :16])))
            np.testing.assert_array_equal(rounded[i], np.asarray(sr(vals[i], bits[0])))


def test_int4_rank1_block_below_its_tiling_is_refused_as_jax():
    """A rank-1 int4 block of 512 (a power of 2 under 128 * (32 // 4)) is refused by
    JAX's lowering (ValueError) and by mjax's (its MosaicLoweringError)."""
    def f(J, P):
        def k(x_ref, o_ref):
            o_ref[...] = x_ref[...].astype(J.numpy.int32)
        spec = P.BlockSpec((512,), lambda i: (i,))
        return lambda x: P.pallas_call(k, out_shape=J.ShapeDtypeStruct(x.shape, J.numpy.int32),
                                       grid=(3,), in_specs=[spec], out_specs=spec)(x)
    aval = [((1536,), I4)]
    with pytest.raises(ValueError, match=r"at least the tiling size \(1024 = 128"):
        _mosaic(jax, f(jax, jpl), aval)
    with pytest.raises(NotImplementedError, match="power of 2 of at least 1024"):
        _mosaic(mjax, f(mjax, pl), aval)


# ---- JAX's tpu_ops_test bitcast and integer-cast sweeps, int4 among the dtypes --------------
SWEEP_DTYPES = (np.dtype(np.float32), BF16, np.dtype(np.int32), np.dtype(np.int16),
                np.dtype(np.int8), I4, np.dtype(ml_dtypes.float8_e5m2))
INT_DTYPES = tuple(np.dtype(d) for d in (np.int32, np.int16, np.int8, I4, np.uint32,
                                         np.uint16, np.uint8, U4))


def _bitcast_kernel(J, pl, pltpu, to, ref, prim):
    """tpu_ops_test's test_bitcast kernel: a value or Ref bitcast, through [...] or
    pltpu.load/store."""
    def f(x):
        def kernel(x_ref, y_ref):
            if ref:
                v = pltpu.load(x_ref.bitcast(to)) if prim else x_ref.bitcast(to)[...]
            else:
                v = pltpu.bitcast(pltpu.load(x_ref) if prim else x_ref[...], to)
            if prim:
                pltpu.store(y_ref, v)
            else:
                y_ref[...] = v
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(
            (32 // _bits(to), 256), to))(x)
    return f


def _same_mosaic(jf, mf, shapes):
    assert_same_mosaic(_mosaic(jax, jf, shapes)[1], _mosaic(mjax, mf, shapes)[1])


@pytest.mark.parametrize("src,dst", [(a, b) for a in SWEEP_DTYPES for b in SWEEP_DTYPES
                                     if a != b])
def test_bitcast_sweep_matches_jax(src, dst):
    """Every variant prints as JAX's Mosaic; the values (JAX's interpreter runs the
    value bitcasts, not Ref.bitcast views) are JAX's, and all four variants agree."""
    shape = (32 // _bits(src), 256)
    x = np.arange(np.prod(shape)).reshape(shape)
    x = (x % 7 - 3).astype(src) if "int" in src.name else (x / 17).astype(src)
    with jpltpu.force_tpu_interpret_mode():
        want = np.asarray(_bitcast_kernel(jax, jpl, jpltpu, dst, False, False)(x))
    for ref in (False, True):
        for prim in (False, True):
            _same_mosaic(_bitcast_kernel(jax, jpl, jpltpu, dst, ref, prim),
                         _bitcast_kernel(mjax, pl, pltpu, dst, ref, prim), [(shape, src)])
            with pltpu.force_tpu_interpret_mode():
                got = np.asarray(_bitcast_kernel(mjax, pl, pltpu, dst, ref, prim)(x))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.astype(np.int64) if _bits(dst) < 8 else
                                          got.view(f"uint{_bits(dst)}"),
                                          want.astype(np.int64) if _bits(dst) < 8 else
                                          want.view(f"uint{_bits(dst)}"))


@pytest.mark.parametrize("src,dst", [(a, b) for a in INT_DTYPES for b in INT_DTYPES])
def test_integer_cast_sweep_matches_jax(src, dst):
    """tpu_ops_test's test_integer_cast: JAX's Mosaic; values from both ends of the
    source's range as JAX's interpreter and NumPy (astype, wrapping) give them."""
    def cast(J, pl):
        def f(x):
            def body(x_ref, o_ref):
                o_ref[...] = J.lax.convert_element_type(x_ref[...], dst)
            return pl.pallas_call(body, out_shape=J.ShapeDtypeStruct(x.shape, dst))(x)
        return f
    _same_mosaic(cast(jax, jpl), cast(mjax, pl), [((24, 256), src)])
    info = ml_dtypes.iinfo(src)
    ramp = np.arange(8 * 256).reshape(8, 256)
    x = np.concatenate([info.min + ramp, ramp % 251 - 125, info.max - ramp])
    x = np.clip(x, info.min, info.max).astype(src)
    with jpltpu.force_tpu_interpret_mode():
        want = np.asarray(cast(jax, jpl)(x))
    with pltpu.force_tpu_interpret_mode():
        got = np.asarray(cast(mjax, pl)(x))
    assert got.dtype == want.dtype == dst
    np.testing.assert_array_equal(got, want)
    if _bits(src) >= 8 and _bits(dst) >= 8:
        np.testing.assert_array_equal(got, x.astype(dst))


SCALAR_OPS = {"add": lambda J, a, b: a + b, "and": lambda J, a, b: a & b,
              "div": lambda J, a, b: a // b, "max": lambda J, a, b: J.numpy.maximum(a, b),
              "min": lambda J, a, b: J.numpy.minimum(a, b), "mul": lambda J, a, b: a * b,
              "or": lambda J, a, b: a | b, "shl": lambda J, a, b: a << b,
              "shr": lambda J, a, b: a >> b, "sub": lambda J, a, b: b - a,
              "xor": lambda J, a, b: a ^ b}


@pytest.mark.parametrize("op", sorted(SCALAR_OPS))
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_scalar_integer_ops_match_jax(op, dtype):
    """tpu_pallas_test's PallasScalarIOpsTest kernels (SMEM scalars of every integer
    width, int4/uint4 included; libtpu compiles only the i32 ones): JAX's Mosaic, exactly,
    and JAX's interpreted values."""
    if (op, dtype) == ("shr", U4):
        pytest.skip("JAX's jnp.right_shift shifts uint4 arithmetically (NumPy's "
                    "issubdtype does not see ml_dtypes' uint4 as unsigned: uint4(8) >> 1 "
                    "is 12 in JAX); mjax shifts it logically (4), as NumPy")

    def f(J, pl, pltpu):
        def g(x):
            def k(x_ref, y_ref):
                y_ref[0] = SCALAR_OPS[op](J, x_ref[1], x_ref[2])
            spec = pl.BlockSpec(memory_space=pltpu.SMEM)
            return pl.pallas_call(k, in_specs=[spec], out_specs=spec,
                                  out_shape=J.ShapeDtypeStruct((1,), x.dtype))(x)
        return g
    a, b = (_mosaic(J, f(J, P, tp), [((3,), dtype)])[1]
            for J, P, tp in ((jax, jpl, jpltpu), (mjax, pl, pltpu)))
    assert_same_mosaic(a, b)
    x = np.arange(3).astype(dtype)
    with jpltpu.force_tpu_interpret_mode():
        want = np.asarray(f(jax, jpl, jpltpu)(x))
    with pltpu.force_tpu_interpret_mode():
        got = np.asarray(f(mjax, pl, pltpu)(x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_chained_int4_bitcasts_fail_in_interpret_mode_as_jax():
    """pltpu.bitcast(pltpu.bitcast(int4, int32), int8) in interpret mode: XLA's CPU
    compiler folds the two bitcast-converts into one from s4 with the wrong minor dim
    and its verifier refuses it, in JAX's TPU interpreter and in mjax's alike (on the
    chip: JAX's values)."""
    def kernel(J, P, tp):
        def f(x):
            def k(x_ref, b_ref):
                b_ref[...] = tp.bitcast(tp.bitcast(x_ref[...], J.numpy.int32),
                                        J.numpy.int8)
            return P.pallas_call(k, out_shape=J.ShapeDtypeStruct((32, 128),
                                                                 J.numpy.int8))(x)
        return f
    x = (np.arange(64 * 128) % 16 - 8).reshape(64, 128).astype(I4)
    message = "is not equal to ratio of bit-widths=2 for bitcast-convert from s4"
    if ON_TPU:              # (XLA's TPU compiler: whatever JAX's interpreter does)
        with jpltpu.force_tpu_interpret_mode():
            want = np.asarray(kernel(jax, jpl, jpltpu)(x))
        with pltpu.force_tpu_interpret_mode():
            np.testing.assert_array_equal(np.asarray(kernel(mjax, pl, pltpu)(x)), want)
    else:
        for J, P, tp in ((jax, jpl, jpltpu), (mjax, pl, pltpu)):
            with tp.force_tpu_interpret_mode(), pytest.raises(Exception, match=message):
                np.asarray(kernel(J, P, tp)(x))
    _same_mosaic(kernel(jax, jpl, jpltpu), kernel(mjax, pl, pltpu), [((64, 128), I4)])


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_compiled_kernels_match_jax(name):
    """Compiled (not interpreted): on the chip (MJAX_TEST_TPU=1) both libraries run the
    kernel with the same values, the same random bits giving the same stochastic
    rounding (or both refuse it where libtpu does); off the chip both refuse with JAX's
    ValueError."""
    args = _args(name)
    if name.startswith("stochastic_round"):
        args[1] = np.random.default_rng(1).integers(0, 2**32, args[1].shape,
                                                    np.uint64).astype(np.uint32)
    assert_compiled_as_jax(JAX_KERNELS[name][0], MJAX_KERNELS[name][0], args)


@pytest.mark.parametrize("dtype", [U4, np.dtype(np.uint8), np.dtype(np.uint16),
                                   np.dtype(np.uint32)])
def test_unsigned_dot_is_refused_as_jax(dtype):
    """tpu_ops_test's test_unsigned_dtype_dot_raises: a matmul of unsigned integers
    (uint4 included) is JAX's NotImplementedError; int4 x int4 prints as JAX's Mosaic."""
    def f(J, P):
        def g(a, b):
            def k(a_ref, b_ref, o_ref):
                o_ref[...] = a_ref[...] @ b_ref[...]
            return P.pallas_call(k, out_shape=J.ShapeDtypeStruct(
                (a.shape[0], 128), a.dtype))(a, b)
        return g
    k = 256
    shapes = [((8 * (32 // _bits(dtype)), k), dtype), ((k, 128), dtype)]
    message = r"Unsigned integer dtype.*dot_general.*matmul"
    for J, P in ((jax, jpl), (mjax, pl)):
        with pytest.raises(NotImplementedError, match=message):
            _mosaic(J, f(J, P), shapes)


def test_int4_dot_matches_jax():
    """int4 x int4 -> int32: JAX's Mosaic (tpu.matmul on i4). Interpreted on the CPU,
    XLA cannot run a dot of int4 operands (its verifier refuses the upcast), in JAX's
    TPU interpreter and mjax's alike; on the chip, JAX's values."""
    def f(J, P):
        def g(a, b):
            def k(a_ref, b_ref, o_ref):
                o_ref[...] = J.lax.dot(a_ref[...], b_ref[...],
                                       preferred_element_type=J.numpy.int32)
            return P.pallas_call(k, out_shape=J.ShapeDtypeStruct((64, 128),
                                                                 J.numpy.int32))(a, b)
        return g
    shapes = [((64, 256), I4), ((256, 128), I4)]
    _same_mosaic(f(jax, jpl), f(mjax, pl), shapes)
    a = (np.arange(64 * 256) % 16 - 8).reshape(64, 256).astype(I4)
    b = (np.arange(256 * 128) % 15 - 7).reshape(256, 128).astype(I4)
    if ON_TPU:
        with jpltpu.force_tpu_interpret_mode():
            want = np.asarray(f(jax, jpl)(a, b))
        with pltpu.force_tpu_interpret_mode():
            np.testing.assert_array_equal(np.asarray(f(mjax, pl)(a, b)), want)
        return
    for J, P, tp in ((jax, jpl, jpltpu), (mjax, pl, pltpu)):
        with tp.force_tpu_interpret_mode(), pytest.raises(
                Exception, match="does not support custom element sizes"):
            np.asarray(f(J, P)(a, b))
