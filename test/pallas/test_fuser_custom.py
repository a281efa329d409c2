"""fuser.custom_fusion and fuser.evaluate against JAX's (the same programs with jax and
with mjax) and NumPy: JAX's fusion_test custom fusion (its eval rule, pull and push
rules, and its Pallas implementation), a custom fusion's block specs, and the fusible
matmul plus an iota custom fusion (tpu_fusible_matmul_test's, interpreted)."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it)
from fuser_programs import fusible_matmul, namespace

RNG = np.random.RandomState(0)
X = RNG.randn(4, 4).astype(np.float32)
Y = RNG.randn(1, 4).astype(np.float32)
Z = RNG.randn(1, 4).astype(np.float32)
MX = RNG.randn(16, 256).astype(np.float32)
MY = RNG.randn(256, 256).astype(np.float32)


def _adder(ns):
    jnp, fuser = ns.jnp, ns.fuser
    const, const2, const3 = (jnp.array(v, jnp.float32) for v in (1.0, 2.0, 3.0))

    @fuser.custom_fusion
    def c(x, y):
        return x + y + const
    c.def_pull_block_spec(lambda bss: (bss[0], bss[0]))
    c.def_push_block_spec(lambda bss: (bss[0],))
    c.def_eval_rule(lambda _, x, y: (c(x, y),))
    c.def_pallas_impl(lambda x, y: x + y + const2 + const3)
    return c


def _custom_program(lib):
    ns = namespace(lib)
    c = _adder(ns)

    @ns.fuser.fusible(output_fusion_prefix=(True, True))
    def f(x_fn, y_fn, z_fns):
        z1, z2 = z_fns
        return (z1 or (lambda v: v))(x_fn()), (z2 or (lambda v: v))(y_fn())

    def g(x, y, z):
        x, y = f(x, c(y, z))
        return c(x, z), y * 2
    return ns, g


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_custom_fusion_in_fuse(lib):
    ns, g = _custom_program(lib)
    for run in (g, ns.jax.jit(ns.fuser.fuse(g))):
        a, b = run(X, Y, Z)
        np.testing.assert_allclose(np.asarray(a), X + Z + 1.0, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(b), (Y + Z + 1.0) * 2, rtol=1e-6)


def _custom_block_specs(lib):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    t = jax.ShapeDtypeStruct((64, 256), jnp.float32)

    @fuser.custom_fusion
    def fn(x, y):
        return x * 2 + y
    fn.def_pull_block_spec(lambda bss: (bss[0], bss[0]))
    fn.def_push_block_spec(lambda bss: (bss[0],))
    fn.def_eval_rule(lambda _, x, y: (fn(x, y),))
    f2, values, sps = fuser.get_fusion_values(fn, t, t)
    spec = pl.BlockSpec((16, 128), lambda i, j, k: (i, j))
    kfn, (vspecs, xs, ys), _ = fuser.pull_block_spec(
        f2, spec, grid_len=3,
        scalar_prefetch_handler=fuser.make_scalar_prefetch_handler())(values, t, t)
    blk = MY[:16, :128]
    out = np.asarray(kfn((0, 0, 0), sps, values, blk, blk + 1))
    pushed = fuser.push_block_spec(fn, spec, spec)(t, t)
    return (len(values), len(sps), len(vspecs), tuple(xs.block_shape),
            tuple(int(i) for i in ys.index_map(1, 2, 0)), tuple(pushed.block_shape),
            tuple(int(i) for i in pushed.index_map(3, 1, 0))), out


def test_custom_fusion_block_specs_match_jax():
    got, got_out = _custom_block_specs("mjax")
    want, want_out = _custom_block_specs("jax")
    assert got == want
    np.testing.assert_allclose(got_out, want_out)
    np.testing.assert_allclose(got_out, MY[:16, :128] * 3 + 1, rtol=1e-6, atol=1e-6)


def _matmul_iota(lib):
    ns = namespace(lib)
    jnp, fuser = ns.jnp, ns.fuser

    def make_iota(shape, dtype):
        @fuser.custom_fusion
        def iota(start=0):
            return jnp.broadcast_to(jnp.astype(jnp.arange(shape[-1]) + start, dtype),
                                    shape)
        iota.def_pull_block_spec(lambda bss: (None,))

        @iota.def_eval_rule
        def rule(ctx, _):
            s = ctx.out_block_specs[0].block_shape
            i = ctx.out_block_indices[0][-1]
            return (make_iota(s, dtype)(s[-1] * i),)
        return iota
    it = make_iota((16, 256), jnp.float32)
    f = ns.jax.jit(fuser.fuse(lambda x, y: fusible_matmul(ns, x, y) + it()))
    return np.asarray(f(MX, MY))


def test_matmul_plus_iota_custom_fusion():
    got, want = _matmul_iota("mjax"), _matmul_iota("jax")
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got, MX @ MY + np.arange(256), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_evaluate(lib):
    ns = namespace(lib)
    jax, jnp, fuser = ns.jax, ns.jnp, ns.fuser
    out = fuser.evaluate(lambda x, y: jnp.sin(x).T * y)(X, Y.T)
    np.testing.assert_allclose(np.asarray(out), np.sin(X).T * Y.T, rtol=1e-6)
    with pytest.raises(ValueError, match="Transpose not allowed."):
        fuser.evaluate(lambda x: x.T, allow_transpose=False)(X)
    with pytest.raises(NotImplementedError, match="cond"):
        fuser.evaluate(lambda x, p: jax.lax.cond(p, lambda: x, lambda: x * 2))(X, True)


def test_custom_fusion_without_rules_is_an_error():
    ns = namespace("mjax")
    c = ns.fuser.custom_fusion(lambda x: x + 1)
    with pytest.raises(AssertionError, match="def_eval_rule"):
        c(X)
