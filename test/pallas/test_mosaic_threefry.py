"""jax.random on threefry2x32 keys inside Pallas TPU kernels (the TPU PRNG guide's first
section): the values in interpret mode against JAX's (its interpret mode and jax.random
outside kernels, which the guide promises bit for bit), and what the Mosaic lowering
refuses as JAX's does. The Mosaic itself is compared with JAX's in
test_mosaic_differential.py (kernels threefry_guide, threefry_keys, threefry_seed); the
hash bound on operands that broadcast (scalars, size-1 dimensions) is compared here."""
import jax
import jax.extend.random  # noqa: F401
import numpy as np
import pytest
from jax.experimental import pallas as jpl
from jax.experimental.pallas import tpu as jpltpu

import mjax
import mjax.extend.random  # noqa: F401
from mjax.experimental import pallas as pl
from mjax.experimental.pallas import tpu as pltpu

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}


def guide(name, seed):
    """The guide's cell: a threefry key passed in VMEM, uniform numbers drawn in the
    kernel."""
    J, pl_, pltpu_ = LIBS[name]

    def body(key_ref, o_ref):
        key = key_ref[...]
        o_ref[...] = J.random.uniform(key, shape=o_ref[...].shape, minval=0.0, maxval=1.0)

    return pl_.pallas_call(body, in_specs=[pl_.BlockSpec(memory_space=pltpu_.VMEM)],
                           out_shape=J.ShapeDtypeStruct((256, 256), np.float32),
                           interpret=True)(J.random.key(seed, impl="threefry2x32"))


def samplers(name, seed):
    """Keys made, folded, unwrapped and rewrapped in the kernel; bits over a grid."""
    J, pl_, pltpu_ = LIBS[name]

    def body(s_ref, b_ref, n_ref, m_ref):
        key = J.random.key(s_ref[0])
        key = J.random.wrap_key_data(J.random.key_data(key))
        b_ref[...] = J.random.bits(J.random.fold_in(key, pl_.program_id(0)), (8, 128))
        n_ref[...] = J.random.normal(J.random.fold_in(key, 7), (8, 128))
        m_ref[...] = J.random.bernoulli(key, 0.3, (8, 128)).astype(np.int32)

    out = pl_.BlockSpec((8, 128), lambda i: (i, 0))
    return pl_.pallas_call(
        body, grid=(3,), in_specs=[pl_.BlockSpec(memory_space=pltpu_.SMEM)],
        out_specs=[out, out, out],
        out_shape=(J.ShapeDtypeStruct((24, 128), np.uint32),
                   J.ShapeDtypeStruct((24, 128), np.float32),
                   J.ShapeDtypeStruct((24, 128), np.int32)),
        interpret=True)(J.numpy.asarray([seed], np.int32))


@pytest.mark.parametrize("seed", [0, 1234])
def test_guide_cell_matches_jax(seed):
    got = np.asarray(guide("mjax", seed))
    np.testing.assert_array_equal(got, np.asarray(guide("jax", seed)))
    np.testing.assert_array_equal(got, np.asarray(jax.random.uniform(
        jax.random.key(seed), (256, 256), minval=0.0, maxval=1.0)))


def test_keys_made_and_folded_in_kernels_match_jax():
    got = samplers("mjax", 5)
    want = samplers("jax", 5)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    key = jax.random.key(5)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(got[0])[8 * i:8 * (i + 1)], np.asarray(
            jax.random.bits(jax.random.fold_in(key, i), (8, 128))))


def _lower(kernel, key):
    f = mjax.jit(lambda k: pl.pallas_call(
        kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.uint32))(k))
    return f.trace(key).lower(lowering_platforms=("tpu",)).as_text()


def test_what_jax_refuses_mjax_refuses():
    def split(key_ref, o_ref):      # (JAX's Pallas TPU lowering has no random_split rule)
        k1, _ = mjax.random.split(key_ref[...])
        o_ref[...] = mjax.random.bits(k1, (8, 128))

    with pytest.raises(Exception, match="splitting keys inside a TPU kernel"):
        _lower(split, mjax.random.key(0))

    def bits16(key_ref, o_ref):     # (JAX: "Only 32-bit PRNG supported.")
        o_ref[...] = mjax.random.bits(key_ref[...], (8, 128), np.uint16).astype(np.uint32)

    with pytest.raises(Exception, match="Only 32-bit PRNG supported"):
        _lower(bits16, mjax.random.key(0))
    assert "tpu_custom_call" in _lower(lambda k, o: o.__setitem__(
        Ellipsis, mjax.random.bits(k[...], (8, 128))), mjax.random.key(0))


def test_raw_threefry_hash_keeps_scalar_key_words():
    # (jax.extend.random.threefry_2x32 binds the hash on the two key words as scalars, as
    # JAX's does: in a kernel they stay in scalar registers, each broadcast where added,
    # and the Mosaic is JAX's op for op: corpus kernel threefry_raw)
    from jax.extend.random import threefry_2x32 as jax_hash
    from mjax.extend.random import threefry_2x32

    args = (np.uint32(1), np.uint32(2), np.zeros((8, 128), np.uint32))
    for make_jaxpr, fn in ((mjax.make_jaxpr, threefry_2x32), (jax.make_jaxpr, jax_hash)):
        text = str(make_jaxpr(lambda a, b, c: fn((a, b), c))(*args))
        assert "a:u32[] b:u32[]" in text, text
        assert "u32[512] = threefry2x32 a b " in text, text


