"""Keys of the TPU kernel PRNG (pltpu.to_pallas_key, impl pallas_tpu) against JAX: their
data, what jax.random does with them outside kernels, how a kernel takes them, and the
errors where only a chip can draw their bits. The Mosaic of kernels drawing from them
is compared with JAX's in test_mosaic_differential.py (kernels pallas_key,
pallas_key_samplers)."""
import jax
import numpy as np
import pytest
from jax.experimental import pallas as jpl
from jax.experimental.pallas import tpu as jpltpu

import mjax
import mjax.numpy as jnp
from mjax.experimental import pallas as pl
from mjax.experimental.pallas import tpu as pltpu


def data(lib, key):
    return np.asarray(lib.random.key_data(key))


@pytest.mark.parametrize("make", ["typed", "legacy", "batch"])
def test_to_pallas_key_matches_jax(make):
    def keys(lib):
        if make == "typed":
            return lib.random.key(42)
        if make == "legacy":
            return lib.random.PRNGKey(42)
        return lib.random.split(lib.random.key(42), 3)
    with jax.legacy_prng_key("allow"), mjax.legacy_prng_key("allow"):
        want = jpltpu.to_pallas_key(keys(jax))
        got = pltpu.to_pallas_key(keys(mjax))
    assert got.shape == want.shape
    assert str(got.dtype) == str(want.dtype) == "key<pl>"
    np.testing.assert_array_equal(data(mjax, got), data(jax, want))


def _fold_in_words(words, msg):
    """JAX's pallas_tpu fold_in (word 1 plus the message, one threefry round of
    rotation 13) in NumPy."""
    k0, k1 = (np.uint32(w) for w in words)
    with np.errstate(over="ignore"):
        k1 = np.uint32(k1 + np.uint32(msg))
        k0 = np.uint32(k0 + k1)
        rot = np.uint32((k1 << np.uint32(13)) | (k1 >> np.uint32(19)))
    return np.array([[k0, np.uint32(k0 ^ rot)]], np.uint32)


def test_pallas_keys_outside_kernels():
    # seeding as JAX's pallas_tpu impl (the seed in both words)
    np.testing.assert_array_equal(data(mjax, mjax.random.key(7, impl="pallas_tpu")),
                                  data(jax, jax.random.key(7, impl="pallas_tpu")))
    # folding: JAX's fold_in has no rule outside a kernel (its split_key_p); mjax folds
    # as the kernel does
    with pytest.raises(NotImplementedError):
        jax.random.fold_in(jpltpu.to_pallas_key(jax.random.key(1)), 3)
    words = data(jax, jpltpu.to_pallas_key(jax.random.key(1)))[0]
    for d in (0, 3, 2**31 - 1):
        got = mjax.random.fold_in(pltpu.to_pallas_key(mjax.random.key(1)), d)
        np.testing.assert_array_equal(data(mjax, got), _fold_in_words(words, d))
    got = mjax.jit(lambda k, d: mjax.random.fold_in(k, d))(
        pltpu.to_pallas_key(mjax.random.key(1)), np.uint32(3))
    np.testing.assert_array_equal(data(mjax, got), _fold_in_words(words, 3))
    with pytest.raises(NotImplementedError, match="Cannot split a Pallas key"):
        mjax.random.split(pltpu.to_pallas_key(mjax.random.key(0)))
    with pytest.raises(NotImplementedError):
        jax.random.split(jpltpu.to_pallas_key(jax.random.key(0)))


def key_kernel(key_ref, o_ref):
    o_ref[...] = jnp.zeros(o_ref.shape, jnp.float32) + mjax.random.uniform(
        mjax.random.fold_in(key_ref[...], pl.program_id(0)), (8, 128))


def key_call(key, interpret=False):
    return pl.pallas_call(key_kernel, grid=(2,),
                          in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                          out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32),
                          interpret=interpret)(key)


def test_kernel_takes_keys_as_their_data_in_smem():
    key = pltpu.to_pallas_key(mjax.random.key(0))
    text = mjax.jit(key_call).trace(key).as_text()
    # (the operand is the keys' data; the spec says its last two dims are the words)
    assert "tensor<1x2xui32>" in text and "key_dims = 2" in text
    assert '"jaxpr.random_wrap"' in text and 'impl = "pallas_tpu"' in text
    lowered = mjax.jit(key_call).trace(key).lower(lowering_platforms=("tpu",)).as_text()
    assert "tpu_custom_call" in lowered and "tensor<1x2xui32>" in lowered


def test_pallas_key_bits_need_a_chip():
    key = pltpu.to_pallas_key(mjax.random.key(0))
    with pytest.raises(Exception, match="hardware PRNG"):
        np.asarray(key_call(key, interpret=True))
    with pytest.raises(Exception, match="hardware PRNG"):
        mjax.random.uniform(key, (8, 128))


