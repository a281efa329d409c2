"""Collectives over vmap's named axes (lax.psum, pmean, pmax, pmin, all_gather,
psum_scatter, all_to_all, ppermute, pshuffle, axis_index) against jax."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
from mjax import lax as mlax
from frontend_util import check

RNG = np.random.default_rng(1)
X = RNG.normal(size=(4, 3)).astype(np.float32)


def _both(make, *args, in_axes=0, out_axes=0, axis_name="i", jit=True, **kw):
    """Runs vmap(make(lax)) in mjax (eagerly and under jit) and in jax; compares."""
    want = jax.vmap(make(jax.lax), in_axes=in_axes, out_axes=out_axes,
                    axis_name=axis_name, **kw)(*map(jnp.asarray, args))
    f = mjax.vmap(make(mlax), in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, **kw)
    check(f(*args), want)
    if jit:
        check(mjax.jit(f)(*args), want)


@pytest.mark.parametrize("name", ["psum", "pmax", "pmin", "pmean"])
@pytest.mark.parametrize("in_axes", [0, 1])
def test_reductions(name, in_axes):
    x = X if in_axes == 0 else X.T
    _both(lambda lax: lambda v: getattr(lax, name)(v, "i") * 2.0 + v, x, in_axes=in_axes)


@pytest.mark.parametrize("name", ["psum", "pmax", "pmin", "pmean"])
def test_reductions_of_unbatched_values(name):
    # psum(1, "i") is the axis size; an unbatched value is the same on every member.
    _both(lambda lax: lambda v, w: getattr(lax, name)(w, "i") + v, X, X[0], in_axes=(0, None))


def test_psum_of_python_scalar_is_weak_int():
    got = mjax.vmap(lambda v: mlax.psum(1, "i"), axis_name="i")(X)
    want = jax.vmap(lambda v: jax.lax.psum(1, "i"), axis_name="i")(jnp.asarray(X))
    check(got, want)
    got2 = mjax.vmap(lambda v: v * mlax.psum(1, "i"), axis_name="i")(X)
    check(got2, jax.vmap(lambda v: v * jax.lax.psum(1, "i"), axis_name="i")(jnp.asarray(X)))


@pytest.mark.parametrize("name", ["psum", "pmax", "pmin", "pmean"])
def test_reductions_of_bools_and_ints(name):
    # psum counts True members as int32; pmax/pmin keep bool; pmean of ints is float.
    _both(lambda lax: lambda v: getattr(lax, name)(v > 0, "i"), X)
    _both(lambda lax: lambda v: getattr(lax, name)((v * 10).astype(np.int32), "i"), X)


def test_psum_over_pytrees():
    tree = {"a": X, "b": (X[:, :2], X[:, 0])}
    got = mjax.vmap(lambda t: mlax.psum(t, "i"), axis_name="i")(tree)
    want = jax.vmap(lambda t: jax.lax.psum(t, "i"), axis_name="i")(tree)
    for g, w in zip(mjax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        check(g, w)


def test_normalize_per_example_with_pmean():
    # The classic use: batch statistics inside a per-example function.
    def make(lax):
        def f(v):
            mu = lax.pmean(v, "i")
            var = lax.pmean((v - mu) ** 2, "i")
            return (v - mu) / (var + 1e-5) ** 0.5
        return f
    _both(make, X)


def test_nested_vmaps_with_two_names():
    xs = RNG.normal(size=(2, 4, 3)).astype(np.float32)

    def make(lax):
        def f(v):
            return (lax.psum(v, "i") + 10 * lax.psum(v, "j") + 100 * lax.psum(v, ("i", "j"))
                    + lax.pmax(v, ("j", "i")))
        return f
    want = jax.vmap(jax.vmap(make(jax.lax), axis_name="j"), axis_name="i")(xs)
    got = mjax.vmap(mjax.vmap(make(mlax), axis_name="j"), axis_name="i")(xs)
    check(got, want)
    want = jax.vmap(jax.vmap(make(jax.lax), axis_name="j", in_axes=1), axis_name="i",
                    in_axes=2, out_axes=1)(xs)
    got = mjax.vmap(mjax.vmap(make(mlax), axis_name="j", in_axes=1), axis_name="i",
                    in_axes=2, out_axes=1)(xs)
    check(got, want)


def test_axis_index():
    _both(lambda lax: lambda v: lax.axis_index("i"), X)
    _both(lambda lax: lambda v: v * lax.axis_index("i"), X)
    xs = RNG.normal(size=(2, 4)).astype(np.float32)
    mf = mjax.vmap(mjax.vmap(lambda v: mlax.axis_index("i") * 10 + mlax.axis_index("j"),
                             axis_name="j"), axis_name="i")
    jf = jax.vmap(jax.vmap(lambda v: jax.lax.axis_index("i") * 10 + jax.lax.axis_index("j"),
                           axis_name="j"), axis_name="i")
    check(mf(xs), jf(xs))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather(axis, tiled):
    x = RNG.normal(size=(4, 2, 3)).astype(np.float32)
    if tiled and axis == -1:
        axis = 1
    _both(lambda lax: lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled) * 1.0, x)
    _both(lambda lax: lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled), x,
          in_axes=1)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter(dim, tiled):
    shape = [3, 3]
    shape[dim] = 8 if tiled else 4
    x = RNG.normal(size=(4, *shape)).astype(np.float32)
    _both(lambda lax: lambda v: lax.psum_scatter(v, "i", scatter_dimension=dim, tiled=tiled),
          x)


@pytest.mark.parametrize("split,concat", [(0, 1), (1, 0), (0, 0), (1, 1)])
@pytest.mark.parametrize("tiled", [False, True])
def test_all_to_all(split, concat, tiled):
    shape = [3, 2]
    shape[split] = 8 if tiled else 4
    x = RNG.normal(size=(4, *shape)).astype(np.float32)
    _both(lambda lax: lambda v: lax.all_to_all(v, "i", split, concat, tiled=tiled), x)
    _both(lambda lax: lambda v: lax.all_to_all(v, "i", split, concat, tiled=tiled),
          np.moveaxis(x, 0, 2), in_axes=2)


def test_ppermute_and_pshuffle():
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    _both(lambda lax: lambda v: lax.ppermute(v, "i", perm), X)
    _both(lambda lax: lambda v: lax.pshuffle(v, "i", [2, 0, 3, 1]), X)
    _both(lambda lax: lambda v, w: lax.ppermute(w, "i", perm) + v, X, X[0], in_axes=(0, None))


def test_ppermute_partial_perm_gives_zeros():
    # JAX's vmap rejects partial permutations; mjax gives what pmap would: zeros.
    got = mjax.vmap(lambda v: mlax.ppermute(v, "i", [(0, 2), (1, 0)]), axis_name="i")(X)
    want = np.zeros_like(X)
    want[2], want[0] = X[0], X[1]
    np.testing.assert_allclose(np.asarray(got), want)


def test_collective_inside_jit_inside_vmap():
    def make(lax, jit):
        return lambda v: jit(lambda u: lax.psum(u, "i") + lax.psum(1.0, "i"))(v)
    check(mjax.vmap(make(mlax, mjax.jit), axis_name="i")(X),
          jax.vmap(make(jax.lax, jax.jit), axis_name="i")(jnp.asarray(X)))
    # A jitted function whose arguments are all unbatched still sees the named axis.
    check(mjax.vmap(lambda v: v + mjax.jit(lambda: mlax.psum(2.0, "i"))(), axis_name="i")(X),
          jax.vmap(lambda v: v + jax.jit(lambda: jax.lax.psum(2.0, "i"))(),
                   axis_name="i")(jnp.asarray(X)))


@pytest.mark.parametrize("name", ["psum", "pmean"])
def test_vmap_of_grad_through_psum(name):
    def make(lax, grad):
        return grad(lambda v: getattr(lax, name)(lax.sin(v) * v, "i").sum())
    check(mjax.vmap(make(mlax, mjax.grad), axis_name="i")(X[:, 0]),
          jax.vmap(make(jax.lax, jax.grad), axis_name="i")(jnp.asarray(X[:, 0])))


def test_vmap_of_grad_through_all_gather_and_ppermute():
    w = np.arange(4.0, dtype=np.float32)

    def make(lax, grad):
        def f(v):
            g = lax.all_gather(v, "i")
            p = lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)])
            return (g ** 2 * w).sum() + p * 3.0
        return grad(f)
    check(mjax.vmap(make(mlax, mjax.grad), axis_name="i")(X[:, 0]),
          jax.vmap(make(jax.lax, jax.grad), axis_name="i")(jnp.asarray(X[:, 0])))


def test_grad_of_vmap_with_psum():
    def make(lax, vmap):
        return lambda x: vmap(lambda v: lax.psum(v * v, "i") * v, axis_name="i")(x).sum()
    check(mjax.grad(make(mlax, mjax.vmap))(X[:, 0]),
          jax.grad(make(jax.lax, jax.vmap))(jnp.asarray(X[:, 0])))


# ---- errors --------------------------------------------------------------------------------
def test_unbound_axis_name_outside_vmap():
    with pytest.raises(NameError, match="unbound axis name: i"):
        mlax.psum(1.0, "i")
    with pytest.raises(NameError, match="unbound axis name: i"):
        mjax.jit(lambda x: mlax.psum(x, "i"))(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        mlax.axis_index("i")


def test_unbound_axis_name_inside_other_vmap():
    with pytest.raises(NameError, match="unbound axis name: j"):
        mjax.vmap(lambda v: mlax.psum(v, "j"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        mjax.vmap(lambda v: mlax.all_gather(v, "i"))(X)
    # The name is unbound again once the vmap has been traced.
    mjax.vmap(lambda v: mlax.psum(v, "i"), axis_name="i")(X)
    with pytest.raises(NameError):
        mlax.pmax(1.0, "i")


def test_bad_arguments():
    with pytest.raises(ValueError, match="permutation"):
        mjax.vmap(lambda v: mlax.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(X)
    with pytest.raises(ValueError, match="outside axis"):
        mjax.vmap(lambda v: mlax.ppermute(v, "i", [(0, 7)]), axis_name="i")(X)
    with pytest.raises(ValueError, match="cover 2 members, but the axis has 4"):
        mjax.vmap(lambda v: mlax.psum(v, "i", axis_index_groups=[[0, 1]]), axis_name="i")(X)
    with pytest.raises(TypeError, match="psum_scatter"):
        mjax.vmap(lambda v: mlax.psum_scatter(v, "i"), axis_name="i")(X)
    with pytest.raises(ValueError, match="lax.all_gather: axis 3 is out of bounds for rank 2"):
        mjax.vmap(lambda v: mlax.all_gather(v, "i", axis=3), axis_name="i")(X)
    with pytest.raises(NotImplementedError, match="several axis names"):
        mjax.vmap(mjax.vmap(lambda v: mlax.all_gather(v, ("i", "j")), axis_name="j"),
                  axis_name="i")(X[:, :, None])
    with pytest.raises(NotImplementedError, match="only string axis names"):
        mlax.psum(X, 0)


def test_lowering_an_unexpanded_collective_is_a_clear_error():
    import subprocess
    import sys
    ir = ('func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n'
          '  %0 = "jaxpr.psum"(%x) {axes = ["i"]} : (tensor<3xf32>) -> tensor<3xf32>\n'
          '  return %0 : tensor<3xf32>\n}\n')
    proc = subprocess.run([sys.executable, "-m", "mjax.passes.opt", "-", "--jaxpr-to-stablehlo"],
                          input=ir, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "names axis 'i', which no enclosing vmap binds" in proc.stderr


@pytest.mark.parametrize("kind", ["all_gather", "all_gather_tiled", "psum_scatter",
                                  "all_to_all", "ppermute", "axis_index"])
def test_outer_axis_collectives_pass_through_an_inner_vmap(kind):
    # The inner vmap (axis "j") leaves collectives over "i" for the outer vmap.
    xs = RNG.normal(size=(4, 2, 4, 3)).astype(np.float32)

    def make(lax):
        def f(v):   # v: (4, 3)
            if kind == "all_gather":
                return lax.all_gather(v, "i", axis=1)
            if kind == "all_gather_tiled":
                return lax.all_gather(v, "i", tiled=True)
            if kind == "psum_scatter":
                return lax.psum_scatter(v, "i")
            if kind == "all_to_all":
                return lax.all_to_all(v, "i", 0, 1)
            if kind == "ppermute":
                return lax.ppermute(v, "i", [(0, 3), (1, 0), (2, 1), (3, 2)])
            return v * lax.axis_index("i") + lax.axis_index("j")
        return f
    for data, outer, inner in [(xs, 0, 0), (np.moveaxis(xs, 0, 1), 1, 0),
                               (np.moveaxis(xs, 1, 2), 0, 1)]:
        if kind == "psum_scatter":   # jax's nested vmap of it fails: loop over "j"
            per_j = np.moveaxis(np.moveaxis(data, outer, 0), inner + 1, 1)
            want = np.stack([jax.vmap(make(jax.lax), axis_name="i")(per_j[:, j])
                             for j in range(per_j.shape[1])], axis=1)
        else:
            want = jax.vmap(jax.vmap(make(jax.lax), axis_name="j", in_axes=inner),
                            axis_name="i", in_axes=outer)(data)
        got = mjax.vmap(mjax.vmap(make(mlax), axis_name="j", in_axes=inner),
                        axis_name="i", in_axes=outer)(data)
        check(got, want)


def test_vmap_of_grad_wrt_unbatched_argument_and_of_jacrev():
    x = np.arange(1.0, 5.0, dtype=np.float32)
    f = lambda lax: lambda w, v: lax.psum(w * v, "i") + lax.pmean(w * v * v, "i")  # noqa: E731
    check(mjax.vmap(mjax.grad(f(mlax)), in_axes=(None, 0), axis_name="i")(2.0, x),
          jax.vmap(jax.grad(f(jax.lax)), in_axes=(None, 0), axis_name="i")(2.0, x))
    g = lambda lax: lambda v: lax.all_gather(v, "i") * v  # noqa: E731
    check(mjax.vmap(mjax.jacrev(g(mlax)), axis_name="i")(x),
          jax.vmap(jax.jacrev(g(jax.lax)), axis_name="i")(x))
    check(mjax.vmap(mjax.jacfwd(g(mlax)), axis_name="i")(x),
          jax.vmap(jax.jacfwd(g(jax.lax)), axis_name="i")(x))


def test_axis_size_and_pswapaxes():
    _both(lambda lax: lambda v: v * lax.axis_size("i"), X)
    x = RNG.normal(size=(4, 3, 4)).astype(np.float32)
    _both(lambda lax: lambda v: lax.pswapaxes(v, "i", 1), x)
    with pytest.raises(NameError, match="unbound axis name: k"):
        mlax.axis_size("k")
    with pytest.raises(NotImplementedError, match="to='reduced'"):
        mjax.vmap(lambda v: mlax.all_gather(v, "i", to="reduced"), axis_name="i")(X)


def test_grouped_psum_under_vmap():
    # JAX allows axis_index_groups in pmap only; mjax's pmap is a vmap over devices, so a
    # vmap takes them too. Each member gets the sum over its own group.
    got = mjax.vmap(lambda v: mlax.psum(v, "i", axis_index_groups=[[0, 3], [1, 2]]),
                    axis_name="i")(X)
    want = np.stack([X[0] + X[3], X[1] + X[2], X[1] + X[2], X[0] + X[3]])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("names", [("i", "j"), ("j", "i")])
def test_axis_index_over_several_names(names):
    def make(lib):
        inner = lib.vmap(lambda x: lib.lax.axis_index(names) + 0 * x, axis_name="j")
        return lib.vmap(inner, axis_name="i")
    x = np.zeros((2, 3), np.int32)
    check(make(mjax)(x), make(jax)(x))
    check(mjax.jit(make(mjax))(x), make(jax)(x))


@pytest.mark.parametrize("source", [0, 2, 3])
def test_pbroadcast_copies_the_source_members_value(source):
    """lax.pbroadcast (JAX's own has no CPU lowering, and its vmap rule fails): every
    member gets the source's leaves, bit for bit and in their dtype; its gradient sends
    every member's cotangent to the source."""
    tree = {"f": X, "b": X > 0, "i": (X * 10).astype(np.int32), "nz": -0.0 * np.abs(X)}
    out = mjax.vmap(lambda t: mlax.pbroadcast(t, "i", source), axis_name="i")(tree)
    for k, v in tree.items():
        got = np.asarray(out[k])
        assert got.dtype == v.dtype
        np.testing.assert_array_equal(got, np.broadcast_to(v[source], v.shape))
        assert np.array_equal(np.signbit(got), np.signbit(np.broadcast_to(v[source], v.shape)))
    g = mjax.grad(lambda x: mjax.vmap(lambda w: mlax.pbroadcast(w, "i", source),
                                      axis_name="i")(x).sum())(X)
    want = np.zeros_like(X)
    want[source] = X.shape[0]
    np.testing.assert_array_equal(np.asarray(g), want)
    with pytest.raises(ValueError, match="source 4 is not an index of axis 'i' of size 4"):
        mjax.vmap(lambda w: mlax.pbroadcast(w, "i", 4), axis_name="i")(X)
