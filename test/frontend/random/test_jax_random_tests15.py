"""What JAX 0.10.2's tests/random_test.py reads of key arrays and jax._src.random, each
checked against real jax: key arrays' `_impl` and `_base_array`, the registry `prngs`,
`KeyTy`, `random_wrap` / `random_unwrap` and `default_prng_impl`."""
import warnings

import numpy as np
import pytest

import jax
import mjax
from jax._src import random as jrandom_src
from jax._src.random import prng as jprng
from jax._src.random import threefry2x32 as jthreefry
from mjax._src import random as mrandom_src
from mjax._src.random import prng as mprng
from mjax._src.random import threefry2x32 as mthreefry

IMPLS = ["threefry2x32", "rbg", "unsafe_rbg"]


@pytest.mark.parametrize("impl", IMPLS)
def test_key_impl_and_base_array(impl):
    jk, mk = jax.random.key(7, impl=impl), mjax.random.key(7, impl=impl)
    # `_impl` is the registry's object itself, as JAX's test_default_prng_selection checks
    assert jk._impl is jprng.prngs[impl] and mk._impl is mprng.prngs[impl]
    assert mk._impl.name == jk._impl.name and mk._impl.tag == jk._impl.tag
    assert tuple(mk._impl.key_shape) == tuple(jk._impl.key_shape)
    np.testing.assert_array_equal(np.asarray(mk._base_array), np.asarray(jk._base_array))
    assert mk._base_array.nbytes == jk._base_array.nbytes == mk.nbytes
    assert mk._base_array.device == mk.device


@pytest.mark.parametrize("make", ["key", "PRNGKey"])
@pytest.mark.parametrize("impl", IMPLS)
def test_default_prng_impl_selection(make, impl):
    with jax.default_prng_impl(impl), mjax.default_prng_impl(impl):
        assert jrandom_src.default_prng_impl() is jprng.prngs[impl]
        assert mrandom_src.default_prng_impl() is mprng.prngs[impl]
        jk, mk = getattr(jax.random, make)(3), getattr(mjax.random, make)(3)
        for jkey, mkey in zip(jax.random.split(jk), mjax.random.split(mk)):
            if make == "key":
                assert mkey._impl is mprng.prngs[impl] and jkey._impl is jprng.prngs[impl]
            np.testing.assert_array_equal(np.asarray(jax.random.key_data(jkey)),
                                          np.asarray(mjax.random.key_data(mkey)))


def test_prngs_holds_registered_impls_only():
    # an implementation only defined (not registered) is not in prngs, as in JAX
    def seed(s):
        return mjax.numpy.array([s, s], dtype=np.uint32)

    defined = mprng.PRNGImpl((2,), seed, None, None, None, name="tests15_defined")
    assert "tests15_defined" not in mprng.prngs
    assert defined not in mprng.prngs.values()
    jdefined = jprng.PRNGImpl((2,), seed, None, None, None, name="tests15_defined")
    assert "tests15_defined" not in jprng.prngs and jdefined not in jprng.prngs.values()
    assert set(IMPLS) <= set(mprng.prngs) and set(IMPLS) <= set(jprng.prngs)
    mprng.register_prng(defined)
    assert mprng.prngs["tests15_defined"] is defined


def test_key_ty():
    assert isinstance(mjax.random.key(0).dtype, mprng.KeyTy)
    assert isinstance(jax.random.key(0).dtype, jprng.KeyTy)
    assert not isinstance(np.dtype(np.uint32), mprng.KeyTy)
    for spec in ("threefry2x32", mjax.random.key_dtype("threefry2x32")):
        key = mjax.random.wrap_key_data(mjax.numpy.zeros(2, "uint32"), dtype=spec)
        assert key.dtype == mjax.random.key_dtype("threefry2x32")
        assert str(key.dtype) == str(jax.random.key_dtype("threefry2x32"))


@pytest.mark.parametrize("in_axes", [0, 1])
def test_random_wrap_vmap(in_axes):
    data = np.arange(6, dtype=np.uint32).reshape(3, 2)
    data = data if in_axes == 0 else data.T
    jkeys = jax.vmap(lambda d: jprng.random_wrap(d, impl=jthreefry.threefry_prng_impl),
                     in_axes=in_axes)(data)
    mkeys = mjax.vmap(lambda d: mprng.random_wrap(d, impl=mthreefry.threefry_prng_impl),
                      in_axes=in_axes)(data)
    assert isinstance(mkeys, mprng.PRNGKeyArray) and mkeys.shape == jkeys.shape == (3,)
    np.testing.assert_array_equal(np.asarray(mjax.random.key_data(mkeys)),
                                  np.asarray(jax.random.key_data(jkeys)))


