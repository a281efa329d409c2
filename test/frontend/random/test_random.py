"""mjax.random against jax.random: the same key gives the same bits (integers and raw
bits exactly, floats to 1 ulp), eagerly, under jit and under vmap; keys behave like
JAX's; samples have the right distribution; gradients through samples match JAX."""
import numpy as np
import pytest
import scipy.stats

import jax
import jax.numpy as jjnp
import mjax
import mjax.numpy as jnp
from frontend_util import x64

mr, jr = mjax.random, jax.random
F32 = np.float32


def assert_same(a, b, ulps=1):
    """Equal bits for integers/bools; floats within `ulps` ulp (NaNs in the same places)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b)
        return
    if a.dtype.kind == "c":
        assert_same(a.real, b.real, ulps)
        assert_same(a.imag, b.imag, ulps)
        return
    af, bf = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(af), np.isnan(bf))
    ok = ~np.isnan(af)
    ulp = np.spacing(np.abs(b[ok]).astype(a.dtype)).astype(np.float64)
    ulp = np.maximum(ulp, float(jjnp.finfo(a.dtype).smallest_normal))
    err = np.abs(af[ok] - bf[ok])
    assert np.all(err <= ulp * ulps * 1.0001), f"max error {err.max()} ulp {ulp[np.argmax(err)]}"


def both(fn, seed=3, typed=True):
    """fn(random_module, key) in mjax and in jax."""
    mk = mr.key(seed) if typed else mr.PRNGKey(seed)
    jk = jr.key(seed) if typed else jr.PRNGKey(seed)
    return fn(mr, mk), fn(jr, jk)


# ---- keys ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 42, -1, 2**31 - 1, -2**31, 2**40 + 5])
def test_prng_key_seeds(seed):
    assert_same(mr.PRNGKey(seed), jr.PRNGKey(seed))
    assert_same(mr.key_data(mr.key(seed)), jr.key_data(jr.key(seed)))


@pytest.mark.parametrize("seed", [2**40 + 5, -3, 2**63 - 1, np.int32(-7), np.uint32(2**32 - 1)])
def test_prng_key_seeds_x64(seed):
    with x64(True):
        assert_same(mr.PRNGKey(seed), jr.PRNGKey(seed))


def test_typed_key_array_api():
    k = mr.key(0)
    assert k.shape == () and k.ndim == 0
    assert str(k.dtype) == "key<fry>" == str(jr.key(0).dtype)
    assert jnp.issubdtype(k.dtype, mjax.dtypes.prng_key)
    assert jnp.issubdtype(k.dtype, mjax.dtypes.extended)
    assert not jnp.issubdtype(jnp.float32, mjax.dtypes.prng_key)
    assert mr.key_impl(k) == jr.key_impl(jr.key(0)) == "threefry2x32"
    ks = mr.split(k, (2, 3))
    assert ks.shape == (2, 3) and ks.dtype == k.dtype
    jks = jr.split(jr.key(0), (2, 3))
    assert_same(mr.key_data(ks[1, 2]), jr.key_data(jks[1, 2]))
    assert_same(mr.key_data(ks[:, 1]), jr.key_data(jks[:, 1]))
    assert_same(mr.key_data(ks[..., 0]), jr.key_data(jks[..., 0]))
    assert_same(mr.key_data(ks.reshape(3, 2)), jr.key_data(jks.reshape(3, 2)))
    assert_same(mr.key_data(ks.T), jr.key_data(jks.T))
    assert_same(mr.key_data(ks.ravel()), jr.key_data(jks.ravel()))
    assert len(ks) == 2 and [kk.shape for kk in ks] == [(3,), (3,)]
    assert "key<fry>" in repr(k)
    data = mr.key_data(ks)
    assert_same(mr.key_data(mr.wrap_key_data(data)), np.asarray(data))
    with pytest.raises(TypeError, match="add does not accept dtypes key<fry>, int32"):
        k + 1
    with pytest.raises(TypeError):
        np.asarray(k)
    with pytest.raises(TypeError, match="invalid PRNG key data"):
        mr.wrap_key_data(np.zeros((3,), np.uint32))
    with pytest.raises(ValueError, match="accepts a single key"):
        mr.normal(ks)
    with pytest.raises(ValueError, match="split accepts a single key"):
        mr.split(ks)
    with pytest.raises(TypeError, match="scalar seed"):
        mr.key(np.arange(2))
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        mr.key(0, impl="nope")


def test_stack_and_concatenate_key_arrays():
    m1, m2 = mr.split(mr.key(0))
    j1, j2 = jr.split(jr.key(0))
    assert_same(mr.key_data(jnp.stack([m1, m2])), jr.key_data(jjnp.stack([j1, j2])))
    assert_same(mr.key_data(jnp.stack([mr.split(m1, 3), mr.split(m2, 3)], axis=1)),
                jr.key_data(jjnp.stack([jr.split(j1, 3), jr.split(j2, 3)], axis=1)))
    assert_same(mr.key_data(jnp.concatenate([mr.split(m1, 3), mr.split(m2, 2)])),
                jr.key_data(jjnp.concatenate([jr.split(j1, 3), jr.split(j2, 2)])))
    assert_same(mr.key_data(jnp.array([m1, m2])), jr.key_data(jjnp.array([j1, j2])))
    assert jnp.asarray(m1) is m1
    stacked = mjax.jit(lambda a, b: jnp.stack([a, b]))(m1, m2)
    assert stacked.shape == (2,) and str(stacked.dtype) == "key<fry>"
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        jjnp.stack([j1, jjnp.zeros(())])
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        jnp.stack([m1, jnp.zeros(())])
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        jnp.where(True, mr.split(m1, 3), 1)


def test_where_picks_whole_keys_as_jax():
    mk, mk2 = mr.split(mr.key(0), 3), mr.split(mr.key(1), 3)
    jk, jk2 = jr.split(jr.key(0), 3), jr.split(jr.key(1), 3)
    for c in (True, np.array([True, False, True]), np.array([[True], [False]])):
        got, want = jnp.where(c, mk, mk2), jjnp.where(c, jk, jk2)
        assert got.shape == want.shape and str(got.dtype) == str(want.dtype)
        assert_same(mr.key_data(got), jr.key_data(want))
    c = np.array([False, True, False])
    assert_same(mr.key_data(mjax.jit(jnp.where)(c, mk, mr.key(5))),
                jr.key_data(jax.jit(jjnp.where)(c, jk, jr.key(5))))
    assert_same(mr.key_data(mjax.vmap(jnp.where)(c, mk, mk2)),
                jr.key_data(jax.vmap(jjnp.where)(c, jk, jk2)))


def test_split_fold_in_bits_typed_and_raw():
    for typed in (True, False):
        data = (lambda r, k: r.key_data(k)) if typed else (lambda r, k: k)
        for fn in (lambda r, k: r.split(k), lambda r, k: r.split(k, 5),
                   lambda r, k: r.split(k, (2, 3)), lambda r, k: r.fold_in(k, 12345),
                   lambda r, k: r.fold_in(k, np.uint32(2**32 - 1))):
            out = both(fn, typed=typed)
            assert_same(data(mr, out[0]), data(jr, out[1]))
        assert_same(*both(lambda r, k: r.bits(k, (7,)), typed=typed))

    def grid(r, k):
        return {f"{shape}{np.dtype(dt).name}": r.bits(k, shape, dt)
                for shape in [(), (5,), (2, 3), (3, 1, 4)]
                for dt in (np.uint8, np.uint16, np.uint32)}
    got = mjax.jit(lambda k: grid(mr, k))(mr.key(8))
    want = jax.jit(lambda k: grid(jr, k))(jr.key(8))
    for name in want:
        assert_same(got[name], want[name])
    assert_same(mr.key_data(mr.clone(mr.key(4))), jr.key_data(jr.clone(jr.key(4))))


def test_bits_64_and_float64_x64():
    with x64(True):
        for seed in (0, 11):
            assert_same(*both(lambda r, k: r.bits(k, (2, 3), np.uint64), seed))
            assert_same(*both(lambda r, k: r.bits(k, (4,)), seed))
            assert_same(*both(lambda r, k: r.uniform(k, (4,), np.float64), seed))
            assert_same(*both(lambda r, k: r.normal(k, (4,), np.float64), seed))
            assert_same(*both(lambda r, k: r.randint(k, (4,), -2**40, 2**40), seed))
        assert_same(*both(lambda r, k: r.gamma(k, np.array([0.3, 4.0]))))
        assert_same(*both(lambda r, k: r.poisson(k, np.array([3.0, 40.0]))))
        assert_same(*both(lambda r, k: r.bernoulli(k, shape=(5,))))


def test_threefry_not_partitionable():
    old_m = mjax.config.read("jax_threefry_partitionable")
    old_j = jax.config.jax_threefry_partitionable
    mjax.config.update("jax_threefry_partitionable", False)
    jax.config.update("jax_threefry_partitionable", False)
    try:
        def grid(r, k):
            out = {f"{s}{np.dtype(d).name}": r.bits(k, s, d) for s in [(), (5,), (2, 3)]
                   for d in (np.uint8, np.uint16, np.uint32)}
            out["split"] = r.key_data(r.split(k, (2, 3)))
            out["normal"] = r.normal(k, (5,))
            return out
        got = mjax.jit(lambda k: grid(mr, k))(mr.key(3))
        want = jax.jit(lambda k: grid(jr, k))(jr.key(3))
        for name in want:
            assert_same(got[name], want[name])
        got = mjax.vmap(lambda k: mr.normal(k, (3,)))(mr.split(mr.key(1), 4))
        assert_same(got, jax.vmap(lambda k: jr.normal(k, (3,)))(jr.split(jr.key(1), 4)))
    finally:
        mjax.config.update("jax_threefry_partitionable", old_m)
        jax.config.update("jax_threefry_partitionable", old_j)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_rbg_impls(impl):
    k, jk = mr.key(3, impl=impl), jr.key(3, impl=impl)
    assert mr.key_data(k).shape == (4,) and str(k.dtype) == str(jk.dtype)
    assert_same(mr.key_data(k), jr.key_data(jk))
    assert_same(mr.key_data(mr.split(k, 3)), jr.key_data(jr.split(jk, 3)))
    assert_same(mr.key_data(mr.fold_in(k, 9)), jr.key_data(jr.fold_in(jk, 9)))
    assert_same(mr.bits(k, (6,), np.uint8), jr.bits(jk, (6,), np.uint8))
    assert_same(mr.uniform(k, (6,)), jr.uniform(jk, (6,)))
    with mjax.default_prng_impl(impl):
        assert mr.PRNGKey(1).shape == (4,)


# ---- the samplers, bit for bit --------------------------------------------------------
S = (7,)
COV = np.array([[2, .5, 0], [.5, 1, 0], [0, 0, 3]], F32)
P5 = np.array([.1, .2, .3, .2, .2], F32)
LOGITS = np.log(np.array([[.1, .2, .7], [.5, .25, .25]], F32))
SAMPLERS = {
    "uniform": lambda r, k: r.uniform(k, S, minval=-2., maxval=3.),
    "uniform_array_bounds": lambda r, k: r.uniform(k, (2, 3), minval=np.zeros(3, F32),
                                                   maxval=np.arange(1, 4, dtype=F32)),
    "normal": lambda r, k: r.normal(k, S),
    "normal_complex": lambda r, k: r.normal(k, S, np.complex64),
    "truncated_normal": lambda r, k: r.truncated_normal(k, -1., 2., S),
    "truncated_normal_arrays": lambda r, k: r.truncated_normal(k, np.array([-1., 0.], F32), 1.),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, S),
    "bernoulli_p_array": lambda r, k: r.bernoulli(k, np.array([.1, .9], F32)),
    "bernoulli_high": lambda r, k: r.bernoulli(k, 0.3, S, mode="high"),
    "randint": lambda r, k: r.randint(k, S, -5, 17),
    "randint_uint8": lambda r, k: r.randint(k, S, 0, 255, np.uint8),
    "randint_int16": lambda r, k: r.randint(k, (3, 4), -300, 300, np.int16),
    "randint_array_bounds": lambda r, k: r.randint(k, (2, 3), np.array([0, 5, 10]), 20),
    "choice": lambda r, k: r.choice(k, 10, (4,)),
    "choice_no_replace": lambda r, k: r.choice(k, 10, (4,), replace=False),
    "choice_p": lambda r, k: r.choice(k, 5, (6,), p=P5),
    "choice_p_no_replace": lambda r, k: r.choice(k, 5, (3,), replace=False, p=P5),
    "choice_array_axis": lambda r, k: r.choice(k, np.arange(12.).reshape(3, 4).astype(F32),
                                               (2,), axis=1),
    "permutation_int": lambda r, k: r.permutation(k, 10),
    "permutation_array_axis": lambda r, k: r.permutation(k, np.arange(12).reshape(3, 4),
                                                         axis=1),
    "permutation_independent": lambda r, k: r.permutation(
        k, np.arange(12).reshape(3, 4), axis=1, independent=True),
    "categorical": lambda r, k: r.categorical(k, LOGITS),
    "categorical_axis0_shape": lambda r, k: r.categorical(k, LOGITS, axis=0, shape=(4, 3)),
    "categorical_no_replace": lambda r, k: r.categorical(k, np.log(P5), shape=(3,),
                                                         replace=False),
    "gumbel": lambda r, k: r.gumbel(k, S),
    "gumbel_high": lambda r, k: r.gumbel(k, S, mode="high"),
    "gumbel_highest": lambda r, k: r.gumbel(k, (2, 3), mode="highest"),
    "exponential": lambda r, k: r.exponential(k, S),
    "laplace": lambda r, k: r.laplace(k, S),
    "logistic": lambda r, k: r.logistic(k, S),
    "cauchy": lambda r, k: r.cauchy(k, S),
    "rademacher": lambda r, k: r.rademacher(k, S),
    "multivariate_normal": lambda r, k: r.multivariate_normal(k, np.zeros(3, F32), COV, (4,)),
    "multivariate_normal_svd": lambda r, k: r.multivariate_normal(k, np.ones(3, F32), COV,
                                                                  method="svd"),
    "multivariate_normal_eigh": lambda r, k: r.multivariate_normal(k, np.ones(3, F32), COV,
                                                                   method="eigh"),
    "orthogonal": lambda r, k: r.orthogonal(k, 3),
    "orthogonal_m": lambda r, k: r.orthogonal(k, 2, (2,), m=4),
    "ball": lambda r, k: r.ball(k, 3, 2, (2,)),
    "maxwell": lambda r, k: r.maxwell(k, S),
    "double_sided_maxwell": lambda r, k: r.double_sided_maxwell(k, 1., 2., S),
    "weibull_min": lambda r, k: r.weibull_min(k, 2., 1.5, S),
    "pareto": lambda r, k: r.pareto(k, 3., S),
    "geometric": lambda r, k: r.geometric(k, 0.3, S),
    "triangular": lambda r, k: r.triangular(k, 0., 1., 3., S),
    "lognormal": lambda r, k: r.lognormal(k, 0.5, S),
    "rayleigh": lambda r, k: r.rayleigh(k, 2., S),
    "wald": lambda r, k: r.wald(k, 1.5, S),
    "gamma": lambda r, k: r.gamma(k, np.array([0.5, 1., 3.], F32)),
    "gamma_shape": lambda r, k: r.gamma(k, 2., (2, 2)),
    "loggamma": lambda r, k: r.loggamma(k, np.array([0.01, 1., 3.], F32)),
    "beta": lambda r, k: r.beta(k, 2., 3., S),
    "dirichlet": lambda r, k: r.dirichlet(k, np.array([1., 2., 3.], F32), (2,)),
    "t": lambda r, k: r.t(k, 3., S),
    "chisquare": lambda r, k: r.chisquare(k, 3., S),
    "f": lambda r, k: r.f(k, 3., 5., S),
    "generalized_normal": lambda r, k: r.generalized_normal(k, 1.5, S),
    "poisson": lambda r, k: r.poisson(k, np.array([0.5, 3., 30., 0.], F32)),
    "poisson_shape": lambda r, k: r.poisson(k, 4., (5,), np.int16),
    "binomial": lambda r, k: r.binomial(k, np.array([5., 100., 20.], F32),
                                        np.array([.3, .6, .9], F32)),
    "multinomial": lambda r, k: r.multinomial(k, 10., np.array([.2, .3, .5], F32)),
}


# Samplers whose last step is a matmul/factorization: XLA may order sums differently.
ULPS = {"multivariate_normal": 4, "multivariate_normal_svd": 4,
        "multivariate_normal_eigh": 4, "orthogonal": 4, "orthogonal_m": 4}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_bits_match_jax_eager(name):
    assert_same(*both(SAMPLERS[name], 17), ULPS.get(name, 1))


# The loop-based samplers (gamma family, poisson, binomial) cost seconds of XLA compile
# each; gamma stands for them here (their eager form is a jit of the same code).
UNDER_JIT = ("uniform", "normal", "normal_complex", "randint_uint8", "bernoulli", "choice_p",
             "permutation_array_axis", "categorical_no_replace", "gumbel_high", "gamma",
             "multivariate_normal", "rademacher", "truncated_normal", "wald")


def test_samplers_under_jit_match_jax():
    # One program per library: XLA fuses a whole program differently from one sampler
    # at a time (JAX's own jit and eager results differ by an ulp), hence 2 ulps here.
    mf = mjax.jit(lambda k: {n: SAMPLERS[n](mr, k) for n in UNDER_JIT})
    jf = jax.jit(lambda k: {n: SAMPLERS[n](jr, k) for n in UNDER_JIT})
    for seed in (0, 17):
        got, want = mf(mr.key(seed)), jf(jr.key(seed))
        for name in UNDER_JIT:
            assert_same(got[name], want[name], max(2, ULPS.get(name, 1)))


def test_raw_keys_match_jax():
    for name in ("normal", "randint", "choice_p", "gamma", "permutation_int"):
        assert_same(SAMPLERS[name](mr, mr.PRNGKey(5)), SAMPLERS[name](jr, jr.PRNGKey(5)))


FLOAT_SAMPLERS = ("uniform", "normal", "exponential", "gumbel", "laplace", "logistic",
                  "cauchy")


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16, np.float32])
def test_float_dtypes_grid(dtype):
    def grid(r, k):
        out = {}
        for shape in [(), (5,), (2, 3)]:
            for name in FLOAT_SAMPLERS:
                out[name, shape] = getattr(r, name)(k, shape, dtype)
            out["truncated_normal", shape] = r.truncated_normal(k, -1.5, 0.5, shape, dtype)
        return out
    mf, jf = mjax.jit(lambda k: grid(mr, k)), jax.jit(lambda k: grid(jr, k))
    for seed in (0, 1, 99):
        got, want = mf(mr.key(seed)), jf(jr.key(seed))
        for name in want:
            assert_same(got[name], want[name])
    assert_same(mr.normal(mr.key(2), (3,), dtype), jr.normal(jr.key(2), (3,), dtype))


def test_key_ops_under_disable_jit():
    with mjax.disable_jit():
        assert_same(mr.normal(mr.key(1), (3,)), jr.normal(jr.key(1), (3,)))
        assert_same(mr.key_data(mr.split(mr.key(1))), jr.key_data(jr.split(jr.key(1))))


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "raw"])
def test_samplers_under_vmap(typed):
    mk = mr.split(mr.key(1) if typed else mr.PRNGKey(1), 4)
    jk = jr.split(jr.key(1) if typed else jr.PRNGKey(1), 4)

    def body(r, k):
        return (r.normal(k, (3,)), r.randint(k, (2,), 0, 10), r.uniform(k, (), F32, -1., 1.),
                r.bits(k, (2,)), r.choice(k, 5, (2,), p=P5), r.permutation(k, 6))
    for a, b in zip(mjax.vmap(lambda k: body(mr, k))(mk), jax.vmap(lambda k: body(jr, k))(jk)):
        assert_same(a, b)
    # Keys made, split and folded under vmap.
    a = mjax.vmap(lambda k: mr.split(k, 3))(mk)
    b = jax.vmap(lambda k: jr.split(k, 3))(jk)
    assert_same(mr.key_data(a), jr.key_data(b))
    a = mjax.vmap(lambda i: mr.key_data(mr.fold_in(mr.key(0), i)))(np.arange(5))
    b = jax.vmap(lambda i: jr.key_data(jr.fold_in(jr.key(0), i)))(np.arange(5))
    assert_same(a, b)
    a = mjax.vmap(lambda s: mr.key_data(mr.key(s)))(np.arange(3))
    assert_same(a, jax.vmap(lambda s: jr.key_data(jr.key(s)))(np.arange(3)))


def test_loop_samplers_under_vmap():
    mk, jk = mr.split(mr.key(2), 3), jr.split(jr.key(2), 3)

    def body(r, k):
        return r.gamma(k, 2.0), r.beta(k, 0.5, 2.0), r.poisson(k, 3.0, (2,))
    for a, b in zip(mjax.vmap(lambda k: body(mr, k))(mk), jax.vmap(lambda k: body(jr, k))(jk)):
        assert_same(a, b, 2)


def test_keys_through_loops_cond_jit_and_pytrees():
    def run(lib, r):
        def body(carry, _):
            k, sub = r.split(carry[0])
            return (k,), r.normal(sub, (2,))
        _, ys = lib.lax.scan(body, (r.key(0),), None, length=4)
        k2 = lib.lax.fori_loop(0, 3, lambda i, k: r.fold_in(k, i), r.key(1))
        c = lib.lax.cond(True, lambda k: r.uniform(k, (2,)), lambda k: r.normal(k, (2,)),
                         r.key(2))
        seeded = lib.jit(lambda s: r.key_data(r.key(s)))(7)
        d = lib.jit(lambda t: {"a": r.split(t["k"]), "b": t["x"] + 1})(
            {"k": r.key(3), "x": 1.0})
        return ys, r.key_data(k2), c, seeded, r.key_data(d["a"])
    for a, b in zip(run(mjax, mr), run(jax, jr)):
        assert_same(a, b)


def test_signatures_match_jax():
    import inspect
    for name in mr.__all__:
        j = getattr(jr, name, None)
        if j is None or isinstance(j, type) or not callable(j):
            continue
        pj = [(p.name, p.kind, p.default) for p in inspect.signature(j).parameters.values()]
        pm = [(p.name, p.kind, p.default) for p in
              inspect.signature(getattr(mr, name)).parameters.values()]
        assert [p[:2] for p in pm] == [p[:2] for p in pj], name
        assert [repr(p[2]) for p in pm] == [repr(p[2]) for p in pj], name
    assert_same(mr.t(mr.key(1), df=3., shape=(2,)), jr.t(jr.key(1), df=3., shape=(2,)))


def test_sampler_argument_errors():
    k = mr.key(0)
    with pytest.raises(ValueError, match="must be a float dtype"):
        mr.uniform(k, (2,), np.int32)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        mr.randint(k, (2,), 0, 3, np.float32)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        mr.bernoulli(k, np.array([[.1], [.2]], F32), (3,))
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        mr.choice(k, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="bernoulli probability `p` must have a floating"):
        mr.bernoulli(k, 1)
    with pytest.raises(ValueError, match="must be an unsigned int dtype"):
        mr.bits(k, (2,), np.int32)
    with pytest.raises(OverflowError, match="out of bounds for uint32"):
        mr.fold_in(k, -1)


# ---- distributions ---------------------------------------------------------------------
N = 20000


def _ks(samples, cdf):
    assert scipy.stats.kstest(np.asarray(samples, np.float64).ravel(), cdf).pvalue > 1e-3


def _cdfs():
    st = scipy.stats
    return {
        "uniform": (lambda k: mr.uniform(k, (N,)), st.uniform.cdf),
        "normal": (lambda k: mr.normal(k, (N,)), st.norm.cdf),
        "truncated_normal": (lambda k: mr.truncated_normal(k, -1., 2., (N,)),
                             st.truncnorm(-1, 2).cdf),
        "exponential": (lambda k: mr.exponential(k, (N,)), st.expon.cdf),
        "laplace": (lambda k: mr.laplace(k, (N,)), st.laplace.cdf),
        "logistic": (lambda k: mr.logistic(k, (N,)), st.logistic.cdf),
        "cauchy": (lambda k: mr.cauchy(k, (N,)), st.cauchy.cdf),
        "gumbel": (lambda k: mr.gumbel(k, (N,)), st.gumbel_r.cdf),
        "gamma": (lambda k: mr.gamma(k, 2.5, (N,)), st.gamma(2.5).cdf),
        "gamma_small": (lambda k: mr.gamma(k, 0.3, (N,)), st.gamma(0.3).cdf),
        "loggamma": (lambda k: jnp.exp(mr.loggamma(k, 0.7, (N,))), st.gamma(0.7).cdf),
        "beta": (lambda k: mr.beta(k, 2., 3., (N,)), st.beta(2, 3).cdf),
        "t": (lambda k: mr.t(k, 4., (N,)), st.t(4).cdf),
        "chisquare": (lambda k: mr.chisquare(k, 3., (N,)), st.chi2(3).cdf),
        "f": (lambda k: mr.f(k, 3., 7., (N,)), st.f(3, 7).cdf),
        "maxwell": (lambda k: mr.maxwell(k, (N,)), st.maxwell.cdf),
        "weibull_min": (lambda k: mr.weibull_min(k, 1., 1.5, (N,)), st.weibull_min(1.5).cdf),
        "pareto": (lambda k: mr.pareto(k, 3., (N,)), st.pareto(3).cdf),
        "triangular": (lambda k: mr.triangular(k, 0., 1., 3., (N,)),
                       st.triang(1 / 3, loc=0, scale=3).cdf),
        "lognormal": (lambda k: mr.lognormal(k, 0.5, (N,)), st.lognorm(0.5).cdf),
        "rayleigh": (lambda k: mr.rayleigh(k, 2., (N,)), st.rayleigh(scale=2).cdf),
        "wald": (lambda k: mr.wald(k, 1.5, (N,)), st.invgauss(1.5).cdf),
        "generalized_normal": (lambda k: mr.generalized_normal(k, 1.5, (N,)),
                               st.gennorm(1.5).cdf),
        "double_sided_maxwell": (lambda k: mr.double_sided_maxwell(k, 0., 1., (N,)),
                                 lambda x: 0.5 + np.sign(x) * 0.5 * st.maxwell.cdf(np.abs(x))),
    }


def test_continuous_distributions_ks():
    cases = _cdfs()
    keys = mr.split(mr.key(2024), len(cases))
    samples = mjax.jit(lambda ks: {n: f(ks[i]) for i, (n, (f, _)) in
                                   enumerate(cases.items())})(keys)
    for name, (_, cdf) in cases.items():
        x = np.asarray(samples[name], np.float64)
        assert scipy.stats.kstest(x, cdf).pvalue > 1e-3, name


def test_discrete_and_multivariate_moments():
    def draw(k):
        ks = mr.split(k, 13)
        return dict(
            b=mr.bernoulli(ks[0], 0.3, (N,)),
            r=mr.randint(ks[1], (N,), -3, 5),
            g=mr.geometric(ks[2], 0.25, (N,)),
            p=mr.poisson(ks[3], np.array([2., 25.], F32), (N // 2, 2)),
            bn=mr.binomial(ks[4], 40., np.array([0.2, 0.7], F32), (N // 2, 2)),
            rad=mr.rademacher(ks[5], (N,)),
            c=mr.categorical(ks[6], np.log(P5), shape=(N,)),
            ch=mr.choice(ks[7], 5, (N,), p=P5),
            perm=mr.permutation(ks[8], 50),
            mvn=mr.multivariate_normal(ks[9], np.ones(3, F32), COV, (N,)),
            d=mr.dirichlet(ks[10], np.array([1., 2., 3.], F32), (N,)),
            q=mr.orthogonal(ks[11], 4, (3,)),
            pts=mr.ball(ks[12], 3, 2, (N,)),
        )
    o = {n: np.asarray(v) for n, v in mjax.jit(draw)(mr.key(7)).items()}
    assert abs(o["b"].mean() - 0.3) < 0.02
    assert o["r"].min() == -3 and o["r"].max() == 4 and abs(o["r"].mean() - 0.5) < 0.1
    assert o["g"].min() >= 1 and abs(o["g"].mean() - 4) < 0.15
    np.testing.assert_allclose(o["p"].mean(0), [2, 25], rtol=0.03)
    np.testing.assert_allclose(o["p"].var(0), [2, 25], rtol=0.1)
    np.testing.assert_allclose(o["bn"].mean(0), [8, 28], rtol=0.02)
    np.testing.assert_allclose(o["bn"].var(0), [6.4, 8.4], rtol=0.1)
    assert set(np.unique(o["rad"])) == {-1, 1} and abs(o["rad"].mean()) < 0.03
    np.testing.assert_allclose(np.bincount(o["c"], minlength=5) / N, P5, atol=0.015)
    np.testing.assert_allclose(np.bincount(o["ch"], minlength=5) / N, P5, atol=0.015)
    assert sorted(o["perm"]) == list(range(50))
    np.testing.assert_allclose(np.cov(o["mvn"].T), COV, atol=0.08)
    np.testing.assert_allclose(o["mvn"].mean(0), 1, atol=0.03)
    np.testing.assert_allclose(o["d"].sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(o["d"].mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    q = o["q"]
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
    assert np.all(np.linalg.norm(o["pts"], axis=-1) <= 1 + 1e-6)
    mn = np.asarray(mr.multinomial(mr.key(1), 10., np.array([.2, .3, .5], F32),
                                   shape=(N // 4, 3)))
    np.testing.assert_allclose(mn.sum(-1), 10)
    np.testing.assert_allclose(mn.mean(0), [2, 3, 5], rtol=0.05)


# ---- gradients -------------------------------------------------------------------------
def test_gradients_through_samples_match_jax():
    a = np.array([0.5, 2., 7.], F32)

    def loss(r, k, x):
        ks = r.split(k, 5)
        return ((x * r.normal(ks[0], (3,))).sum() + 2 * r.gamma(ks[1], x).sum()
                + 3 * (r.loggamma(ks[2], x) ** 2).sum() + 4 * r.beta(ks[3], x, 2.).sum()
                + 5 * (r.dirichlet(ks[4], x) ** 2).sum())
    got = mjax.grad(lambda x: loss(mr, mr.key(0), x))(a)
    np.testing.assert_allclose(got, jax.grad(lambda x: loss(jr, jr.key(0), x))(a), rtol=2e-5,
                               atol=1e-6)
    got = mjax.grad(lambda x: (x * mr.normal(mr.key(1), (3,))).sum())(a)
    np.testing.assert_allclose(got, mr.normal(mr.key(1), (3,)))


def test_random_gamma_grad_against_the_cdf():
    # dx/da at fixed CDF value: -(dF/da) / (dF/dx), F = scipy's regularized gammainc.
    from mjax.random.gamma_grad import random_gamma_grad
    from scipy.special import gammainc
    a = np.array([0.3, 0.3, 1.7, 1.7, 9.0, 9.0, 30.0])
    x = np.array([0.05, 2.5, 0.8, 4.0, 6.0, 14.0, 31.0])
    h = 1e-6
    dfda = (gammainc(a + h, x) - gammainc(a - h, x)) / (2 * h)
    want = -dfda / scipy.stats.gamma(a).pdf(x)
    with x64(True):
        got = np.asarray(random_gamma_grad(a, x))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got32 = np.asarray(random_gamma_grad(a.astype(F32), x.astype(F32)))
    np.testing.assert_allclose(got32, want, rtol=2e-3)


@pytest.mark.parametrize("name,args,dtype", [
    ("uniform", ((3,),), "float64"), ("normal", ((3,),), "float64"),
    ("randint", ((3,), 0, 5), "int64"), ("bits", ((3,),), "uint64"),
    ("gamma", (1.0, (3,)), "float64"), ("uniform", ((3,),), "float32")])
def test_64_bit_dtype_without_x64_warns_as_jax(name, args, dtype):
    # (Common Gotchas: random.uniform(key, dtype=jnp.float64) warns and gives float32)
    import warnings

    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.random, name)(lib.random.key(0), *args, dtype=dtype)
        return out.dtype, [(w.category, str(w.message)) for w in caught]
    assert run(mjax) == run(jax)


def test_typeof_of_key_arrays_as_jax():
    # (101 random page: print(jax.typeof(key)) is key<fry>[])
    def run(lib):
        k = lib.random.key(42)
        seen = []
        lib.jit(lambda k: seen.append(str(lib.typeof(k))) or k)(k)
        return [str(lib.typeof(k)), repr(lib.typeof(k)), k.dtype.name,
                str(lib.typeof(lib.random.split(k))),
                str(lib.typeof(lib.random.key(0, impl="rbg"))), *seen]
    assert run(mjax) == run(jax)


def test_abstract_keys_in_eval_shape_and_lower_as_jax():
    # Key results are ShapeDtypeStructs of key dtype; such structs are accepted as
    # arguments (eval_shape, jit(...).lower), as in JAX.
    def run(j):
        k = j.random.key(0)
        sds = j.ShapeDtypeStruct((3,), k.dtype)
        return [repr(j.eval_shape(lambda k: j.random.split(k), k)),
                repr(j.eval_shape(lambda k: {"a": k, "b": j.numpy.ones(2)}, k)),
                repr(j.eval_shape(j.vmap(lambda k: j.random.normal(k, (2,))), sds)),
                repr(j.jit(lambda k: j.random.split(k, 4)).lower(
                    j.ShapeDtypeStruct((), k.dtype)).out_info),
                repr(j.eval_shape(lambda k: j.random.split(k), j.random.key(0, impl="rbg"))),
                repr(sds)]
    assert run(mjax) == run(jax)


def _jit_names(jaxpr):
    return [(e.params["name"], _jit_names(e.params["jaxpr"].jaxpr))
            for e in jaxpr.eqns if e.primitive.name in ("jit", "pjit")]


def test_traced_samplers_are_nested_jits_as_jax():
    """uniform, normal and bernoulli traced into a jaxpr: JAX's nest of jits (_normal >
    _normal_real > _uniform, _bernoulli > _uniform), their literal arguments passed in
    (a Pallas kernel's Mosaic makes them constants at the call); the values JAX's."""
    def cases(J):
        return (lambda k: J.random.uniform(k, (8,), minval=-1.0, maxval=2.0),
                lambda k: J.random.normal(k, (8,)),
                lambda k: J.random.bernoulli(k, 0.3, (8,)))
    for f, g in zip(cases(jax), cases(mjax)):
        want, got = (J.make_jaxpr(h)(J.random.key(3)) for J, h in ((jax, f), (mjax, g)))
        assert _jit_names(got.jaxpr) == _jit_names(want.jaxpr) != []
        np.testing.assert_array_equal(mjax.jit(g)(mjax.random.key(3)),
                                      jax.jit(f)(jax.random.key(3)))