@pytest.mark.parametrize("shape", [(7,), (8, 128), (3, 5), (), (1,)])
def test_raw_threefry_hash_outside_kernels_matches_jax(shape):
    """The hash on scalar key words (the op broadcasts them) computes what it did:
    JAX's values, eagerly, under jit and under vmap (of the counters and of a key word)."""
    from jax.extend.random import threefry_2x32 as jax_hash
    from mjax.extend.random import threefry_2x32

    rng = np.random.default_rng(len(shape))
    count = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    k1, k2 = np.uint32(0x9E3779B9), np.uint32(7)
    want = np.asarray(jax_hash((k1, k2), count))
    np.testing.assert_array_equal(np.asarray(threefry_2x32((k1, k2), count)), want)
    np.testing.assert_array_equal(
        np.asarray(mjax.jit(lambda a, b, c: threefry_2x32((a, b), c))(k1, k2, count)), want)
    counts = np.stack([count + np.uint32(i) for i in range(3)])
    keys = np.asarray([1, 2**31, 2**32 - 1], np.uint32)
    got = mjax.vmap(lambda k, c: threefry_2x32((k, k2), c))(keys, counts)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(got[i]),
                                      np.asarray(jax_hash((keys[i], k2), counts[i])))
    got = mjax.vmap(lambda c: threefry_2x32((k1, k2), c))(counts)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(
        jax.vmap(lambda c: jax_hash((k1, k2), c))(counts)))


def test_raw_threefry_hash_takes_uint32_only():
    from mjax.extend.random import threefry_2x32
    with pytest.raises(TypeError, match="threefry_2x32 requires uint32 arguments"):
        threefry_2x32((np.int32(1), np.uint32(2)), np.arange(4, dtype=np.uint32))
    with pytest.raises(TypeError, match="threefry_2x32 requires uint32 arguments"):
        threefry_2x32((np.uint32(1), np.uint32(2)), np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match="threefry_2x32 requires uint32 arguments"):
        jax.extend.random.threefry_2x32((np.int32(1), np.uint32(2)),
                                        np.arange(4, dtype=np.uint32))


# ---- the hash's broadcasting inside a kernel ------------------------------------------------
# (operands from a VMEM key block k, SMEM scalars s, VMEM counter blocks x and y: the
# hash broadcasts scalars and size-1 dimensions as JAX's threefry2x32_p, and JAX's Pallas
# TPU rules broadcast each operation's operands where they differ: vector.broadcast)
_BROADCASTS = {
    "row_key_scalar_key": lambda k, s, x, y: (k[0:1, :], s[0], x[...], y[...]),
    "scalar_keys_row_count": lambda k, s, x, y: (s[0], s[1], x[...], y[0:1, :]),
    "row_keys_row_count": lambda k, s, x, y: (k[0:1, :], k[1:2, :], y[0:1, :], x[...]),
    "row_counts": lambda k, s, x, y: (k[...], k[...], x[0:1, :], x[1:2, :])}
_BROADCAST_ARGS = [((8, 128), np.uint32), ((2,), np.uint32), ((8, 128), np.uint32),
                   ((8, 128), np.uint32)]


def _broadcast_kernel(name, lib):
    J, pl_, pltpu_ = LIBS[lib]
    prim = (jax.extend.random if lib == "jax" else mjax.extend.random).threefry2x32_p
    operands = _BROADCASTS[name]

    def body(k_ref, s_ref, x_ref, y_ref, o1, o2):
        a, b = prim.bind(*operands(k_ref, s_ref, x_ref, y_ref))
        o1[...] = a
        o2[...] = b

    vmem, smem = (pl_.BlockSpec(memory_space=m) for m in (pltpu_.VMEM, pltpu_.SMEM))
    return lambda *args: pl_.pallas_call(
        body, in_specs=[vmem, smem, vmem, vmem],
        out_shape=(J.ShapeDtypeStruct((8, 128), np.uint32),) * 2)(*args)


@pytest.mark.parametrize("name", sorted(_BROADCASTS))
def test_broadcast_hash_mosaic_is_jaxs(name):
    from jaxlib.mlir import ir
    from mjax.dialect.context import context
    from test_mosaic_differential import _diff, custom_calls, decode, jax_tpu_text, normalize
    text = jax_tpu_text(_broadcast_kernel(name, "jax"),
                        [jax.ShapeDtypeStruct(s, d) for s, d in _BROADCAST_ARGS])
    mtext = mjax.jit(_broadcast_kernel(name, "mjax")).trace(
        *[mjax.ShapeDtypeStruct(s, d) for s, d in _BROADCAST_ARGS]).lower(
        lowering_platforms=("tpu",)).as_text()
    with context(), ir.Location.unknown():
        jmodule, mmodule = ir.Module.parse(text), ir.Module.parse(mtext)
        (jcall,), (mcall,) = custom_calls(jmodule), custom_calls(mmodule)
        (jconfig, jtext), (mconfig, mtext) = decode(jcall), decode(mcall)
        assert mconfig == jconfig
        a, b = normalize(jtext), normalize(mtext)
        assert a == b, _diff(a, b)
        assert "vector.broadcast" in b


@pytest.mark.parametrize("name", sorted(_BROADCASTS))
def test_broadcast_hash_values_in_interpret_mode(name):
    # (JAX's interpret mode runs its CPU rule, whose fori_loop refuses most of these:
    # the values against JAX on the operands broadcast beforehand)
    rng = np.random.default_rng(3)
    args = [rng.integers(0, 2**32, s, dtype=np.uint64).astype(d) for s, d in _BROADCAST_ARGS]
    want = jax.extend.random.threefry2x32_p.bind(
        *[np.broadcast_to(v, (8, 128)) for v in _BROADCASTS[name](*args)])
    with pltpu.force_tpu_interpret_mode():
        got = _broadcast_kernel(name, "mjax")(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