def test_random_unwrap():
    seeds = np.arange(12, dtype=np.uint32)
    jkeys = jax.vmap(jax.random.key)(seeds).reshape(3, 4)
    mkeys = mjax.vmap(mjax.random.key)(seeds).reshape(3, 4)
    for jf, mf in [(jprng.random_unwrap, mprng.random_unwrap),
                   (jax.jit(jprng.random_unwrap), mjax.jit(mprng.random_unwrap)),
                   (jax.vmap(jprng.random_unwrap), mjax.vmap(mprng.random_unwrap))]:
        j, m = jf(jkeys), mf(mkeys)
        assert m.dtype == j.dtype and m.shape == j.shape
        np.testing.assert_array_equal(np.asarray(m), np.asarray(j))
    x = np.arange(12, dtype=np.uint32).reshape(3, 4)
    for f in (lambda u: u, jax.jit, jax.vmap):
        with pytest.raises(TypeError, match="random_unwrap takes key array operand"):
            f(jprng.random_unwrap)(x)
    for f in (lambda u: u, mjax.jit, mjax.vmap):
        with pytest.raises(TypeError, match="random_unwrap takes key array operand"):
            f(mprng.random_unwrap)(x)


def _key_data_equal(m, j):
    assert isinstance(m, mprng.PRNGKeyArray) and str(m.dtype) == str(j.dtype)
    assert m.shape == j.shape
    np.testing.assert_array_equal(np.asarray(mjax.random.key_data(m)),
                                  np.asarray(jax.random.key_data(j)))


@pytest.mark.parametrize("name,args", [("zeros", ()), ("ones", ()), ("empty", ()),
                                       ("full", (100,)), ("full", (2**32 - 1,))])
@pytest.mark.parametrize("shape", [(2,), (), (3, 1)])
@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_constructors_with_key_dtype(name, args, shape, impl):
    # jnp.zeros(shape, dtype=<key dtype>): keys whose data words are all the value
    jd, md = jax.random.key_dtype(impl), mjax.random.key_dtype(impl)
    j = getattr(jax.numpy, name)(shape, *args, dtype=jd)
    m = getattr(mjax.numpy, name)(shape, *args, dtype=md)
    _key_data_equal(m, j)
    m = mjax.jit(lambda: getattr(mjax.numpy, name)(shape, *args, dtype=md))()
    _key_data_equal(m, j)


@pytest.mark.parametrize("shape", [(2,), (3, 2), ()])
def test_full_with_key_fill_value(shape):
    jfill, mfill = jax.random.key(42), mjax.random.key(42)
    jkeys = jax.random.split(jax.random.key(789543), 2)
    mkeys = mjax.random.split(mjax.random.key(789543), 2)
    _key_data_equal(mjax.numpy.full_like(mkeys, mfill), jax.numpy.full_like(jkeys, jfill))
    _key_data_equal(mjax.jit(mjax.numpy.full_like)(mkeys, mfill),
                    jax.numpy.full_like(jkeys, jfill))
    _key_data_equal(mjax.numpy.full(shape, mfill, dtype=mfill.dtype),
                    jax.numpy.full(shape, jfill, dtype=jfill.dtype))
    _key_data_equal(mjax.numpy.full_like(mkeys, mfill, shape=shape),
                    jax.numpy.full_like(jkeys, jfill, shape=shape))
    # a row of keys broadcast along the leading axis
    if len(shape) == 2:
        _key_data_equal(mjax.numpy.full(shape, mkeys, dtype=mkeys.dtype),
                        jax.numpy.full(shape, jkeys, dtype=jkeys.dtype))


def _mesh(lib, n):
    return lib.sharding.Mesh(np.array(lib.devices()[:n]), ("x",))


@pytest.mark.parametrize("n,shape,spec", [(1, (1,), ("x",)), (8, (8,), ("x",)),
                                          (4, (4, 3), ("x", None)), (2, (2, 4), (None, "x")),
                                          (4, (6,), (None,))])
