"""User-defined PRNG implementations (jax.extend.random.define_prng_impl), compared with
jax: keys made, split, folded and turned into bits by the user's functions on one key's
data, vmapped over the keys, under jit, vmap and scan."""
import jax
import jax.extend
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.extend
import mjax.numpy as mjnp

LIBS = [(mjax, mjnp), (jax, jjnp)]


def _impl(lib, jnp, calls):
    def seed(s):
        return jnp.full((3,), s, np.uint32) + jnp.arange(3, dtype=np.uint32)

    def split(k, shape):
        calls.append(shape)
        n = int(np.prod(shape))
        return (jnp.broadcast_to(k, (*shape, 3))
                + jnp.arange(1, n + 1, dtype=np.uint32).reshape(*shape, 1) * 11)

    def random_bits(k, bit_width, shape):
        n = int(np.prod(shape))
        bits = k[0] * np.uint32(2654435761) + k[1] + jnp.arange(n, dtype=np.uint32) * 40503
        return bits.reshape(shape).astype(jnp.dtype(f"uint{bit_width}"))

    def fold_in(k, m):
        return k * 7 + jnp.asarray(m).astype(np.uint32)
    return lib.extend.random.define_prng_impl(
        key_shape=(3,), seed=seed, split=split, random_bits=random_bits, fold_in=fold_in,
        name="mine", tag="mn")


def _programs(lib, jnp, impl):
    r = lib.random
    k = r.key(5, impl=impl)
    data = r.key_data
    keys = r.split(k, 4)

    def scanned(c, _):
        c, sub = r.split(c)
        return c, r.bits(sub, (2,))
    return {
        "seed": data(k), "dtype": str(k.dtype), "shape": k.shape,
        "split": data(r.split(k, (2, 3))), "fold_in": data(r.fold_in(k, 9)),
        "bits": r.bits(k, (5,)), "uniform": r.uniform(k, (3,)),
        "normal": r.normal(keys[1], (2,)), "randint": r.randint(k, (4,), 0, 10),
        "jit_split": data(lib.jit(lambda k: r.split(k, 3))(k)),
        "vmap_fold": data(lib.vmap(lambda kk: r.fold_in(kk, 1))(keys)),
        "scan": lib.lax.scan(scanned, k, None, length=3)[1],
        "wrap": data(r.wrap_key_data(jnp.ones((2, 3), np.uint32), impl=impl)),
        "impl": str(r.key_impl(k)),
    }


def test_user_prng_impl_matches_jax():
    got = {}
    for lib, jnp in LIBS:
        calls = []
        got[lib.__name__] = (_programs(lib, jnp, _impl(lib, jnp, calls)), calls)
    (mine, mine_calls), (theirs, their_calls) = got["mjax"], got["jax"]
    assert mine.keys() == theirs.keys()
    for name in mine:
        if isinstance(theirs[name], (str, tuple)):
            assert mine[name] == theirs[name], name
        else:
            a, b = np.asarray(mine[name]), np.asarray(theirs[name])
            assert a.dtype == b.dtype and a.shape == b.shape, (name, a.dtype, b.dtype)
            np.testing.assert_array_equal(a, b, err_msg=name)
    assert mine_calls == their_calls    # (each function run as often, on the same shapes)


@pytest.mark.parametrize("jit", [False, True])
def test_a_key_shape_of_its_own_under_jit_as_haiku_tests_it(jit):
    """haiku's random_test: a 13-word key; one split per call, jitted or not."""
    for lib, jnp in LIBS:
        count = []
        impl = lib.extend.random.define_prng_impl(
            key_shape=(13,), seed=lambda _: jnp.zeros((13,), np.uint32),
            split=lambda k, num: count.append(num) or jnp.zeros((*num, 13), np.uint32),
            random_bits=lambda k, bw, shape: jnp.zeros(shape, np.uint32),
            fold_in=lambda key, _: key)
        f = (lambda k: lib.random.split(k)[0])
        out = (lib.jit(f) if jit else f)(lib.random.key(42, impl=impl))
        assert len(count) == 1 and out.dtype == lib.random.key(0, impl=impl).dtype
        assert lib.random.key_data(out).shape == (13,)


def test_key_data_of_the_wrong_shape_is_an_error():
    impl = mjax.extend.random.define_prng_impl(
        key_shape=(2,), seed=lambda s: mjnp.zeros((3,), np.uint32),
        split=lambda k, s: k, random_bits=lambda k, b, s: k, fold_in=lambda k, m: k)
    with pytest.raises(TypeError, match=r"key data of shape \(3,\), not ending in its "
                                        r"key_shape \(2,\)"):
        mjax.random.key(0, impl=impl)