def test_pallas_keys_must_be_in_smem():
    def kernel(key_ref, o_ref):
        o_ref[...] = mjax.random.bits(key_ref[...], (8, 128))

    key = pltpu.to_pallas_key(mjax.random.key(0))
    f = mjax.jit(lambda k: pl.pallas_call(
        kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.uint32))(k))
    with pytest.raises(Exception, match="PRNG keys must be loaded from SMEM"):
        f.trace(key).lower(lowering_platforms=("tpu",))


def test_threefry_keys_in_kernels_lower_for_tpu():
    def kernel(key_ref, o_ref):
        o_ref[...] = mjax.random.bits(key_ref[...], (8, 128))

    f = mjax.jit(lambda k: pl.pallas_call(
        kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.uint32))(k))
    # (threefry runs in the kernel as vector ops: test_mosaic_differential.py's threefry_*)
    text = f.trace(mjax.random.key(0)).lower(lowering_platforms=("tpu",)).as_text()
    assert "tpu_custom_call" in text
    rbg = mjax.random.key(0, impl="rbg")
    with pytest.raises(Exception, match="rbg keys inside a TPU kernel is not supported"):
        f.trace(rbg).lower(lowering_platforms=("tpu",))
    # (interpret mode runs them: the same bits as outside the kernel)
    got = pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                         out_shape=mjax.ShapeDtypeStruct((8, 128), np.uint32),
                         interpret=True)(mjax.random.key(3))
    np.testing.assert_array_equal(np.asarray(got),
                                  np.asarray(jax.random.bits(jax.random.key(3), (8, 128))))


def test_jax_interpret_mode_agrees_on_threefry_kernels():
    def kernel(lib, key_ref, o_ref):
        o_ref[...] = lib.random.uniform(lib.random.fold_in(key_ref[...], 4), (8, 128))

    def call(lib, pl_, pltpu_, key):
        return pl_.pallas_call(lambda k, o: kernel(lib, k, o),
                               in_specs=[pl_.BlockSpec(memory_space=pltpu_.SMEM)],
                               out_shape=lib.ShapeDtypeStruct((8, 128), np.float32),
                               interpret=True)(key)
    want = call(jax, jpl, jpltpu, jax.random.key(9))
    got = call(mjax, pl, pltpu, mjax.random.key(9))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def sampled(lib, pl_, pltpu_, key, block, index_map, grid):
    """The TPU PRNG guide's block-invariant sampling, interpreted with a threefry key."""
    def kernel(key_ref, o_ref):
        o_ref[...] = pltpu_.sample_block(
            lib.random.uniform, key_ref[...], block_size=o_ref.shape, tile_size=(16, 128),
            total_size=(64, 512),
            block_index=index_map(pl_.program_id(0), pl_.program_id(1)),
            minval=0.0, maxval=1.0)
    return pl_.pallas_call(kernel, grid=grid,
                           in_specs=[pl_.BlockSpec(memory_space=pltpu_.SMEM)],
                           out_specs=pl_.BlockSpec(block, lambda i, j: index_map(i, j)),
                           out_shape=lib.ShapeDtypeStruct((64, 512), np.float32),
                           interpret=True)(key)


def test_sample_block_is_block_invariant_and_matches_jax():
    small = sampled(mjax, pl, pltpu, mjax.random.key(0), (16, 128), lambda i, j: (i, j),
                    (4, 4))
    large = sampled(mjax, pl, pltpu, mjax.random.key(0), (32, 256), lambda i, j: (j, i),
                    (2, 2))
    np.testing.assert_array_equal(np.asarray(small), np.asarray(large))
    want = sampled(jax, jpl, jpltpu, jax.random.key(0), (32, 256), lambda i, j: (j, i),
                   (2, 2))
    np.testing.assert_array_equal(np.asarray(large), np.asarray(want))


def test_stateful_samplers_need_a_chip():
    def kernel(o_ref):
        pltpu.prng_seed(0)
        o_ref[...] = pltpu.stateful_uniform(shape=o_ref.shape, minval=0.0, maxval=1.0)

    call = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32),
                          interpret=True)
    with pytest.raises(Exception, match="PRNG"):
        np.asarray(call())
    text = mjax.jit(pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct(
        (8, 128), np.float32))).trace().lower(lowering_platforms=("tpu",)).as_text()
    assert "tpu_custom_call" in text
    # (the placeholder key prints as JAX's in its jaxprs: key<_pl_stateful>)
    assert str(mjax.random.key(0, impl="_pallas_internal_stateful").dtype) == (
        "key<_pl_stateful>")