def test_make_array_from_callback_of_keys(n, shape, spec):
    results = []
    for lib in (jax, mjax):
        sharding = lib.sharding.NamedSharding(_mesh(lib, n), lib.sharding.PartitionSpec(*spec))
        seeds = np.arange(int(np.prod(shape)), dtype=np.uint32).reshape(shape)

        def callback(index, lib=lib, seeds=seeds):
            block = seeds[index]
            return lib.vmap(lib.random.key)(block.ravel()).reshape(block.shape)

        out = lib.make_array_from_callback(shape, sharding, callback)
        assert out.shape == shape and str(out.dtype) == "key<fry>"
        assert len(out.addressable_shards) == n
        results.append(np.asarray(lib.random.key_data(out)))
    np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("n", [1, 8])
def test_make_array_from_single_device_arrays_of_keys(n):
    results = []
    for lib in (jax, mjax):
        sharding = lib.sharding.NamedSharding(_mesh(lib, n), lib.sharding.PartitionSpec("x"))
        keys = lib.random.split(lib.random.key(0), n)
        arrays = [lib.device_put(keys[i:i + 1], d) for i, d in enumerate(lib.devices()[:n])]
        out = lib.make_array_from_single_device_arrays((n,), sharding, arrays)
        assert out.shape == (n,) and str(out.dtype) == "key<fry>"
        assert out.sharding == sharding
        results.append(np.asarray(lib.random.key_data(out)))
    np.testing.assert_array_equal(results[1], results[0])
    mixed = [mjax.random.key(0)[None], mjax.numpy.zeros((1,), np.uint32)]
    sharding = mjax.sharding.NamedSharding(_mesh(mjax, 2), mjax.sharding.PartitionSpec("x"))
    with pytest.raises(TypeError):
        mjax.make_array_from_single_device_arrays((2,), sharding, mixed)


def test_global_arrays_on_one_device_keep_the_sharding():
    # a one-device mesh: the result's sharding is the NamedSharding asked for, as JAX's
    for lib in (jax, mjax):
        sharding = lib.sharding.NamedSharding(_mesh(lib, 1), lib.sharding.PartitionSpec("x"))
        host = np.arange(4.0, dtype=np.float32)
        a = lib.make_array_from_callback((4,), sharding, lambda i: host[i])
        b = lib.make_array_from_single_device_arrays(
            (4,), sharding, [lib.device_put(host, lib.devices()[0])])
        for out in (a, b):
            assert out.sharding == sharding
            np.testing.assert_array_equal(np.asarray(out), host)


@pytest.mark.parametrize("lib", [jax, mjax])
def test_array_as_dtype(lib):
    # NumPy 2.4's __numpy_dtype__: an array given as a dtype warns (JAX's deprecation);
    # a key array's dtype is no NumPy dtype, so NumPy raises ValueError
    from jax._src import dtypes as jdtypes
    from mjax._src import dtypes as mdtypes
    prng_key = (jdtypes if lib is jax else mdtypes).prng_key
    x = lib.numpy.ones(3, np.float32)
    with pytest.warns(DeprecationWarning, match="Implicit conversion of an array to a dtype"):
        assert np.dtype(x) == np.float32
    with pytest.warns(DeprecationWarning, match="Implicit conversion of an array"):
        assert lib.numpy.issubdtype(x, np.floating)
    with pytest.warns(DeprecationWarning, match="Implicit conversion of an array"):
        assert not lib.numpy.issubdtype(x, prng_key)
    seen = []
    with warnings.catch_warnings():      # (a tracer has no __numpy_dtype__: no warning)
        warnings.simplefilter("error")
        lib.jit(lambda t: seen.append(np.dtype(t)) or t)(x)
    assert seen == [np.float32]
    key = lib.random.key(42)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="Could not convert"):
        lib.numpy.issubdtype(key, prng_key)
    assert lib.numpy.issubdtype(key.dtype, prng_key)
    assert not lib.numpy.issubdtype(key.dtype, np.integer)


def _key_jvp_case(lib, batched):
    """f(x, keys) = x * normal(first key), its custom_jvp twin, and the key tangents seen."""
    first = (lambda k: k[0]) if batched else (lambda k: k)

    def f_raw(x, k):
        return x * lib.random.normal(first(k), ())

    f = lib.custom_jvp(f_raw)
    seen = []

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, k), (x_dot, k_dot) = primals, tangents
        seen.append(k_dot)
        rand = lib.random.normal(first(k), ())
        return x * rand, x_dot * rand

    return f_raw, f, seen


@pytest.mark.parametrize("nkeys", [None, 3])
def test_key_tangents_and_gradients_are_float0(nkeys):
    # a key's tangent in a custom_jvp rule, and its gradient (allow_int), are float0 arrays
    # of the keys' shape, as JAX's
    results = {}
    for lib in (jax, mjax):
        keys = lib.random.key(28) if nkeys is None else lib.random.split(lib.random.key(28),
                                                                          nkeys)
        f_raw, f, seen = _key_jvp_case(lib, nkeys is not None)
        value = lib.grad(f)(0.5, keys)
        (k_dot,) = seen
        gx, gk = lib.grad(f_raw, argnums=(0, 1), allow_int=True)(0.5, keys)
        _, pull = lib.vjp(f_raw, 0.5, keys)
        vx, vk = pull(np.float32(1.0))
        for t in (k_dot, gk, vk):
            assert t.dtype == np.dtype([("float0", "V")]) and t.shape == keys.shape
        results[lib] = [np.asarray(v) for v in (value, gx, vx)]
    for m, j in zip(results[mjax], results[jax]):
        np.testing.assert_allclose(m, j, rtol=1e-6)


def _apis():
    from jax._src import api as japi
    from mjax._src import api as mapi
    return ((jax, japi), (mjax, mapi))


def _leaf_values(lib, tree):
    leaves = lib.tree_util.tree_leaves(tree)
    return [np.asarray(lib.random.key_data(v)) if str(v.dtype).startswith("key")
            else np.asarray(v) for v in leaves]


@pytest.mark.parametrize("n", [1, 4, 8])
def test_device_put_sharded(n):
    results = []
    for lib, api in _apis():
        devices = lib.devices()[:n]
        keys = lib.random.split(lib.random.key(5), n)
        shards = [(np.float32(i) * np.ones(3, np.float32), {"k": keys[i], "i": i})
                  for i in range(n)]
        out = api.device_put_sharded(shards, devices)
        x, rest = out
        assert x.shape == (n, 3) and rest["k"].shape == (n,) and rest["i"].shape == (n,)
        assert str(rest["k"].dtype) == "key<fry>"
        assert [s.device for s in x.addressable_shards] == list(devices)
        assert x.sharding.spec == lib.sharding.PartitionSpec("_device_put_sharded")
        results.append(_leaf_values(lib, out))
        with pytest.raises(ValueError, match="must equal"):
            api.device_put_sharded(shards[:1], lib.devices()[:2])
        with pytest.raises(TypeError, match="must be a sequence"):
            api.device_put_sharded(np.ones((n, 2)), devices)
        if n > 1:
            with pytest.raises(ValueError, match="consistent shape and dtype"):
                api.device_put_sharded([np.ones(2)] + [np.ones(3)] * (n - 1), devices)
    for m, j in zip(results[1], results[0]):
        assert m.dtype == j.dtype
        np.testing.assert_array_equal(m, j)


@pytest.mark.parametrize("n", [1, 8])
def test_device_put_replicated(n):
    results = []
    for lib, api in _apis():
        devices = lib.devices()[:n]
        x = {"a": np.arange(6, dtype=np.int32).reshape(2, 3), "k": lib.random.key(9),
             "s": 2.5}
        out = api.device_put_replicated(x, devices)
        assert out["a"].shape == (n, 2, 3) and out["k"].shape == (n,)
        assert out["s"].shape == (n,)
        assert [s.device for s in out["a"].addressable_shards] == list(devices)
        results.append(_leaf_values(lib, out))
        with pytest.raises(ValueError, match="non-empty sequence"):
            api.device_put_replicated(x, [])
    for m, j in zip(results[1], results[0]):
        assert m.dtype == j.dtype
        np.testing.assert_array_equal(m, j)


def test_random_core_helpers():
    from jax._src.random import core as jcore
    from mjax._src.random import core as mcore
    rng = np.random.default_rng(15)
    bits = rng.integers(0, 2**32, (2, 200), dtype=np.uint32)
    bits[0, :40] = 0                       # high word zero: the low word's leading zeros
    bits[0, 40:60] = rng.integers(0, 4, 20)
    bits[:, 60] = 0
    m = np.asarray(mcore._safe_int_to_float(bits, np.float32))
    j = np.asarray(jcore._safe_int_to_float(bits, np.float32))
    assert m.dtype == j.dtype == np.float32
    np.testing.assert_array_equal(m.view(np.uint32), j.view(np.uint32))
    with pytest.raises(RuntimeError, match="only works for u32 -> f32"):
        mcore._safe_int_to_float(bits, np.float16)
    for shape, args in [((2, 3), ()), (None, ()), (None, (np.ones(3), np.ones((2, 1)))),
                        ((4, 3), (np.ones(3),))]:
        assert mcore._check_broadcast_shapes("t", shape, *args) == \
            jcore._check_broadcast_shapes("t", shape, *args)
    for lib in (jcore, mcore):
        with pytest.raises(ValueError):
            lib._check_broadcast_shapes("t", (3,), np.ones((2, 3)))
    assert mcore.normal is mjax.random.normal


SAFE_CAST_CASES = [np.float16, np.float32, "bfloat16", np.int8, np.int16, np.int32,
                   np.uint8, np.uint32, np.complex64, np.bool_, "int16", "float32",
                   np.float64, np.int64]


@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_safe_to_cast(mode):
    from jax._src import dtypes as jdtypes
    from mjax._src import dtypes as mdtypes

    def table(lib, d):
        out = []
        with lib.numpy_dtype_promotion(mode):
            for a in SAFE_CAST_CASES + [2.0, 3, True, 1j, np.ones(2, np.int8)]:
                for b in SAFE_CAST_CASES:
                    try:
                        out.append(d.safe_to_cast(a, b))
                    except Exception as e:      # noqa: BLE001 (the error kind compared)
                        out.append(type(e).__name__)
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert table(mjax, mdtypes) == table(jax, jdtypes)


@pytest.mark.parametrize("seeds", [3, -1, 2**40 + 5, np.arange(4, dtype=np.uint32),
                                   np.array([[1, 2], [3, 4]], np.int32)])
@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_random_seed(seeds, impl):
    # jax._src.random.prng.random_seed: one key per seed, any shape of seeds
    j = jprng.random_seed(seeds, impl=jprng.prngs[impl])
    m = mprng.random_seed(seeds, impl=mprng.prngs[impl])
    _key_data_equal(m, j)


@pytest.mark.parametrize("dtype", ["bfloat16", np.complex64, np.float32])
def test_huge_splat_constant_lowers(dtype):
    # a splat constant of 4e10 elements is verified without materializing it (a bf16 or
    # complex one allocated it whole: MemoryError lowering random.uniform's bfloat16)
    shape = (308000000, 128)
    for lib in (jax, mjax):
        text = lib.jit(lambda: lib.numpy.full(shape, 1.5, dtype)).lower().as_text()
        assert "308000000x128" in text
    key = mjax.random.key(3)
    text = mjax.jit(lambda: mjax.random.uniform(key, shape, dtype="bfloat16")).lower()
    assert "308000000x128xbf16" in text.as_text()
    small = (3, 4)
    np.testing.assert_array_equal(
        np.asarray(mjax.jit(lambda: mjax.numpy.full(small, 1.5, dtype))()),
        np.asarray(jax.jit(lambda: jax.numpy.full(small, 1.5, dtype))()))


_STRICT_CASES = {
    "binomial": lambda lib, k: lib.random.binomial(k, np.float32(10.0),
                                                   np.array([0.2, 0.7], np.float32), (3, 2)),
    "binomial_large": lambda lib, k: lib.random.binomial(k, np.float32(500.0),
                                                         np.float32(0.4), (4,)),
    "multinomial": lambda lib, k: lib.random.multinomial(
        k, np.float32(20.0), np.array([0.1, 0.3, 0.6], np.float32), shape=(2, 3)),
    "multivariate_normal": lambda lib, k: lib.random.multivariate_normal(
        k, np.zeros(2, np.float32), np.array([[1.0, 0.5], [0.5, 1.0]], np.float32), (4,)),
}


@pytest.mark.parametrize("name", sorted(_STRICT_CASES))
def test_samplers_under_strict_promotion(name):
    # a sampler's own arithmetic is not the user's: it runs under
    # jax_numpy_dtype_promotion='strict' and jax_numpy_rank_promotion='raise', as JAX's
    outs = []
    for lib in (jax, mjax):
        with lib.numpy_dtype_promotion("strict"), lib.numpy_rank_promotion("raise"):
            outs.append(np.asarray(_STRICT_CASES[name](lib, lib.random.key(11))))
        with pytest.raises(Exception):      # (the user's own code still obeys them)
            with lib.numpy_dtype_promotion("strict"):
                lib.numpy.add(lib.numpy.ones(2, np.int32), lib.numpy.ones(2, np.float32))
    assert outs[1].dtype == outs[0].dtype and outs[1].shape == outs[0].shape
    np.testing.assert_allclose(outs[1], outs[0], rtol=2e-5, atol=2e-6)
